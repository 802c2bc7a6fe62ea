// Block one-sided Jacobi (MAGMA-SVD Sec. 3 eq. 11 and Sec. 5; HBJ eqs.
// 2.6-2.9; WCYCLE Algorithm 1).
//
// The n columns are cut into blocks of nb (the last may be narrower). For
// every block pair (i, j) of the block ordering:
//   G = [W_i W_j]^H [W_i W_j]                 (k x k Hermitian, k = w_i + w_j)
//   Q = eigenvectors of G by hermitian_jacobi_evd (eig_sweeps sweeps, 0 = to
//       convergence, < 0 = per matrix and outer sweep by InnerSweepRule,
//       src/core/inner_sweeps.hpp); if no rotation was needed, Q = I and
//       nothing changes;
//   Q <- Q + Q (I - Q^H Q) / 2   (re-orthogonalization, see Accuracy)
//   columns of Q ordered by descending eigenvalue when nb >= kSortMinNb
//   [W_i W_j] <- [W_i W_j] Q,   [V_i V_j] <- [V_i V_j] Q.
// With a single block (n <= nb) a sweep is one Gram EVD of the whole matrix.
//
// Convergence (see also blocked_tol / blocked_noise_floor /
// blocked_null_floor in src/core/rotation.hpp: the threshold is max(tol,
// k u), and rotations between columns at the pair's noise floor, or with a
// column below u max|w_ij|, do not count). The first inner sweep
// of every eigensolve tests the freshly formed Gram matrix: |g_pq| > tol sqrt(g_pp g_qq) is exactly the one-sided
// test |w_p^H w_q| > tol ||w_p|| ||w_q||. A block sweep in which no
// eigensolve rotated anything means all column pairs are relatively
// orthogonal to tol: the iteration stops (converged).
//   HBJ Sec. 4.5 stops instead on a sweep without *proper* rotations
// (cos != 1). That is not safe for graded columns: cos == 1 whenever
// |gamma| <= |alpha - beta| / big_cot, i.e. for cosines of the angle up to
// about (sigma_p / sigma_q) sqrt(u / 2) -- any angle when sigma_p / sigma_q
// exceeds 1e8 -- and such a rotation changes the small column by a relative
// amount equal to that cosine. Measured (double, n = 300, kappa = 1e10): in
// the last sweep that the proper-rotation criterion accepts, non-proper
// rotations with |cos| up to 1e13 tol were still applied. Counting every
// rotation costs 1-2 extra sweeps (e.g. 21 instead of 19 at n = 300, nb =
// 16) and guarantees the final state passed the relative test.
//
// Accuracy. Forming G squares the condition number of the pair, so in the
// first sweeps the eigenvectors of the small part of G are inaccurate and
// the small columns of W Q carry absolute errors of order u ||W||, as the
// cancellations of the unblocked method do; later sweeps see nearly
// orthogonal graded columns, whose Gram matrices are well conditioned after
// diagonal scaling (Demmel-Veselic), and converge to relative orthogonality
// like the unblocked method. What does limit the accuracy is the
// orthogonality of Q: it is a product of ~(inner sweeps x k) rotations per
// column, each off by O(u) in norm, and every column of W is multiplied by
// such a Q ~ (n / nb) times per sweep -- many more rotations than the
// unblocked method applies. Without the Newton-Schulz step, max|Q^T Q - I|
// was ~30 u for k = 32 and max|sigma_i - sigma_true_i| / (sigma_1 u) reached
// 30-45 at n = 100 and ~100 at n = 300 (unblocked: ~10 and ~25). One
// working-precision Newton-Schulz step brings it to 4-10 at n = 100-300,
// LAPACK's level, for O(k^3) per pair (the EVD itself is O(k^3) per sweep).
// The step perturbs Q by O(||I - Q^H Q||) = O(k u), far below tol's effect.
//
// Sorting. Ordering Q's columns by eigenvalue (the block analogue of 2x2
// sorting) speeds convergence up for wide blocks and stops it for narrow
// ones, as 2x2 sorting does with these index-based orderings (see
// jacobi_unblocked.cpp). Sweeps, double, logrand / geo, kappa = 1e10,
// round-robin (sorted / unsorted):
//   n = 200: nb 2: >40/33-35, nb 4: 33-34/34, nb 8: 24/33-34
//   n = 300: nb 16: 21/36;  n = 500: nb 16: 27-28/>40
// Hence sorting from nb = 8 on (and in the single-block case, where there is
// no other pair to disturb).
#include "cpu_internal.hpp"
#include "../core/inner_sweeps.hpp"

#include <numeric>
#include <vector>

namespace bsvd::detail {
namespace cpu {

namespace {

constexpr int kSortMinNb = 8;

// G = W_c^H W_c for the k columns listed in cols (both triangles; the
// diagonal is real).
template <class T> void form_gram(int m, int k, const T *W, int ldw, const int *cols, T *G) {
  for (int c = 0; c < k; ++c) {
    const T *wc = W + int64_t(cols[c]) * ldw;
    G[c + int64_t(c) * k] = nrm2sq(m, wc);
    for (int r = 0; r < c; ++r) {
      const T g = dotc(m, W + int64_t(cols[r]) * ldw, wc); // w_r^H w_c
      G[r + int64_t(c) * k] = g;
      G[c + int64_t(r) * k] = conj_(g);
    }
  }
}

// X(:, cols) <- X(:, cols) * Q(:, perm), row by row (one row of k entries
// of temporary storage).
template <class T> void update_cols(int rows, int k, T *X, int ldx, const int *cols, const T *Q,
                                    const int *perm, T *row) {
  for (int i = 0; i < rows; ++i) {
    for (int r = 0; r < k; ++r) row[r] = X[i + int64_t(cols[r]) * ldx];
    for (int c = 0; c < k; ++c) {
      const T *qc = Q + int64_t(perm[c]) * k;
      T s0 = T(0), s1 = T(0);
      int r = 0;
      for (; r + 1 < k; r += 2) {
        s0 += row[r] * qc[r];
        s1 += row[r + 1] * qc[r + 1];
      }
      if (r < k) s0 += row[r] * qc[r];
      X[i + int64_t(cols[c]) * ldx] = s0 + s1;
    }
  }
}

// Q <- Q + Q (I - Q^H Q) / 2: one Newton-Schulz step towards the unitary
// polar factor of Q, in the working precision (HBJ and MAGMA do not do
// this; see the file comment for why we do). C = I - Q^H Q is Hermitian and
// goes into G's storage (its diagonal was saved by the caller); the update
// of each row of Q uses the k-entry row buffer.
template <class T> void reorthogonalize(int k, T *Q, T *C, T *row) {
  using R = real_of_t<T>;
  for (int j = 0; j < k; ++j) {
    const T *qj = Q + int64_t(j) * k;
    C[j + int64_t(j) * k] = T(R(1) - nrm2sq(k, qj));
    for (int i = 0; i < j; ++i) {
      const T h = -dotc(k, Q + int64_t(i) * k, qj); // -(q_i^H q_j)
      C[i + int64_t(j) * k] = h;
      C[j + int64_t(i) * k] = conj_(h);
    }
  }
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < k; ++j) {
      T s = T(0);
      for (int r = 0; r < k; ++r) s += Q[i + int64_t(r) * k] * C[r + int64_t(j) * k];
      row[j] = s;
    }
    for (int j = 0; j < k; ++j) Q[i + int64_t(j) * k] += row[j] / R(2);
  }
}

template <class T> void set_identity(int k, T *Q) {
  for (int c = 0; c < k; ++c)
    for (int r = 0; r < k; ++r) Q[r + int64_t(c) * k] = r == c ? T(1) : T(0);
}

// The end of every pair solve that rotated, given ws.Q (the accumulated
// rotations) and ws.eig (the new squared column norms): Q re-orthogonalized
// (ws.G is overwritten), its columns ordered by descending eig (stable; the
// block analogue of the 2x2 sorting, larger columns move to the lower
// block) when sorting, then [W_i W_j] and [V_i V_j] multiplied by it.
template <class T> void apply_pair_rotation(int m, int n, T *W, int ldw, T *V, int ldv, int k,
                                            bool sort, const BlockedWork<T> &ws) {
  using R = real_of_t<T>;
  for (int c = 0; c < k; ++c) ws.perm[c] = c;
  reorthogonalize(k, ws.Q, ws.G, ws.row);
  if (sort) {
    const R *eig = ws.eig;
    std::stable_sort(ws.perm, ws.perm + k, [eig](int a, int b) { return eig[a] > eig[b]; });
  }
  update_cols(m, k, W, ldw, ws.cols, ws.Q, ws.perm, ws.row);
  if (V) update_cols(n, k, V, ldv, ws.cols, ws.Q, ws.perm, ws.row);
}

// One pair: Gram, EVD, update. Returns the eigensolver's rotation counts.
template <class T> EvdCount rotate_block_pair(int m, int n, T *W, int ldw, T *V, int ldv, int k,
                                              bool sort, real_of_t<T> tol, real_of_t<T> null_floor,
                                              int eig_sweeps, const Ordering &eig_ord,
                                              const BlockedWork<T> &ws) {
  form_gram(m, k, W, ldw, ws.cols, ws.G);
  set_identity(k, ws.Q);
  const EvdCount cnt =
      evd_impl(k, ws.G, k, ws.Q, k, blocked_tol(tol, k), null_floor, eig_sweeps, eig_ord, ws.evd);
  if (cnt.applied == 0) return cnt; // Q = I: nothing to do
  for (int c = 0; c < k; ++c) ws.eig[c] = real_(ws.G[c + int64_t(c) * k]);
  apply_pair_rotation(m, n, W, ldw, V, ldv, k, sort, ws);
  return cnt;
}

// One pair by one-sided Jacobi (WCYCLE Observation 1 / Theorem 1: the
// right singular vectors of [W_i W_j] are a rotation that orthogonalizes
// it). The twin of the GPU's shared-memory pair SVD (blk_pair_kernel in
// src/cuda/blocked/). The Jacobi iteration runs on a copy of the
// pair (ws.pair) with the same inner ordering, threshold and counting as
// evd_impl on the pair's Gram matrix -- in exact arithmetic the two make
// the same rotations, g_pq = w_p^H w_q -- but from fresh inner products of
// the rotated columns. Q accumulates the rotations; it is re-orthogonalized,
// its columns ordered by the new column norms, and W and V are updated by
// it as in rotate_block_pair (WCYCLE Algorithm 2, line 16: A_ij J_ij).
//   Keeping the rotated copy as the new W instead was measured worse: the
// columns then carry the rounding of ~2n rotations per sweep (each column
// meets every other once per pair it is in) rather than of n / nb products
// with a re-orthogonalized Q -- max|sigma_i - sigma_true_i| / (sigma_1 u) up
// to 30 (z arith 70 x 45) against 4.5-9 with the update (CPU, all four
// precisions, the six families at 70 x 45 and 30 x 52).

template <class T> EvdCount rotate_block_pair_svd(int m, int n, T *W, int ldw, T *V, int ldv, int k,
                                                  bool sort, real_of_t<T> tol,
                                                  real_of_t<T> null_floor, int eig_sweeps,
                                                  const Ordering &ord, const BlockedWork<T> &ws) {
  using R = real_of_t<T>;
  EvdCount cnt;
  if (k < 2) return cnt;
  auto col = [&](int c) { return ws.pair + int64_t(c) * m; };
  for (int c = 0; c < k; ++c) {
    const T *w = W + int64_t(ws.cols[c]) * ldw;
    std::copy(w, w + m, col(c));
  }
  const R tolk = blocked_tol(tol, k);
  R gmax = 0;
  for (int c = 0; c < k; ++c) gmax = std::max(gmax, nrm2sq(m, col(c)));
  const R floor = blocked_noise_floor(gmax, k);
  set_identity(k, ws.Q);
  const int cap = eig_sweeps > 0 ? eig_sweeps : kInnerConvergeCap;
  const int half = ord.pairs_per_step();
  for (int sweep = 0; sweep < cap; ++sweep) {
    long in_sweep = 0;
    for (int s = 0; s < ord.steps; ++s)
      for (int j = 0; j < half; ++j) {
        int p, q;
        ord.pair(s, j, p, q);
        if (p >= k || q >= k) continue;
        T *wp = col(p), *wq = col(q);
        const R a = nrm2sq(m, wp), b = nrm2sq(m, wq);
        const T g = dotc(m, wp, wq);
        const R ag = std::abs(g);
        if (!rotates_pair(a, b, ag, tolk)) continue;
        const Rotation<R> rot = jacobi_rotation(a, b, ag);
        const T te = rot.t * conj_(phase_(g, ag));
        rotate(m, wp, 1, wq, 1, rot.c, te, false);
        rotate(k, ws.Q + int64_t(p) * k, 1, ws.Q + int64_t(q) * k, 1, rot.c, te, false);
        ++in_sweep;
        if (rot.c != R(1)) ++cnt.proper;
        if (blocked_counts(a, b, floor, null_floor)) ++cnt.significant;
      }
    cnt.applied += in_sweep;
    if (in_sweep == 0) break;
  }
  if (cnt.applied == 0) return cnt;
  for (int c = 0; c < k; ++c) ws.eig[c] = nrm2sq(m, col(c));
  apply_pair_rotation(m, n, W, ldw, V, ldv, k, sort, ws);
  return cnt;
}

} // namespace

