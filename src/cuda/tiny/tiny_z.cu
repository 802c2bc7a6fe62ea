// Register-tier instances for one precision (one file each: parallel builds).
#include "kernel.cuh"

namespace bsvd::detail::cuda {

template <> cudaError_t launch_tiny<std::complex<double>>(const TinyParams<std::complex<double>> &P,
                                                          cudaStream_t stream) {
  return launch_tiny_impl(P, stream);
}
template bool tiny_staged<std::complex<double>>(const TinyParams<std::complex<double>> &);

} // namespace bsvd::detail::cuda
