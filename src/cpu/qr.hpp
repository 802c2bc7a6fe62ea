// Householder QR (the CPU twin of the GPU QR preprocessing, MAGMA-SVD Sec.
// 9.2): a tall matrix A = Q R is solved as R = U_R S V^H, U = Q U_R.
//
// LAPACK xGEQR2 conventions: column j gets alpha = y_jj, x = y_{j+1:m, j},
// beta = -sign(Re alpha) ||(alpha, x)||, tau_j = (beta - alpha) / beta,
// v_j = (1, x / (alpha - beta)); H_j = I - tau_j v_j v_j^H, and
// H_j^H = I - conj(tau_j) v_j v_j^H is applied to the trailing columns.
// A = H_0 H_1 ... H_{n-1} R. tau_j = 0 (H_j = I) when x = 0 and alpha is
// real. Norms are scaled by the column's largest entry (no overflow or
// underflow of the squares); the callers prescale A into the window that
// the solvers use, so no further rescaling (xLARFG's loop) is needed.
//
// The GPU kernel (src/cuda/qr/householder.cuh) runs the same steps with the sums
// in a different order; tests compare its R with this one.
#pragma once

#include "../core/batch.hpp"

namespace bsvd::detail {

// In place on the m x n matrix Y (m >= n, leading dimension ldy): R in the
// upper triangle, v_j below the diagonal; tau has n entries.
template <class T> void householder_qr(int m, int n, T *Y, int ldy, T *tau);

// The same with column pivoting (LAPACK xGEQP3 / xLAQP2 conventions, the
// preprocessing of HBJ Sec. 2, eq. 2.1): A P = Q R. Step j first moves the
// column of largest partial norm (the first one on ties) to position j;
// the partial norms are downdated by row j of R and recomputed when the
// downdate cancels (xLAQP2's test against sqrt(eps)). perm (n entries):
// column j of A P is column perm[j] of A. |R_00| >= |R_11| >= ... up to
// the downdate's rounding. The CPU twin of the GPU's pivoted factorization,
// used by the preconditioned solve (solve_preconditioned, solve_one.cpp;
// docs/design/qrcp.md).
template <class T> void householder_qr_pivoted(int m, int n, T *Y, int ldy, T *tau, int *perm);

// X (m x k, leading dimension ldx) <- Q X with Q = H_0 ... H_{n-1} from
// householder_qr's Y and tau.
template <class T>
void apply_householder_q(int m, int n, const T *Y, int ldy, const T *tau, int k, T *X, int ldx);

// X (m x n, leading dimension ldx) <- Q [Z; 0] with Z n x n (leading
// dimension n), in the compact WY form Q = I - V T V^H (LAPACK xLARFT,
// forward, columnwise): G = V^H V, T_jj = tau_j, T(0:j, j) = T(0:j, 0:j)
// (-tau_j G(0:j, j)); M = T (V_top^H Z); X = [Z; 0] - V M. The twin of
// the GPU's qr_wy_m_kernel and qr_wy_apply_kernel (src/cuda/qr/wy.cuh):
// every sum in the same order (G over the rows upward from j, T's and M's
// over k upward, X's row over k upward).
template <class T> void apply_householder_q_wy(int m, int n, const T *Y, int ldy, const T *tau,
                                               const T *Z, T *X, int ldx);
// The same with Z's leading dimension ldz.
template <class T> void apply_householder_q_wy(int m, int n, const T *Y, int ldy, const T *tau,
                                               const T *Z, int ldz, T *X, int ldx);

// TSQR (src/core/tsqr.hpp), the twin of the GPU's factorization of tall
// matrices of few columns (qr_tsqr_factor_kernel): W (m x n, in Y, leading
// dimension ldy) cut into nc = tsqr_chunks(m, n) chunks, each factored by
// householder_qr in place (its reflectors in its rows of Y, its tau at
// tau1 + c n); their R factors stacked in Z (nc n x n, leading dimension
// nc n, zeros below each R's diagonal) and Z factored by householder_qr
// (tau2, n entries). R is Z's upper triangle: W = diag(Q_c) Q_2 R.
template <class T> void tsqr_factor(int m, int n, int nc, T *Y, int ldy, T *tau1, T *Z, T *tau2);

// X (m x n, leading dimension ldx) <- Q [Zs; 0] (Zs n x n, leading
// dimension n) with tsqr_factor's Q: X2 = Q_2 [Zs; 0] (nc n x n) by
// apply_householder_q_wy on Z, then chunk c's rows X_c = Q_c [X2_c; 0]
// with X2_c the rows [c n, c n + n) of X2 -- the twin of the GPU's two
// levels of qr_wy_m_kernel / qr_wy_apply_kernel (the same sums).
template <class T> void tsqr_apply_q_wy(int m, int n, int nc, const T *Y, int ldy, const T *tau1,
                                        const T *Z, const T *tau2, const T *Zs, T *X, int ldx);

} // namespace bsvd::detail
