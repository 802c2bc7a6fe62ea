// An uncaptured stream-ordered call that runs as a CUDA graph of its own
// (its plan has a device loop, device_loop.hpp, which needs a graph):
// begin() starts capturing a pooled stream (the caller's stream is left
// alone: it may be the legacy stream, which cannot be captured, or used by
// other threads); the call's work goes to get(); launch() makes the graph
// executable and launches it on the caller's stream.
//
// Executable graphs are kept per thread and reused:
//  - a call of the same shape captures the same nodes with other
//    parameters; once the cache is full and its least recently used graph
//    has that shape, cudaGraphExecUpdate makes it take them over (an
//    executable graph may be updated while a launch of it runs: the launch
//    keeps its own parameters);
//  - a call whose key equals the key an executable graph was last made for
//    launches it as it is, without planning or capturing (replay()): the
//    key holds every input of the plan and of the enqueued work (the
//    backend's replay_key), and a capture uploads the host's tables by
//    value (upload.hpp), so the graph is the one a capture would make. The
//    host-side result of the call, the planned path of each matrix, is kept
//    with it.
// They are not destroyed after each call because cudaGraphExecDestroy waited
// for the device -- the whole call's time, measured on the H100. A thread
// keeps kGraphCacheSize of them; the least recently used one is destroyed
// (and that call waits) when a new graph needs room and it cannot take the
// update.
#pragma once

#include "side_stream.hpp"

#include <cuda_runtime.h>

#include <string>
#include <vector>

namespace bsvd::detail::cuda {

class GraphCall {
public:
  static constexpr size_t kGraphCacheSize = 8;

  // Launches the executable graph made last for `key` (non-empty) on
  // `stream` and copies its path into path[0 .. its count) (path may be
  // null). false: none (nothing launched), or the launch failed (*error).
  static bool replay(const std::string &key, cudaStream_t stream, int *path, cudaError_t *error);

  // The calls of this thread that replay() launched (tests observe the cache).
  static size_t replay_count();

  explicit GraphCall(cudaStream_t caller) : caller_(caller) {}
  GraphCall(const GraphCall &) = delete;
  GraphCall &operator=(const GraphCall &) = delete;
  ~GraphCall();

  cudaError_t begin();
  cudaStream_t get() const { return s_.stream; }

  // Ends the capture, launches the graph on the caller's stream, and keeps
  // its executable graph for `key` (empty: for updates only) with `path`,
  // the call's planned path per matrix.
  cudaError_t launch(std::string key = {}, std::vector<int> path = {});

private:
  cudaStream_t caller_;
  PooledStream s_;
  bool capturing_ = false;
};

} // namespace bsvd::detail::cuda
