// gesvdx's entry points (bsvd.h, "Selected singular triplets"): every form
// becomes one GesvdxBatch (blas_batch.hpp), checked here (-position and a
// sentence in bsvd_last_error(), nothing written) and handed to the cpu
// backend (host data) or the cuda backend (device data) by the building
// blocks' rules (api_blas.cpp).
#include "api_common.hpp"
#include "backends.hpp"
#include "gesvdx_one.hpp"

#include <bsvd/bsvd.h>
#include <bsvd/svd.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace bsvd::detail {
namespace {

// Positions (1-based) of the prototypes' arguments; 0 = absent.
struct GesvdxPos {
  int job, range, m, n, A, lda, strideA, vl, vu, il, iu, ns, S, strideS, U, ldu, strideU, V, ldv,
      strideV, info, batch, opts;
};
constexpr GesvdxPos kStrided{1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12,
                             13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23};
constexpr GesvdxPos kArrays{1,  2, 3,  4,  5, 6,  0,  7, 8,  9,  10, 11,
                            12, 0, 13, 14, 0, 15, 16, 0, 17, 18, 19};

// What the call as a whole asks: job, range and its bounds, batch, options,
// ns and info.
template <class R> bsvd_status_t check_call(bsvd_job_t job, bsvd_range_t range, R vl, R vu, int il,
                                            int iu, int batch, const int *ns, const int *info,
                                            const bsvd_options_t *opts, const GesvdxPos &p,
                                            bsvd_options_t &o) {
  if (job != BSVD_JOB_VALUES && job != BSVD_JOB_VECTORS)
    return bad(p.job, "job", "= %d is not a bsvd_job_t", int(job));
  if (range != BSVD_RANGE_ALL && range != BSVD_RANGE_INDEX && range != BSVD_RANGE_VALUE)
    return bad(p.range, "range", "= %d is not a bsvd_range_t", int(range));
  if (range == BSVD_RANGE_VALUE) {
    if (!(vl >= R(0))) return bad(p.vl, "vl", "= %g is not >= 0", double(vl));
    if (!(vu > vl))
      return bad(p.vu, "vu", "= %g is not greater than vl = %g", double(vu), double(vl));
  }
  if (range == BSVD_RANGE_INDEX) {
    if (il < 0) return bad(p.il, "il", "= %d is negative", il);
    if (iu < il) return bad(p.iu, "iu", "= %d is less than il = %d", iu, il);
  }
  if (batch < 0) return bad(p.batch, "batch", "= %d is negative", batch);
  if (bsvd_status_t s = read_options(opts, p.opts, o)) return s;
  if (batch > 0 && !ns) return bad(p.ns, "ns", "is NULL");
  if (batch > 0 && !info) return bad(p.info, "info", "is NULL");
  return 0;
}

// Sizes, leading dimensions, the index range against each matrix, and the
// pointers a non-empty matrix needs. A strided batch is described by its
// first matrix; the other forms are checked one by one.
template <class T> bsvd_status_t check_matrices(const GesvdxBatch<T> &b, const GesvdxPos &p,
                                                bool variable, bool arrays) {
  for (int i = 0; i < b.count; ++i) {
    const int m = b.dims.rows(i), n = b.dims.cols(i), k = std::min(m, n);
    char nm[32], nn[32], nl[32], nu[32], nv[32];
    std::snprintf(nm, sizeof nm, variable ? "m[%d]" : "m", i);
    std::snprintf(nn, sizeof nn, variable ? "n[%d]" : "n", i);
    std::snprintf(nl, sizeof nl, variable ? "lda[%d]" : "lda", i);
    std::snprintf(nu, sizeof nu, variable ? "ldu[%d]" : "ldu", i);
    std::snprintf(nv, sizeof nv, variable ? "ldv[%d]" : "ldv", i);
    if (m < 0) return bad(p.m, nm, "= %d is negative", m);
    if (n < 0) return bad(p.n, nn, "= %d is negative", n);
    if (b.A.ldm(i) < std::max(1, m))
      return bad(p.lda, nl, "= %d is less than max(1, m) = %d", b.A.ldm(i), std::max(1, m));
    if (b.vectors && b.U.ldm(i) < std::max(1, m))
      return bad(p.ldu, nu, "= %d is less than max(1, m) = %d", b.U.ldm(i), std::max(1, m));
    if (b.vectors && b.V.ldm(i) < std::max(1, n))
      return bad(p.ldv, nv, "= %d is less than max(1, n) = %d", b.V.ldm(i), std::max(1, n));
    if (b.range == BSVD_RANGE_INDEX && k > 0 && b.iu >= k)
      return bad(p.iu, "iu", "= %d is not less than min(m, n) = %d (matrix %d, %d x %d)", b.iu, k,
                 i, m, n);
    const char *what = arrays ? "_array[i]" : "";
    auto null = [&](int pos, const char *name) {
      char full[32];
      std::snprintf(full, sizeof full, "%s%s", name, what);
      return bad(pos, full, "is NULL for matrix %d (%d x %d)", i, m, n);
    };
    if (k > 0) {
      if (!b.A.ptr(i)) return null(p.A, "A");
      if (!b.S.ptr(i)) return null(p.S, "S");
      if (b.vectors && !b.U.ptr(i)) return null(p.U, "U");
      if (b.vectors && !b.V.ptr(i)) return null(p.V, "V");
    }
    if (!variable && !arrays) break;
  }
  return 0;
}

// Memory space, backend and the call. ns and info are written for every
// matrix, empty ones included, so they take part in the memory-space check
// with the first non-empty matrix's operands.
template <class T> bsvd_status_t dispatch(const GesvdxBatch<T> &b, const GesvdxPos &p,
                                          const bsvd_options_t &o, Exec exec, bool arrays) {
  int w = 0;
  while (w < b.count && std::min(b.dims.rows(w), b.dims.cols(w)) == 0) ++w;
  const bool any = w < b.count;
  const bool vec = any && b.vectors;
  const DataArg args[] = {{any ? b.A.ptr(w) : nullptr, p.A, arrays ? "A_array[i]" : "A"},
                          {b.ns, p.ns, "ns"},
                          {b.info, p.info, "info"},
                          {any ? b.S.ptr(w) : nullptr, p.S, arrays ? "S_array[i]" : "S"},
                          {vec ? b.U.ptr(w) : nullptr, p.U, arrays ? "U_array[i]" : "U"},
                          {vec ? b.V.ptr(w) : nullptr, p.V, arrays ? "V_array[i]" : "V"}};
  int where = 0;
  if (bsvd_status_t s = locate_data(args, 6, where)) return s;
  bsvd_backend_t be;
  if (bsvd_status_t s =
          blas_backend(where, o, exec, any ? p.A : p.ns, any ? args[0].name : "ns", p.opts, be))
    return s;
  return guarded([&] {
    return be == BSVD_BACKEND_CPU ? cpu_gesvdx(b, cpu_threads(o, b.count))
                                  : cuda_gesvdx(b, o.stream, exec);
  });
}

template <class T> GesvdxBatch<T> make_batch(bsvd_job_t job, bsvd_range_t range, real_of_t<T> vl,
                                             real_of_t<T> vu, int il, int iu, int *ns, int *info,
                                             int batch) {
  GesvdxBatch<T> b;
  b.vectors = job == BSVD_JOB_VECTORS;
  b.range = int(range), b.vl = vl, b.vu = vu, b.il = il, b.iu = iu;
  b.count = batch, b.ns = ns, b.info = info;
  return b;
}

template <class T, class R = real_of_t<T>>
bsvd_status_t gesvdx_strided(bsvd_job_t job, bsvd_range_t range, int m, int n, const T *A, int lda,
                             int64_t sA, R vl, R vu, int il, int iu, int *ns, R *S, int64_t sS,
                             T *U, int ldu, int64_t sU, T *V, int ldv, int64_t sV, int *info,
                             int batch, const bsvd_options_t *opts, Exec exec) {
  clear_error();
  const GesvdxPos &p = kStrided;
  bsvd_options_t o;
  if (bsvd_status_t s = check_call(job, range, vl, vu, il, iu, batch, ns, info, opts, p, o))
    return s;
  GesvdxBatch<T> b = make_batch<T>(job, range, vl, vu, il, iu, ns, info, batch);
  b.dims.m = m, b.dims.n = n;
  b.A.base = A, b.A.stride = sA, b.A.ld = lda;
  b.S.base = S, b.S.stride = sS;
  b.U.base = U, b.U.stride = sU, b.U.ld = ldu;
  b.V.base = V, b.V.stride = sV, b.V.ld = ldv;
  if (bsvd_status_t s = check_matrices(b, p, false, false)) return s;
  const int64_t k = std::min(m, n), c = gesvdx_room(b, int(k));
  if (batch > 1 && k > 0) {
    const struct {
      int64_t s, need;
      int pos;
      const char *name, *what;
    } strides[] = {{sA, int64_t(lda) * n, p.strideA, "strideA", "lda * n"},
                   {sS, c, p.strideS, "strideS", "the values asked for"},
                   {b.vectors ? sU : c * ldu, c * ldu, p.strideU, "strideU", "ldu times them"},
                   {b.vectors ? sV : c * ldv, c * ldv, p.strideV, "strideV", "ldv times them"}};
    for (const auto &st : strides)
      if (st.s < st.need)
        return bad(st.pos, st.name, "= %lld is less than %s = %lld", (long long)st.s, st.what,
                   (long long)st.need);
  }
  if (batch == 0) return 0;
  return dispatch(b, p, o, exec, false);
}

template <class T, class R = real_of_t<T>>
bsvd_status_t gesvdx_arrays(bsvd_job_t job, bsvd_range_t range, int m, const int *mv, int n,
                            const int *nv, const T *const *A, int lda, const int *ldav, R vl, R vu,
                            int il, int iu, int *ns, R *const *S, T *const *U, int ldu,
                            const int *lduv, T *const *V, int ldv, const int *ldvv, int *info,
                            int batch, const bsvd_options_t *opts, bool variable, Exec exec) {
  clear_error();
  const GesvdxPos &p = kArrays;
  bsvd_options_t o;
  if (bsvd_status_t s = check_call(job, range, vl, vu, il, iu, batch, ns, info, opts, p, o))
    return s;
  if (batch == 0) return 0;
  const bool vectors = job == BSVD_JOB_VECTORS;
  if (variable) {
    if (!mv) return bad(p.m, "m", "is NULL");
    if (!nv) return bad(p.n, "n", "is NULL");
    if (!ldav) return bad(p.lda, "lda", "is NULL");
    if (vectors && !lduv) return bad(p.ldu, "ldu", "is NULL");
    if (vectors && !ldvv) return bad(p.ldv, "ldv", "is NULL");
  }
  if (!A) return bad(p.A, "A_array", "is NULL");
  if (!S) return bad(p.S, "S_array", "is NULL");
  if (vectors && !U) return bad(p.U, "U_array", "is NULL");
  if (vectors && !V) return bad(p.V, "V_array", "is NULL");
  GesvdxBatch<T> b = make_batch<T>(job, range, vl, vu, il, iu, ns, info, batch);
  b.dims.m = m, b.dims.n = n, b.dims.mv = mv, b.dims.nv = nv;
  b.A.array = A, b.A.ld = lda, b.A.ldv = ldav;
  b.S.array = S;
  if (vectors) {
    b.U.array = U, b.U.ld = ldu, b.U.ldv = lduv;
    b.V.array = V, b.V.ld = ldv, b.V.ldv = ldvv;
  }
  if (bsvd_status_t s = check_matrices(b, p, variable, true)) return s;
  return dispatch(b, p, o, exec, true);
}

} // namespace
} // namespace bsvd::detail

using namespace bsvd::detail;

extern "C" {

#define BSVD_DEFINE_GESVDX(p, T, R, suffix, exec)                                                  \
  bsvd_status_t bsvd_##p##gesvdx_strided_batched##suffix(                                          \
      bsvd_job_t job, bsvd_range_t range, int m, int n, const T *A, int lda, int64_t strideA,      \
      R vl, R vu, int il, int iu, int *ns, R *S, int64_t strideS, T *U, int ldu, int64_t strideU,  \
      T *V, int ldv, int64_t strideV, int *info, int batch, const bsvd_options_t *opts) {          \
    return gesvdx_strided(job, range, m, n, cpp(A), lda, strideA, vl, vu, il, iu, ns, S, strideS,  \
                          cpp(U), ldu, strideU, cpp(V), ldv, strideV, info, batch, opts, exec);    \
  }                                                                                                \
  bsvd_status_t bsvd_##p##gesvdx_batched##suffix(                                                  \
      bsvd_job_t job, bsvd_range_t range, int m, int n, const T *const *A_array, int lda, R vl,    \
      R vu, int il, int iu, int *ns, R *const *S_array, T *const *U_array, int ldu,                \
      T *const *V_array, int ldv, int *info, int batch, const bsvd_options_t *opts) {              \
    return gesvdx_arrays(job, range, m, nullptr, n, nullptr, cpp(A_array), lda, nullptr, vl, vu,   \
                         il, iu, ns, S_array, cpp(U_array), ldu, nullptr, cpp(V_array), ldv,       \
                         nullptr, info, batch, opts, false, exec);                                 \
  }                                                                                                \
  bsvd_status_t bsvd_##p##gesvdx_vbatched##suffix(                                                 \
      bsvd_job_t job, bsvd_range_t range, const int *m, const int *n, const T *const *A_array,     \
      const int *lda, R vl, R vu, int il, int iu, int *ns, R *const *S_array, T *const *U_array,   \
      const int *ldu, T *const *V_array, const int *ldv, int *info, int batch,                     \
      const bsvd_options_t *opts) {                                                                \
    return gesvdx_arrays(job, range, 0, m, 0, n, cpp(A_array), 0, lda, vl, vu, il, iu, ns,         \
                         S_array, cpp(U_array), 0, ldu, cpp(V_array), 0, ldv, info, batch, opts,   \
                         true, exec);                                                              \
  }
