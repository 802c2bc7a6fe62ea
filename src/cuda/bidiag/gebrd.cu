// Batched GEBRD on the GPU (backends.hpp cuda_gebrd; bsvd.h, "Batched BLAS
// and LAPACK"), the on-chip regime: one thread block per matrix, the matrix
// and gebd2's work vector in shared memory, the device API's gebd2
// (gebrd.cuh) on block_team; d, e, tauq, taup written where they lie. A
// call whose largest matrix does not fit the device's opt-in shared memory
// is NOT_SUPPORTED before anything is enqueued: the blocked regime for
// those (LABRD panels with a GEMM update of the trailing matrix,
// MAGMA-BLAS Algorithm 1) is the next step of issue 50.
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

// Shared memory: 256 bytes of the team's reduction slots, then A (leading
// dimension m rounded up to odd, plan::gebrd_smem_ld: the op C GEMV's
// column per thread hits distinct banks), then the work vector.
template <class T, class W = bidiag_t<T>> __global__ void __launch_bounds__(plan::kBidiagMaxThreads)
    gebrd_kernel(GebrdBatch<T> b) {
  using R = real_of_t<T>;
  extern __shared__ __align__(16) unsigned char gebrd_smem[];
  const bsvd::device::block_team<R> team{reinterpret_cast<R *>(gebrd_smem)};
  W *sA = reinterpret_cast<W *>(gebrd_smem + 256);
  for (int i = blockIdx.x; i < b.count; i += gridDim.x) {
    const int m = b.dims.rows(i), n = b.dims.cols(i), k = m < n ? m : n;
    if (k == 0) {
      if (team.rank() == 0) b.info[i] = 0;
      continue;
    }
    const int lds = m | 1, lda = b.A.ldm(i);
    W *A = reinterpret_cast<W *>(b.A.ptr(i)), *work = sA + size_t(lds) * n;
    for (int t = team.rank(); t < m * n; t += team.size())
      sA[t % m + size_t(t / m) * lds] = A[t % m + size_t(t / m) * lda];
    team.sync();
    R *d = b.d.ptr(i), *e = b.e.ptr(i);
    bsvd::device::gebd2(m, n, sA, lds, d, e, reinterpret_cast<W *>(b.tauq.ptr(i)),
                        reinterpret_cast<W *>(b.taup.ptr(i)), work, team);
    for (int t = team.rank(); t < m * n; t += team.size())
      A[t % m + size_t(t / m) * lda] = sA[t % m + size_t(t / m) * lds];
    // (gebd2's single writer of d and e is rank 0: it reads them back.)
    if (team.rank() == 0) {
      bool finite = true;
      for (int j = 0; j < k; ++j)
        finite = finite && bsvd::device::detail::finite(d[j]) &&
                 (j + 1 >= k || bsvd::device::detail::finite(e[j]));
      b.info[i] = finite ? 0 : BSVD_INFO_NONFINITE;
    }
    team.sync(); // (the next matrix overwrites sA)
  }
}

// The largest shared-memory need of the batch and its matrix (-1: none).
template <class T> size_t batch_smem(const GebrdBatch<T> &b, int &which, int &len) {
  size_t most = 256;
  which = -1, len = 1;
  for (int i = 0; i < b.count; ++i) {
    const int m = b.dims.rows(i), n = b.dims.cols(i);
    if (std::min(m, n) == 0) continue;
    len = std::max({len, m, n});
    const size_t s = plan::gebrd_smem_bytes(m, n, sizeof(T));
    if (s > most) most = s, which = i;
  }
  return most;
}

template <class T>
bsvd_status_t enqueue_gebrd(const GebrdBatch<T> &batch, size_t smem, int len, cudaStream_t s) {
  GebrdBatch<T> kb = batch;
  DeviceTables tables;
  tables.add(kb.A.array, kb.count);
  tables.add(kb.d.array, kb.count);
  tables.add(kb.e.array, kb.count);
  tables.add(kb.tauq.array, kb.count);
  tables.add(kb.taup.array, kb.count);
  tables.add(kb.A.ldv, kb.count);
  tables.add(kb.dims.mv, kb.count);
  tables.add(kb.dims.nv, kb.count);
  BSVD_CUDA_TRY(tables.upload(s));
  if (smem > 48 * 1024)
    BSVD_CUDA_TRY(cudaFuncSetAttribute(gebrd_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       int(smem)));
  gebrd_kernel<T><<<kb.count, plan::bidiag_threads(len), smem, s>>>(kb);
  BSVD_CUDA_TRY(cudaGetLastError());
  return BSVD_STATUS_SUCCESS;
}

} // namespace
} // namespace cuda

template <class T>
bsvd_status_t cuda_gebrd(const GebrdBatch<T> &batch, void *stream_ptr, Exec exec) {
  using namespace cuda;
  cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  int which = -1, len = 1;
  const size_t smem = batch_smem(batch, which, len);
  const int limit = max_smem_optin();
  if (smem > size_t(limit)) {
    set_error("gebrd: matrix %d (%d x %d) needs %zu bytes of shared memory, above this GPU's %d "
              "per block; the cuda backend's GEBRD holds the whole matrix on chip, and the "
              "blocked regime for larger matrices is not built yet (use host data: the cpu "
              "backend takes every size)",
              which, batch.dims.rows(which), batch.dims.cols(which), smem, limit);
    return BSVD_STATUS_NOT_SUPPORTED;
  }
  BSVD_TRY_STATUS(enqueue_gebrd(batch, smem, len, stream));
  if (exec == Exec::kBlocking) BSVD_CUDA_TRY(cudaStreamSynchronize(stream));
  return BSVD_STATUS_SUCCESS;
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template bsvd_status_t cuda_gebrd<T>(const GebrdBatch<T> &, void *, Exec);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail
