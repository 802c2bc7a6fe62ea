// device_as (device.hpp): the facts of a GPU generation, for the override
// BSVD_DEVICE_AS and the planner's tests.
#include "device.hpp"

#include <algorithm>

namespace bsvd::detail::plan {

namespace {
struct Generation {
  int arch, cc_major, cc_minor;
  int smem_optin; // cudaDevAttrMaxSharedMemoryPerBlockOptin
  int clusters; // cudaDevAttrClusterLaunch
  int fp64_ratio; // of its consumer parts where the generation has both
};
// The CUDA Programming Guide's table of compute capabilities: 163 KiB of
// shared memory per block on 8.0, 99 KiB on 8.6, 8.9 and 12.0, 227 KiB on
// 9.0 and 10.0; clusters from 9.0.
constexpr Generation kGenerations[] = {
    {80, 8, 0, 163 * 1024, 0, 2}, {86, 8, 6, 99 * 1024, 0, 64},   {89, 8, 9, 99 * 1024, 0, 64},
    {90, 9, 0, 227 * 1024, 1, 2}, {100, 10, 0, 227 * 1024, 1, 2}, {120, 12, 0, 99 * 1024, 1, 64},
};
} // namespace

bool device_as(DeviceDesc &d, int arch) {
  for (const Generation &g : kGenerations) {
    if (g.arch != arch) continue;
    const bool had_clusters = d.clusters();
    if (d.real_cc_major == 0) {
      d.real_cc_major = d.cc_major;
      d.real_cc_minor = d.cc_minor;
    }
    d.cc_major = g.cc_major;
    d.cc_minor = g.cc_minor;
    d.smem_optin = std::min(d.smem_optin, g.smem_optin);
    d.cluster_launch = had_clusters && g.clusters ? 1 : 0;
    d.fp64_ratio = std::max(d.fp64_ratio, g.fp64_ratio);
    return true;
  }
  return false;
}

} // namespace bsvd::detail::plan
