// The blocked path's hyperbolic (HSVD) instances for one precision (hyp.hpp).
#include "finish.cuh"
#include "hyp.hpp"
#include "pair_hyp.cuh"

#include <complex>

namespace bsvd::detail::cuda {

template <>
cudaError_t blk_hyp_configure<std::complex<double>>(size_t pair_smem, size_t finish_smem) {
  if (pair_smem) {
    const cudaError_t e =
        cudaFuncSetAttribute(blk_pair_hyp_kernel<std::complex<double>, kBlockedKmax>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize, int(pair_smem));
    if (e != cudaSuccess) return e;
  }
  if (finish_smem > 48 * 1024)
    return cudaFuncSetAttribute(blk_finish_kernel<std::complex<double>, true>,
                                cudaFuncAttributeMaxDynamicSharedMemorySize, int(finish_smem));
  return cudaSuccess;
}

template <> void blk_hyp_pair_launch<std::complex<double>>(const BlkParams<std::complex<double>> &P,
                                                           unsigned grid, size_t smem,
                                                           cudaStream_t st) {
  blk_pair_hyp_kernel<std::complex<double>, kBlockedKmax><<<grid, 256, smem, st>>>(P);
}

template <>
void blk_hyp_finish_launch<std::complex<double>>(const BlkParams<std::complex<double>> &P,
                                                 unsigned grid, size_t smem, cudaStream_t st) {
  blk_finish_kernel<std::complex<double>, true><<<grid, kFinishThreads, smem, st>>>(P);
}

} // namespace bsvd::detail::cuda
