// Tuning knobs of the fused shared-memory kernel, in ONE place (MAGMA habit:
// the tuned parameters of each GPU kept together). Every number here has
// the measurement that justifies it in docs/perf/fused-kernel.md.
//
// G = lanes per column pair = 32 * alpha, alpha in {1, 1/2, 1/4, 1/8}
// (WCYCLE Sec. IV-B-1). Two rules:
//   gcd rule (WCYCLE):  G = max(4, gcd(m*, 32)), m* = largest row count.
//   table (below):      measured on the H100 (sm_90) over (m*, batch).
// The table wins; the gcd rule is kept as the documented fallback and is
// selectable with BSVD_FUSED_RULE=gcd for comparisons. BSVD_FUSED_LANES=G
// forces G (benchmarks sweep it to refit the table).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace bsvd::detail::cuda {

// Lanes of a warp per column pair by the gcd rule of WCYCLE.
inline int lanes_gcd_rule(int m_star) {
  int a = m_star > 0 ? m_star : 1, b = 32;
  while (b) { const int t = a % b; a = b; b = t; }
  return a < 4 ? 4 : a;
}

// The decision table, fitted to the alpha sweep of docs/perf/fused-kernel.md
// (BSVD_BENCH_TUNE=1, v3 kernel, H200 -- the H100 was not lent that day;
// both are sm_90 with the same SM, so the table is kept for sm_90). Median
// ms, random matrices, vectors, 10000 x m^2 (m <= 32) or 1000 x m^2:
//   d  8^2:  G4 0.26  G8 0.37  G16 0.56  G32 1.04
//   d 16^2:  G4 1.59  G8 1.49  G16 2.42  G32 4.62
//   d 32^2:  G4 12.6  G8 8.68  G16 11.5  G32 16.0
//   d 64^2:  G4 14.6  G8 7.68  G16 6.79  G32 9.37
//   d 118^2: G4 57.2  G8 61.5  G16 72.5  G32 101
//   s  8^2:  G4 0.18  G8 0.25  G16 0.42  G32 0.78
//   s 16^2:  G4 0.71  G8 1.04  G16 1.79  G32 3.41
//   s 32^2:  G4 5.84  G8 6.47  G16 8.58  G32 11.9
//   s 64^2:  G4 6.56  G8 5.17  G16 4.22  G32 5.82
//   s 167^2: G4 109   G8 98.1  G16 131   G32 175
// v6 (one barrier per step, d RPL8 instances at <= 128 registers; H200):
//   d  8^2:  G4 0.229 G8 0.309     d 16^2: G4 0.92  G8 1.31
//   d 32^2:  G4 6.26  G8 7.10      d 64^2: G8 5.47  G16 6.50 (G4 9.5)
//   s 32^2:  G4 3.31  G8 4.40      s 64^2: G8 3.03  G16 4.25
// v7 (d RPL8 re-reading rows at 64 registers): d 32^2 G4 5.26, 64^2 G8 5.30.
// Checked on the H100 (2026-11-22, BSVD_BENCH_TUNE=1, 1000 matrices, ms for
// G4 / G8 / G16 / G32): d 48^2 3.18 / 2.58 / 3.82 / 4.29, d 64^2 9.50 /
// 4.91 / 7.08 / 8.26, s 64^2 8.08 / 2.93 / 4.24 / 5.17: the table's G8 is
// the best there too (docs/perf/routing-h100-2026-11-22.txt).
// Few lanes per pair win: less redundant index and reduction work per warp
// instruction; the gcd rule (G = m for m <= 32) loses 1.3-4x. Small
// batches (< 2000 matrices of <= 32 rows; not measured yet) take more
// lanes so that more threads are in flight. c and z follow d by element
// size (not measured separately).
//   elem_bytes: 4 (s), 8 (d, c), 16 (z).
inline int lanes_table(int m_star, long batch, int elem_bytes) {
  const bool big = batch >= 2000;
  if (m_star <= 16) return big ? 4 : 8;
  if (m_star <= 32) return big ? 4 : 16;
  if (m_star <= 64) return 8;
  return elem_bytes == 8 ? 4 : 8;
}

inline int choose_lanes(int m_star, long batch, int elem_bytes) {
  if (const char *e = std::getenv("BSVD_FUSED_LANES")) {
    const int g = std::atoi(e);
    if (g == 4 || g == 8 || g == 16 || g == 32) return g;
  }
  if (const char *e = std::getenv("BSVD_FUSED_RULE"))
    if (e[0] == 'g') return lanes_gcd_rule(m_star);
  return lanes_table(m_star, batch, elem_bytes);
}

