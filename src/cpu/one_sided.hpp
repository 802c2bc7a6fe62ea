// The sweep loop of the unblocked one-sided solvers, shared by the SVD's
// (jacobi_unblocked.cpp) and the hyperbolic SVD's (jacobi_hyperbolic.cpp);
// the rotation of a pair is the caller's policy.
//
// One sweep: the squared column norms alpha_j = ||w_j||^2 computed fresh
// from the columns; then for every step of the ordering and every pair
// (p, q) of the step (disjoint, so visiting them one after the other is the
// parallel GPU step): skip a dummy slot (>= n) or a zero column; gamma =
// w_p^H w_q; rotate when |gamma| > tol sqrt(alpha_p) sqrt(alpha_q)
// (rotates_pair, tol = sqrt(max(m, 16)) u by default: rotation.hpp) and
// gamma is above the underflow noise (rotation.hpp). The policy rotates
// the pair's columns of W and V and returns the carried norms' new values;
// the loop then applies the cancellation guard (kRecompute below) and
// stores them. A sweep without a rotation ends the iteration (converged);
// its test was made entirely with fresh norms.
//
// The policy:
//   PairStep<R> rotate(int p, int q, T *wp, T *wq, T *vp, T *vq, R a, R b,
//                      T g, R ag)
//       rotates, returns (anew, bnew, swap, fresh): swap when the two
//       results were stored exchanged (2x2 sorting), fresh when the carried
//       values are not to be trusted (recompute both from the columns);
//       vp, vq are V's columns, or null without V;
//   void begin_sweep();
//   bool end_sweep(int sweep, int max_sweeps)
//       after a sweep that rotated: true stops the iteration there.
#pragma once

#include "cpu_internal.hpp"

#include <algorithm>
#include <utility>

namespace bsvd::detail::cpu {

// Cancellation guard for the carried norms (LAPACK xGESVJ recomputes a
// norm after a rotation that shrank it by more than a factor sqrt(eps)).
//
// The update of a shrinking column, alpha' = alpha - t|gamma| with
// 0 <= t|gamma| <= alpha, adds an absolute error of order u * alpha to the
// error the carried value already has. Let anchor_j be the largest value the
// carried norm of column j has had since it was last computed from the
// column (its lineage moves with the data on a 2x2 swap, when enabled). The
// absolute error of the carried value is then at most about 2u * anchor_j
// per update since that recomputation. We recompute alpha_j = ||w_j||^2 from
// the column as soon as alpha_j < kRecompute * anchor_j, which bounds the
// relative error of every carried norm by about (2 / kRecompute) u per
// update since its last recomputation (<= 20 (n-1) u within a sweep), and
// costs at most one extra norm per column per decade of shrinkage.
// kRecompute = 0.1 is much tighter than LAPACK's sqrt(eps) because the GPU
// kernel, which carries the norms across a whole sweep in the same way, must
// not drift; the carried values only steer the rotation angle and the test
// within a sweep (the final, converged sweep uses fresh norms only), so
// accuracy does not depend on it, only the rate of convergence. (Measured:
// 0.1, 0.5, 2 and 1e-8 give the same sweep counts on the kappa = 1e10 test
// matrices.) A hyperbolic step shrinks both columns: both are guarded.
template <class R> constexpr R kRecompute = R(0.1);

template <class R> struct PairStep {
  R anew = 0, bnew = 0;
  bool swap = false; // results stored exchanged (the norms move with them)
  bool fresh = false; // recompute both norms from the columns
};

template <class T, class Policy>
SweepStats one_sided_sweeps(int m, int n, T *W, int ldw, T *V, int ldv, const Ordering &ord,
                            real_of_t<T> tol, int max_sweeps, real_of_t<T> *norms,
                            real_of_t<T> *anchor, Policy &policy) {
  using R = real_of_t<T>;
  SweepStats st;
  if (n <= 0 || m <= 0) {
    st.converged = true;
    return st;
  }
  const int half = ord.pairs_per_step();
  for (int sweep = 1; sweep <= max_sweeps; ++sweep) {
    st.sweeps = sweep;
    for (int j = 0; j < n; ++j) anchor[j] = norms[j] = nrm2sq(m, W + int64_t(j) * ldw);
    policy.begin_sweep();
    long rotations = 0;
    for (int s = 0; s < ord.steps; ++s) {
      for (int k = 0; k < half; ++k) {
        int p, q;
        ord.pair(s, k, p, q);
        if (p >= n || q >= n) continue; // dummy slot
        const R a = norms[p], b = norms[q];
        // A zero squared norm fails rotates_pair below: skip its inner product.
        if (a == R(0) || b == R(0)) continue;
        T *wp = W + int64_t(p) * ldw;
        T *wq = W + int64_t(q) * ldw;
        const T g = dotc(m, wp, wq);
        const R ag = std::abs(g);
        if (!rotates_pair(a, b, ag, tol) || !above_underflow_noise(ag, m)) continue;
        ++rotations;
        T *vp = V ? V + int64_t(p) * ldv : nullptr;
        T *vq = V ? V + int64_t(q) * ldv : nullptr;
        const PairStep<R> r = policy.rotate(p, q, wp, wq, vp, vq, a, b, g, ag);
        R anew = r.anew, bnew = r.bnew;
        R ancp = std::max(anchor[p], anew);
        R ancq = std::max(anchor[q], bnew);
        if (r.swap) {
          std::swap(anew, bnew);
          std::swap(ancp, ancq);
        }
        if (r.fresh || anew < kRecompute<R> * ancp) ancp = anew = nrm2sq(m, wp);
        if (r.fresh || bnew < kRecompute<R> * ancq) ancq = bnew = nrm2sq(m, wq);
        norms[p] = anew;
        norms[q] = bnew;
        anchor[p] = ancp;
        anchor[q] = ancq;
      }
    }
    if (rotations == 0) {
      st.converged = true;
      break;
    }
    if (policy.end_sweep(sweep, max_sweeps)) break;
  }
  return st;
}

} // namespace bsvd::detail::cpu
