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
// The final descending order is produced by solve_one's sort. The loop
// itself (and the carried norms' cancellation guard) is one_sided.hpp's,
// shared with the hyperbolic solver; this file is its plane rotation.
#include "one_sided.hpp"

#include <vector>

namespace bsvd::detail {
namespace cpu {

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

namespace {

// The plane rotation of every selected pair (one_sided.hpp's policy).
template <class T> struct PlaneRotations {
  using R = real_of_t<T>;
  int m, n;
  PairStep<R> rotate(int, int, T *wp, T *wq, T *vp, T *vq, R a, R b, T g, R ag) const {
    const Rotation<R> rot = jacobi_rotation(a, b, ag);
    const T te = rot.t * conj_(phase_(g, ag)); // t conj(e)
    PairStep<R> r;
    r.anew = a - rot.t * ag; // WCYCLE eq. 6
    r.bnew = b + rot.t * ag;
    r.swap = kSort2x2 && r.anew < r.bnew;
    cpu::rotate(m, wp, 1, wq, 1, rot.c, te, r.swap);
    if (vp) cpu::rotate(n, vp, 1, vq, 1, rot.c, te, r.swap);
    return r;
  }
  void begin_sweep() {}
  bool end_sweep(int, int) { return false; }
};

} // namespace

template <class T> SweepStats unblocked_impl(int m, int n, T *W, int ldw, T *V, int ldv,
                                             const Ordering &ord, real_of_t<T> tol, int max_sweeps,
                                             real_of_t<T> *norms, real_of_t<T> *anchor) {
  PlaneRotations<T> policy{m, n};
  return one_sided_sweeps(m, n, W, ldw, V, ldv, ord, tol, max_sweeps, norms, anchor, policy);
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