// Threads per matrix (at most; fewer when a matrix has fewer pairs):
// BSVD_FUSED_TPM=32..256 forces it (the v5 sweep), else the table below.
inline int threads_per_matrix_cap(int m_star, long batch, int elem_bytes) {
  if (const char *e = std::getenv("BSVD_FUSED_TPM")) {
    const int v = std::atoi(e);
    if (v == 32 || v == 64 || v == 128 || v == 256) return v;
  }
  (void)m_star;
  (void)batch;
  (void)elem_bytes;
  return 256;
}

// Threads of one block when several matrices share it (tpm < 256): one
// block holds 256 / tpm matrices. Larger matrices get one block each with
// at most kMaxThreadsPerMatrix threads (groups loop over the pairs).
constexpr int kTargetBlockThreads = 256;
constexpr int kMaxThreadsPerMatrix = 256; // __launch_bounds__(256, 4): <= 64 registers

// Rows per lane cached in registers during a pair update (more rows are
// re-read from shared memory): powers of two up to this.
constexpr int kMaxRowsPerLane = 8;

// Padding (elements) added to the leading dimension of W and V in shared
// memory to spread the columns over the banks.
constexpr int kLdPad = 1;
// Up to this many rows (mw, nw) the leading dimensions are rounded up to a
// multiple of 128 bytes instead (bank-conflict-free group-rotated rows).
constexpr int kAlignLdRows = 64;

// Blocked path, BSVD_PAIR_AUTO (bsvd_pair_solver_t values), for a matrix
// whose pair fits shared memory (blocked_pair_mode checks that first).
// Measured on the H100 (docs/perf/wcycle.md, --pair-solver all, random,
// ms for the batch; Gram / pair SVD in shared memory / pair EVD in shared
// memory):
//   d 1000 x 128^2:  49.6 /   92.6 /  126.0
//   d 1000 x 256^2: 337.9 /  610.5 /  703.7
//   d 1000 x 512^2: 2575  / 6948   / 7558
//   d  200 x 128^2:  13.9 /   23.0 /   31.6    (200 x 256^2: 85.7 / 135.7 / 159.0)
//   s 1000 x 256^2: 170.1 /  379.7 /  374.8    (s 512^2: 1300 / 3494 / 3188)
// The one-launch pair kernels lose 1.8-2.9x: one block of 256 threads per
// pair whose phases run one after the other (the eigensolver on one warp
// while seven wait; the pair SVD's 31 barrier-separated steps), with one
// to three blocks per SM (the pair fills up to 157 KB of shared memory),
// against the Gram path's three kernels that each fill the GPU. So the
// automatic choice is the Gram path everywhere; the shared-memory solvers
// stay selectable (opts.pair_solver) and tested.
inline int pair_solver_rule(char precision, int mw, int nw, int nb) {
  (void)precision;
  (void)mw;
  (void)nw;
  (void)nb;
  return 1; // BSVD_PAIR_GRAM
}

// Blocked path, block width nb (kBlockedDefaultNb in blocked.hpp): the
// compiled instance holds Gram matrices of order K = 32, so nb <= 16.
// Measured on the H100 (bsvd bench --block-sizes 8,12, random; whole call
// ms for nb = 8 / 12 / 16, mean sweeps in brackets;
// docs/perf/blocked-gram-h100-2026-11-22.txt, runs 1 and 2):
//   d 1000 x 128^2:  125.8 (10.8) /  90.8 (10.4) /  46.5 (9.5)
//   d 1000 x 256^2:  918.3 (12.8) / 555.8 (12.1) / 326.0 (11.1)
//   d 1000 x 512^2:  7453  (15.3) / 4128  (14.5) / 2598  (13.4)
//   d  100 x 1024^2: 6781  (18.3) / 3558  (17.0) / 2350  (16.2)
//   s 1000 x 256^2:  488.0 (11.8) / 277.7 (11.1) / 151.6 (10.2)
//   s 1000 x 512^2:  4124  (14.3) / 2125  (13.5) / 1198  (12.3)
//   s  100 x 1024^2: 3919  (17.8) / 1928  (16.2) / 1119  (15.2)
// The widest block wins everywhere by 1.5-3.5x (fewer steps per sweep and
// fewer sweeps; the eigensolver in registers needs full pairs of 32), so
// nb = 16 for every precision and size (c, z not measured: same reasoning,
// the z eigensolver is the shared-memory one at any nb). The wide instance
// (K = 64, nb 17 ... 32; s, d, c; blocked.hpp) measured on the H100,
// 2026-11-25 (bench --block-sizes 24,32; whole call ms nb 16 / 24 / 32,
// docs/perf/blocked-session18-h100-2026-11-25.txt):
//   d 1000 x 128^2:  36.2 /  74.7 /  52.5 (49.97 with the tensor-core Gram)
//   d 1000 x 256^2: 256.4 / 476.6 / 340.2 (316.4)
//   d  100 x 512^2: 221.5 / 344.3 / 246.4 (228.4)
//   s 1000 x 128^2:  20.4 /  41.0 /  28.0
//   s 1000 x 256^2: 142.0 / 249.7 / 168.3
//   s  100 x 512^2: 128.4 / 191.6 / 124.3
// nb = 32 takes 9-12 % fewer sweeps and halves the Gram and update passes,
// but its 64 x 64 eigensolver (the 256-thread block plan, 63 dependent
// steps per sweep) costs 2x the 32 x 32 one's stage (d 128^2: 38.5 / 19.0
// ms), and its update runs at half the K = 32 kernel's bandwidth (177
// registers: 8 warps per SM). So nb = 16 stays the default.

// Blocked path, Gram stage (MAGMA-SVD Sec. 5.2, Fig. 3): the own kernel
// (one block per pair, the pair's 2nb columns read once, rows summed in
// the CPU twin's order; two plans, choose_gram_tile below) or the vendor's
// batched GEMM (cuBLAS, three nb x nb x mw products per pair plus a mirror
// of the upper triangle; its summation order is cuBLAS's, so a matrix's
// bits then differ from the twin's in the last places). cuBLAS is eligible
// for a matrix whose blocks are all full and pair up evenly (nw a multiple
// of 2 nb), and is called once per distinct row count mw of the step.
// Measured on the H100 (bsvd bench --gram all, random, nb = 16, Gram stage
// ms of the whole call: own kernel / cuBLAS; docs/perf/blocked-path.md,
// "Session 8": the own kernel's tile-4 plan; session 7's own kernel in
// brackets):
//   d 1000 x 512^2:  505.0 / 685.3 (650.6 / 663.2)
//   d  100 x 1024^2: 522.8 / 633.6 (652.5 / 615.7)
//   s 1000 x 256^2:   32.3 /  76.0 (32.7 / 75.4)
//   s  100 x 1024^2: 320.0 / 717.0 (316.8 / 710.6)
//   c 1000 x 256^2:   82.7 / 200.9 (67.5 / 199.8)
//   c  100 x 512^2:   93.7 / 193.8 (72.4 / 193.5)
//   z 1000 x 128^2:   16.1 /  20.5
//   z 1000 x 256^2:  137.7 / 161.9 (166.6 / 160.3)
//   z  100 x 512^2:  160.5 / 131.2 (178.9 / 130.6)
//   z  100 x 1024^2: 1393  / 1009  (1633 / 1002)
// cuBLAS reads each block twice, the own kernel once, but multiplies
// faster: it wins only in double complex from 512 rows (the crossover lies
// between 256 and 512, not measured in between). Since the tile-4 plan the
// own kernel wins in double at every measured size (it lost from 1024 rows
// before), and in single and single complex by 2.1-2.4x.
// BSVD_GRAM=own|cublas overrides the rule (bench --gram).
inline bool gram_cublas_rule(char precision, int mw) { return precision == 'z' && mw >= 512; }
inline bool choose_gram_cublas(char precision, int mw) {
  if (const char *e = std::getenv("BSVD_GRAM")) {
    if (e[0] == 'c') return true;
    if (e[0] == 'o') return false;
  }
  return gram_cublas_rule(precision, mw);
}

