/* bsvd's batched BLAS and LAPACK building blocks: GEMV, GEBRD, TRSV, GELS
 * (the bidiagonal route's and the least-squares solvers' parts), s, d, c, z.
 * Included by bsvd/bsvd.h, whose types (bsvd_status_t, bsvd_options_t,
 * bsvd_cfloat, bsvd_cdouble) they take; include that header. */
#ifndef BSVD_BLAS_H
#define BSVD_BLAS_H

#ifndef BSVD_BSVD_H
#error "include <bsvd/bsvd.h>, which includes bsvd/blas.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Batched BLAS and LAPACK: GEMV and GEBRD --------------------------------
 *
 * The building blocks of the bidiagonal route (issue 50; the device API's
 * blas.cuh and gebrd.cuh, docs/device-api.md), batched. Same conventions
 * as the solvers: the forms strided_batched, batched (pointer arrays) and
 * vbatched (per-matrix sizes), each also _async; 0, -position of a bad
 * argument (nothing written) or a bsvd_status_code; bsvd_last_error().
 *
 * Backends and memory: the data of a call (matrices, vectors and the
 * per-matrix outputs) is all in host memory -- solved on the cpu backend --
 * or all in device memory of the current device -- solved on the cuda
 * backend. Host data is not staged to the GPU (a GEMV reads each entry
 * once: the copy would cost more than the product), so opts->backend =
 * cuda with host data is BSVD_STATUS_NOT_SUPPORTED; cpu with device data
 * is -position (y, A for gebrd), as for the solvers. The pointer, size, leading-dimension and increment arrays of the
 * batched / vbatched forms are host memory. The _async forms take device
 * data only and enqueue on opts->stream (the rules of the solvers' _async
 * forms in bsvd/bsvd.h, including graph capture). Of opts, these calls read
 * backend, num_threads (cpu) and stream (cuda); the others are checked
 * but not used. They need no workspace: the cuda backend allocates the
 * device copy of a call's pointer and size tables (a few bytes per
 * matrix) in stream order on opts->stream. */

/* Which product a GEMV forms: y = alpha op(A) x + beta y. */
typedef enum {
  BSVD_OP_N = 0, /* op(A) = A */
  BSVD_OP_T = 1, /* op(A) = A^T */
  BSVD_OP_C = 2, /* op(A) = A^H (A^T for real types) */
  BSVD_OP_MAX_ENUM = 0x7fffffff
} bsvd_op_t;
#define BSVD_OP_COUNT 3

/* bsvd_<p>gemv_<form>: for each b of the batch, with A (m x n,
 * column-major), the BLAS xGEMV
 *   y_b = alpha op(A_b) x_b + beta y_b,
 * x with n entries (op N) or m (T, C), y with m (N) or n (T, C), at
 * increments incx, incy (negative: the vector is read from its end, as in
 * BLAS). BLAS's semantics also at the edges: m = 0 or n = 0, or alpha = 0
 * and beta = 1, leave y untouched; alpha = 0 reads neither A nor x; beta =
 * 0 does not read y (NaN there does not propagate).
 * Arguments, in order (the positions of -i):
 *   strided_batched: trans, m, n, alpha, A, lda, strideA, x, incx,
 *     stridex, beta, y, incy, stridey, batch, opts;
 *   batched and vbatched: trans, m, n, alpha, A_array, lda, x_array, incx,
 *     beta, y_array, incy, batch, opts (vbatched: m, n, lda, incx and incy
 *     host arrays of batch entries).
 *   m, n >= 0; lda >= max(1, m); incx, incy nonzero; strides >= 0 (A and
 *   x are only read, so strideA = 0 or stridex = 0 applies one matrix or
 *   one vector to the whole batch), stridey at least the span of one y,
 *   1 + (len(y) - 1) |incy|, when batch > 1; A, x, y non-NULL where the
 *   product reads or writes them.
 * Per-call scalars alpha and beta (by value) serve every matrix. The cuda
 * kernel: one thread block per product; docs/perf has its bandwidth. */
