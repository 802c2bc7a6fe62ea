// Batched GEBRD's entry points (bsvd.h, "Batched BLAS and LAPACK"): every
// form becomes one GebrdBatch (blas_batch.hpp), checked here (-position and
// a sentence in bsvd_last_error(), nothing written) and handed to the cpu
// backend (host data) or the cuda backend (device data) by the rules that
// GEMV shares (api_blas.cpp).
#include "api_common.hpp"
#include "backends.hpp"

#include <bsvd/bsvd.h>

#include <algorithm>
#include <cstdio>

namespace bsvd::detail {
namespace {

// Positions (1-based) of the GEBRD prototypes' arguments; 0 = absent.
struct GebrdPos {
  int m, n, A, lda, strideA, d, strided, e, stridee, tauq, stridetauq, taup, stridetaup, info,
      batch, opts;
};
constexpr GebrdPos kGebrdStrided{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
constexpr GebrdPos kGebrdArrays{1, 2, 3, 4, 0, 5, 0, 6, 0, 7, 0, 8, 0, 9, 10, 11};

// Sizes, leading dimensions and the pointers a non-empty matrix needs (e
// only with k = min(m, n) >= 2: it has k - 1 entries). A strided batch is
// described by its first matrix; the other forms are checked one by one.
template <class T>
bsvd_status_t check_gebrd(const GebrdBatch<T> &b, const GebrdPos &p, bool variable, bool arrays) {
  for (int i = 0; i < b.count; ++i) {
    const int m = b.dims.rows(i), n = b.dims.cols(i), lda = b.A.ldm(i);
    char nm[32], nn[32], nl[32];
    std::snprintf(nm, sizeof nm, variable ? "m[%d]" : "m", i);
    std::snprintf(nn, sizeof nn, variable ? "n[%d]" : "n", i);
    std::snprintf(nl, sizeof nl, variable ? "lda[%d]" : "lda", i);
    if (m < 0) return bad(p.m, nm, "= %d is negative", m);
    if (n < 0) return bad(p.n, nn, "= %d is negative", n);
    if (lda < std::max(1, m))
      return bad(p.lda, nl, "= %d is less than max(1, m) = %d", lda, std::max(1, m));
    const int k = std::min(m, n);
    const char *what = arrays ? "_array[i]" : "";
    auto null = [&](int pos, const char *name) {
      char full[32];
      std::snprintf(full, sizeof full, "%s%s", name, what);
      return bad(pos, full, "is NULL for matrix %d (%d x %d)", i, m, n);
    };
    if (k > 0) {
      if (!b.A.ptr(i)) return null(p.A, "A");
      if (!b.d.ptr(i)) return null(p.d, "d");
      if (k > 1 && !b.e.ptr(i)) return null(p.e, "e");
      if (!b.tauq.ptr(i)) return null(p.tauq, "tauq");
      if (!b.taup.ptr(i)) return null(p.taup, "taup");
    }
    if (!variable && !arrays) break;
  }
  return 0;
}

bsvd_status_t gebrd_common(int batch, const int *info, const bsvd_options_t *opts,
                           const GebrdPos &p, bsvd_options_t &o) {
  if (batch < 0) return bad(p.batch, "batch", "= %d is negative", batch);
  if (bsvd_status_t s = read_options(opts, p.opts, o)) return s;
  if (batch > 0 && !info) return bad(p.info, "info", "is NULL");
  return 0;
}

// Memory space, backend and the call (the batch is checked). The info
// array is written for every matrix, empty ones included, so it takes part
// in the memory-space check with the first non-empty matrix's operands.
template <class T> bsvd_status_t gebrd_dispatch(const GebrdBatch<T> &b, const GebrdPos &p,
                                                const bsvd_options_t &o, Exec exec, bool arrays) {
  int w = 0;
  while (w < b.count && std::min(b.dims.rows(w), b.dims.cols(w)) == 0) ++w;
  const bool any = w < b.count;
  const DataArg args[] = {
      {any ? b.A.ptr(w) : nullptr, p.A, arrays ? "A_array[i]" : "A"},
      {b.info, p.info, "info"},
      {any ? b.d.ptr(w) : nullptr, p.d, arrays ? "d_array[i]" : "d"},
      {any ? b.e.ptr(w) : nullptr, p.e, arrays ? "e_array[i]" : "e"},
      {any ? b.tauq.ptr(w) : nullptr, p.tauq, arrays ? "tauq_array[i]" : "tauq"},
      {any ? b.taup.ptr(w) : nullptr, p.taup, arrays ? "taup_array[i]" : "taup"}};
  int where = 0;
  if (bsvd_status_t s = locate_data(args, 6, where)) return s;
  bsvd_backend_t be;
  if (bsvd_status_t s =
          blas_backend(where, o, exec, any ? p.A : p.info, any ? args[0].name : "info", p.opts, be))
    return s;
  return guarded([&] {
    return be == BSVD_BACKEND_CPU ? cpu_gebrd(b, cpu_threads(o, b.count))
                                  : cuda_gebrd(b, o.stream, exec);
  });
}

template <class T, class R = real_of_t<T>>
bsvd_status_t gebrd_strided(int m, int n, T *A, int lda, int64_t sA, R *d, int64_t sd, R *e,
                            int64_t se, T *tauq, int64_t stq, T *taup, int64_t stp, int *info,
                            int batch, const bsvd_options_t *opts, Exec exec) {
  clear_error();
  const GebrdPos &p = kGebrdStrided;
  bsvd_options_t o;
  if (bsvd_status_t s = gebrd_common(batch, info, opts, p, o)) return s;
  GebrdBatch<T> b;
  b.count = batch, b.info = info;
  b.dims.m = m, b.dims.n = n;
  b.A.base = A, b.A.stride = sA, b.A.ld = lda;
  b.d.base = d, b.d.stride = sd;
  b.e.base = e, b.e.stride = se;
  b.tauq.base = tauq, b.tauq.stride = stq;
  b.taup.base = taup, b.taup.stride = stp;
  if (bsvd_status_t s = check_gebrd(b, p, false, false)) return s;
  const int64_t k = std::min(m, n);
  if (batch > 1 && k > 0) {
    if (sA < int64_t(lda) * n)
      return bad(p.strideA, "strideA", "= %lld is less than lda * n = %lld", (long long)sA,
                 (long long)lda * n);
    const struct {
      int64_t s, need;
      int pos;
      const char *name;
    } strides[] = {{sd, k, p.strided, "strided"},
                   {se, k - 1, p.stridee, "stridee"},
                   {stq, k, p.stridetauq, "stridetauq"},
                   {stp, k, p.stridetaup, "stridetaup"}};
    for (const auto &st : strides)
      if (st.s < st.need)
        return bad(st.pos, st.name, "= %lld is less than %s = %lld", (long long)st.s,
                   st.pos == p.stridee ? "min(m, n) - 1" : "min(m, n)", (long long)st.need);
  }
  if (batch == 0) return 0;
  return gebrd_dispatch(b, p, o, exec, false);
}

template <class T, class R = real_of_t<T>>
bsvd_status_t gebrd_arrays(int m, const int *mv, int n, const int *nv, T *const *A, int lda,
                           const int *ldav, R *const *d, R *const *e, T *const *tauq,
                           T *const *taup, int *info, int batch, const bsvd_options_t *opts,
                           bool variable, Exec exec) {
  clear_error();
  const GebrdPos &p = kGebrdArrays;
  bsvd_options_t o;
  if (bsvd_status_t s = gebrd_common(batch, info, opts, p, o)) return s;
  if (batch == 0) return 0;
  if (variable) {
    if (!mv) return bad(p.m, "m", "is NULL");
    if (!nv) return bad(p.n, "n", "is NULL");
    if (!ldav) return bad(p.lda, "lda", "is NULL");
  }
  if (!A) return bad(p.A, "A_array", "is NULL");
  if (!d) return bad(p.d, "d_array", "is NULL");
  if (!e) return bad(p.e, "e_array", "is NULL");
  if (!tauq) return bad(p.tauq, "tauq_array", "is NULL");
  if (!taup) return bad(p.taup, "taup_array", "is NULL");
  GebrdBatch<T> b;
  b.count = batch, b.info = info;
  b.dims.m = m, b.dims.n = n, b.dims.mv = mv, b.dims.nv = nv;
  b.A.array = A, b.A.ld = lda, b.A.ldv = ldav;
  b.d.array = d, b.e.array = e, b.tauq.array = tauq, b.taup.array = taup;
  if (bsvd_status_t s = check_gebrd(b, p, variable, true)) return s;
  return gebrd_dispatch(b, p, o, exec, true);
}

} // namespace
} // namespace bsvd::detail

using namespace bsvd::detail;

extern "C" {

#define BSVD_DEFINE_GEBRD(p, T, R, suffix, exec)                                                   \
  bsvd_status_t bsvd_##p##gebrd_strided_batched##suffix(                                           \
      int m, int n, T *A, int lda, int64_t strideA, R *d, int64_t strided, R *e, int64_t stridee,  \
      T *tauq, int64_t stridetauq, T *taup, int64_t stridetaup, int *info, int batch,              \
      const bsvd_options_t *opts) {                                                                \
    return gebrd_strided(m, n, cpp(A), lda, strideA, d, strided, e, stridee, cpp(tauq),            \
                         stridetauq, cpp(taup), stridetaup, info, batch, opts, exec);              \
  }                                                                                                \
  bsvd_status_t bsvd_##p##gebrd_batched##suffix(                                                   \
      int m, int n, T *const *A_array, int lda, R *const *d_array, R *const *e_array,              \
      T *const *tauq_array, T *const *taup_array, int *info, int batch,                            \
      const bsvd_options_t *opts) {                                                                \
    return gebrd_arrays(m, nullptr, n, nullptr, cpp(A_array), lda, nullptr, d_array, e_array,      \
                        cpp(tauq_array), cpp(taup_array), info, batch, opts, false, exec);         \
  }                                                                                                \
  bsvd_status_t bsvd_##p##gebrd_vbatched##suffix(                                                  \
      const int *m, const int *n, T *const *A_array, const int *lda, R *const *d_array,            \
      R *const *e_array, T *const *tauq_array, T *const *taup_array, int *info, int batch,         \
      const bsvd_options_t *opts) {                                                                \
    return gebrd_arrays(0, m, 0, n, cpp(A_array), 0, lda, d_array, e_array, cpp(tauq_array),       \
                        cpp(taup_array), info, batch, opts, true, exec);                           \
  }
BSVD_DEFINE_GEBRD(s, float, float, , Exec::kBlocking)
BSVD_DEFINE_GEBRD(d, double, double, , Exec::kBlocking)
BSVD_DEFINE_GEBRD(c, bsvd_cfloat, float, , Exec::kBlocking)
BSVD_DEFINE_GEBRD(z, bsvd_cdouble, double, , Exec::kBlocking)
BSVD_DEFINE_GEBRD(s, float, float, _async, Exec::kAsync)
BSVD_DEFINE_GEBRD(d, double, double, _async, Exec::kAsync)
BSVD_DEFINE_GEBRD(c, bsvd_cfloat, float, _async, Exec::kAsync)
BSVD_DEFINE_GEBRD(z, bsvd_cdouble, double, _async, Exec::kAsync)
#undef BSVD_DEFINE_GEBRD

} // extern "C"
