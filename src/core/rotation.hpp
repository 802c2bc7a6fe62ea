// The Jacobi rotation of one column pair, shared by the CPU and GPU solvers
// so that both compute exactly the same formula: tan and cos from
// include/bsvd/device/rotation.cuh (jacobi_tan_cos, the Rutishauser
// formulas of HBJ eqs. (4.3)-(4.6), also the device API's), the sine and
// the complex phase here.
//
// For columns a_p, a_q with alpha = a_p^H a_p, beta = a_q^H a_q and
// gamma = a_p^H a_q = |gamma| e, |e| = 1 (MAGMA-SVD eq. 6, complex case):
//
//   a_p' = c a_p - s conj(e) a_q,     a_q' = s e a_p + c a_q,   s = c t
//
// makes a_p'^H a_q' = 0. The new squared norms follow without another
// inner product (WCYCLE eq. 6):
//
//   alpha' = alpha - t |gamma|,   beta' = beta + t |gamma|,   t = tan theta.
#pragma once

#include "batch.hpp"

#include <bsvd/device/rotation.cuh>
#include <bsvd/device/threshold.cuh>

#include <math.h>
#include <stdint.h>
#include <string.h>

namespace bsvd::detail {

BSVD_HD inline float bsqrt(float x) { return sqrtf(x); }
BSVD_HD inline double bsqrt(double x) { return sqrt(x); }
BSVD_HD inline float bfma(float a, float b, float c) { return fmaf(a, b, c); }
BSVD_HD inline double bfma(double a, double b, double c) { return fma(a, b, c); }
BSVD_HD inline float babs(float x) { return fabsf(x); }
BSVD_HD inline double babs(double x) { return fabs(x); }

// sqrt(2 / eps) with eps = 2u: beyond it x^2 + 1 rounds to x^2.
using bsvd::device::big_cot;

template <class R> struct Rotation {
  R c = 1, s = 0, t = 0; // cos, sin, tan of the angle
};

// The unit phase e = gamma / |gamma| of a complex gamma = re + i im with
// |gamma| = abs_gamma > 0, into (er, ei). Where both parts lie below
// min_normal / u, |gamma| may be subnormal and carry fewer bits than the
// working precision, and then |e| differs from 1 by that rounding: the
// rotation is not unitary. gamma is then scaled by a power of two (exact)
// and its modulus recomputed. Seen on complex matrices whose columns differ
// in scale by more than sqrt(min_normal): V was off by up to 1e4 u
// (test CpuTinyColumns). Above the threshold: re / abs_gamma, im /
// abs_gamma, unscaled.
BSVD_HD inline float bmax_abs(float x, float y) { return fmaxf(fabsf(x), fabsf(y)); }
BSVD_HD inline double bmax_abs(double x, double y) { return fmax(fabs(x), fabs(y)); }
BSVD_HD inline int bilogb(float x) { return ilogbf(x); }
BSVD_HD inline int bilogb(double x) { return ilogb(x); }
BSVD_HD inline float bldexp(float x, int e) { return ldexpf(x, e); }
BSVD_HD inline double bldexp(double x, int e) { return ldexp(x, e); }
BSVD_HD inline float bhypot(float x, float y) { return hypotf(x, y); }
BSVD_HD inline double bhypot(double x, double y) { return hypot(x, y); }
template <class R> BSVD_HD constexpr R phase_rescale_below();
template <> BSVD_HD constexpr float phase_rescale_below<float>() {
  return 0x1p-102f;
} // 2^-126 / 2^-24
template <> BSVD_HD constexpr double phase_rescale_below<double>() {
  return 0x1p-969;
} // 2^-1022 / 2^-53
template <class R> BSVD_HD inline void unit_phase(R re, R im, R abs_gamma, R &er, R &ei) {
  const R mx = bmax_abs(re, im);
  if (mx < phase_rescale_below<R>()) {
    const int e = bilogb(mx);
    re = bldexp(re, -e);
    im = bldexp(im, -e);
    abs_gamma = bhypot(re, im);
  }
  er = re / abs_gamma;
  ei = im / abs_gamma;
}

// Rotation that annihilates gamma. Requires abs_gamma > 0 and finite inputs.
template <class R> BSVD_HD inline Rotation<R> jacobi_rotation(R alpha, R beta, R abs_gamma) {
  const bsvd::device::TanCos<R> tc = bsvd::device::jacobi_tan_cos(alpha, beta, abs_gamma);
  Rotation<R> r;
  r.t = tc.t;
  r.c = tc.c;
  r.s = r.c * r.t;
  return r;
}

// The hyperbolic rotation of a pair that straddles the sign boundary of
// J = diag(I, -I) (HSVD, HBJ eq. 4.2): for columns a_p, a_q of opposite
// signs, with alpha, beta, gamma = |gamma| e as above,
//
//   a_p' = ch (a_p + th conj(e) a_q),   a_q' = ch (a_q + th e a_p)
//
// (ch = cosh phi, th = tanh phi, sh = ch th) makes a_p'^H a_q' = 0 and is
// J-unitary whichever of p, q carries the +1. The same Rutishauser form as
// jacobi_rotation with t = -1 in HBJ eqs. (4.3)-(4.6):
//
//   coth 2phi  = -(alpha + beta) / (2|gamma|)            (always <= -1)
//   |coth phi| = |coth 2phi| + sqrt(fma(coth 2phi, coth 2phi, -1))
//   tanh phi   = -1 / |coth phi|
//   cosh phi   = |coth phi| / sqrt(fma(|coth phi|, |coth phi|, -1))   (ch_2)
//
// ch_2 rather than ch_1 = 1 / sqrt(1 - th^2): HBJ Appendix B measured it
// more J-orthogonal on average. By Cauchy-Schwarz |coth 2phi| >= 1, with
// equality only when a_p and a_q are parallel with equal norms -- then
// a_p a_p^H - a_q a_q^H = 0 and the pair violates the HSVD's condition
// rank(G) = rank(G J G^H): no rotation orthogonalizes it. Where rounding
// gives |coth 2phi| <= 1, HBJ (after Veselic) substitutes 5/4 (th = -1/2),
// a finite J-unitary step that is *not* an orthogonalizing one; `substituted`
// tells the caller, whose carried norms are then wrong (recompute them) and
// which decides when repeated substitution means breakdown. The shortcuts
// at big_cot are the trigonometric ones. The new squared norms follow as
//
//   alpha' = alpha + th |gamma|,   beta' = beta + th |gamma|   (both shrink),
//
// exact for the orthogonalizing rotation (not for the substituted one).
template <class R> struct HyperbolicRotation {
  R c = 1, s = 0, t = 0; // cosh, sinh, tanh of the angle (t, s <= 0)
  bool substituted = false; // |coth 2phi| <= 1 was replaced by 5/4
};
template <class R>
BSVD_HD inline HyperbolicRotation<R> hyperbolic_rotation(R alpha, R beta, R abs_gamma) {
  HyperbolicRotation<R> r;
  R act2 = (alpha + beta) / (R(2) * abs_gamma); // |coth 2phi|
  if (!(act2 > R(1))) {
    act2 = R(1.25);
    r.substituted = true;
  }
  const R act = act2 >= big_cot<R>() ? R(2) * act2 : act2 + bsqrt(bfma(act2, act2, R(-1)));
  r.t = R(-1) / act;
  r.c = act >= big_cot<R>() ? R(1) : act / bsqrt(bfma(act, act, R(-1)));
  r.s = r.c * r.t;
  return r;
}

// Sweeps in a row with a substituted hyperbolic step after which the HSVD
// stops with BSVD_INFO_HYPERBOLIC_BREAKDOWN (the CPU solver and the fused
// kernel alike; docs/hsvd.md).
constexpr int kHyperbolicBreakdownSweeps = 3;

// The rotation threshold and the one-sided solvers' test of a pair, shared
// with the device API: include/bsvd/device/threshold.cuh states the rule
// and why. resolve_tol<R>(tol, rows): the caller's tol > 0, else
// default_tol<R>(rows) = sqrt(max(rows, 16)) u. rotates_pair(alpha, beta,
// |gamma|, tol): alpha > 0, beta > 0 and |gamma| > tol sqrt(alpha)
// sqrt(beta) -- the one-sided pair test of every solver (CPU unblocked and
// pair-SVD, fused kernel, register tier, blocked pair kernels).
using bsvd::device::default_tol;
using bsvd::device::resolve_tol;
using bsvd::device::rotates_pair;

// The relative test alone, |gamma| > tol sqrt(alpha) sqrt(beta), for the
// Hermitian eigensolvers of the blocked path (alpha, beta: the moduli of
// the Gram matrix's diagonal entries, which their own floors guard).
template <class R> BSVD_HD inline bool needs_rotation(R alpha, R beta, R abs_gamma, R tol) {
  return abs_gamma > tol * bsqrt(alpha) * bsqrt(beta);
}

// The one-sided solvers' underflow floor (unblocked CPU solver and the fused
// kernel alike). The inner product of two columns whose entries lie near
// sqrt(min_normal) is summed from subnormal products, each rounded to a
// multiple of the smallest subnormal 2 u min_normal: its absolute error is
// up to ~m u min_normal whatever the columns' angle. Where that exceeds the
// rotation threshold tol sqrt(alpha) sqrt(beta) the test cannot see the
// pair converge, and the sweeps ran to the cap (info = 1; edge case
// "tinycols", test CpuBatch.EdgeMatrices). So a pair rotates only when
// |gamma| also exceeds 4 max(m, 2^15) u min_normal: below it gamma is
// rounding noise. Such columns are numerically null next to any normal
// column (their singular values are below u sigma_1; the finish completes
// their U columns), and for every pair of normal columns the test is
// unchanged. The floor is a constant up to 2^15 rows, which covers every
// matrix with two or more columns that fits the fused kernel: it calls this
// with m = 0, a compile-time constant (with mw it cost d 1000 x 64^2 6 %,
// register pressure at its 64-register budget).
template <class R> BSVD_HD constexpr R min_normal();
template <> BSVD_HD constexpr float min_normal<float>() { return 0x1p-126f; }
template <> BSVD_HD constexpr double min_normal<double>() { return 0x1p-1022; }
constexpr int kUnderflowNoiseRows = 1 << 15;
template <class R> BSVD_HD inline bool above_underflow_noise(R abs_gamma, int m) {
  const int rows = m > kUnderflowNoiseRows ? m : kUnderflowNoiseRows;
  return abs_gamma >
         R(4) * R(rows) * min_normal<R>() * unit_roundoff<R>(); // a multiple of 2u min_normal
}

// The blocked path's noise floors (CPU and GPU alike). A Gram-form step
// resolves inner products only to the rounding of forming G and applying
// Q: Q is a product of ~k rotations per column plus a Newton-Schulz step,
// unitary to O(k u), so the update W Q leaves relative inner products of
// order k u between columns that were orthogonal. Hence
//   blocked_tol:  the rotation threshold is max(tol, k u) (k = the pair's
//                 width), not tol alone: with the default tol = sqrt(m) u
//                 < k u the iteration rotated rounding noise for 2-3
//                 extra sweeps;
//   noise floor:  a rotation between two columns whose squared norms are
//                 both below (k u)^2 max_i g_ii of the pair is applied but
//                 not counted by the stopping rule: the update adds
//                 absolute errors of order u ||W_pair|| to every column,
//                 so such columns (numerically null at the pair's scale)
//                 are never relatively orthogonal after an update.
//                 Counting them left rank-deficient SuiteSparse matrices
//                 (complex, and a few real) at the sweep limit; the finish
//                 completes null columns of U anyway.
//   null floor:   a rotation whose smaller column has squared norm below
//                 (u amax)^2, amax = max_ij max(|Re w_ij|, |Im w_ij|) of the
//                 matrix when the iteration starts (amax <= sigma_max), is
//                 applied but not counted either. Such a column is null for
//                 the finish (sigma_j < u sigma_max: its U column is
//                 completed), and when its true value is zero (an exactly
//                 rank-deficient matrix) every update W Q recomputes it as
//                 rounding noise of its own size in a new direction: it
//                 shrinks by ~u per sweep and is never relatively orthogonal
//                 to the large columns of its pair. The pair floor above
//                 misses this case (the pair's other column is large);
//                 counting it kept 30 of the 141 SuiteSparse matrices (z, nb
//                 16, CPU and GPU alike) at the 80-sweep limit.
//   blocked_counts: the two floors together decide whether a rotation
//                 between columns of squared norms a, b counts for the
//                 stopping rule.
template <class R> BSVD_HD inline R blocked_tol(R tol, int k) {
  const R f = R(k) * unit_roundoff<R>();
  return tol > f ? tol : f;
}
template <class R> BSVD_HD inline R blocked_noise_floor(R gmax, int k) {
  const R f = R(k) * unit_roundoff<R>();
  return f * f * gmax;
}
template <class R> BSVD_HD inline R blocked_null_floor(R amax) {
  const R f = unit_roundoff<R>() * amax;
  return f * f;
}
// The QR preconditioning (opts.precondition) keeps the rows of R up to the
// first one with |R_jj| < u |R_00| and sets that row and all below it to
// zero before Jacobi on R^H. With column pivoting, ||R(j:, l)|| <= |R_jj|
// for l >= j, so the dropped block is at most sqrt(n) u ||A|| in norm: the
// numerical null space, which the finish completes anyway. Kept, these rows
// are the rounding residue of a rank-deficient matrix, which shrinks by ~u
// per Householder step into the subnormals; inner products of such columns
// of R^H lose their precision and the rotations built from them are not
// unitary (seen: V off by 0.4 on a c 200 x 200 of rank 50).
// qrcp_rank returns the number of rows kept; absdiag(j) = |R_jj|. The CPU
// twin and the GPU kernel both call it.
template <class R, class F> BSVD_HD inline int qrcp_rank(int nw, F absdiag) {
  const R r00 = absdiag(0);
  for (int j = 1; j < nw; ++j)
    if (absdiag(j) < unit_roundoff<R>() * r00) return j;
  return nw;
}

// The finish's threshold for numerically null columns, as a fraction of
// sigma_max: u for the unblocked solvers, k u for the blocked ones (k = the
// pair width, blocked_kmax). Each blocked update leaves absolute errors of
// order k u ||W_pair|| in every column, so a column whose true norm is
// below that (and whose rotations stopped counting under the null floor)
// can end with a norm up to ~k u sigma_max in a direction set by rounding.
// Such columns are completed like the exactly null ones: U stays
// orthonormal, and the residual changes by at most 2 sigma_j < 2 k u
// sigma_max per column.
template <class R> BSVD_HD inline R finish_null_ratio(int kpair) {
  return R(kpair > 1 ? kpair : 1) * unit_roundoff<R>();
}
// The pivot key of the finish's completion of null columns (CPU
// complete_basis, GPU finish_and_write): the residual r_i of candidate
// e_i rounded to a float (clamped at 0) in the high word, ties to the
// smaller i in the low word; the largest key wins.
template <class R> BSVD_HD inline uint64_t completion_key(R r, int i, int mw) {
  const float f = float(r > R(0) ? r : R(0));
  uint32_t bits;
#if defined(__CUDA_ARCH__)
  bits = __float_as_uint(f);
#else
  memcpy(&bits, &f, sizeof bits);
#endif
  return (uint64_t(bits) << 32) | uint32_t(mw - 1 - i);
}
BSVD_HD inline int completion_row(uint64_t key, int mw) { return mw - 1 - int(key & 0xffffffffu); }

// The completion works in rounds (complete_basis, GPU finish): each round
// takes the b rows with the largest keys as candidates e_i, projects all b
// against the accepted set D at once (two classical Gram-Schmidt passes,
// as matrix products: the round reads U three times, not 3b times), then
// orthogonalizes each candidate against the ones this round already
// accepted (twice). The first candidate is always accepted (the pivot of the
// one-at-a-time rule); a later one only if its squared norm left,
// which is its residual downdated by this round's accepted columns, keeps
// at least half of the first candidate's residual rho. Each accepted pivot
// is thus within a factor 2 of the largest residual left (the greedy
// pivot), and rho >= (mw - |D|) / mw. b = 1 is the one-at-a-time rule.
// The round's X (mw x b) and coefficients (nw x b) must fit
// kCompletionBytes (shared memory on the GPU); 0 = not even one (the GPU's
// one-at-a-time completion with X in global memory, the same rule as b = 1).
constexpr int kCompletionMaxBlock = 16;
constexpr long long kCompletionBytes = 96 * 1024;
BSVD_HD inline int completion_block(int mw, int nw, int elem_bytes) {
  const long long b = kCompletionBytes / ((long long)(mw + nw) * elem_bytes);
  return int(b < kCompletionMaxBlock ? b : kCompletionMaxBlock);
}
template <class R> BSVD_HD inline bool completion_accepts(R left, R rho) {
  return left >= R(0.5) * rho;
}

template <class R> BSVD_HD inline bool blocked_counts(R a, R b, R pair_floor, R null_floor) {
  const R lo = a < b ? a : b, hi = a < b ? b : a;
  return hi >= pair_floor && lo >= null_floor;
}

} // namespace bsvd::detail