#define BSVD_DECLARE_GEMV(p, T, suffix)                                                            \
  bsvd_status_t bsvd_##p##gemv_strided_batched##suffix(                                            \
      bsvd_op_t trans, int m, int n, T alpha, const T *A, int lda, int64_t strideA, const T *x,    \
      int incx, int64_t stridex, T beta, T *y, int incy, int64_t stridey, int batch,               \
      const bsvd_options_t *opts);                                                                 \
  bsvd_status_t bsvd_##p##gemv_batched##suffix(                                                    \
      bsvd_op_t trans, int m, int n, T alpha, const T *const *A_array, int lda,                    \
      const T *const *x_array, int incx, T beta, T *const *y_array, int incy, int batch,           \
      const bsvd_options_t *opts);                                                                 \
  bsvd_status_t bsvd_##p##gemv_vbatched##suffix(                                                   \
      bsvd_op_t trans, const int *m, const int *n, T alpha, const T *const *A_array,               \
      const int *lda, const T *const *x_array, const int *incx, T beta, T *const *y_array,         \
      const int *incy, int batch, const bsvd_options_t *opts);
BSVD_DECLARE_GEMV(s, float, )
BSVD_DECLARE_GEMV(d, double, )
BSVD_DECLARE_GEMV(c, bsvd_cfloat, )
BSVD_DECLARE_GEMV(z, bsvd_cdouble, )
BSVD_DECLARE_GEMV(s, float, _async)
BSVD_DECLARE_GEMV(d, double, _async)
BSVD_DECLARE_GEMV(c, bsvd_cfloat, _async)
BSVD_DECLARE_GEMV(z, bsvd_cdouble, _async)
#undef BSVD_DECLARE_GEMV

/* bsvd_<p>gebrd_<form>: for each A (m x n) of the batch, LAPACK xGEBRD's
 * reduction to bidiagonal form Q^H A P = B, with its output convention, so
 * that xORGBR / xUNGBR, xORMBR / xUNMBR read the results as they read
 * xGEBRD's: m >= n gives an upper bidiagonal (d: n entries on the
 * diagonal, e: n - 1 above it), m < n a lower one (d: m, e: m - 1 below
 * it); d and e are real for every type. Q = H(0) ... H(k-1), P = G(0) ...
 * G(k-1) (k = min(m, n)) with H(i) = I - tauq[i] v v^H and G(i) = I -
 * taup[i] u u^H; A is overwritten by B and the Householder vectors v, u
 * below / right of it (unit entries implied), exactly as xGEBRD leaves it.
 * The entries of d, e, tauq, taup are those of xGEBRD up to rounding
 * (on chip: the unblocked xGEBD2 order of operations; signs as LAPACK's).
 * info[b]: 0, or BSVD_INFO_NONFINITE when d or e of matrix b holds NaN or
 * Inf (the input did, or its norm overflows); the outputs are written
 * either way.
 * Arguments, in order (the positions of -i):
 *   strided_batched: m, n, A, lda, strideA, d, strided, e, stridee, tauq,
 *     stridetauq, taup, stridetaup, info, batch, opts;
 *   batched and vbatched: m, n, A_array, lda, d_array, e_array,
 *     tauq_array, taup_array, info, batch, opts (vbatched: m, n and lda
 *     host arrays of batch entries).
 *   m, n >= 0; lda >= max(1, m); info non-NULL (batch entries, in the
 *   data's memory); A, d, tauq, taup non-NULL for a non-empty matrix and
 *   e for k >= 2; when batch > 1: strideA >= lda n, strided, stridetauq,
 *   stridetaup >= k, stridee >= k - 1.
 * The cuda backend reduces each matrix in one thread block with the matrix
 * in shared memory (the on-chip regime of MAGMA-BLAS's batched GEBRD) where
 * it fits ((m + 1) n + max(m, n) entries, about 220 x 220 in d on an
 * H100); a larger matrix first takes panels of 32 columns over global
 * memory (xLABRD, then a GEMM update of the trailing matrix) until its
 * trailing matrix fits, then the on-chip kernel (a workspace of 32 (m + n)
 * entries per matrix is allocated in stream order). The entries then agree
 * with xGEBRD's to the rounding of a blocked reduction (LAPACK's own
 * xGEBRD is blocked too). A matrix so tall or wide that the trailing matrix
 * after its last panel still exceeds shared memory returns
 * BSVD_STATUS_NOT_SUPPORTED, nothing written (a QR factorization first
 * makes it square). The cpu backend takes every size (unblocked). */
#define BSVD_DECLARE_GEBRD(p, T, R, suffix)                                                        \
  bsvd_status_t bsvd_##p##gebrd_strided_batched##suffix(                                           \
      int m, int n, T *A, int lda, int64_t strideA, R *d, int64_t strided, R *e, int64_t stridee,  \
      T *tauq, int64_t stridetauq, T *taup, int64_t stridetaup, int *info, int batch,              \
      const bsvd_options_t *opts);                                                                 \
  bsvd_status_t bsvd_##p##gebrd_batched##suffix(int m, int n, T *const *A_array, int lda,          \
                                                R *const *d_array, R *const *e_array,              \
                                                T *const *tauq_array, T *const *taup_array,        \
                                                int *info, int batch, const bsvd_options_t *opts); \
  bsvd_status_t bsvd_##p##gebrd_vbatched##suffix(                                                  \
      const int *m, const int *n, T *const *A_array, const int *lda, R *const *d_array,            \
      R *const *e_array, T *const *tauq_array, T *const *taup_array, int *info, int batch,         \
      const bsvd_options_t *opts);
BSVD_DECLARE_GEBRD(s, float, float, )
BSVD_DECLARE_GEBRD(d, double, double, )
BSVD_DECLARE_GEBRD(c, bsvd_cfloat, float, )
BSVD_DECLARE_GEBRD(z, bsvd_cdouble, double, )
BSVD_DECLARE_GEBRD(s, float, float, _async)
BSVD_DECLARE_GEBRD(d, double, double, _async)
BSVD_DECLARE_GEBRD(c, bsvd_cfloat, float, _async)
BSVD_DECLARE_GEBRD(z, bsvd_cdouble, double, _async)
#undef BSVD_DECLARE_GEBRD

/* ---- Selected singular triplets: GESVDX -------------------------------------
 *
 * The rules of "Batched BLAS and LAPACK" above (forms, statuses, backends
 * and memory, _async, no workspace: the cuda backend allocates its own in
 * stream order on opts->stream); LAPACK's xGESVDX, batched (issue 50). */

/* Which singular values a gesvdx call computes. */
typedef enum {
  BSVD_RANGE_ALL = 0, /* all min(m, n) */
  BSVD_RANGE_INDEX = 1, /* the il-th ... iu-th largest (0-based, both included) */
  BSVD_RANGE_VALUE = 2, /* those in the half-open interval (vl, vu] */
  BSVD_RANGE_MAX_ENUM = 0x7fffffff
} bsvd_range_t;
#define BSVD_RANGE_COUNT 3

