// Parallel orderings: which column (or block-column) pairs are rotated
// together in one step of a sweep. A component of its own, decoupled from
// the kernels (MAGMA-SVD Sec. 5.1): the CPU solvers read the table below,
// the GPU kernels either read the same table or evaluate the same closed
// form (round_robin_pair), so both visit pairs in the same order.
#pragma once

#include "batch.hpp"

#include <vector>

namespace bsvd::detail {

// Round-robin (circle method) for an even number N of slots, N - 1 steps of
// N / 2 disjoint pairs; every pair of slots meets exactly once per sweep.
// Step s pairs slot N-1 with s, and slots i != j with i + j = 2s mod (N-1).
BSVD_HD inline void round_robin_pair(int N, int step, int k, int &p, int &q) {
  if (k == 0) {
    p = step;
    q = N - 1;
  } else {
    const int M = N - 1;
    p = (step + k) % M;
    q = (step - k + M) % M;
  }
  if (p > q) { int t = p; p = q; q = t; }
}

struct Ordering {
  int n = 0;         // number of real items (columns or blocks)
  int slots = 0;     // n rounded up to even (ROW/COLUMN_PARALLEL: possibly
                     // more, see make_ordering); slots >= n are dummies
  int steps = 0;     // steps per sweep
  std::vector<int> table; // steps * (slots / 2) pairs, each (p, q), p < q

  int pairs_per_step() const { return slots / 2; }
  // Pair k of step s; either index may be >= n (a dummy: skip the pair).
  void pair(int s, int k, int &p, int &q) const {
    const int *e = &table[2 * (size_t(s) * pairs_per_step() + k)];
    p = e[0];
    q = e[1];
  }
};

// Builds the table of one sweep for n items (n >= 1).
//   ROUND_ROBIN: slots - 1 steps (closed form above).
//   ODD_EVEN:    slots steps of the odd-even transposition network in which
//                every compared pair of positions exchanges its items, so each
//                pair of items meets exactly once per sweep.
//   ROW_PARALLEL, COLUMN_PARALLEL: slots - 1 steps of the reverse of HBJ's
//                p-strategy closest to row-cyclic (R||) / column-cyclic (C||),
//                Sec. 3 (the reverses are the ones HBJ Sec. 6 measure fastest;
//                here too, with 2x2 sorting -- docs/perf/cpu-backend.md),
//                for slots = 2^k * b, b in {2, 6, ..., 22}: the closest
//                p-strategy of order b found by the search of HBJ Alg. 3.1,
//                expanded k times by HBJ Alg. 3.2. slots is the smallest such
//                order >= n (parallel_cyclic_slots): n = 16, 64 exactly,
//                n = 33 -> 36, 100 -> 112, 300 -> 320 (the search for larger
//                bases is infeasible at run time). Dummy slots are the last
//                ones. The base searches (< 5 ms) are memoized; the
//                expansion costs O(slots^2) per call (callers cache the table).
Ordering make_ordering(bsvd_ordering_t kind, int n);

// The slots of make_ordering(ROW_PARALLEL or COLUMN_PARALLEL, n).
int parallel_cyclic_slots(int n);

} // namespace bsvd::detail
