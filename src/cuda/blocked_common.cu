// Blocked path: the precision-independent host parts (sizes, profiling).
#include "blocked_kernel.cuh"

#include <cstdlib>
#include <cstring>

namespace bsvd::detail::cuda {

int blocked_nb(const Config &cfg) {
  if (cfg.block_size <= 0) return kBlockedDefaultNb;
  return cfg.block_size <= kBlockedKmax / 2 ? cfg.block_size : 0;
}

size_t blocked_workspace_bytes(const std::vector<int> &m, const std::vector<int> &n,
                               bool vectors, size_t elem_bytes, int nb) {
  if (m.empty()) return 0;
  return blk_layout(m, n, vectors, elem_bytes, nb).total;
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
