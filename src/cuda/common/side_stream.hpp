// A second stream beside a call's stream, for work that may overlap the
// call's own (the blocked path's early finishes; the fused kernel and the QR
// path beside the blocked path). fork() orders the side stream after what
// the main stream has so far; join() makes the main stream wait for all the
// side stream has so far. The stream and its event are created on the first
// fork. The destructor joins before it releases them, so that a call which
// returns early on an error still leaves no side work unordered with what
// follows on the main stream (freeing the workspace, copying results back).
#pragma once

#include <cuda_runtime.h>

namespace bsvd::detail::cuda {

class SideStream {
public:
  explicit SideStream(cudaStream_t main) : main_(main) {}
  SideStream(const SideStream &) = delete;
  SideStream &operator=(const SideStream &) = delete;
  ~SideStream() {
    if (s_) {
      join();
      cudaEventDestroy(e_);
      cudaStreamDestroy(s_);
    }
  }

  cudaError_t fork() {
    if (!s_) {
      if (cudaError_t e = cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)) {
        s_ = nullptr;
        return e;
      }
      if (cudaError_t e = cudaEventCreateWithFlags(&e_, cudaEventDisableTiming)) {
        cudaStreamDestroy(s_);
        s_ = nullptr;
        return e;
      }
    }
    if (cudaError_t e = cudaEventRecord(e_, main_)) return e;
    return cudaStreamWaitEvent(s_, e_, 0);
  }

  cudaError_t join() {
    if (!s_) return cudaSuccess;
    if (cudaError_t e = cudaEventRecord(e_, s_)) return e;
    return cudaStreamWaitEvent(main_, e_, 0);
  }

  bool forked() const { return s_ != nullptr; }
  cudaStream_t get() const { return s_; }

private:
  cudaStream_t main_;
  cudaStream_t s_ = nullptr;
  cudaEvent_t e_ = nullptr;
};

} // namespace bsvd::detail::cuda
