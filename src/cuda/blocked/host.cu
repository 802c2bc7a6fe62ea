// The blocked path's precision-independent host parts: the pair kernels'
// shared memory, the workspace size, the cuBLAS Gram stage's handle and
// call, and the stage profile.
#include "evd_block.cuh" // EvdBlockSmem
#include "evd_lean.cuh" // EvdLeanSmem
#include "layout.hpp" // blk_layout, blocked_gram_count
#include "pair.cuh" // pair_smem_bytes
#include "timer.hpp" // blocked_store_profile

#include "../common/handles.hpp"

#include <cublas_v2.h>

#include <algorithm>
#include <complex>

namespace bsvd::detail::cuda {

size_t blocked_pair_smem_bytes(char precision, int mw) {
  constexpr int K = kBlockedKmax;
  switch (precision) {
  case 's': return pair_smem_bytes<dev_t<float>, K>(mw);
  case 'd': return pair_smem_bytes<dev_t<double>, K>(mw);
  case 'c': return pair_smem_bytes<dev_t<std::complex<float>>, K>(mw);
  default: return pair_smem_bytes<dev_t<std::complex<double>>, K>(mw);
  }
}

namespace {
template <class T, int K> size_t evd_smem_k(int threads) {
  if (threads == 32) // the warp plan: its kernel or the lean one (d), four warps a block
    return size_t(kEvdWarps) * std::max(sizeof(EvdWarpSmem<T, K>), sizeof(EvdLeanSmem<T, K>));
  return sizeof(EvdBlockSmem<T, K>); // 128 and 256 threads: one Gram matrix a block
}
template <class T> size_t evd_smem_t(int k, int threads) {
  return k == kBlockedKwide ? evd_smem_k<T, kBlockedKwide>(threads)
                            : evd_smem_k<T, kBlockedKmax>(threads);
}
} // namespace

size_t blocked_evd_smem_bytes(char precision, int k, int threads) {
  switch (precision) {
  case 's': return evd_smem_t<dev_t<float>>(k, threads);
  case 'd': return evd_smem_t<dev_t<double>>(k, threads);
  case 'c': return evd_smem_t<dev_t<std::complex<float>>>(k, threads);
  default: return evd_smem_t<dev_t<std::complex<double>>>(k, threads);
  }
}

size_t blocked_workspace_bytes(const std::vector<int> &m, const std::vector<int> &n,
                               const std::vector<int> &mode, bool vectors, size_t elem_bytes,
                               int nb, int wcycle_blocks, bool hyperbolic) {
  if (m.empty()) return 0;
  return blk_layout(m, n, vectors, elem_bytes, nb, blocked_gram_count(mode), blocked_k_of(nb),
                    wcycle_blocks, hyperbolic)
      .total;
}

bool gram_cublas_available() {
  cublasHandle_t h = nullptr;
  return cublas_handle(&h) == CUBLAS_STATUS_SUCCESS;
}

cudaError_t gram_gemm_batched(char precision, int nb, int mw, int ldc, const void *const *A,
                              const void *const *B, void *const *C, int count,
                              cudaStream_t stream) {
  cublasHandle_t h = nullptr;
  if (cublas_handle(&h) != CUBLAS_STATUS_SUCCESS) return cudaErrorNotSupported;
  if (cublasSetStream(h, stream) != CUBLAS_STATUS_SUCCESS) return cudaErrorUnknown;
  // alpha = 1, beta = 0 in the scale type (complex: {1, 0}, {0, 0})
  const double one_d[2] = {1, 0}, zero_d[2] = {0, 0};
  const float one_f[2] = {1, 0}, zero_f[2] = {0, 0};
  const bool dbl = precision == 'd' || precision == 'z';
  const bool cpx = precision == 'c' || precision == 'z';
  const cudaDataType_t ty = precision == 's'   ? CUDA_R_32F
                            : precision == 'd' ? CUDA_R_64F
                            : precision == 'c' ? CUDA_C_32F
                                               : CUDA_C_64F;
  // Single: the pedantic compute type (no TF32, also not through
  // NVIDIA_TF32_OVERRIDE). Double: plain FP64 (FP64 tensor-core products
  // are IEEE double operations; the emulated FP64 modes need their own
  // compute type or math mode, which bsvd never sets).
  const cublasComputeType_t ct = dbl ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F_PEDANTIC;
  const void *alpha = dbl ? static_cast<const void *>(one_d) : static_cast<const void *>(one_f);
  const void *beta = dbl ? static_cast<const void *>(zero_d) : static_cast<const void *>(zero_f);
  const cublasStatus_t st =
      cublasGemmBatchedEx(h, cpx ? CUBLAS_OP_C : CUBLAS_OP_T, CUBLAS_OP_N, nb, nb, mw, alpha, A, ty,
                          mw, B, ty, mw, beta, C, ty, ldc, count, ct, CUBLAS_GEMM_DEFAULT);
  return st == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
}

namespace {
thread_local BlockedProfile g_last;
} // namespace

void blocked_store_profile(const BlockedProfile &p) { g_last = p; }
BlockedProfile blocked_last_profile() { return g_last; }

} // namespace bsvd::detail::cuda
