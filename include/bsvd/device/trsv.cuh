// Triangular solve with one right-hand side on one matrix, shared by a team
// (team.cuh): BLAS xTRSV, x := op(A)^{-1} x. Header-only; compiles with
// nvcc and with a plain C++17 compiler (the CPU twin).
//
//   int info = bsvd::device::trsv(uplo::L, op::N, diag::N, n, A, lda, x, incx, team);
//
// BLAS semantics: column-major A with leading dimension lda, of which only
// the triangle uplo is read (diag::U: not its diagonal either, taken as
// ones); op N, T or C (blas.cuh's op); the increment incx may be negative
// (x is then read from its end). T as in blas.cuh.
//
// One thing BLAS does not do: with diag::N, the diagonal is checked for an
// exact zero before anything is written. The result is info = 0, or i >= 1
// when A(i-1, i-1) is the first zero of the diagonal -- LAPACK xTRTRS's
// info -- and then x is left unchanged. (Inf, NaN and tiny pivots are not
// checked: they propagate as in BLAS.)
//
// Blocking (MAGMA-BLAS §6.1, the one-level scheme): the unknowns go in
// blocks of nb in the order of the substitution; each diagonal block of
// op(A) is solved by the team's lead (team.cuh: a block's first warp),
// column by column, one barrier of the lead per unknown, from a staged copy
// in the caller's work (shared memory) when one is given; then the rest of
// x is updated by the off-diagonal panel through blas.cuh's gemv (alpha =
// -1, beta = 1: a right-looking update, so its output -- the unknowns not
// yet solved -- spreads over the whole team). Every output entry receives
// its updates in substitution order for any team size and with or without
// staging, so a team of one (serial_team, the CPU twin) and a CUDA block
// (block_team) give the same bits for the same nb. For op T / C the panel's
// columns are A's, kb rows each: gemv splits each over a warp's lanes. The
// paper's recursive blocking (the diagonal block itself split in two around
// a GEMV) is the later step.
#pragma once

#include "blas.cuh"

