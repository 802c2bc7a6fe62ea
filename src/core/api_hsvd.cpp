// The hyperbolic SVD's entry points (bsvd.h, "Hyperbolic SVD";
// docs/hsvd.md): the checks of the gesvj forms (api_common.hpp) plus nplus
// and m >= n, then the backend: cuda for device data, and for host data
// when a GPU is visible (BSVD_BACKEND_AUTO), as the SVD's forms choose.
#include "api_common.hpp"
#include "backends.hpp"

#include <bsvd/bsvd.h>
#include <bsvd/svd.hpp>

#include <algorithm>
#include <complex>
#include <exception>
#include <new>

namespace bsvd::detail {
namespace {

// job, m, n, nplus (4), A, lda, strideA, S, strideS, U, ldu, strideU, V, ldv,
// strideV, info, sweeps, batch, opts.
constexpr ArgPos kHsvdPos{1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
constexpr int kNplusPos = 4;

// What the HSVD does not do yet: the pivoted QR preconditioning (HBJ Sec.
// 2: pivoting permutes J as well), several GPUs. (The blocked variant runs
// on the cpu only: see gehsvj.)
bsvd_status_t check_supported(const bsvd_options_t &o) {
  if (o.precondition > 0) {
    set_error("the hyperbolic SVD has no preconditioning yet (opts->precondition = %d): QR's "
              "column pivoting would permute J, and V0 of the Gram matrix is not J-orthogonal",
              o.precondition);
    return BSVD_STATUS_NOT_SUPPORTED;
  }
  if (o.device_count != 0) {
    set_error("the hyperbolic SVD runs on one GPU: opts->device_count = %d is not supported",
              o.device_count);
    return BSVD_STATUS_NOT_SUPPORTED;
  }
  return 0;
}

template <class T> bsvd_status_t gehsvj(bsvd_job_t job, int m, int n, const int *nplus, const T *A,
                                        int lda, int64_t sA, real_of_t<T> *S, int64_t sS, T *U,
                                        int ldu, int64_t sU, T *V, int ldv, int64_t sV, int *info,
                                        int *sweeps, int batch, const bsvd_options_t *opts) {
  clear_error();
  const ArgPos &p = kHsvdPos;
  if (int(job) < 0 || int(job) >= BSVD_JOB_COUNT)
    return bad(p.job, "job", "= %d is neither BSVD_JOB_VALUES nor BSVD_JOB_VECTORS", int(job));
  if (batch < 0) return bad(p.batch, "batch", "= %d is negative", batch);
  bsvd_options_t o;
  if (bsvd_status_t s = read_options(opts, p.opts, o)) return s;
  if (batch > 0 && !info) return bad(p.info, "info", "is NULL");
  const Batch<T> b =
      strided_batch(job, m, n, A, lda, sA, S, sS, U, ldu, sU, V, ldv, sV, info, sweeps, batch);
  if (bsvd_status_t s = check_batch(b, p, false)) return s;
  // The paper's setting (HBJ eq. 2.10): a tall or square factor.
  if (m < n) return bad(p.n, "n", "= %d exceeds m = %d: the hyperbolic SVD needs m >= n", n, m);
  if (batch > 0 && !nplus) return bad(kNplusPos, "nplus", "is NULL");
  for (int i = 0; i < batch; ++i)
    if (nplus[i] < 0 || nplus[i] > n)
      return bad(kNplusPos, "nplus", "[%d] = %d is not in 0 ... n = %d", i, nplus[i], n);
  if (batch > 1 && n > 0) {
    if (sA < int64_t(lda) * n)
      return bad(p.strideA, "strideA", "= %lld is less than lda * n = %lld", (long long)sA,
                 (long long)lda * n);
    if (sS < n) return bad(p.strideS, "strideS", "= %lld is less than n = %d", (long long)sS, n);
    if (b.vectors && sU < int64_t(ldu) * n)
      return bad(p.strideU, "strideU", "= %lld is less than ldu * n = %lld", (long long)sU,
                 (long long)ldu * n);
    if (b.vectors && sV < int64_t(ldv) * n)
      return bad(p.strideV, "strideV", "= %lld is less than ldv * n = %lld", (long long)sV,
                 (long long)ldv * n);
  }
  if (batch == 0) return 0;
  if (bsvd_status_t s = check_supported(o)) return s;
  int arg = 0;
  const int where = cuda_locate(b, &arg);
  if (where < 0)
    return bad(arg ? arg + (arg >= kNplusPos ? 1 : 0) : p.A, "pointer",
               "is in a different memory space (host / device) than A: all matrices of a call must "
               "be in one");
  // The blocked variant is the cpu's alone (no hyperbolic blocked GPU path
  // yet): auto takes the cpu for it, cuda refuses it.
  const bool blocked = o.variant == BSVD_VARIANT_BLOCKED;
  bsvd_backend_t backend = o.backend;
  if (backend == BSVD_BACKEND_AUTO)
    backend = where == 1 || (cuda_available() && !blocked) ? BSVD_BACKEND_CUDA : BSVD_BACKEND_CPU;
  if (backend == BSVD_BACKEND_CUDA && blocked) {
    set_error("the hyperbolic SVD's blocked variant runs on the cpu only (no GPU blocked path "
              "yet): pass host data with opts->backend = cpu or auto");
    return BSVD_STATUS_NOT_SUPPORTED;
  }
  if (backend == BSVD_BACKEND_CPU && where == 1)
    return bad(p.A, "A", "is device memory, but opts->backend = cpu needs host memory");
  if (backend == BSVD_BACKEND_CUDA && !cuda_available()) {
    set_error("opts->backend = cuda, but no CUDA GPU is visible (or the library was built "
              "without CUDA)");
    return BSVD_STATUS_BACKEND_UNAVAILABLE;
  }
  try {
    const Config cfg = make_config(o);
    const int threads = cpu_threads(o, batch);
    if (backend == BSVD_BACKEND_CUDA) return cuda_gehsvj(b, nplus, cfg, threads, o.stream, o.path);
    return cpu_gehsvj(b, nplus, cfg, threads, o.path);
  } catch (const std::bad_alloc &) {
    set_error("host allocation failed");
    return BSVD_STATUS_ALLOC_FAILED;
  } catch (const std::exception &e) {
    set_error("internal error: %s", e.what());
    return BSVD_STATUS_INTERNAL_ERROR;
  } catch (...) {
    set_error("internal error");
    return BSVD_STATUS_INTERNAL_ERROR;
  }
}

template <class T> struct CType { using type = T; };
template <> struct CType<bsvd_cfloat> { using type = std::complex<float>; };
template <> struct CType<bsvd_cdouble> { using type = std::complex<double>; };
template <class T> auto cpp(T *p) {
  using C = typename CType<std::remove_const_t<T>>::type;
  if constexpr (std::is_const_v<T>)
    return reinterpret_cast<const C *>(p);
  else
    return reinterpret_cast<C *>(p);
}

} // namespace
} // namespace bsvd::detail

using namespace bsvd::detail;

extern "C" {

#define BSVD_DEFINE_GEHSVJ(p, T, R)                                                                \
  bsvd_status_t bsvd_##p##gehsvj_strided_batched(                                                  \
      bsvd_job_t job, int m, int n, const int *nplus, const T *A, int lda, int64_t strideA, R *S,  \
      int64_t strideS, T *U, int ldu, int64_t strideU, T *V, int ldv, int64_t strideV, int *info,  \
      int *sweeps, int batch, const bsvd_options_t *opts) {                                        \
    return gehsvj(job, m, n, nplus, cpp(A), lda, strideA, S, strideS, cpp(U), ldu, strideU,        \
                  cpp(V), ldv, strideV, info, sweeps, batch, opts);                                \
  }
BSVD_DEFINE_GEHSVJ(s, float, float)
BSVD_DEFINE_GEHSVJ(d, double, double)
BSVD_DEFINE_GEHSVJ(c, bsvd_cfloat, float)
BSVD_DEFINE_GEHSVJ(z, bsvd_cdouble, double)
#undef BSVD_DEFINE_GEHSVJ

} // extern "C"

namespace bsvd {

template <class T>
bsvd_status_t gehsvj_strided_batched(Job job, int m, int n, const int *nplus, const T *A, int lda,
                                     int64_t strideA, real_t<T> *S, int64_t strideS, T *U, int ldu,
                                     int64_t strideU, T *V, int ldv, int64_t strideV, int *info,
                                     int *sweeps, int batch, const bsvd_options_t &opts) {
  return detail::gehsvj(bsvd_job_t(job), m, n, nplus, A, lda, strideA, S, strideS, U, ldu, strideU,
                        V, ldv, strideV, info, sweeps, batch, &opts);
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template bsvd_status_t gehsvj_strided_batched<T>(                                                \
      Job, int, int, const int *, const T *, int, int64_t, real_t<T> *, int64_t, T *, int,         \
      int64_t, T *, int, int64_t, int *, int *, int, const bsvd_options_t &);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd
