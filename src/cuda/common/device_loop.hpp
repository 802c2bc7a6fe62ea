// A loop whose trip count the device decides, for stream-ordered calls:
// a CUDA graph conditional node of type while. Its body is one iteration's
// work, captured once; a kernel of the body (or before it) sets the
// condition with cudaGraphSetConditional(handle, keep_going). The loop needs
// a stream that is being captured: the caller's own capture (a call inside
// cudaStreamBeginCapture), or the one an uncaptured call makes for itself
// (GraphCall below). Needs CUDA 12.4 (conditional nodes in stream capture).
//
//   DeviceWhile loop;
//   loop.create(stream);                       // the handle
//   start_kernel<<<..., stream>>>(loop.handle());  // sets the first condition
//   loop.add(stream, [&](cudaStream_t body) { /* one iteration on body */ });
#pragma once

#include "side_stream.hpp"

#include <cuda_runtime.h>

#include <vector>

namespace bsvd::detail::cuda {

class DeviceWhile {
public:
  // The condition's handle, in the graph `stream` is captured into.
  cudaError_t create(cudaStream_t stream) {
    cudaStreamCaptureStatus st;
    cudaGraph_t graph = nullptr;
    if (cudaError_t e = cudaStreamGetCaptureInfo(stream, &st, nullptr, &graph)) return e;
    if (st != cudaStreamCaptureStatusActive) return cudaErrorStreamCaptureUnsupported;
    return cudaGraphConditionalHandleCreate(&handle_, graph, 0, 0);
  }
  cudaGraphConditionalHandle handle() const { return handle_; }

  // The while node after what `stream` has captured so far (later work on
  // stream follows the whole loop); body(s) enqueues one iteration on s.
  template <class Body> cudaError_t add(cudaStream_t stream, Body &&body) {
    cudaStreamCaptureStatus st;
    cudaGraph_t graph = nullptr;
    const cudaGraphNode_t *deps = nullptr;
    const cudaGraphEdgeData *edges = nullptr;
    size_t ndeps = 0;
    if (cudaError_t e =
            cudaStreamGetCaptureInfo(stream, &st, nullptr, &graph, &deps, &edges, &ndeps))
      return e;
    cudaGraphNodeParams np = {};
    np.type = cudaGraphNodeTypeConditional;
    np.conditional.handle = handle_;
    np.conditional.type = cudaGraphCondTypeWhile;
    np.conditional.size = 1;
    cudaGraphNode_t node = nullptr;
    if (cudaError_t e = cudaGraphAddNode(&node, graph, deps, edges, ndeps, &np)) return e;
    if (cudaError_t e = cudaStreamUpdateCaptureDependencies(stream, &node, nullptr, 1,
                                                            cudaStreamSetCaptureDependencies))
      return e;
    PooledStream s;
    if (cudaError_t e = SideStreamPool::acquire(s)) return e;
    cudaError_t e = cudaStreamBeginCaptureToGraph(s.stream, np.conditional.phGraph_out[0], nullptr,
                                                  nullptr, 0, cudaStreamCaptureModeRelaxed);
    if (e == cudaSuccess) {
      e = body(s.stream);
      cudaGraph_t captured = nullptr;
      const cudaError_t end = cudaStreamEndCapture(s.stream, &captured);
      if (e == cudaSuccess) e = end;
    }
    SideStreamPool::release(s);
    return e;
  }

private:
  cudaGraphConditionalHandle handle_ = 0;
};

// An uncaptured stream-ordered call that needs a graph (for a DeviceWhile):
// begin() starts capturing a pooled stream (the caller's stream is left
// alone: it may be the legacy stream, which cannot be captured, or used by
// other threads); the work goes to get(); launch() makes the graph
// executable and launches it on the caller's stream.
//
// Executable graphs are kept per thread and reused: the captured graph of a
// call of the same shape has the same nodes with other parameters, and
// cudaGraphExecUpdate takes them over (an executable graph may be updated
// while a launch of it runs: the launch keeps its own parameters). They are
// not destroyed after each call because cudaGraphExecDestroy waited for the
// device -- the whole call's time, measured on the H100. A thread keeps
// kGraphCacheSize of them; the oldest is destroyed (and that call waits)
// when a new shape needs room.
class GraphCall {
public:
  static constexpr size_t kGraphCacheSize = 8;

  explicit GraphCall(cudaStream_t caller) : caller_(caller) {}
  GraphCall(const GraphCall &) = delete;
  GraphCall &operator=(const GraphCall &) = delete;
  ~GraphCall() {
    if (capturing_) {
      cudaGraph_t g = nullptr;
      cudaStreamEndCapture(s_.stream, &g);
      if (g) cudaGraphDestroy(g);
      cudaGetLastError();
    }
    if (s_.stream) SideStreamPool::release(s_);
  }

  cudaError_t begin() {
    if (cudaError_t e = SideStreamPool::acquire(s_)) return e;
    if (cudaError_t e = cudaStreamBeginCapture(s_.stream, cudaStreamCaptureModeThreadLocal))
      return e;
    capturing_ = true;
    return cudaSuccess;
  }
  cudaStream_t get() const { return s_.stream; }

  cudaError_t launch() {
    cudaGraph_t g = nullptr;
    capturing_ = false;
    if (cudaError_t e = cudaStreamEndCapture(s_.stream, &g)) return e;
    cudaGraphExec_t x = nullptr;
    cudaError_t e = executable(g, x);
    cudaGraphDestroy(g);
    if (e != cudaSuccess) return e;
    return cudaGraphLaunch(x, caller_);
  }

private:
  struct Cached {
    int device;
    cudaGraphExec_t exec;
  };
  static std::vector<Cached> &cache() {
    thread_local std::vector<Cached> c; // most recently used last
    return c;
  }
  // An executable graph of g: a cached one updated to g, else a new one.
  static cudaError_t executable(cudaGraph_t g, cudaGraphExec_t &x) {
    int dev = 0;
    if (cudaError_t e = cudaGetDevice(&dev)) return e;
    std::vector<Cached> &c = cache();
    for (size_t i = c.size(); i-- > 0;) {
      if (c[i].device != dev) continue;
      cudaGraphExecUpdateResultInfo info{};
      if (cudaGraphExecUpdate(c[i].exec, g, &info) == cudaSuccess) {
        x = c[i].exec;
        const Cached hit = c[i];
        c.erase(c.begin() + long(i));
        c.push_back(hit);
        return cudaSuccess;
      }
      cudaGetLastError(); // (another shape)
    }
    if (cudaError_t e = cudaGraphInstantiate(&x, g, 0)) return e;
    if (c.size() >= kGraphCacheSize) {
      cudaGraphExecDestroy(c.front().exec);
      c.erase(c.begin());
    }
    c.push_back({dev, x});
    return cudaSuccess;
  }

  cudaStream_t caller_;
  PooledStream s_;
  bool capturing_ = false;
};

} // namespace bsvd::detail::cuda
