// Fused kernel instances for one precision (one file each: parallel builds).
#include "kernel.cuh"

namespace bsvd::detail::cuda {

template <> cudaError_t launch_fused<std::complex<float>>(const FusedParams<std::complex<float>> &P,
                                                          FusedShape shape, cudaStream_t stream) {
  return launch_fused_impl<std::complex<float>, false>(P, shape, stream);
}

} // namespace bsvd::detail::cuda
