// Register-tier instances for one precision (one file each: parallel builds).
#include "lanes.cuh"

namespace bsvd::detail::cuda {

template <> cudaError_t launch_tiny<std::complex<double>>(const TinyParams<std::complex<double>> &P,
                                                          cudaStream_t stream) {
  return P.lanes ? launch_lanes_impl(P, stream) : launch_tiny_impl(P, stream);
}
template bool tiny_staged<std::complex<double>>(const TinyParams<std::complex<double>> &);

} // namespace bsvd::detail::cuda
