// The blocked path's choices for one sweep, which depend on the matrices
// still iterating: the eigensolver plan, the own Gram kernel's plan, the
// lean warp kernel and the split of the Gram-path matrices over two
// streams. The driver (src/cuda/blocked/driver.cuh) counts; this rule
// decides. Host-only code.
#pragma once

#include "tuning.hpp"

#include <vector>

namespace bsvd::detail::plan {

// What the driver counts over the sweep's active matrices.
struct SweepCounts {
  bool wide = false; // the wide instance (block width 17 ... 32): its own plans
  bool lean_kernel = false; // the lean warp kernel exists for this type and block width
  long gram_pairs = 0; // pairs per step on the Gram path (the eigensolver's TLP)
  bool full = true; // every Gram-path matrix has full pairs (full_pairs)
  bool one_inner = true; // ... and takes one inner eigensolver sweep
  // The own Gram kernel's matrices (before the cuBLAS ones): pairs per step
  // of each, in the sweep's order; its pair slots (matrices x half) and the
  // row segments of its tallest pair; the split plan's workspace in tiles.
  std::vector<long> own_pairs;
  long own_slots = 0;
  int own_segs = 1;
  long split_max_tiles = 0;
  bool timer_on = false; // stage timers (their events are on one stream)
};

struct SweepChoice {
  int evd_threads = 32; // threads per Gram matrix: 32 (warp plan), 128, 256
  bool lean = false; // the warp plan by the lean kernel
  GramPlan gram = GramPlan::kTile2; // the own Gram kernel's plan
  int split = 0; // own-kernel matrices in the first stream group; 0: one group
};

SweepChoice plan_sweep(const Tuning &t, char prec, const SweepCounts &c);

} // namespace bsvd::detail::plan
