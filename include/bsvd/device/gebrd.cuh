// bsvd::device::gebd2: Householder bidiagonalization of one matrix,
// Q^H A P = B, with LAPACK xGEBD2's semantics and output (MAGMA-BLAS §2;
// the unblocked algorithm, which LAPACK's xGEBRD itself runs below its
// crossover of 128 columns). Header-only; compiles with nvcc and with a
// plain C++17 compiler (the CPU twin), for one thread or a team
// (team.cuh).
//
//   // d, e real; tauq, taup, work of type T; work has max(m, n) entries
//   int info = bsvd::device::gebd2(m, n, A, lda, d, e, tauq, taup, work);
//
// Output, exactly as xGEBD2 / xGEBRD: m >= n gives an upper bidiagonal B
// (d[0..n-1] on the diagonal, e[0..n-2] above it); m < n a lower one
// (d[0..m-1], e[0..m-2] below it). d and e are real also for complex A (the
// reflectors of complex LARFG make them so). Q = H(0) ... H(k-1) and
// P = G(0) ... G(k-1) with H(i) = I - tauq[i] v v^H, G(i) = I - taup[i] u u^H;
// v and u are stored in A below / right of the bidiagonal with their unit
// entry implied (LAPACK's layout: xORGBR / xUNGBR build Q and P^H from
// A, tauq, taup, and xORMBR / xUNMBR apply them). The bidiagonal's entries
// are also left in A. Returns 0, or -i for a bad argument i (m < 0 is -1,
// n < 0 -2, lda < max(1, m) -4), nothing written then. Non-finite entries
// are not checked: they propagate into d and e, where the bidiagonal
// solver (bdsv.cuh) reports them.
//
// Method, step i (m >= n; m < n mirrors it, row reflector first):
//   1. LARFG on column i below the diagonal: beta = -sign(re a_ii) ||.||,
//      tau = (beta - a_ii) / beta, v = x / (a_ii - beta); d_i = beta.
//   2. Apply H(i)^H from the left to the trailing columns: w = C^H v (GEMV
//      op C), C -= conj(tau) v w^H (GERC).
//   3. The same for row i right of the superdiagonal (complex: on the
//      conjugated row, as xGEBD2's xLACGV), applied from the right:
//      w = C u (GEMV op N), C -= tau w u^H; e_i = beta.
// Every flop of the reduction is in the GEMVs and GERCs (4 m n^2 - 4/3 n^3
// real flops, half in each), which is why MAGMA-BLAS builds LABRD on its
// GEMV device function.
//
// Thread mapping with a team (block_team: one thread block per matrix, the
// matrix in shared memory): a LARFG is two team reductions (the scaled
// norm's max and sum) after which every thread holds beta and tau; the
// scaling of v and the GEMV / GERC outputs are split over the threads
// (blas.cuh: one row or column of output per thread); a single thread
// writes d, e, tau and the unit / beta entries of A. Nine barriers per
// step. The blocked form (LABRD panels of nb columns whose X and Y feed a
// GEMM update of the trailing matrix, MAGMA-BLAS Algorithm 1) is what
// matrices beyond shared memory need; its panel is these same steps.
#pragma once

#include "blas.cuh"

namespace bsvd::device {

namespace detail {

// LAPACK's safe minimum for LARFG, min normal / eps (a power of two: the
// rescaling by it is exact). Below it 1 / (alpha - beta) could overflow.
template <class R> BSVD_DEVICE_HD R larfg_safmin();
template <> BSVD_DEVICE_HD float larfg_safmin<float>() { return 0x1p-102f; }
template <> BSVD_DEVICE_HD double larfg_safmin<double>() { return 0x1p-969; }

// sqrt(a^2 + b^2 + c^2) without overflow (LAPACK xLAPY3; c = 0 is xLAPY2).
template <class R> BSVD_DEVICE_HD R lapy3(R a, R b, R c) {
  a = rabs(a), b = rabs(b), c = rabs(c);
  R w = a > b ? a : b;
  w = c > w ? c : w;
  if (!(w > R(0)) || !(w <= maxfin<R>())) return a + b + c; // 0, Inf, NaN
  a /= w, b /= w, c /= w;
  return w * rsqrt_(rfma(a, a, rfma(b, b, c * c)));
}

// 1 / z, Smith's algorithm (xLADIV's purpose: no overflow of |z|^2).
template <class R> BSVD_DEVICE_HD R recip(R z) { return R(1) / z; }
template <class R> BSVD_DEVICE_HD complex<R> recip(complex<R> z) {
  if (rabs(z.re) >= rabs(z.im)) {
    const R r = z.im / z.re, den = rfma(z.im, r, z.re);
    return {R(1) / den, -r / den};
  }
  const R r = z.re / z.im, den = rfma(z.re, r, z.im);
  return {r / den, R(-1) / den};
}

template <class W> BSVD_DEVICE_HD W make_w(typename traits<W>::R re, typename traits<W>::R im);
template <> BSVD_DEVICE_HD float make_w<float>(float re, float) { return re; }
template <> BSVD_DEVICE_HD double make_w<double>(double re, double) { return re; }
template <> BSVD_DEVICE_HD complex<float> make_w<complex<float>>(float re, float im) {
  return {re, im};
}
template <> BSVD_DEVICE_HD complex<double> make_w<complex<double>>(double re, double im) {
  return {re, im};
}

// x[i * inc] *= f for the team's share of len entries.
template <class W, class Team>
BSVD_DEVICE_HD void scal_w(int len, W f, W *x, int inc, const Team &team) {
  for (int i = team.rank(); i < len; i += team.size()) x[long(i) * inc] = wmul(f, x[long(i) * inc]);
  team.sync();
}

// Conjugates len entries (xLACGV); nothing for real W.
template <class R, class Team> BSVD_DEVICE_HD void lacgv_w(int, R *, int, const Team &) {}
template <class R, class Team>
BSVD_DEVICE_HD void lacgv_w(int len, complex<R> *x, int inc, const Team &team) {
  for (long i = team.rank(); i < len; i += team.size()) x[i * inc] = conj_(x[i * inc]);
  team.sync();
}

BSVD_DEVICE_HD float rcopysign(float a, float b) { return copysignf(a, b); }
BSVD_DEVICE_HD double rcopysign(double a, double b) { return copysign(a, b); }

// xLARFG on (alpha, x): x has len - 1 entries at stride inc. On return
// every member holds tau and beta (real); x holds v's tail. alpha's entry
// itself is not written (the caller's single writer does that).
template <class W, class Team> BSVD_DEVICE_HD void larfg_w(int len, W alpha, W *x, int inc, W *tau,
                                                           typename traits<W>::R *beta_out,
                                                           const Team &team) {
  using R = typename traits<W>::R;
  *tau = zero<W>();
  *beta_out = re_(alpha);
  if (len <= 0) return;
  R xnorm = nrm2_w(len - 1, x, inc, team);
  R ar = re_(alpha), ai = im_(alpha);
  if (xnorm == R(0) && ai == R(0)) return; // H = I
  R beta = -rcopysign(lapy3(ar, ai, xnorm), ar);
  const R safmin = larfg_safmin<R>(), rsafmn = R(1) / safmin;
  int knt = 0;
  if (rabs(beta) < safmin) {
    // beta and x may be inaccurate: scale up (exactly) and recompute.
    do {
      ++knt;
      scal_w(len - 1, from_real<W>(rsafmn), x, inc, team);
      beta *= rsafmn;
      ar *= rsafmn, ai *= rsafmn;
    } while (rabs(beta) < safmin && knt < 20);
    xnorm = nrm2_w(len - 1, x, inc, team);
    beta = -rcopysign(lapy3(ar, ai, xnorm), ar);
  }
  *tau = make_w<W>((beta - ar) / beta, -ai / beta);
  scal_w(len - 1, recip(make_w<W>(ar - beta, ai)), x, inc, team);
  for (int j = 0; j < knt; ++j) beta *= safmin;
  *beta_out = beta;
}

// C (rows x cols) = H C with H = I - tau v v^H, i.e. C -= tau v (C^H v)^H
// (xLARF 'Left'; H(i)^H is applied by passing conj(tau)); v (rows
// entries, stride incv) has its unit entry stored. work: cols.
template <class W, class Team> BSVD_DEVICE_HD void larf_left_w(int rows, int cols, const W *v,
                                                               int incv, W tau, W *C, int ldc,
                                                               W *work, const Team &team) {
  if (is_zero(tau) || rows <= 0 || cols <= 0) return;
  gemv_w(op::C, rows, cols, from_real<W>(1), C, ldc, v, incv, zero<W>(), work, 1, team);
  gerc_w(rows, cols, neg_(tau), v, incv, work, 1, C, ldc, team);
}

// larf_left_w with w = C^H v's dot products split over a warp's lanes
// (split_lanes(rows)): coalesced reads of C's columns, and a warp per column
// where one thread per column would leave most of a block idle for the few
// columns of a least-squares problem (gels.cuh). Other bits than
// larf_left_w, the same on every team.
template <class W, class Team> BSVD_DEVICE_HD void
larf_left_split(int rows, int cols, const W *v, W tau, W *C, int ldc, W *work, const Team &team) {
  if (is_zero(tau) || rows <= 0 || cols <= 0) return;
  gemv_split_w(op::C, rows, cols, from_real<W>(1), C, ldc, v, 1, zero<W>(), work, 1,
               split_lanes(rows), team);
  gerc_w(rows, cols, neg_(tau), v, 1, work, 1, C, ldc, team);
}

// C (rows x cols) = C G with G = I - tau u u^H, i.e. C -= tau (C u) u^H;
// u (cols entries, stride incu) has its unit entry stored. work: rows.
template <class W, class Team> BSVD_DEVICE_HD void larf_right_w(int rows, int cols, const W *u,
                                                                int incu, W tau, W *C, int ldc,
                                                                W *work, const Team &team) {
  if (is_zero(tau) || rows <= 0 || cols <= 0) return;
  gemv_w(op::N, rows, cols, from_real<W>(1), C, ldc, u, incu, zero<W>(), work, 1, team);
  gerc_w(rows, cols, neg_(tau), work, 1, u, incu, C, ldc, team);
}

// Sets *p = v by one member, then a barrier.
template <class X, class Team> BSVD_DEVICE_HD void put(X *p, X v, const Team &team) {
  if (team.rank() == 0) *p = v;
  team.sync();
}

// The column reflector of step i at A(r0, i) over rows r0..m-1 and its
// application from the left to columns c0..n-1; leaves beta in A(r0, i).
template <class W, class Team>
BSVD_DEVICE_HD void column_step(int m, int n, W *A, int lda, int r0, int i, int c0,
                                typename traits<W>::R *diag, W *tauq, W *work, const Team &team) {
  using R = typename traits<W>::R;
  W *a = A + r0 + long(i) * lda;
  const int len = m - r0;
  W tau;
  R beta;
  larfg_w(len, *a, a + 1, 1, &tau, &beta, team);
  if (team.rank() == 0) {
    *diag = beta;
    *tauq = tau;
  }
  put(a, from_real<W>(1), team);
  larf_left_w(len, n - c0, a, 1, conj_(tau), A + r0 + long(c0) * lda, lda, work, team);
  put(a, from_real<W>(beta), team);
}

// The row reflector of step i at A(i, c0) over columns c0..n-1 and its
// application from the right to rows r0..m-1; leaves beta in A(i, c0).
template <class W, class Team>
BSVD_DEVICE_HD void row_step(int m, int n, W *A, int lda, int i, int c0, int r0,
                             typename traits<W>::R *offd, W *taup, W *work, const Team &team) {
  using R = typename traits<W>::R;
  W *a = A + i + long(c0) * lda;
  const int len = n - c0;
  lacgv_w(len, a, lda, team);
  W tau;
  R beta;
  larfg_w(len, *a, a + lda, lda, &tau, &beta, team);
  if (team.rank() == 0) {
    *offd = beta;
    *taup = tau;
  }
  put(a, from_real<W>(1), team);
  larf_right_w(m - r0, len, a, lda, tau, A + r0 + long(c0) * lda, lda, work, team);
  lacgv_w(len, a, lda, team);
  put(a, from_real<W>(beta), team);
}

template <class W, class Team>
BSVD_DEVICE_HD void gebd2_w(int m, int n, W *A, int lda, typename traits<W>::R *d,
                            typename traits<W>::R *e, W *tauq, W *taup, W *work, const Team &team) {
  if (m >= n) {
    for (int i = 0; i < n; ++i) {
      column_step(m, n, A, lda, i, i, i + 1, &d[i], &tauq[i], work, team);
      if (i < n - 1)
        row_step(m, n, A, lda, i, i + 1, i + 1, &e[i], &taup[i], work, team);
      else
        put(&taup[i], zero<W>(), team);
    }
  } else {
    for (int i = 0; i < m; ++i) {
      row_step(m, n, A, lda, i, i, i + 1, &d[i], &taup[i], work, team);
      if (i < m - 1)
        column_step(m, n, A, lda, i + 1, i, i + 1, &e[i], &tauq[i], work, team);
      else
        put(&tauq[i], zero<W>(), team);
    }
  }
}

} // namespace detail

// The reduction of one m x n matrix (column-major, leading dimension lda)
// to bidiagonal form; see the top of this file. R is T's real type.
template <class T, class Team = serial_team>
BSVD_DEVICE_HD int gebd2(int m, int n, T *A, int lda, typename detail::traits<T>::R *d,
                         typename detail::traits<T>::R *e, T *tauq, T *taup, T *work,
                         const Team &team = {}) {
  using W = typename detail::traits<T>::W;
  static_assert(sizeof(W) == sizeof(T), "T must be layout-compatible with the working type");
  if (m < 0) return -1;
  if (n < 0) return -2;
  if (lda < (m > 1 ? m : 1)) return -4;
  detail::gebd2_w(m, n, reinterpret_cast<W *>(A), lda, d, e, reinterpret_cast<W *>(tauq),
                  reinterpret_cast<W *>(taup), reinterpret_cast<W *>(work), team);
  return 0;
}

} // namespace bsvd::device
