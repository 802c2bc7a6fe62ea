// graph_call.hpp.
#include "graph_call.hpp"

#include <algorithm>
#include <utility>

namespace bsvd::detail::cuda {

namespace {

struct Cached {
  int device;
  size_t nodes; // of the graph it was made from: an update needs the same topology
  cudaGraphExec_t exec;
  std::string key; // the call it was made or updated for; empty: none to replay
  std::vector<int> path;
};

std::vector<Cached> &cache() {
  thread_local std::vector<Cached> c; // most recently used last
  return c;
}

thread_local size_t replays = 0;

void touch(std::vector<Cached> &c, size_t i) {
  std::rotate(c.begin() + long(i), c.begin() + long(i) + 1, c.end());
}

// The entry of an executable graph of g: a new one while the cache has
// room, else the least recently used one, updated to g where it has g's
// node count (an update needs the same topology) and replaced otherwise.
// Not the most recent graph of g's shape, which an update-first cache would
// take: callers alternate between buffers (a framework's allocator hands out
// the next call's outputs while the last call's are alive), and one graph
// updated on every call would never replay.
cudaError_t executable(cudaGraph_t g, int dev, Cached *&out) {
  std::vector<Cached> &c = cache();
  size_t nodes = 0;
  if (cudaError_t e = cudaGraphGetNodes(g, nullptr, &nodes)) return e;
  if (c.size() >= GraphCall::kGraphCacheSize) {
    if (c.front().device == dev && c.front().nodes == nodes) {
      cudaGraphExecUpdateResultInfo info{};
      if (cudaGraphExecUpdate(c.front().exec, g, &info) == cudaSuccess) {
        touch(c, 0);
        out = &c.back();
        return cudaSuccess;
      }
      cudaGetLastError(); // (other kernels or node kinds)
    }
    // (a failed update is not documented to leave the graph as it was)
    cudaGraphExecDestroy(c.front().exec);
    c.erase(c.begin());
  }
  cudaGraphExec_t x = nullptr;
  if (cudaError_t e = cudaGraphInstantiate(&x, g, 0)) return e;
  c.push_back({dev, nodes, x, {}, {}});
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
    ++replays;
    return true;
  }
  return false;
}

size_t GraphCall::replay_count() { return replays; }

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
