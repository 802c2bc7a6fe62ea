// The Jacobi rotation of one column pair: the formula of every one-sided
// Jacobi solver in bsvd -- the library's CPU solvers and GPU kernels (src/
// core/rotation.hpp takes it from here) and the device API (svd.cuh,
// warp_svd.cuh). Header-only; compiles with nvcc and with a plain C++17
// compiler.
//
// For columns a_p, a_q with alpha = a_p^H a_p, beta = a_q^H a_q and
// gamma = a_p^H a_q, the rotation that makes a_p'^H a_q' = 0 has, with
// zeta = cot(2 theta) = (beta - alpha) / (2 |gamma|), the Rutishauser
// formulas in the form of HBJ eqs. (4.3)-(4.6), t = 1:
//
//   |cot theta| = |zeta| + sqrt(fma(zeta, zeta, 1))
//   tan theta   = sign(zeta) / |cot theta|
//   cos theta   = |cot theta| / sqrt(fma(|cot theta|, |cot theta|, 1))   (cs_2)
//
// with the shortcuts of HBJ Sec. 4.3.1 that avoid squaring large numbers:
// |zeta| >= sqrt(2/eps) gives |cot theta| = 2|zeta|, and |cot theta| >=
// sqrt(2/eps) gives cos theta = 1 (big_cot). The same operations in the
// same order on every path, so the CPU twins and the kernels agree to the
// bit. (The fused kernel computes the same formula with its independent
// divisions split over lane pairs, src/cuda/fused/kernel.cuh.)
#pragma once

#include "threshold.cuh"

namespace bsvd::device {

namespace detail {
BSVD_DEVICE_HD float rfma(float a, float b, float c) { return fmaf(a, b, c); }
BSVD_DEVICE_HD double rfma(double a, double b, double c) { return fma(a, b, c); }
BSVD_DEVICE_HD float rabs(float x) { return fabsf(x); }
BSVD_DEVICE_HD double rabs(double x) { return fabs(x); }
} // namespace detail

// sqrt(2 / eps) with eps = 2u: beyond it x^2 + 1 rounds to x^2.
template <class R> BSVD_DEVICE_HD constexpr R big_cot();
template <> BSVD_DEVICE_HD constexpr float big_cot<float>() { return 4096.0f; } // 2^12
template <> BSVD_DEVICE_HD constexpr double big_cot<double>() {
  return 94906265.62425156; // 2^26.5
}

template <class R> struct TanCos {
  R t, c; // tan and cos of the angle
};

// The rotation that annihilates gamma (above). Requires abs_gamma > 0 and
// finite inputs (rotates_pair has held).
template <class R> BSVD_DEVICE_HD TanCos<R> jacobi_tan_cos(R alpha, R beta, R abs_gamma) {
  using namespace detail;
  const R zeta = (beta - alpha) / (R(2) * abs_gamma);
  const R az = rabs(zeta);
  const R act = az >= big_cot<R>() ? R(2) * az : az + rsqrt_(rfma(zeta, zeta, R(1)));
  TanCos<R> r;
  r.t = (zeta < R(0) ? R(-1) : R(1)) / act;
  r.c = act >= big_cot<R>() ? R(1) : act / rsqrt_(rfma(act, act, R(1)));
  return r;
}

} // namespace bsvd::device
