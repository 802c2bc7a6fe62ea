// Launch shapes of the batched GEMV and GEBRD kernels (bidiag.hpp).
#include "bidiag.hpp"

#include <algorithm>

namespace bsvd::detail::plan {

int bidiag_threads(int len) {
  const int warps = std::max(1, (len + 31) / 32);
  return std::min(kBidiagMaxThreads, 32 * warps);
}

int gebrd_smem_ld(int m) { return std::max(1, m | 1); }

size_t gebrd_smem_bytes(int m, int n, size_t elem) {
  // 256 bytes of reduction slots first (32 doubles; keeps A 16-aligned).
  return 256 + (size_t(gebrd_smem_ld(m)) * size_t(n) + size_t(std::max(m, n))) * elem;
}

size_t bidiag_values_smem_bytes(int m, int n, size_t elem, size_t relem) {
  const size_t k = size_t(std::min(m, n));
  return gebrd_smem_bytes(m, n, elem) + 2 * k * elem + 4 * k * relem;
}

int gebrd_panels(int m, int n, int nb, size_t elem, size_t extra, size_t limit) {
  const int k = std::min(m, n);
  for (int p = 0; k > 0 && long(p) * nb < k; ++p) {
    const int mt = m - p * nb, nt = n - p * nb;
    if (gebrd_smem_bytes(mt, nt, elem) + size_t(std::min(mt, nt)) * extra <= limit) return p;
  }
  return k > 0 ? -1 : 0;
}

} // namespace bsvd::detail::plan
