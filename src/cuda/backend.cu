// The cuda backend (declared in src/core/backends.hpp) executes a call's
// plan (src/plan/, facts.hpp): it lays out the workspace (the staging of
// the data, then one region per group; call.hpp), describes the data to
// the kernels (device data here: its pointer arrays; host data in
// host_data.cu: packed into the staging region and back, or streamed in
// chunks), runs each group as its path's operation (operation.hpp) on the
// call's stream or the side stream beside the blocked path, solves the CPU
// group on the host, and reports each matrix's path. It decides nothing
// itself.
#include "../core/backends.hpp"
#include "../core/overrides.hpp"
#include "blocked/op.hpp"
#include "common/device_info.hpp"
#include "common/graph_call.hpp"
#include "common/handles.hpp"
#include "common/side_stream.hpp"
#include "common/upload.hpp"
#include "facts.hpp"
#include "fused/op.hpp"
#include "tiny/op.hpp"
#include "qr/op.hpp"
#include "call.hpp"
#include "host_data.hpp"
#include "staging.hpp"

#include <algorithm>
#include <complex>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

namespace bsvd::detail {

namespace {

using plan::Group;
using plan::Route;
using namespace exec;

// ---- device-resident data --------------------------------------------------
// The CPU group's matrices, copied to the host ahead of the GPU's work on
// the stream (so that the CPU works while the GPU does); `copied` records
// when they have arrived.
template <class T> struct CpuPart {
  using R = real_of_t<T>;
  cuda::HostSubBatch<T> h;
  std::vector<std::vector<T>> A, U, V;
  std::vector<std::vector<R>> S;
  EventGuard copied;
};

template <class T> bsvd_status_t fetch_cpu_part(const Group &g, const Batch<T> &batch,
                                                CpuPart<T> &c, cudaStream_t stream) {
  const size_t nc = g.index.size();
  c.A.resize(nc);
  c.S.resize(nc);
  c.U.resize(nc);
  c.V.resize(nc);
  for (size_t i = 0; i < nc; ++i) {
    const int b = g.index[i];
    const int m = g.m[i], n = g.n[i], k = std::min(m, n);
    c.A[i].resize(size_t(m) * n);
    c.S[i].resize(size_t(k));
    if (batch.vectors) {
      c.U[i].resize(size_t(m) * k);
      c.V[i].resize(size_t(n) * k);
    }
    BSVD_CUDA_TRY(cudaMemcpy2DAsync(c.A[i].data(), size_t(m) * sizeof(T), batch.A.ptr(b),
                                    size_t(batch.A.ldm(b)) * sizeof(T), size_t(m) * sizeof(T), n,
                                    cudaMemcpyDeviceToHost, stream));
    c.h.A.push_back(c.A[i].data());
    c.h.S.push_back(c.S[i].data());
    c.h.U.push_back(batch.vectors ? c.U[i].data() : nullptr);
    c.h.V.push_back(batch.vectors ? c.V[i].data() : nullptr);
    c.h.m.push_back(m);
    c.h.n.push_back(n);
    c.h.lda.push_back(std::max(m, 1));
    c.h.ldu.push_back(std::max(m, 1));
    c.h.ldv.push_back(std::max(n, 1));
    if (batch.nplus) c.h.nplus.push_back(batch.nplus[b]);
  }
  c.h.describe(batch.vectors);
  BSVD_CUDA_TRY(cudaEventCreateWithFlags(&c.copied.ev, cudaEventDisableTiming));
  BSVD_CUDA_TRY(cudaEventRecord(c.copied.ev, stream));
  return BSVD_STATUS_SUCCESS;
}

// Solves the CPU part once its inputs are on the host and copies its
// results back to the caller's device memory (on the stream).
template <class T> bsvd_status_t solve_cpu_part(const Group &g, const Batch<T> &batch,
                                                const Config &cfg, CpuPart<T> &c,
                                                cudaStream_t stream) {
  using R = real_of_t<T>;
  BSVD_CUDA_TRY(cudaEventSynchronize(c.copied.ev));
  const bsvd_status_t st = cuda::solve_on_cpu(c.h.batch, cfg, c.h.path.data());
  if (st != BSVD_STATUS_SUCCESS) {
    cudaStreamSynchronize(stream);
    return st;
  }
  for (size_t i = 0; i < g.index.size(); ++i) {
    const int b = g.index[i];
    const int m = c.h.m[i], n = c.h.n[i], k = std::min(m, n);
    BSVD_CUDA_TRY(cudaMemcpyAsync(batch.S.ptr(b), c.S[i].data(), size_t(k) * sizeof(R),
                                  cudaMemcpyHostToDevice, stream));
    if (batch.vectors && k > 0) {
      BSVD_CUDA_TRY(cudaMemcpy2DAsync(batch.U.ptr(b), size_t(batch.U.ldm(b)) * sizeof(T),
                                      c.U[i].data(), size_t(m) * sizeof(T), size_t(m) * sizeof(T),
                                      k, cudaMemcpyHostToDevice, stream));
      BSVD_CUDA_TRY(cudaMemcpy2DAsync(batch.V.ptr(b), size_t(batch.V.ldm(b)) * sizeof(T),
                                      c.V[i].data(), size_t(n) * sizeof(T), size_t(n) * sizeof(T),
                                      k, cudaMemcpyHostToDevice, stream));
    }
    BSVD_CUDA_TRY(
        cudaMemcpyAsync(batch.info + b, &c.h.info[i], sizeof(int), cudaMemcpyHostToDevice, stream));
    if (batch.sweeps)
      BSVD_CUDA_TRY(cudaMemcpyAsync(batch.sweeps + b, &c.h.sweeps[i], sizeof(int),
                                    cudaMemcpyHostToDevice, stream));
  }
  return BSVD_STATUS_SUCCESS;
}

// Device data: the GPU groups on the caller's batch (its pointer arrays
// and the HSVD's signatures uploaded to the workspace when it has them),
// enqueued on the stream.
template <class T> bsvd_status_t enqueue_gpu_groups(const Batch<T> &batch, const plan::Plan &p,
                                                    const CallLayout &L, cudaStream_t stream,
                                                    unsigned char *ws) {
  if (L.ngpu == 0) return BSVD_STATUS_SUCCESS;
  Batch<T> kb = batch;
  if (L.needs_arrays)
    BSVD_TRY_STATUS(cuda::upload_arrays(batch, ws + L.off_arrays, L.bytes_arrays, kb, stream));
  if (batch.nplus) {
    int *dnplus = reinterpret_cast<int *>(ws + L.off_nplus);
    BSVD_CUDA_TRY(
        cuda::upload_bytes(dnplus, batch.nplus, size_t(batch.count) * sizeof(int), stream));
    kb.nplus = dnplus;
  }
  return run_groups(p, L, kb, batch, ws, stream);
}

template <class T> bsvd_status_t run_device_data(const Batch<T> &batch, const plan::Plan &p,
                                                 const CallLayout &L, cudaStream_t stream,
                                                 unsigned char *ws, int *path) {
  const Group *cg = cpu_group(p);
  CpuPart<T> cpu;
  if (cg) BSVD_TRY_STATUS(fetch_cpu_part(*cg, batch, cpu, stream));
  BSVD_TRY_STATUS(enqueue_gpu_groups(batch, p, L, stream, ws));
  if (cg) BSVD_TRY_STATUS(solve_cpu_part(*cg, batch, p.cfg, cpu, stream));
  BSVD_CUDA_TRY(cudaStreamSynchronize(stream));
  if (path) {
    std::vector<int> info;
    if (L.ngpu > 0) {
      info.resize(size_t(batch.count));
      BSVD_CUDA_TRY(cudaMemcpy(info.data(), batch.info, size_t(batch.count) * sizeof(int),
                               cudaMemcpyDeviceToHost));
    }
    report_paths(
        p, [&](int b) { return info[size_t(b)]; }, cpu.h.path, path);
  }
  return BSVD_STATUS_SUCCESS;
}

// Makes the cuBLAS and cuSOLVER handles of the plan's groups before the
// call's work is enqueued: an uncaptured _async call with a device loop is
// captured into a graph of its own (enqueue_device_data), where making a
// handle is an exception to the capture's rules (handles.hpp). A failure
// is reported, with the library's status, by the operation that needs the
// handle (the blocked path's cuBLAS Gram stage falls back to bsvd's own).
void prepare_handles(const plan::Plan &p) {
  bool blas = false, solver = false;
  for (const Group &g : p.groups) {
    solver = solver || g.route == Route::kGram;
    blas = blas || g.route == Route::kGram ||
           std::find(g.blocked.cublas.begin(), g.blocked.cublas.end(), 1) != g.blocked.cublas.end();
  }
  cublasHandle_t bh = nullptr;
  cusolverDnHandle_t sh = nullptr;
  if (blas) cuda::cublas_handle(&bh);
  if (solver) cuda::cusolver_handle(&sh);
}

// ---- stream-ordered calls (Exec::kAsync) -------------------------------------
// What the _async forms take: device data, and a plan with no matrix on the
// host (the api layer has checked the data; this is the plan's half).
bsvd_status_t check_async_plan(const plan::Plan &p, int loc) {
  if (loc != 1) {
    set_error("internal error: an _async call with host data reached the cuda backend");
    return BSVD_STATUS_INTERNAL_ERROR;
  }
  if (const Group *cg = cpu_group(p)) {
    const int b = cg->at(0);
    set_error("the _async forms run on the GPU only, but the plan solves %zu matrices on the "
              "host (the first: matrix %d, %d x %d), e.g. for an ordering other than round-robin "
              "beyond the one-kernel solver or a block size beyond the GPU's (bsvd_explain shows "
              "the plan); use the blocking form",
              cg->size(), b, cg->rows(0), cg->cols(0));
    return BSVD_STATUS_NOT_SUPPORTED;
  }
  return BSVD_STATUS_SUCCESS;
}

// Whether an uncaptured call of the plan needs a graph of its own: a device
// loop (the blocked path, also on QRCP's R^H) is a graph node.
bool needs_graph(const plan::Plan &p) {
  return std::any_of(p.groups.begin(), p.groups.end(), [](const Group &g) {
    return g.route == Route::kBlocked || g.route == Route::kQrcp || g.route == Route::kGram;
  });
}

// The key under which an uncaptured _async call's graph is launched again
// as it is (cuda::GraphCall::replay): every input of the plan and of the
// enqueued work -- the batch's description, the resolved options, the
// workspace, the device and the overrides. Empty (never replayed) for the
// pointer-array and variable-size forms and the HSVD's signatures, whose
// host arrays may change under the same address, and without a workspace
// (the library's own is new each call). The static_asserts catch a new
// field that the key would miss.
template <class T>
std::string replay_key(const Batch<T> &b, const Config &c, const void *ws, size_t ws_bytes) {
  struct TableFields { // what the key below puts
#define BSVD_OPTION_MEMBER(name, type, ...) type name;
    BSVD_OPTION_TABLE(BSVD_OPTION_MEMBER)
#undef BSVD_OPTION_MEMBER
    Exec exec;
  };
  static_assert(sizeof(Config) == sizeof(TableFields),
                "a Config field outside the option table: add it to replay_key");
  static_assert(sizeof(Batch<T>) == 216, "a new Batch field: add it to replay_key");
  const auto arrays = [](const auto &o) { return o.array != nullptr || o.ldv != nullptr; };
  if (!ws || b.dims.mv || b.dims.nv || arrays(b.A) || arrays(b.S) || arrays(b.U) || arrays(b.V) ||
      b.nplus)
    return {};
  int dev = -1;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    cudaGetLastError();
    return {};
  }
  std::string k;
  k.reserve(256);
  const auto put = [&k](const auto &v) { k.append(reinterpret_cast<const char *>(&v), sizeof v); };
  const auto operand = [&put](const auto &o) {
    put(o.base);
    put(o.stride);
    put(o.ld);
  };
  put(precision_of<T>());
  put(b.vectors);
  put(b.count);
  put(b.dims.m);
  put(b.dims.n);
  operand(b.A);
  operand(b.S);
  operand(b.U);
  operand(b.V);
  put(b.info);
  put(b.sweeps);
#define BSVD_OPTION_KEY(name, ...) put(c.name);
  BSVD_OPTION_TABLE(BSVD_OPTION_KEY)
#undef BSVD_OPTION_KEY
  put(c.exec);
  put(ws);
  put(ws_bytes);
  put(dev);
  put(overrides_generation());
  return k;
}

// Enqueues the GPU groups on the stream and returns: no host wait, no copy
// to the host; the blocked path loops on the device (blocked/driver.cuh).
// path: the planned path of each matrix (info is not known yet). An
// uncaptured call with a device loop runs as a graph of its own, kept for
// the next call with the same key (replay_key).
template <class T> bsvd_status_t enqueue_device_data(const Batch<T> &batch, const plan::Plan &p,
                                                     const CallLayout &L, cudaStream_t stream,
                                                     unsigned char *ws, int *path,
                                                     std::string key) {
  if (path) planned_paths(p, path);
  if (cuda::stream_capturing(stream) || !needs_graph(p))
    return enqueue_gpu_groups(batch, p, L, stream, ws);
  // The graph keeps the paths for its replays, which may ask for them.
  std::vector<int> planned(size_t(batch.count));
  planned_paths(p, planned.data());
  cuda::GraphCall graph(stream);
  BSVD_CUDA_TRY(graph.begin());
  BSVD_TRY_STATUS(enqueue_gpu_groups(batch, p, L, graph.get(), ws));
  BSVD_CUDA_TRY(graph.launch(std::move(key), std::move(planned)));
  return BSVD_STATUS_SUCCESS;
}

} // namespace

