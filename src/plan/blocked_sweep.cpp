// plan_sweep (blocked_sweep.hpp).
#include "blocked_sweep.hpp"

namespace bsvd::detail::plan {

SweepChoice plan_sweep(const Tuning &t, char prec, const SweepCounts &c) {
  SweepChoice s;
  long own = 0;
  for (long p : c.own_pairs) own += p;
  if (c.wide) {
    // The wide instance has one eigensolver plan (a block of 256 threads per
    // 64 x 64 Gram matrix) and its own Gram kernels.
    s.evd_threads = 256;
    s.gram = gram_plan_wide(t, prec);
  } else {
    s.evd_threads = evd_threads(t, prec, c.gram_pairs, c.full);
    s.gram = gram_plan(t, prec, own, c.own_slots, c.own_segs, c.split_max_tiles);
  }
  // The lean kernel holds a full pair and runs one inner sweep.
  s.lean = c.lean_kernel && evd_lean(t) && s.evd_threads == 32 && c.full && c.one_inner;
  // Two stream groups: the first own-kernel matrices up to about half the
  // step's pairs on the side stream, so that one group's eigensolver
  // (latency-bound) overlaps the other's Gram or update (memory-bound).
  const int nown = int(c.own_pairs.size());
  if (stream_groups(t) == 2 && !c.timer_on && nown >= 2) {
    long acc = 0;
    while (s.split < nown - 1 && 2 * acc < c.gram_pairs) acc += c.own_pairs[size_t(s.split++)];
  }
  return s;
}

} // namespace bsvd::detail::plan
