// Batched TRSV on the GPU (backends.hpp cuda_trsv; bsvd.h, "Batched BLAS:
// TRSV"): one thread block per matrix, the device API's trsv (trsv.cuh) on
// block_team -- the one-level blocked scheme: each diagonal block staged in
// shared memory and solved by the block's first warp, the off-diagonal
// updates by blas.cuh's gemv (one output entry per thread) from A where it
// lies in global memory. The paper's recursive blocking (MAGMA-BLAS §6.1)
// and several threads per column of the op T / C updates are the later
// steps.
#include "../../core/backends.hpp"
#include "../../plan/bidiag.hpp"
#include "../operation.hpp"
#include "common.cuh"
#include "tables.hpp"

#include <bsvd/device/trsv.cuh>

#include <algorithm>
#include <complex>

#include <cuda_runtime.h>

namespace bsvd::detail {

namespace cuda {
namespace {

template <class T, class W = bidiag_t<T>> __global__ void __launch_bounds__(plan::kBidiagMaxThreads)
    trsv_kernel(TrsvBatch<T> b) {
  using R = real_of_t<T>;
  __shared__ R scratch[32]; // block_team's reduction slots (the zero-pivot check)
  // The staging area of the diagonal blocks (trsv.cuh: same bits, the
  // lead warp's solve reads shared memory instead of A and x).
  constexpr int kWork = bsvd::device::trsv_work(bsvd::device::kTrsvBlock);
  __shared__ alignas(16) unsigned char work_bytes[kWork * sizeof(W)];
  W *work = reinterpret_cast<W *>(work_bytes);
  const bsvd::device::block_team<R> team{scratch};
  const bsvd::device::op op = device_op(b.trans);
  const bsvd::device::uplo ul =
      b.uplo == BSVD_UPLO_L ? bsvd::device::uplo::L : bsvd::device::uplo::U;
  const bsvd::device::diag dg =
      b.diag == BSVD_DIAG_N ? bsvd::device::diag::N : bsvd::device::diag::U;
  for (int i = blockIdx.x; i < b.count; i += gridDim.x) {
    const int info = bsvd::device::trsv(
        ul, op, dg, b.order(i), reinterpret_cast<const W *>(b.A.ptr(i)), b.A.ldm(i),
        reinterpret_cast<W *>(b.x.ptr(i)), b.x.ldm(i), team, bsvd::device::kTrsvBlock, work);
    if (team.rank() == 0) b.info[i] = info;
  }
}

// Enqueues the kernel; the tables' device copy is freed (in stream order)
// when this returns, before a blocking call waits.
template <class T> bsvd_status_t enqueue_trsv(const TrsvBatch<T> &batch, cudaStream_t stream) {
  int n = 0;
  for (int i = 0; i < batch.count; ++i) n = std::max(n, batch.order(i));
  TrsvBatch<T> kb = batch;
  DeviceTables tables;
  tables.add(kb.A.array, kb.count);
  tables.add(kb.x.array, kb.count);
  tables.add(kb.A.ldv, kb.count);
  tables.add(kb.x.ldv, kb.count);
  // (mv and nv are the same host array: one copy serves both)
  tables.add(kb.dims.nv, kb.count);
  BSVD_CUDA_TRY(tables.upload(stream));
  kb.dims.mv = kb.dims.nv;
  trsv_kernel<T><<<kb.count, plan::bidiag_threads(n), 0, stream>>>(kb);
  BSVD_CUDA_TRY(cudaGetLastError());
  return BSVD_STATUS_SUCCESS;
}

} // namespace
} // namespace cuda

template <class T> bsvd_status_t cuda_trsv(const TrsvBatch<T> &batch, void *stream_ptr, Exec exec) {
  cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  BSVD_TRY_STATUS(cuda::enqueue_trsv(batch, stream));
  if (exec == Exec::kBlocking) BSVD_CUDA_TRY(cudaStreamSynchronize(stream));
  return BSVD_STATUS_SUCCESS;
}

#define BSVD_INSTANTIATE(T) template bsvd_status_t cuda_trsv<T>(const TrsvBatch<T> &, void *, Exec);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail
