// What backend.cu and host_data.cu share: a call's workspace layout, the
// running of its GPU groups, the reported paths, and RAII for what a call
// allocates. Internal to the cuda backend.
#pragma once

#include "../core/backends.hpp"
#include "bidiag/op.hpp"
#include "blocked/op.hpp"
#include "common/side_stream.hpp"
#include "fused/op.hpp"
#include "gram/op.hpp"
#include "operation.hpp"
#include "qr/op.hpp"
#include "staging.hpp"
#include "tiny/op.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

#include <cuda_runtime.h>

namespace bsvd::detail::exec {

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
  size_t off_nplus = 0, bytes_nplus = 0; // the HSVD's signatures, in kernel order
  std::vector<size_t> off;
  size_t total = 0;
  // Group g's matrices as indices of the batch the kernels see.
  const std::vector<int> &kernel_indices(const plan::Plan &p, size_t g) const {
    if (loc == 1) return p.groups[g].whole < 0 ? p.groups[g].index : none;
    return kidx[g];
  }
};

inline size_t op_workspace(const plan::Plan &p, const Group &g, int kcount) {
  switch (g.route) {
  case Route::kFused: return cuda::FusedOp::workspace_bytes(p, g, kcount);
  case Route::kTiny: return cuda::TinyOp::workspace_bytes(p, g, kcount);
  case Route::kBlocked: return cuda::BlockedOp::workspace_bytes(p, g);
  case Route::kQr:
  case Route::kQrcp: return cuda::QrOp::workspace_bytes(p, g);
  case Route::kGram: return cuda::GramOp::workspace_bytes(p, g);
  case Route::kBidiag: return cuda::BidiagOp::workspace_bytes(p, g, kcount);
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
  if (batch.nplus) {
    L.off_nplus = o;
    L.bytes_nplus = cuda::ws_align(size_t(kcount) * sizeof(int));
    o += L.bytes_nplus;
  }
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
  case Route::kGram: ok = cuda::GramOp::can_run(a.plan, a.group); break;
  case Route::kBidiag: ok = cuda::BidiagOp::can_run(a.plan, a.group); break;
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
  case Route::kGram: return cuda::GramOp::run(a);
  case Route::kBidiag: return cuda::BidiagOp::run(a);
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
inline int group_path(const Group &g, size_t i, int info) {
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
  case Route::kGram: return BSVD_PATH_CUDA_GRAM;
  case Route::kBidiag: return BSVD_PATH_CUDA_BIDIAG;
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

// path[b] as planned, before info is known (the _async forms; no CPU
// group). A whole group (one size, 10^6 matrices and more on the register
// tier) is one fill: the loop above cost ~2 ms per 10^6 matrices, 30 times
// the solve of 10^6 2 x 2 matrices.
inline void planned_paths(const plan::Plan &p, int *path) {
  for (const Group &g : p.groups) {
    if (g.whole >= 0) {
      std::fill(path, path + g.whole, group_path(g, 0, 0));
      continue;
    }
    for (size_t i = 0; i < g.size(); ++i) path[g.at(i)] = group_path(g, i, 0);
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

inline const Group *cpu_group(const plan::Plan &p) { return p.find(Route::kCpu); }

} // namespace bsvd::detail::exec
