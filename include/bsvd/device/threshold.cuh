// The rotation threshold of every one-sided Jacobi solver in bsvd: the
// library's CPU solvers and GPU kernels (src/core/rotation.hpp takes it from
// here) and the device API (svd.cuh, warp_svd.cuh). Header-only; compiles
// with nvcc and with a plain C++17 compiler.
//
// A pair of columns a_p, a_q with alpha = ||a_p||^2, beta = ||a_q||^2 and
// gamma = a_p^H a_q is rotated when (rotates_pair)
//
//   alpha > 0,  beta > 0  and  |gamma| > tol sqrt(alpha) sqrt(beta),
//
// and the iteration stops after a sweep that rotates no pair. A caller's
// tol > 0 is used as given; the default (default_tol) is
//
//   tol = sqrt(max(m, 16)) u          (m rows of the working matrix),
//
// LAPACK xGESVJ's CTOL sqrt(m) u from 16 rows on, 4 u below. Why the floor:
// after a rotation the computed |gamma| / (||a_p|| ||a_q||) of a pair that
// is orthogonal to working precision is not zero but rounding noise -- the
// rounding of the stored entries and of the inner product's sum -- of up to
// about 2.5 u whatever m. Where tol lies below that noise, a pair can fail
// the test after every rotation: the rotation's tangent is then of order u,
// the columns change only in their last bits, and the same rotation comes
// back every sweep until the sweep cap (info = 1). With sqrt(m) u that
// happened to 1 in 500 to 850 random 2 x 2 matrices (s, d, c, z), 1 in
// 4400 to 7400 of the 3 x 3 and 1 in 21000 to 70000 of the 4 x 4, and to
// none of 10^6 from 5 rows on; with the floor to none of 10^7 of each of
// 2 x 2, 3 x 3 and 4 x 4 in each precision (the CPU solver; measurements
// in docs/design/decisions/0020-threshold-floor.md). From 16 rows on the
// rule is sqrt(m) u, bit for bit.
//
// alpha > 0 and beta > 0: a column whose squared norm underflows to zero is
// not tested. Its entries lie below sqrt(min normal), and the solvers scale
// the matrix by a power of two so that its largest entry is at least
// sqrt(min normal) / u: the column is numerically null (sigma < u sigma_1;
// the finish completes it). Its inner product with a normal column does
// not underflow, and with alpha = 0 the relative test holds for every
// nonzero gamma whatever the rotations do: rank-deficient matrices whose
// dependent columns cancel to such residues (SuiteSparse jgl009, rel3,
// Tina_AskCal, ...) rotated to the sweep cap on the register tier.
#pragma once

#include <math.h>

#if !defined(BSVD_DEVICE_HD)
#if defined(__CUDACC__)
#define BSVD_DEVICE_HD __host__ __device__ __forceinline__
#else
#define BSVD_DEVICE_HD inline
#endif
#endif

namespace bsvd::device {

namespace detail {
BSVD_DEVICE_HD float rsqrt_(float x) { return sqrtf(x); }
BSVD_DEVICE_HD double rsqrt_(double x) { return sqrt(x); }
template <class R> BSVD_DEVICE_HD R u_(); // unit roundoff
template <> BSVD_DEVICE_HD float u_<float>() { return 0x1p-24f; }
template <> BSVD_DEVICE_HD double u_<double>() { return 0x1p-53; }
} // namespace detail

// Below this many rows the default threshold stays at sqrt(16) u = 4 u.
constexpr int kTolMinRows = 16;

// sqrt(max(rows, kTolMinRows)) u in the working precision R. (For float the
// same bits as float(sqrt(double(k)) * 2^-24): sqrt is correctly rounded,
// and rounding its double result to float again gives the correctly
// rounded float.)
template <class R> BSVD_DEVICE_HD R default_tol(int rows) {
  return detail::rsqrt_(R(rows > kTolMinRows ? rows : kTolMinRows)) * detail::u_<R>();
}

// The threshold of a matrix of `rows` rows: tol if the caller gave one
// (> 0), else the default.
template <class R> BSVD_DEVICE_HD R resolve_tol(double tol, int rows) {
  return tol > 0 ? R(tol) : default_tol<R>(rows);
}

// The test of one pair (above). Two square roots so that alpha * beta can
// neither overflow nor underflow.
template <class R> BSVD_DEVICE_HD bool rotates_pair(R alpha, R beta, R abs_gamma, R tol) {
  return alpha > R(0) && beta > R(0) &&
         abs_gamma > tol * detail::rsqrt_(alpha) * detail::rsqrt_(beta);
}

} // namespace bsvd::device
