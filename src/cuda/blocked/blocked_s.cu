// Blocked-path instance for one precision (one file each: parallel builds).
#include "driver.cuh"

namespace bsvd::detail::cuda {

template <> cudaError_t run_blocked<float>(const Batch<float> &kb, const std::vector<int> &idx,
                                           const std::vector<int> &m, const std::vector<int> &n,
                                           const plan::BlockedPlan &bp, const plan::Plan &p,
                                           cudaStream_t stream, unsigned char *ws,
                                           const int *hnplus) {
  return run_blocked_any(kb, idx, m, n, bp, p, stream, ws, hnplus);
}

} // namespace bsvd::detail::cuda