// Blocked path, the own Gram kernel's plan per step (blocked_kernel.cuh):
// tile 4 (two warps per pair, 16 FMAs per thread and row: fewer
// instructions and shared-memory wavefronts per FMA, the throughput plan)
// or tile 2 (five warps per pair, 4 FMAs per thread and row: a pair's rows
// go through ~2x faster, the latency plan for steps with few pairs, the
// tail of a mixed batch). Same bits. Rule: tile 4 from kGramTile4MinPairs
// own-kernel pairs in the step. Measured on the H100 (Gram stage ms,
// tile 2 / tile 4; docs/perf/blocked-path.md, Session 8): d 1000 x 128^2
// (4000 pairs per step) 7.79 / 7.25, 1000 x 512^2 (16000) 661 / 505;
// SuiteSparse d (56 blocked matrices, the tail of a few pairs) 58.9 / 64.9.
// BSVD_GRAM_TILE=2|4 forces a plan.
//
// The tensor-core plan (double only; blk_gram_mma_kernel, FP64 mma.m8n8k4):
// returned as 5 where tile 4 would run, for precision 'd'. Its bits differ
// from the scalar plans' in the last places (the hardware's order within
// each four products). BSVD_GRAM_TILE=m forces it (d; elsewhere tile 4).
// The wide instance (K = 64) has one scalar plan and, for d, this one:
// choose_gram_wide.
//
// The split plan (Gram tailoring, WCYCLE Sec. IV-D-1): below the tile-4
// range, a step whose own-kernel pairs are tall runs tile 2 on one block
// per kGramSegRows-row segment of each pair (blk_gram_tile2_kernel<SPLIT>),
// when the blocks stay within kGramSplitMaxBlocks (two waves of tile-2
// blocks on the H100: 132 SMs x 7) and the partial tiles fit the workspace
// (kGramSplitMaxTiles). Returned as 3. BSVD_GRAM_TILE=s forces it wherever
// it fits, BSVD_GRAM_TILE=2 keeps tile 2 unsplit.
constexpr long kGramTile4MinPairs = 1024;
constexpr long kGramSplitMaxBlocks = 1848;
constexpr long kGramSplitMaxTiles = 4096;
inline int choose_gram_tile(long pairs, long slots = 0, int segs = 1, char precision = 0) {
  const bool fits = segs >= 2 && slots * segs <= kGramSplitMaxTiles;
  const int thr = precision == 'd' ? 5 : 4; // the throughput plan
  if (const char *e = std::getenv("BSVD_GRAM_TILE")) {
    if (e[0] == 's') return fits ? 3 : 2;
    if (e[0] == 'm') return thr;
    const int v = std::atoi(e);
    if (v == 2 || v == 4) return v;
  }
  if (pairs >= kGramTile4MinPairs) return thr;
  return fits && pairs * segs <= kGramSplitMaxBlocks ? 3 : 2;
}
// The wide instance's Gram plan: 5 (tensor cores) for d, else 4 (its
// scalar kernel, blk_gram_wide_kernel); BSVD_GRAM_TILE=4 forces the latter.
inline int choose_gram_wide(char precision) {
  if (const char *e = std::getenv("BSVD_GRAM_TILE"))
    if (e[0] == '4') return 4;
  return precision == 'd' ? 5 : 4;
}

// Blocked path, eigensolver plan: threads per 2nb x 2nb Gram matrix.
// The TLP model of WCYCLE Sec. IV-D (eqs. 8-10, Tables II-III), for the
// one kernel of a Jacobi step whose per-problem latency dominates when few
// problems are in flight (the tail of a mixed batch: a few large matrices
// iterate alone for hundreds of steps). Candidate plans in order of
// decreasing work per thread (higher arithmetic intensity, fewer
// synchronizations per rotation step): 32 threads (a warp, 4 per block),
// 128, 256 (a block each). TLP(plan) = pairs of the step x threads of the
// plan; a plan wins when its TLP reaches its threshold, tried in that
// order, and the most parallel one (256) when none does. The plans give
// the same bits.
//
// Two thresholds, not the paper's one: tau_warp for the warp plan (per
// precision) and tau_block for the 128-thread plan (all precisions). With
// one tau the model put the 128/256 crossover a factor tau/32 : tau/128 =
// 4 below the 32/128 one; measured, the 128/256 crossover sits at the same
// pair count in every precision (between 256 and 512 pairs: 256-thread
// blocks stop fitting one wave) while the 32/128 one moves by precision
// (d, s at 512-1024 pairs; c and z: the warp plan never won up to 8192).
// Measured with `bsvd bench --tune-tlp 256 --precision P` (uniform batches
// of 1 ... 1024 random 256^2 matrices, 8 pairs each, eigensolver stage ms
// per plan; the command prints the pair of thresholds whose choices come
// closest to the best plan of each batch). H100, 2026-11-24 (session 14,
// the pipelined block plans), ms for batches of 1 / 32 / 64 / 128 / 1024
// (plans 32 / 128 / 256):
//   s:  10.2/6.7/5.2  11.9/7.8/6.4   12.7/8.8/11.5   13.4/15.3/20.8  53.3/91.8/147
//   d:  13.1/7.6/6.5  15.8/8.8/7.9   16.4/10.5/14.5  16.1/18.7/26.7  87.6/135/198
//   c:  15.1/6.8/5.7  21.7/9.0/8.0   23.3/10.8/14.1  25.6/18.7/25.4  133/129/181
//   z:  24.9/9.8/8.7  26.4/12.0/11.2 27.4/16.2/20.5  48.6/29.5/33.4  369/214/235
// (docs/perf/wcycle.md, Session 14, has the full tables.) The two
// thresholds pick the best plan of every measured batch in all four
// precisions (mean time over the best plan 1.000; the best single tau:
// s 1.013, d 1.010, c 1.040, z 1.047). Fitted: tau_block 46341 (the
// middle of the equally good run 38968 .. 65536: 128 threads from 363
// pairs); tau_warp s, d 23170 (run 19484 .. 32768: the warp plan from 725
// pairs); c, z 370728 (the run starts at 311744, just above the largest
// batch measured, and has no upper end: the warp plan from 11586 pairs, an
// extrapolation; z's shared memory allows few warps per SM, c's warp plan
// came within 4 % of the 128 plan at 8192 pairs).
// The H200 (session 17, the same command) fits the same thresholds in
// all four precisions, mean time over the best plan 1.000
// (wcycle-tune-tlp-h200-2026-11-25.txt): one table for both GPUs.
// Full and ragged steps (session 22; docs/perf/wcycle.md, "Session 22").
// The 256^2 fit above is for steps whose Gram matrices all have full
// pairs (every Gram-path matrix in nb-wide blocks only, two or more of
// them). A step with a ragged pair (n not a multiple of nb, or a single
// block) keeps the warp plan's per-pair cost (a 32-lane warp on a smaller
// Gram matrix, and no lean kernel in d) while the block plans finish
// sooner, so its crossover sits higher. H200, `bsvd bench --tune-tlp 100`
// (d, 7 blocks, 4 pairs per matrix) fits tau_warp 92682 (run 77936 ..
// 131072), and the whole call agrees (random; ms warp / 128 plan): d 200 x
// 100^2 (800 pairs) 10.14 / 8.61, 400 x 100^2 14.68 / 13.52, 600 x 100^2
// (2400) 18.78 / 18.05, 200 x 200^2 (1400, ragged) 37.33 / 34.47, 400 x
// 200^2 (2800) 65.33 / 63.97; s 200 x 100^2 7.27 / 5.97, 400 x 100^2
// (1600) 10.00 / 10.00. On the H100 (same command) d agrees, and s crosses
// lower: 400 x 100^2 9.68 / 9.60, 600 x 100^2 (2400) 12.30 / 13.64; so s
// has its own ragged tau_warp, 62706 (the warp plan from 1960 pairs, the
// geometric middle of 1600 and 2400). The full-pair threshold moves up
// as well: the whole call at 800 full pairs ran faster on the 128 plan (d
// 200 x 128^2 10.78 / 10.26, and 10.94 / 10.35 on the H100 in session 21;
// s 7.14 / 6.45) and on the warp plan at 1200 (d 300 x 128^2 12.15 / 13.86), while the
// eigensolver stage alone (--tune-tlp 128 and 256, d, lean kernel) puts
// the crossover between 512 and 1024 pairs. So tau_warp for full steps is
// 28963 (the warp plan from 906 pairs, the geometric middle of 800 and
// 1024). c and z keep 370728 for both kinds of step.
// BSVD_TLP_THRESHOLD=n overrides tau_warp (full and ragged steps),
// BSVD_TLP_BLOCK_THRESHOLD=n tau_block; BSVD_EVD_THREADS=32|128|256 forces
// a plan (bench --evd-threads).
// The plans, in the rule's order; evd_plan_index maps a plan to its place.
constexpr int kEvdPlans[3] = {32, 128, 256};
constexpr int evd_plan_index(int nt) { return nt == 32 ? 0 : nt == 128 ? 1 : 2; }
inline bool is_evd_plan(int nt) { return nt == 32 || nt == 128 || nt == 256; }
inline int evd_threads_rule(long pairs, long tau_warp, long tau_block) {
  if (pairs * 32 >= tau_warp) return 32;
  if (pairs * 128 >= tau_block) return 128;
  return 256;
}
inline long env_threshold(const char *name, long dflt) {
  if (const char *e = std::getenv(name)) {
    const long v = std::atol(e);
    if (v > 0) return v;
  }
  return dflt;
}
constexpr long kTlpWarpFull = 28963;     // s, d: every pair of the step full
constexpr long kTlpWarpRagged = 92682;   // d: a ragged pair in the step
constexpr long kTlpWarpRaggedS = 62706;  // s: a ragged pair in the step
constexpr long kTlpWarpComplex = 370728; // c, z
constexpr long kTlpBlock = 46341;
// A matrix of nw columns in blocks of nb: are all its pairs full (two
// nb-wide blocks)?
constexpr bool full_pairs(int nw, int nb) { return nw >= 2 * nb && nw % nb == 0; }
// prec: 's', 'd', 'c', 'z'; full: every Gram matrix of the step is a pair
// of two nb-wide blocks (full_pairs).
inline long tlp_warp_threshold(char prec, bool full) {
  const long dflt = prec == 'd'   ? (full ? kTlpWarpFull : kTlpWarpRagged)
                    : prec == 's' ? (full ? kTlpWarpFull : kTlpWarpRaggedS)
                                  : kTlpWarpComplex;
  return env_threshold("BSVD_TLP_THRESHOLD", dflt);
}
inline long tlp_block_threshold() { return env_threshold("BSVD_TLP_BLOCK_THRESHOLD", kTlpBlock); }
inline int choose_evd_threads(long pairs, char prec, bool full) {
  if (const char *e = std::getenv("BSVD_EVD_THREADS")) {
    const int v = std::atoi(e);
    if (is_evd_plan(v)) return v;
  }
  return evd_threads_rule(pairs, tlp_warp_threshold(prec, full), tlp_block_threshold());
}
// The warp plan's lean kernel (d only; blk_evd_lean_kernel in
// blocked_kernel.cuh): one shared-memory array per warp instead of two and
// at most 128 registers, so 16 warps per SM instead of 12, same bits. It
// takes the warp plan's steps whose Gram matrices all have full pairs
// (nb = 16, n a multiple of 16 and at least 32) and one inner sweep; the
// warp kernel the rest. Measured on the H100 (docs/perf/blocked-path.md, Session 19), d
// random, lean / warp kernel: eigensolver stage (one stream group) 1000 x
// 128^2 18.0 / 19.0 ms, 1000 x 256^2 85.2 / 88.5, 200 x 256^2 24.3 / 29.0,
// 100 x 512^2 60.2 / 71.9; the whole call (two groups) 0.7-2 % faster.
// BSVD_EVD_LEAN=0 turns it off (read once per call).
inline bool evd_lean_enabled() {
  const char *e = std::getenv("BSVD_EVD_LEAN");
  return !(e && e[0] == '0');
}

