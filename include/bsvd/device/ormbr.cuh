// bsvd::device::ormbr_q / ormbr_p: the back-transformation of a
// bidiagonalization (LAPACK xORMBR / xUNMBR with SIDE = 'L', TRANS = 'N'):
// C := Q C or C := P C for the Q and P of gebd2 / gebrd_blocked
// (gebrd.cuh, labrd.cuh), read from the reflectors they leave in A. With
// C = [X; 0] this turns the bidiagonal's singular vectors X into A's
// (U = Q [U_B; 0], V = P [V_B; 0]): the last stage of the selected
// triplets and of a full SVD through the bidiagonal (issue 50).
// Header-only; compiles with nvcc and with a plain C++17 compiler (the CPU
// twin), for one thread or a team (team.cuh).
//
//   // A: m x n as gebd2 left it; C: m x c (Q) or n x c (P); work: C's
//   // rows plus c entries
//   ormbr_q(m, n, A, lda, tauq, c, C, ldc, work);
//   ormbr_p(m, n, A, lda, taup, c, C, ldc, work);
//
// The reflectors, as xGEBRD documents them (k = min(m, n)):
//   Q = H(0) ... H(k-1), H(i) = I - tauq[i] v v^H; m >= n: v(i) = 1,
//     v(i+1:m) in A(i+1:m, i); m < n: v(i+1) = 1, v(i+2:m) in A(i+2:m, i)
//     (H(m-1) = I);
//   P = G(0) ... G(k-1), G(i) = I - taup[i] u u^H; m >= n: u(i+1) = 1,
//     u(i+2:n) in A(i, i+2:n) (G(n-1) = I); m < n: u(i) = 1, u(i+1:n) in
//     A(i, i+1:n). For complex A the row holds conj(u): gebd2 reduces the
//     conjugated row, as xGEBD2 does with xLACGV.
// Q C = H(0) (H(1) (... H(k-1) C)): the reflectors are applied last to
// first, each as xLARF does (a GEMV and a rank-one update of the rows it
// touches, larf_left_w). This unblocked form reads C once per reflector;
// the blocked one (xLARFT's T, then two GEMMs per block) is what batches
// of large matrices will want.
#pragma once

#include "gebrd.cuh"

namespace bsvd::device {

namespace detail {

// C(r0:r0+len, :) := (I - tau v v^H) C(r0:r0+len, :), v's entries from x
// (stride incx, conjugated when conj_x) after a unit first entry, copied
// to v (so x is only read). split: C^H v by larf_left_split (gels.cuh).
template <class W, class Team>
BSVD_DEVICE_HD void apply_reflector(int len, const W *x, int incx, bool conj_x, W tau, int c, W *C,
                                    int ldc, W *v, W *work, const Team &team, bool split = false) {
  if (len <= 0 || is_zero(tau)) return;
  for (int t = team.rank(); t < len; t += team.size()) {
    if (t == 0) {
      v[0] = from_real<W>(1);
    } else {
      const W y = x[long(t - 1) * incx];
      v[t] = conj_x ? conj_(y) : y;
    }
  }
  team.sync();
  if (split)
    larf_left_split(len, c, v, tau, C, ldc, work, team);
  else
    larf_left_w(len, c, v, 1, tau, C, ldc, work, team);
}

// C (rows x c) := R(0) (R(1) (... R(k-1) C)) for the k reflectors of one
// side of A: R(i) = I - tau[i] x x^H with its unit entry at row i + off of
// C and its tail read from A starting at A(i, i) + (off + 1) steps of inc
// (1: down a column, Q's; lda: along a row, P's), conjugated when conj_x.
template <class W, class Team>
BSVD_DEVICE_HD void ormbr_w(int rows, int k, int off, const W *A, int lda, int inc, bool conj_x,
                            const W *tau, int c, W *C, int ldc, W *work, const Team &team) {
  W *v = work, *w = work + rows;
  for (int i = k - 1; i >= 0; --i) {
    const int r0 = i + off;
    if (r0 >= rows) continue;
    apply_reflector(rows - r0, A + long(i) * (lda + 1) + long(off + 1) * inc, inc, conj_x, tau[i],
                    c, C + r0, ldc, v, w, team);
  }
}

} // namespace detail

// C (m x c) := Q C. Returns 0, or -i for a bad argument i (m, n < 0: -1,
// -2; lda < max(1, m): -4; c < 0: -6; ldc < max(1, m): -8).
template <class T, class Team = serial_team>
BSVD_DEVICE_HD int ormbr_q(int m, int n, const T *A, int lda, const T *tauq, int c, T *C, int ldc,
                           T *work, const Team &team = {}) {
  using W = typename detail::traits<T>::W;
  if (m < 0) return -1;
  if (n < 0) return -2;
  if (lda < (m > 1 ? m : 1)) return -4;
  if (c < 0) return -6;
  if (ldc < (m > 1 ? m : 1)) return -8;
  // (v(i) = 1 for m >= n, v(i + 1) = 1 for m < n)
  detail::ormbr_w(m, m < n ? m : n, m >= n ? 0 : 1, reinterpret_cast<const W *>(A), lda, 1, false,
                  reinterpret_cast<const W *>(tauq), c, reinterpret_cast<W *>(C), ldc,
                  reinterpret_cast<W *>(work), team);
  return 0;
}

// C (n x c) := P C; arguments as ormbr_q's (ldc < max(1, n): -8).
template <class T, class Team = serial_team>
BSVD_DEVICE_HD int ormbr_p(int m, int n, const T *A, int lda, const T *taup, int c, T *C, int ldc,
                           T *work, const Team &team = {}) {
  using W = typename detail::traits<T>::W;
  if (m < 0) return -1;
  if (n < 0) return -2;
  if (lda < (m > 1 ? m : 1)) return -4;
  if (c < 0) return -6;
  if (ldc < (n > 1 ? n : 1)) return -8;
  // (u(i + 1) = 1 for m >= n, u(i) = 1 for m < n)
  detail::ormbr_w(n, m < n ? m : n, m >= n ? 1 : 0, reinterpret_cast<const W *>(A), lda, lda, true,
                  reinterpret_cast<const W *>(taup), c, reinterpret_cast<W *>(C), ldc,
                  reinterpret_cast<W *>(work), team);
  return 0;
}

} // namespace bsvd::device
