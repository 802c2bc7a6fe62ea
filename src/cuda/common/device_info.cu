// The per-device cache of device_info.hpp.
#include "device_info.hpp"

#include <cuda_runtime.h>

#include <mutex>
#include <vector>

namespace bsvd::detail::cuda {

namespace {

struct Cache {
  std::mutex mutex;
  std::vector<char> known; // per device ordinal: queried and kept
  std::vector<plan::DeviceDesc> desc;
};
Cache &cache() {
  static Cache c; // (constructed on first use; holds no CUDA state)
  return c;
}

bool query(int dev, plan::DeviceDesc &d) {
  int v = 0;
  d = plan::DeviceDesc();
  d.id = dev;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess)
    return false;
  d.cc_major = v;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
    return false;
  d.cc_minor = v;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) return false;
  d.sm_count = v;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess)
    return false;
  d.smem_optin = v;
  return true;
}

} // namespace

// The devices a process sees are fixed when the CUDA runtime starts
// (CUDA_VISIBLE_DEVICES is read once), so the count is queried once.
bool gpu_visible() {
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError(); // (a sticky "no device" error would poison later calls)
      return 0;
    }
    return n;
  }();
  return count > 0;
}

bool device_desc(int dev, plan::DeviceDesc &out) {
  if (dev < 0) return false;
  Cache &c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (size_t(dev) < c.known.size() && c.known[size_t(dev)]) {
      out = c.desc[size_t(dev)];
      return true;
    }
  }
  plan::DeviceDesc d;
  if (!query(dev, d)) {
    cudaGetLastError();
    return false;
  }
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.known.size() <= size_t(dev)) {
    c.known.resize(size_t(dev) + 1, 0);
    c.desc.resize(size_t(dev) + 1);
  }
  c.known[size_t(dev)] = 1;
  c.desc[size_t(dev)] = d;
  out = d;
  return true;
}

bool current_device_desc(plan::DeviceDesc &out) {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return device_desc(dev, out);
}

int max_smem_optin() {
  plan::DeviceDesc d;
  return current_device_desc(d) ? d.smem_optin : 48 * 1024;
}

int sm_count() {
  plan::DeviceDesc d;
  return current_device_desc(d) ? d.sm_count : 1;
}

int cc_major() {
  plan::DeviceDesc d;
  return current_device_desc(d) ? d.cc_major : 0;
}

} // namespace bsvd::detail::cuda
