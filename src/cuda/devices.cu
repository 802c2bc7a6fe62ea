// The cuda backend's device queries and one range of a call split over
// several GPUs (backends.hpp; the split itself: core/api.cpp, plan/split).
#include "../core/backends.hpp"
#include "common/side_stream.hpp"

#include <complex>

#include <cuda_runtime.h>

namespace bsvd::detail {

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

int cuda_current_device() {
  int d = -1;
  if (cudaGetDevice(&d) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return d;
}

template <class T> bsvd_status_t cuda_gesvj_on(int dev, const Batch<T> &batch, const Config &cfg,
                                               void *stream, int *path) {
  if (cudaError_t e = cudaSetDevice(dev)) {
    cudaGetLastError();
    set_error("cudaSetDevice(%d) failed: %s", dev, cudaGetErrorString(e));
    return BSVD_STATUS_DEVICE_ERROR;
  }
  if (stream) return cuda_gesvj(batch, cfg, stream, nullptr, 0, path);
  cuda::PooledStream s;
  if (cudaError_t e = cuda::SideStreamPool::acquire(s)) {
    cudaGetLastError();
    set_error("creating a stream on device %d failed: %s", dev, cudaGetErrorString(e));
    return BSVD_STATUS_DEVICE_ERROR;
  }
  const bsvd_status_t st = cuda_gesvj(batch, cfg, s.stream, nullptr, 0, path);
  cuda::SideStreamPool::release(s);
  return st;
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template bsvd_status_t cuda_gesvj_on<T>(int, const Batch<T> &, const Config &, void *, int *);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail
