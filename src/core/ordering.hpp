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
// (0 <= step < N - 1, 0 <= k < N / 2; no modulo: the GPU kernels evaluate it
// in their inner loops.)
BSVD_HD inline void round_robin_pair(int N, int step, int k, int &p, int &q) {
  if (k == 0) {
    p = step;
    q = N - 1;
  } else {
    const int M = N - 1;
    int a = step + k, c = step - k;
    a -= a >= M ? M : 0;
    c += c < 0 ? M : 0;
    p = a;
    q = c;
  }
  if (p > q) {
    int t = p;
    p = q;
    q = t;
  }
}

// The two-level (W-cycle) block ordering: WCYCLE Algorithm 2 with one level
// below the outer one (its group (iii): a block pair too wide to be solved
// at its own level is rotated by sweeps at a smaller width). The nblk blocks
// are grouped into outer blocks of r consecutive blocks (the last may hold
// fewer); the outer blocks meet round-robin, and each outer pair [A_I A_J]
// is rotated one level down by E round-robin sweeps over its 2r blocks, the
// outer pairs of one outer step in lockstep: step s is inner step
// s mod (2r - 1) of inner sweep (s / (2r - 1)) mod E of outer step
// s / (E (2r - 1)); pair x is inner pair x mod r of outer pair x / r. Every
// step pairs disjoint blocks, so one step of it is one step of the blocked
// path. r <= 1, or nblk <= r (one outer block): the one-level round-robin
// ordering over the blocks.
BSVD_HD inline int wcycle_r(int nblk, int r) { return r >= 2 && nblk > r ? r : 1; }
// Steps of one sweep (nblk >= 1; a single block: one step).
BSVD_HD inline int wcycle_steps(int nblk, int r, int E) {
  if (nblk <= 1) return 1;
  r = wcycle_r(nblk, r);
  if (r == 1) return nblk + (nblk & 1) - 1;
  const int nbo = (nblk + r - 1) / r, so = nbo + (nbo & 1);
  return (so - 1) * E * (2 * r - 1);
}
// Pairs per step (the launch's pair slots per matrix).
BSVD_HD inline int wcycle_pairs(int nblk, int r) {
  if (nblk <= 1) return 1;
  r = wcycle_r(nblk, r);
  if (r == 1) return (nblk + 1) / 2;
  return ((nblk + r - 1) / r / 2) * r;
}
// Blocks bi < bj of pair x of step s; false when the pair does not exist
// (a dummy slot, a block beyond the last). nblk >= 2.
BSVD_HD inline bool wcycle_pair(int nblk, int r, int E, int s, int x, int &bi, int &bj) {
  r = wcycle_r(nblk, r);
  if (r == 1) {
    const int slots = nblk + (nblk & 1);
    if (s >= slots - 1 || x >= slots / 2) return false;
    round_robin_pair(slots, s, x, bi, bj);
    return bj < nblk;
  }
  const int nbo = (nblk + r - 1) / r, so = nbo + (nbo & 1), T = 2 * r - 1;
  const int outer = s / (E * T), t = s % T;
  // With an odd count, outer pair 0 of every step is the dummy (round_robin_pair
  // pairs slot so - 1 in its pair 0): skipped, so the real ones are dense.
  const int o = x / r + (nbo & 1);
  if (outer >= so - 1 || o >= so / 2) return false;
  int I, J, p, q;
  round_robin_pair(so, outer, o, I, J);
  round_robin_pair(2 * r, t, x % r, p, q);
  bi = p < r ? I * r + p : J * r + (p - r);
  bj = q < r ? I * r + q : J * r + (q - r);
  return bj < nblk; // (bi < bj: p < q and I < J)
}

struct Ordering {
  int n = 0; // number of real items (columns or blocks)
  int slots = 0; // n rounded up to even (ROW/COLUMN_PARALLEL: possibly
      // more, see make_ordering); slots >= n are dummies
  int steps = 0; // steps per sweep
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
//                here too, with 2x2 sorting:
//                docs/design/decisions/0014-no-2x2-sorting.md),
//                for slots = 2^k * b, b in {2, 6, ..., 22}: the closest
//                p-strategy of order b found by the search of HBJ Alg. 3.1,
//                expanded k times by HBJ Alg. 3.2. slots is the smallest such
//                order >= n (parallel_cyclic_slots): n = 16, 64 exactly,
//                n = 33 -> 36, 100 -> 112, 300 -> 320 (the search for larger
//                bases is infeasible at run time). Dummy slots are the last
//                ones. The base searches (< 5 ms) are memoized; the
//                expansion costs O(slots^2) per call (callers cache the table).
Ordering make_ordering(bsvd_ordering_t kind, int n);

// The table of the two-level ordering above (wcycle_pair) for nblk blocks,
// outer blocks of r, E inner sweeps; nonexistent pairs are dummies (>= n).
Ordering make_wcycle_ordering(int nblk, int r, int E);

// The slots of make_ordering(ROW_PARALLEL or COLUMN_PARALLEL, n).
int parallel_cyclic_slots(int n);

// The table of make_ordering(kind, n) as the GPU kernels read it (the fused
// kernel, for every ordering but round-robin, which it evaluates in closed
// form): {steps, then per step its ceil(n / 2) pair entries}, an entry
// p | q << 16 (p < q < n) or -1. The real pairs of each step come first in
// the table's order; dummy pairs are dropped (a step of an HBJ ordering
// with padded slots has at most n / 2 real pairs), so each step fits the
// kernels' ceil(n / 2) pair slots. n <= 65535.
std::vector<int> packed_pair_table(bsvd_ordering_t kind, int n);
// The pair of a packed entry (false: none).
BSVD_HD inline bool packed_pair(int entry, int &p, int &q) {
  if (entry < 0) return false;
  p = entry & 0xffff;
  q = entry >> 16;
  return true;
}

} // namespace bsvd::detail