template <class T> SweepStats blocked_impl(int m, int n, T *W, int ldw, T *V, int ldv, int nb,
                                           const Ordering &block_ord, real_of_t<T> tol,
                                           int max_sweeps, int eig_sweeps,
                                           bsvd_ordering_t eig_ordering, OrderingCache &cache,
                                           const BlockedWork<T> &ws, bool pair_svd) {
  SweepStats st;
  if (n <= 0 || m <= 0) {
    st.converged = true;
    return st;
  }
  if (nb <= 0 || nb > n) nb = n;
  const int nblk = (n + nb - 1) / nb;
  using R = real_of_t<T>;
  R amax = 0; // the scale of the null floor (rotation.hpp)
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) amax = std::max(amax, maxpart_(W[i + int64_t(j) * ldw]));
  const R null_floor = blocked_null_floor(amax);
  auto width = [&](int blk) { return std::min(nb, n - blk * nb); };
  // Inner sweeps: eig_sweeps, or per outer sweep by the rule
  // (inner_sweeps.hpp, as the GPU driver; one block: every sweep is one
  // Gram EVD, no rule).
  InnerSweepRule rule;
  auto rotate_pair = [&](int k, bool sort, const Ordering &eo) {
    const int inner = inner_sweep_cap(eig_sweeps, rule, kInnerConvergeCap);
    return pair_svd
               ? rotate_block_pair_svd(m, n, W, ldw, V, ldv, k, sort, tol, null_floor, inner, eo,
                                       ws)
               : rotate_block_pair(m, n, W, ldw, V, ldv, k, sort, tol, null_floor, inner, eo, ws);
  };

  if (nblk == 1) {
    // One block: each sweep is a Gram EVD of the whole matrix.
    const Ordering &eo = cache.get(eig_ordering, n);
    for (int c = 0; c < n; ++c) ws.cols[c] = c;
    for (int sweep = 1; sweep <= max_sweeps; ++sweep) {
      st.sweeps = sweep;
      const EvdCount cnt = rotate_pair(n, true, eo);
      if (cnt.significant == 0) {
        st.converged = true;
        break;
      }
    }
    return st;
  }

  const bool sort = nb >= kSortMinNb;
  const int half = block_ord.pairs_per_step();
  for (int sweep = 1; sweep <= max_sweeps; ++sweep) {
    st.sweeps = sweep;
    long rotations = 0;
    for (int s = 0; s < block_ord.steps; ++s) {
      for (int j = 0; j < half; ++j) {
        int bi, bj;
        block_ord.pair(s, j, bi, bj);
        if (bi >= nblk || bj >= nblk) continue;
        const int wi = width(bi), wj = width(bj), k = wi + wj;
        for (int c = 0; c < wi; ++c) ws.cols[c] = bi * nb + c;
        for (int c = 0; c < wj; ++c) ws.cols[wi + c] = bj * nb + c;
        const Ordering &eo = cache.get(eig_ordering, k);
        rotations += rotate_pair(k, sort, eo).significant;
      }
    }
    if (rotations == 0) {
      st.converged = true;
      break;
    }
    rule.after_sweep(rotations);
  }
  return st;
}

} // namespace cpu

template <class T> SweepStats jacobi_blocked(int m, int n, T *W, int ldw, T *V, int ldv, int nb,
                                             const Ordering &block_ord, double tol, int max_sweeps,
                                             int eig_sweeps, bsvd_ordering_t eig_ordering,
                                             bool pair_svd) {
  using R = real_of_t<T>;
  if (nb <= 0 || nb > n) nb = std::max(n, 1);
  const int kmax = cpu::blocked_kmax(n, nb);
  cpu::Arena dry;
  cpu::BlockedWork<T> ws;
  ws.carve(dry, std::max(kmax, 1), pair_svd ? m : 0);
  std::vector<unsigned char> buf(dry.used() + 64);
  void *base = buf.data() + (64 - reinterpret_cast<uintptr_t>(buf.data()) % 64) % 64;
  cpu::Arena arena(base);
  ws.carve(arena, std::max(kmax, 1), pair_svd ? m : 0);
  cpu::OrderingCache cache;
  return cpu::blocked_impl(m, n, W, ldw, V, ldv, nb, block_ord, R(tol), max_sweeps, eig_sweeps,
                           eig_ordering, cache, ws, pair_svd);
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template SweepStats cpu::blocked_impl<T>(                                                        \
      int, int, T *, int, T *, int, int, const Ordering &, real_of_t<T>, int, int,                 \
      bsvd_ordering_t, cpu::OrderingCache &, const cpu::BlockedWork<T> &, bool);                   \
  template SweepStats jacobi_blocked<T>(int, int, T *, int, T *, int, int, const Ordering &,       \
                                        double, int, int, bsvd_ordering_t, bool);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail
