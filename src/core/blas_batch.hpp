// Internal description of a batched GEMV or GEBRD call (bsvd.h, "Batched
// BLAS and LAPACK"), shared by the API layer and the backends. As Batch<T>
// is for the solvers: the three public forms (strided, pointer array,
// variable size) become one struct whose accessors work in host and device
// code, so one kernel serves every form.
#pragma once

#include "batch.hpp"

namespace bsvd::detail {

// y_b = alpha op(A_b) x_b + beta y_b. x and y are Operands whose "leading
// dimension" is the increment (x.ld / x.ldv: incx, y.ld / y.ldv: incy).
template <class T> struct GemvBatch {
  int trans = BSVD_OP_N; // bsvd_op_t
  int count = 0;
  Dims dims; // A's m x n
  T alpha = T(0), beta = T(0);
  Operand<const T *> A, x;
  Operand<T *> y;
  BSVD_HD int lenx(int b) const { return trans == BSVD_OP_N ? dims.cols(b) : dims.rows(b); }
  BSVD_HD int leny(int b) const { return trans == BSVD_OP_N ? dims.rows(b) : dims.cols(b); }
};

// Q^H A_b P = B_b, xGEBRD's output: A overwritten, d and e real, tauq and
// taup (d, e, tauq, taup: Operands without a leading dimension).
template <class T> struct GebrdBatch {
  using R = real_of_t<T>;
  int count = 0;
  Dims dims;
  Operand<T *> A, tauq, taup;
  Operand<R *> d, e;
  int *info = nullptr;
};

// The selected triplets of each A_b (bsvd.h, gesvdx): range (bsvd_range_t)
// with vl, vu or il, iu for every matrix; ns[b] the number found; U, V
// written only when vectors. S, U, V have room for min(m, n) values
// (range all or value) or iu - il + 1 (index).
template <class T> struct GesvdxBatch {
  using R = real_of_t<T>;
  bool vectors = false;
  int range = 0; // bsvd_range_t
  R vl = R(0), vu = R(0);
  int il = 0, iu = 0;
  int count = 0;
  Dims dims;
  Operand<const T *> A;
  Operand<R *> S;
  Operand<T *> U, V;
  int *ns = nullptr, *info = nullptr;
};

// x_b := op(A_b)^{-1} x_b, A_b n x n triangular (dims: m = n, mv = nv);
// x an Operand whose "leading dimension" is incx; info: one per matrix.
template <class T> struct TrsvBatch {
  int uplo = BSVD_UPLO_L, trans = BSVD_OP_N, diag = BSVD_DIAG_N; // bsvd_uplo_t, _op_t, _diag_t
  int count = 0;
  Dims dims;
  Operand<const T *> A;
  Operand<T *> x;
  int *info = nullptr;
  BSVD_HD int order(int b) const { return dims.cols(b); }
};

// op(A_b) X_b = B_b by xGELS (bsvd.h, gels): A_b m x n overwritten by its
// QR / LQ factors, B_b (ldb x nrhs) by X_b; nrhs uniform or per matrix.
template <class T> struct GelsBatch {
  int trans = BSVD_OP_N; // bsvd_op_t (T is C)
  int count = 0;
  Dims dims; // A's m x n
  int nrhs = 0;
  const int *nrhsv = nullptr; // per-matrix right-hand sides (vbatched)
  Operand<T *> A, B;
  int *info = nullptr;
  BSVD_HD int rhs(int b) const { return nrhsv ? nrhsv[b] : nrhs; }
};

// X_b = V diag(1/s_i, s_i > rcond s_1) U^H B_b from the SVD of A_b already
// in S, U (m x k, ldu m) and V (n x k, ldv n): xGELSD's solve step. info:
// the SVD's, read (NONFINITE: X_b NaN, rank 0); rank written.
template <class T> struct GelsdBatch {
  using R = real_of_t<T>;
  int count = 0;
  Dims dims;
  int nrhs = 0;
  R rcond = R(0);
  Operand<const T *> U, V;
  Operand<const R *> S;
  Operand<T *> B;
  const int *info = nullptr;
  int *rank = nullptr;
};

} // namespace bsvd::detail
