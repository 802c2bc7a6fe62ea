// How many sweeps the blocked path's inner eigensolver runs per block pair
// when the caller leaves it to the library (eig_sweeps = BSVD_EIG_SWEEPS_AUTO).
// Shared by the CPU solver, the GPU's host driver and its device-side sweep
// loop (blocked/loop.cuh) so that all make the same choice for the same
// matrix (the GPU's CPU twin stays a twin).
//
// One inner sweep per pair (MAGMA-SVD Sec. 6, the inexact mode) is the
// fastest choice where the outer iteration converges in its usual way: every
// rotation counts for a few sweeps (the count sits at its peak), then the
// count collapses (quadratic convergence). It is a poor choice where the
// outer iteration stalls: the count of counted rotations falls by only a
// few percent per sweep, below its peak. Measured on the CPU blocked solver
// (d, nb 16, round-robin; docs/design/decisions/0003-inexact-inner-sweeps.md):
//
//   matrix              sweeps, 1 inner sweep   2 inner sweeps
//   Harvard500 500^2    41 (-2 % per sweep)      16
//   Erdos971 472^2      32                       14
//   can_61 61^2         28                        7
//   logrand 256^2       25                       19   (kappa 1e10)
//   random 512^2        13-14                    12
//   random 128^2         9-10                    8-9
//
// so two inner sweeps everywhere would cost random matrices more inner work
// than the outer sweeps they save, and one sweep everywhere costs the
// stalling matrices 2-4x the outer sweeps. The rule: start with one inner
// sweep; an outer sweep "stalls" when its count of counted rotations is
// below kStallPeak of the largest count so far and above kStallRatio of the
// previous sweep's; after two stalled sweeps in a row the matrix takes
// kStalledInnerSweeps inner sweeps for the rest of the iteration. Random
// matrices never stall (their count is at its peak until it collapses);
// the SuiteSparse matrices, logrand and geo do.
#pragma once

#include "batch.hpp" // BSVD_HD

namespace bsvd::detail {

// eig_sweeps = 0 ("until converged"): the inner sweep cap, CPU and GPU.
// Cyclic Jacobi converges quadratically; sweeps beyond ~10 only happen for
// pathological input.
constexpr int kInnerConvergeCap = 60;

constexpr double kStallPeak = 0.98;
constexpr double kStallRatio = 0.8;
constexpr int kStalledInnerSweeps = 2;

class InnerSweepRule {
public:
  // The inner sweeps of the next outer sweep.
  BSVD_HD int sweeps() const { return sweeps_; }
  // After an outer sweep with `counted` counted rotations (blocked_counts,
  // summed over the sweep's pairs).
  BSVD_HD void after_sweep(long counted) {
    const bool stalled = prev_ >= 0 && double(counted) < kStallPeak * double(peak_) &&
                         double(counted) > kStallRatio * double(prev_);
    if (stalled && stalled_) sweeps_ = kStalledInnerSweeps;
    stalled_ = stalled;
    prev_ = counted;
    peak_ = counted > peak_ ? counted : peak_;
  }

private:
  long prev_ = -1, peak_ = 0;
  bool stalled_ = false;
  int sweeps_ = 1;
};

// The inner sweep cap of a call's eig_sweeps for a matrix whose rule is
// `rule` (eig_sweeps < 0: auto; 0: until converged, capped at `converge_cap`).
BSVD_HD inline int inner_sweep_cap(int eig_sweeps, const InnerSweepRule &rule, int converge_cap) {
  if (eig_sweeps < 0) return rule.sweeps();
  return eig_sweeps > 0 ? eig_sweeps : converge_cap;
}

} // namespace bsvd::detail
