// A loop whose trip count the device decides, for stream-ordered calls:
// a CUDA graph conditional node of type while. Its body is one iteration's
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

} // namespace bsvd::detail::cuda
