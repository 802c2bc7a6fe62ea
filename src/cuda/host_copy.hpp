// Host-side helpers of the host-data path (backend.cu): the host memory of
// the packed copies, and large copies on several threads.
#pragma once

#include "../core/batch.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <cuda_runtime.h>

namespace bsvd::detail::cuda {

// Host memory of one packed batch: pageable for a call copied at once,
// page-locked for the streamed chunks, whose copies then run beside the
// solve (a copy from pageable memory keeps the host until it is staged).
class HostBytes {
public:
  HostBytes() = default;
  HostBytes(const HostBytes &) = delete;
  HostBytes &operator=(const HostBytes &) = delete;
  ~HostBytes() { release(); }

  // At least n bytes of the kind asked for (contents not kept).
  cudaError_t reserve(size_t n, bool pinned) {
    if (n <= size_ && pinned == pinned_) return cudaSuccess;
    release();
    n = std::max<size_t>(n, 1);
    if (pinned) {
      if (cudaError_t e = cudaHostAlloc(&p_, n, cudaHostAllocDefault)) {
        p_ = nullptr;
        return e;
      }
    } else if (!(p_ = std::malloc(n))) {
      return cudaErrorMemoryAllocation;
    }
    size_ = n;
    pinned_ = pinned;
    return cudaSuccess;
  }
  unsigned char *data() const { return static_cast<unsigned char *>(p_); }

private:
  void release() {
    if (p_) pinned_ ? (void)cudaFreeHost(p_) : std::free(p_);
    p_ = nullptr;
    size_ = 0;
  }
  void *p_ = nullptr;
  size_t size_ = 0;
  bool pinned_ = false;
};

// memcpy of a large block on several threads: one thread copies host
// memory at ~10 GB/s, under what PCIe moves (the streamed host path packs
// each chunk while the previous one is on the GPU).
inline void copy_bytes(void *dst, const void *src, size_t bytes) {
  constexpr size_t kPerThread = size_t(16) << 20;
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const size_t nt = std::min<size_t>({bytes / kPerThread, size_t(hw / 2), 8});
  if (nt < 2) {
    std::memcpy(dst, src, bytes);
    return;
  }
  std::vector<std::thread> th;
  const size_t per = (bytes + nt - 1) / nt;
  for (size_t t = 0; t < nt; ++t) {
    const size_t a = t * per, b = std::min(bytes, a + per);
    if (a < b)
      th.emplace_back([=] {
        std::memcpy(static_cast<char *>(dst) + a, static_cast<const char *>(src) + a, b - a);
      });
  }
  for (std::thread &t : th) t.join();
}

} // namespace bsvd::detail::cuda
