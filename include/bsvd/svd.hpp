// bsvd C++ API: the same operations as bsvd.h, templated on the value type
// (float, double, std::complex<float>, std::complex<double>).
//
// Example (1000 matrices of 64 x 48, column-major, one after the other):
//
//   std::vector<double> A(1000 * 64 * 48);            // fill it
//   bsvd::Result<double> r;
//   bsvd_status_t st = bsvd::svd(bsvd::Job::Vectors, 64, 48, A.data(), 1000, r);
//   if (st != 0) std::cerr << bsvd_last_error() << "\n";
//   // r.S[b * 48 + i], r.U (64 x 48 per matrix), r.V (48 x 48), r.info[b]
#ifndef BSVD_SVD_HPP
#define BSVD_SVD_HPP

#include <bsvd/bsvd.h>

#include <complex>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace bsvd {

template <class T> struct real_type { using type = T; };
template <class T> struct real_type<std::complex<T>> { using type = T; };
template <class T> using real_t = typename real_type<T>::type;

template <class T> struct is_complex : std::false_type {};
template <class T> struct is_complex<std::complex<T>> : std::true_type {};

enum class Job { Values = BSVD_JOB_VALUES, Vectors = BSVD_JOB_VECTORS };

inline bsvd_options_t default_options() {
  bsvd_options_t o;
  bsvd_options_init(&o);
  return o;
}

// Uniform batch in one array: matrix b starts at A + b * strideA.
template <class T>
bsvd_status_t gesvj_strided_batched(Job job, int m, int n, const T *A, int lda, int64_t strideA,
                                    real_t<T> *S, int64_t strideS, T *U, int ldu, int64_t strideU,
                                    T *V, int ldv, int64_t strideV, int *info, int *sweeps,
                                    int batch, const bsvd_options_t &opts = default_options());

// Uniform batch given by an array of pointers.
template <class T> bsvd_status_t gesvj_batched(Job job, int m, int n, const T *const *A_array,
                                               int lda, real_t<T> *const *S_array,
                                               T *const *U_array, int ldu, T *const *V_array,
                                               int ldv, int *info, int *sweeps, int batch,
                                               const bsvd_options_t &opts = default_options());

// Variable-size batch: per-matrix m, n and leading dimensions.
template <class T> bsvd_status_t gesvj_vbatched(Job job, const int *m, const int *n,
                                                const T *const *A_array, const int *lda,
                                                real_t<T> *const *S_array, T *const *U_array,
                                                const int *ldu, T *const *V_array, const int *ldv,
                                                int *info, int *sweeps, int batch,
                                                const bsvd_options_t &opts = default_options());

// The stream-ordered forms: the same arguments, device memory only; they
// only enqueue on opts.stream and may be captured in a CUDA graph (bsvd.h,
// "Stream-ordered forms", says what may be read when).
template <class T>
bsvd_status_t gesvj_strided_batched_async(Job job, int m, int n, const T *A, int lda,
                                          int64_t strideA, real_t<T> *S, int64_t strideS, T *U,
                                          int ldu, int64_t strideU, T *V, int ldv, int64_t strideV,
                                          int *info, int *sweeps, int batch,
                                          const bsvd_options_t &opts = default_options());
template <class T>
bsvd_status_t gesvj_batched_async(Job job, int m, int n, const T *const *A_array, int lda,
                                  real_t<T> *const *S_array, T *const *U_array, int ldu,
                                  T *const *V_array, int ldv, int *info, int *sweeps, int batch,
                                  const bsvd_options_t &opts = default_options());
template <class T>
bsvd_status_t gesvj_vbatched_async(Job job, const int *m, const int *n, const T *const *A_array,
                                   const int *lda, real_t<T> *const *S_array, T *const *U_array,
                                   const int *ldu, T *const *V_array, const int *ldv, int *info,
                                   int *sweeps, int batch,
                                   const bsvd_options_t &opts = default_options());

