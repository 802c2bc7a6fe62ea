// Batched GELSD's entry points (bsvd.h, "Batched LAPACK: GELS", gelsd): the
// arguments checked here (-position, nothing written), then the call
// composed of two the library already has -- the SVD of every A_b by
// bsvd::gesvj_strided_batched (its backend rules, options and stream-ordered
// contract) into a scratch for U and V in the data's memory space, and the
// solve step X = V diag(1/s_i) U^H B (gelsd_one, on the cpu or the cuda
// backend as the data says).
#include "api_common.hpp"
#include "backends.hpp"

#include <bsvd/bsvd.h>
#include <bsvd/svd.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace bsvd::detail {
namespace {

// Positions (1-based) of the gelsd prototype's arguments.
struct GelsdPos {
  int m = 1, n = 2, nrhs = 3, A = 4, lda = 5, strideA = 6, B = 7, ldb = 8, strideB = 9, S = 10,
      strideS = 11, rcond = 12, rank = 13, info = 14, batch = 15, opts = 16;
};

template <class T> bsvd_status_t check_gelsd(int m, int n, int nrhs, const T *A, int lda,
                                             int64_t sA, const T *B, int ldb, int64_t sB,
                                             const real_of_t<T> *S, int64_t sS, real_of_t<T> rcond,
                                             const int *rank, const int *info, int batch) {
  const GelsdPos p;
  if (m < 0) return bad(p.m, "m", "= %d is negative", m);
  if (n < 0) return bad(p.n, "n", "= %d is negative", n);
  if (nrhs < 0) return bad(p.nrhs, "nrhs", "= %d is negative", nrhs);
  if (lda < std::max(1, m))
    return bad(p.lda, "lda", "= %d is less than max(1, m) = %d", lda, std::max(1, m));
  if (ldb < std::max({1, m, n}))
    return bad(p.ldb, "ldb", "= %d is less than max(1, m, n) = %d", ldb, std::max({1, m, n}));
  if (std::isnan(double(rcond))) return bad(p.rcond, "rcond", "is NaN");
  if (batch < 0) return bad(p.batch, "batch", "= %d is negative", batch);
  if (batch == 0) return 0;
  if (!rank) return bad(p.rank, "rank", "is NULL");
  if (!info) return bad(p.info, "info", "is NULL");
  const int k = std::min(m, n);
  const bool needB = nrhs > 0 && std::max(m, n) > 0;
  if (k > 0 && !A) return bad(p.A, "A", "is NULL");
  if (k > 0 && !S) return bad(p.S, "S", "is NULL");
  if (needB && !B) return bad(p.B, "B", "is NULL");
  if (batch > 1) {
    if (k > 0 && sA < int64_t(lda) * n)
      return bad(p.strideA, "strideA", "= %lld is less than lda n = %lld", (long long)sA,
                 (long long)(int64_t(lda) * n));
    if (needB && sB < int64_t(ldb) * nrhs)
      return bad(p.strideB, "strideB", "= %lld is less than ldb nrhs = %lld", (long long)sB,
                 (long long)(int64_t(ldb) * nrhs));
    if (k > 0 && sS < k)
      return bad(p.strideS, "strideS", "= %lld is less than min(m, n) = %d", (long long)sS, k);
  }
  return 0;
}

// The scratch of U and V in the data's memory space, released at the end
// of the call's scope (in stream order on the device).
template <class T> struct Scratch {
  std::vector<T> host;
  void *dev = nullptr, *stream = nullptr;
  T *data = nullptr;
  ~Scratch() {
    if (dev) cuda_scratch_free(dev, stream);
  }
  bsvd_status_t get(bool device, size_t count, void *s) {
    if (!device) {
      host.resize(std::max<size_t>(count, 1));
      data = host.data();
      return 0;
    }
    stream = s;
    if (bsvd_status_t st = cuda_scratch_alloc(&dev, std::max<size_t>(count, 1) * sizeof(T), s))
      return st;
    data = static_cast<T *>(dev);
    return 0;
  }
};

template <class T>
bsvd_status_t gelsd_strided(int m, int n, int nrhs, const T *A, int lda, int64_t sA, T *B, int ldb,
                            int64_t sB, real_of_t<T> *S, int64_t sS, real_of_t<T> rcond, int *rank,
                            int *info, int batch, const bsvd_options_t *opts, Exec exec) {
  clear_error();
  const GelsdPos p;
  bsvd_options_t o;
  if (bsvd_status_t s = read_options(opts, p.opts, o)) return s;
  if (bsvd_status_t s =
          check_gelsd(m, n, nrhs, A, lda, sA, B, ldb, sB, S, sS, rcond, rank, info, batch))
    return s;
  if (batch == 0) return 0;
  const int k = std::min(m, n);
  const bool needB = nrhs > 0 && std::max(m, n) > 0;
  const DataArg args[] = {{k > 0 ? A : nullptr, p.A, "A"},
                          {needB ? B : nullptr, p.B, "B"},
                          {k > 0 ? S : nullptr, p.S, "S"},
                          {rank, p.rank, "rank"},
                          {info, p.info, "info"}};
  int where = 0;
  if (bsvd_status_t s = locate_data(args, 5, where)) return s;
  bsvd_backend_t be;
  if (bsvd_status_t s =
          blas_backend(where, o, exec, needB ? p.B : p.info, needB ? "B" : "info", p.opts, be))
    return s;
  return guarded([&]() -> bsvd_status_t {
    const bool device = be == BSVD_BACKEND_CUDA;
    const int ldu = std::max(1, m), ldv = std::max(1, n);
    const int64_t sU = int64_t(ldu) * k, sV = int64_t(ldv) * k;
    Scratch<T> scratch;
    if (bsvd_status_t s = scratch.get(device, size_t(sU + sV) * size_t(batch), o.stream)) return s;
    T *U = scratch.data, *V = scratch.data + sU * batch;
    bsvd_options_t so = o;
    so.backend = be;
    so.path = nullptr;
    const bsvd_status_t st =
        exec == Exec::kAsync
            ? gesvj_strided_batched_async<T>(Job::Vectors, m, n, A, lda, sA, S, sS, U, ldu, sU, V,
                                             ldv, sV, info, nullptr, batch, so)
            : gesvj_strided_batched<T>(Job::Vectors, m, n, A, lda, sA, S, sS, U, ldu, sU, V, ldv,
                                       sV, info, nullptr, batch, so);
    if (st != 0) return st;
    GelsdBatch<T> b;
    b.count = batch, b.nrhs = nrhs, b.rcond = rcond, b.info = info, b.rank = rank;
    b.dims.m = m, b.dims.n = n;
    b.U.base = U, b.U.stride = sU, b.U.ld = ldu;
    b.V.base = V, b.V.stride = sV, b.V.ld = ldv;
    b.S.base = S, b.S.stride = sS;
    b.B.base = B, b.B.stride = sB, b.B.ld = ldb;
    return device ? cuda_gelsd_apply(b, o.stream, exec) : cpu_gelsd_apply(b, cpu_threads(o, batch));
  });
}

} // namespace
} // namespace bsvd::detail