BSVD_DEFINE_GESVDX(s, float, float, , Exec::kBlocking)
BSVD_DEFINE_GESVDX(d, double, double, , Exec::kBlocking)
BSVD_DEFINE_GESVDX(c, bsvd_cfloat, float, , Exec::kBlocking)
BSVD_DEFINE_GESVDX(z, bsvd_cdouble, double, , Exec::kBlocking)
BSVD_DEFINE_GESVDX(s, float, float, _async, Exec::kAsync)
BSVD_DEFINE_GESVDX(d, double, double, _async, Exec::kAsync)
BSVD_DEFINE_GESVDX(c, bsvd_cfloat, float, _async, Exec::kAsync)
BSVD_DEFINE_GESVDX(z, bsvd_cdouble, double, _async, Exec::kAsync)
#undef BSVD_DEFINE_GESVDX

} // extern "C"

namespace bsvd {

template <class T>
bsvd_status_t gesvdx_strided_batched(Job job, bsvd_range_t range, int m, int n, const T *A, int lda,
                                     int64_t strideA, real_t<T> vl, real_t<T> vu, int il, int iu,
                                     int *ns, real_t<T> *S, int64_t strideS, T *U, int ldu,
                                     int64_t strideU, T *V, int ldv, int64_t strideV, int *info,
                                     int batch, const bsvd_options_t &opts) {
  return detail::gesvdx_strided(bsvd_job_t(job), range, m, n, A, lda, strideA, vl, vu, il, iu, ns,
                                S, strideS, U, ldu, strideU, V, ldv, strideV, info, batch, &opts,
                                detail::Exec::kBlocking);
}

template <class T>
bsvd_status_t gesvdx_vbatched(Job job, bsvd_range_t range, const int *m, const int *n,
                              const T *const *A_array, const int *lda, real_t<T> vl, real_t<T> vu,
                              int il, int iu, int *ns, real_t<T> *const *S_array, T *const *U_array,
                              const int *ldu, T *const *V_array, const int *ldv, int *info,
                              int batch, const bsvd_options_t &opts) {
  return detail::gesvdx_arrays(bsvd_job_t(job), range, 0, m, 0, n, A_array, 0, lda, vl, vu, il, iu,
                               ns, S_array, U_array, 0, ldu, V_array, 0, ldv, info, batch, &opts,
                               true, detail::Exec::kBlocking);
}

template <class T>
bsvd_status_t gesvdx_strided_batched_async(Job job, bsvd_range_t range, int m, int n, const T *A,
                                           int lda, int64_t strideA, real_t<T> vl, real_t<T> vu,
                                           int il, int iu, int *ns, real_t<T> *S, int64_t strideS,
                                           T *U, int ldu, int64_t strideU, T *V, int ldv,
                                           int64_t strideV, int *info, int batch,
                                           const bsvd_options_t &opts) {
  return detail::gesvdx_strided(bsvd_job_t(job), range, m, n, A, lda, strideA, vl, vu, il, iu, ns,
                                S, strideS, U, ldu, strideU, V, ldv, strideV, info, batch, &opts,
                                detail::Exec::kAsync);
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template bsvd_status_t gesvdx_strided_batched<T>(                                                \
      Job, bsvd_range_t, int, int, const T *, int, int64_t, real_t<T>, real_t<T>, int, int, int *, \
      real_t<T> *, int64_t, T *, int, int64_t, T *, int, int64_t, int *, int,                      \
      const bsvd_options_t &);                                                                     \
  template bsvd_status_t gesvdx_vbatched<T>(                                                       \
      Job, bsvd_range_t, const int *, const int *, const T *const *, const int *, real_t<T>,       \
      real_t<T>, int, int, int *, real_t<T> *const *, T *const *, const int *, T *const *,         \
      const int *, int *, int, const bsvd_options_t &);                                            \
  template bsvd_status_t gesvdx_strided_batched_async<T>(                                          \
      Job, bsvd_range_t, int, int, const T *, int, int64_t, real_t<T>, real_t<T>, int, int, int *, \
      real_t<T> *, int64_t, T *, int, int64_t, T *, int, int64_t, int *, int,                      \
      const bsvd_options_t &);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd
