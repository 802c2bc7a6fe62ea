// The fused kernel's hyperbolic (HSVD) instances for one precision: files
// of their own, so they build in parallel with the SVD's (fused_*.cu).
#include "kernel.cuh"

namespace bsvd::detail::cuda {

template <> cudaError_t launch_fused_hyp<float>(const FusedParams<float> &P, FusedShape shape,
                                                cudaStream_t stream) {
  return launch_fused_impl<float, true>(P, shape, stream);
}

} // namespace bsvd::detail::cuda