namespace bsvd::device {

enum class uplo { L, U }; // which triangle of A holds op(A)'s data
enum class diag { N, U }; // non-unit (the diagonal is read) or unit diagonal

// The default block of the one-level scheme (the CPU twin and the cuda
// kernel use it, which keeps their bits equal).
constexpr int kTrsvBlock = 32;

namespace detail {

// x / a, Smith's algorithm for complex a (no overflow of |a|^2), with
// explicit fused operations so that host and device round alike.
template <class R> BSVD_DEVICE_HD R wdiv(R x, R a) { return x / a; }
template <class R> BSVD_DEVICE_HD complex<R> wdiv(complex<R> x, complex<R> a) {
  if (rabs(a.re) >= rabs(a.im)) {
    const R r = a.im / a.re, d = rfma(a.im, r, a.re);
    return {rfma(x.im, r, x.re) / d, rfma(-x.re, r, x.im) / d};
  }
  const R r = a.re / a.im, d = rfma(a.re, r, a.im);
  return {rfma(x.re, r, x.im) / d, rfma(x.im, r, -x.re) / d};
}

// op(A)(i, j) for op(A) = A, A^T or A^H.
template <class W> BSVD_DEVICE_HD W op_at(op t, const W *A, int lda, int i, int j) {
  if (t == op::N) return A[i + long(j) * lda];
  const W a = A[j + long(i) * lda];
  return t == op::C ? conj_(a) : a;
}

// The entries [a, a + len) of the vector x of n entries at increment inc,
// as a BLAS vector of their own (same increment): its first address.
template <class W> BSVD_DEVICE_HD W *sub_vec(W *x, int n, int inc, int a, int len) {
  return inc > 0 ? x + long(a) * inc : x + long(n - a - len) * (-inc);
}

// The diagonal block of op(A) -- kb x kb at B (leading dimension ldb, read
// through op t) -- solved in place in its kb unknowns xb (increment incx),
// column by column in substitution order: unknown js is divided by its
// pivot (non-unit diagonal), then every unknown after it subtracts
// op(B)(i, js) x_js. Each unknown thus receives its updates in substitution
// order however the rows are shared, so every team size gives the serial
// bits. Rows are owned round robin; one barrier per unknown (the owner's
// write of x_js before the others read it).
template <class W, class Lead> BSVD_DEVICE_HD void trsv_diag(bool lower, op t, diag dg, int kb,
                                                             const W *B, int ldb, W *xb, int incx,
                                                             const Lead &lead) {
  const int r = lead.rank(), sz = lead.size();
  for (int s = 0; s < kb; ++s) {
    const int js = lower ? s : kb - 1 - s;
    W &xj = xb[vec_at(js, kb, incx)];
    if (dg == diag::N && js % sz == r) xj = wdiv(xj, op_at(t, B, ldb, js, js));
    lead.sync();
    const W v = xj;
    const int i0 = lower ? js + 1 : 0, i1 = lower ? kb : js;
    for (int i = i0 + ((r - i0 % sz) + sz) % sz; i < i1; i += sz)
      axpy_neg(op_at(t, B, ldb, i, js), v, xb[vec_at(i, kb, incx)]);
  }
}

// The index of the first exact zero on A's diagonal, or n: each member
// scans its share, one team reduction (of n - j, exact in R for any n whose
// n^2 entries could be stored).
template <class W, class Team>
BSVD_DEVICE_HD int first_zero_pivot(int n, const W *A, int lda, const Team &team) {
  using R = typename traits<W>::R;
  R best = R(0);
  for (int j = team.rank(); j < n; j += team.size())
    if (is_zero(A[j + long(j) * lda]) && R(n - j) > best) best = R(n - j);
  return n - int(team.max(best));
}

template <class W, class Team> BSVD_DEVICE_HD int trsv_w(uplo ul, op t, diag dg, int n, const W *A,
                                                         int lda, W *x, int incx, int nb, W *work,
                                                         const Team &team) {
  using R = typename traits<W>::R;
  if (dg == diag::N) {
    const int j = first_zero_pivot(n, A, lda, team);
    if (j < n) return j + 1;
  }
  // op(A) lower: forward substitution, the blocks from the top; upper:
  // backward, from the bottom.
  const bool lower = (ul == uplo::L) == (t == op::N);
  const int nblocks = (n + nb - 1) / nb, lds = nb + 1;
  const auto lead = team.lead();
  W minus_one = from_real<W>(R(-1)), one = from_real<W>(R(1));
  for (int k = 0; k < nblocks; ++k) {
    const int j0 = lower ? k * nb : (nblocks - 1 - k) * nb, j1 = j0 + nb < n ? j0 + nb : n;
    const int kb = j1 - j0;
    const W *Ab = A + j0 + long(j0) * lda;
    W *xb = sub_vec(x, n, incx, j0, kb);
    if (work) {
      // Staged: op(A)'s triangle of the block and its unknowns copied to
      // work by the whole team (consecutive members read consecutive
      // addresses of A for every op), solved there, copied back.
      W *sB = work, *sx = work + long(lds) * nb;
      for (int e = team.rank(); e < kb * kb; e += team.size()) {
        const int i = t == op::N ? e % kb : e / kb, j = t == op::N ? e / kb : e % kb;
        if ((lower ? i > j : i < j) || (i == j && dg == diag::N))
          sB[i + long(j) * lds] = op_at(t, Ab, lda, i, j);
      }
      for (int i = team.rank(); i < kb; i += team.size()) sx[i] = xb[vec_at(i, kb, incx)];
      team.sync();
      if (team.rank() < lead.size()) trsv_diag(lower, op::N, dg, kb, sB, lds, sx, 1, lead);
      team.sync();
      for (int i = team.rank(); i < kb; i += team.size()) xb[vec_at(i, kb, incx)] = sx[i];
    } else if (team.rank() < lead.size()) {
      trsv_diag(lower, t, dg, kb, Ab, lda, xb, incx, lead);
    }
    team.sync();
    // The unknowns still to solve: [j1, n) (lower) or [0, j0) (upper),
    // minus op(A)(rest, block) x_block. In A's storage that panel is
    // A(rest, block) for op N and A(block, rest) read as op T / C.
    const int r0 = lower ? j1 : 0, rlen = lower ? n - j1 : j0;
    if (rlen == 0) continue;
    W *xr = sub_vec(x, n, incx, r0, rlen);
    if (t == op::N) {
      gemv(op::N, rlen, kb, minus_one, A + r0 + long(j0) * lda, lda, xb, incx, one, xr, incx, team);
    } else {
      // Each panel column (kb rows of A) to a warp's 32 lanes, read
      // coalesced (blas.cuh's split dot products; the same bits on every
      // team). For kb < 32 the lanes without a row add exact zeros: the
      // bits of the smallest power of two >= kb.
      gemv(t, kb, rlen, minus_one, A + j0 + long(r0) * lda, lda, xb, incx, one, xr, incx, team, 32);
    }
  }
  return 0;
}

} // namespace detail

// x := op(A)^{-1} x, A n x n triangular (see the top of this file); returns
// info (0, or the 1-based index of the first zero on a non-unit diagonal,
// x then unchanged), the same on every member of the team. nb >= 1: the
// block of the one-level scheme. work: null, or trsv_work(nb) entries that
// the whole team sees (shared memory, for a block team), where each
// diagonal block and its unknowns are staged: the same bits, fewer trips
// to global memory. The team's members must all call it; it syncs before
// it returns.
BSVD_DEVICE_HD constexpr int trsv_work(int nb) { return (nb + 1) * nb + nb; }

template <class T, class Team = serial_team>
BSVD_DEVICE_HD int trsv(uplo ul, op trans, diag dg, int n, const T *A, int lda, T *x, int incx,
                        const Team &team = {}, int nb = kTrsvBlock, T *work = nullptr) {
  using W = typename detail::traits<T>::W;
  static_assert(sizeof(W) == sizeof(T), "T must be layout-compatible with the working type");
  if (n <= 0) return 0;
  return detail::trsv_w(ul, trans, dg, n, reinterpret_cast<const W *>(A), lda,
                        reinterpret_cast<W *>(x), incx, nb < 1 ? 1 : nb,
                        reinterpret_cast<W *>(work), team);
}

} // namespace bsvd::device