// The support check runs once per device (cached), on the first call that
// asks: a call on an unsupported GPU fails before any work, and host data
// under backend auto goes to the CPU.
bool cuda_available() { return cuda::gpu_visible() && cuda::current_device_supported(); }

std::string cuda_status_reason() {
  if (!cuda::gpu_visible()) return "no CUDA GPU is visible";
  std::string why;
  return cuda::current_device_supported(&why) ? std::string() : why;
}

template <class T> int cuda_locate(const Batch<T> &batch, int *arg) {
  if (arg) *arg = 0;
  // (gpu_visible, not cuda_available: device memory on a GPU this build
  // cannot run is still device memory, which the call must refuse rather
  // than give to the cpu backend)
  if (batch.count <= 0 || !cuda::gpu_visible()) return 0;
  // 1: device (or managed) memory, 0: host (pageable or pinned), -2: null.
  auto where = [](const void *p) -> int {
    if (!p) return -2;
    cudaPointerAttributes a{};
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return (a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged) ? 1 : 0;
  };
  const bool arrays = batch.A.array != nullptr;
  const void *pA = arrays ? static_cast<const void *>(batch.A.array[0]) : batch.A.base;
  const void *pS = batch.S.array ? static_cast<const void *>(batch.S.array[0]) : batch.S.base;
  const void *pU = batch.U.array ? static_cast<const void *>(batch.U.array[0]) : batch.U.base;
  const void *pV = batch.V.array ? static_cast<const void *>(batch.V.array[0]) : batch.V.base;
  // Argument positions (1-based) in the C prototypes: strided form vs the
  // pointer-array forms (batched and vbatched share them).
  const int posS = arrays ? 6 : 7, posU = arrays ? 7 : 9, posV = arrays ? 9 : 12,
            posInfo = arrays ? 11 : 15, posSweeps = arrays ? 12 : 16;
  const int loc = where(pA);
  const int base = loc == -2 ? 0 : loc;
  struct Item {
    const void *p;
    int pos;
  };
  const Item items[] = {{pS, posS},
                        {batch.vectors ? pU : nullptr, posU},
                        {batch.vectors ? pV : nullptr, posV},
                        {batch.info, posInfo},
                        {batch.sweeps, posSweeps}};
  for (const Item &it : items) {
    const int w = where(it.p);
    if (w == -2) continue;
    if (w != base) {
      if (arg) *arg = it.pos;
      return -1;
    }
  }
  return base;
}

template <class T> size_t cuda_workspace_bytes(const Batch<T> &batch, const Config &cfg) {
  if (batch.count <= 0) return 0;
  int arg = 0;
  int loc = cfg.exec == Exec::kAsync ? 1 : cuda_locate(batch, &arg); // (_async: device data)
  if (loc < 0) loc = 0;
  plan::Plan p = cuda::call_plan(plan::shapes_of(batch), cfg);
  return call_layout(p, batch, loc).total;
}

template <class T> std::string cuda_explain(const Batch<T> &batch, const Config &cfg, int loc) {
  plan::Plan p = cuda::call_plan(plan::shapes_of(batch), cfg);
  call_layout(p, batch, loc);
  return plan::explain(p);
}

template <class T> bsvd_status_t cuda_gesvj(const Batch<T> &batch, const Config &cfg,
                                            void *stream_ptr, void *workspace,
                                            size_t workspace_bytes, int *path) {
  if (batch.count <= 0) return BSVD_STATUS_SUCCESS;
  if (!cuda_available()) {
    set_error("cuda backend: %s", cuda_status_reason().c_str());
    return BSVD_STATUS_BACKEND_UNAVAILABLE;
  }
  int arg = 0;
  const int loc = cuda_locate(batch, &arg);
  if (loc < 0) {
    set_error("argument %d is not in the same memory space (host or device) as A", arg);
    return -arg;
  }
  cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  // An uncaptured _async call that repeats an earlier one (the same
  // buffers, sizes and options: a loop over a framework's caching
  // allocator) launches that call's graph without planning or capturing.
  std::string key;
  if (cfg.exec == Exec::kAsync && !cuda::stream_capturing(stream)) {
    key = replay_key(batch, cfg, workspace, workspace_bytes);
    cudaError_t e = cudaSuccess;
    if (cuda::GraphCall::replay(key, stream, path, &e)) return BSVD_STATUS_SUCCESS;
    if (e != cudaSuccess) {
      set_error("cudaGraphLaunch of the call's cached graph failed: %s (%s)", cudaGetErrorName(e),
                cudaGetErrorString(e));
      return BSVD_STATUS_DEVICE_ERROR;
    }
  }
  if (loc == 0 && cfg.exec == Exec::kBlocking && host_streams(batch, workspace))
    return run_host_streamed(batch, cfg, stream, path);
  plan::Plan p = cuda::call_plan(plan::shapes_of(batch), cfg);
  const CallLayout L = call_layout(p, batch, loc);
  if (cfg.exec == Exec::kAsync) BSVD_TRY_STATUS(check_async_plan(p, loc));
  prepare_handles(p);
  DeviceBuffer own;
  own.stream = stream;
  unsigned char *ws = static_cast<unsigned char *>(workspace);
  if (L.total > 0) {
    if (!ws) {
      BSVD_CUDA_TRY(cudaMallocAsync(&own.ptr, L.total, stream));
      ws = static_cast<unsigned char *>(own.ptr);
    } else if (workspace_bytes < L.total) {
      set_error("opts->workspace_bytes = %zu is below the %zu bytes this call needs",
                workspace_bytes, L.total);
      return BSVD_STATUS_WORKSPACE_TOO_SMALL;
    }
  }
  if (cfg.exec == Exec::kAsync)
    return enqueue_device_data(batch, p, L, stream, ws, path, std::move(key));
  return loc == 1 ? run_device_data(batch, p, L, stream, ws, path)
                  : run_host_data(batch, p, L, stream, ws, path);
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template int cuda_locate<T>(const Batch<T> &, int *);                                            \
  template size_t cuda_workspace_bytes<T>(const Batch<T> &, const Config &);                       \
  template std::string cuda_explain<T>(const Batch<T> &, const Config &, int);                     \
  template bsvd_status_t cuda_gesvj<T>(const Batch<T> &, const Config &, void *, void *, size_t,   \
                                       int *);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail
