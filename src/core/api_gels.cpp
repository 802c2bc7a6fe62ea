// Batched GELS's entry points (bsvd.h, "Batched LAPACK: GELS"): every form
// becomes one GelsBatch (blas_batch.hpp), checked here (-position and a
// sentence in bsvd_last_error(), nothing written) and handed to the cpu
// backend (host data) or the cuda backend (device data) by the rules the
// other building blocks share (api_blas.cpp).
#include "api_common.hpp"
#include "backends.hpp"

#include <bsvd/bsvd.h>
#include <bsvd/svd.hpp>

#include <algorithm>
#include <cstdio>
#include <type_traits>

namespace bsvd::detail {
namespace {

// Positions (1-based) of the GELS prototypes' arguments; 0 = absent.
struct GelsPos {
  int trans, m, n, nrhs, A, lda, strideA, B, ldb, strideB, info, batch, opts;
};
constexpr GelsPos kGelsStrided{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
constexpr GelsPos kGelsArrays{1, 2, 3, 4, 5, 6, 0, 7, 8, 0, 9, 10, 11};

// Whether matrix i reads A (a factorization to do) or B (rows of X to
// write: min(m, n) = 0 still zeroes max(m, n) rows).
template <class T> bool needs_A(const GelsBatch<T> &b, int i) {
  return std::min(b.dims.rows(i), b.dims.cols(i)) > 0;
}
template <class T> bool needs_B(const GelsBatch<T> &b, int i) {
  return b.rhs(i) > 0 && std::max(b.dims.rows(i), b.dims.cols(i)) > 0;
}

// Sizes, leading dimensions and the pointers a matrix needs. A strided
// batch is described by its first matrix; the other forms are checked
// matrix by matrix.
template <class T>
bsvd_status_t check_gels(const GelsBatch<T> &b, const GelsPos &p, bool variable, bool arrays) {
  for (int i = 0; i < b.count; ++i) {
    const int m = b.dims.rows(i), n = b.dims.cols(i), k = b.rhs(i);
    const int lda = b.A.ldm(i), ldb = b.B.ldm(i);
    char nm[32], nn[32], nk[32], nl[32], nb[32];
    std::snprintf(nm, sizeof nm, variable ? "m[%d]" : "m", i);
    std::snprintf(nn, sizeof nn, variable ? "n[%d]" : "n", i);
    std::snprintf(nk, sizeof nk, variable ? "nrhs[%d]" : "nrhs", i);
    std::snprintf(nl, sizeof nl, variable ? "lda[%d]" : "lda", i);
    std::snprintf(nb, sizeof nb, variable ? "ldb[%d]" : "ldb", i);
    if (m < 0) return bad(p.m, nm, "= %d is negative", m);
    if (n < 0) return bad(p.n, nn, "= %d is negative", n);
    if (k < 0) return bad(p.nrhs, nk, "= %d is negative", k);
    if (lda < std::max(1, m))
      return bad(p.lda, nl, "= %d is less than max(1, m) = %d", lda, std::max(1, m));
    if (ldb < std::max({1, m, n}))
      return bad(p.ldb, nb, "= %d is less than max(1, m, n) = %d", ldb, std::max({1, m, n}));
    if (needs_A(b, i) && !b.A.ptr(i))
      return bad(p.A, arrays ? "A_array[i]" : "A", "is NULL for matrix %d", i);
    if (needs_B(b, i) && !b.B.ptr(i))
      return bad(p.B, arrays ? "B_array[i]" : "B", "is NULL for matrix %d", i);
    if (!variable && !arrays) break;
  }
  return 0;
}

template <class T> bsvd_status_t gels_common(int trans, int batch, const int *info,
                                             const bsvd_options_t *opts, const GelsPos &p,
                                             bsvd_options_t &o) {
  if (trans < 0 || trans >= BSVD_OP_COUNT)
    return bad(p.trans, "trans", "= %d is none of BSVD_OP_N, BSVD_OP_T, BSVD_OP_C", trans);
  if (trans == BSVD_OP_T && !std::is_same_v<T, real_of_t<T>>)
    return bad(p.trans, "trans",
               "= BSVD_OP_T is not offered for complex matrices (nor by LAPACK's xGELS): "
               "BSVD_OP_C solves with A^H");
  if (batch < 0) return bad(p.batch, "batch", "= %d is negative", batch);
  if (bsvd_status_t s = read_options(opts, p.opts, o)) return s;
  if (batch > 0 && !info) return bad(p.info, "info", "is NULL");
  return 0;
}

// Memory space, backend and the call (the batch is checked). info is
// written for every matrix, so it takes part in the memory-space check
// with the first operands that are read.
template <class T> bsvd_status_t gels_dispatch(const GelsBatch<T> &b, const GelsPos &p,
                                               const bsvd_options_t &o, Exec exec, bool arrays) {
  int wa = 0, wb = 0;
  while (wa < b.count && !needs_A(b, wa)) ++wa;
  while (wb < b.count && !needs_B(b, wb)) ++wb;
  const char *nameA = arrays ? "A_array[i]" : "A", *nameB = arrays ? "B_array[i]" : "B";
  const DataArg args[] = {{wa < b.count ? b.A.ptr(wa) : nullptr, p.A, nameA},
                          {wb < b.count ? b.B.ptr(wb) : nullptr, p.B, nameB},
                          {b.info, p.info, "info"}};
  int where = 0;
  if (bsvd_status_t s = locate_data(args, 3, where)) return s;
  const bool anyB = wb < b.count;
  bsvd_backend_t be;
  if (bsvd_status_t s =
          blas_backend(where, o, exec, anyB ? p.B : p.info, anyB ? nameB : "info", p.opts, be))
    return s;
  return guarded([&] {
    return be == BSVD_BACKEND_CPU ? cpu_gels(b, cpu_threads(o, b.count))
                                  : cuda_gels(b, o.stream, exec);
  });
}

template <class T> bsvd_status_t gels_strided(int trans, int m, int n, int nrhs, T *A, int lda,
                                              int64_t sA, T *B, int ldb, int64_t sB, int *info,
                                              int batch, const bsvd_options_t *opts, Exec exec) {
  clear_error();
  const GelsPos &p = kGelsStrided;
  bsvd_options_t o;
  if (bsvd_status_t s = gels_common<T>(trans, batch, info, opts, p, o)) return s;
  GelsBatch<T> b;
  b.trans = trans, b.count = batch, b.info = info, b.nrhs = nrhs;
  b.dims.m = m, b.dims.n = n;
  b.A.base = A, b.A.stride = sA, b.A.ld = lda;
  b.B.base = B, b.B.stride = sB, b.B.ld = ldb;
  if (bsvd_status_t s = check_gels(b, p, false, false)) return s;
  // A and B are both written: the matrices of two systems must not overlap.
  if (batch > 1) {
    if (needs_A(b, 0) && sA < int64_t(lda) * n)
      return bad(p.strideA, "strideA", "= %lld is less than lda n = %lld", (long long)sA,
                 (long long)(int64_t(lda) * n));
    if (needs_B(b, 0) && sB < int64_t(ldb) * nrhs)
      return bad(p.strideB, "strideB", "= %lld is less than ldb nrhs = %lld", (long long)sB,
                 (long long)(int64_t(ldb) * nrhs));
  }
  if (batch == 0) return 0;
  return gels_dispatch(b, p, o, exec, false);
}

template <class T> bsvd_status_t gels_arrays(int trans, int m, int n, int nrhs, const int *mv,
                                             const int *nv, const int *kv, T *const *A, int lda,
                                             const int *ldav, T *const *B, int ldb, const int *ldbv,
                                             int *info, int batch, const bsvd_options_t *opts,
                                             bool variable, Exec exec) {
  clear_error();
  const GelsPos &p = kGelsArrays;
  bsvd_options_t o;
  if (bsvd_status_t s = gels_common<T>(trans, batch, info, opts, p, o)) return s;
  if (batch == 0) return 0;
  if (variable) {
    if (!mv) return bad(p.m, "m", "is NULL");
    if (!nv) return bad(p.n, "n", "is NULL");
    if (!kv) return bad(p.nrhs, "nrhs", "is NULL");
    if (!ldav) return bad(p.lda, "lda", "is NULL");
    if (!ldbv) return bad(p.ldb, "ldb", "is NULL");
  }
  if (!A) return bad(p.A, "A_array", "is NULL");
  if (!B) return bad(p.B, "B_array", "is NULL");
  GelsBatch<T> b;
  b.trans = trans, b.count = batch, b.info = info, b.nrhs = nrhs, b.nrhsv = kv;
  b.dims.m = m, b.dims.n = n, b.dims.mv = mv, b.dims.nv = nv;
  b.A.array = A, b.A.ld = lda, b.A.ldv = ldav;
  b.B.array = B, b.B.ld = ldb, b.B.ldv = ldbv;
  if (bsvd_status_t s = check_gels(b, p, variable, true)) return s;
  return gels_dispatch(b, p, o, exec, true);
}

} // namespace
} // namespace bsvd::detail

using namespace bsvd::detail;

extern "C" {

#define BSVD_DEFINE_GELS(p, T, suffix, exec)                                                       \
  bsvd_status_t bsvd_##p##gels_strided_batched##suffix(                                            \
      bsvd_op_t trans, int m, int n, int nrhs, T *A, int lda, int64_t strideA, T *B, int ldb,      \
      int64_t strideB, int *info, int batch, const bsvd_options_t *opts) {                         \
    return gels_strided(int(trans), m, n, nrhs, cpp(A), lda, strideA, cpp(B), ldb, strideB, info,  \
                        batch, opts, exec);                                                        \
  }                                                                                                \
  bsvd_status_t bsvd_##p##gels_batched##suffix(                                                    \
      bsvd_op_t trans, int m, int n, int nrhs, T *const *A_array, int lda, T *const *B_array,      \
      int ldb, int *info, int batch, const bsvd_options_t *opts) {                                 \
    return gels_arrays(int(trans), m, n, nrhs, nullptr, nullptr, nullptr, cpp(A_array), lda,       \
                       nullptr, cpp(B_array), ldb, nullptr, info, batch, opts, false, exec);       \
  }                                                                                                \
  bsvd_status_t bsvd_##p##gels_vbatched##suffix(                                                   \
      bsvd_op_t trans, const int *m, const int *n, const int *nrhs, T *const *A_array,             \
      const int *lda, T *const *B_array, const int *ldb, int *info, int batch,                     \
      const bsvd_options_t *opts) {                                                                \
    return gels_arrays(int(trans), 0, 0, 0, m, n, nrhs, cpp(A_array), 0, lda, cpp(B_array), 0,     \
                       ldb, info, batch, opts, true, exec);                                        \
  }
BSVD_DEFINE_GELS(s, float, , Exec::kBlocking)
BSVD_DEFINE_GELS(d, double, , Exec::kBlocking)
BSVD_DEFINE_GELS(c, bsvd_cfloat, , Exec::kBlocking)
BSVD_DEFINE_GELS(z, bsvd_cdouble, , Exec::kBlocking)
BSVD_DEFINE_GELS(s, float, _async, Exec::kAsync)
BSVD_DEFINE_GELS(d, double, _async, Exec::kAsync)
BSVD_DEFINE_GELS(c, bsvd_cfloat, _async, Exec::kAsync)
BSVD_DEFINE_GELS(z, bsvd_cdouble, _async, Exec::kAsync)
#undef BSVD_DEFINE_GELS

} // extern "C"

namespace bsvd {

template <class T> bsvd_status_t gels_strided_batched(bsvd_op_t trans, int m, int n, int nrhs, T *A,
                                                      int lda, int64_t strideA, T *B, int ldb,
                                                      int64_t strideB, int *info, int batch,
                                                      const bsvd_options_t &opts) {
  return detail::gels_strided(int(trans), m, n, nrhs, A, lda, strideA, B, ldb, strideB, info, batch,
                              &opts, detail::Exec::kBlocking);
}

template <class T> bsvd_status_t gels_vbatched(bsvd_op_t trans, const int *m, const int *n,
                                               const int *nrhs, T *const *A_array, const int *lda,
                                               T *const *B_array, const int *ldb, int *info,
                                               int batch, const bsvd_options_t &opts) {
  return detail::gels_arrays(int(trans), 0, 0, 0, m, n, nrhs, A_array, 0, lda, B_array, 0, ldb,
                             info, batch, &opts, true, detail::Exec::kBlocking);
}

template <class T> bsvd_status_t gels_strided_batched_async(bsvd_op_t trans, int m, int n, int nrhs,
                                                            T *A, int lda, int64_t strideA, T *B,
                                                            int ldb, int64_t strideB, int *info,
                                                            int batch, const bsvd_options_t &opts) {
  return detail::gels_strided(int(trans), m, n, nrhs, A, lda, strideA, B, ldb, strideB, info, batch,
                              &opts, detail::Exec::kAsync);
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template bsvd_status_t gels_strided_batched<T>(bsvd_op_t, int, int, int, T *, int, int64_t, T *, \
                                                 int, int64_t, int *, int,                         \
                                                 const bsvd_options_t &);                          \
  template bsvd_status_t gels_vbatched<T>(bsvd_op_t, const int *, const int *, const int *,        \
                                          T *const *, const int *, T *const *, const int *, int *, \
                                          int, const bsvd_options_t &);                            \
  template bsvd_status_t gels_strided_batched_async<T>(bsvd_op_t, int, int, int, T *, int,         \
                                                       int64_t, T *, int, int64_t, int *, int,     \
                                                       const bsvd_options_t &);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd
