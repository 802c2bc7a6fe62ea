// Batched GELS on the GPU (backends.hpp cuda_gels; bsvd.h, "Batched LAPACK:
// GELS"): one thread block per matrix runs gels_one (the device API's
// gels.cuh on block_team, then the factor's finiteness check) on A and B
// where they lie in device memory. Each block's tau and the two reflector
// vectors are in a stream-ordered workspace (a block's slot is reused by
// the matrices it takes in turn); the triangular solves stage their
// diagonal blocks in shared memory as the batched TRSV does. Also GELSD's
// solve step after its SVD (cuda_gelsd_apply, gelsd_one) and the
// stream-ordered scratch its API layer holds U and V in.
//
// This is the unblocked form: every reflector is a GEMV and a GERC over
// the rest of A from global memory (L2 for the small matrices of a batch).
// The blocked form -- panels of reflectors applied to the trailing matrix
// and to B as one GEMM (the compact WY form, LAPACK's xLARFB) -- is the
// step that large matrices need.
#include "../../core/backends.hpp"
#include "../../core/gels_one.hpp"
#include "../../plan/bidiag.hpp"
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
    gels_kernel(GelsBatch<T> b, T *work, int64_t wstride) {
  using R = real_of_t<T>;
  __shared__ R scratch[32]; // block_team's reduction slots
  constexpr int kStage = bsvd::device::trsv_work(bsvd::device::kTrsvBlock);
  __shared__ alignas(16) unsigned char stage_bytes[kStage * sizeof(W)];
  W *stage = reinterpret_cast<W *>(stage_bytes);
  W *mine = reinterpret_cast<W *>(work + int64_t(blockIdx.x) * wstride);
  const bsvd::device::block_team<R> team{scratch};
  for (int i = blockIdx.x; i < b.count; i += gridDim.x) {
    const int info = gels_one(b, i, mine, stage, team);
    if (team.rank() == 0) b.info[i] = info;
    team.sync(); // (the slot's next matrix overwrites what this one read)
  }
}

// The largest grid: enough blocks for every SM many times over; beyond it
// blocks take several matrices, and the workspace stays bounded.
constexpr int kMaxGrid = 1 << 16;

template <class T> bsvd_status_t enqueue_gels(const GelsBatch<T> &batch, cudaStream_t stream) {
  int len = 1;
  int64_t wstride = 1;
  for (int i = 0; i < batch.count; ++i) {
    const int m = batch.dims.rows(i), n = batch.dims.cols(i);
    len = std::max({len, m, n});
    wstride = std::max(wstride, int64_t(bsvd::device::gels_work(m, n, batch.rhs(i))));
  }
  wstride = (wstride + 1) / 2 * 2; // (16-byte slots for complex double)
  GelsBatch<T> kb = batch;
  DeviceTables tables;
  tables.add(kb.A.array, kb.count);
  tables.add(kb.B.array, kb.count);
  tables.add(kb.A.ldv, kb.count);
  tables.add(kb.B.ldv, kb.count);
  tables.add(kb.dims.mv, kb.count);
  tables.add(kb.dims.nv, kb.count);
  tables.add(kb.nrhsv, kb.count);
  BSVD_CUDA_TRY(tables.upload(stream));
  const int grid = std::min(kb.count, kMaxGrid);
  T *work = nullptr;
  BSVD_CUDA_TRY(cudaMallocAsync(reinterpret_cast<void **>(&work),
                                size_t(grid) * size_t(wstride) * sizeof(T), stream));
  gels_kernel<T><<<grid, plan::bidiag_threads(len), 0, stream>>>(kb, work, wstride);
  const cudaError_t e = cudaGetLastError();
  const cudaError_t f = cudaFreeAsync(work, stream);
  BSVD_CUDA_TRY(e);
  BSVD_CUDA_TRY(f);
  return BSVD_STATUS_SUCCESS;
}

// GELSD's solve step (gelsd_one): one block per matrix, c = U^H b in
// shared memory up to kGelsdSmemK values, in a global workspace beyond.
constexpr int kGelsdSmemK = 1024;

template <class T, class W = bidiag_t<T>> __global__ void __launch_bounds__(plan::kBidiagMaxThreads)
    gelsd_apply_kernel(GelsdBatch<T> b, T *work, int64_t wstride) {
  using R = real_of_t<T>;
  __shared__ R scratch[32];
  __shared__ alignas(16) unsigned char c_bytes[kGelsdSmemK * sizeof(W)];
  W *c = work ? reinterpret_cast<W *>(work + int64_t(blockIdx.x) * wstride)
              : reinterpret_cast<W *>(c_bytes);
  const bsvd::device::block_team<R> team{scratch};
  for (int i = blockIdx.x; i < b.count; i += gridDim.x) {
    const int rank = gelsd_one(b, i, c, team);
    if (team.rank() == 0) b.rank[i] = rank;
    team.sync();
  }
}

template <class T> bsvd_status_t enqueue_gelsd_apply(const GelsdBatch<T> &b, cudaStream_t stream) {
  int len = 1, kmax = 1;
  for (int i = 0; i < b.count; ++i) {
    const int m = b.dims.rows(i), n = b.dims.cols(i);
    len = std::max({len, m, n}), kmax = std::max(kmax, std::min(m, n));
  }
  const int grid = std::min(b.count, kMaxGrid);
  T *work = nullptr;
  const int64_t wstride = (kmax + 1) / 2 * 2;
  if (kmax > kGelsdSmemK)
    BSVD_CUDA_TRY(cudaMallocAsync(reinterpret_cast<void **>(&work),
                                  size_t(grid) * size_t(wstride) * sizeof(T), stream));
  gelsd_apply_kernel<T><<<grid, plan::bidiag_threads(len), 0, stream>>>(b, work, wstride);
  const cudaError_t e = cudaGetLastError();
  const cudaError_t f = work ? cudaFreeAsync(work, stream) : cudaSuccess;
  BSVD_CUDA_TRY(e);
  BSVD_CUDA_TRY(f);
  return BSVD_STATUS_SUCCESS;
}

} // namespace
} // namespace cuda

template <class T> bsvd_status_t cuda_gels(const GelsBatch<T> &batch, void *stream_ptr, Exec exec) {
  cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  BSVD_TRY_STATUS(cuda::enqueue_gels(batch, stream));
  if (exec == Exec::kBlocking) BSVD_CUDA_TRY(cudaStreamSynchronize(stream));
  return BSVD_STATUS_SUCCESS;
}

template <class T>
bsvd_status_t cuda_gelsd_apply(const GelsdBatch<T> &batch, void *stream_ptr, Exec exec) {
  cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  BSVD_TRY_STATUS(cuda::enqueue_gelsd_apply(batch, stream));
  if (exec == Exec::kBlocking) BSVD_CUDA_TRY(cudaStreamSynchronize(stream));
  return BSVD_STATUS_SUCCESS;
}

bsvd_status_t cuda_scratch_alloc(void **p, size_t bytes, void *stream) {
  BSVD_CUDA_TRY(cudaMallocAsync(p, bytes, static_cast<cudaStream_t>(stream)));
  return BSVD_STATUS_SUCCESS;
}

bsvd_status_t cuda_scratch_free(void *p, void *stream) {
  if (p) BSVD_CUDA_TRY(cudaFreeAsync(p, static_cast<cudaStream_t>(stream)));
  return BSVD_STATUS_SUCCESS;
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template bsvd_status_t cuda_gels<T>(const GelsBatch<T> &, void *, Exec);                         \
  template bsvd_status_t cuda_gelsd_apply<T>(const GelsdBatch<T> &, void *, Exec);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail
