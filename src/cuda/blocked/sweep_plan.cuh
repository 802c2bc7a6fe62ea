// The plan of one sweep of the blocked path: the rule's choices
// (plan::plan_sweep, src/plan/blocked_sweep.hpp: the eigensolver plan, the
// Gram plan, the lean kernel, the stream groups; BlockedRun::plan_sweep,
// driver.cuh, counts what it needs) and the launches' parameters that
// follow.
#pragma once

#include "../../core/overrides.hpp" // GramPlan
#include "params.cuh"

namespace bsvd::detail::cuda {

// BlockedProfile::gram_steps' index of a plan.
constexpr int gram_plan_index(GramPlan g) {
  return g == GramPlan::kMma ? 3 : g == GramPlan::kTile4 ? 1 : g == GramPlan::kSplit ? 2 : 0;
}

// One sweep's plan: every decision of the sweep and the launches'
// parameters (the order of the active matrices, which the launches' act
// slices index, is the driver's: BlockedRun::order_active).
template <class Tstd> struct BlkSweepPlan {
  int steps = 1; // round-robin steps: the most of any active matrix
  int nby[3] = {0, 0, 0}; // active matrices per pair mode: Gram, EVD_SM, SVD_SM
  int rmax = 1; // the Gram path's most rows (W's and V's)
  long gram_pairs = 0; // pairs per step on the Gram path: the eigensolver plan's TLP
  bool full = true; // every Gram-path matrix has full pairs (full_pairs)
  bool one_inner = true; // ... and one inner sweep
  int evd_nt = 256; // eigensolver plan: threads per Gram matrix
  bool lean = false; // the warp plan by the lean kernel
  GramPlan gram = GramPlan::kTile2; // the own Gram kernel's plan
  int own_segs = 1; // segments of the own-kernel matrices' tallest pair
  unsigned urows = 1; // the update's row blocks
  int split = 0; // own-kernel matrices in the first stream group (0: one group)
  // The launches' parameters: the pair kernels' (EVD_SM, SVD_SM) and, with
  // split, the two stream groups' (the first on a side stream, the second
  // on the call's stream).
  BlkParams<Tstd> pe, ps, p1, p2;
};

} // namespace bsvd::detail::cuda
