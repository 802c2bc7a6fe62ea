// Batched GEMV on the GPU (backends.hpp cuda_gemv; bsvd.h, "Batched BLAS
// and LAPACK"): one thread block per product, the device API's gemv
// (blas.cuh) on block_team, A, x and y where they lie in global memory.
// Op N: one output entry per thread, consecutive threads on consecutive
// rows of a column (coalesced). Op T / C: plan::gemv_lanes lanes of a warp
// per output, each summing every g-th row of the column, combined by
// shuffles (MAGMA-BLAS §4.1, its Figs. 5, 9) -- the column read coalesced
// where one thread per column touched 32 columns' lines at once. Also the
// memory-space query of the building blocks' API layer.
#include "../../core/backends.hpp"
#include "../../plan/bidiag.hpp"
#include "../common/device_info.hpp"
#include "../operation.hpp"
#include "common.cuh"
#include "tables.hpp"

#include <algorithm>
#include <complex>

#include <cuda_runtime.h>

namespace bsvd::detail {

namespace cuda {
namespace {

template <class T, class W = bidiag_t<T>> __global__ void __launch_bounds__(plan::kBidiagMaxThreads)
    gemv_kernel(GemvBatch<T> b, W alpha, W beta) {
  using R = real_of_t<T>;
  __shared__ R scratch[32]; // (block_team's reduction slots; GEMV shuffles instead)
  const bsvd::device::block_team<R> team{scratch};
  const bsvd::device::op op = device_op(b.trans);
  for (int i = blockIdx.x; i < b.count; i += gridDim.x)
    bsvd::device::gemv(op, b.dims.rows(i), b.dims.cols(i), alpha,
                       reinterpret_cast<const W *>(b.A.ptr(i)), b.A.ldm(i),
                       reinterpret_cast<const W *>(b.x.ptr(i)), b.x.ldm(i), beta,
                       reinterpret_cast<W *>(b.y.ptr(i)), b.y.ldm(i), team,
                       plan::gemv_lanes(op == bsvd::device::op::N, b.dims.rows(i)));
}

} // namespace
} // namespace cuda

int cuda_memory_space(const void *p) {
  if (!p) return -2;
  if (!cuda_available()) return 0;
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return (a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged) ? 1 : 0;
}

namespace {
// Enqueues the kernel; the tables' device copy is freed (in stream order)
// when this returns, before a blocking call waits.
template <class T> bsvd_status_t enqueue_gemv(const GemvBatch<T> &batch, cudaStream_t stream) {
  using namespace cuda;
  // Threads: one per output entry (op N), or gemv_lanes per output.
  int lanes_out = 0;
  for (int i = 0; i < batch.count; ++i)
    lanes_out = std::max(
        lanes_out, batch.leny(i) * plan::gemv_lanes(batch.trans == BSVD_OP_N, batch.dims.rows(i)));
  GemvBatch<T> kb = batch;
  DeviceTables tables;
  tables.add(kb.A.array, kb.count);
  tables.add(kb.x.array, kb.count);
  tables.add(kb.y.array, kb.count);
  tables.add(kb.A.ldv, kb.count);
  tables.add(kb.x.ldv, kb.count);
  tables.add(kb.y.ldv, kb.count);
  tables.add(kb.dims.mv, kb.count);
  tables.add(kb.dims.nv, kb.count);
  BSVD_CUDA_TRY(tables.upload(stream));
  gemv_kernel<T><<<kb.count, plan::bidiag_threads(lanes_out), 0, stream>>>(kb, as_device(kb.alpha),
                                                                           as_device(kb.beta));
  BSVD_CUDA_TRY(cudaGetLastError());
  return BSVD_STATUS_SUCCESS;
}
} // namespace

template <class T> bsvd_status_t cuda_gemv(const GemvBatch<T> &batch, void *stream_ptr, Exec exec) {
  cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  BSVD_TRY_STATUS(enqueue_gemv(batch, stream));
  if (exec == Exec::kBlocking) BSVD_CUDA_TRY(cudaStreamSynchronize(stream));
  return BSVD_STATUS_SUCCESS;
}

#define BSVD_INSTANTIATE(T) template bsvd_status_t cuda_gemv<T>(const GemvBatch<T> &, void *, Exec);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail
