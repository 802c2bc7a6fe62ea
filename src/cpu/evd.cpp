// Two-sided cyclic Jacobi eigensolver of a small Hermitian matrix, in the
// parallel form of the GPU shared-memory eigensolver (WCYCLE Sec. IV-C,
// eq. 7 and Fig. 5; MAGMA-SVD Sec. 5.3 / Algorithm 1 with eq. 6).
//
// Per step of the ordering (its pairs are disjoint):
//   1. every pair (p, q) of the step gets its rotation from the *current* G:
//        alpha = g_pp, beta = g_qq, gamma = g_pq = |gamma| e,
//        rotate when |gamma| > tol sqrt(|g_pp|) sqrt(|g_qq|)  (needs_rotation;
//        |.| so that a diagonal that rounding made slightly negative, or a
//        zero diagonal, cannot produce a NaN: with a zero diagonal any
//        non-zero g_pq is rotated),
//        (c, s, t) = jacobi_rotation(alpha, beta, |gamma|)  -- the same
//        formula as the one-sided solver, applied to the implicit columns a_p,
//        a_q with G = A^H A: J_pq = [c, s e; -s conj(e), c];
//   2. G <- G J   (columns p, q of every pair),
//   3. G <- J^H G (rows p, q of every pair),
//   4. Q <- Q J,
//   5. the 2x2 diagonal block of each pair is set to its exact image:
//        g_pp = alpha - t|gamma|, g_qq = beta + t|gamma|, g_pq = g_qp = 0
//      (the same update as WCYCLE eq. 6 / HBJ Sec. 4.3 step 5; element (p,q)
//      of J^H G J depends only on the 2x2 block of its own pair, so this is
//      what exact arithmetic gives, without the rounding of steps 2-3).
// Applying a whole step at once is the same as the product (eq. 7) of the
// step's commuting rotations; the CPU applies them one after the other.
#include "cpu_internal.hpp"
#include "../core/inner_sweeps.hpp"

#include <vector>

namespace bsvd::detail {
namespace cpu {

template <class T> EvdCount evd_impl(int k, T *G, int ldg, T *Q, int ldq, real_of_t<T> tol,
                                     real_of_t<T> null_floor, int sweeps, const Ordering &ord,
                                     const EvdWork<T> &ws) {
  using R = real_of_t<T>;
  EvdCount cnt;
  if (k < 2) return cnt;
  const int cap = sweeps > 0 ? sweeps : kInnerConvergeCap;
  const int half = ord.pairs_per_step();
  R gmax = 0;
  for (int i = 0; i < k; ++i) gmax = std::max(gmax, std::fabs(real_(G[i + int64_t(i) * ldg])));
  const R floor = blocked_noise_floor(gmax, k);
  for (int sweep = 0; sweep < cap; ++sweep) {
    long in_sweep = 0;
    for (int s = 0; s < ord.steps; ++s) {
      int np = 0;
      for (int j = 0; j < half; ++j) {
        int p, q;
        ord.pair(s, j, p, q);
        if (p >= k || q >= k) continue;
        const R a = real_(G[p + int64_t(p) * ldg]);
        const R b = real_(G[q + int64_t(q) * ldg]);
        const T g = G[p + int64_t(q) * ldg];
        const R ag = std::abs(g);
        if (!needs_rotation(std::fabs(a), std::fabs(b), ag, tol)) continue;
        const Rotation<R> rot = jacobi_rotation(a, b, ag);
        ws.p[np] = p;
        ws.q[np] = q;
        ws.c[np] = rot.c;
        ws.te[np] = rot.t * conj_(phase_(g, ag)); // t conj(e)
        ws.anew[np] = a - rot.t * ag;
        ws.bnew[np] = b + rot.t * ag;
        ++np;
        if (rot.c != R(1)) ++cnt.proper;
        if (blocked_counts(std::fabs(a), std::fabs(b), floor, null_floor)) ++cnt.significant;
      }
      if (np == 0) continue;
      in_sweep += np;
      // G J: columns p' = c (g_p - t conj(e) g_q), q' = c (g_q + t e g_p).
      for (int r = 0; r < np; ++r)
        rotate(k, G + int64_t(ws.p[r]) * ldg, 1, G + int64_t(ws.q[r]) * ldg, 1, ws.c[r], ws.te[r],
               false);
      // J^H G: rows p' = c (g_p - t e g_q), q' = c (g_q + t conj(e) g_p).
      for (int r = 0; r < np; ++r)
        rotate(k, G + ws.p[r], ldg, G + ws.q[r], ldg, ws.c[r], conj_(ws.te[r]), false);
      // Q J, as for the columns of G.
      for (int r = 0; r < np; ++r)
        rotate(k, Q + int64_t(ws.p[r]) * ldq, 1, Q + int64_t(ws.q[r]) * ldq, 1, ws.c[r], ws.te[r],
               false);
      for (int r = 0; r < np; ++r) {
        const int p = ws.p[r], q = ws.q[r];
        G[p + int64_t(p) * ldg] = ws.anew[r];
        G[q + int64_t(q) * ldg] = ws.bnew[r];
        G[p + int64_t(q) * ldg] = T(0);
        G[q + int64_t(p) * ldg] = T(0);
      }
    }
    cnt.applied += in_sweep;
    if (in_sweep == 0) break;
  }
  return cnt;
}

} // namespace cpu

template <class T> long hermitian_jacobi_evd(int k, T *G, int ldg, T *Q, int ldq, double tol,
                                             int sweeps, bsvd_ordering_t ordering) {
  using R = real_of_t<T>;
  if (k < 2) return 0;
  const Ordering ord = make_ordering(ordering, k);
  cpu::Arena dry;
  cpu::EvdWork<T> ws;
  ws.carve(dry, k);
  std::vector<unsigned char> buf(dry.used() + 64);
  void *base = buf.data() + (64 - reinterpret_cast<uintptr_t>(buf.data()) % 64) % 64;
  cpu::Arena arena(base);
  ws.carve(arena, k);
  return cpu::evd_impl(k, G, ldg, Q, ldq, R(tol), R(0), sweeps, ord, ws).applied;
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template cpu::EvdCount cpu::evd_impl<T>(int, T *, int, T *, int, real_of_t<T>, real_of_t<T>,     \
                                          int, const Ordering &, const cpu::EvdWork<T> &);         \
  template long hermitian_jacobi_evd<T>(int, T *, int, T *, int, double, int, bsvd_ordering_t);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail
