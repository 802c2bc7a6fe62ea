// What the device API's kernel tests share (test_gpu_device_api.cu,
// test_gpu_bidiag.cu): the skip without a GPU and the element types. Public
// device headers only -- these tests check what a user's kernel can include,
// so they stay clear of gpu_test_util.hpp and the library's internals.
#pragma once

#include <bsvd/device/svd.cuh> // bsvd::device::complex

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <complex>

namespace {

inline bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}
#define SKIP_WITHOUT_GPU()                                                                         \
  do {                                                                                             \
    if (!have_gpu()) GTEST_SKIP() << "no CUDA GPU visible";                                        \
  } while (0)

template <class T> struct real_of { using type = T; };
template <class R> struct real_of<std::complex<R>> { using type = R; };
template <class T> using R_t = typename real_of<T>::type;
template <class T> struct dev_of { using type = T; };
template <class R> struct dev_of<std::complex<R>> { using type = bsvd::device::complex<R>; };

} // namespace
