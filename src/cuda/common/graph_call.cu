// graph_call.hpp.
#include "graph_call.hpp"

#include <algorithm>
#include <utility>

namespace bsvd::detail::cuda {

namespace {

struct Cached {
  int device;
  cudaGraphExec_t exec;
  std::string key; // the call it was made or updated for; empty: none to replay
  std::vector<int> path;
};

std::vector<Cached> &cache() {
  thread_local std::vector<Cached> c; // most recently used last
  return c;
}

void touch(std::vector<Cached> &c, size_t i) {
  std::rotate(c.begin() + long(i), c.begin() + long(i) + 1, c.end());
}

// The entry of an executable graph of g: a cached one updated to g, else a
// new one (the oldest destroyed to make room).
cudaError_t executable(cudaGraph_t g, int dev, Cached *&out) {
  std::vector<Cached> &c = cache();
  for (size_t i = c.size(); i-- > 0;) {
    if (c[i].device != dev) continue;
    cudaGraphExecUpdateResultInfo info{};
    if (cudaGraphExecUpdate(c[i].exec, g, &info) == cudaSuccess) {
      touch(c, i);
      out = &c.back();
      return cudaSuccess;
    }
    cudaGetLastError(); // (another shape)
    c[i].key.clear(); // (a failed update is not documented to leave it as it was)
  }
  cudaGraphExec_t x = nullptr;
  if (cudaError_t e = cudaGraphInstantiate(&x, g, 0)) return e;
  if (c.size() >= GraphCall::kGraphCacheSize) {
    cudaGraphExecDestroy(c.front().exec);
    c.erase(c.begin());
  }
  c.push_back({dev, x, {}, {}});
  out = &c.back();
  return cudaSuccess;
}

} // namespace

bool GraphCall::replay(const std::string &key, cudaStream_t stream, int *path, cudaError_t *error) {
  if (key.empty()) return false;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  std::vector<Cached> &c = cache();
  for (size_t i = c.size(); i-- > 0;) {
    if (c[i].device != dev || c[i].key != key) continue;
    touch(c, i);
    const Cached &hit = c.back();
    if (cudaError_t e = cudaGraphLaunch(hit.exec, stream)) {
      *error = e;
      return false;
    }
    if (path) std::copy(hit.path.begin(), hit.path.end(), path);
    return true;
  }
  return false;
}

GraphCall::~GraphCall() {
  if (capturing_) {
    cudaGraph_t g = nullptr;
    cudaStreamEndCapture(s_.stream, &g);
    if (g) cudaGraphDestroy(g);
    cudaGetLastError();
  }
  if (s_.stream) SideStreamPool::release(s_);
}

cudaError_t GraphCall::begin() {
  if (cudaError_t e = SideStreamPool::acquire(s_)) return e;
  if (cudaError_t e = cudaStreamBeginCapture(s_.stream, cudaStreamCaptureModeThreadLocal)) return e;
  capturing_ = true;
  return cudaSuccess;
}

cudaError_t GraphCall::launch(std::string key, std::vector<int> path) {
  cudaGraph_t g = nullptr;
  capturing_ = false;
  if (cudaError_t e = cudaStreamEndCapture(s_.stream, &g)) return e;
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  Cached *entry = nullptr;
  if (e == cudaSuccess) e = executable(g, dev, entry);
  cudaGraphDestroy(g);
  if (e != cudaSuccess) return e;
  // The entry holds this call's parameters now, whatever it held before.
  entry->key = std::move(key);
  entry->path = std::move(path);
  if ((e = cudaGraphLaunch(entry->exec, caller_))) entry->key.clear();
  return e;
}

} // namespace bsvd::detail::cuda
