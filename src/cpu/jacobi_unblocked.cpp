// Unblocked one-sided (Hestenes) Jacobi: MAGMA-SVD Sec. 3 Algorithm 2 with
// the complex rotation of eq. 6, WCYCLE Sec. II-C, and the norm carrying of
// WCYCLE Sec. IV-B-2 eq. 6.
//
// One sweep:
//   alpha_j = ||w_j||^2 recomputed from the columns (fresh);
//   for every step of the ordering, for every pair (p, q) of the step
//   (pairs of one step are disjoint, so visiting them one after the other
//   gives exactly the result of the parallel GPU step):
//     skip when p or q is a dummy (>= n) or a column is zero;
//     gamma = w_p^H w_q; rotate when |gamma| > tol sqrt(alpha_p) sqrt(alpha_q);
//     (c, s, t) = jacobi_rotation(alpha_p, alpha_q, |gamma|), e = gamma/|gamma|
//     w_p' = c w_p - s conj(e) w_q,   w_q' = s e w_p + c w_q   (and V's columns)
//     alpha_p' = alpha_p - t|gamma|,  alpha_q' = alpha_q + t|gamma|
//     [2x2 sorting (HBJ Sec. 4.3 step 5), off by default -- see kSort2x2:
//     if alpha_p' < alpha_q' the two results are stored exchanged so the
//     larger column stays at index p.]
// A sweep without a rotation ends the iteration (converged). Because it
// rotates nothing, its test is made entirely with freshly computed norms.
// The final descending order is produced by solve_one's sort.
#include "cpu_internal.hpp"

#include <vector>

namespace bsvd::detail {
namespace cpu {

// Cancellation guard for the carried norms (LAPACK xGESVJ recomputes a
// norm after a rotation that shrank it by more than a factor sqrt(eps)).
//
// The update of the shrinking column, alpha' = alpha - t|gamma| with
// 0 <= t|gamma| <= alpha, adds an absolute error of order u * alpha to the
// error the carried value already has. Let anchor_j be the largest value the
// carried norm of column j has had since it was last computed from the
// column (its lineage moves with the data on a 2x2 swap, when enabled). The absolute error
// of the carried value is then at most about 2u * anchor_j per update since
// that recomputation. We recompute alpha_j = ||w_j||^2 from the column as
// soon as alpha_j < kRecompute * anchor_j, which bounds the relative error of
// every carried norm by about (2 / kRecompute) u per update since its last
// recomputation (<= 20 (n-1) u within a sweep), and costs at most one extra
// norm per column per decade of shrinkage. kRecompute = 0.1 is much tighter
// than LAPACK's sqrt(eps) because the GPU kernel, which carries the norms
// across a whole sweep in the same way, must not drift; the carried values
// only steer the rotation angle and the test within a sweep (the final,
// converged sweep uses fresh norms only), so accuracy does not depend on it,
// only the rate of convergence.
// (Measured: 0.1, 0.5, 2 and 1e-8 give the same sweep counts on the
// kappa = 1e10 test matrices.)
template <class R> constexpr R kRecompute = R(0.1);

// 2x2 sorting with the index-based parallel orderings of ordering.hpp slows
// convergence down, or stops it: a swap exchanges the future paths of two
// columns through the table, so a sweep no longer meets every pair of
// columns once. Sweeps to convergence, double, geo family, kappa = 1e10,
// tol = sqrt(m) u, n x n, seed 5 (sorted / unsorted):
//   n            16     33     64     100    200    300
//   round-robin  16/12  28/19  40/24  53/27  >60/33 >60/38
//   odd-even     12/11  19/19  29/22  28/27  34/33  38/37
//   row-cyclic   8/11   11/16  14/25  17/26  22/33  25/36  (sequential)
// (LAPACK dgesvj, de Rijk pivoting: 14 at n = 64, 16 at 100, 17 at 300.)
// Sorting helps only an ordering close to row-cyclic. HBJ's R|| and C||
// (BSVD_ORDERING_ROW_PARALLEL / COLUMN_PARALLEL) are offered, but they
// gain from sorting only modestly (geo, kappa 1e10: 22 sweeps at n = 64 and
// 32 at 300 with sorting, vs 24 / 37 for unsorted round-robin; see
// docs/design/decisions/0014-no-2x2-sorting.md) and the GPU kernel does not
// implement them yet; sorting is therefore off, and solve_one sorts at the
// end. Kept as a switch so the GPU twin can be compared either way.
constexpr bool kSort2x2 = false;

template <class T> SweepStats unblocked_impl(int m, int n, T *W, int ldw, T *V, int ldv,
                                             const Ordering &ord, real_of_t<T> tol, int max_sweeps,
                                             real_of_t<T> *norms, real_of_t<T> *anchor) {
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

    long rotations = 0;
    for (int s = 0; s < ord.steps; ++s) {
      for (int k = 0; k < half; ++k) {
        int p, q;
        ord.pair(s, k, p, q);
        if (p >= n || q >= n) continue; // dummy slot
        const R a = norms[p], b = norms[q];
        if (a == R(0) || b == R(0)) continue; // zero column: nothing to rotate
        T *wp = W + int64_t(p) * ldw;
        T *wq = W + int64_t(q) * ldw;
        const T g = dotc(m, wp, wq);
        const R ag = std::abs(g);
        if (!needs_rotation(a, b, ag, tol) || !above_underflow_noise(ag, m)) continue;
        ++rotations;

        const Rotation<R> rot = jacobi_rotation(a, b, ag);
        const T te = rot.t * conj_(phase_(g, ag)); // t conj(e)
        R anew = a - rot.t * ag; // WCYCLE eq. 6
        R bnew = b + rot.t * ag;
        R ancp = std::max(anchor[p], anew);
        R ancq = std::max(anchor[q], bnew);
        const bool swap = kSort2x2 && anew < bnew;
        rotate(m, wp, 1, wq, 1, rot.c, te, swap);
        if (V) rotate(n, V + int64_t(p) * ldv, 1, V + int64_t(q) * ldv, 1, rot.c, te, swap);
        if (swap) {
          std::swap(anew, bnew);
          std::swap(ancp, ancq);
        }
        if (anew < kRecompute<R> * ancp) ancp = anew = nrm2sq(m, wp);
        if (bnew < kRecompute<R> * ancq) ancq = bnew = nrm2sq(m, wq);
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
  }
  return st;
}

} // namespace cpu

template <class T> SweepStats jacobi_unblocked(int m, int n, T *W, int ldw, T *V, int ldv,
                                               const Ordering &ord, double tol, int max_sweeps) {
  using R = real_of_t<T>;
  std::vector<R> norms(size_t(std::max(n, 1))), anchor(size_t(std::max(n, 1)));
  return cpu::unblocked_impl(m, n, W, ldw, V, ldv, ord, R(tol), max_sweeps, norms.data(),
                             anchor.data());
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template SweepStats cpu::unblocked_impl<T>(int, int, T *, int, T *, int, const Ordering &,       \
                                             real_of_t<T>, int, real_of_t<T> *, real_of_t<T> *);   \
  template SweepStats jacobi_unblocked<T>(int, int, T *, int, T *, int, const Ordering &, double,  \
                                          int);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail
