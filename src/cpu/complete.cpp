// The finish's orthonormal completion of numerically null columns
// (jacobi.hpp, complete_basis): the CPU twin of the GPU finish
// (finish_and_write and its rounds, cuda/common/matrix_io.cuh).
#include "cpu_internal.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace bsvd::detail {

// The columns flagged by null[j] are replaced, in ascending j, by unit
// vectors orthogonal to the columns already in the set D (initially the
// non-null ones). Candidates are the unit vectors e_i with the largest
// residual r_i = 1 - sum_{c in D} |u_ic|^2 (their squared norm after
// projection; the r_i sum to mw - |D| >= 1 while the set is incomplete).
// Pivot key: r_i rounded to float, ties to the smaller i (completion_key,
// rotation.hpp, shared with the GPU finish). In rounds of up to b
// candidates (the rule at completion_block, rotation.hpp):
//   X = [e_i1 .. e_ib] - U_D (U_D^H X), twice (the first pass needs no
//       inner products: u_c^H e_i = conj(u_ic));
//   each candidate, in key order, is orthogonalized against those this
//   round already accepted (twice), accepted if completion_accepts (the
//   first always), normalized (e_i itself when nothing is left: degenerate
//   residuals only) and given to the next null column;
//   r_i downdated by the accepted columns.
// b = 1 is the one-at-a-time greedy completion (the fused kernel's, and the
// unblocked solver's).
template <class T> void complete_basis(int mw, int nw, T *U, const char *null, int b, T *work) {
  using namespace cpu;
  using R = real_of_t<T>;
  b = std::max(1, b);
  std::vector<char> done(size_t(nw), 0); // columns already orthonormal
  std::vector<int> todo; // null columns, ascending
  for (int j = 0; j < nw; ++j) {
    done[j] = !null[j];
    if (null[j]) todo.push_back(j);
  }
  std::vector<R> resid(static_cast<size_t>(mw));
  for (int i = 0; i < mw; ++i) {
    R s = 0;
    for (int c = 0; c < nw; ++c)
      if (done[c]) s += abs2_(U[i + int64_t(c) * mw]);
    resid[i] = R(1) - s;
  }
  T *X = work; // mw x b, candidates
  T *C = X + int64_t(mw) * b; // nw x b, coefficients
  T *y = C + int64_t(nw) * b; // mw
  std::vector<int> cand(static_cast<size_t>(b));
  std::vector<T> d(static_cast<size_t>(b));
  size_t next = 0;
  while (next < todo.size()) {
    const int nb = int(std::min<size_t>(size_t(b), todo.size() - next));
    // The nb largest keys, in descending order (keys are distinct).
    uint64_t prev = UINT64_MAX;
    for (int k = 0; k < nb; ++k) {
      uint64_t best = 0;
      for (int i = 0; i < mw; ++i) {
        const uint64_t key = completion_key(resid[i], i, mw);
        if (key < prev) best = std::max(best, key);
      }
      cand[k] = completion_row(best, mw);
      prev = best;
    }
    const R rho = std::max(resid[cand[0]], R(0));
    for (int k = 0; k < nb; ++k) {
      T *xk = X + int64_t(k) * mw;
      std::fill(xk, xk + mw, T(0));
      xk[cand[k]] = T(1);
    }
    for (int pass = 0; pass < 2; ++pass) {
      for (int k = 0; k < nb; ++k) {
        const T *xk = X + int64_t(k) * mw;
        for (int c = 0; c < nw; ++c)
          C[c + int64_t(k) * nw] = !done[c]    ? T(0)
                                   : pass == 0 ? conj_(U[cand[k] + int64_t(c) * mw])
                                               : dotc(mw, U + int64_t(c) * mw, xk);
      }
      for (int c = 0; c < nw; ++c) {
        if (!done[c]) continue;
        const T *uc = U + int64_t(c) * mw;
        for (int k = 0; k < nb; ++k) {
          const T coef = C[c + int64_t(k) * nw];
          T *xk = X + int64_t(k) * mw;
          for (int r = 0; r < mw; ++r) xk[r] -= coef * uc[r];
        }
      }
    }
    int acc = 0; // accepted this round: normalized in X's first acc columns
    for (int k = 0; k < nb; ++k) {
      std::copy(X + int64_t(k) * mw, X + int64_t(k + 1) * mw, y);
      for (int pass = 0; pass < 2 && acc > 0; ++pass) {
        for (int a = 0; a < acc; ++a) d[a] = dotc(mw, X + int64_t(a) * mw, y);
        for (int a = 0; a < acc; ++a) {
          const T *xa = X + int64_t(a) * mw;
          for (int r = 0; r < mw; ++r) y[r] -= d[a] * xa[r];
        }
      }
      const R left = nrm2sq(mw, y);
      if (k > 0 && !completion_accepts(left, rho)) continue;
      const R nrm = std::sqrt(left);
      T *xa = X + int64_t(acc) * mw;
      for (int r = 0; r < mw; ++r) xa[r] = nrm > R(0) ? y[r] / nrm : T(r == cand[k] ? 1 : 0);
      ++acc;
    }
    for (int a = 0; a < acc; ++a) {
      const int j = todo[next++];
      const T *xa = X + int64_t(a) * mw;
      T *uj = U + int64_t(j) * mw;
      for (int r = 0; r < mw; ++r) {
        uj[r] = xa[r];
        resid[r] -= abs2_(xa[r]);
      }
      done[j] = 1;
    }
  }
}

#define BSVD_INSTANTIATE(T) template void complete_basis<T>(int, int, T *, const char *, int, T *);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail
