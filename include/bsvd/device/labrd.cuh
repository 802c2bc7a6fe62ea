// bsvd::device::labrd and gebrd_blocked: the blocked Householder
// bidiagonalization of one matrix (MAGMA-BLAS §2, Algorithm 1; LAPACK
// xLABRD / xGEBRD), for matrices beyond shared memory. Header-only;
// compiles with nvcc and with a plain C++17 compiler (the CPU twin), for
// one thread or a team (team.cuh).
//
//   // X: m x nb (ldx >= m), Y: n x nb (ldy >= n), work: max(m, n) entries
//   bsvd::device::gebrd_blocked(m, n, A, lda, d, e, tauq, taup, nb, panels,
//                               X, ldx, Y, ldy, work);
//
// Output: gebd2's (gebrd.cuh), i.e. LAPACK xGEBRD's -- the same reflectors
// in exact arithmetic, the same layout; d, e, tauq, taup to rounding.
//
// Why blocked: gebd2 applies each reflector to the whole trailing matrix
// at once, a GEMV and a rank-1 update per reflector, so the trailing matrix
// is read twice and written twice per step. A panel of nb steps (labrd)
// instead keeps the updates pending in X and Y -- each step then reads the
// trailing matrix only in its two GEMVs -- and applies them in one rank-2nb
// update (labrd_update, a GEMM: C -= V Y^H + X U) that reads and writes the
// trailing matrix once per panel. Half of the flops stay in the GEMVs: the
// blocked form moves a third of the memory traffic, it does not make GEBRD
// compute-bound (the paper's point, and why the GEMV is tuned).
//
// gebrd_blocked runs `panels` panels of nb columns (nb steps each), then
// gebd2 on the trailing (m - panels nb) x (n - panels nb) matrix: on the
// GPU the panels are kernels over global memory (src/cuda/bidiag/) and the
// tail is the on-chip kernel, so `panels` is the number that brings the
// trailing matrix within shared memory. panels nb < min(m, n) is required
// (every panel has a trailing matrix; LAPACK's nx >= nb).
//
// Order of operations: labrd is xLABRD's sequence of GEMVs, conjugations
// and LARFGs line for line (the loop of both branches: m >= n, an upper
// bidiagonal; m < n, a lower one); each entry of the update sums its 2 nb
// products in a fixed order (V Y^H first, then X U), so any team, and the
// GPU's tiled update kernel, give the serial code's bits.
#pragma once

#include "gebrd.cuh"

namespace bsvd::device {

namespace detail {

// y = alpha op(A) x + beta y with BLAS's quick return (m = 0 or n = 0:
// y untouched; every member returns together). The public gemv
// (blas.cuh) would do the same here -- alpha is always +-1, so its alpha =
// 0 branch is dead -- but inlined into labrd it made GCC's loop analysis
// warn (-Waggressive-loop-optimizations, a false positive) on lacgv_w.
template <class W, class Team> BSVD_DEVICE_HD void gv(op t, int m, int n, W alpha, const W *A,
                                                      int lda, const W *x, int incx, W beta, W *y,
                                                      int incy, const Team &team) {
  if (m <= 0 || n <= 0) return;
  gemv_w(t, m, n, alpha, A, lda, x, incx, beta, y, incy, team);
}

// xLABRD, m >= n (upper bidiagonal): nb steps on the m x n matrix A,
// leaving the pending update in X (m x nb) and Y (n x nb).
template <class W, class Team>
BSVD_DEVICE_HD void labrd_upper(int m, int n, int nb, W *A, int lda, typename traits<W>::R *d,
                                typename traits<W>::R *e, W *tauq, W *taup, W *X, int ldx, W *Y,
                                int ldy, const Team &team) {
  using R = typename traits<W>::R;
  const W one = from_real<W>(1), mone = from_real<W>(-1), z = zero<W>();
  auto a = [&](int r, int c) { return A + r + long(c) * lda; };
  for (int i = 0; i < nb; ++i) {
    W *x = X + long(i) * ldx, *y = Y + long(i) * ldy;
    // Update A(i:m, i).
    lacgv_w(i, Y + i, ldy, team);
    gv(op::N, m - i, i, mone, a(i, 0), lda, Y + i, ldy, one, a(i, i), 1, team);
    lacgv_w(i, Y + i, ldy, team);
    gv(op::N, m - i, i, mone, X + i, ldx, a(0, i), 1, one, a(i, i), 1, team);
    // H(i) annihilates A(i+1:m, i).
    W tq;
    R beta;
    larfg_w(m - i, *a(i, i), a(i + 1 < m ? i + 1 : i, i), 1, &tq, &beta, team);
    if (team.rank() == 0) d[i] = beta, tauq[i] = tq;
    if (i + 1 >= n) {
      team.sync();
      continue;
    }
    put(a(i, i), one, team);
    // Y(i+1:n, i).
    gv(op::C, m - i, n - i - 1, one, a(i, i + 1), lda, a(i, i), 1, z, y + i + 1, 1, team);
    gv(op::C, m - i, i, one, a(i, 0), lda, a(i, i), 1, z, y, 1, team);
    gv(op::N, n - i - 1, i, mone, Y + i + 1, ldy, y, 1, one, y + i + 1, 1, team);
    gv(op::C, m - i, i, one, X + i, ldx, a(i, i), 1, z, y, 1, team);
    gv(op::C, i, n - i - 1, mone, a(0, i + 1), lda, y, 1, one, y + i + 1, 1, team);
    scal_w(n - i - 1, tq, y + i + 1, 1, team);
    // Update A(i, i+1:n).
    lacgv_w(n - i - 1, a(i, i + 1), lda, team);
    lacgv_w(i + 1, a(i, 0), lda, team);
    gv(op::N, n - i - 1, i + 1, mone, Y + i + 1, ldy, a(i, 0), lda, one, a(i, i + 1), lda, team);
    lacgv_w(i + 1, a(i, 0), lda, team);
    lacgv_w(i, X + i, ldx, team);
    gv(op::C, i, n - i - 1, mone, a(0, i + 1), lda, X + i, ldx, one, a(i, i + 1), lda, team);
    lacgv_w(i, X + i, ldx, team);
    // G(i) annihilates A(i, i+2:n).
    W tp;
    larfg_w(n - i - 1, *a(i, i + 1), a(i, i + 2 < n ? i + 2 : i + 1), lda, &tp, &beta, team);
    if (team.rank() == 0) e[i] = beta, taup[i] = tp;
    put(a(i, i + 1), one, team);
    // X(i+1:m, i).
    gv(op::N, m - i - 1, n - i - 1, one, a(i + 1, i + 1), lda, a(i, i + 1), lda, z, x + i + 1, 1,
       team);
    gv(op::C, n - i - 1, i + 1, one, Y + i + 1, ldy, a(i, i + 1), lda, z, x, 1, team);
    gv(op::N, m - i - 1, i + 1, mone, a(i + 1, 0), lda, x, 1, one, x + i + 1, 1, team);
    gv(op::N, i, n - i - 1, one, a(0, i + 1), lda, a(i, i + 1), lda, z, x, 1, team);
    gv(op::N, m - i - 1, i, mone, X + i + 1, ldx, x, 1, one, x + i + 1, 1, team);
    scal_w(m - i - 1, tp, x + i + 1, 1, team);
    lacgv_w(n - i - 1, a(i, i + 1), lda, team);
  }
}

// xLABRD, m < n (lower bidiagonal): the mirror, row reflector first.
template <class W, class Team>
BSVD_DEVICE_HD void labrd_lower(int m, int n, int nb, W *A, int lda, typename traits<W>::R *d,
                                typename traits<W>::R *e, W *tauq, W *taup, W *X, int ldx, W *Y,
                                int ldy, const Team &team) {
  using R = typename traits<W>::R;
  const W one = from_real<W>(1), mone = from_real<W>(-1), z = zero<W>();
  auto a = [&](int r, int c) { return A + r + long(c) * lda; };
  for (int i = 0; i < nb; ++i) {
    W *x = X + long(i) * ldx, *y = Y + long(i) * ldy;
    // Update A(i, i:n).
    lacgv_w(n - i, a(i, i), lda, team);
    lacgv_w(i, a(i, 0), lda, team);
    gv(op::N, n - i, i, mone, Y + i, ldy, a(i, 0), lda, one, a(i, i), lda, team);
    lacgv_w(i, a(i, 0), lda, team);
    lacgv_w(i, X + i, ldx, team);
    gv(op::C, i, n - i, mone, a(0, i), lda, X + i, ldx, one, a(i, i), lda, team);
    lacgv_w(i, X + i, ldx, team);
    // G(i) annihilates A(i, i+1:n).
    W tp;
    R beta;
    larfg_w(n - i, *a(i, i), a(i, i + 1 < n ? i + 1 : i), lda, &tp, &beta, team);
    if (team.rank() == 0) d[i] = beta, taup[i] = tp;
    if (i + 1 >= m) {
      team.sync();
      lacgv_w(n - i, a(i, i), lda, team);
      continue;
    }
    put(a(i, i), one, team);
    // X(i+1:m, i).
    gv(op::N, m - i - 1, n - i, one, a(i + 1, i), lda, a(i, i), lda, z, x + i + 1, 1, team);
    gv(op::C, n - i, i, one, Y + i, ldy, a(i, i), lda, z, x, 1, team);
    gv(op::N, m - i - 1, i, mone, a(i + 1, 0), lda, x, 1, one, x + i + 1, 1, team);
    gv(op::N, i, n - i, one, a(0, i), lda, a(i, i), lda, z, x, 1, team);
    gv(op::N, m - i - 1, i, mone, X + i + 1, ldx, x, 1, one, x + i + 1, 1, team);
    scal_w(m - i - 1, tp, x + i + 1, 1, team);
    lacgv_w(n - i, a(i, i), lda, team);
    // Update A(i+1:m, i).
    lacgv_w(i, Y + i, ldy, team);
    gv(op::N, m - i - 1, i, mone, a(i + 1, 0), lda, Y + i, ldy, one, a(i + 1, i), 1, team);
    lacgv_w(i, Y + i, ldy, team);
    gv(op::N, m - i - 1, i + 1, mone, X + i + 1, ldx, a(0, i), 1, one, a(i + 1, i), 1, team);
    // H(i) annihilates A(i+2:m, i).
    W tq;
    larfg_w(m - i - 1, *a(i + 1, i), a(i + 2 < m ? i + 2 : i + 1, i), 1, &tq, &beta, team);
    if (team.rank() == 0) e[i] = beta, tauq[i] = tq;
    put(a(i + 1, i), one, team);
    // Y(i+1:n, i).
    gv(op::C, m - i - 1, n - i - 1, one, a(i + 1, i + 1), lda, a(i + 1, i), 1, z, y + i + 1, 1,
       team);
    gv(op::C, m - i - 1, i, one, a(i + 1, 0), lda, a(i + 1, i), 1, z, y, 1, team);
    gv(op::N, n - i - 1, i, mone, Y + i + 1, ldy, y, 1, one, y + i + 1, 1, team);
    gv(op::C, m - i - 1, i + 1, one, X + i + 1, ldx, a(i + 1, i), 1, z, y, 1, team);
    gv(op::C, i + 1, n - i - 1, mone, a(0, i + 1), lda, y, 1, one, y + i + 1, 1, team);
    scal_w(n - i - 1, tq, y + i + 1, 1, team);
  }
}

// One entry of the panel's update, C(r, c) - V(r, :) Y(c, :)^H - X(r, :)
// U(:, c), its 2 nb products in this order (the bits every caller shares).
template <class W> BSVD_DEVICE_HD W update_entry(W c, int nb, const W *v, int ldv, const W *y,
                                                 int ldy, const W *x, int ldx, const W *u) {
  for (int p = 0; p < nb; ++p) mul_acc(c, neg_(v[long(p) * ldv]), conj_(y[long(p) * ldy]));
  for (int p = 0; p < nb; ++p) mul_acc(c, neg_(x[long(p) * ldx]), u[p]);
  return c;
}

// xGEBRD's two GEMMs after a panel: C (rows x cols) -= V Y^H + X U, with V
// rows x nb (ldv), Y cols x nb (ldy), X rows x nb (ldx), U nb x cols (ldu).
template <class W, class Team>
BSVD_DEVICE_HD void labrd_update_w(int rows, int cols, int nb, const W *V, int ldv, const W *Y,
                                   int ldy, const W *X, int ldx, const W *U, int ldu, W *C, int ldc,
                                   const Team &team) {
  const long total = long(rows) * cols;
  for (long t = team.rank(); t < total; t += team.size()) {
    const int r = int(t % rows), c = int(t / rows);
    W &o = C[r + long(c) * ldc];
    o = update_entry(o, nb, V + r, ldv, Y + c, ldy, X + r, ldx, U + long(c) * ldu);
  }
  team.sync();
}

// After a panel at (j, j): the bidiagonal's entries back into A where
// labrd left the reflectors' unit entries (xGEBRD's copy-back).
template <class W, class Team>
BSVD_DEVICE_HD void restore_panel(int m, int n, int j, int nb, W *A, int lda,
                                  const typename traits<W>::R *d, const typename traits<W>::R *e,
                                  const Team &team) {
  for (int t = team.rank(); t < nb; t += team.size()) {
    const int q = j + t;
    A[q + long(q) * lda] = from_real<W>(d[q]);
    if (m >= n)
      A[q + long(q + 1) * lda] = from_real<W>(e[q]);
    else
      A[q + 1 + long(q) * lda] = from_real<W>(e[q]);
  }
  team.sync();
}

} // namespace detail

// xLABRD: nb steps of the reduction of the m x n matrix A (m >= n: upper,
// else lower), A's reflectors and the pending update (X: m x nb, Y: n x nb)
// as LAPACK leaves them; the unit entries of the reflectors stay in A.
template <class T, class Team = serial_team>
BSVD_DEVICE_HD void labrd(int m, int n, int nb, T *A, int lda, typename detail::traits<T>::R *d,
                          typename detail::traits<T>::R *e, T *tauq, T *taup, T *X, int ldx, T *Y,
                          int ldy, const Team &team = {}) {
  using W = typename detail::traits<T>::W;
  if (m <= 0 || n <= 0) return;
  auto w = [](T *p) { return reinterpret_cast<W *>(p); };
  if (m >= n)
    detail::labrd_upper(m, n, nb, w(A), lda, d, e, w(tauq), w(taup), w(X), ldx, w(Y), ldy, team);
  else
    detail::labrd_lower(m, n, nb, w(A), lda, d, e, w(tauq), w(taup), w(X), ldx, w(Y), ldy, team);
}

// The panel's update of the trailing matrix A(j+nb:m, j+nb:n) from the
// panel at (j, j) of A (m x n) and its X, Y; then the copy-back. One
// team's version of the GPU's update kernel plus its restore.
template <class T, class Team = serial_team>
BSVD_DEVICE_HD void labrd_update(int m, int n, int j, int nb, T *A, int lda,
                                 const typename detail::traits<T>::R *d,
                                 const typename detail::traits<T>::R *e, const T *X, int ldx,
                                 const T *Y, int ldy, const Team &team = {}) {
  using W = typename detail::traits<T>::W;
  W *a = reinterpret_cast<W *>(A);
  const int r0 = j + nb;
  detail::labrd_update_w(m - r0, n - r0, nb, a + r0 + long(j) * lda, lda,
                         reinterpret_cast<const W *>(Y) + nb, ldy,
                         reinterpret_cast<const W *>(X) + nb, ldx, a + j + long(r0) * lda, lda,
                         a + r0 + long(r0) * lda, lda, team);
  detail::restore_panel(m, n, j, nb, a, lda, d, e, team);
}

// The whole reduction: `panels` panels of nb steps, then gebd2 on the
// rest. Returns gebd2's codes, and -8 for nb < 1 or -9 for panels < 0 or
// panels nb >= min(m, n) (when min(m, n) > 0), nothing written then.
template <class T, class Team = serial_team>
BSVD_DEVICE_HD int gebrd_blocked(int m, int n, T *A, int lda, typename detail::traits<T>::R *d,
                                 typename detail::traits<T>::R *e, T *tauq, T *taup, int nb,
                                 int panels, T *X, int ldx, T *Y, int ldy, T *work,
                                 const Team &team = {}) {
  if (m < 0) return -1;
  if (n < 0) return -2;
  if (lda < (m > 1 ? m : 1)) return -4;
  if (nb < 1) return -8;
  const int k = m < n ? m : n;
  if (panels < 0 || (k > 0 && long(panels) * nb >= k)) return -9;
  for (int p = 0; p < panels; ++p) {
    const int j = p * nb;
    T *ajj = A + j + long(j) * lda;
    labrd(m - j, n - j, nb, ajj, lda, d + j, e + j, tauq + j, taup + j, X, ldx, Y, ldy, team);
    labrd_update(m, n, j, nb, A, lda, d, e, X, ldx, Y, ldy, team);
  }
  const int j = panels * nb;
  return gebd2(m - j, n - j, A + j + long(j) * lda, lda, d + j, e + j, tauq + j, taup + j, work,
               team);
}

} // namespace bsvd::device
