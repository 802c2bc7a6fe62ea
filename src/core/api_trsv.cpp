// Batched TRSV's entry points (bsvd.h, "Batched BLAS: TRSV"): every form
// becomes one TrsvBatch (blas_batch.hpp), checked here (-position and a
// sentence in bsvd_last_error(), nothing written) and handed to the cpu
// backend (host data) or the cuda backend (device data) by the rules that
// GEMV and GEBRD share (api_blas.cpp).
#include "api_common.hpp"
#include "backends.hpp"

#include <bsvd/bsvd.h>
#include <bsvd/svd.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace bsvd::detail {
namespace {

// Positions (1-based) of the TRSV prototypes' arguments; 0 = absent.
struct TrsvPos {
  int uplo, trans, diag, n, A, lda, strideA, x, incx, stridex, info, batch, opts;
};
constexpr TrsvPos kTrsvStrided{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
constexpr TrsvPos kTrsvArrays{1, 2, 3, 4, 5, 6, 0, 7, 8, 0, 9, 10, 11};

// Sizes, leading dimensions, increments and the pointers a non-empty
// solve needs. A strided batch is described by its first matrix; the other
// forms are checked matrix by matrix.
template <class T>
bsvd_status_t check_trsv(const TrsvBatch<T> &b, const TrsvPos &p, bool variable, bool arrays) {
  for (int i = 0; i < b.count; ++i) {
    const int n = b.order(i), lda = b.A.ldm(i), incx = b.x.ldm(i);
    char nn[32], nl[32], ni[32];
    std::snprintf(nn, sizeof nn, variable ? "n[%d]" : "n", i);
    std::snprintf(nl, sizeof nl, variable ? "lda[%d]" : "lda", i);
    std::snprintf(ni, sizeof ni, variable ? "incx[%d]" : "incx", i);
    if (n < 0) return bad(p.n, nn, "= %d is negative", n);
    if (lda < std::max(1, n))
      return bad(p.lda, nl, "= %d is less than max(1, n) = %d", lda, std::max(1, n));
    if (incx == 0) return bad(p.incx, ni, "= 0");
    if (n > 0) {
      if (!b.A.ptr(i)) return bad(p.A, arrays ? "A_array[i]" : "A", "is NULL for matrix %d", i);
      if (!b.x.ptr(i)) return bad(p.x, arrays ? "x_array[i]" : "x", "is NULL for matrix %d", i);
    }
    if (!variable && !arrays) break;
  }
  return 0;
}

bsvd_status_t trsv_common(int uplo, int trans, int diag, int batch, const int *info,
                          const bsvd_options_t *opts, const TrsvPos &p, bsvd_options_t &o) {
  if (uplo < 0 || uplo >= BSVD_UPLO_COUNT)
    return bad(p.uplo, "uplo", "= %d is neither BSVD_UPLO_L nor BSVD_UPLO_U", uplo);
  if (trans < 0 || trans >= BSVD_OP_COUNT)
    return bad(p.trans, "trans", "= %d is none of BSVD_OP_N, BSVD_OP_T, BSVD_OP_C", trans);
  if (diag < 0 || diag >= BSVD_DIAG_COUNT)
    return bad(p.diag, "diag", "= %d is neither BSVD_DIAG_N nor BSVD_DIAG_U", diag);
  if (batch < 0) return bad(p.batch, "batch", "= %d is negative", batch);
  if (bsvd_status_t s = read_options(opts, p.opts, o)) return s;
  if (batch > 0 && !info) return bad(p.info, "info", "is NULL");
  return 0;
}

// Memory space, backend and the call (the batch is checked). info is
// written for every matrix, so it takes part in the memory-space check
// with the first non-empty matrix's operands.
template <class T> bsvd_status_t trsv_dispatch(const TrsvBatch<T> &b, const TrsvPos &p,
                                               const bsvd_options_t &o, Exec exec, bool arrays) {
  int w = 0;
  while (w < b.count && b.order(w) == 0) ++w;
  const bool any = w < b.count;
  const DataArg args[] = {{any ? b.A.ptr(w) : nullptr, p.A, arrays ? "A_array[i]" : "A"},
                          {any ? b.x.ptr(w) : nullptr, p.x, arrays ? "x_array[i]" : "x"},
                          {b.info, p.info, "info"}};
  int where = 0;
  if (bsvd_status_t s = locate_data(args, 3, where)) return s;
  bsvd_backend_t be;
  if (bsvd_status_t s =
          blas_backend(where, o, exec, any ? p.x : p.info, any ? args[1].name : "info", p.opts, be))
    return s;
  return guarded([&] {
    return be == BSVD_BACKEND_CPU ? cpu_trsv(b, cpu_threads(o, b.count))
                                  : cuda_trsv(b, o.stream, exec);
  });
}

template <class T> bsvd_status_t trsv_strided(int uplo, int trans, int diag, int n, const T *A,
                                              int lda, int64_t sA, T *x, int incx, int64_t sx,
                                              int *info, int batch, const bsvd_options_t *opts,
                                              Exec exec) {
  clear_error();
  const TrsvPos &p = kTrsvStrided;
  bsvd_options_t o;
  if (bsvd_status_t s = trsv_common(uplo, trans, diag, batch, info, opts, p, o)) return s;
  TrsvBatch<T> b;
  b.uplo = uplo, b.trans = trans, b.diag = diag, b.count = batch, b.info = info;
  b.dims.m = b.dims.n = n;
  b.A.base = A, b.A.stride = sA, b.A.ld = lda;
  b.x.base = x, b.x.stride = sx, b.x.ld = incx;
  if (bsvd_status_t s = check_trsv(b, p, false, false)) return s;
  // A is only read: any stride >= 0. The x of two solves must not overlap.
  if (batch > 1) {
    if (sA < 0) return bad(p.strideA, "strideA", "= %lld is negative", (long long)sA);
    const int64_t span = n > 0 ? 1 + int64_t(n - 1) * std::llabs(incx) : 0;
    if (sx < span)
      return bad(p.stridex, "stridex",
                 "= %lld is less than the span of one x, 1 + (n - 1) |incx| = %lld", (long long)sx,
                 (long long)span);
  }
  if (batch == 0) return 0;
  return trsv_dispatch(b, p, o, exec, false);
}

template <class T> bsvd_status_t trsv_arrays(int uplo, int trans, int diag, int n, const int *nv,
                                             const T *const *A, int lda, const int *ldav,
                                             T *const *x, int incx, const int *incxv, int *info,
                                             int batch, const bsvd_options_t *opts, bool variable,
                                             Exec exec) {
  clear_error();
  const TrsvPos &p = kTrsvArrays;
  bsvd_options_t o;
  if (bsvd_status_t s = trsv_common(uplo, trans, diag, batch, info, opts, p, o)) return s;
  if (batch == 0) return 0;
  if (variable) {
    if (!nv) return bad(p.n, "n", "is NULL");
    if (!ldav) return bad(p.lda, "lda", "is NULL");
    if (!incxv) return bad(p.incx, "incx", "is NULL");
  }
  if (!A) return bad(p.A, "A_array", "is NULL");
  if (!x) return bad(p.x, "x_array", "is NULL");
  TrsvBatch<T> b;
  b.uplo = uplo, b.trans = trans, b.diag = diag, b.count = batch, b.info = info;
  b.dims.m = b.dims.n = n, b.dims.mv = b.dims.nv = nv;
  b.A.array = A, b.A.ld = lda, b.A.ldv = ldav;
  b.x.array = x, b.x.ld = incx, b.x.ldv = incxv;
  if (bsvd_status_t s = check_trsv(b, p, variable, true)) return s;
  return trsv_dispatch(b, p, o, exec, true);
}

} // namespace
} // namespace bsvd::detail

using namespace bsvd::detail;

extern "C" {

#define BSVD_DEFINE_TRSV(p, T, suffix, exec)                                                       \
  bsvd_status_t bsvd_##p##trsv_strided_batched##suffix(                                            \
      bsvd_uplo_t uplo, bsvd_op_t trans, bsvd_diag_t diag, int n, const T *A, int lda,             \
      int64_t strideA, T *x, int incx, int64_t stridex, int *info, int batch,                      \
      const bsvd_options_t *opts) {                                                                \
    return trsv_strided(int(uplo), int(trans), int(diag), n, cpp(A), lda, strideA, cpp(x), incx,   \
                        stridex, info, batch, opts, exec);                                         \
  }                                                                                                \
  bsvd_status_t bsvd_##p##trsv_batched##suffix(                                                    \
      bsvd_uplo_t uplo, bsvd_op_t trans, bsvd_diag_t diag, int n, const T *const *A_array,         \
      int lda, T *const *x_array, int incx, int *info, int batch, const bsvd_options_t *opts) {    \
    return trsv_arrays(int(uplo), int(trans), int(diag), n, nullptr, cpp(A_array), lda, nullptr,   \
                       cpp(x_array), incx, nullptr, info, batch, opts, false, exec);               \
  }                                                                                                \
  bsvd_status_t bsvd_##p##trsv_vbatched##suffix(                                                   \
      bsvd_uplo_t uplo, bsvd_op_t trans, bsvd_diag_t diag, const int *n, const T *const *A_array,  \
      const int *lda, T *const *x_array, const int *incx, int *info, int batch,                    \
      const bsvd_options_t *opts) {                                                                \
    return trsv_arrays(int(uplo), int(trans), int(diag), 0, n, cpp(A_array), 0, lda, cpp(x_array), \
                       0, incx, info, batch, opts, true, exec);                                    \
  }
BSVD_DEFINE_TRSV(s, float, , Exec::kBlocking)
BSVD_DEFINE_TRSV(d, double, , Exec::kBlocking)
BSVD_DEFINE_TRSV(c, bsvd_cfloat, , Exec::kBlocking)
BSVD_DEFINE_TRSV(z, bsvd_cdouble, , Exec::kBlocking)
BSVD_DEFINE_TRSV(s, float, _async, Exec::kAsync)
BSVD_DEFINE_TRSV(d, double, _async, Exec::kAsync)
BSVD_DEFINE_TRSV(c, bsvd_cfloat, _async, Exec::kAsync)
BSVD_DEFINE_TRSV(z, bsvd_cdouble, _async, Exec::kAsync)
#undef BSVD_DEFINE_TRSV

} // extern "C"

namespace bsvd {

template <class T> bsvd_status_t trsv_strided_batched(bsvd_uplo_t uplo, bsvd_op_t trans,
                                                      bsvd_diag_t diag, int n, const T *A, int lda,
                                                      int64_t strideA, T *x, int incx,
                                                      int64_t stridex, int *info, int batch,
                                                      const bsvd_options_t &opts) {
  return detail::trsv_strided(int(uplo), int(trans), int(diag), n, A, lda, strideA, x, incx,
                              stridex, info, batch, &opts, detail::Exec::kBlocking);
}

template <class T> bsvd_status_t trsv_vbatched(bsvd_uplo_t uplo, bsvd_op_t trans, bsvd_diag_t diag,
                                               const int *n, const T *const *A_array,
                                               const int *lda, T *const *x_array, const int *incx,
                                               int *info, int batch, const bsvd_options_t &opts) {
  return detail::trsv_arrays(int(uplo), int(trans), int(diag), 0, n, A_array, 0, lda, x_array, 0,
                             incx, info, batch, &opts, true, detail::Exec::kBlocking);
}

template <class T> bsvd_status_t trsv_strided_batched_async(bsvd_uplo_t uplo, bsvd_op_t trans,
                                                            bsvd_diag_t diag, int n, const T *A,
                                                            int lda, int64_t strideA, T *x,
                                                            int incx, int64_t stridex, int *info,
                                                            int batch, const bsvd_options_t &opts) {
  return detail::trsv_strided(int(uplo), int(trans), int(diag), n, A, lda, strideA, x, incx,
                              stridex, info, batch, &opts, detail::Exec::kAsync);
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template bsvd_status_t trsv_strided_batched<T>(bsvd_uplo_t, bsvd_op_t, bsvd_diag_t, int,         \
                                                 const T *, int, int64_t, T *, int, int64_t,       \
                                                 int *, int, const bsvd_options_t &);              \
  template bsvd_status_t trsv_vbatched<T>(bsvd_uplo_t, bsvd_op_t, bsvd_diag_t, const int *,        \
                                          const T *const *, const int *, T *const *, const int *,  \
                                          int *, int, const bsvd_options_t &);                     \
  template bsvd_status_t trsv_strided_batched_async<T>(bsvd_uplo_t, bsvd_op_t, bsvd_diag_t, int,   \
                                                       const T *, int, int64_t, T *, int, int64_t, \
                                                       int *, int, const bsvd_options_t &);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd
