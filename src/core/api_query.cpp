// The queries beside the calls (bsvd.h): the workspace a call needs
// (bsvd_workspace_size and its _v, _async and _hsvd forms) and its plan as
// text (bsvd_explain). Each describes the call's shapes as api.cpp's forms
// do and asks the backend that the call would take.
#include "api_common.hpp"
#include "backends.hpp"
#include "../plan/plan.hpp"

#include <bsvd/bsvd.h>

#include <complex>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace bsvd::detail {
namespace {

// exec kAsync: the _async forms' workspace (device data on the cuda
// backend, no staging of host data).
template <class T>
size_t workspace_for(const Batch<T> &b, const bsvd_options_t &o, Exec exec = Exec::kBlocking) {
  Config cfg = make_config(o);
  cfg.exec = exec;
  bsvd_backend_t backend = o.backend;
  if (backend == BSVD_BACKEND_AUTO)
    backend = exec == Exec::kAsync ? BSVD_BACKEND_CUDA : auto_backend_for_host_data(cfg);
  if (backend == BSVD_BACKEND_CUDA) return cuda_workspace_bytes(b, cfg);
  if (b.nplus) return 0; // (the cpu's HSVD allocates its own scratch)
  return cpu_workspace_bytes(b, cfg, cpu_threads(o, b.count));
}

// Positions (1-based) of the arguments of bsvd_workspace_size and
// bsvd_workspace_size_v: precision, job, m, n, batch, opts, bytes.
struct WsPos {
  int precision = 1, job = 2, m = 3, n = 4, batch = 5, opts = 6, bytes = 7;
};
constexpr WsPos kWsPos{};

// The shared checks of the two queries (the workspace and the plan): the
// job, batch and sizes, and the options into o; b describes the shapes.
template <class T> bsvd_status_t query_shapes(bsvd_job_t job, int m, const int *mv, int n,
                                              const int *nv, int batch, const bsvd_options_t *opts,
                                              bsvd_options_t &o, Batch<T> &b) {
  if (int(job) < 0 || int(job) >= BSVD_JOB_COUNT)
    return bad(kWsPos.job, "job", "= %d is neither BSVD_JOB_VALUES nor BSVD_JOB_VECTORS", int(job));
  if (batch < 0) return bad(kWsPos.batch, "batch", "= %d is negative", batch);
  if (bsvd_status_t s = read_options(opts, kWsPos.opts, o)) return s;
  for (int i = 0; i < (mv ? batch : 1); ++i) {
    if ((mv ? mv[i] : m) < 0) return bad(kWsPos.m, "m", "is negative for matrix %d", i);
    if ((nv ? nv[i] : n) < 0) return bad(kWsPos.n, "n", "is negative for matrix %d", i);
  }
  b.vectors = job == BSVD_JOB_VECTORS;
  b.count = batch;
  b.dims.m = m;
  b.dims.n = n;
  b.dims.mv = mv;
  b.dims.nv = nv;
  return 0;
}

// hyperbolic: the HSVD forms' workspace (the plan depends on whether the
// call has signatures, not on their values).
template <class T> bsvd_status_t workspace_query(bsvd_job_t job, int m, const int *mv, int n,
                                                 const int *nv, int batch,
                                                 const bsvd_options_t *opts, size_t *bytes,
                                                 Exec exec, bool hyperbolic) {
  bsvd_options_t o;
  Batch<T> b;
  if (bsvd_status_t s = query_shapes(job, m, mv, n, nv, batch, opts, o, b)) return s;
  if (!bytes) return bad(kWsPos.bytes, "bytes", "is NULL");
  std::vector<int> signatures(hyperbolic ? size_t(batch) : 0, 0);
  if (hyperbolic) b.nplus = signatures.data();
  try {
    *bytes = batch == 0 ? 0 : workspace_for(b, o, exec);
  } catch (...) {
    set_error("internal error in the workspace query");
    return BSVD_STATUS_INTERNAL_ERROR;
  }
  return 0;
}

// The plan of the call as text, resolved as the call with host-resident
// data would resolve it.
template <class T> std::string explain_for(const Batch<T> &b, const bsvd_options_t &o) {
  const Config cfg = make_config(o);
  bsvd_backend_t backend = o.backend;
  if (backend == BSVD_BACKEND_AUTO) backend = auto_backend_for_host_data(cfg);
  if (backend == BSVD_BACKEND_CUDA && !cuda_available())
    return "opts->backend = cuda, but " + cuda_status_reason() +
           ": the call would return \"backend unavailable\"\n";
  if (backend == BSVD_BACKEND_CUDA) return cuda_explain(b, cfg, 0);
  plan::Plan p = plan::cpu_plan(plan::shapes_of(b), cfg);
  p.workspace_bytes = cpu_workspace_bytes(b, cfg, cpu_threads(o, b.count));
  // One workspace serves both groups (each worker's slice fits either solver).
  for (plan::Group &g : p.groups) g.workspace_bytes = p.workspace_bytes;
  char line[96];
  std::snprintf(line, sizeof line, "backend cpu, %d threads\n", cpu_threads(o, b.count));
  return line + plan::explain(p);
}

// Position of bsvd_explain's argument buf (after the shapes and options).
constexpr int kExplainBuf = 7;

template <class T> bsvd_status_t explain_query(bsvd_job_t job, int m, const int *mv, int n,
                                               const int *nv, int batch, const bsvd_options_t *opts,
                                               char *buf, size_t len, size_t *needed) {
  bsvd_options_t o;
  Batch<T> b;
  if (bsvd_status_t s = query_shapes(job, m, mv, n, nv, batch, opts, o, b)) return s;
  if (!buf && len > 0) return bad(kExplainBuf, "buf", "is NULL but len = %zu", len);
  try {
    const std::string text = explain_for(b, o);
    if (needed) *needed = text.size() + 1;
    if (len > 0) {
      const size_t k = std::min(len - 1, text.size());
      std::memcpy(buf, text.data(), k);
      buf[k] = '\0';
    }
  } catch (const std::bad_alloc &) {
    set_error("host allocation failed");
    return BSVD_STATUS_ALLOC_FAILED;
  } catch (...) {
    set_error("internal error in the plan query");
    return BSVD_STATUS_INTERNAL_ERROR;
  }
  return 0;
}

// Dispatch by the precision letter (argument 1 of both queries).
template <class F> bsvd_status_t by_precision(char precision, F &&f) {
  switch (precision) {
  case 's':
  case 'S': return f(float());
  case 'd':
  case 'D': return f(double());
  case 'c':
  case 'C': return f(std::complex<float>());
  case 'z':
  case 'Z': return f(std::complex<double>());
  default: return bad(kWsPos.precision, "precision", "= '%c' is not one of s, d, c, z", precision);
  }
}

bsvd_status_t workspace_any(char precision, bsvd_job_t job, int m, const int *mv, int n,
                            const int *nv, int batch, const bsvd_options_t *opts, size_t *bytes,
                            Exec exec = Exec::kBlocking, bool hyperbolic = false) {
  clear_error();
  return by_precision(precision, [&](auto t) {
    return workspace_query<decltype(t)>(job, m, mv, n, nv, batch, opts, bytes, exec, hyperbolic);
  });
}

} // namespace
} // namespace bsvd::detail

using namespace bsvd::detail;

extern "C" {

bsvd_status_t bsvd_workspace_size(char precision, bsvd_job_t job, int m, int n, int batch,
                                  const bsvd_options_t *opts, size_t *bytes) {
  return workspace_any(precision, job, m, nullptr, n, nullptr, batch, opts, bytes);
}

bsvd_status_t bsvd_workspace_size_v(char precision, bsvd_job_t job, const int *m, const int *n,
                                    int batch, const bsvd_options_t *opts, size_t *bytes) {
  if (batch > 0 && !m) return bad(kWsPos.m, "m", "is NULL");
  if (batch > 0 && !n) return bad(kWsPos.n, "n", "is NULL");
  if (batch == 0) {
    if (!bytes) return bad(kWsPos.bytes, "bytes", "is NULL");
    *bytes = 0;
    return 0;
  }
  return workspace_any(precision, job, 0, m, 0, n, batch, opts, bytes);
}

bsvd_status_t bsvd_workspace_size_async(char precision, bsvd_job_t job, int m, int n, int batch,
                                        const bsvd_options_t *opts, size_t *bytes) {
  return workspace_any(precision, job, m, nullptr, n, nullptr, batch, opts, bytes, Exec::kAsync);
}

bsvd_status_t bsvd_workspace_size_async_v(char precision, bsvd_job_t job, const int *m,
                                          const int *n, int batch, const bsvd_options_t *opts,
                                          size_t *bytes) {
  clear_error();
  if (batch > 0 && !m) return bad(kWsPos.m, "m", "is NULL");
  if (batch > 0 && !n) return bad(kWsPos.n, "n", "is NULL");
  return workspace_any(precision, job, 0, m, 0, n, batch, opts, bytes, Exec::kAsync);
}

bsvd_status_t bsvd_workspace_size_hsvd(char precision, bsvd_job_t job, int m, int n, int batch,
                                       const bsvd_options_t *opts, size_t *bytes) {
  return workspace_any(precision, job, m, nullptr, n, nullptr, batch, opts, bytes, Exec::kBlocking,
                       true);
}

bsvd_status_t bsvd_workspace_size_hsvd_v(char precision, bsvd_job_t job, const int *m, const int *n,
                                         int batch, const bsvd_options_t *opts, size_t *bytes) {
  clear_error();
  if (batch > 0 && !m) return bad(kWsPos.m, "m", "is NULL");
  if (batch > 0 && !n) return bad(kWsPos.n, "n", "is NULL");
  return workspace_any(precision, job, 0, m, 0, n, batch, opts, bytes, Exec::kBlocking, true);
}

bsvd_status_t bsvd_explain(char precision, bsvd_job_t job, int m, int n, int batch,
                           const bsvd_options_t *opts, char *buf, size_t len, size_t *needed) {
  clear_error();
  return by_precision(precision, [&](auto t) {
    return explain_query<decltype(t)>(job, m, nullptr, n, nullptr, batch, opts, buf, len, needed);
  });
}

bsvd_status_t bsvd_explain_v(char precision, bsvd_job_t job, const int *m, const int *n, int batch,
                             const bsvd_options_t *opts, char *buf, size_t len, size_t *needed) {
  clear_error();
  if (batch > 0 && !m) return bad(kWsPos.m, "m", "is NULL");
  if (batch > 0 && !n) return bad(kWsPos.n, "n", "is NULL");
  return by_precision(precision, [&](auto t) {
    return explain_query<decltype(t)>(job, 0, m, 0, n, batch, opts, buf, len, needed);
  });
}

} // extern "C"
