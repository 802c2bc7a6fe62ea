// The hyperbolic SVD's entry points (bsvd.h, "Hyperbolic SVD";
// docs/hsvd.md): the gesvj forms with the signatures inserted as argument
// 4. They share the forms' checks and the dispatch (api.cpp: strided,
// arrays), which add the HSVD's own (check_signatures) and hand the batch,
// its signatures on it (Batch::nplus), to the backends.
#include "api_common.hpp"

#include <bsvd/bsvd.h>
#include <bsvd/svd.hpp>

#include <complex>

namespace bsvd::detail {
namespace {

// job, m, n, nplus, A, lda, strideA, S, strideS, U, ldu, strideU, V, ldv,
// strideV, info, sweeps, batch, opts; the pointer-array forms without the
// strides.
constexpr ArgPos kHsvdStridedPos{1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 4};
constexpr ArgPos kHsvdArrayPos{1, 2, 3, 5, 6, 0, 7, 0, 8, 9, 0, 10, 11, 0, 12, 13, 14, 15, 4};

template <class T> bsvd_status_t hsvd_strided(bsvd_job_t job, int m, int n, const int *nplus,
                                              const T *A, int lda, int64_t sA, real_of_t<T> *S,
                                              int64_t sS, T *U, int ldu, int64_t sU, T *V, int ldv,
                                              int64_t sV, int *info, int *sweeps, int batch,
                                              const bsvd_options_t *opts, Exec exec) {
  return strided(kHsvdStridedPos, job, m, n, nplus, A, lda, sA, S, sS, U, ldu, sU, V, ldv, sV, info,
                 sweeps, batch, opts, exec);
}

template <class T> bsvd_status_t hsvd_batched(bsvd_job_t job, int m, int n, const int *nplus,
                                              const T *const *A, int lda, real_of_t<T> *const *S,
                                              T *const *U, int ldu, T *const *V, int ldv, int *info,
                                              int *sweeps, int batch, const bsvd_options_t *opts,
                                              Exec exec) {
  return arrays(kHsvdArrayPos, job, m, nullptr, n, nullptr, nplus, A, lda, nullptr, S, U, ldu,
                nullptr, V, ldv, nullptr, info, sweeps, batch, opts, false, exec);
}

template <class T> bsvd_status_t hsvd_vbatched(bsvd_job_t job, const int *m, const int *n,
                                               const int *nplus, const T *const *A, const int *lda,
                                               real_of_t<T> *const *S, T *const *U, const int *ldu,
                                               T *const *V, const int *ldv, int *info, int *sweeps,
                                               int batch, const bsvd_options_t *opts, Exec exec) {
  return arrays(kHsvdArrayPos, job, 0, m, 0, n, nplus, A, 0, lda, S, U, 0, ldu, V, 0, ldv, info,
                sweeps, batch, opts, true, exec);
}

} // namespace
} // namespace bsvd::detail

using namespace bsvd::detail;

extern "C" {

#define BSVD_DEFINE_GEHSVJ(p, T, R, suffix, exec)                                                  \
  bsvd_status_t bsvd_##p##gehsvj_strided_batched##suffix(                                          \
      bsvd_job_t job, int m, int n, const int *nplus, const T *A, int lda, int64_t strideA, R *S,  \
      int64_t strideS, T *U, int ldu, int64_t strideU, T *V, int ldv, int64_t strideV, int *info,  \
      int *sweeps, int batch, const bsvd_options_t *opts) {                                        \
    return hsvd_strided(job, m, n, nplus, cpp(A), lda, strideA, S, strideS, cpp(U), ldu, strideU,  \
                        cpp(V), ldv, strideV, info, sweeps, batch, opts, exec);                    \
  }                                                                                                \
  bsvd_status_t bsvd_##p##gehsvj_batched##suffix(                                                  \
      bsvd_job_t job, int m, int n, const int *nplus, const T *const *A_array, int lda,            \
      R *const *S_array, T *const *U_array, int ldu, T *const *V_array, int ldv, int *info,        \
      int *sweeps, int batch, const bsvd_options_t *opts) {                                        \
    return hsvd_batched(job, m, n, nplus, cpp(A_array), lda, S_array, cpp(U_array), ldu,           \
                        cpp(V_array), ldv, info, sweeps, batch, opts, exec);                       \
  }                                                                                                \
  bsvd_status_t bsvd_##p##gehsvj_vbatched##suffix(                                                 \
      bsvd_job_t job, const int *m, const int *n, const int *nplus, const T *const *A_array,       \
      const int *lda, R *const *S_array, T *const *U_array, const int *ldu, T *const *V_array,     \
      const int *ldv, int *info, int *sweeps, int batch, const bsvd_options_t *opts) {             \
    return hsvd_vbatched(job, m, n, nplus, cpp(A_array), lda, S_array, cpp(U_array), ldu,          \
                         cpp(V_array), ldv, info, sweeps, batch, opts, exec);                      \
  }
BSVD_DEFINE_GEHSVJ(s, float, float, , Exec::kBlocking)
BSVD_DEFINE_GEHSVJ(d, double, double, , Exec::kBlocking)
BSVD_DEFINE_GEHSVJ(c, bsvd_cfloat, float, , Exec::kBlocking)
BSVD_DEFINE_GEHSVJ(z, bsvd_cdouble, double, , Exec::kBlocking)
BSVD_DEFINE_GEHSVJ(s, float, float, _async, Exec::kAsync)
BSVD_DEFINE_GEHSVJ(d, double, double, _async, Exec::kAsync)
BSVD_DEFINE_GEHSVJ(c, bsvd_cfloat, float, _async, Exec::kAsync)
BSVD_DEFINE_GEHSVJ(z, bsvd_cdouble, double, _async, Exec::kAsync)
#undef BSVD_DEFINE_GEHSVJ

} // extern "C"

namespace bsvd {

template <class T>
bsvd_status_t gehsvj_strided_batched(Job job, int m, int n, const int *nplus, const T *A, int lda,
                                     int64_t strideA, real_t<T> *S, int64_t strideS, T *U, int ldu,
                                     int64_t strideU, T *V, int ldv, int64_t strideV, int *info,
                                     int *sweeps, int batch, const bsvd_options_t &opts) {
  return hsvd_strided(bsvd_job_t(job), m, n, nplus, A, lda, strideA, S, strideS, U, ldu, strideU, V,
                      ldv, strideV, info, sweeps, batch, &opts, Exec::kBlocking);
}

template <class T>
bsvd_status_t gehsvj_batched(Job job, int m, int n, const int *nplus, const T *const *A_array,
                             int lda, real_t<T> *const *S_array, T *const *U_array, int ldu,
                             T *const *V_array, int ldv, int *info, int *sweeps, int batch,
                             const bsvd_options_t &opts) {
  return hsvd_batched(bsvd_job_t(job), m, n, nplus, A_array, lda, S_array, U_array, ldu, V_array,
                      ldv, info, sweeps, batch, &opts, Exec::kBlocking);
}

template <class T>
bsvd_status_t gehsvj_vbatched(Job job, const int *m, const int *n, const int *nplus,
                              const T *const *A_array, const int *lda, real_t<T> *const *S_array,
                              T *const *U_array, const int *ldu, T *const *V_array, const int *ldv,
                              int *info, int *sweeps, int batch, const bsvd_options_t &opts) {
  return hsvd_vbatched(bsvd_job_t(job), m, n, nplus, A_array, lda, S_array, U_array, ldu, V_array,
                       ldv, info, sweeps, batch, &opts, Exec::kBlocking);
}

template <class T>
bsvd_status_t gehsvj_strided_batched_async(Job job, int m, int n, const int *nplus, const T *A,
                                           int lda, int64_t strideA, real_t<T> *S, int64_t strideS,
                                           T *U, int ldu, int64_t strideU, T *V, int ldv,
                                           int64_t strideV, int *info, int *sweeps, int batch,
                                           const bsvd_options_t &opts) {
  return hsvd_strided(bsvd_job_t(job), m, n, nplus, A, lda, strideA, S, strideS, U, ldu, strideU, V,
                      ldv, strideV, info, sweeps, batch, &opts, Exec::kAsync);
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template bsvd_status_t gehsvj_strided_batched<T>(                                                \
      Job, int, int, const int *, const T *, int, int64_t, real_t<T> *, int64_t, T *, int,         \
      int64_t, T *, int, int64_t, int *, int *, int, const bsvd_options_t &);                      \
  template bsvd_status_t gehsvj_batched<T>(Job, int, int, const int *, const T *const *, int,      \
                                           real_t<T> *const *, T *const *, int, T *const *, int,   \
                                           int *, int *, int, const bsvd_options_t &);             \
  template bsvd_status_t gehsvj_vbatched<T>(Job, const int *, const int *, const int *,            \
                                            const T *const *, const int *, real_t<T> *const *,     \
                                            T *const *, const int *, T *const *, const int *,      \
                                            int *, int *, int, const bsvd_options_t &);            \
  template bsvd_status_t gehsvj_strided_batched_async<T>(                                          \
      Job, int, int, const int *, const T *, int, int64_t, real_t<T> *, int64_t, T *, int,         \
      int64_t, T *, int, int64_t, int *, int *, int, const bsvd_options_t &);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd
