// Tuning as data: the measured thresholds and decision tables of the GPU
// paths, one table per GPU model, each rule behind a one-line query.
//
// A call's rules read a *resolved* table: the GPU's own (tuning_table) with
// the typed overrides of benchmarks and tests applied (with_overrides). The
// measurements behind every number are in docs/design/decisions/; this file
// says only what each number decides. Host-only code, no CUDA.
#pragma once

#include "../core/batch.hpp"
#include "../core/overrides.hpp"
#include "device.hpp"

#include <algorithm>
#include <cstddef>

namespace bsvd::detail::plan {

// Index of a precision letter in the per-precision arrays: s, d, c, z.
constexpr int prec_index(char p) { return p == 's' ? 0 : p == 'd' ? 1 : p == 'c' ? 2 : 3; }

// The fields of a table; the values are in the table files (tuning_sm90.cpp).
// Per-precision arrays are indexed by prec_index. A field marked "forced"
// (and the switches beside them) is not measured: it is where an override
// lands (with_overrides), neutral in every table.

// The fused shared-memory kernel (src/cuda/fused/).
struct FusedTuning {
  // Lanes of a warp per column pair, by the largest row count m* of a launch
  // (at most rows_le[i] rows) and the batch (small: below big_batch).
  long big_batch = 0;
  int rows_le[3] = {};
  int lanes_small[3] = {}, lanes_big[3] = {};
  int lanes_beyond[4] = {}; // m* beyond rows_le[2]
  int threads_per_matrix = 0; // at most, per matrix
  // Column cap of the automatic routing: matrices of up to max_cols columns
  // take the fused kernel; in calls with few matrices beyond it, up to
  // wide_cols (at most 2 SMs' worth of them) or window_cols (3/4 to 1 SM's
  // worth).
  int max_cols = 0;
  int wide_cols[4] = {}, window_cols[4] = {};
  // The hyperbolic SVD's cap: its blocked path has the one-sided pair
  // solver only, so the fused kernel stays the faster one further out.
  int hyp_max_cols = 0;
  bool beside_blocked = true; // fused and QR matrices on a side stream
  int lanes_forced = 0; // forced: 4, 8, 16, 32
  bool lanes_gcd_rule = false; // forced: WCYCLE's gcd rule instead of the table
  int max_cols_forced = 0; // forced: this cap for every call
};

// The blocked path (src/cuda/blocked/).
struct BlockedTuning {
  int pair_solver = 0; // the solver BSVD_PAIR_AUTO resolves to
  // Eigensolver plan per step (WCYCLE's TLP model): the warp plan when
  // pairs x 32 >= tlp_warp, else 128 threads when pairs x 128 >= tlp_block,
  // else 256; tlp_warp for steps whose pairs are all full, or not.
  long tlp_warp_full[4] = {}, tlp_warp_ragged[4] = {};
  long tlp_block = 0;
  bool lean = true; // the lean warp kernel (d) where it applies
  // Own Gram kernel: the throughput plan from gram_tile4_min_pairs pairs
  // per step; below, the split plan while its blocks stay within
  // gram_split_max_blocks, else tile 2.
  long gram_tile4_min_pairs = 0, gram_split_max_blocks = 0;
  int gram_cublas_min_rows[4] = {}; // cuBLAS forms the Gram matrices from this many rows; 0 never
  int stream_groups = 1; // streams the Gram-path matrices are split over
  int evd_threads_forced = 0; // forced: 32, 128, 256
  GramPlan gram_forced = GramPlan::kAuto;
  Force gram_cublas_forced = Force::kAuto;
  bool profile = false; // stage timers (benchmarks)
  // Not a measurement: make_plan sets it from the device's facts
  // (PathFacts::evd_warp_fits). false: the warp plan's shared memory does
  // not fit a block of this GPU, and evd_threads takes 128 or 256 instead,
  // also when the plan is forced.
  bool warp_fits[4] = {true, true, true, true};
};

// QR preprocessing of tall and wide matrices (src/cuda/qr/).
struct QrTuning {
  // Automatic choice: matrices at least auto_ratio times taller than wide
  // with at least auto_min_rows rows; those that do not fit the fused kernel
  // only up to auto_max_cols columns and auto_max_bytes (unless TSQR takes
  // them), or without the WY form up to auto_max_cols_grid columns with
  // auto_apply_cols columns per block of the Q application.
  int auto_ratio = 0, auto_min_rows = 0, auto_max_cols = 0;
  size_t auto_max_bytes = 0;
  int auto_max_cols_grid = 0, auto_apply_cols = 0;
  bool wy = true; // Q in compact WY form
  bool tsqr = true; // TSQR for matrices of two or more chunks
  bool cluster = true; // pivoted factorization on thread-block clusters
  bool apply = true; // Q applied by a grid of blocks
  int threads_forced = 0; // forced: threads per QR matrix
};

// QR with column pivoting, the preconditioning (src/cuda/qr/).
struct QrcpTuning {
  // Automatic preconditioning: on when the predicted extra time on fast-
  // converging input, cost0 + cost_count log2(count) + cost_width log2(nw),
  // is at most max_cost, in the precisions marked auto_on.
  double cost0 = 0, cost_count = 0, cost_width = 0, max_cost = 0;
  bool auto_on[4] = {};
  // The pivoted factorization takes its throughput plan when its steps,
  // weighted by throughput_step_cost, are fewer than the latency plan's.
  double throughput_step_cost = 1;
  Force throughput_forced = Force::kAuto;
  bool trace = false; // print the decisions (stderr)
};

// The Gram preconditioning chosen by the plan (precondition = 0, auto;
// decisions/0022-gram-preconditioning-by-default.md): the shapes of the
// blocked path's matrices with at least min_cols columns (nw) whose work
// in the call, count mw nw^2, is at least auto_min_work take the Gram
// route in the precisions marked auto_on. There a test on the
// single-precision Gram matrix, per matrix, predicts a gain
// (core/gram_test.hpp): its columns' RMS cosine at least min_cos (not
// orthogonal already), the stable rank of those cosines at least min_srank
// (not an orthogonal matrix changed in a few directions: the plain
// iteration is short) and its effective rank tr(G)^2 / |G|_F^2 at least
// min_rank (single precision resolves some directions). The test runs on
// at most sample matrices of each shape, spread evenly over it
// (gram_sample, core/gram_test.hpp), so that a group that stays plain
// pays for a few Gram matrices, not all. The group is preconditioned when
// the matrices predicted to gain hold at least half its work, each sampled
// matrix standing for the count / sample of its shape; else it runs the
// plain blocked path.
struct GramTuning {
  bool auto_on[4] = {};
  int min_cols = 0;
  int sample = 32; // matrices tested per shape (>= 1; every table, BSVD_GRAM_AUTO=1 too)
  double auto_min_work = 0, min_cos = 0, min_srank = 0, min_rank = 0;
  bool trace = false; // print the group's test and decision (blocking calls)
};

// The bidiagonal route for values only (Route::kBidiag; decision 0023):
// under precondition = 0 and variant auto, a values-only call's matrices
// that the route reaches (PathFacts::bidiag_reaches) with min(m, n) in
// [min_cols[p], max_cols[p]] take it in the precisions p marked on -- where
// it was measured faster than the Jacobi paths (BSVD_BIDIAG=1 forces it for
// every size it reaches, 0 keeps it off).
struct BidiagTuning {
  bool on[4] = {};
  int min_cols[4] = {1, 1, 1, 1}, max_cols[4] = {1 << 30, 1 << 30, 1 << 30, 1 << 30};
};

// The register tier (src/cuda/tiny/): matrices with max(m, n) <= the cap
// of their precision and the call's batch take it under variant auto (0:
// never): max_dim_small below batch_mid matrices, max_dim_mid below
// batch_big, max_dim from there.
// The register tier's compiled reach, max(m, n), per precision: the lanes
// variant's instances (src/cuda/tiny/lanes.cuh). z stops at 8: its 16-lane
// instance spills and lost to the fused kernel by 1.6-2.1x on the H100
// (docs/perf/tiny-wide.md). Every cap the plan uses, a table's or a forced
// one, is clamped to it.
constexpr int kTinyInstanceMax[4] = {32, 32, 32, 8};

struct TinyTuning {
  long batch_mid = 0, batch_big = 0;
  int max_dim_small[4] = {}, max_dim_mid[4] = {};
  int max_dim[4] = {};
  int max_dim_forced = -1; // forced: this cap for every precision (0 = off); -1 = table
  // The lanes variant (one lane per column, bsvd::device::warp_svd) serves
  // the tier's matrices with max(m, n) >= lanes_from (same bands; 9 = never).
  int lanes_from_small[4] = {9, 9, 9, 9}, lanes_from_mid[4] = {9, 9, 9, 9};
  int lanes_from[4] = {9, 9, 9, 9};
  int lanes_from_forced = -1; // forced: this size for every precision; -1 = table
  // The lanes variant's wide range beyond 8: max(m, n) in wide_from ...
  // wide_max joins the tier at every batch (wide_max < wide_from: none).
  int wide_from[4] = {}, wide_max[4] = {};
};

// One large matrix across devices (core/distributed.hpp): a blocking call
// of one matrix on host data over two or more devices takes the distributed
// solve when min(m, n) >= min_cols (0: never); its pairs are about
// pair_cols wide, and each pair's solve runs inner_sweeps sweeps (0: until
// converged).
struct DistTuning {
  int min_cols = 0, pair_cols = 0, inner_sweeps = 1;
};

struct Tuning {
  const char *name = "";
  FusedTuning fused;
  TinyTuning tiny;
  BlockedTuning blocked;
  QrTuning qr;
  QrcpTuning qrcp;
  GramTuning gram;
  BidiagTuning bidiag;
  DistTuning dist;
};

// The tables, keyed by architecture family (the compute capability's major
// part, and the minor where a family splits: 8.0 against 8.6 / 8.9).
// measured_table: the family's measured table, or null where none is
// (only sm_90, H100 and H200, is measured so far).
const Tuning *measured_table(int cc_major, int cc_minor);
// The measured table of the family, else the sm_90 table, the one the
// fallback starts from (no GPU: cc 0.0).
const Tuning &tuning_table(int cc_major, int cc_minor);
// The table a GPU's calls read: its family's measured table, else
// fallback_table(d) (tuning_fallback.cpp).
Tuning tuning_for(const DeviceDesc &d);
// The documented fallback for a GPU without a measured table: the sm_90
// values, with those that count the GPU's parallelism scaled by its SMs and
// FP64 throughput (docs/design/tuning.md, "Other GPUs").
Tuning fallback_table(const DeviceDesc &d);

// t with the overrides applied.
Tuning with_overrides(Tuning t, const Overrides &o);

// ---- block width (both backends) ------------------------------------------
// Columns per block of the blocked variant: the caller's, else 16 -- on the
// CPU twin as on the GPU, so that the twins take the same steps.
constexpr int kDefaultBlockWidth = 16;
constexpr int block_width(int block_size) {
  return block_size > 0 ? block_size : kDefaultBlockWidth;
}

// ---- fused kernel -----------------------------------------------------------
// Lanes per column pair of a launch whose largest row count is m_star.
int fused_lanes(const Tuning &t, int m_star, long batch, char prec);
// Threads per matrix, at most.
inline int fused_tpm_cap(const Tuning &t) { return t.fused.threads_per_matrix; }
inline int fused_wide_cols(const Tuning &t, char prec) {
  return t.fused.wide_cols[prec_index(prec)];
}
inline int fused_window_cols(const Tuning &t, char prec) {
  return t.fused.window_cols[prec_index(prec)];
}
// The column cap of a call with `wide` / `window` matrices beyond max_cols
// (see FusedTuning) on a GPU of `sms` multiprocessors.
int fused_call_cols(const Tuning &t, char prec, long wide, long window, int sms);
// Whether the fused kernel and the QR path run beside the blocked path.
inline bool fused_beside_blocked(const Tuning &t) { return t.fused.beside_blocked; }

// ---- register tier ---------------------------------------------------------
inline int tiny_max_dim(const Tuning &t, char prec, long count) {
  const TinyTuning &y = t.tiny;
  const int p = prec_index(prec);
  const int cap = y.max_dim_forced >= 0  ? y.max_dim_forced
                  : count >= y.batch_big ? y.max_dim[p]
                  : count >= y.batch_mid ? y.max_dim_mid[p]
                                         : y.max_dim_small[p];
  return cap < kTinyInstanceMax[p] ? cap : kTinyInstanceMax[p];
}

// Which max(m, n) the tier takes in a call of `count` matrices: up to the
// cap (tiny_max_dim), and the lanes variant's wide range. A forced cap
// (BSVD_TINY_MAX_DIM) replaces both: every size up to it.
struct TinyReach {
  int cap = 0, from = 1, max = 0;
  bool takes(int mw) const { return mw <= cap || (mw >= from && mw <= max); }
};
inline TinyReach tiny_reach(const Tuning &t, char prec, long count) {
  const int p = prec_index(prec);
  TinyReach r;
  r.cap = tiny_max_dim(t, prec, count);
  if (t.tiny.max_dim_forced < 0) {
    r.from = t.tiny.wide_from[p];
    r.max = std::min(t.tiny.wide_max[p], kTinyInstanceMax[p]);
  }
  return r;
}

// The smallest max(m, n) that the tier runs with the lanes variant.
inline int tiny_lanes_from(const Tuning &t, char prec, long count) {
  const TinyTuning &y = t.tiny;
  if (y.lanes_from_forced >= 0) return y.lanes_from_forced;
  const int p = prec_index(prec);
  return count >= y.batch_big   ? y.lanes_from[p]
         : count >= y.batch_mid ? y.lanes_from_mid[p]
                                : y.lanes_from_small[p];
}

// ---- blocked path -----------------------------------------------------------
// The pair solver BSVD_PAIR_AUTO stands for.
inline int auto_pair_solver(const Tuning &t) { return t.blocked.pair_solver; }
// Whether a matrix of mw rows has its Gram matrices formed by cuBLAS.
bool gram_cublas(const Tuning &t, char prec, int mw);
// The own Gram kernel's plan for a step of `pairs` pairs; split: segs row
// segments of `slots` pair slots, which fit when segs >= 2 and slots x segs
// <= max_tiles (the split plan's workspace).
GramPlan gram_plan(const Tuning &t, char prec, long pairs, long slots, int segs, long max_tiles);
// The wide instance's (block width 17 ... 32) Gram plan.
GramPlan gram_plan_wide(const Tuning &t, char prec);
// The eigensolver plans, in the rule's order, and a plan's place in it.
constexpr int kEvdPlans[3] = {32, 128, 256};
constexpr int evd_plan_index(int nt) { return nt == 32 ? 0 : nt == 128 ? 1 : 2; }
constexpr bool is_evd_plan(int nt) { return nt == 32 || nt == 128 || nt == 256; }
// A matrix of nw columns in blocks of nb: are all its pairs two full blocks?
constexpr bool full_pairs(int nw, int nb) { return nw >= 2 * nb && nw % nb == 0; }
// The TLP rule with explicit thresholds (the benchmark fits them with it).
constexpr int evd_threads_rule(long pairs, long tau_warp, long tau_block) {
  return pairs * 32 >= tau_warp ? 32 : pairs * 128 >= tau_block ? 128 : 256;
}
// The warp plan's threshold for a step whose pairs are all full (or not).
long tlp_warp(const Tuning &t, char prec, bool full);
inline long tlp_block(const Tuning &t) { return t.blocked.tlp_block; }
// Threads per Gram matrix of a step with `pairs` pairs on the Gram path.
int evd_threads(const Tuning &t, char prec, long pairs, bool full);
// Whether the lean warp kernel may run (d, full steps, one inner sweep).
inline bool evd_lean(const Tuning &t) { return t.blocked.lean; }
// Streams the Gram-path matrices of a step are split over.
inline int stream_groups(const Tuning &t) { return t.blocked.stream_groups; }

// ---- QR front end and preconditioning ---------------------------------------
// Threads per matrix of the one-block QR kernels.
inline int qr_threads(const Tuning &t, bool pivoted, int pivoted_default) {
  return t.qr.threads_forced > 0 ? t.qr.threads_forced : pivoted ? pivoted_default : 256;
}
// Predicted extra time of preconditioning (a fraction of the plain call).
double qrcp_auto_cost(const Tuning &t, double count, int nw);
// Whether the automatic preconditioning is on for `count` matrices (in
// units of the largest, of nw columns).
bool qrcp_auto(const Tuning &t, char prec, double count, int nw);
// Whether a shape's matrices take the Gram route under precondition = 0:
// count matrices of mw x nw in the call (GramTuning).
bool gram_auto(const Tuning &t, char prec, long count, int mw, int nw);
// Whether the pivoted factorization takes its throughput plan.
bool qrcp_throughput(const Tuning &t, double latency_steps, double throughput_steps);

} // namespace bsvd::detail::plan
