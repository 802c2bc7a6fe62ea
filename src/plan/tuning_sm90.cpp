// The tuning table of sm_90 GPUs (H100, H200): every value measured on
// them; docs/design/decisions/ holds the measurements, one record per rule.
#include "tuning.hpp"

namespace bsvd::detail::plan {

namespace {

Tuning make_sm90() {
  Tuning t;
  t.name = "sm_90 (H100, H200)";

  // Fused kernel: lanes per pair (decisions/0011-fused-lanes-per-pair.md):
  // few lanes win, more for small batches so that more threads are in flight.
  FusedTuning &f = t.fused;
  f.big_batch = 2000;
  f.rows_le[0] = 16, f.rows_le[1] = 32, f.rows_le[2] = 64;
  f.lanes_small[0] = 8, f.lanes_small[1] = 16, f.lanes_small[2] = 8;
  f.lanes_big[0] = 4, f.lanes_big[1] = 4, f.lanes_big[2] = 8;
  f.lanes_beyond[0] = 8, f.lanes_beyond[1] = 4, f.lanes_beyond[2] = 4, f.lanes_beyond[3] = 8;
  f.threads_per_matrix = 256;
  // Column cap (decisions/0001-fused-column-cap.md): the fused kernel wins
  // up to 64 columns at every batch size; beyond, only in a window of counts.
  f.max_cols = 64;
  // H100, HSVD, 1000 matrices, fused against blocked: d 100^2 36.9 ms
  // against 53.0, s 128^2 50.1 against 42.2 (docs/perf/hsvd.md). d, c, z
  // with vectors fit the fused kernel up to about 118 columns.
  f.hyp_max_cols = 120;
  const int wide[4] = {64, 72, 76, 64}, window[4] = {72, 88, 88, 80};
  for (int p = 0; p < 4; ++p) f.wide_cols[p] = wide[p], f.window_cols[p] = window[p];
  f.beside_blocked = true; // (decisions/0015-side-stream-and-early-finish.md)

  // Register tier (docs/perf/tiny.md): max(m, n) up to which the tier (one
  // thread per matrix, or lanes from lanes_from) beat the fused kernel at
  // every measured batch of the band (square n = 2 ... 8, batches
  // 1 ... 10^6; s d c z). The lanes variant from the size where it beat
  // both others at both ends of the band (10^4 and 10^5 for the middle
  // band, 10^5 and 10^6 beyond); below 10^4 matrices it never won at a
  // batch of 1, so it stays off there.
  TinyTuning &y = t.tiny;
  y.batch_mid = 10000, y.batch_big = 100000;
  const int small[4] = {6, 3, 4, 3}, mid[4] = {8, 8, 8, 8}, big[4] = {8, 8, 8, 8};
  const int lanes_mid[4] = {8, 8, 7, 6}, lanes_big[4] = {8, 8, 7, 6};
  // Beyond 8 the lanes variant's wide instances (docs/perf/tiny-wide.md):
  // the sizes where they beat the fused kernel at batches 1, 100, 10^4 and
  // 10^5 (s 9 ... 32: 0.39-0.85x, one tie; d and c 9 ... 16: 0.50-0.97x;
  // d and c from 18, on the 32-lane instances at 255 registers: 1.2-1.4x).
  const int wide_from[4] = {9, 9, 9, 1}, wide_max[4] = {32, 16, 16, 0};
  for (int p = 0; p < 4; ++p) {
    y.max_dim_small[p] = small[p], y.max_dim_mid[p] = mid[p], y.max_dim[p] = big[p];
    y.lanes_from_small[p] = 9, y.lanes_from_mid[p] = lanes_mid[p], y.lanes_from[p] = lanes_big[p];
    y.wide_from[p] = wide_from[p], y.wide_max[p] = wide_max[p];
  }

  // Blocked path.
  BlockedTuning &b = t.blocked;
  // The shared-memory pair solvers lose 1.8-2.9x
  // (decisions/0009-pair-solvers-off.md).
  b.pair_solver = BSVD_PAIR_GRAM;
  // Eigensolver plans (decisions/0004-eigensolver-plan-thresholds.md): the
  // TLP thresholds.
  const long warp_full[4] = {28963, 28963, 370728, 370728};
  const long warp_ragged[4] = {62706, 92682, 370728, 370728};
  for (int p = 0; p < 4; ++p)
    b.tlp_warp_full[p] = warp_full[p], b.tlp_warp_ragged[p] = warp_ragged[p];
  b.tlp_block = 46341;
  b.lean = true;
  // Gram plans (decisions/0005-gram-kernel-plans.md).
  b.gram_tile4_min_pairs = 1024;
  b.gram_split_max_blocks = 1848; // two waves of tile-2 blocks: 132 SMs x 7
  b.gram_cublas_min_rows[3] = 512; // z only: cuBLAS wins from 512 rows
  b.stream_groups = 2; // (decisions/0006-two-stream-groups.md)

  // QR preprocessing (decisions/0007-qr-preprocessing-rule.md).
  QrTuning &q = t.qr;
  q.auto_ratio = 32;
  q.auto_min_rows = 1000;
  q.auto_max_cols = 32;
  q.auto_max_bytes = 384 * 1024;
  q.auto_max_cols_grid = 16;
  q.auto_apply_cols = 4;

  // Preconditioning (decisions/0008-preconditioning-cost-model.md): the cost
  // model fitted on d, taken by c and z; s never (its sweeps are cheaper).
  QrcpTuning &c = t.qrcp;
  c.cost0 = 0.403, c.cost_count = 0.0233, c.cost_width = -0.0473, c.max_cost = 0.10;
  c.auto_on[0] = false, c.auto_on[1] = c.auto_on[2] = c.auto_on[3] = true;
  c.throughput_step_cost = 1.0;

  // The Gram route under precondition = 0 (decisions/0022): from 200
  // matrices of 128^2 (d 1000 x 128^2: 32.2 -> 18.5 ms), ~25 of 256^2,
  // 4 of 512^2, one of 1024^2 and more; the test's limits separate the
  // families that lost (cluster1: stable rank of the cosines 1.01 against
  // 24-100 for random and noisy orthogonal matrices, 2.5-7.4 for graded;
  // cluster0: effective rank 1 against 5.6-11 for graded), and columns
  // orthogonal to ~100 single-precision units (NumPy on the families,
  // decision 0022).
  GramTuning &g = t.gram;
  g.auto_on[0] = g.auto_on[1] = g.auto_on[2] = g.auto_on[3] = true;
  g.min_cols = 128; // (below it unmeasured: 64^2 runs on the fused kernel)
  g.auto_min_work = 200.0 * 128 * 128 * 128;
  g.min_cos = 1e-5;
  g.min_srank = 2;
  g.min_rank = 3;
  g.sample = 32; // (the plain branch's cost: 32 Gram matrices of a shape's count)

  // One matrix across devices (docs/perf/multi-gpu.md, one large matrix):
  // off. Measured on 4 H100s, d 4096^2 took 18.0 s against 2.6 s on one
  // GPU (43 outer sweeps, pairs solved to convergence); with one inner
  // sweep it did not converge in 80 (the pairs' QRCP preconditioning, off
  // for capped solves since; not measured again). It runs only when
  // forced (BSVD_DIST_MIN_COLS).
  // Values only: the bidiagonal route on chip (decisions/
  // 0023-bidiagonal-values-route.md; docs/perf/bidiag.md) where it beat the
  // default by >= 15 % on the H100 (batches of 10^4 at 16^2 and 32^2, 10^3
  // from 64^2): d 32-96 columns (1.18-1.50x), s 64-160 (1.6-2.7x). Below,
  // the register tier and the fused kernel win; d from 128 and s at 32 the
  // Jacobi paths win or tie; c, z and the blocked regime are not measured.
  BidiagTuning &v = t.bidiag;
  v.on[0] = v.on[1] = true;
  v.min_cols[0] = 64, v.max_cols[0] = 160;
  v.min_cols[1] = 32, v.max_cols[1] = 96;

  t.dist.min_cols = 0;
  t.dist.pair_cols = 512;
  t.dist.inner_sweeps = 0;
  return t;
}

} // namespace

const Tuning &sm90_table() {
  static const Tuning sm90 = make_sm90();
  return sm90;
}

} // namespace bsvd::detail::plan
