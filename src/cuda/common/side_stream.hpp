// A second stream beside a call's stream, for work that may overlap the
// call's own (the blocked path's early finishes and split groups; the fused
// kernel and the QR path beside the blocked path). fork() orders the side
// stream after what the main stream has so far; join() makes the main
// stream wait for all the side stream has so far. The destructor joins, so
// that a call which returns early on an error still leaves no side work
// unordered with what follows on the main stream (freeing the workspace,
// copying results back).
//
// The stream and its event come from a pool of this thread and device and
// go back to it, never destroyed: a call may run inside a stream capture
// (the _async forms), where a stream that took part in the capture must
// outlive it, and creating them once saves every later call the cost.
#pragma once

#include <cuda_runtime.h>

#include <vector>

namespace bsvd::detail::cuda {

struct PooledStream {
  cudaStream_t stream = nullptr;
  cudaEvent_t event = nullptr;
};

// The thread's idle side streams of the current device.
class SideStreamPool {
public:
  static cudaError_t acquire(PooledStream &out) {
    int dev = 0;
    if (cudaError_t e = cudaGetDevice(&dev)) return e;
    std::vector<PooledStream> &idle = pool(dev);
    if (!idle.empty()) {
      out = idle.back();
      idle.pop_back();
      return cudaSuccess;
    }
    // Creating them is no stream work, so it may happen inside any capture.
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    cudaThreadExchangeStreamCaptureMode(&mode);
    cudaError_t e = cudaStreamCreateWithFlags(&out.stream, cudaStreamNonBlocking);
    if (e == cudaSuccess) {
      e = cudaEventCreateWithFlags(&out.event, cudaEventDisableTiming);
      if (e != cudaSuccess) cudaStreamDestroy(out.stream);
    }
    cudaThreadExchangeStreamCaptureMode(&mode);
    if (e != cudaSuccess) out = PooledStream{};
    return e;
  }
  static void release(const PooledStream &s) {
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return; // (leaked: the context is gone)
    pool(dev).push_back(s);
  }

private:
  static std::vector<PooledStream> &pool(int dev) {
    thread_local std::vector<std::vector<PooledStream>> pools;
    if (size_t(dev) >= pools.size()) pools.resize(size_t(dev) + 1);
    return pools[size_t(dev)];
  }
};

class SideStream {
public:
  explicit SideStream(cudaStream_t main) : main_(main) {}
  SideStream(const SideStream &) = delete;
  SideStream &operator=(const SideStream &) = delete;
  ~SideStream() {
    if (s_.stream) {
      join();
      SideStreamPool::release(s_);
    }
  }

  // The main stream of later forks and joins (after a join, or before the
  // first fork).
  void set_main(cudaStream_t main) { main_ = main; }

  cudaError_t fork() {
    if (!s_.stream)
      if (cudaError_t e = SideStreamPool::acquire(s_)) return e;
    if (cudaError_t e = cudaEventRecord(s_.event, main_)) return e;
    return cudaStreamWaitEvent(s_.stream, s_.event, 0);
  }

  cudaError_t join() {
    if (!s_.stream) return cudaSuccess;
    if (cudaError_t e = cudaEventRecord(s_.event, s_.stream)) return e;
    return cudaStreamWaitEvent(main_, s_.event, 0);
  }

  bool forked() const { return s_.stream != nullptr; }
  cudaStream_t get() const { return s_.stream; }

private:
  cudaStream_t main_;
  PooledStream s_;
};

} // namespace bsvd::detail::cuda
