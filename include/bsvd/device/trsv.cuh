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
// op(A) is solved directly by the team's member 0, then the rest of x is
// updated by the off-diagonal panel through blas.cuh's gemv (alpha = -1,
// beta = 1: a right-looking update, so its output -- the unknowns not yet
// solved -- spreads over the whole team). Every output entry is formed in
// the same order for any team size, so a team of one (serial_team, the CPU
// twin) and a CUDA block (block_team) give the same bits for the same nb.
// The paper's recursive blocking (the diagonal block itself split in two
// around a GEMV, down to a small base case solved in registers) and a
// team-parallel base case are the later steps.
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

template <class W, class Team> BSVD_DEVICE_HD int trsv_w(uplo ul, op t, diag dg, int n, const W *A,
                                                         int lda, W *x, int incx, int nb,
                                                         const Team &team) {
  using R = typename traits<W>::R;
  // The check reads n entries; every member makes it (no reduction needed,
  // and all take the same branch).
  if (dg == diag::N)
    for (int j = 0; j < n; ++j)
      if (is_zero(A[j + long(j) * lda])) return j + 1;
  // op(A) lower: forward substitution, the blocks from the top; upper:
  // backward, from the bottom.
  const bool lower = (ul == uplo::L) == (t == op::N);
  const int nblocks = (n + nb - 1) / nb;
  W minus_one = from_real<W>(R(-1)), one = from_real<W>(R(1));
  for (int k = 0; k < nblocks; ++k) {
    const int j0 = lower ? k * nb : (nblocks - 1 - k) * nb, j1 = j0 + nb < n ? j0 + nb : n;
    // The diagonal block, by one member (its inputs are visible: entry or
    // the previous update's barrier).
    if (team.rank() == 0) {
      for (int s = 0; s < j1 - j0; ++s) {
        const int i = lower ? j0 + s : j1 - 1 - s;
        W &xi = x[vec_at(i, n, incx)];
        W v = xi;
        if (lower)
          for (int l = j0; l < i; ++l) axpy_neg(op_at(t, A, lda, i, l), x[vec_at(l, n, incx)], v);
        else
          for (int l = i + 1; l < j1; ++l)
            axpy_neg(op_at(t, A, lda, i, l), x[vec_at(l, n, incx)], v);
        if (dg == diag::N) v = wdiv(v, op_at(t, A, lda, i, i));
        xi = v;
      }
    }
    team.sync();
    // The unknowns still to solve: [j1, n) (lower) or [0, j0) (upper),
    // minus op(A)(rest, block) x_block. In A's storage that panel is
    // A(rest, block) for op N and A(block, rest) read as op T / C.
    const int r0 = lower ? j1 : 0, rlen = lower ? n - j1 : j0, kb = j1 - j0;
    if (rlen == 0) continue;
    const W *xb = sub_vec(x, n, incx, j0, kb);
    W *xr = sub_vec(x, n, incx, r0, rlen);
    if (t == op::N)
      gemv(op::N, rlen, kb, minus_one, A + r0 + long(j0) * lda, lda, xb, incx, one, xr, incx, team);
    else
      gemv(t, kb, rlen, minus_one, A + j0 + long(r0) * lda, lda, xb, incx, one, xr, incx, team);
  }
  return 0;
}

} // namespace detail

// x := op(A)^{-1} x, A n x n triangular (see the top of this file); returns
// info (0, or the 1-based index of the first zero on a non-unit diagonal,
// x then unchanged), the same on every member of the team. nb >= 1: the
// block of the one-level scheme. The team's members must all call it; it
// syncs before it returns.
template <class T, class Team = serial_team>
BSVD_DEVICE_HD int trsv(uplo ul, op trans, diag dg, int n, const T *A, int lda, T *x, int incx,
                        const Team &team = {}, int nb = kTrsvBlock) {
  using W = typename detail::traits<T>::W;
  static_assert(sizeof(W) == sizeof(T), "T must be layout-compatible with the working type");
  if (n <= 0) return 0;
  return detail::trsv_w(ul, trans, dg, n, reinterpret_cast<const W *>(A), lda,
                        reinterpret_cast<W *>(x), incx, nb < 1 ? 1 : nb, team);
}

} // namespace bsvd::device
