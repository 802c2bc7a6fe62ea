// handles.hpp: the per-thread, per-device handle caches.
#include "handles.hpp"

#include <cuda_runtime.h>

#include <vector>

namespace bsvd::detail::cuda {

namespace {
// create(&h) returns the library's status; ok is its success value and
// no_device the status reported when the current device cannot be read.
template <class H, class S, class Create> S cached(H *out, S ok, S no_device, Create create) {
  struct Entry {
    int dev;
    H h;
  };
  thread_local std::vector<Entry> handles;
  *out = nullptr;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    cudaGetLastError();
    return no_device;
  }
  for (const Entry &e : handles)
    if (e.dev == dev) {
      *out = e.h;
      return ok;
    }
  H h = nullptr;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  const bool exchanged = cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess;
  const S st = create(&h);
  if (exchanged) cudaThreadExchangeStreamCaptureMode(&mode);
  if (st != ok) return st;
  handles.push_back({dev, h});
  *out = h;
  return ok;
}
} // namespace

cublasStatus_t cublas_handle(cublasHandle_t *h) {
  return cached(h, CUBLAS_STATUS_SUCCESS, CUBLAS_STATUS_NOT_INITIALIZED,
                [](cublasHandle_t *x) { return cublasCreate(x); });
}

cusolverStatus_t cusolver_handle(cusolverDnHandle_t *h) {
  return cached(h, CUSOLVER_STATUS_SUCCESS, CUSOLVER_STATUS_NOT_INITIALIZED,
                [](cusolverDnHandle_t *x) { return cusolverDnCreate(x); });
}

const char *cublas_status_name(cublasStatus_t st) { return cublasGetStatusName(st); }

const char *cusolver_status_name(cusolverStatus_t st) {
  switch (st) {
  case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
  case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
  case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
  case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
  case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
  case CUSOLVER_STATUS_MAPPING_ERROR: return "CUSOLVER_STATUS_MAPPING_ERROR";
  case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
  case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
  case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED:
    return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
  case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
  case CUSOLVER_STATUS_INVALID_LICENSE: return "CUSOLVER_STATUS_INVALID_LICENSE";
  case CUSOLVER_STATUS_INVALID_WORKSPACE: return "CUSOLVER_STATUS_INVALID_WORKSPACE";
  default: return "CUSOLVER_STATUS_(unknown)";
  }
}

} // namespace bsvd::detail::cuda