/* bsvd_<p>gesvdx_<form>: for each A (m x n) of the batch, the singular
 * values that range selects, descending, and with job = BSVD_JOB_VECTORS
 * their left and right singular vectors: A V = U diag(S), U m x ns, V n x
 * ns (V, not V^H, as the gesvj forms), ns[b] the number found (k = min(m,
 * n)):
 *   BSVD_RANGE_ALL    ns = k (the thin SVD);
 *   BSVD_RANGE_INDEX  ns = iu - il + 1, the values il ... iu, 0 = the
 *                     largest; 0 <= il <= iu < k for every non-empty matrix;
 *   BSVD_RANGE_VALUE  the values in (vl, vu], 0 <= vl < vu (vu may be
 *                     +Inf): ns varies from matrix to matrix, 0 ... k. A
 *                     value within a few k u (relative) of vl or vu may
 *                     fall on either side (Sturm counts, as LAPACK's).
 * Columns ns ... of S, U, V are not written. A is only read. Not the
 * Jacobi route: each A is reduced to bidiagonal form (as
 * bsvd_<p>gebrd_*), the bidiagonal's values found by bisection (high
 * relative accuracy, as the values-only route) and its vectors by inverse
 * iteration on the Golub-Kahan tridiagonal, then multiplied by the
 * reduction's reflectors -- the method of xGESVDX. The accuracy of U and V
 * is LAPACK's: A V - U diag(S) and the loss of orthogonality are a modest
 * multiple of k u ||A||; for the full decomposition the default solver
 * (bsvd_<p>gesvj_*) is faster and as accurate.
 * info[b]: 0, or BSVD_INFO_NONFINITE when A holds NaN or Inf: then S NaN
 * and U, V zero for the ns = iu - il + 1 (index) or k (all) columns, and
 * ns = 0 for range value.
 * Arguments, in order (the positions of -i):
 *   strided_batched: job, range, m, n, A, lda, strideA, vl, vu, il, iu,
 *     ns, S, strideS, U, ldu, strideU, V, ldv, strideV, info, batch, opts;
 *   batched and vbatched: job, range, m, n, A_array, lda, vl, vu, il, iu,
 *     ns, S_array, U_array, ldu, V_array, ldv, info, batch, opts
 *     (vbatched: m, n, lda, ldu, ldv host arrays of batch entries).
 *   m, n >= 0; lda >= max(1, m); with vectors ldu >= max(1, m), ldv >=
 *   max(1, n); vl, vu read only for range value, il, iu only for range
 *   index; ns and info non-NULL (batch entries each, in the data's
 *   memory); when batch > 1 strides of at least one matrix (lda n) and,
 *   with c = iu - il + 1 (index) or k (all, value), of c values (strideS)
 *   and c columns (ldu c, ldv c).
 * The cuda backend reduces each matrix as bsvd_<p>gebrd_* does (the same
 * sizes; NOT_SUPPORTED for the same too tall or wide ones) on a copy in
 * its workspace; each matrix's triplets are then found by one thread
 * block, the inverse iterations by one of its threads, so the vectors of
 * many values of one matrix take long: the call is for a few triplets of
 * each of many matrices. The cpu backend takes every size. */
#define BSVD_DECLARE_GESVDX(p, T, R, suffix)                                                       \
  bsvd_status_t bsvd_##p##gesvdx_strided_batched##suffix(                                          \
      bsvd_job_t job, bsvd_range_t range, int m, int n, const T *A, int lda, int64_t strideA,      \
      R vl, R vu, int il, int iu, int *ns, R *S, int64_t strideS, T *U, int ldu, int64_t strideU,  \
      T *V, int ldv, int64_t strideV, int *info, int batch, const bsvd_options_t *opts);           \
  bsvd_status_t bsvd_##p##gesvdx_batched##suffix(                                                  \
      bsvd_job_t job, bsvd_range_t range, int m, int n, const T *const *A_array, int lda, R vl,    \
      R vu, int il, int iu, int *ns, R *const *S_array, T *const *U_array, int ldu,                \
      T *const *V_array, int ldv, int *info, int batch, const bsvd_options_t *opts);               \
  bsvd_status_t bsvd_##p##gesvdx_vbatched##suffix(                                                 \
      bsvd_job_t job, bsvd_range_t range, const int *m, const int *n, const T *const *A_array,     \
      const int *lda, R vl, R vu, int il, int iu, int *ns, R *const *S_array, T *const *U_array,   \
      const int *ldu, T *const *V_array, const int *ldv, int *info, int batch,                     \
      const bsvd_options_t *opts);
BSVD_DECLARE_GESVDX(s, float, float, )
BSVD_DECLARE_GESVDX(d, double, double, )
BSVD_DECLARE_GESVDX(c, bsvd_cfloat, float, )
BSVD_DECLARE_GESVDX(z, bsvd_cdouble, double, )
BSVD_DECLARE_GESVDX(s, float, float, _async)
BSVD_DECLARE_GESVDX(d, double, double, _async)
BSVD_DECLARE_GESVDX(c, bsvd_cfloat, float, _async)
BSVD_DECLARE_GESVDX(z, bsvd_cdouble, double, _async)
#undef BSVD_DECLARE_GESVDX

/* ---- Batched BLAS: TRSV -----------------------------------------------------
 *
 * The rules of "Batched BLAS and LAPACK" above (forms, statuses, backends
 * and memory, _async); the device API's trsv.cuh, batched (issue 52). */

