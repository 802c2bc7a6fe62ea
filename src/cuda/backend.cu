// The cuda backend (declared in src/core/backends.hpp) executes a call's
// plan (src/plan/, facts.hpp): it lays out the workspace (the staging of
// the data, then one region per group), describes the data to the kernels
// (device data: its pointer arrays; host data: packed into the staging
// region and back), runs each group as its path's operation (operation.hpp)
// on the call's stream or the side stream beside the blocked path, solves
// the CPU group on the host, and reports each matrix's path. It decides
// nothing itself.
#include "../core/backends.hpp"
#include "../core/overrides.hpp"
#include "blocked/op.hpp"
#include "common/device_info.hpp"
#include "common/graph_call.hpp"
#include "common/side_stream.hpp"
#include "common/upload.hpp"
#include "facts.hpp"
#include "fused/op.hpp"
#include "tiny/op.hpp"
#include "qr/op.hpp"
#include "host_copy.hpp"
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

// The call's workspace: the staging of its data, then one region per group.
// The kernels see the caller's batch (device data: a group's matrices are
// its own indices) or the packed batch of the GPU's matrices in batch
// order (host data: gpu, and kidx[g], group g's positions in it).
struct CallLayout {
  int loc = 0; // 0 host data, 1 device data
  bool needs_arrays = false;
  size_t ngpu = 0; // matrices on the GPU
  std::vector<int> gpu;
  std::vector<std::vector<int>> kidx;
  std::vector<int> none; // a whole group's indices on device data: implicit
  size_t off_arrays = 0, bytes_arrays = 0, off_stage = 0, bytes_stage = 0;
  std::vector<size_t> off;
  size_t total = 0;
  // Group g's matrices as indices of the batch the kernels see.
  const std::vector<int> &kernel_indices(const plan::Plan &p, size_t g) const {
    if (loc == 1) return p.groups[g].whole < 0 ? p.groups[g].index : none;
    return kidx[g];
  }
};

size_t op_workspace(const plan::Plan &p, const Group &g, int kcount) {
  switch (g.route) {
  case Route::kFused: return cuda::FusedOp::workspace_bytes(p, g, kcount);
  case Route::kTiny: return cuda::TinyOp::workspace_bytes(p, g, kcount);
  case Route::kBlocked: return cuda::BlockedOp::workspace_bytes(p, g);
  case Route::kQr:
  case Route::kQrcp: return cuda::QrOp::workspace_bytes(p, g);
  case Route::kCpu: return 0;
  }
  return 0;
}

// Lays out the call's workspace; sets the plan's workspace bytes (per group
// and in all) for explain.
template <class T> CallLayout call_layout(plan::Plan &p, const Batch<T> &batch, int loc) {
  CallLayout L;
  L.loc = loc;
  for (const Group &g : p.groups)
    if (g.route != Route::kCpu) L.ngpu += g.size();
  std::vector<int> pos;
  if (loc == 0) {
    // the packed batch: the GPU's matrices in batch order
    pos.assign(size_t(batch.count), -1);
    for (const Group &g : p.groups)
      if (g.route != Route::kCpu)
        for (size_t i = 0; i < g.size(); ++i) pos[size_t(g.at(i))] = 0;
    L.gpu.reserve(L.ngpu);
    for (int b = 0; b < batch.count; ++b)
      if (pos[size_t(b)] == 0) {
        pos[size_t(b)] = int(L.gpu.size());
        L.gpu.push_back(b);
      }
  }
  size_t o = 0;
  if (loc == 1) {
    L.needs_arrays = cuda::batch_has_arrays(batch);
    if (L.needs_arrays) {
      L.off_arrays = o;
      L.bytes_arrays = cuda::device_arrays_bytes(batch.count);
      o += L.bytes_arrays;
    }
  } else {
    L.off_arrays = o;
    L.bytes_arrays = cuda::packed_arrays_bytes(L.gpu.size());
    o += L.bytes_arrays;
    L.off_stage = o;
    L.bytes_stage = cuda::pack_totals(batch, L.gpu).stage_bytes();
    o += L.bytes_stage;
  }
  const int kcount = loc == 1 ? batch.count : int(L.ngpu);
  for (Group &g : p.groups) {
    if (loc == 0) {
      std::vector<int> k(g.size());
      for (size_t i = 0; i < k.size(); ++i) k[i] = g.at(i);
      if (g.route != Route::kCpu)
        for (int &b : k) b = pos[size_t(b)];
      L.kidx.push_back(std::move(k));
    }
    L.off.push_back(o);
    g.workspace_bytes = op_workspace(p, g, kcount);
    o += g.workspace_bytes;
  }
  L.total = o;
  p.workspace_bytes = o;
  return L;
}

// One group by its path's operation.
template <class T> bsvd_status_t run_group(const cuda::GroupArgs<T> &a) {
  bool ok = false;
  switch (a.group.route) {
  case Route::kFused: ok = cuda::FusedOp::can_run(a.plan, a.group); break;
  case Route::kTiny: ok = cuda::TinyOp::can_run(a.plan, a.group); break;
  case Route::kBlocked: ok = cuda::BlockedOp::can_run(a.plan, a.group); break;
  case Route::kQr:
  case Route::kQrcp: ok = cuda::QrOp::can_run(a.plan, a.group); break;
  case Route::kCpu: break;
  }
  if (!ok) {
    set_error("internal error: the %s path cannot run the group planned for it",
              plan::route_name(a.group.route));
    return BSVD_STATUS_INTERNAL_ERROR;
  }
  switch (a.group.route) {
  case Route::kFused: return cuda::FusedOp::run(a);
  case Route::kTiny: return cuda::TinyOp::run(a);
  case Route::kBlocked: return cuda::BlockedOp::run(a);
  default: return cuda::QrOp::run(a);
  }
}

// Enqueues the plan's GPU groups on kb (hb: the same matrices with
// host-visible sizes). The groups the plan puts beside the blocked path
// run on a side stream: they touch disjoint matrices and disjoint parts of
// the workspace. The call's stream joins it before this returns (also on
// an error: SideStream's destructor).
template <class T> bsvd_status_t run_groups(const plan::Plan &p, const CallLayout &L,
                                            const Batch<T> &kb, const Batch<T> &hb,
                                            unsigned char *ws, cudaStream_t stream) {
  cuda::SideStream side(stream);
  cudaStream_t beside = stream;
  for (const Group &g : p.groups)
    if (g.beside && beside == stream) {
      BSVD_CUDA_TRY(side.fork());
      beside = side.get();
    }
  for (size_t i = 0; i < p.groups.size(); ++i) {
    const Group &g = p.groups[i];
    if (g.route == Route::kCpu) continue;
    const cuda::GroupArgs<T> a{
        p, g, kb, hb, L.kernel_indices(p, i), ws + L.off[i], g.beside ? beside : stream};
    BSVD_TRY_STATUS(run_group(a));
  }
  BSVD_CUDA_TRY(side.join());
  return BSVD_STATUS_SUCCESS;
}

// The path reported for matrix i of GPU group g: trivial when it was empty
// or had a NaN / Inf (nothing was iterated), else its path's.
int group_path(const Group &g, size_t i, int info) {
  const bool empty = g.rows(i) == 0 || g.cols(i) == 0;
  if (empty || info == BSVD_INFO_NONFINITE) return BSVD_PATH_TRIVIAL;
  switch (g.route) {
  case Route::kFused: return BSVD_PATH_CUDA_FUSED;
  case Route::kTiny: return BSVD_PATH_CUDA_TINY;
  case Route::kBlocked:
    return g.blocked.mode[i] == BSVD_PAIR_SVD_SM   ? BSVD_PATH_CUDA_PAIR_SVD
           : g.blocked.mode[i] == BSVD_PAIR_EVD_SM ? BSVD_PATH_CUDA_PAIR_EVD
                                                   : BSVD_PATH_CUDA_BLOCKED;
  case Route::kQr: return BSVD_PATH_CUDA_QR;
  case Route::kQrcp: return BSVD_PATH_CUDA_QRCP;
  case Route::kCpu: break;
  }
  return BSVD_PATH_CPU_UNBLOCKED;
}

// path[b] of every matrix: the GPU groups' from info (info_of(b)), the CPU
// group's from the CPU solve (cpu_path[i] for its i-th matrix).
template <class F>
void report_paths(const plan::Plan &p, F info_of, const std::vector<int> &cpu_path, int *path) {
  for (const Group &g : p.groups)
    for (size_t i = 0; i < g.size(); ++i) {
      const int b = g.at(i);
      path[b] = g.route == Route::kCpu ? cpu_path[i] : group_path(g, i, info_of(b));
    }
}

// RAII for memory and events the call creates itself.
struct DeviceBuffer {
  void *ptr = nullptr;
  cudaStream_t stream = nullptr;
  ~DeviceBuffer() {
    if (ptr) cudaFreeAsync(ptr, stream);
  }
};
struct EventGuard {
  cudaEvent_t ev = nullptr;
  ~EventGuard() {
    if (ev) cudaEventDestroy(ev);
  }
};

const Group *cpu_group(const plan::Plan &p) { return p.find(Route::kCpu); }

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
// uploaded to the workspace when it has them), enqueued on the stream.
template <class T> bsvd_status_t enqueue_gpu_groups(const Batch<T> &batch, const plan::Plan &p,
                                                    const CallLayout &L, cudaStream_t stream,
                                                    unsigned char *ws) {
  if (L.ngpu == 0) return BSVD_STATUS_SUCCESS;
  Batch<T> kb = batch;
  if (L.needs_arrays)
    BSVD_TRY_STATUS(cuda::upload_arrays(batch, ws + L.off_arrays, L.bytes_arrays, kb, stream));
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
    return g.route == Route::kBlocked || g.route == Route::kQrcp;
  });
}

// The key under which an uncaptured _async call's graph is launched again
// as it is (cuda::GraphCall::replay): every input of the plan and of the
// enqueued work -- the batch's description, the resolved options, the
// workspace, the device and the overrides. Empty (never replayed) for the
// pointer-array and variable-size forms, whose host arrays may change under
// the same address, and without a workspace (the library's own is new each
// call). The static_asserts catch a new field that the key would miss.
template <class T>
std::string replay_key(const Batch<T> &b, const Config &c, const void *ws, size_t ws_bytes) {
  static_assert(sizeof(Config) == 64, "a new Config field: add it to replay_key");
  static_assert(sizeof(Batch<T>) == 208, "a new Batch field: add it to replay_key");
  const auto arrays = [](const auto &o) { return o.array != nullptr || o.ldv != nullptr; };
  if (!ws || b.dims.mv || b.dims.nv || arrays(b.A) || arrays(b.S) || arrays(b.U) || arrays(b.V))
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
  put(c.ordering);
  put(c.variant);
  put(c.block_size);
  put(c.tol);
  put(c.max_sweeps);
  put(c.eig_sweeps);
  put(c.num_threads);
  put(c.qr);
  put(c.pair_solver);
  put(c.precondition);
  put(c.wcycle_blocks);
  put(c.wcycle_sweeps);
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
  std::vector<int> planned(size_t(batch.count));
  report_paths(
      p, [](int) { return 0; }, {}, planned.data());
  if (path) std::copy(planned.begin(), planned.end(), path);
  if (cuda::stream_capturing(stream) || !needs_graph(p))
    return enqueue_gpu_groups(batch, p, L, stream, ws);
  cuda::GraphCall graph(stream);
  BSVD_CUDA_TRY(graph.begin());
  BSVD_TRY_STATUS(enqueue_gpu_groups(batch, p, L, graph.get(), ws));
  BSVD_CUDA_TRY(graph.launch(std::move(key), std::move(planned)));
  return BSVD_STATUS_SUCCESS;
}

// ---- host-resident data: pack, copy in, solve, copy out --------------------
// The packed batch of the GPU's matrices: the host copies and the
// device-visible description (kb; hb: the same with host-visible sizes).
template <class T> struct Packed {
  using R = real_of_t<T>;
  bool pinned = false; // page-locked host copies (the streamed chunks)
  cuda::PackTotals<T> tot;
  std::vector<int> fm, fn; // sizes
  cuda::HostBytes host; // the host copies:
  T *A = nullptr, *U = nullptr, *V = nullptr;
  R *S = nullptr;
  int *info = nullptr, *sweeps = nullptr;
  T *dA = nullptr, *dU = nullptr, *dV = nullptr;
  R *dS = nullptr;
  int *dinfo = nullptr, *dsweeps = nullptr;
  Batch<T> kb, hb;
};

// Whether the GPU's matrices of a host batch are all of it, of one size, and
// one contiguous block of an operand (ld = rows unless rows is 0, matrix b
// at b x size): then the packed copy is one block copy.
template <class T, class P> bool one_block(const Batch<T> &batch, const CallLayout &L,
                                           const Operand<P> &op, int rows, int64_t size) {
  return L.gpu.size() == size_t(batch.count) && batch.dims.uniform() && !op.array && !op.ldv &&
         size > 0 && (rows == 0 || op.ld == rows) && op.stride == size;
}

// Packs the GPU's matrices (L.gpu) of the caller's host batch and copies
// them, and for a variable-size batch their pointer arrays and sizes, to the
// workspace (on the stream). A uniform batch is packed as a strided one.
template <class T> bsvd_status_t pack_in(const Batch<T> &batch, const CallLayout &L,
                                         unsigned char *ws, Packed<T> &pk, cudaStream_t stream) {
  using R = real_of_t<T>;
  using cuda::ws_align;
  const size_t nf = L.gpu.size();
  pk.tot = cuda::pack_totals(batch, L.gpu);
  pk.fm.resize(nf);
  pk.fn.resize(nf);
  unsigned char *stage = ws + L.off_stage;
  pk.dA = reinterpret_cast<T *>(stage);
  pk.dS = reinterpret_cast<R *>(stage + ws_align(pk.tot.a * sizeof(T)));
  pk.dU = reinterpret_cast<T *>(reinterpret_cast<unsigned char *>(pk.dS) +
                                ws_align(pk.tot.s * sizeof(R)));
  pk.dV = reinterpret_cast<T *>(reinterpret_cast<unsigned char *>(pk.dU) +
                                ws_align(pk.tot.u * sizeof(T)));
  const size_t ba = ws_align(pk.tot.a * sizeof(T)), bu = ws_align(pk.tot.u * sizeof(T)),
               bv = ws_align(pk.tot.v * sizeof(T)), bs = ws_align(pk.tot.s * sizeof(R)),
               bi = ws_align(nf * sizeof(int));
  BSVD_CUDA_TRY(pk.host.reserve(ba + bu + bv + bs + 2 * bi, pk.pinned));
  unsigned char *h = pk.host.data();
  pk.A = reinterpret_cast<T *>(h);
  pk.U = reinterpret_cast<T *>(h + ba);
  pk.V = reinterpret_cast<T *>(h + ba + bu);
  pk.S = reinterpret_cast<R *>(h + ba + bu + bv);
  pk.info = reinterpret_cast<int *>(h + ba + bu + bv + bs);
  pk.sweeps = reinterpret_cast<int *>(h + ba + bu + bv + bs + bi);
  const bool uniform = batch.dims.uniform();
  // Pointer arrays (device addresses) and ld arrays (max(size, 1)): only a
  // variable-size batch needs them.
  unsigned char *arr = ws + L.off_arrays;
  std::vector<unsigned char> host(uniform ? 0 : L.bytes_arrays, 0);
  size_t oa = 0, os = 0, ou = 0, ov = 0;
  for (size_t i = 0; i < nf; ++i) {
    const int b = L.gpu[i];
    pk.fm[i] = batch.dims.rows(b);
    pk.fn[i] = batch.dims.cols(b);
  }
  if (one_block(batch, L, batch.A, batch.dims.m, int64_t(batch.dims.m) * batch.dims.n)) {
    cuda::copy_bytes(pk.A, batch.A.base, pk.tot.a * sizeof(T));
  } else {
    for (size_t i = 0; i < nf; ++i) {
      const int b = L.gpu[i], m = pk.fm[i], n = pk.fn[i];
      const T *src = batch.A.ptr(b);
      const int lda = batch.A.ldm(b);
      if (size_t(m) * n == 0) continue; // (nothing to copy; its A may be NULL)
      if (lda == m)
        std::memcpy(&pk.A[oa], src, size_t(m) * n * sizeof(T));
      else
        for (int j = 0; j < n; ++j)
          std::memcpy(&pk.A[oa + size_t(j) * m], src + size_t(j) * lda, size_t(m) * sizeof(T));
      oa += size_t(m) * n;
    }
  }
  if (!uniform) {
    const T **pA = reinterpret_cast<const T **>(host.data());
    R **pS = reinterpret_cast<R **>(host.data() + nf * sizeof(void *));
    T **pU = reinterpret_cast<T **>(host.data() + 2 * nf * sizeof(void *));
    T **pV = reinterpret_cast<T **>(host.data() + 3 * nf * sizeof(void *));
    int *im = reinterpret_cast<int *>(host.data() + 4 * nf * sizeof(void *));
    int *in = im + nf;
    oa = 0;
    for (size_t i = 0; i < nf; ++i) {
      const cuda::PackSizes z = cuda::pack_sizes(pk.fm[i], pk.fn[i], batch.vectors);
      pA[i] = pk.dA + oa;
      pS[i] = pk.dS + os;
      pU[i] = pk.dU + ou;
      pV[i] = pk.dV + ov;
      im[i] = std::max(pk.fm[i], 1);
      in[i] = std::max(pk.fn[i], 1);
      oa += z.a;
      os += z.s;
      ou += z.u;
      ov += z.v;
    }
    BSVD_CUDA_TRY(
        cudaMemcpyAsync(arr, host.data(), L.bytes_arrays, cudaMemcpyHostToDevice, stream));
  }
  if (pk.tot.a)
    BSVD_CUDA_TRY(
        cudaMemcpyAsync(pk.dA, pk.A, pk.tot.a * sizeof(T), cudaMemcpyHostToDevice, stream));
  int *dm = reinterpret_cast<int *>(arr + 4 * nf * sizeof(void *));
  int *dn = dm + nf;
  pk.dinfo = dn + nf;
  pk.dsweeps = pk.dinfo + nf;
  Batch<T> &kb = pk.kb;
  kb = Batch<T>{};
  kb.vectors = batch.vectors;
  kb.count = int(nf);
  kb.info = pk.dinfo;
  kb.sweeps = pk.dsweeps;
  if (uniform) { // the packed batch, strided: ld = rows (A, U) or n (V)
    const int m = batch.dims.m, n = batch.dims.n, k = std::min(m, n);
    kb.dims.m = m;
    kb.dims.n = n;
    kb.A.base = pk.dA;
    kb.A.stride = int64_t(m) * n;
    kb.A.ld = std::max(m, 1);
    kb.S.base = pk.dS;
    kb.S.stride = k;
    kb.U.base = pk.dU;
    kb.U.stride = batch.vectors ? int64_t(m) * k : 0;
    kb.U.ld = std::max(m, 1);
    kb.V.base = pk.dV;
    kb.V.stride = batch.vectors ? int64_t(n) * k : 0;
    kb.V.ld = std::max(n, 1);
  } else {
    kb.A.array = reinterpret_cast<const T *const *>(arr);
    kb.A.ldv = dm;
    kb.S.array = reinterpret_cast<R *const *>(arr + nf * sizeof(void *));
    kb.U.array = reinterpret_cast<T *const *>(arr + 2 * nf * sizeof(void *));
    kb.U.ldv = dm;
    kb.V.array = reinterpret_cast<T *const *>(arr + 3 * nf * sizeof(void *));
    kb.V.ldv = dn;
    // Exact sizes in a separate upload: an ld of 1 with 0 rows would read as 1 row.
    int *dsz = pk.dsweeps + nf;
    std::vector<int> sz(2 * nf);
    std::copy(pk.fm.begin(), pk.fm.end(), sz.begin());
    std::copy(pk.fn.begin(), pk.fn.end(), sz.begin() + long(nf));
    BSVD_CUDA_TRY(
        cudaMemcpyAsync(dsz, sz.data(), 2 * nf * sizeof(int), cudaMemcpyHostToDevice, stream));
    kb.dims.mv = dsz;
    kb.dims.nv = dsz + nf;
  }
  pk.hb = kb;
  if (!uniform) {
    pk.hb.dims.mv = pk.fm.data();
    pk.hb.dims.nv = pk.fn.data();
  }
  return BSVD_STATUS_SUCCESS;
}

// Copies the packed results back to the host copies (on the stream).
template <class T> bsvd_status_t copy_out(Packed<T> &pk, cudaStream_t stream) {
  using R = real_of_t<T>;
  const size_t nf = pk.fm.size();
  if (pk.tot.s)
    BSVD_CUDA_TRY(
        cudaMemcpyAsync(pk.S, pk.dS, pk.tot.s * sizeof(R), cudaMemcpyDeviceToHost, stream));
  if (pk.tot.u)
    BSVD_CUDA_TRY(
        cudaMemcpyAsync(pk.U, pk.dU, pk.tot.u * sizeof(T), cudaMemcpyDeviceToHost, stream));
  if (pk.tot.v)
    BSVD_CUDA_TRY(
        cudaMemcpyAsync(pk.V, pk.dV, pk.tot.v * sizeof(T), cudaMemcpyDeviceToHost, stream));
  BSVD_CUDA_TRY(
      cudaMemcpyAsync(pk.info, pk.dinfo, nf * sizeof(int), cudaMemcpyDeviceToHost, stream));
  BSVD_CUDA_TRY(
      cudaMemcpyAsync(pk.sweeps, pk.dsweeps, nf * sizeof(int), cudaMemcpyDeviceToHost, stream));
  return BSVD_STATUS_SUCCESS;
}

// Unpacks the GPU's results into the caller's arrays (after the stream).
template <class T> void unpack(const Batch<T> &batch, const CallLayout &L, const Packed<T> &pk) {
  using R = real_of_t<T>;
  const size_t nf = L.gpu.size();
  const int m0 = batch.dims.m, n0 = batch.dims.n, k0 = std::min(m0, n0);
  const bool bs = one_block(batch, L, batch.S, 0, k0);
  const bool bu = batch.vectors && one_block(batch, L, batch.U, m0, int64_t(m0) * k0);
  const bool bv = batch.vectors && one_block(batch, L, batch.V, n0, int64_t(n0) * k0);
  if (bs) cuda::copy_bytes(batch.S.base, pk.S, pk.tot.s * sizeof(R));
  if (bu) cuda::copy_bytes(batch.U.base, pk.U, pk.tot.u * sizeof(T));
  if (bv) cuda::copy_bytes(batch.V.base, pk.V, pk.tot.v * sizeof(T));
  size_t os = 0, ou = 0, ov = 0;
  for (size_t i = 0; i < nf; ++i) {
    const int b = L.gpu[i];
    const int m = pk.fm[i], n = pk.fn[i], k = std::min(m, n);
    const cuda::PackSizes s = cuda::pack_sizes(m, n, batch.vectors);
    if (k > 0 && !bs) std::memcpy(batch.S.ptr(b), &pk.S[os], size_t(k) * sizeof(R));
    if (batch.vectors && k > 0) {
      T *U = batch.U.ptr(b);
      T *V = batch.V.ptr(b);
      const int ldu = batch.U.ldm(b), ldv = batch.V.ldm(b);
      for (int j = 0; j < k; ++j) {
        if (!bu) std::memcpy(U + size_t(j) * ldu, &pk.U[ou + size_t(j) * m], size_t(m) * sizeof(T));
        if (!bv) std::memcpy(V + size_t(j) * ldv, &pk.V[ov + size_t(j) * n], size_t(n) * sizeof(T));
      }
    }
    batch.info[b] = pk.info[i];
    if (batch.sweeps) batch.sweeps[b] = pk.sweeps[i];
    os += s.s;
    ou += s.u;
    ov += s.v;
  }
}

// The CPU group's matrices of a host batch (if any), solved in the
// caller's memory (h: their sub-batch, its paths).
template <class T> bsvd_status_t solve_host_cpu_group(const Batch<T> &batch, const plan::Plan &p,
                                                      cuda::HostSubBatch<T> &h) {
  const Group *cg = cpu_group(p);
  if (!cg) return BSVD_STATUS_SUCCESS;
  for (int b : cg->index) {
    h.A.push_back(batch.A.ptr(b));
    h.S.push_back(batch.S.ptr(b));
    h.U.push_back(batch.vectors ? batch.U.ptr(b) : nullptr);
    h.V.push_back(batch.vectors ? batch.V.ptr(b) : nullptr);
    h.m.push_back(batch.dims.rows(b));
    h.n.push_back(batch.dims.cols(b));
    h.lda.push_back(batch.A.ldm(b));
    h.ldu.push_back(batch.vectors ? batch.U.ldm(b) : 1);
    h.ldv.push_back(batch.vectors ? batch.V.ldm(b) : 1);
  }
  h.describe(batch.vectors);
  BSVD_TRY_STATUS(cuda::solve_on_cpu(h.batch, p.cfg, h.path.data()));
  for (size_t i = 0; i < cg->index.size(); ++i) {
    const int b = cg->index[i];
    batch.info[b] = h.info[i];
    if (batch.sweeps) batch.sweeps[b] = h.sweeps[i];
  }
  return BSVD_STATUS_SUCCESS;
}

template <class T> bsvd_status_t run_host_data(const Batch<T> &batch, const plan::Plan &p,
                                               const CallLayout &L, cudaStream_t stream,
                                               unsigned char *ws, int *path) {
  Packed<T> pk;
  if (L.ngpu > 0) {
    BSVD_TRY_STATUS(pack_in(batch, L, ws, pk, stream));
    BSVD_TRY_STATUS(run_groups(p, L, pk.kb, pk.hb, ws, stream));
    BSVD_TRY_STATUS(copy_out(pk, stream));
  }
  // The CPU part works directly on the caller's host memory meanwhile.
  cuda::HostSubBatch<T> h;
  if (const bsvd_status_t st = solve_host_cpu_group(batch, p, h)) {
    cudaStreamSynchronize(stream);
    return st;
  }
  BSVD_CUDA_TRY(cudaStreamSynchronize(stream));
  unpack(batch, L, pk);
  if (path)
    report_paths(
        p, [&](int b) { return batch.info[b]; }, h.path, path);
  return BSVD_STATUS_SUCCESS;
}

// ---- host-resident data in chunks -------------------------------------------
// A large host batch streams through the GPU in chunks of consecutive
// matrices on two streams: while one chunk is copied in, solved and copied
// out on its slot's stream, the host packs the next one into the other
// slot's page-locked copy, and a slot's results are unpacked when it comes
// round again. Each chunk is a call of its own (plan, layout, workspace).
// The chunks: at least 64 MiB of A (PCIe moves that in ~2.5 ms, long
// against a copy's start) and 128 matrices (fewer leave the blocked path's
// GPU half-used). Measured on the H100 with vectors, host data, against
// the batch copied at once: d 4000 x 256^2 2.21 s in chunks of 512
// matrices against 4.64 s, d 1000 x 512^2 3.42 s in chunks of 128 against
// 6.63 s; 2048-matrix chunks at 64^2 and 64 MiB ones at 16^2 stream as
// fast as the link. A compute-bound batch of fewer, larger matrices loses
// a little (d 1000 x 256^2 values: 0.374 s in chunks of 125 against 0.340
// s at once). BSVD_HOST_CHUNK sets the bytes alone (0: never streamed).
// Decision 0018 (docs/design/decisions/).
struct ChunkRule {
  size_t bytes = size_t(64) << 20;
  int matrices = 128;
};
ChunkRule chunk_rule() {
  const long o = current_overrides().host_chunk;
  return o < 0 ? ChunkRule{} : ChunkRule{size_t(o), 1};
}

template <class T> size_t a_bytes(const Batch<T> &batch, int b) {
  return size_t(batch.dims.rows(b)) * size_t(batch.dims.cols(b)) * sizeof(T);
}

// The first matrix of each chunk, and batch.count last.
template <class T> std::vector<int> chunk_starts(const Batch<T> &batch, const ChunkRule &r) {
  std::vector<int> starts{0};
  size_t acc = 0;
  for (int b = 0; b < batch.count; ++b) {
    acc += a_bytes(batch, b);
    if (acc >= r.bytes && b + 1 - starts.back() >= r.matrices && b + 1 < batch.count) {
      starts.push_back(b + 1);
      acc = 0;
    }
  }
  starts.push_back(batch.count);
  return starts;
}

// Whether a blocking call on host data streams: more than two chunks, and
// no workspace of the caller's (sized for the call at once, so used so).
template <class T> bool streams(const Batch<T> &batch, const void *workspace, const ChunkRule &r) {
  if (workspace || r.bytes == 0 || batch.count < 3 * r.matrices) return false;
  if (batch.dims.uniform()) return size_t(batch.count) * a_bytes(batch, 0) > 2 * r.bytes;
  size_t total = 0;
  for (int b = 0; b < batch.count && total <= 2 * r.bytes; ++b) total += a_bytes(batch, b);
  return total > 2 * r.bytes;
}

template <class T> struct Slot {
  cudaStream_t stream = nullptr;
  int first = 0;
  bool busy = false;
  Batch<T> sub;
  plan::Plan p;
  CallLayout L;
  Packed<T> pk;
  cuda::HostSubBatch<T> cpu;
  DeviceBuffer ws;
  size_t ws_bytes = 0;
};

template <class T> bsvd_status_t run_host_streamed(const Batch<T> &batch, const Config &cfg,
                                                   const ChunkRule &rule, cudaStream_t stream,
                                                   int *path) {
  const std::vector<int> starts = chunk_starts(batch, rule);
  cuda::PooledStream side;
  BSVD_CUDA_TRY(cuda::SideStreamPool::acquire(side));
  struct Release {
    cuda::PooledStream &s;
    ~Release() { cuda::SideStreamPool::release(s); }
  } release{side};
  // The side slot starts after the caller's earlier work, as the call would.
  BSVD_CUDA_TRY(cudaEventRecord(side.event, stream));
  BSVD_CUDA_TRY(cudaStreamWaitEvent(side.stream, side.event, 0));
  Slot<T> slots[2];
  slots[0].stream = stream;
  slots[1].stream = side.stream;
  auto finish = [&](Slot<T> &s) -> bsvd_status_t {
    if (!s.busy) return BSVD_STATUS_SUCCESS;
    s.busy = false;
    BSVD_CUDA_TRY(cudaStreamSynchronize(s.stream));
    if (s.L.ngpu > 0) unpack(s.sub, s.L, s.pk);
    if (path)
      report_paths(
          s.p, [&](int b) { return s.sub.info[b]; }, s.cpu.path, path + s.first);
    return BSVD_STATUS_SUCCESS;
  };
  for (size_t c = 0; c + 1 < starts.size(); ++c) {
    Slot<T> &s = slots[c % 2];
    BSVD_TRY_STATUS(finish(s));
    s.first = starts[c];
    s.sub = slice(batch, s.first, starts[c + 1] - starts[c]);
    s.p = cuda::call_plan(plan::shapes_of(s.sub), cfg);
    s.L = call_layout(s.p, s.sub, 0);
    if (s.L.total > s.ws_bytes) {
      if (s.ws.ptr) BSVD_CUDA_TRY(cudaFreeAsync(s.ws.ptr, s.stream));
      s.ws.ptr = nullptr;
      BSVD_CUDA_TRY(cudaMallocAsync(&s.ws.ptr, s.L.total, s.stream));
      s.ws.stream = s.stream;
      s.ws_bytes = s.L.total;
    }
    unsigned char *ws = static_cast<unsigned char *>(s.ws.ptr);
    s.pk.pinned = true;
    s.busy = true;
    if (s.L.ngpu > 0) {
      BSVD_TRY_STATUS(pack_in(s.sub, s.L, ws, s.pk, s.stream));
      BSVD_TRY_STATUS(run_groups(s.p, s.L, s.pk.kb, s.pk.hb, ws, s.stream));
      BSVD_TRY_STATUS(copy_out(s.pk, s.stream));
    }
    s.cpu = cuda::HostSubBatch<T>{};
    BSVD_TRY_STATUS(solve_host_cpu_group(s.sub, s.p, s.cpu));
  }
  BSVD_TRY_STATUS(finish(slots[(starts.size() - 1) % 2])); // the older chunk first
  BSVD_TRY_STATUS(finish(slots[starts.size() % 2]));
  return BSVD_STATUS_SUCCESS;
}

} // namespace

bool cuda_available() { return cuda::gpu_visible(); }

template <class T> int cuda_locate(const Batch<T> &batch, int *arg) {
  if (arg) *arg = 0;
  if (batch.count <= 0 || !cuda_available()) return 0;
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
    set_error("cuda backend: no CUDA device is visible");
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
  if (const ChunkRule rule = chunk_rule();
      loc == 0 && cfg.exec == Exec::kBlocking && streams(batch, workspace, rule))
    return run_host_streamed(batch, cfg, rule, stream, path);
  plan::Plan p = cuda::call_plan(plan::shapes_of(batch), cfg);
  const CallLayout L = call_layout(p, batch, loc);
  if (cfg.exec == Exec::kAsync) BSVD_TRY_STATUS(check_async_plan(p, loc));
  DeviceBuffer own;
  own.stream = stream;
  unsigned char *ws = static_cast<unsigned char *>(workspace);
  if (L.total > 0) {
    if (!ws) {
      BSVD_CUDA_TRY(cudaMallocAsync(&own.ptr, L.total, stream));
      ws = static_cast<unsigned char *>(own.ptr);
    } else if (workspace_bytes < L.total) {
      set_error("workspace of %zu bytes is smaller than the %zu bytes the cuda backend needs",
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
