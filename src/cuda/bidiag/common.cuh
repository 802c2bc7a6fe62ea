// What the building blocks' kernels share (src/cuda/bidiag/): the device
// API's element type of the library's T, and a T value as it.
#pragma once

#include "../../core/blas_batch.hpp"

#include <bsvd/device/gebrd.cuh>

#include <complex>
#include <cstring>

namespace bsvd::detail::cuda {

// The device API's element type of T (layout-compatible; as tiny/kernel.cuh).
template <class T> struct bidiag_type { using type = T; };
template <class R> struct bidiag_type<std::complex<R>> { using type = bsvd::device::complex<R>; };
template <class T> using bidiag_t = typename bidiag_type<T>::type;

template <class T> bidiag_t<T> as_device(T x) {
  bidiag_t<T> w;
  static_assert(sizeof w == sizeof x, "layout");
  std::memcpy(static_cast<void *>(&w), &x, sizeof w);
  return w;
}

BSVD_DEVICE_HD bsvd::device::op device_op(int trans) {
  return trans == BSVD_OP_N   ? bsvd::device::op::N
         : trans == BSVD_OP_T ? bsvd::device::op::T
                              : bsvd::device::op::C;
}

} // namespace bsvd::detail::cuda