/* Which triangle of A a triangular routine reads. */
typedef enum {
  BSVD_UPLO_L = 0, /* lower: A(i, j), i >= j */
  BSVD_UPLO_U = 1, /* upper: A(i, j), i <= j */
  BSVD_UPLO_MAX_ENUM = 0x7fffffff
} bsvd_uplo_t;
#define BSVD_UPLO_COUNT 2

/* Whether a triangular A's diagonal is read or taken as ones. */
typedef enum {
  BSVD_DIAG_N = 0, /* non-unit: the diagonal is read */
  BSVD_DIAG_U = 1, /* unit: the diagonal is not read, taken as ones */
  BSVD_DIAG_MAX_ENUM = 0x7fffffff
} bsvd_diag_t;
#define BSVD_DIAG_COUNT 2

/* bsvd_<p>trsv_<form>: for each b of the batch, with A (n x n,
 * column-major, triangular: only the triangle uplo is read), the BLAS
 * xTRSV
 *   x_b := op(A_b)^{-1} x_b,
 * x with n entries at increment incx (negative: read from its end, as in
 * BLAS). Unlike BLAS, a zero on a non-unit diagonal is checked, matrix by
 * matrix, as LAPACK xTRTRS does: info[b] = i > 0 when A_b(i-1, i-1) is
 * the first exact zero of the diagonal, and x_b is left unchanged; info[b]
 * = 0 when x_b is solved (always with diag = BSVD_DIAG_U, and for n = 0).
 * A zero does not stop the other matrices, and is not an error of the
 * call (it returns 0). Inf, NaN and tiny pivots are not checked: they
 * propagate, as in BLAS. info is written for every matrix, in the memory
 * space of the call's data.
 * Arguments, in order (the positions of -i):
 *   strided_batched: uplo, trans, diag, n, A, lda, strideA, x, incx,
 *     stridex, info, batch, opts;
 *   batched and vbatched: uplo, trans, diag, n, A_array, lda, x_array,
 *     incx, info, batch, opts (vbatched: n, lda and incx host arrays of
 *     batch entries).
 *   n >= 0; lda >= max(1, n); incx nonzero; strideA >= 0 (0: one A for
 *   the whole batch), stridex at least the span of one x,
 *   1 + (n - 1) |incx|, when batch > 1; A and x non-NULL where n > 0;
 *   info non-NULL when batch > 0.
 * The solve is blocked (MAGMA-BLAS's one-level scheme, blocks of 32: the
 * diagonal blocks solved directly, the rest by the batched GEMV's code);
 * the cuda kernel is one thread block per matrix, A read from device
 * memory. */
#define BSVD_DECLARE_TRSV(p, T, suffix)                                                            \
  bsvd_status_t bsvd_##p##trsv_strided_batched##suffix(                                            \
      bsvd_uplo_t uplo, bsvd_op_t trans, bsvd_diag_t diag, int n, const T *A, int lda,             \
      int64_t strideA, T *x, int incx, int64_t stridex, int *info, int batch,                      \
      const bsvd_options_t *opts);                                                                 \
  bsvd_status_t bsvd_##p##trsv_batched##suffix(                                                    \
      bsvd_uplo_t uplo, bsvd_op_t trans, bsvd_diag_t diag, int n, const T *const *A_array,         \
      int lda, T *const *x_array, int incx, int *info, int batch, const bsvd_options_t *opts);     \
  bsvd_status_t bsvd_##p##trsv_vbatched##suffix(                                                   \
      bsvd_uplo_t uplo, bsvd_op_t trans, bsvd_diag_t diag, const int *n, const T *const *A_array,  \
      const int *lda, T *const *x_array, const int *incx, int *info, int batch,                    \
      const bsvd_options_t *opts);
BSVD_DECLARE_TRSV(s, float, )
BSVD_DECLARE_TRSV(d, double, )
BSVD_DECLARE_TRSV(c, bsvd_cfloat, )
BSVD_DECLARE_TRSV(z, bsvd_cdouble, )
BSVD_DECLARE_TRSV(s, float, _async)
BSVD_DECLARE_TRSV(d, double, _async)
BSVD_DECLARE_TRSV(c, bsvd_cfloat, _async)
BSVD_DECLARE_TRSV(z, bsvd_cdouble, _async)
#undef BSVD_DECLARE_TRSV

/* ---- Batched LAPACK: GELS ---------------------------------------------------
 *
 * The rules of "Batched BLAS and LAPACK" above (forms, statuses, backends
 * and memory, _async); the device API's gels.cuh, batched (issue 52). */

/* bsvd_<p>gels_<form>: for each b of the batch, LAPACK xGELS: with A_b
 * (m x n, column-major) of full rank, op(A_b) X_b = B_b solved
 *   in the least-squares sense, min ||B_b - op(A_b) X_b||, when op(A_b)
 *     has at least as many rows as columns (m >= n with op N, m <= n with
 *     op C), and
 *   for the minimum-norm solution otherwise,
 * by the QR factorization of A_b (m >= n) or its LQ factorization (m < n):
 * Householder reflectors and a triangular solve (bsvd_<p>trsv's code).
 * trans: BSVD_OP_N or BSVD_OP_C; BSVD_OP_T too for s and d (the same as
 * C), not for c and z, as in LAPACK. B_b (ldb x nrhs, ldb >= max(1, m, n))
 * holds op(A_b)'s rows of right-hand sides on entry and X_b on exit:
 * rows 0 .. n-1 (op N) or 0 .. m-1 (op C); for a least-squares problem the
 * rows after X_b hold the residual's components, whose sum of squares in a
 * column is that column's squared residual norm (as in xGELS). A_b is
 * overwritten by its factorization: R and the reflectors as xGEQRF leaves
 * them (m >= n), L and the reflectors as xGELQF does (m < n); the
 * reflectors' scalars (tau) are not returned. min(m, n) = 0: X_b = 0.
 * info[b]:
 *   0, solved;
 *   i > 0: the i-th diagonal entry of the triangular factor is exactly
 *     zero -- A_b is rank deficient and this route has no solution for it
 *     (xGELS's info). Unlike xGELS, B_b is then left as it came in. bsvd's
 *     SVD-based least squares (Python bsvd.lstsq, driver 'gelsd') solves
 *     any rank;
 *   BSVD_INFO_NONFINITE: A_b holds Inf or NaN (its factor's diagonal is
 *     not finite); X_b is not meaningful.
 * Nearly rank-deficient A_b are not detected: X_b is then what the tiny
 * pivot implies, as in xGELS. No matrix's info stops the others, and none
 * is an error of the call (it returns 0). info is written for every
 * matrix, in the memory space of the call's data.
 * Arguments, in order (the positions of -i):
 *   strided_batched: trans, m, n, nrhs, A, lda, strideA, B, ldb, strideB,
 *     info, batch, opts;
 *   batched and vbatched: trans, m, n, nrhs, A_array, lda, B_array, ldb,
 *     info, batch, opts (vbatched: m, n, nrhs, lda and ldb host arrays of
 *     batch entries).
 *   m, n, nrhs >= 0; lda >= max(1, m); ldb >= max(1, m, n); strideA >=
 *   lda n and strideB >= ldb nrhs when batch > 1 (both are written); A
 *   and B non-NULL where min(m, n) > 0 or nrhs > 0 needs them; info
 *   non-NULL when batch > 0.
 * The cpu backend solves each matrix on one thread; the cuda kernel is
 * one thread block per matrix, A and B in device memory, with a
 * stream-ordered workspace of min(m, n) + 2 max(m, n, nrhs) entries per
 * matrix. */
#define BSVD_DECLARE_GELS(p, T, suffix)                                                            \
  bsvd_status_t bsvd_##p##gels_strided_batched##suffix(                                            \
      bsvd_op_t trans, int m, int n, int nrhs, T *A, int lda, int64_t strideA, T *B, int ldb,      \
      int64_t strideB, int *info, int batch, const bsvd_options_t *opts);                          \
  bsvd_status_t bsvd_##p##gels_batched##suffix(                                                    \
      bsvd_op_t trans, int m, int n, int nrhs, T *const *A_array, int lda, T *const *B_array,      \
      int ldb, int *info, int batch, const bsvd_options_t *opts);                                  \
  bsvd_status_t bsvd_##p##gels_vbatched##suffix(bsvd_op_t trans, const int *m, const int *n,       \
                                                const int *nrhs, T *const *A_array,                \
                                                const int *lda, T *const *B_array, const int *ldb, \
                                                int *info, int batch, const bsvd_options_t *opts);
