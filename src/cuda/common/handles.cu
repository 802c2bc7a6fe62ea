// handles.hpp: the per-thread, per-device handle caches.
#include "handles.hpp"

#include <cuda_runtime.h>

#include <vector>

namespace bsvd::detail::cuda {

namespace {
template <class H, class Create> H cached(Create create) {
  struct Entry {
    int dev;
    H h;
  };
  thread_local std::vector<Entry> handles;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return nullptr;
  for (const Entry &e : handles)
    if (e.dev == dev) return e.h;
  H h = nullptr;
  if (!create(&h)) return nullptr;
  handles.push_back({dev, h});
  return h;
}
} // namespace

cublasHandle_t cublas_handle() {
  return cached<cublasHandle_t>(
      [](cublasHandle_t *h) { return cublasCreate(h) == CUBLAS_STATUS_SUCCESS; });
}

cusolverDnHandle_t cusolver_handle() {
  return cached<cusolverDnHandle_t>(
      [](cusolverDnHandle_t *h) { return cusolverDnCreate(h) == CUSOLVER_STATUS_SUCCESS; });
}

} // namespace bsvd::detail::cuda
