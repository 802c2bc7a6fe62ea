// Device buffers for the GPU tests of the batched building blocks
// (test_gpu_gemv.cpp, test_gpu_gebrd.cpp).
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

namespace blas_gpu {

inline bool have_gpu() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return n > 0;
}

// A device copy of a host vector, freed at the end of its scope.
template <class X> struct Dev {
  X *p = nullptr;
  size_t n = 0;
  explicit Dev(const std::vector<X> &h) : n(h.size()) {
    EXPECT_EQ(cudaMalloc(&p, std::max<size_t>(n, 1) * sizeof(X)), cudaSuccess);
    if (n) EXPECT_EQ(cudaMemcpy(p, h.data(), n * sizeof(X), cudaMemcpyHostToDevice), cudaSuccess);
  }
  Dev(const Dev &) = delete;
  Dev &operator=(const Dev &) = delete;
  ~Dev() { cudaFree(p); }
  std::vector<X> host() const {
    std::vector<X> h(n);
    if (n) EXPECT_EQ(cudaMemcpy(h.data(), p, n * sizeof(X), cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
  }
};

} // namespace blas_gpu

#define SKIP_WITHOUT_GPU_BLAS()                                                                    \
  do {                                                                                             \
    if (!blas_gpu::have_gpu()) GTEST_SKIP() << "no CUDA GPU visible";                              \
  } while (0)
