// One GPU path as an operation, in the shape of CUTLASS's device-level
// operators: for a group of the plan (src/plan/plan.hpp),
//   can_run(plan, group)          whether the path takes the group as planned
//   workspace_bytes(plan, group)  the device workspace its own layout needs
//   run(args)                     enqueue its work on a stream, nothing else
// Each path implements the three in its folder: FusedOp (fused/op.hpp),
// BlockedOp (blocked/op.hpp), QrOp (qr/op.hpp: the QR front end and the
// preconditioning). The backend (backend.cu) sizes the call's workspace with
// them and runs the plan's groups in order; it decides nothing itself.
#pragma once

#include "../core/backends.hpp"
#include "../plan/plan.hpp"

#include <cuda_runtime.h>

#include <vector>

namespace bsvd::detail::cuda {

// The arguments of run: the group's matrices are kb's matrices kidx[i]
// (device-visible pointers, sizes and HSVD signatures); hb describes the
// same batch with host-visible sizes and signatures (for the launch
// planning).
template <class T> struct GroupArgs {
  const plan::Plan &plan;
  const plan::Group &group;
  const Batch<T> &kb;
  const Batch<T> &hb;
  const std::vector<int> &kidx;
  unsigned char *ws; // workspace_bytes(plan, group) bytes, 256-byte aligned
  cudaStream_t stream;
};

// Whether a launch over group g needs a slot -> matrix map in its
// workspace: unless the group is the whole batch (kcount matrices the
// kernels see) of a uniform call, in order. (The fused kernel's launches
// have a rule of their own, fused/op.cu.)
inline bool needs_slot_map(const plan::Plan &p, const plan::Group &g, int kcount) {
  return !p.uniform || g.size() != size_t(kcount);
}

// The status of a failed CUDA call: memory that could not be allocated
// (device or pinned host: cudaErrorMemoryAllocation, not sticky) is
// ALLOC_FAILED, as bsvd.h promises -- Python raises MemoryError, and the
// caller may retry with a smaller batch; anything else is DEVICE_ERROR.
inline bsvd_status_t status_of(cudaError_t e) {
  return e == cudaErrorMemoryAllocation ? BSVD_STATUS_ALLOC_FAILED : BSVD_STATUS_DEVICE_ERROR;
}

// Every CUDA call is checked; a failure names the call (bsvd_last_error).
#define BSVD_CUDA_TRY(call)                                                                        \
  do {                                                                                             \
    const cudaError_t bsvd_err_ = (call);                                                          \
    if (bsvd_err_ != cudaSuccess) {                                                                \
      set_error("%s failed: %s (%s)", #call, cudaGetErrorName(bsvd_err_),                          \
                cudaGetErrorString(bsvd_err_));                                                    \
      return ::bsvd::detail::cuda::status_of(bsvd_err_);                                           \
    }                                                                                              \
  } while (0)

#define BSVD_TRY_STATUS(call)                                                                      \
  do {                                                                                             \
    const bsvd_status_t bsvd_st_ = (call);                                                         \
    if (bsvd_st_ != BSVD_STATUS_SUCCESS) return bsvd_st_;                                          \
  } while (0)

} // namespace bsvd::detail::cuda
