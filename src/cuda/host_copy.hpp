// Host-side helpers of the host-data path (backend.cu): the host memory of
// the packed copies, and large copies on several threads.
#pragma once

#include "../core/batch.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

namespace bsvd::detail::cuda {

// Page-locked buffers a thread keeps between calls. Pinning is slow (about
// 0.1 s per 400 MiB, and slower while several GPUs' threads pin at once),
// and a loop of calls, or the worker threads of a split batch
// (core/split.hpp), would pin the same staging again each call: a released
// buffer is kept for the thread's next call, at most kKeep of them and
// kKeepBytes in all (the streamed path's two slots fit), and freed when
// the thread ends.
class PinnedCache {
public:
  static constexpr size_t kKeep = 2, kKeepBytes = size_t(1) << 30;
  static PinnedCache &mine() {
    thread_local PinnedCache c;
    return c;
  }
  // The smallest kept buffer of at least n bytes, removed from the cache.
  bool take(size_t n, void *&p, size_t &size) {
    size_t best = kept_.size();
    for (size_t i = 0; i < kept_.size(); ++i)
      if (kept_[i].second >= n && (best == kept_.size() || kept_[i].second < kept_[best].second))
        best = i;
    if (best == kept_.size()) return false;
    p = kept_[best].first;
    size = kept_[best].second;
    kept_.erase(kept_.begin() + long(best));
    return true;
  }
  // Keeps p, or frees it (or a smaller kept one) beyond the limits.
  void give(void *p, size_t size) {
    kept_.push_back({p, size});
    for (;;) {
      size_t total = 0, smallest = 0;
      for (size_t i = 0; i < kept_.size(); ++i) {
        total += kept_[i].second;
        if (kept_[i].second < kept_[smallest].second) smallest = i;
      }
      if (kept_.size() <= kKeep && total <= kKeepBytes) return;
      cudaFreeHost(kept_[smallest].first);
      kept_.erase(kept_.begin() + long(smallest));
    }
  }
  ~PinnedCache() {
    for (auto &k : kept_) cudaFreeHost(k.first); // (an error at process exit is ignored)
    cudaGetLastError();
  }

private:
  std::vector<std::pair<void *, size_t>> kept_;
};

// Host memory of one packed batch: pageable for a call copied at once,
// page-locked for the streamed chunks, whose copies then run beside the
// solve (a copy from pageable memory keeps the host until it is staged).
// Page-locked memory comes from and goes back to the thread's PinnedCache.
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
      if (!PinnedCache::mine().take(n, p_, size_)) {
        // (portable: a later call of the thread may run on another device)
        if (cudaError_t e = cudaHostAlloc(&p_, n, cudaHostAllocPortable)) {
          p_ = nullptr;
          return e;
        }
        size_ = n;
      }
    } else {
      if (!(p_ = std::malloc(n))) return cudaErrorMemoryAllocation;
      size_ = n;
    }
    pinned_ = pinned;
    return cudaSuccess;
  }
  unsigned char *data() const { return static_cast<unsigned char *>(p_); }

private:
  void release() {
    if (p_) pinned_ ? PinnedCache::mine().give(p_, size_) : std::free(p_);
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
