// Blocked path: the precision-independent host parts (sizes, profiling).
#include "blocked_kernel.cuh"
#include "fused.hpp"
#include "tuning.hpp"

#include <complex>

#include <cstdlib>
#include <cstring>

namespace bsvd::detail::cuda {

int blocked_nb(const Config &cfg) {
  if (cfg.block_size <= 0) return kBlockedDefaultNb;
  return cfg.block_size <= kBlockedKmax / 2 ? cfg.block_size : 0;
}

namespace {
// Shared memory of the pair kernels for W's row count mw, by precision.
size_t pair_bytes(char precision, int mw) {
  constexpr int K = kBlockedKmax;
  switch (precision) {
  case 's': return pair_smem_bytes<dev_t<float>, K>(mw);
  case 'd': return pair_smem_bytes<dev_t<double>, K>(mw);
  case 'c': return pair_smem_bytes<dev_t<std::complex<float>>, K>(mw);
  default: return pair_smem_bytes<dev_t<std::complex<double>>, K>(mw);
  }
}
} // namespace

int blocked_pair_mode(char precision, int m, int n, const Config &cfg, int nb) {
  const int mw = std::max(m, n), nw = std::min(m, n);
  if (pair_bytes(precision, mw) > size_t(max_smem_optin())) return BSVD_PAIR_GRAM;
  if (cfg.pair_solver != BSVD_PAIR_AUTO) return cfg.pair_solver;
  return pair_solver_rule(precision, mw, nw, nb);
}

size_t blocked_workspace_bytes(const std::vector<int> &m, const std::vector<int> &n,
                               const std::vector<int> &mode, bool vectors, size_t elem_bytes,
                               int nb) {
  if (m.empty()) return 0;
  return blk_layout(m, n, vectors, elem_bytes, nb, blocked_gram_count(mode)).total;
}

namespace {
thread_local BlockedProfile g_last;
int g_profiling = -1; // -1: read BSVD_PROFILE once
} // namespace

void set_blocked_profiling(bool on) { g_profiling = on ? 1 : 0; }

bool blocked_profiling_on() {
  if (g_profiling < 0) {
    const char *e = std::getenv("BSVD_PROFILE");
    g_profiling = (e && std::strcmp(e, "0") != 0) ? 1 : 0;
  }
  return g_profiling == 1;
}

void blocked_store_profile(const BlockedProfile &p) { g_last = p; }
BlockedProfile blocked_last_profile() { return g_last; }

} // namespace bsvd::detail::cuda