// The hyperbolic SVD G = U diag(S) V^H, V^H J V = J, J = diag(I_nplus[b],
// -I_(n - nplus[b])) per matrix (bsvd.h, "Hyperbolic SVD"; docs/hsvd.md):
// the gesvj forms with the signatures (host memory) after n; m >= n.
template <class T>
bsvd_status_t gehsvj_strided_batched(Job job, int m, int n, const int *nplus, const T *A, int lda,
                                     int64_t strideA, real_t<T> *S, int64_t strideS, T *U, int ldu,
                                     int64_t strideU, T *V, int ldv, int64_t strideV, int *info,
                                     int *sweeps, int batch,
                                     const bsvd_options_t &opts = default_options());
template <class T>
bsvd_status_t gehsvj_batched(Job job, int m, int n, const int *nplus, const T *const *A_array,
                             int lda, real_t<T> *const *S_array, T *const *U_array, int ldu,
                             T *const *V_array, int ldv, int *info, int *sweeps, int batch,
                             const bsvd_options_t &opts = default_options());
template <class T>
bsvd_status_t gehsvj_vbatched(Job job, const int *m, const int *n, const int *nplus,
                              const T *const *A_array, const int *lda, real_t<T> *const *S_array,
                              T *const *U_array, const int *ldu, T *const *V_array, const int *ldv,
                              int *info, int *sweeps, int batch,
                              const bsvd_options_t &opts = default_options());
template <class T>
bsvd_status_t gehsvj_strided_batched_async(Job job, int m, int n, const int *nplus, const T *A,
                                           int lda, int64_t strideA, real_t<T> *S, int64_t strideS,
                                           T *U, int ldu, int64_t strideU, T *V, int ldv,
                                           int64_t strideV, int *info, int *sweeps, int batch,
                                           const bsvd_options_t &opts = default_options());

// Selected singular triplets (bsvd/blas.h, "Selected singular triplets"):
// the values range selects (all; il..iu, 0 = the largest; those in (vl,
// vu]) and with Job::Vectors their vectors, A V = U diag(S); ns[b] found.
template <class T>
bsvd_status_t gesvdx_strided_batched(Job job, bsvd_range_t range, int m, int n, const T *A, int lda,
                                     int64_t strideA, real_t<T> vl, real_t<T> vu, int il, int iu,
                                     int *ns, real_t<T> *S, int64_t strideS, T *U, int ldu,
                                     int64_t strideU, T *V, int ldv, int64_t strideV, int *info,
                                     int batch, const bsvd_options_t &opts = default_options());
template <class T>
bsvd_status_t gesvdx_vbatched(Job job, bsvd_range_t range, const int *m, const int *n,
                              const T *const *A_array, const int *lda, real_t<T> vl, real_t<T> vu,
                              int il, int iu, int *ns, real_t<T> *const *S_array, T *const *U_array,
                              const int *ldu, T *const *V_array, const int *ldv, int *info,
                              int batch, const bsvd_options_t &opts = default_options());
template <class T>
bsvd_status_t gesvdx_strided_batched_async(Job job, bsvd_range_t range, int m, int n, const T *A,
                                           int lda, int64_t strideA, real_t<T> vl, real_t<T> vu,
                                           int il, int iu, int *ns, real_t<T> *S, int64_t strideS,
                                           T *U, int ldu, int64_t strideU, T *V, int ldv,
                                           int64_t strideV, int *info, int batch,
                                           const bsvd_options_t &opts = default_options());

// Batched triangular solve, x_b := op(A_b)^{-1} x_b (bsvd/blas.h, "Batched
// BLAS: TRSV"): info[b] = 0, or the first zero of a non-unit diagonal.
template <class T>
bsvd_status_t trsv_strided_batched(bsvd_uplo_t uplo, bsvd_op_t trans, bsvd_diag_t diag, int n,
                                   const T *A, int lda, int64_t strideA, T *x, int incx,
                                   int64_t stridex, int *info, int batch,
                                   const bsvd_options_t &opts = default_options());
template <class T> bsvd_status_t trsv_vbatched(bsvd_uplo_t uplo, bsvd_op_t trans, bsvd_diag_t diag,
                                               const int *n, const T *const *A_array,
                                               const int *lda, T *const *x_array, const int *incx,
                                               int *info, int batch,
                                               const bsvd_options_t &opts = default_options());
template <class T>
bsvd_status_t trsv_strided_batched_async(bsvd_uplo_t uplo, bsvd_op_t trans, bsvd_diag_t diag, int n,
                                         const T *A, int lda, int64_t strideA, T *x, int incx,
                                         int64_t stridex, int *info, int batch,
                                         const bsvd_options_t &opts = default_options());

// Batched least squares / minimum norm for full-rank A_b by QR or LQ
// (bsvd/blas.h, "Batched LAPACK: GELS"): B_b (ldb >= max(1, m, n)) holds
// X_b on return; info[b] = 0, the factor's first zero pivot (B_b as it
// came), or BSVD_INFO_NONFINITE.
template <class T>
bsvd_status_t gels_strided_batched(bsvd_op_t trans, int m, int n, int nrhs, T *A, int lda,
                                   int64_t strideA, T *B, int ldb, int64_t strideB, int *info,
                                   int batch, const bsvd_options_t &opts = default_options());
template <class T>
bsvd_status_t gels_vbatched(bsvd_op_t trans, const int *m, const int *n, const int *nrhs,
                            T *const *A_array, const int *lda, T *const *B_array, const int *ldb,
                            int *info, int batch, const bsvd_options_t &opts = default_options());
template <class T>
bsvd_status_t gels_strided_batched_async(bsvd_op_t trans, int m, int n, int nrhs, T *A, int lda,
                                         int64_t strideA, T *B, int ldb, int64_t strideB, int *info,
                                         int batch, const bsvd_options_t &opts = default_options());

// Batched minimum-norm least squares for A_b of any rank from bsvd's SVD
// (bsvd/blas.h, gelsd): X_b in B_b's first n rows, the singular values in
// S, rank[b] the count above rcond s_1 (rcond < 0: machine precision).
template <class T>
bsvd_status_t gelsd_strided_batched(int m, int n, int nrhs, const T *A, int lda, int64_t strideA,
                                    T *B, int ldb, int64_t strideB, real_t<T> *S, int64_t strideS,
                                    real_t<T> rcond, int *rank, int *info, int batch,
                                    const bsvd_options_t &opts = default_options());
template <class T>
bsvd_status_t gelsd_strided_batched_async(int m, int n, int nrhs, const T *A, int lda,
                                          int64_t strideA, T *B, int ldb, int64_t strideB,
                                          real_t<T> *S, int64_t strideS, real_t<T> rcond, int *rank,
                                          int *info, int batch,
                                          const bsvd_options_t &opts = default_options());

// Owned results of bsvd::svd for a uniform batch, k = min(m, n):
// S[b*k + i]; U[b*m*k + i + j*m] (m x k); V[b*n*k + i + j*n] (n x k).
template <class T> struct Result {
  int m = 0, n = 0, k = 0, batch = 0;
  std::vector<real_t<T>> S;
  std::vector<T> U, V; // empty for Job::Values
  std::vector<int> info, sweeps;
  std::vector<int> path; // bsvd_path_t per matrix (bsvd_path_string names it)
};

// Simple entry point: A holds batch column-major m x n matrices back to back
// (lda = m). Allocates the outputs and the workspace.
template <class T> bsvd_status_t svd(Job job, int m, int n, const T *A, int batch, Result<T> &out,
                                     const bsvd_options_t &opts = default_options());

} // namespace bsvd

#endif // BSVD_SVD_HPP