using namespace bsvd::detail;

extern "C" {

#define BSVD_DEFINE_GELSD(p, T, R, suffix, exec)                                                   \
  bsvd_status_t bsvd_##p##gelsd_strided_batched##suffix(                                           \
      int m, int n, int nrhs, const T *A, int lda, int64_t strideA, T *B, int ldb,                 \
      int64_t strideB, R *S, int64_t strideS, R rcond, int *rank, int *info, int batch,            \
      const bsvd_options_t *opts) {                                                                \
    return gelsd_strided(m, n, nrhs, cpp(A), lda, strideA, cpp(B), ldb, strideB, S, strideS,       \
                         rcond, rank, info, batch, opts, exec);                                    \
  }
BSVD_DEFINE_GELSD(s, float, float, , Exec::kBlocking)
BSVD_DEFINE_GELSD(d, double, double, , Exec::kBlocking)
BSVD_DEFINE_GELSD(c, bsvd_cfloat, float, , Exec::kBlocking)
BSVD_DEFINE_GELSD(z, bsvd_cdouble, double, , Exec::kBlocking)
BSVD_DEFINE_GELSD(s, float, float, _async, Exec::kAsync)
BSVD_DEFINE_GELSD(d, double, double, _async, Exec::kAsync)
BSVD_DEFINE_GELSD(c, bsvd_cfloat, float, _async, Exec::kAsync)
BSVD_DEFINE_GELSD(z, bsvd_cdouble, double, _async, Exec::kAsync)
#undef BSVD_DEFINE_GELSD

} // extern "C"

namespace bsvd {

template <class T>
bsvd_status_t gelsd_strided_batched(int m, int n, int nrhs, const T *A, int lda, int64_t strideA,
                                    T *B, int ldb, int64_t strideB, real_t<T> *S, int64_t strideS,
                                    real_t<T> rcond, int *rank, int *info, int batch,
                                    const bsvd_options_t &opts) {
  return detail::gelsd_strided(m, n, nrhs, A, lda, strideA, B, ldb, strideB, S, strideS, rcond,
                               rank, info, batch, &opts, detail::Exec::kBlocking);
}

template <class T>
bsvd_status_t gelsd_strided_batched_async(int m, int n, int nrhs, const T *A, int lda,
                                          int64_t strideA, T *B, int ldb, int64_t strideB,
                                          real_t<T> *S, int64_t strideS, real_t<T> rcond, int *rank,
                                          int *info, int batch, const bsvd_options_t &opts) {
  return detail::gelsd_strided(m, n, nrhs, A, lda, strideA, B, ldb, strideB, S, strideS, rcond,
                               rank, info, batch, &opts, detail::Exec::kAsync);
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template bsvd_status_t gelsd_strided_batched<T>(int, int, int, const T *, int, int64_t, T *,     \
                                                  int, int64_t, real_t<T> *, int64_t, real_t<T>,   \
                                                  int *, int *, int, const bsvd_options_t &);      \
  template bsvd_status_t gelsd_strided_batched_async<T>(                                           \
      int, int, int, const T *, int, int64_t, T *, int, int64_t, real_t<T> *, int64_t, real_t<T>,  \
      int *, int *, int, const bsvd_options_t &);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd
