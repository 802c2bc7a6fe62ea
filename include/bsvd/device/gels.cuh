// Least squares or minimum-norm solution of one full-rank system, shared by
// a team (team.cuh): LAPACK xGELS, op(A) X = B with a QR factorization of
// A (m >= n) or an LQ factorization (m < n), Householder reflectors and a
// triangular solve. Header-only; compiles with nvcc and with a plain C++17
// compiler (the CPU twin).
//
//   // work: gels_work(m, n, nrhs) entries of T
//   int info = bsvd::device::gels(op::N, m, n, nrhs, A, lda, B, ldb, work, team);
//
// The four problems, as xGELS (op N, or op C = A^H; op T is A^T for real T,
// the same as C, and is for the caller to refuse for complex T as LAPACK
// does; here it is read as C):
//   m >= n, N: minimize ||B - A X||   (B m rows in, X in rows 0..n-1 out,
//              rows n..m-1 hold the residual's components in Q's basis, so
//              column j's residual norm is theirs)
//   m >= n, C: minimum-norm X of A^H X = B (B n rows in, X m rows out)
//   m <  n, N: minimum-norm X of A X = B  (B m rows in, X n rows out)
//   m <  n, C: minimize ||B - A^H X||     (B n rows in, X rows 0..m-1,
//              residual components in rows m..n-1)
// B has ldb >= max(1, m, n) and nrhs columns. A is overwritten by its QR
// factorization (xGEQRF's output: R on and above the diagonal, the
// reflectors below, tau in work[0..n-1]) or its LQ factorization (xGELQF's:
// L on and below the diagonal, the reflectors to its right, tau in
// work[0..m-1]).
//
// Returns info: 0, or i >= 1 when the triangular factor's i-th diagonal
// entry is exactly zero (A is rank deficient; xGELS's info). B is then left
// as it came in -- the factor is checked before B is touched, unlike
// xGELS, which has already applied Q there. Nothing else is checked: Inf
// and NaN propagate, and a nearly singular factor gives the large solution
// that it implies (a rank-revealing solution is bsvd's SVD-based lstsq).
// min(m, n) = 0: X = 0 (the rows max(m, n) of B zeroed, as xGELS does).
//
// Method (Golub & Van Loan §5.3, §5.6; LAPACK's xGEQR2, xGELQ2): step i
// forms the reflector of column i (QR) or row i (LQ) with LARFG and applies
// it to the rest of A through a GEMV and a GERC. QR's GEMV (C^H v) splits
// each column's dot product over a warp's lanes (blas.cuh's split GEMV:
// the same bits on every team); LQ's step is gebrd.cuh's row step, whose
// GEMV has one output per row -- few busy threads for a wide A, which is
// why a caller free to choose (Python's lstsq) passes A^H with op C and
// takes the QR path. B is then updated with the same reflectors (the split
// GEMV and a GERC over its nrhs columns, one reflector at a time) and each
// column solved by trsv.cuh.
// The team's members must all call it; it syncs before it returns.
#pragma once

#include "ormbr.cuh"
#include "trsv.cuh"

namespace bsvd::device {

// Entries of T that gels needs in work: tau (min(m, n)), a copy of the
// current reflector and the GEMV's output (max(m, n, nrhs) each).
BSVD_DEVICE_HD constexpr long gels_work(int m, int n, int nrhs) {
  const long k = m < n ? m : n, w = (m > n ? m : n) > nrhs ? (m > n ? m : n) : nrhs;
  return k + 2 * w;
}

namespace detail {

// QR's step i (xGEQR2): the reflector of column i below the diagonal, then
// its H^H applied to the columns after i; leaves beta in A(i, i).
template <class W, class Team> BSVD_DEVICE_HD void qr_step(int m, int n, W *A, int lda, int i,
                                                           W *tau_i, W *work, const Team &team) {
  using R = typename traits<W>::R;
  W *a = A + i + long(i) * lda;
  const int len = m - i;
  W tau;
  R beta;
  larfg_w(len, *a, a + 1, 1, &tau, &beta, team);
  if (team.rank() == 0) *tau_i = tau;
  put(a, from_real<W>(R(1)), team);
  larf_left_split(len, n - i - 1, a, conj_(tau), a + lda, lda, work, team);
  put(a, from_real<W>(beta), team);
}

// Rows [r0, r1) of B's nrhs columns set to value.
template <class W, class Team>
BSVD_DEVICE_HD void fill_rows(int r0, int r1, int nrhs, W value, W *B, int ldb, const Team &team) {
  const int rows = r1 - r0;
  for (long e = team.rank(); e < long(rows) * nrhs; e += team.size())
    B[r0 + e % rows + (e / rows) * long(ldb)] = value;
  team.sync();
}

template <class W, class Team> BSVD_DEVICE_HD int gels_w(op t, int m, int n, int nrhs, W *A,
                                                         int lda, W *B, int ldb, W *work,
                                                         W *trsv_stage, const Team &team) {
  using R = typename traits<W>::R;
  const bool qr = m >= n, tn = t == op::N;
  const int k = qr ? n : m, big = qr ? m : n;
  if (k == 0) {
    fill_rows(0, big, nrhs, zero<W>(), B, ldb, team);
    return 0;
  }
  const int wlen = (big > nrhs ? big : nrhs);
  W *tau = work, *vbuf = work + k, *wbuf = vbuf + wlen;
  R beta;
  for (int i = 0; i < k; ++i) {
    if (qr)
      qr_step(m, n, A, lda, i, &tau[i], wbuf, team);
    else
      row_step(m, n, A, lda, i, i, i + 1, &beta, &tau[i], wbuf, team);
  }
  const int z = first_zero_pivot(k, A, lda, team);
  if (z < k) return z + 1;
  if (nrhs == 0) return 0;
  // The reflector i's stored tail: below A(i, i) (QR) or right of it (LQ).
  auto tail = [&](int i) { return qr ? A + i + 1 + long(i) * lda : A + i + long(i + 1) * lda; };
  const int inc = qr ? 1 : lda;
  const uplo ul = qr ? uplo::U : uplo::L;
  // Q^H B (QR, op N) or Q B for A = L Q (LQ, op C): the reflectors in
  // order, each as H^H; the least-squares problems.
  if (qr == tn) {
    for (int i = 0; i < k; ++i)
      apply_reflector(big - i, tail(i), inc, !qr, conj_(tau[i]), nrhs, B + i, ldb, vbuf, wbuf, team,
                      true);
    for (int j = 0; j < nrhs; ++j)
      trsv(ul, tn ? op::N : op::C, diag::N, k, A, lda, B + long(j) * ldb, 1, team, kTrsvBlock,
           trsv_stage);
    return 0;
  }
  // The minimum-norm problems: solve with the triangle's transpose, pad
  // with zeros, then Q [Z; 0] (QR, op C) or Q^H [Z; 0] (LQ, op N): the
  // reflectors in reverse order.
  for (int j = 0; j < nrhs; ++j)
    trsv(ul, tn ? op::N : op::C, diag::N, k, A, lda, B + long(j) * ldb, 1, team, kTrsvBlock,
         trsv_stage);
  fill_rows(k, big, nrhs, zero<W>(), B, ldb, team);
  for (int i = k - 1; i >= 0; --i)
    apply_reflector(big - i, tail(i), inc, !qr, tau[i], nrhs, B + i, ldb, vbuf, wbuf, team, true);
  return 0;
}

} // namespace detail

// Solves op(A) X = B in the least-squares or minimum-norm sense (see the
// top of this file). work: gels_work(m, n, nrhs) entries the whole team
// sees; trsv_stage: null, or trsv_work(kTrsvBlock) entries of shared
// memory for the triangular solves' staging (trsv.cuh). Returns info (the
// same on every member), or -i for a bad argument i (m < 0: -2, n < 0: -3,
// nrhs < 0: -4, lda < max(1, m): -6, ldb < max(1, m, n): -8), nothing
// written then.
template <class T, class Team = serial_team>
BSVD_DEVICE_HD int gels(op trans, int m, int n, int nrhs, T *A, int lda, T *B, int ldb, T *work,
                        const Team &team = {}, T *trsv_stage = nullptr) {
  using W = typename detail::traits<T>::W;
  static_assert(sizeof(W) == sizeof(T), "T must be layout-compatible with the working type");
  if (m < 0) return -2;
  if (n < 0) return -3;
  if (nrhs < 0) return -4;
  if (lda < (m > 1 ? m : 1)) return -6;
  const int mn = m > n ? m : n;
  if (ldb < (mn > 1 ? mn : 1)) return -8;
  return detail::gels_w(trans == op::N ? op::N : op::C, m, n, nrhs, reinterpret_cast<W *>(A), lda,
                        reinterpret_cast<W *>(B), ldb, reinterpret_cast<W *>(work),
                        reinterpret_cast<W *>(trsv_stage), team);
}

// LAPACK xGELSD's solution from one matrix's reduced SVD A = U diag(S) V^H
// (U m x k, V n x k, k = min(m, n), S descending):
//   X = V diag(1 / s_i for s_i > cut, else 0) U^H B,
// the minimum-norm least-squares solution for any rank. B (ldb >= max(1,
// m, n), nrhs columns): in, m rows; out, X in rows 0 .. n-1 (the rows
// after them are not written). work: k entries the whole team sees.
// Returns the rank, the count of s_i > cut (the same on every member).
// Each column: c = U^H b (a split GEMV), c_i scaled, x = V c (a GEMV).
template <class T, class R, class Team = serial_team>
BSVD_DEVICE_HD int svd_solve(int m, int n, int nrhs, const T *U, int ldu, const R *S, const T *V,
                             int ldv, R cut, T *B, int ldb, T *work, const Team &team = {}) {
  using W = typename detail::traits<T>::W;
  static_assert(sizeof(W) == sizeof(T), "T must be layout-compatible with the working type");
  const int k = m < n ? m : n;
  int rank = 0;
  while (rank < k && S[rank] > cut) ++rank; // (descending: the kept values come first)
  if (k == 0) {
    detail::fill_rows(0, n, nrhs, detail::zero<W>(), reinterpret_cast<W *>(B), ldb, team);
    return 0;
  }
  const W one = detail::from_real<W>(R(1)), zero = detail::zero<W>();
  const W *Uw = reinterpret_cast<const W *>(U), *Vw = reinterpret_cast<const W *>(V);
  W *c = reinterpret_cast<W *>(work);
  for (int j = 0; j < nrhs; ++j) {
    W *b = reinterpret_cast<W *>(B) + long(j) * ldb;
    detail::gemv_split_w(op::C, m, k, one, Uw, ldu, b, 1, zero, c, 1, split_lanes(m), team);
    for (int i = team.rank(); i < k; i += team.size())
      c[i] =
          i < rank ? detail::make_w<W>(detail::re_(c[i]) / S[i], detail::im_(c[i]) / S[i]) : zero;
    team.sync();
    detail::gemv_w(op::N, n, k, one, Vw, ldv, c, 1, zero, b, 1, team);
  }
  return rank;
}

} // namespace bsvd::device
