// Batched GEMV's entry points (bsvd.h, "Batched BLAS and LAPACK"), and the
// memory / backend rules that GEMV and GEBRD (api_gebrd.cpp) share: every
// form becomes one GemvBatch (blas_batch.hpp), checked here -- -position
// and a sentence in bsvd_last_error(), nothing written -- and handed to the
// cpu backend (host data) or the cuda backend (device data).
#include "api_common.hpp"
#include "backends.hpp"

#include <bsvd/bsvd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace bsvd::detail {

// ---- shared with api_gebrd.cpp (api_common.hpp) ------------------------------

bsvd_status_t locate_data(const DataArg *args, int count, int &where) {
  where = -1;
  int first = -1;
  for (int i = 0; i < count; ++i) {
    const int w = cuda_memory_space(args[i].p);
    if (w == -2) continue;
    if (where < 0) {
      where = w, first = i;
    } else if (w != where) {
      return bad(args[i].pos, args[i].name,
                 "is %s memory but %s is %s memory: the data of a call must be in one space",
                 w == 1 ? "device" : "host", args[first].name, where == 1 ? "device" : "host");
    }
  }
  if (where < 0) where = 0;
  return 0;
}

namespace {
const char *no_cuda_reason() {
#if defined(BSVD_WITH_CUDA)
  return "no CUDA GPU is visible";
#else
  return "this library was built without CUDA";
#endif
}
} // namespace

// Host data is not staged to the GPU: a GEMV reads each entry of A once,
// so the copy alone costs more than the product on the host; a GEBRD of
// host data could be staged, but staging is what the solvers' host_data.cu
// does with a plan around it -- a later step, hence NOT_SUPPORTED (a valid
// request this build does not do) rather than a bad argument.
bsvd_status_t blas_backend(int where, const bsvd_options_t &o, Exec exec, int posA,
                           const char *nameA, int posOpts, bsvd_backend_t &out) {
  if (exec == Exec::kAsync) {
    if (o.backend == BSVD_BACKEND_CPU)
      return bad(posOpts, "opts->backend",
                 "= cpu, but the _async forms run on the cuda backend (use the blocking form)");
    if (!cuda_available()) {
      set_error("the _async forms need the cuda backend, but %s", no_cuda_reason());
      return BSVD_STATUS_BACKEND_UNAVAILABLE;
    }
    if (where != 1)
      return bad(posA, nameA,
                 "is host memory, but the _async forms take device memory (use the blocking form "
                 "for host data)");
    out = BSVD_BACKEND_CUDA;
    return 0;
  }
  bsvd_backend_t be = o.backend;
  if (be == BSVD_BACKEND_AUTO) be = where == 1 ? BSVD_BACKEND_CUDA : BSVD_BACKEND_CPU;
  if (be == BSVD_BACKEND_CPU && where == 1)
    return bad(posA, nameA, "is device memory, but opts->backend = cpu needs host memory");
  if (be == BSVD_BACKEND_CUDA && where == 0) {
    if (!cuda_available()) {
      set_error("opts->backend = cuda, but %s", no_cuda_reason());
      return BSVD_STATUS_BACKEND_UNAVAILABLE;
    }
    set_error("opts->backend = cuda with host data: the cuda backend's gemv, gebrd, trsv, gels and "
              "gesvdx take device memory (host data runs on the cpu backend: BSVD_BACKEND_AUTO "
              "or _CPU)");
    return BSVD_STATUS_NOT_SUPPORTED;
  }
  out = be;
  return 0;
}

namespace {

// Positions (1-based) of the GEMV prototypes' arguments; 0 = absent.
struct GemvPos {
  int trans, m, n, alpha, A, lda, strideA, x, incx, stridex, beta, y, incy, stridey, batch, opts;
};
constexpr GemvPos kGemvStrided{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
constexpr GemvPos kGemvArrays{1, 2, 3, 4, 5, 6, 0, 7, 8, 0, 9, 10, 11, 0, 12, 13};

// "name" or "name[i]" (the vbatched forms' per-matrix arrays).
struct ArgName {
  char s[32];
  ArgName(const char *name, bool variable, int i) {
    if (variable)
      std::snprintf(s, sizeof s, "%s[%d]", name, i);
    else
      std::snprintf(s, sizeof s, "%s", name);
  }
};

// Sizes, leading dimensions, increments, and the pointers each product
// touches: A and x when alpha != 0, y unless alpha = 0 and beta = 1 (BLAS's
// quick return). A strided batch is described by its first matrix; the
// other forms are checked matrix by matrix.
template <class T>
bsvd_status_t check_gemv(const GemvBatch<T> &b, const GemvPos &p, bool variable, bool arrays) {
  const bool each = variable || arrays;
  const bool reads = !(b.alpha == T(0)), writes = !(b.alpha == T(0) && b.beta == T(1));
  for (int i = 0; i < b.count; ++i) {
    const int m = b.dims.rows(i), n = b.dims.cols(i);
    if (m < 0) return bad(p.m, ArgName("m", variable, i).s, "= %d is negative", m);
    if (n < 0) return bad(p.n, ArgName("n", variable, i).s, "= %d is negative", n);
    const int lda = b.A.ldm(i), incx = b.x.ldm(i), incy = b.y.ldm(i);
    if (lda < std::max(1, m))
      return bad(p.lda, ArgName("lda", variable, i).s, "= %d is less than max(1, m) = %d", lda,
                 std::max(1, m));
    if (incx == 0) return bad(p.incx, ArgName("incx", variable, i).s, "= 0");
    if (incy == 0) return bad(p.incy, ArgName("incy", variable, i).s, "= 0");
    if (m > 0 && n > 0) {
      if (reads && !b.A.ptr(i))
        return bad(p.A, arrays ? "A_array[i]" : "A", "is NULL for matrix %d", i);
      if (reads && !b.x.ptr(i))
        return bad(p.x, arrays ? "x_array[i]" : "x", "is NULL for matrix %d", i);
      if (writes && !b.y.ptr(i))
        return bad(p.y, arrays ? "y_array[i]" : "y", "is NULL for matrix %d", i);
    }
    if (!each) break;
  }
  return 0;
}

// Checks shared by the forms before the batch is described; o receives
// the full options.
bsvd_status_t gemv_common(int trans, int batch, const bsvd_options_t *opts, const GemvPos &p,
                          bsvd_options_t &o) {
  if (trans < 0 || trans >= BSVD_OP_COUNT)
    return bad(p.trans, "trans", "= %d is none of BSVD_OP_N, BSVD_OP_T, BSVD_OP_C", trans);
  if (batch < 0) return bad(p.batch, "batch", "= %d is negative", batch);
  return read_options(opts, p.opts, o);
}

// Memory space, backend and the call (the batch is checked).
template <class T> bsvd_status_t gemv_dispatch(const GemvBatch<T> &b, const GemvPos &p,
                                               const bsvd_options_t &o, Exec exec, bool arrays) {
  int w = 0; // the first matrix with work: its pointers say where the data is
  while (w < b.count && (b.dims.rows(w) == 0 || b.dims.cols(w) == 0)) ++w;
  if (w == b.count) return 0; // (every product empty: y untouched, as BLAS)
  if (b.alpha == T(0) && b.beta == T(1)) return 0; // (BLAS's quick return)
  const bool reads = !(b.alpha == T(0));
  const DataArg args[] = {{reads ? b.A.ptr(w) : nullptr, p.A, arrays ? "A_array[i]" : "A"},
                          {reads ? b.x.ptr(w) : nullptr, p.x, arrays ? "x_array[i]" : "x"},
                          {b.y.ptr(w), p.y, arrays ? "y_array[i]" : "y"}};
  int where = 0;
  if (bsvd_status_t s = locate_data(args, 3, where)) return s;
  bsvd_backend_t be;
  if (bsvd_status_t s = blas_backend(where, o, exec, p.y, arrays ? "y_array[i]" : "y", p.opts, be))
    return s;
  return guarded([&] {
    return be == BSVD_BACKEND_CPU ? cpu_gemv(b, cpu_threads(o, b.count))
                                  : cuda_gemv(b, o.stream, exec);
  });
}

template <class T> bsvd_status_t gemv_strided(int trans, int m, int n, T alpha, const T *A, int lda,
                                              int64_t sA, const T *x, int incx, int64_t sx, T beta,
                                              T *y, int incy, int64_t sy, int batch,
                                              const bsvd_options_t *opts, Exec exec) {
  clear_error();
  const GemvPos &p = kGemvStrided;
  bsvd_options_t o;
  if (bsvd_status_t s = gemv_common(trans, batch, opts, p, o)) return s;
  GemvBatch<T> b;
  b.trans = trans, b.count = batch, b.alpha = alpha, b.beta = beta;
  b.dims.m = m, b.dims.n = n;
  b.A.base = A, b.A.stride = sA, b.A.ld = lda;
  b.x.base = x, b.x.stride = sx, b.x.ld = incx;
  b.y.base = y, b.y.stride = sy, b.y.ld = incy;
  if (bsvd_status_t s = check_gemv(b, p, false, false)) return s;
  // A and x are only read: any stride >= 0 (0 applies one to every
  // product). The y of two products must not overlap.
  if (batch > 1) {
    if (sA < 0) return bad(p.strideA, "strideA", "= %lld is negative", (long long)sA);
    if (sx < 0) return bad(p.stridex, "stridex", "= %lld is negative", (long long)sx);
    const int leny = b.leny(0);
    const int64_t span = leny > 0 ? 1 + int64_t(leny - 1) * std::llabs(incy) : 0;
    if (m > 0 && n > 0 && sy < span)
      return bad(p.stridey, "stridey",
                 "= %lld is less than the span of one y, 1 + (len(y) - 1) |incy| = %lld",
                 (long long)sy, (long long)span);
  }
  if (batch == 0) return 0;
  return gemv_dispatch(b, p, o, exec, false);
}

template <class T> bsvd_status_t gemv_arrays(int trans, int m, const int *mv, int n, const int *nv,
                                             T alpha, const T *const *A, int lda, const int *ldav,
                                             const T *const *x, int incx, const int *incxv, T beta,
                                             T *const *y, int incy, const int *incyv, int batch,
                                             const bsvd_options_t *opts, bool variable, Exec exec) {
  clear_error();
  const GemvPos &p = kGemvArrays;
  bsvd_options_t o;
  if (bsvd_status_t s = gemv_common(trans, batch, opts, p, o)) return s;
  if (batch == 0) return 0;
  if (variable) {
    if (!mv) return bad(p.m, "m", "is NULL");
    if (!nv) return bad(p.n, "n", "is NULL");
    if (!ldav) return bad(p.lda, "lda", "is NULL");
    if (!incxv) return bad(p.incx, "incx", "is NULL");
    if (!incyv) return bad(p.incy, "incy", "is NULL");
  }
  if (!A) return bad(p.A, "A_array", "is NULL");
  if (!x) return bad(p.x, "x_array", "is NULL");
  if (!y) return bad(p.y, "y_array", "is NULL");
  GemvBatch<T> b;
  b.trans = trans, b.count = batch, b.alpha = alpha, b.beta = beta;
  b.dims.m = m, b.dims.n = n, b.dims.mv = mv, b.dims.nv = nv;
  b.A.array = A, b.A.ld = lda, b.A.ldv = ldav;
  b.x.array = x, b.x.ld = incx, b.x.ldv = incxv;
  b.y.array = y, b.y.ld = incy, b.y.ldv = incyv;
  if (bsvd_status_t s = check_gemv(b, p, variable, true)) return s;
  return gemv_dispatch(b, p, o, exec, true);
}

} // namespace
} // namespace bsvd::detail

using namespace bsvd::detail;

extern "C" {

#define BSVD_DEFINE_GEMV(p, T, suffix, exec)                                                       \
  bsvd_status_t bsvd_##p##gemv_strided_batched##suffix(                                            \
      bsvd_op_t trans, int m, int n, T alpha, const T *A, int lda, int64_t strideA, const T *x,    \
      int incx, int64_t stridex, T beta, T *y, int incy, int64_t stridey, int batch,               \
      const bsvd_options_t *opts) {                                                                \
    return gemv_strided(int(trans), m, n, val(alpha), cpp(A), lda, strideA, cpp(x), incx, stridex, \
                        val(beta), cpp(y), incy, stridey, batch, opts, exec);                      \
  }                                                                                                \
  bsvd_status_t bsvd_##p##gemv_batched##suffix(                                                    \
      bsvd_op_t trans, int m, int n, T alpha, const T *const *A_array, int lda,                    \
      const T *const *x_array, int incx, T beta, T *const *y_array, int incy, int batch,           \
      const bsvd_options_t *opts) {                                                                \
    return gemv_arrays(int(trans), m, nullptr, n, nullptr, val(alpha), cpp(A_array), lda, nullptr, \
                       cpp(x_array), incx, nullptr, val(beta), cpp(y_array), incy, nullptr, batch, \
                       opts, false, exec);                                                         \
  }                                                                                                \
  bsvd_status_t bsvd_##p##gemv_vbatched##suffix(                                                   \
      bsvd_op_t trans, const int *m, const int *n, T alpha, const T *const *A_array,               \
      const int *lda, const T *const *x_array, const int *incx, T beta, T *const *y_array,         \
      const int *incy, int batch, const bsvd_options_t *opts) {                                    \
    return gemv_arrays(int(trans), 0, m, 0, n, val(alpha), cpp(A_array), 0, lda, cpp(x_array), 0,  \
                       incx, val(beta), cpp(y_array), 0, incy, batch, opts, true, exec);           \
  }
BSVD_DEFINE_GEMV(s, float, , Exec::kBlocking)
BSVD_DEFINE_GEMV(d, double, , Exec::kBlocking)
BSVD_DEFINE_GEMV(c, bsvd_cfloat, , Exec::kBlocking)
BSVD_DEFINE_GEMV(z, bsvd_cdouble, , Exec::kBlocking)
BSVD_DEFINE_GEMV(s, float, _async, Exec::kAsync)
BSVD_DEFINE_GEMV(d, double, _async, Exec::kAsync)
BSVD_DEFINE_GEMV(c, bsvd_cfloat, _async, Exec::kAsync)
BSVD_DEFINE_GEMV(z, bsvd_cdouble, _async, Exec::kAsync)
#undef BSVD_DEFINE_GEMV

} // extern "C"
