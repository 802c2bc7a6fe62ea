// Blocked one-sided hyperbolic Jacobi (HBJ Sec. 4.3, its block-oriented
// and full block variants; jacobi.hpp, jacobi_hyperbolic_blocked): the CPU
// form of the blocked HSVD, and the twin of the GPU blocked path
// (cuda/blocked/pair_hyp.cuh).
//
// Blocks never straddle the signature's boundary: the +1 side [0, nplus)
// is cut into blocks of nb, then the -1 side [nplus, n). Every +1 block has
// a smaller index than every -1 block, so the columns of a pair (the block
// of smaller index first) carry a partitioned signature, and the unblocked
// solver (hyperbolic_impl) serves as the inner level: plane rotations
// within a side, hyperbolic ones across, no swaps. Its transformation Q of
// the pair's columns X (X Q, J-unitary for the pair's signature) is
// accumulated into V; the inner iteration recomputes its norms from the
// columns each sweep, so nothing is carried between pairs.
//
// The stop is the unblocked solver's, one level up: an outer sweep in which
// no pair rotated tested every column pair (each lies in some block pair)
// at tol with fresh norms. The breakdown rule too: kHyperbolicBreakdownSweeps
// outer sweeps in a row with a substituted step somewhere, or one in the
// last (the inner runs' own rule would fire on any substitution in their
// last inner sweep, which for a block-oriented run is every sweep).
#include "cpu_internal.hpp"

#include "../core/inner_sweeps.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace bsvd::detail {

namespace cpu {

template <class T>
HyperbolicStats hyperbolic_blocked_impl(int m, int n, int nplus, T *W, int ldw, T *V, int ldv,
                                        int nb, bsvd_ordering_t ordering, double tol,
                                        int max_sweeps, int eig_sweeps, OrderingCache &cache) {
  using R = real_of_t<T>;
  HyperbolicStats st;
  if (n <= 0 || m <= 0) {
    st.converged = true;
    return st;
  }
  if (nb <= 0) nb = n;
  const int nbp = (nplus + nb - 1) / nb, nbm = (n - nplus + nb - 1) / nb, nblk = nbp + nbm;
  auto start = [&](int b) { return b < nbp ? b * nb : nplus + (b - nbp) * nb; };
  auto width = [&](int b) { return std::min(nb, (b < nbp ? nplus : n) - start(b)); };
  const R rtol = R(tol);
  std::vector<R> norms(static_cast<size_t>(n)), anchor(static_cast<size_t>(n));
  if (nblk == 1) // one block: the unblocked solver
    return hyperbolic_impl(m, n, nplus, W, ldw, V, ldv, cache.get(ordering, n), rtol, max_sweeps,
                           norms.data(), anchor.data());

  const int kmax = 2 * nb;
  std::vector<T> X(size_t(m) * kmax), Q(size_t(kmax) * kmax), VQ(V ? size_t(n) * kmax : 0);
  std::vector<int> cols(static_cast<size_t>(kmax));
  const Ordering &block_ord = cache.get(ordering, nblk);
  const int half = block_ord.pairs_per_step();
  InnerSweepRule rule;
  int substituted_run = 0;
  for (int sweep = 1; sweep <= max_sweeps; ++sweep) {
    st.sweeps = sweep;
    const int inner = inner_sweep_cap(eig_sweeps, rule, kInnerConvergeCap);
    long rotated = 0;
    bool substituted = false;
    for (int s = 0; s < block_ord.steps; ++s)
      for (int j = 0; j < half; ++j) {
        int bi, bj;
        block_ord.pair(s, j, bi, bj);
        if (bi >= nblk || bj >= nblk) continue;
        if (bi > bj) std::swap(bi, bj); // the +1 block first
        const int wi = width(bi), wj = width(bj), k = wi + wj;
        for (int c = 0; c < wi; ++c) cols[size_t(c)] = start(bi) + c;
        for (int c = 0; c < wj; ++c) cols[size_t(wi + c)] = start(bj) + c;
        const int local_plus = (bi < nbp ? wi : 0) + (bj < nbp ? wj : 0);
        for (int c = 0; c < k; ++c)
          std::copy_n(W + int64_t(cols[size_t(c)]) * ldw, m, X.data() + size_t(c) * m);
        std::fill(Q.begin(), Q.begin() + size_t(k) * k, T(0));
        for (int c = 0; c < k; ++c) Q[size_t(c) + size_t(c) * k] = T(1);
        const HyperbolicStats in =
            hyperbolic_impl(m, k, local_plus, X.data(), m, Q.data(), k, cache.get(ordering, k),
                            rtol, inner, norms.data(), anchor.data());
        substituted = substituted || in.substituted;
        if (in.converged && in.sweeps <= 1) continue; // nothing rotated
        ++rotated;
        for (int c = 0; c < k; ++c)
          std::copy_n(X.data() + size_t(c) * m, m, W + int64_t(cols[size_t(c)]) * ldw);
        if (!V) continue;
        // V(:, cols) <- V(:, cols) Q
        for (int c = 0; c < k; ++c)
          for (int i = 0; i < n; ++i) {
            T acc(0);
            for (int l = 0; l < k; ++l)
              acc += V[i + int64_t(cols[size_t(l)]) * ldv] * Q[size_t(l) + size_t(c) * k];
            VQ[size_t(i) + size_t(c) * n] = acc;
          }
        for (int c = 0; c < k; ++c)
          std::copy_n(VQ.data() + size_t(c) * n, n, V + int64_t(cols[size_t(c)]) * ldv);
      }
    if (rotated == 0) {
      st.converged = true;
      break;
    }
    rule.after_sweep(rotated);
    substituted_run = substituted ? substituted_run + 1 : 0;
    st.substituted = st.substituted || substituted;
    if (substituted_run >= kHyperbolicBreakdownSweeps || (sweep == max_sweeps && substituted)) {
      st.breakdown = true;
      break;
    }
  }
  return st;
}

} // namespace cpu

template <class T> HyperbolicStats jacobi_hyperbolic_blocked(int m, int n, int nplus, T *W, int ldw,
                                                             T *V, int ldv, int nb,
                                                             bsvd_ordering_t ordering, double tol,
                                                             int max_sweeps, int eig_sweeps) {
  cpu::OrderingCache cache;
  return cpu::hyperbolic_blocked_impl(m, n, nplus, W, ldw, V, ldv, nb, ordering, tol, max_sweeps,
                                      eig_sweeps, cache);
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template HyperbolicStats cpu::hyperbolic_blocked_impl<T>(int, int, int, T *, int, T *, int, int, \
                                                           bsvd_ordering_t, double, int, int,      \
                                                           cpu::OrderingCache &);                  \
  template HyperbolicStats jacobi_hyperbolic_blocked<T>(int, int, int, T *, int, T *, int, int,    \
                                                        bsvd_ordering_t, double, int, int);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail
