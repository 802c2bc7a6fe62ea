// The per-device cache of device_info.hpp.
#include "device_info.hpp"

#include "../../core/overrides.hpp"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#ifndef BSVD_CUDA_ARCHS
#define BSVD_CUDA_ARCHS "unknown" // (CMakeLists.txt defines it: CMAKE_CUDA_ARCHITECTURES)
#endif

namespace bsvd::detail::cuda {

namespace {

struct Cache {
  std::mutex mutex;
  std::vector<char> known; // per device ordinal: queried and kept
  std::vector<plan::DeviceDesc> desc;
  std::vector<char> checked; // per device ordinal: device_supported answered for good
  std::vector<std::string> unsupported; // its answer ("" supported)
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
  // The facts only the fallback tables and `bsvd plan` read: a failed
  // query leaves them unknown rather than failing the description.
  if (cudaDeviceGetAttribute(&v, cudaDevAttrClusterLaunch, dev) == cudaSuccess)
    d.cluster_launch = v ? 1 : 0;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrSingleToDoublePrecisionPerfRatio, dev) == cudaSuccess)
    d.fp64_ratio = v;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrL2CacheSize, dev) == cudaSuccess) d.l2_bytes = v;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, dev) == cudaSuccess)
    std::snprintf(d.name, sizeof d.name, "%s", prop.name);
  cudaGetLastError();
  return true;
}

// The override BSVD_DEVICE_AS, applied to the facts as read (the cache
// keeps the GPU's own: the overrides may change between calls).
plan::DeviceDesc as_overridden(plan::DeviceDesc d) {
  if (const int arch = current_overrides().device_as) plan::device_as(d, arch);
  return d;
}

// A kernel of this library's own image: whether the CUDA runtime can run it
// on a device is whether the build holds SASS for the device's
// architecture, or PTX it can compile (every .cu file is built for the same
// CMAKE_CUDA_ARCHITECTURES, so one kernel answers for all).
__global__ void bsvd_image_probe_kernel() {}

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
      out = as_overridden(c.desc[size_t(dev)]);
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
  out = as_overridden(d);
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

const char *compiled_archs() { return BSVD_CUDA_ARCHS; }

namespace {
// Why device `dev` cannot run this build ("" when it can); final: the
// answer holds for the process (a failed query, say of a GPU busy in
// exclusive mode, is asked again next time).
std::string check_support(int dev, bool &final) {
  final = false;
  plan::DeviceDesc d;
  char buf[640];
  if (!device_desc(dev, d)) {
    std::snprintf(buf, sizeof buf, "GPU %d: its properties could not be read", dev);
    return buf;
  }
  // the GPU's own compute capability, also under BSVD_DEVICE_AS
  const int major = d.real_cc_major ? d.real_cc_major : d.cc_major;
  const int minor = d.real_cc_major ? d.real_cc_minor : d.cc_minor;
  char who[192];
  std::snprintf(who, sizeof who, "GPU %d (%s, compute capability %d.%d)", dev,
                d.name[0] ? d.name : "unnamed", major, minor);
  if (major < kMinCcMajor) {
    final = true;
    std::snprintf(buf, sizeof buf,
                  "%s is not supported: bsvd needs compute capability 8.0 or newer "
                  "(this build holds CUDA architectures %s)",
                  who, compiled_archs());
    return buf;
  }
  int prev = -1;
  if (cudaGetDevice(&prev) != cudaSuccess) prev = -1;
  cudaError_t e = prev == dev ? cudaSuccess : cudaSetDevice(dev);
  cudaFuncAttributes a{};
  if (e == cudaSuccess) e = cudaFuncGetAttributes(&a, bsvd_image_probe_kernel);
  cudaGetLastError();
  if (prev >= 0 && prev != dev) cudaSetDevice(prev);
  if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidDeviceFunction) {
    final = true;
    std::snprintf(buf, sizeof buf,
                  "%s has no kernel image in this build of bsvd (built for CUDA architectures "
                  "%s; rebuild with -DCMAKE_CUDA_ARCHITECTURES=%d%d or native): %s",
                  who, compiled_archs(), major, minor, cudaGetErrorName(e));
    return buf;
  }
  if (e == cudaErrorUnsupportedPtxVersion || e == cudaErrorInvalidPtx) {
    final = true;
    std::snprintf(buf, sizeof buf,
                  "%s has no SASS in this build of bsvd (CUDA architectures %s), and the "
                  "driver cannot compile its PTX (a driver older than the toolkit?): %s",
                  who, compiled_archs(), cudaGetErrorName(e));
    return buf;
  }
  if (e != cudaSuccess) {
    std::snprintf(buf, sizeof buf, "%s: checking this build's kernel image failed: %s", who,
                  cudaGetErrorName(e));
    return buf;
  }
  final = true;
  return "";
}
} // namespace

bool device_supported(int dev, std::string *why) {
  if (dev < 0) {
    if (why) *why = "no CUDA device is current";
    return false;
  }
  Cache &c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (size_t(dev) < c.checked.size() && c.checked[size_t(dev)]) {
      if (why) *why = c.unsupported[size_t(dev)];
      return c.unsupported[size_t(dev)].empty();
    }
  }
  bool final = false;
  const std::string r = check_support(dev, final); // (unlocked: it calls device_desc)
  if (why) *why = r;
  if (!final) return false;
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.checked.size() <= size_t(dev)) {
    c.checked.resize(size_t(dev) + 1, 0);
    c.unsupported.resize(size_t(dev) + 1);
  }
  c.checked[size_t(dev)] = 1;
  c.unsupported[size_t(dev)] = r;
  return r.empty();
}

bool current_device_supported(std::string *why) {
  int dev = -1;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    cudaGetLastError();
    dev = -1;
  }
  return device_supported(dev, why);
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
