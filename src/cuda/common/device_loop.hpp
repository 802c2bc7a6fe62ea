// A loop whose trip count the device decides, for stream-ordered calls:
// a CUDA graph conditional node of type while (and DeviceIf, a branch). Its body is one iteration's
// work, captured once; a kernel of the body (or before it) sets the
// condition with cudaGraphSetConditional(handle, keep_going). The loop needs
// a stream that is being captured: the caller's own capture (a call inside
// cudaStreamBeginCapture), or the one an uncaptured call makes for itself
// (GraphCall, graph_call.hpp). Needs CUDA 12.4 (conditional nodes in stream capture).
//
//   DeviceWhile loop;
//   loop.create(stream);                       // the handle
//   start_kernel<<<..., stream>>>(loop.handle());  // sets the first condition
//   loop.add(stream, [&](cudaStream_t body) { /* one iteration on body */ });
#pragma once

#include "side_stream.hpp"

#include <cuda_runtime.h>

#include <utility>

namespace bsvd::detail::cuda {

// A conditional node of `type` after what `stream` has captured so far
// (later work on stream follows it), with one body graph per callable:
// bodies[i](s) enqueues body i on the stream s, captured into it.
template <class... Body>
cudaError_t add_conditional(cudaStream_t stream, cudaGraphConditionalHandle handle,
                            cudaGraphConditionalNodeType type, Body &&...bodies) {
  cudaStreamCaptureStatus st;
  cudaGraph_t graph = nullptr;
  const cudaGraphNode_t *deps = nullptr;
  const cudaGraphEdgeData *edges = nullptr;
  size_t ndeps = 0;
  if (cudaError_t e = cudaStreamGetCaptureInfo(stream, &st, nullptr, &graph, &deps, &edges, &ndeps))
    return e;
  cudaGraphNodeParams np = {};
  np.type = cudaGraphNodeTypeConditional;
  np.conditional.handle = handle;
  np.conditional.type = type;
  np.conditional.size = unsigned(sizeof...(Body));
  cudaGraphNode_t node = nullptr;
  if (cudaError_t e = cudaGraphAddNode(&node, graph, deps, edges, ndeps, &np)) return e;
  if (cudaError_t e = cudaStreamUpdateCaptureDependencies(stream, &node, nullptr, 1,
                                                          cudaStreamSetCaptureDependencies))
    return e;
  cudaError_t e = cudaSuccess;
  unsigned i = 0;
  auto capture = [&](auto &&body) {
    const unsigned k = i++;
    if (e != cudaSuccess) return;
    PooledStream s;
    if ((e = SideStreamPool::acquire(s)) != cudaSuccess) return;
    e = cudaStreamBeginCaptureToGraph(s.stream, np.conditional.phGraph_out[k], nullptr, nullptr, 0,
                                      cudaStreamCaptureModeRelaxed);
    if (e == cudaSuccess) {
      e = body(s.stream);
      cudaGraph_t captured = nullptr;
      const cudaError_t end = cudaStreamEndCapture(s.stream, &captured);
      if (e == cudaSuccess) e = end;
    }
    SideStreamPool::release(s);
  };
  (capture(bodies), ...);
  return e;
}

// A conditional node's handle, in the graph `stream` is captured into.
inline cudaError_t create_conditional(cudaStream_t stream, cudaGraphConditionalHandle *handle) {
  cudaStreamCaptureStatus st;
  cudaGraph_t graph = nullptr;
  if (cudaError_t e = cudaStreamGetCaptureInfo(stream, &st, nullptr, &graph)) return e;
  if (st != cudaStreamCaptureStatusActive) return cudaErrorStreamCaptureUnsupported;
  return cudaGraphConditionalHandleCreate(handle, graph, 0, 0);
}

class DeviceWhile {
public:
  // The condition's handle, in the graph `stream` is captured into.
  cudaError_t create(cudaStream_t stream) { return create_conditional(stream, &handle_); }
  cudaGraphConditionalHandle handle() const { return handle_; }

  // The while node after what `stream` has captured so far (later work on
  // stream follows the whole loop); body(s) enqueues one iteration on s.
  template <class Body> cudaError_t add(cudaStream_t stream, Body &&body) {
    return add_conditional(stream, handle_, cudaGraphCondTypeWhile, std::forward<Body>(body));
  }

private:
  cudaGraphConditionalHandle handle_ = 0;
};

// A body the device decides to run or skip: an if node (CUDA 12.4; an
// if/else pair is two of them, with handles set to c and !c, since an if
// node's else body needs CUDA 12.8). A kernel before the node sets the
// condition with cudaGraphSetConditional(handle, run).
class DeviceIf {
public:
  cudaError_t create(cudaStream_t stream) { return create_conditional(stream, &handle_); }
  cudaGraphConditionalHandle handle() const { return handle_; }
  template <class Body> cudaError_t add(cudaStream_t stream, Body &&body) {
    return add_conditional(stream, handle_, cudaGraphCondTypeIf, std::forward<Body>(body));
  }

private:
  cudaGraphConditionalHandle handle_ = 0;
};

} // namespace bsvd::detail::cuda