BSVD_DECLARE_GELS(s, float, )
BSVD_DECLARE_GELS(d, double, )
BSVD_DECLARE_GELS(c, bsvd_cfloat, )
BSVD_DECLARE_GELS(z, bsvd_cdouble, )
BSVD_DECLARE_GELS(s, float, _async)
BSVD_DECLARE_GELS(d, double, _async)
BSVD_DECLARE_GELS(c, bsvd_cfloat, _async)
BSVD_DECLARE_GELS(z, bsvd_cdouble, _async)
#undef BSVD_DECLARE_GELS

/* bsvd_<p>gelsd_<form>: for each b of the batch, LAPACK xGELSD's solution:
 * the minimum-norm X_b minimizing ||B_b - A_b X_b|| for A_b (m x n) of any
 * rank, from A_b's SVD (bsvd's one-sided Jacobi, at its accuracy):
 *   X_b = V diag(1 / s_i for s_i > rcond s_1, else 0) U^H B_b,
 * the rank r_b the count of s_i > rcond s_1; rcond < 0 means machine
 * precision (LAPACK's convention). A_b is only read. B_b (ldb x nrhs,
 * ldb >= max(1, m, n)): m rows of right-hand sides in, X_b in rows
 * 0 .. n-1 out (the rows after them are left as they are; unlike xGELSD
 * they do not hold the residual's components). S_b: the min(m, n)
 * singular values, descending. rank[b] = r_b. info[b]:
 *   0, solved; > 0, the SVD's sweeps did not converge (bsvd.h, info) --
 *     X_b, S_b and rank[b] are then those of the unconverged SVD;
 *   BSVD_INFO_NONFINITE: A_b holds Inf or NaN: S_b is NaN, rank[b] = 0
 *     and X_b NaN.
 * Arguments, in order (the positions of -i):
 *   strided_batched: m, n, nrhs, A, lda, strideA, B, ldb, strideB, S,
 *     strideS, rcond, rank, info, batch, opts.
 *   m, n, nrhs >= 0; lda >= max(1, m); ldb >= max(1, m, n); strideA >=
 *   lda n (A is read: 0 applies one A to every B), strideB >= ldb nrhs,
 *   strideS >= min(m, n) when batch > 1; rcond not NaN; pointers non-NULL
 *   where a matrix needs them; rank and info non-NULL when batch > 0.
 * The SVD runs as bsvd_<p>gesvj_strided_batched with opts (its options,
 * stream, backend rules, and for _async its stream-ordered contract);
 * U and V live in a scratch of (m + n) min(m, n) entries per matrix in the
 * data's memory space (stream-ordered on the cuda backend); the solve is
 * one thread block per matrix there. The pointer-array and
 * variable-size forms are not offered yet. */
#define BSVD_DECLARE_GELSD(p, T, R, suffix)                                                        \
  bsvd_status_t bsvd_##p##gelsd_strided_batched##suffix(                                           \
      int m, int n, int nrhs, const T *A, int lda, int64_t strideA, T *B, int ldb,                 \
      int64_t strideB, R *S, int64_t strideS, R rcond, int *rank, int *info, int batch,            \
      const bsvd_options_t *opts);
BSVD_DECLARE_GELSD(s, float, float, )
BSVD_DECLARE_GELSD(d, double, double, )
BSVD_DECLARE_GELSD(c, bsvd_cfloat, float, )
BSVD_DECLARE_GELSD(z, bsvd_cdouble, double, )
BSVD_DECLARE_GELSD(s, float, float, _async)
BSVD_DECLARE_GELSD(d, double, double, _async)
BSVD_DECLARE_GELSD(c, bsvd_cfloat, float, _async)
BSVD_DECLARE_GELSD(z, bsvd_cdouble, double, _async)
#undef BSVD_DECLARE_GELSD

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BSVD_BLAS_H */
