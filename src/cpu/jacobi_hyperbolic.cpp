// Unblocked one-sided hyperbolic Jacobi (HBJ Sec. 2 eq. 2.10, Sec. 4.3):
// the loop of jacobi_unblocked.cpp with the signature J = diag(I, -I) of
// the columns. For every pair (p, q) of the ordering:
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
#include "cpu_internal.hpp"

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

// The carried norms' cancellation guard of jacobi_unblocked.cpp (kRecompute
// there, where the argument is made). Both columns of a hyperbolic step
// shrink, so both are guarded.
template <class R> constexpr R kRecomputeH = R(0.1);

} // namespace

template <class T> HyperbolicStats hyperbolic_impl(int m, int n, int nplus, T *W, int ldw, T *V,
                                                   int ldv, const Ordering &ord, real_of_t<T> tol,
                                                   int max_sweeps, real_of_t<T> *norms,
                                                   real_of_t<T> *anchor) {
  using R = real_of_t<T>;
  HyperbolicStats st;
  if (n <= 0 || m <= 0) {
    st.converged = true;
    return st;
  }
  const int half = ord.pairs_per_step();
  int substituted_run = 0; // consecutive sweeps with a 5/4 substitution
  for (int sweep = 1; sweep <= max_sweeps; ++sweep) {
    st.sweeps = sweep;
    for (int j = 0; j < n; ++j) anchor[j] = norms[j] = nrm2sq(m, W + int64_t(j) * ldw);

    long rotations = 0, substitutions = 0;
    for (int s = 0; s < ord.steps; ++s) {
      for (int k = 0; k < half; ++k) {
        int p, q;
        ord.pair(s, k, p, q);
        if (p >= n || q >= n) continue; // dummy slot
        const R a = norms[p], b = norms[q];
        if (a == R(0) || b == R(0)) continue;
        T *wp = W + int64_t(p) * ldw;
        T *wq = W + int64_t(q) * ldw;
        const T g = dotc(m, wp, wq);
        const R ag = std::abs(g);
        if (!needs_rotation(a, b, ag, tol) || !above_underflow_noise(ag, m)) continue;
        ++rotations;
        const T e = phase_(g, ag);
        R anew, bnew;
        bool fresh = false; // recompute both norms from the columns
        if ((p < nplus) == (q < nplus)) {
          const Rotation<R> rot = jacobi_rotation(a, b, ag);
          const T te = rot.t * conj_(e);
          rotate(m, wp, 1, wq, 1, rot.c, te, false);
          if (V) rotate(n, V + int64_t(p) * ldv, 1, V + int64_t(q) * ldv, 1, rot.c, te, false);
          anew = a - rot.t * ag;
          bnew = b + rot.t * ag;
        } else {
          const HyperbolicRotation<R> rot = hyperbolic_rotation(a, b, ag);
          const T th = rot.t * conj_(e);
          hrotate(m, wp, wq, rot.c, th);
          if (V) hrotate(n, V + int64_t(p) * ldv, V + int64_t(q) * ldv, rot.c, th);
          anew = a + rot.t * ag;
          bnew = b + rot.t * ag;
          if (rot.substituted) {
            ++substitutions;
            fresh = true;
          }
        }
        R ancp = std::max(anchor[p], anew);
        R ancq = std::max(anchor[q], bnew);
        if (fresh || anew < kRecomputeH<R> * ancp) ancp = anew = nrm2sq(m, wp);
        if (fresh || bnew < kRecomputeH<R> * ancq) ancq = bnew = nrm2sq(m, wq);
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
    // A substituted step leaves the pair as parallel as it was when the
    // rank condition fails (a_p = +-e a_q with equal norms stays so, both
    // scaled by 1/sqrt(3)); where the condition holds but rounding hit it,
    // the step changes the pair and the next sweep rotates it properly.
    substituted_run = substitutions > 0 ? substituted_run + 1 : 0;
    if (substituted_run >= kHyperbolicBreakdownSweeps ||
        (sweep == max_sweeps && substitutions > 0)) {
      st.breakdown = true;
      break;
    }
  }
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
