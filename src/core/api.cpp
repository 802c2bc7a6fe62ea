// The public entry points: argument validation, backend resolution and
// dispatch. Every public form (strided, pointer array, variable size) is
// turned into one Batch<T> and handed to a backend (backends.hpp).
//
// Error policy (docs/design/README.md, "Two levels of error"): a bad
// argument returns -position and leaves a sentence naming it in
// bsvd_last_error(); nothing is written to the outputs in that case. No
// exception crosses this file's boundary.
#include "api_common.hpp"
#include "split.hpp"
#include "../plan/split.hpp"
#include "backends.hpp"
#include "overrides.hpp"
#include "../plan/plan.hpp"

#include <bsvd/bsvd.h>
#include <bsvd/svd.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <complex>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <thread>
#include <vector>

#ifndef BSVD_VERSION_STRING
#define BSVD_VERSION_STRING "unknown"
#endif

namespace bsvd::detail {

namespace {
thread_local std::string g_error;
}

void set_error(const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  g_error = buf;
}

void clear_error() { g_error.clear(); }

namespace {
constexpr ArgPos kStridedPos{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 0};
constexpr ArgPos kArrayPos{1, 2, 3, 4, 5, 0, 6, 0, 7, 8, 0, 9, 10, 0, 11, 12, 13, 14, 0};
} // namespace

// bad ... check_batch: shared with the hyperbolic entry points (api_common.hpp).

bsvd_status_t bad(int pos, const char *name, const char *fmt, ...) {
  char detail[400];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  set_error("argument %d (%s) %s", pos, name, detail);
  return -pos;
}

// Every field of a full options struct is checked: the table's rows
// (options.hpp) against their ranges, then what joins fields.
bsvd_status_t check_options(const bsvd_options_t &o, int pos) {
  for (int i = 0; i < kOptionCount; ++i) {
    const bsvd_option_info_t &r = option_info(i);
    const double v = option_value(o, i);
    if (!option_accepts(r, v)) {
      const std::string field = std::string("opts->") + r.name;
      return bad(pos, field.c_str(), "= %g is not %s", v, option_range(r).c_str());
    }
  }
  if (o.wcycle_blocks >= 2 && o.ordering != BSVD_ORDERING_ROUND_ROBIN)
    return bad(pos, "opts->wcycle_blocks",
               "= %d needs opts->ordering = BSVD_ORDERING_ROUND_ROBIN (is %d)", o.wcycle_blocks,
               int(o.ordering));
  if (o.device_count < BSVD_DEVICES_ALL)
    return bad(pos, "opts->device_count", "= %d is below BSVD_DEVICES_ALL (-1)", o.device_count);
  if (o.device_count > 0) {
    if (!o.devices)
      return bad(pos, "opts->devices", "is NULL with device_count = %d", o.device_count);
    for (int i = 0; i < o.device_count; ++i) {
      if (o.devices[i] < 0)
        return bad(pos, "opts->devices", "[%d] = %d is negative", i, o.devices[i]);
      for (int j = 0; j < i; ++j)
        if (o.devices[j] == o.devices[i])
          return bad(pos, "opts->devices", "[%d] = %d repeats devices[%d]", i, o.devices[i], j);
    }
  }
  if (!o.workspace && o.workspace_bytes != 0)
    return bad(pos, "opts->workspace", "is NULL but opts->workspace_bytes = %zu",
               o.workspace_bytes);
  return 0;
}

// The bytes of bsvd_options_t as of the version that introduced
// struct_size: what struct_size = 0 (a caller that filled the struct by
// hand) stands for, and the least nonzero struct_size accepted. Fields
// added later lie beyond it and take their defaults for such callers.
constexpr size_t kOptionsBaseBytes = offsetof(bsvd_options_t, struct_size) + sizeof(size_t);

// The caller's options (pos: their argument position) as a full struct of
// this version: the defaults, overwritten by the caller's bytes up to
// struct_size (NULL: the defaults alone); then every field is checked.
bsvd_status_t read_options(const bsvd_options_t *user, int pos, bsvd_options_t &o) {
  bsvd_options_init(&o);
  if (!user) return 0;
  size_t bytes = user->struct_size;
  if (bytes == 0) bytes = kOptionsBaseBytes;
  if (bytes < kOptionsBaseBytes)
    return bad(pos, "opts->struct_size",
               "= %zu is neither 0 nor at least %zu (offsetof(bsvd_options_t, struct_size) + "
               "sizeof(size_t)); set it with bsvd_options_init",
               user->struct_size, kOptionsBaseBytes);
  std::memcpy(static_cast<void *>(&o), user, std::min(bytes, sizeof o));
  o.struct_size = sizeof o;
  return check_options(o, pos);
}

Config make_config(const bsvd_options_t &o) {
  Config c;
#define BSVD_OPTION_COPY(name, ...) c.name = to_config_##name(o.name);
  BSVD_OPTION_TABLE(BSVD_OPTION_COPY)
#undef BSVD_OPTION_COPY
  return c;
}

// The cpu backend's workers: num_threads (0: all cores), at most the cores
// -- more threads than cores only add switching (num_threads = 10000 made a
// call 4x slower) -- and at most one per matrix.
int cpu_threads(const bsvd_options_t &o, int batch) {
  const int hw = std::max(1, int(std::thread::hardware_concurrency()));
  const int t = o.num_threads > 0 ? std::min(o.num_threads, hw) : hw;
  return std::max(1, std::min(t, batch));
}

// Checks the sizes and leading dimensions of every matrix and the pointers
// that a non-empty matrix needs. Works for all three forms.
template <class T> bsvd_status_t check_batch(const Batch<T> &b, const ArgPos &p, bool variable) {
  const bool vec = b.vectors;
  // A uniform strided batch is described by its first matrix; the other
  // forms have per-matrix pointers (and sizes) to check one by one.
  const bool each = !b.dims.uniform() || b.A.array;
  for (int i = 0; i < b.count; ++i) {
    const int m = b.dims.rows(i), n = b.dims.cols(i);
    char nm[32], nn[32], nlda[32], nldu[32], nldv[32];
    if (variable) {
      std::snprintf(nm, sizeof nm, "m[%d]", i);
      std::snprintf(nn, sizeof nn, "n[%d]", i);
      std::snprintf(nlda, sizeof nlda, "lda[%d]", i);
      std::snprintf(nldu, sizeof nldu, "ldu[%d]", i);
      std::snprintf(nldv, sizeof nldv, "ldv[%d]", i);
    } else {
      std::strcpy(nm, "m");
      std::strcpy(nn, "n");
      std::strcpy(nlda, "lda");
      std::strcpy(nldu, "ldu");
      std::strcpy(nldv, "ldv");
    }
    if (m < 0) return bad(p.m, nm, "= %d is negative", m);
    if (n < 0) return bad(p.n, nn, "= %d is negative", n);
    const int lda = b.A.ldm(i);
    if (lda < std::max(1, m))
      return bad(p.lda, nlda, "= %d is less than max(1, m) = %d", lda, std::max(1, m));
    if (vec) {
      const int ldu = b.U.ldm(i), ldv = b.V.ldm(i);
      if (ldu < std::max(1, m))
        return bad(p.ldu, nldu, "= %d is less than max(1, m) = %d", ldu, std::max(1, m));
      if (ldv < std::max(1, n))
        return bad(p.ldv, nldv, "= %d is less than max(1, n) = %d", ldv, std::max(1, n));
    }
    if (m == 0 || n == 0) {
      if (!each) break;
      continue;
    }
    if (!b.A.ptr(i))
      return bad(p.A, variable || b.A.array ? "A_array[i]" : "A", "is NULL for matrix %d", i);
    if (!b.S.ptr(i)) return bad(p.S, b.S.array ? "S_array[i]" : "S", "is NULL for matrix %d", i);
    if (vec && !b.U.ptr(i))
      return bad(p.U, b.U.array ? "U_array[i]" : "U", "is NULL for matrix %d (job = VECTORS)", i);
    if (vec && !b.V.ptr(i))
      return bad(p.V, b.V.array ? "V_array[i]" : "V", "is NULL for matrix %d (job = VECTORS)", i);
    if (!each) break;
  }
  return 0;
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template bsvd_status_t check_batch<T>(const Batch<T> &, const ArgPos &, bool);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

// The cuda backend runs every ordering: the fused kernel reads the tables
// of make_ordering, and the matrices of an ordering the blocked path does
// not implement (it is round-robin only) are solved on the host.
bsvd_backend_t auto_backend_for_host_data(const Config &) {
  return cuda_available() ? BSVD_BACKEND_CUDA : BSVD_BACKEND_CPU;
}

namespace {

// Why the cuda backend is unavailable here (cuda_available() is false).
std::string no_cuda_reason() { return cuda_status_reason(); }

// The _async forms' own checks: the cuda backend, device data.
template <class T>
bsvd_status_t check_async(const Batch<T> &b, const ArgPos &p, const bsvd_options_t &o, int where) {
  if (o.backend == BSVD_BACKEND_CPU)
    return bad(p.opts, "opts->backend",
               "= cpu, but the _async forms run on the cuda backend (use the blocking form)");
  if (!cuda_available()) {
    set_error("the _async forms need the cuda backend, but %s", no_cuda_reason().c_str());
    return BSVD_STATUS_BACKEND_UNAVAILABLE;
  }
  if (where != 1)
    return bad(p.A, b.A.array ? "A_array[0]" : "A",
               "is host memory, but the _async forms take device memory (use the blocking form "
               "for host data)");
  return 0;
}

// A blocking cuda call on host data over the devices of opts (device_count
// != 0): the batch split into ranges of about equal work, one per device,
// each range a call of its own on its device's worker thread.
template <class T> bsvd_status_t solve_on_devices(const Batch<T> &b, const Config &cfg,
                                                  const bsvd_options_t &o, int pos) {
  const int visible = cuda_device_count();
  std::vector<int> devs;
  if (o.device_count == BSVD_DEVICES_ALL) {
    for (int d = 0; d < visible; ++d) devs.push_back(d);
  } else {
    for (int i = 0; i < o.device_count; ++i) {
      if (o.devices[i] >= visible)
        return bad(pos, "opts->devices", "[%d] = %d is not a visible CUDA device (%d visible)", i,
                   o.devices[i], visible);
      devs.push_back(o.devices[i]);
    }
  }
  if (o.workspace)
    return bad(pos, "opts->workspace",
               "is given with opts->device_count = %d: a workspace is one device's memory, and a "
               "call over devices allocates its own on each",
               o.device_count);
#if defined(BSVD_WITH_DISTRIBUTED)
  const plan::Tuning t =
      plan::with_overrides(plan::tuning_table(0, 0), current_overrides()); // (sm_90's)
  if (!b.nplus && plan::distribute_one(plan::shapes_of(b), int(devs.size()), t.dist)) {
    dist::Settings s;
    s.devices = int(devs.size());
    s.pair_cols = t.dist.pair_cols;
    s.inner_sweeps = t.dist.inner_sweeps;
    return cuda_gesvj_distributed(devs, b, cfg, s, o.path);
  }
#endif
  const std::vector<int> starts = plan::split_batch(plan::shapes_of(b), int(devs.size()));
  const int current = cuda_current_device();
  return run_split(starts, [&](int part, int first, int count) {
    const int dev = devs[size_t(part)];
    // The caller's stream belongs to its current device; the others get
    // streams of the library's.
    return cuda_gesvj_on(dev, slice(b, first, count), cfg, dev == current ? o.stream : nullptr,
                         o.path ? o.path + first : nullptr);
  });
}

// The hyperbolic forms' own checks (b.nplus is their nplus argument): the
// signatures, m >= n (HBJ eq. 2.10: a tall or square factor), and what the
// HSVD does not have.
template <class T>
bsvd_status_t check_signatures(const Batch<T> &b, const ArgPos &p, const bsvd_options_t &o) {
  if (!b.nplus) return bad(p.nplus, "nplus", "is NULL");
  for (int i = 0; i < b.count; ++i) {
    const int m = b.dims.rows(i), n = b.dims.cols(i);
    if (m < n)
      return b.dims.uniform()
                 ? bad(p.n, "n", "= %d exceeds m = %d: the hyperbolic SVD needs m >= n", n, m)
                 : bad(p.n, "n", "[%d] = %d exceeds m[%d] = %d: the hyperbolic SVD needs m >= n", i,
                       n, i, m);
    if (b.nplus[i] < 0 || b.nplus[i] > n)
      return bad(p.nplus, "nplus", "[%d] = %d is not in 0 ... n = %d", i, b.nplus[i], n);
  }
  if (o.precondition > 0) {
    set_error("the hyperbolic SVD has no preconditioning (opts->precondition = %d): QR's column "
              "pivoting would permute J, and V0 of the Gram matrix is not J-unitary",
              o.precondition);
    return BSVD_STATUS_NOT_SUPPORTED;
  }
  return 0;
}

// Backend resolution, workspace and the call itself.
template <class T>
bsvd_status_t dispatch(const Batch<T> &b, const ArgPos &p, const bsvd_options_t &o, Exec exec) {
  Config cfg = make_config(o);
  cfg.exec = exec;
  if (p.nplus)
    if (bsvd_status_t s = check_signatures(b, p, o)) return s;

  int arg = 0;
  const int where = cuda_locate(b, &arg);
  if (p.nplus && arg >= p.nplus) ++arg; // (cuda_locate counts the gesvj prototypes)
  if (where < 0)
    return bad(arg ? arg : p.A, "pointer",
               "is in a different memory space (host / device) than A: all matrices of a call must "
               "be in one");
  if (exec == Exec::kAsync)
    if (bsvd_status_t s = check_async(b, p, o, where)) return s;
  bsvd_backend_t backend = o.backend;
  if (backend == BSVD_BACKEND_AUTO)
    backend = where == 1 ? BSVD_BACKEND_CUDA : auto_backend_for_host_data(cfg);
  if (backend == BSVD_BACKEND_CPU && where == 1)
    return bad(p.A, "A", "is device memory, but opts->backend = cpu needs host memory");
  if (backend == BSVD_BACKEND_CUDA && !cuda_available()) {
    set_error("opts->backend = cuda, but %s", no_cuda_reason().c_str());
    return BSVD_STATUS_BACKEND_UNAVAILABLE;
  }

  try {
    if (backend == BSVD_BACKEND_CUDA && where == 0 && exec == Exec::kBlocking &&
        o.device_count != 0)
      return solve_on_devices(b, cfg, o, p.opts);
    // (cuda_gesvj checks the caller's workspace against the plan it makes:
    // planning here as well cost a stream-ordered call a second plan.)
    if (backend == BSVD_BACKEND_CUDA)
      return cuda_gesvj(b, cfg, o.stream, o.workspace, o.workspace_bytes, o.path);
    const int threads = cpu_threads(o, b.count);
    if (b.nplus) return cpu_gehsvj(b, cfg, threads, o.path); // (its own scratch)
    // (cpu_gesvj checks the caller's workspace against its plan, or
    // allocates one)
    return cpu_gesvj(b, cfg, o.workspace, o.workspace_bytes, threads, o.path);
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

// Checks shared by all forms before the batch is described.
// o receives the full options (read_options).
bsvd_status_t check_common(bsvd_job_t job, int batch, const int *info, const bsvd_options_t *opts,
                           const ArgPos &p, bsvd_options_t &o) {
  if (int(job) < 0 || int(job) >= BSVD_JOB_COUNT)
    return bad(p.job, "job", "= %d is neither BSVD_JOB_VALUES nor BSVD_JOB_VECTORS", int(job));
  if (batch < 0) return bad(p.batch, "batch", "= %d is negative", batch);
  if (bsvd_status_t s = read_options(opts, p.opts, o)) return s;
  if (batch > 0 && !info) return bad(p.info, "info", "is NULL");
  return 0;
}

} // namespace

template <class T> bsvd_status_t strided(const ArgPos &p, bsvd_job_t job, int m, int n,
                                         const int *nplus, const T *A, int lda, int64_t sA,
                                         real_of_t<T> *S, int64_t sS, T *U, int ldu, int64_t sU,
                                         T *V, int ldv, int64_t sV, int *info, int *sweeps,
                                         int batch, const bsvd_options_t *opts, Exec exec) {
  clear_error();
  bsvd_options_t o;
  if (bsvd_status_t s = check_common(job, batch, info, opts, p, o)) return s;
  Batch<T> b =
      strided_batch(job, m, n, A, lda, sA, S, sS, U, ldu, sU, V, ldv, sV, info, sweeps, batch);
  b.nplus = nplus;
  if (bsvd_status_t s = check_batch(b, p, false)) return s;
  const int64_t k = std::min(m, n);
  if (batch > 1 && m > 0 && n > 0) {
    if (sA < int64_t(lda) * n)
      return bad(p.strideA, "strideA", "= %lld is less than lda * n = %lld", (long long)sA,
                 (long long)lda * n);
    if (sS < k)
      return bad(p.strideS, "strideS", "= %lld is less than min(m, n) = %lld", (long long)sS,
                 (long long)k);
    if (b.vectors && sU < int64_t(ldu) * k)
      return bad(p.strideU, "strideU", "= %lld is less than ldu * min(m, n) = %lld", (long long)sU,
                 (long long)ldu * k);
    if (b.vectors && sV < int64_t(ldv) * k)
      return bad(p.strideV, "strideV", "= %lld is less than ldv * min(m, n) = %lld", (long long)sV,
                 (long long)ldv * k);
  }
  if (batch == 0) return 0;
  return dispatch(b, p, o, exec);
}

template <class T> bsvd_status_t arrays(const ArgPos &p, bsvd_job_t job, int m, const int *mv,
                                        int n, const int *nv, const int *nplus, const T *const *A,
                                        int lda, const int *ldav, real_of_t<T> *const *S,
                                        T *const *U, int ldu, const int *lduv, T *const *V, int ldv,
                                        const int *ldvv, int *info, int *sweeps, int batch,
                                        const bsvd_options_t *opts, bool variable, Exec exec) {
  clear_error();
  bsvd_options_t o;
  if (bsvd_status_t s = check_common(job, batch, info, opts, p, o)) return s;
  if (batch == 0) return 0;
  const bool vec = job == BSVD_JOB_VECTORS;
  if (variable) {
    if (!mv) return bad(p.m, "m", "is NULL");
    if (!nv) return bad(p.n, "n", "is NULL");
    if (!ldav) return bad(p.lda, "lda", "is NULL");
    if (vec && !lduv) return bad(p.ldu, "ldu", "is NULL (job = VECTORS)");
    if (vec && !ldvv) return bad(p.ldv, "ldv", "is NULL (job = VECTORS)");
  }
  if (!A) return bad(p.A, "A_array", "is NULL");
  if (!S) return bad(p.S, "S_array", "is NULL");
  if (vec && !U) return bad(p.U, "U_array", "is NULL (job = VECTORS)");
  if (vec && !V) return bad(p.V, "V_array", "is NULL (job = VECTORS)");
  Batch<T> b;
  b.vectors = vec;
  b.count = batch;
  b.dims.m = m;
  b.dims.n = n;
  b.dims.mv = mv;
  b.dims.nv = nv;
  b.A.array = A;
  b.A.ld = lda;
  b.A.ldv = ldav;
  b.S.array = S;
  if (vec) {
    b.U.array = U;
    b.U.ld = ldu;
    b.U.ldv = lduv;
    b.V.array = V;
    b.V.ld = ldv;
    b.V.ldv = ldvv;
  }
  b.info = info;
  b.sweeps = sweeps;
  b.nplus = nplus;
  if (bsvd_status_t s = check_batch(b, p, variable)) return s;
  return dispatch(b, p, o, exec);
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template bsvd_status_t strided<T>(const ArgPos &, bsvd_job_t, int, int, const int *, const T *,  \
                                    int, int64_t, real_of_t<T> *, int64_t, T *, int, int64_t, T *, \
                                    int, int64_t, int *, int *, int, const bsvd_options_t *,       \
                                    Exec);                                                         \
  template bsvd_status_t arrays<T>(                                                                \
      const ArgPos &, bsvd_job_t, int, const int *, int, const int *, const int *,                 \
      const T *const *, int, const int *, real_of_t<T> *const *, T *const *, int, const int *,     \
      T *const *, int, const int *, int *, int *, int, const bsvd_options_t *, bool, Exec);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail

using namespace bsvd::detail;

extern "C" {

void bsvd_options_init(bsvd_options_t *o) {
  if (!o) return;
  std::memset(o, 0, sizeof *o);
#define BSVD_OPTION_INIT(name, type, kind, lo, hi, init, ...) o->name = type(init);
  BSVD_OPTION_TABLE(BSVD_OPTION_INIT)
#undef BSVD_OPTION_INIT
  o->struct_size = sizeof *o;
}

// bsvd_status_string and the other names: names.cpp.

const char *bsvd_last_error(void) { return g_error.c_str(); }

int bsvd_cuda_available(void) {
  try {
    return cuda_available() ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

const char *bsvd_cuda_status(void) {
  thread_local std::string text;
  try {
    text = cuda_status_reason();
  } catch (...) {
    text = "the CUDA status could not be determined";
  }
  return text.c_str();
}

const char *bsvd_version(void) { return BSVD_VERSION_STRING; }

#define BSVD_DEFINE_GESVJ(p, T, R)                                                                 \
  bsvd_status_t bsvd_##p##gesvj_strided_batched(                                                   \
      bsvd_job_t job, int m, int n, const T *A, int lda, int64_t strideA, R *S, int64_t strideS,   \
      T *U, int ldu, int64_t strideU, T *V, int ldv, int64_t strideV, int *info, int *sweeps,      \
      int batch, const bsvd_options_t *opts) {                                                     \
    return strided(kStridedPos, job, m, n, nullptr, cpp(A), lda, strideA, S, strideS, cpp(U), ldu, \
                   strideU, cpp(V), ldv, strideV, info, sweeps, batch, opts);                      \
  }                                                                                                \
  bsvd_status_t bsvd_##p##gesvj_batched(bsvd_job_t job, int m, int n, const T *const *A_array,     \
                                        int lda, R *const *S_array, T *const *U_array, int ldu,    \
                                        T *const *V_array, int ldv, int *info, int *sweeps,        \
                                        int batch, const bsvd_options_t *opts) {                   \
    return arrays(kArrayPos, job, m, nullptr, n, nullptr, nullptr, cpp(A_array), lda, nullptr,     \
                  S_array, cpp(U_array), ldu, nullptr, cpp(V_array), ldv, nullptr, info, sweeps,   \
                  batch, opts, false);                                                             \
  }                                                                                                \
  bsvd_status_t bsvd_##p##gesvj_vbatched(                                                          \
      bsvd_job_t job, const int *m, const int *n, const T *const *A_array, const int *lda,         \
      R *const *S_array, T *const *U_array, const int *ldu, T *const *V_array, const int *ldv,     \
      int *info, int *sweeps, int batch, const bsvd_options_t *opts) {                             \
    return arrays(kArrayPos, job, 0, m, 0, n, nullptr, cpp(A_array), 0, lda, S_array,              \
                  cpp(U_array), 0, ldu, cpp(V_array), 0, ldv, info, sweeps, batch, opts, true);    \
  }

BSVD_DEFINE_GESVJ(s, float, float)
BSVD_DEFINE_GESVJ(d, double, double)
BSVD_DEFINE_GESVJ(c, bsvd_cfloat, float)
BSVD_DEFINE_GESVJ(z, bsvd_cdouble, double)
#undef BSVD_DEFINE_GESVJ

#define BSVD_DEFINE_GESVJ_ASYNC(p, T, R)                                                           \
  bsvd_status_t bsvd_##p##gesvj_strided_batched_async(                                             \
      bsvd_job_t job, int m, int n, const T *A, int lda, int64_t strideA, R *S, int64_t strideS,   \
      T *U, int ldu, int64_t strideU, T *V, int ldv, int64_t strideV, int *info, int *sweeps,      \
      int batch, const bsvd_options_t *opts) {                                                     \
    return strided(kStridedPos, job, m, n, nullptr, cpp(A), lda, strideA, S, strideS, cpp(U), ldu, \
                   strideU, cpp(V), ldv, strideV, info, sweeps, batch, opts, Exec::kAsync);        \
  }                                                                                                \
  bsvd_status_t bsvd_##p##gesvj_batched_async(                                                     \
      bsvd_job_t job, int m, int n, const T *const *A_array, int lda, R *const *S_array,           \
      T *const *U_array, int ldu, T *const *V_array, int ldv, int *info, int *sweeps, int batch,   \
      const bsvd_options_t *opts) {                                                                \
    return arrays(kArrayPos, job, m, nullptr, n, nullptr, nullptr, cpp(A_array), lda, nullptr,     \
                  S_array, cpp(U_array), ldu, nullptr, cpp(V_array), ldv, nullptr, info, sweeps,   \
                  batch, opts, false, Exec::kAsync);                                               \
  }                                                                                                \
  bsvd_status_t bsvd_##p##gesvj_vbatched_async(                                                    \
      bsvd_job_t job, const int *m, const int *n, const T *const *A_array, const int *lda,         \
      R *const *S_array, T *const *U_array, const int *ldu, T *const *V_array, const int *ldv,     \
      int *info, int *sweeps, int batch, const bsvd_options_t *opts) {                             \
    return arrays(kArrayPos, job, 0, m, 0, n, nullptr, cpp(A_array), 0, lda, S_array,              \
                  cpp(U_array), 0, ldu, cpp(V_array), 0, ldv, info, sweeps, batch, opts, true,     \
                  Exec::kAsync);                                                                   \
  }

BSVD_DEFINE_GESVJ_ASYNC(s, float, float)
BSVD_DEFINE_GESVJ_ASYNC(d, double, double)
BSVD_DEFINE_GESVJ_ASYNC(c, bsvd_cfloat, float)
BSVD_DEFINE_GESVJ_ASYNC(z, bsvd_cdouble, double)
#undef BSVD_DEFINE_GESVJ_ASYNC

} // extern "C"

// ---- C++ API ----------------------------------------------------------------
namespace bsvd {

template <class T>
bsvd_status_t gesvj_strided_batched(Job job, int m, int n, const T *A, int lda, int64_t strideA,
                                    real_t<T> *S, int64_t strideS, T *U, int ldu, int64_t strideU,
                                    T *V, int ldv, int64_t strideV, int *info, int *sweeps,
                                    int batch, const bsvd_options_t &opts) {
  return detail::strided(detail::kStridedPos, bsvd_job_t(job), m, n, nullptr, A, lda, strideA, S,
                         strideS, U, ldu, strideU, V, ldv, strideV, info, sweeps, batch, &opts);
}

template <class T> bsvd_status_t gesvj_batched(Job job, int m, int n, const T *const *A_array,
                                               int lda, real_t<T> *const *S_array,
                                               T *const *U_array, int ldu, T *const *V_array,
                                               int ldv, int *info, int *sweeps, int batch,
                                               const bsvd_options_t &opts) {
  return detail::arrays(detail::kArrayPos, bsvd_job_t(job), m, nullptr, n, nullptr, nullptr,
                        A_array, lda, nullptr, S_array, U_array, ldu, nullptr, V_array, ldv,
                        nullptr, info, sweeps, batch, &opts, false);
}

template <class T>
bsvd_status_t gesvj_vbatched(Job job, const int *m, const int *n, const T *const *A_array,
                             const int *lda, real_t<T> *const *S_array, T *const *U_array,
                             const int *ldu, T *const *V_array, const int *ldv, int *info,
                             int *sweeps, int batch, const bsvd_options_t &opts) {
  return detail::arrays(detail::kArrayPos, bsvd_job_t(job), 0, m, 0, n, nullptr, A_array, 0, lda,
                        S_array, U_array, 0, ldu, V_array, 0, ldv, info, sweeps, batch, &opts,
                        true);
}

template <class T>
bsvd_status_t gesvj_strided_batched_async(Job job, int m, int n, const T *A, int lda,
                                          int64_t strideA, real_t<T> *S, int64_t strideS, T *U,
                                          int ldu, int64_t strideU, T *V, int ldv, int64_t strideV,
                                          int *info, int *sweeps, int batch,
                                          const bsvd_options_t &opts) {
  return detail::strided(detail::kStridedPos, bsvd_job_t(job), m, n, nullptr, A, lda, strideA, S,
                         strideS, U, ldu, strideU, V, ldv, strideV, info, sweeps, batch, &opts,
                         detail::Exec::kAsync);
}

template <class T> bsvd_status_t gesvj_batched_async(Job job, int m, int n, const T *const *A_array,
                                                     int lda, real_t<T> *const *S_array,
                                                     T *const *U_array, int ldu, T *const *V_array,
                                                     int ldv, int *info, int *sweeps, int batch,
                                                     const bsvd_options_t &opts) {
  return detail::arrays(detail::kArrayPos, bsvd_job_t(job), m, nullptr, n, nullptr, nullptr,
                        A_array, lda, nullptr, S_array, U_array, ldu, nullptr, V_array, ldv,
                        nullptr, info, sweeps, batch, &opts, false, detail::Exec::kAsync);
}

template <class T>
bsvd_status_t gesvj_vbatched_async(Job job, const int *m, const int *n, const T *const *A_array,
                                   const int *lda, real_t<T> *const *S_array, T *const *U_array,
                                   const int *ldu, T *const *V_array, const int *ldv, int *info,
                                   int *sweeps, int batch, const bsvd_options_t &opts) {
  return detail::arrays(detail::kArrayPos, bsvd_job_t(job), 0, m, 0, n, nullptr, A_array, 0, lda,
                        S_array, U_array, 0, ldu, V_array, 0, ldv, info, sweeps, batch, &opts, true,
                        detail::Exec::kAsync);
}

template <class T> bsvd_status_t svd(Job job, int m, int n, const T *A, int batch, Result<T> &out,
                                     const bsvd_options_t &opts) {
  detail::clear_error();
  if (m < 0) return detail::bad(2, "m", "= %d is negative", m);
  if (n < 0) return detail::bad(3, "n", "= %d is negative", n);
  if (batch < 0) return detail::bad(5, "batch", "= %d is negative", batch);
  try {
    const int k = std::min(m, n);
    out = Result<T>();
    out.m = m;
    out.n = n;
    out.k = k;
    out.batch = batch;
    out.S.assign(size_t(batch) * k, real_t<T>(0));
    if (job == Job::Vectors) {
      out.U.assign(size_t(batch) * m * k, T(0));
      out.V.assign(size_t(batch) * n * k, T(0));
    }
    out.info.assign(batch, 0);
    out.sweeps.assign(batch, 0);
    out.path.assign(batch, BSVD_PATH_TRIVIAL);
    bsvd_options_t o = opts;
    o.path = out.path.data();
    const bool vec = job == Job::Vectors;
    return gesvj_strided_batched<T>(job, m, n, A, std::max(1, m), int64_t(m) * n, out.S.data(), k,
                                    vec ? out.U.data() : nullptr, std::max(1, m), int64_t(m) * k,
                                    vec ? out.V.data() : nullptr, std::max(1, n), int64_t(n) * k,
                                    out.info.data(), out.sweeps.data(), batch, o);
  } catch (const std::bad_alloc &) {
    detail::set_error("could not allocate the outputs of %d matrices", batch);
    return BSVD_STATUS_ALLOC_FAILED;
  }
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template bsvd_status_t gesvj_strided_batched<T>(                                                 \
      Job, int, int, const T *, int, int64_t, real_t<T> *, int64_t, T *, int, int64_t, T *, int,   \
      int64_t, int *, int *, int, const bsvd_options_t &);                                         \
  template bsvd_status_t gesvj_batched<T>(Job, int, int, const T *const *, int,                    \
                                          real_t<T> *const *, T *const *, int, T *const *, int,    \
                                          int *, int *, int, const bsvd_options_t &);              \
  template bsvd_status_t gesvj_vbatched<T>(Job, const int *, const int *, const T *const *,        \
                                           const int *, real_t<T> *const *, T *const *,            \
                                           const int *, T *const *, const int *, int *, int *,     \
                                           int, const bsvd_options_t &);                           \
  template bsvd_status_t gesvj_strided_batched_async<T>(                                           \
      Job, int, int, const T *, int, int64_t, real_t<T> *, int64_t, T *, int, int64_t, T *, int,   \
      int64_t, int *, int *, int, const bsvd_options_t &);                                         \
  template bsvd_status_t gesvj_batched_async<T>(Job, int, int, const T *const *, int,              \
                                                real_t<T> *const *, T *const *, int, T *const *,   \
                                                int, int *, int *, int, const bsvd_options_t &);   \
  template bsvd_status_t gesvj_vbatched_async<T>(Job, const int *, const int *, const T *const *,  \
                                                 const int *, real_t<T> *const *, T *const *,      \
                                                 const int *, T *const *, const int *, int *,      \
                                                 int *, int, const bsvd_options_t &);              \
  template bsvd_status_t svd<T>(Job, int, int, const T *, int, Result<T> &, const bsvd_options_t &);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd
