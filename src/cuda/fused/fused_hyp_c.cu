// The fused kernel's hyperbolic (HSVD) instances for one precision: files
// of their own, so they build in parallel with the SVD's (fused_*.cu).
#include "kernel.cuh"

namespace bsvd::detail::cuda {

template <>
cudaError_t launch_fused_hyp<std::complex<float>>(const FusedParams<std::complex<float>> &P,
                                                  FusedShape shape, cudaStream_t stream) {
  return launch_fused_impl<std::complex<float>, true>(P, shape, stream);
}

} // namespace bsvd::detail::cuda
