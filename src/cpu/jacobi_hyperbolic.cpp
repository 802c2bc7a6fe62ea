// Unblocked one-sided hyperbolic Jacobi (HBJ Sec. 2 eq. 2.10, Sec. 4.3):
// the loop of the unblocked solver (one_sided.hpp) with the signature
// J = diag(I, -I) of the columns. For every pair (p, q) of the ordering:
//   same side of nplus:  the trigonometric rotation (jacobi_rotation),
//                        a_p' = c (a_p - t conj(e) a_q), a_q' = c (a_q + t e a_p);
//   across nplus:        the hyperbolic one (hyperbolic_rotation),
//                        a_p' = ch (a_p + th conj(e) a_q), a_q' = ch (a_q + th e a_p).
// Both are tested by the same relative criterion |gamma| > tol ||a_p|| ||a_q||
// and both count towards the stop: a sweep without any rotation ends the
// iteration. HBJ Sec. 4.5 stops instead on a sweep without *proper*
// rotations (cos, cosh != 1); jacobi_blocked.cpp records why that is not
// safe for graded columns (a rotation with cos == 1 can still turn the
// small column by a relative amount far above tol), and the hyperbolic
// shortcut cosh == 1 at |coth phi| >= big_cot has the same property, so
// every rotation counts here too.
//
// No 2x2 sorting (HBJ Sec. 4.3 step 5 swaps trigonometric pairs only, and
// jacobi_unblocked.cpp's kSort2x2 measurements apply): the columns never
// leave their side of nplus; the finish sorts within each side.
#include "one_sided.hpp"

#include <vector>

namespace bsvd::detail {
namespace cpu {

namespace {

// x' = c (x + th y), y' = c (y + conj(th) x) with th = tanh conj(e): the
// hyperbolic step on two columns (rotate() is its trigonometric sibling).
template <class T> void hrotate(int len, T *x, T *y, real_of_t<T> c, T th) {
  const T tc = conj_(th);
  for (int i = 0; i < len; ++i) {
    const T a = x[i], b = y[i];
    x[i] = c * (a + th * b);
    y[i] = c * (b + tc * a);
  }
}

// The rotation of every selected pair (one_sided.hpp's policy): plane
// within a side of nplus, hyperbolic across it; and the breakdown rule.
template <class T> struct SignedRotations {
  using R = real_of_t<T>;
  int m, n, nplus;
  long substitutions = 0; // 5/4 substitutions in the current sweep
  int substituted_run = 0; // consecutive sweeps with one
  bool breakdown = false;
  bool any_substitution = false;

  PairStep<R> rotate(int p, int q, T *wp, T *wq, T *vp, T *vq, R a, R b, T g, R ag) {
    const T e = phase_(g, ag);
    PairStep<R> r;
    if ((p < nplus) == (q < nplus)) {
      const Rotation<R> rot = jacobi_rotation(a, b, ag);
      const T te = rot.t * conj_(e);
      cpu::rotate(m, wp, 1, wq, 1, rot.c, te, false);
      if (vp) cpu::rotate(n, vp, 1, vq, 1, rot.c, te, false);
      r.anew = a - rot.t * ag;
      r.bnew = b + rot.t * ag;
    } else {
      const HyperbolicRotation<R> rot = hyperbolic_rotation(a, b, ag);
      const T th = rot.t * conj_(e);
      hrotate(m, wp, wq, rot.c, th);
      if (vp) hrotate(n, vp, vq, rot.c, th);
      r.anew = a + rot.t * ag;
      r.bnew = b + rot.t * ag;
      if (rot.substituted) {
        ++substitutions;
        r.fresh = true; // the carried values hold for the orthogonalizing step only
      }
    }
    return r;
  }
  void begin_sweep() { substitutions = 0; }
  // A substituted step leaves the pair as parallel as it was when the rank
  // condition fails (a_p = +-e a_q with equal norms stays so, both scaled
  // by 1/sqrt(3)); where the condition holds but rounding hit it, the step
  // changes the pair and the next sweep rotates it properly.
  bool end_sweep(int sweep, int max_sweeps) {
    any_substitution = any_substitution || substitutions > 0;
    substituted_run = substitutions > 0 ? substituted_run + 1 : 0;
    breakdown =
        substituted_run >= kHyperbolicBreakdownSweeps || (sweep == max_sweeps && substitutions > 0);
    return breakdown;
  }
};

} // namespace

template <class T> HyperbolicStats hyperbolic_impl(int m, int n, int nplus, T *W, int ldw, T *V,
                                                   int ldv, const Ordering &ord, real_of_t<T> tol,
                                                   int max_sweeps, real_of_t<T> *norms,
                                                   real_of_t<T> *anchor) {
  SignedRotations<T> policy{m, n, nplus};
  const SweepStats s =
      one_sided_sweeps(m, n, W, ldw, V, ldv, ord, tol, max_sweeps, norms, anchor, policy);
  HyperbolicStats st;
  st.sweeps = s.sweeps;
  st.converged = s.converged;
  st.breakdown = policy.breakdown;
  st.substituted = policy.any_substitution;
  return st;
}

} // namespace cpu

template <class T> HyperbolicStats jacobi_hyperbolic(int m, int n, int nplus, T *W, int ldw, T *V,
                                                     int ldv, const Ordering &ord, double tol,
                                                     int max_sweeps) {
  using R = real_of_t<T>;
  std::vector<R> norms(size_t(std::max(n, 1))), anchor(size_t(std::max(n, 1)));
  return cpu::hyperbolic_impl(m, n, nplus, W, ldw, V, ldv, ord, R(tol), max_sweeps, norms.data(),
                              anchor.data());
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template HyperbolicStats cpu::hyperbolic_impl<T>(int, int, int, T *, int, T *, int,              \
                                                   const Ordering &, real_of_t<T>, int,            \
                                                   real_of_t<T> *, real_of_t<T> *);                \
  template HyperbolicStats jacobi_hyperbolic<T>(int, int, int, T *, int, T *, int,                 \
                                                const Ordering &, double, int);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail
