// bsvd::device::bdsv: the singular values of one real n x n bidiagonal
// matrix B to high relative accuracy, by bisection on its Golub-Kahan
// tridiagonal (docs/design/decisions/0021-bidiagonal-values-by-bisection.md).
// Header-only; compiles with nvcc and with a plain C++17 compiler (the CPU
// twin), for one thread or a team (team.cuh).
//
//   // d: n diagonal entries, e: n - 1 off-diagonal ones (upper or lower:
//   // B and B^T have the same singular values); S: n; work: 2 n.
//   int info = bsvd::device::bdsv(n, d, e, S, work);
//
// S comes out sorted descending, >= 0. Returns 0; -1 (kInfoNonFinite) when
// d or e hold NaN or Inf (S is NaN then); -i for a bad argument i (n < 0).
// There is no iteration that could fail to converge: each value takes a
// bounded number of bisection steps (about 62 in d, 30 in s).
//
// Method. The 2n x 2n Golub-Kahan matrix T = tridiag(b, 0, b) with
// b = (|d_0|, |e_0|, |d_1|, |e_1|, ..., |d_{n-1}|) has eigenvalues +-sigma_i
// (the signs of d and e do not change the singular values). For x > 0 the
// LDL^T factorization of T - x I (Sylvester's inertia; the Sturm count)
//
//   t_0 = -x,   t_k = -x - (b_{k-1} / t_{k-1}) b_{k-1},   k = 1 .. 2n-1,
//
// has n + #{sigma_i < x} negative pivots. Demmel & Kahan (1990, "Accurate
// singular values of bidiagonal matrices", bisection section): the
// rounding errors of one step (a division, a product, a subtraction) can
// be put on b_{k-1} as a relative change of at most about 2.5 u, so the
// computed count is the exact count of a bidiagonal whose entries differ
// from B's by that relative amount; and such changes move every singular
// value by a relative amount of at most about (2n - 1) 2.5 u. Bisection of
// [lo, hi] down to hi - lo <= 2 u hi then gives every sigma_i, however
// small, to a relative error of about 5 n u -- what xBDSQR's dqds
// (xLASQ1) achieves by a harder route.
//
// Range. B is first scaled by the power of two that brings max |b_k| into
// [1, 2) (exact; the Gershgorin bound of T is then 4). The product form
// (b / t) b forms no b^2, so no entry's square can underflow; a pivot with
// |t| < min normal is replaced by -min normal (LAPACK xSTEBZ's PIVMIN, an
// absolute change of T of that size) so nothing divides by zero, and a
// quotient that overflows to Inf makes the next pivot -x again, which is
// the exact limit. Values below floor = min normal / u of max |b_k| (2^-969
// in d, 2^-102 in s) are returned as 0: there the guard's absolute change
// dominates. Where the interval spans more than a factor 4 its geometric
// mean is the next point (at most ~10 steps to reach any magnitude down to
// floor), then the arithmetic midpoint.
//
// Thread mapping with a team: member r bisects the values r, r + size, ...
// independently (no communication: the embarrassingly parallel part, each
// step an O(n) recurrence on the 2n - 1 entries of b in shared memory);
// member 0 then sorts (insertion sort: the values are already nearly in
// order; the floating-point count need not be monotone in x, so exact
// order is not guaranteed by construction).
#pragma once

#include "svd.cuh"
#include "team.cuh"

namespace bsvd::device {

// Bisection steps per value at most: the loop stops long before (62 in
// d); the cap only guards against an interval that stops shrinking.
constexpr int kBisectMaxSteps = 256;

namespace detail {

// #{sigma_i < x} for x > 0 from the 2n - 1 scaled off-diagonals b of the
// Golub-Kahan matrix (see the top of this file).
template <class R> BSVD_DEVICE_HD int tgk_count_below(int n, const R *b, R x) {
  const R pivmin = minnorm<R>();
  R t = -x;
  if (rabs(t) < pivmin) t = -pivmin;
  int neg = t < R(0);
  for (int k = 0; k < 2 * n - 1; ++k) {
    t = -x - (b[k] / t) * b[k];
    if (rabs(t) < pivmin) t = -pivmin;
    neg += t < R(0);
  }
  return neg - n;
}

// The j-th smallest singular value (j = 1 .. n) by bisection from
// [0, hi], with count_below(hi) = n. Keeps count_below(lo) < j <=
// count_below(hi).
template <class R> BSVD_DEVICE_HD R bisect_value(int n, const R *b, int j, R hi) {
  const R floor = minnorm<R>() / u_<R>();
  const R rtol = R(2) * u_<R>();
  R lo = R(0);
  for (int step = 0; step < kBisectMaxSteps; ++step) {
    if (hi - lo <= rtol * hi || hi <= floor) break;
    const R le = lo > floor ? lo : floor;
    const R mid = hi > R(4) * le ? rsqrt_(le) * rsqrt_(hi) : lo + R(0.5) * (hi - lo);
    if (!(mid > lo && mid < hi)) break;
    if (tgk_count_below(n, b, mid) >= j)
      hi = mid;
    else
      lo = mid;
  }
  if (hi <= floor) return R(0);
  return lo + R(0.5) * (hi - lo);
}

} // namespace detail

// The values il ... il + cnt - 1 alone (0 = the largest; 0 <= il, il + cnt
// <= n, the caller's to check), descending in S[0 .. cnt-1]: bdsv's
// bisection at those indices only (bdsv is the range 0 ... n - 1). work: 2n.
template <class R, class Team = serial_team> BSVD_DEVICE_HD int
bdsv_range(int n, const R *d, const R *e, int il, int cnt, R *S, R *work, const Team &team = {}) {
  using namespace detail;
  if (n == 0 || cnt <= 0) return kInfoConverged;
  // Every member scans d and e (O(n), against O(n^2) per value below).
  R big = R(0);
  bool fin = true;
  for (int k = 0; k < 2 * n - 1; ++k) {
    const R a = rabs(k & 1 ? e[k >> 1] : d[k >> 1]);
    fin = fin && a <= maxfin<R>();
    big = a > big ? a : big;
  }
  if (!fin || !(big > R(0))) {
    for (int j = team.rank(); j < cnt; j += team.size()) S[j] = fin ? R(0) : R(NAN);
    team.sync();
    return fin ? kInfoConverged : kInfoNonFinite;
  }
  const int ex = rilogb(big);
  for (int k = team.rank(); k < 2 * n - 1; k += team.size())
    work[k] = pow2_scale<R, R>(rabs(k & 1 ? e[k >> 1] : d[k >> 1]), -ex);
  team.sync();
  // Gershgorin: every row of T has at most two entries, each below 2.
  const R hi = R(4.5);
  for (int j = team.rank(); j < cnt; j += team.size())
    S[j] = pow2_scale<R, R>(bisect_value(n, work, n - il - j, hi), ex);
  team.sync();
  if (team.rank() == 0) {
    for (int j = 1; j < cnt; ++j) {
      const R s = S[j];
      int i = j;
      for (; i > 0 && S[i - 1] < s; --i) S[i] = S[i - 1];
      S[i] = s;
    }
  }
  team.sync();
  return kInfoConverged;
}

template <class R, class Team = serial_team>
BSVD_DEVICE_HD int bdsv(int n, const R *d, const R *e, R *S, R *work, const Team &team = {}) {
  if (n < 0) return -1;
  return bdsv_range(n, d, e, 0, n, S, work, team);
}

} // namespace bsvd::device
