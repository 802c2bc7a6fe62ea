// The plan of one sweep of the blocked path: every tuning decision the
// driver takes per sweep (BlockedRun::plan_sweep, driver.cuh, fills it
// from tuning.hpp's rules) and the launches' parameters that follow.
#pragma once

#include "params.cuh"

namespace bsvd::detail::cuda {

// The own Gram kernel's plans, by the integers choose_gram_tile and
// choose_gram_wide return (tuning.hpp).
enum class GramPlan : int {
  kTile2 = 2, // blk_gram_tile2_kernel<false>
  kSplit = 3, // blk_gram_tile2_kernel<true>, one block per kGramSegRows-row segment
  kTile4 = 4, // blk_gram_tile4_kernel (the wide instance: blk_gram_wide_kernel)
  kMma = 5    // blk_gram_mma_kernel (d only)
};
// BlockedProfile::gram_steps' index of a plan.
constexpr int gram_plan_index(GramPlan g) {
  return g == GramPlan::kMma ? 3 : g == GramPlan::kTile4 ? 1 : g == GramPlan::kSplit ? 2 : 0;
}

// One sweep's plan: every decision of the sweep and the launches'
// parameters (the order of the active matrices, which the launches' act
// slices index, is the driver's: BlockedRun::order_active).
template <class Tstd> struct BlkSweepPlan {
  int steps = 1;              // round-robin steps: the most of any active matrix
  int nby[3] = {0, 0, 0};     // active matrices per pair mode: Gram, EVD_SM, SVD_SM
  int rmax = 1;               // the Gram path's most rows (W's and V's)
  long gram_pairs = 0;        // pairs per step on the Gram path: the eigensolver plan's TLP
  bool full = true;           // every Gram-path matrix has full pairs (full_pairs)
  bool one_inner = true;      // ... and one inner sweep
  int evd_nt = 256;           // eigensolver plan: threads per Gram matrix (choose_evd_threads)
  bool lean = false;          // the warp plan by the lean kernel (evd_lean_enabled)
  GramPlan gram = GramPlan::kTile2; // the own Gram kernel's plan (choose_gram_tile / _wide)
  int own_segs = 1;           // segments of the own-kernel matrices' tallest pair
  unsigned urows = 1;         // the update's row blocks
  int split = 0;              // own-kernel matrices in the first stream group (0: one group)
  // The launches' parameters: the pair kernels' (EVD_SM, SVD_SM) and, with
  // split, the two stream groups' (the first on a side stream, the second
  // on the call's stream).
  BlkParams<Tstd> pe, ps, p1, p2;
};

} // namespace bsvd::detail::cuda
