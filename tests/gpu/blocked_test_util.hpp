// Helpers of the blocked path's GPU tests (test_gpu_blocked.cpp,
// test_gpu_blocked_mixed.cpp): the forced-blocked configuration and the
// path a matrix reports under a pair solver.
#pragma once

#include "gpu_test_util.hpp"

#include "cuda/blocked/blocked.hpp"

namespace {

constexpr int kBlockedDefaultNb = bsvd::detail::plan::kDefaultBlockWidth;

inline Config blocked_cfg(int nb, int eig_sweeps, bsvd_pair_solver_t pair = BSVD_PAIR_AUTO) {
  Config c;
  c.variant = BSVD_VARIANT_BLOCKED;
  c.block_size = nb;
  c.eig_sweeps = eig_sweeps;
  c.pair_solver = pair;
  return c;
}

constexpr bsvd_pair_solver_t kPairSolvers[] = {BSVD_PAIR_GRAM, BSVD_PAIR_EVD_SM, BSVD_PAIR_SVD_SM};

// The path a blocked m x n matrix reports with pair solver `pair`: the
// shared-memory solvers only where the pair fits (blocked_pair_mode).
template <class T> int blocked_path_for(int m, int n, bsvd_pair_solver_t pair, int nb = 0) {
  const int mode = bsvd::detail::cuda::blocked_pair_mode(prec<T>(), m, n, blocked_cfg(nb, 1, pair),
                                                         nb > 0 ? nb : kBlockedDefaultNb);
  return mode == BSVD_PAIR_SVD_SM   ? BSVD_PATH_CUDA_PAIR_SVD
         : mode == BSVD_PAIR_EVD_SM ? BSVD_PATH_CUDA_PAIR_EVD
                                    : BSVD_PATH_CUDA_BLOCKED;
}

} // namespace