// Blocked path: the Gram path's matrices in one group (one stream) or two
// (two streams; blocked_kernel.cuh, the sweep loop), so that one group's
// eigensolver may overlap the other's Gram and update kernels. Measured on
// the H100, 2026-11-22 (bench rows bsvd-cuda / bsvd-cuda-groups1 or -groups2
// in one run; docs/perf/routing-h100-2026-11-22.txt), ms with one / two
// groups: d 1000 x 128^2 39.3 / 36.6, 256^2 264.4 / 256.1, 512^2 2103 / 2098,
// s 1000 x 256^2 150.1 / 142.3; the SuiteSparse batch (d, one call) 148.6 /
// 142.7. Two groups never lost; they gain least where the update stage
// (DRAM-bound) dominates. Rule: two groups whenever the step has at least
// two own-kernel Gram matrices. BSVD_BLK_GROUPS=1|2 forces it.
inline int blocked_stream_groups() {
  if (const char *e = std::getenv("BSVD_BLK_GROUPS")) {
    const int v = std::atoi(e);
    if (v == 1 || v == 2) return v;
  }
  return 2;
}

// Fused kernel or blocked path for a matrix that fits the fused kernel
// (backend.cu, route; variant auto: unblocked keeps every fitting matrix on
// the fused kernel, blocked sends it to the blocked path). Measured on the
// H100, 2026-11-22 (bench rows bsvd-cuda and bsvd-cuda-blocked, random,
// vectors; ms per call fused / blocked, 1000 matrices; rows in
// docs/perf/routing-h100-2026-11-22.txt):
//   d:  48^2 2.59/5.70   64^2 4.90/7.98   80^2 19.4/16.8   96^2 42.7/19.4
//       112^2 64.9/35.0  (100 matrices: 64^2 1.28/2.31, 112^2 8.48/7.40)
//   s:  64^2 3.00/4.32   96^2 17.8/11.4   128^2 54.0/21.8  160^2 105/40.6
//       (100 matrices: 128^2 7.39/5.26)
//   c:  64^2 4.54/10.1   96^2 38.6/27.2   112^2 57.4/51.4
//   z:  48^2 5.84/9.04   64^2 14.6/16.4   80^2 42.9/34.2
// The fused kernel wins up to 64 columns in every precision and batch size
// measured, the blocked path from 80 (d, z) or 96 (s, c). Beyond 64
// columns the fused kernel's time grows ~4x per 1.25x in n (one matrix per
// thread block, and fewer blocks per SM as the matrix takes more shared
// memory), the blocked path's ~2x. Rule: the fused kernel up to
// kFusedMaxCols columns (min(m, n)); 65 .. 79 were not measured then
// (small batches beyond 64 columns: below, session 22).
// BSVD_FUSED_MAX_COLS=n overrides (a large n: every fitting matrix fused,
// the rule before this measurement).
constexpr int kFusedMaxCols = 64;
inline int fused_max_cols_override() { // BSVD_FUSED_MAX_COLS, or 0
  if (const char *e = std::getenv("BSVD_FUSED_MAX_COLS")) {
    const int v = std::atoi(e);
    if (v > 0) return v;
  }
  return 0;
}
// Small batches beyond 64 columns (session 22). The measurement above is
// of 1000 matrices (and 100 at 64^2 and 112^2). With few matrices per SM
// the fused kernel's time is one matrix's (flat in the count up to one
// wave), while the blocked path's grows with the count from its latency
// floor; so the fused kernel wins beyond 64 columns in a window of counts.
// H100 (132 SMs), random, vectors, `bsvd bench` on 8, 16, 32, 64, 100,
// 132, 200, 264 matrices of 68, 72, 76, 80, 88 columns (best blocked plan
// / fused, > 1: the fused kernel wins; docs/perf/wcycle.md, Session 22):
//   d 68: 1.17 ... 1.63 at every count; 72: 1.06 ... 1.48 at every count;
//     76: 0.91 (8) ... 1.04 (64), 1.10 (100), 1.28 (132), 1.11 (200);
//     80: 0.82 (8), 0.95 (64), 1.01 (100), 1.15 (132), 0.90 (200);
//     88: 0.72 (8), 0.86 (64), 1.07 (100), 1.11 (132), 0.75 (200)
//   c 68 ... 76: 1.04 ... 1.88 at every count; 80: 0.92 (8), 1.09 (100),
//     1.25 (132); 88: 0.86 (8), 1.29 (100), 1.29 (132), 0.90 (200)
//   z 68: 1.01 ... 1.52; 72: 0.92 (8), 1.34 (100), 1.53 (132), 1.04 (200);
//     76: 1.03 (100), 1.22 (132); 80: 0.74 (8), 1.08 (100), 1.28 (132)
//   s 68: 0.89 (8), 1.03 (100), 1.20 (132); 72: 0.78 (8), 1.04 (100), 1.22
//     (132); 76: 0.95 (100); 80: 0.92 (100); 88: 0.97 (100), 0.87 (132)
// Rule, two caps per precision: the fused kernel takes the matrices of
// up to fused_wide_cols columns (d 72, c 76) when the call has at most 2
// SMs' worth of matrices of 65 .. that many columns (measured up to 264),
// and those of up to fused_window_cols (d 88, c 88, z 80, s 72) when the
// call has 3/4 SMs' worth to one SM's worth of matrices of 65 .. that many
// columns. Every measured case the rule sends to the fused kernel ran
// faster there (1.01 ... 1.88). BSVD_FUSED_MAX_COLS overrides both.
inline int fused_wide_cols(char prec) {
  return prec == 'd' ? 72 : prec == 'c' ? 76 : kFusedMaxCols;
}
inline int fused_window_cols(char prec) {
  return prec == 'd' || prec == 'c' ? 88 : prec == 'z' ? 80 : 72;
}
// The column cap of a call's automatic routing, from its matrices that fit
// the fused kernel and take no other path first (QR): wide = those of
// kFusedMaxCols+1 .. fused_wide_cols columns, window = those of
// kFusedMaxCols+1 .. fused_window_cols columns; sms = the GPU's SMs.
inline int fused_call_cols(char prec, long wide, long window, int sms) {
  if (const int v = fused_max_cols_override()) return v;
  if (window > 0 && 4 * window >= 3L * sms && window <= sms) return fused_window_cols(prec);
  if (wide > 0 && wide <= 2L * sms) return fused_wide_cols(prec);
  return kFusedMaxCols;
}

// A call with matrices on the blocked path and on the fused kernel or the
// QR path: the latter two run beside the blocked path on a side stream
// (backend.cu, launch_gpu). BSVD_BESIDE=0 puts them before it on the call's
// stream, as before (bench rows "bsvd-cuda-serial").
inline bool fused_beside_blocked() {
  const char *e = std::getenv("BSVD_BESIDE");
  return !(e && e[0] == '0');
}

// QR with column pivoting (the preconditioning, qr_kernel.cuh), the plan of
// its cluster factorization per call. Latency plan: blocks of kQrcpThreads
// (1024) holding at most 32 columns each (one column per warp and step; a
// 500^2 d matrix on 16 blocks, ~6.3 us per step: docs/perf/wcycle.md,
// Session 15). Throughput plan: blocks of kQrcpThroughputThreads (256)
// holding as many columns as fit shared memory (a 128^2 d matrix on one
// block instead of four: twice the matrices in flight, each warp
// reflecting several columns per step). A call's cost in steps: per
// cluster size, waves (its matrices over the clusters the GPU runs at once,
// cudaOccupancyMaxActiveClusters) times the widest matrix's columns; the
// throughput plan's steps weigh kQrcpThroughputStepCost times a latency
// step. Measured on the H100 (random d, the whole
// preconditioned call in ms, latency / throughput plan forced;
// docs/perf/wcycle.md, Session 16): 1000 x 96^2 37.2 / 21.8, 1000 x 128^2
// 61.0 / 49.0, 100 x 128^2 9.86 / 8.60, 1000 x 256^2 347.0 / 320.8 (the
// same clusters in flight, 32 of 8 blocks / of 4: the throughput plan's
// steps were not dearer), 100 x 256^2 47.7 / 44.7, 20 x 512^2 67.9 / 68.4
// (both 16-block clusters, the same waves); logrand d 2 x 512^2 25.6 /
// 26.8 (one wave each). So a throughput step costs about a latency step
// (1.0), and ties (the same waves) go to the latency plan, whose steps ran
// 1-5 % faster there.
// BSVD_QRCP_PLAN=latency|throughput forces one (l / t);
// BSVD_QRCP_PLAN_TRACE=1 prints each call's two costs and the choice.
constexpr double kQrcpThroughputStepCost = 1.0;
inline bool qrcp_throughput_rule(double latency_steps, double throughput_steps) {
  if (const char *e = std::getenv("BSVD_QRCP_PLAN")) {
    if (e[0] == 't') return true;
    if (e[0] == 'l') return false;
  }
  return throughput_steps * kQrcpThroughputStepCost < latency_steps;
}

// The automatic preconditioning (opts.precondition = 0, cuda backend). What
// it buys: ill-conditioned and structured matrices converge in about half
// the sweeps (logrand / geo d 1.3-2.9x faster, the SuiteSparse batch 1.29x;
// docs/perf/wcycle.md, Sessions 16-17). What it costs shows on matrices
// that converge fast anyway (random values): the factorization and Q's
// application, less the ~12 % of sweeps it saves there too. That cost, as
// a fraction of the plain call's time, measured on the H100 (d, random
// family, 27 uniform batches of 128^2 ... 512^2, 2 ... 1000 matrices;
// Session 17), fits
//   cost = 0.403 + 0.0233 log2(count) - 0.0473 log2(nw)
// within 0.07 (rms 0.03; one outlier left out, 10 x 256^2 at 0.28, which
// measured 0.10 in a second run; small batches vary by ~0.06 from run to
// run): dearer for many small matrices (the GPU is full and the
// factorization runs less efficiently than the sweeps), cheaper for few
// large ones (both are latency bound, and a step of the factorization is
// cheaper than a Jacobi step). count: the call's matrices for the blocked
// path in units of its largest (sum of mw nw^2 over the largest's), nw:
// the largest's columns. The SuiteSparse batch's 82 blocked matrices are
// 14.4 of lnsp_511's (511 columns): predicted 0.067, measured 0.07 on its
// shapes with random values (Session 16). Precondition when the predicted
// cost is at most kQrcpAutoMaxCost (d: up to 1 matrix of 100 columns, 2 of
// 128, 9 of 256, 21 of 384, 38 of 512) and every candidate fits a cluster
// (beyond, the one-block kernel costs 2.0-2.3x on random matrices, 1024^2
// d). Fitted on d. Checked on the other precisions (random family,
// Session 17, predicted-on cases): c 9 x 256^2 1.00, z 2 x 256^2 1.10,
// z 8 x 384^2 1.03, so c and z take d's rule; s 2 x 128^2 1.17, 9 x 256^2
// 1.37, 38 x 512^2 1.14 (its sweeps are cheaper, the factorization's
// column steps are not), so s is never preconditioned automatically (it
// gains like d on logrand: 9 x 256^2 1.63x with precondition = 1).
constexpr double kQrcpAutoCost0 = 0.403, kQrcpAutoCostCount = 0.0233, kQrcpAutoCostWidth = -0.0473;
constexpr double kQrcpAutoMaxCost = 0.10;
inline double qrcp_auto_cost(double count, int nw) {
  return kQrcpAutoCost0 + kQrcpAutoCostCount * std::log2(std::max(count, 1.0)) +
         kQrcpAutoCostWidth * std::log2(double(std::max(nw, 1)));
}
inline bool qrcp_auto_rule(double count, int nw, char precision) {
  return precision != 's' && qrcp_auto_cost(count, nw) <= kQrcpAutoMaxCost;
}

} // namespace bsvd::detail::cuda
