// The planner (src/plan/plan.hpp, blocked_sweep.hpp) on a described GPU:
// which path each matrix takes, the parameters of each group, and the
// blocked path's per-sweep choices. Plain C++: the device is a description
// and the paths' capacities are the fake facts below, shaped like an H100's.
#include "plan/bidiag.hpp"
#include "plan/blocked_sweep.hpp"
#include "plan/plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>

using namespace bsvd::detail;
using namespace bsvd::detail::plan;

namespace {

size_t eb(char p) { return p == 's' ? 4 : p == 'z' ? 16 : 8; }

// Capacities of the shape of an H100's (227 KiB of shared memory per block).
class FakeFacts : public PathFacts {
public:
  static constexpr size_t kSmem = 227 * 1024;
  bool fused_fits(char p, int mw, int nw, bool vectors) const override {
    const size_t w = size_t(mw + 1) * nw, v = vectors ? size_t(nw + 1) * nw : 0;
    return (w + v) * eb(p) + 64 * size_t(nw) <= kSmem;
  }
  int blocked_max_nb(char p) const override { return p == 'z' ? 16 : 32; }
  bool pair_fits(char p, int mw, int nb) const override {
    return nb <= 16 && size_t(mw) * 32 * eb(p) <= kSmem;
  }
  int qrcp_cluster_blocks(char p, int mw, int nw) const override {
    return size_t(mw) * nw * eb(p) <= 16 * kSmem ? 4 : 0;
  }
  int tsqr_chunks(char, int mw, int nw) const override { return nw <= 32 ? (mw + 255) / 256 : 0; }
  int qr_apply_cols(char, int) const override { return 4; }
  bool bidiag_reaches(char p, int m, int n) const override {
    const size_t k = size_t(std::min(m, n));
    return (size_t(m | 1) * n + std::max(m, n) + 2 * k) * eb(p) + 256 + 32 * k <= kSmem ||
           bsvd::detail::plan::gebrd_panels(m, n, 32, eb(p), 0, kSmem) >= 0;
  }
};

DeviceDesc h100() {
  DeviceDesc d;
  d.id = 0;
  d.cc_major = 9;
  d.sm_count = 132;
  d.smem_optin = int(FakeFacts::kSmem);
  return d;
}

// The shapes of a uniform batch, and of matrices m[i] x n[i] (vectors).
Shapes uniform_shapes(char p, int count, int m, int n, bool vectors = true) {
  Shapes s;
  s.precision = p;
  s.vectors = vectors;
  s.count = count;
  s.dims.m = m;
  s.dims.n = n;
  return s;
}
Shapes sized_shapes(char p, const std::vector<int> &m, const std::vector<int> &n) {
  Shapes s;
  s.precision = p;
  s.vectors = true;
  s.count = int(m.size());
  s.dims.mv = m.data();
  s.dims.nv = n.data();
  return s;
}
Plan planned(const Shapes &s, const Config &cfg, const DeviceDesc &dev = h100()) {
  static const FakeFacts facts;
  return make_plan(s, cfg, dev, facts, tuning_table(9, 0));
}
Shapes hyperbolic(Shapes s) {
  s.hyperbolic = true;
  return s;
}

Plan plan_uniform(char p, int count, int m, int n, const Config &cfg = Config(),
                  const DeviceDesc &dev = h100(), bool vectors = true) {
  return planned(uniform_shapes(p, count, m, n, vectors), cfg, dev);
}
Plan plan_sizes(char p, const std::vector<int> &m, const std::vector<int> &n,
                const Config &cfg = Config()) {
  return planned(sized_shapes(p, m, n), cfg);
}
// The hyperbolic SVD's plans (Shapes::hyperbolic) of the same shapes.
Plan plan_hsvd(char p, const std::vector<int> &m, const std::vector<int> &n,
               const Config &cfg = Config()) {
  return planned(hyperbolic(sized_shapes(p, m, n)), cfg);
}
Plan plan_hsvd_uniform(char p, int count, int m, int n, const Config &cfg = Config()) {
  return planned(hyperbolic(uniform_shapes(p, count, m, n)), cfg);
}

std::vector<Route> routes(const Plan &p) {
  std::vector<Route> r(size_t(p.count), Route::kCpu);
  for (const Group &g : p.groups)
    for (int b : g.index) r[size_t(b)] = g.route;
  return r;
}

} // namespace

TEST(Plan, SmallMatricesTakeTheFusedKernel) {
  const Plan p = plan_uniform('d', 10000, 32, 32);
  ASSERT_EQ(p.groups.size(), 1u);
  const Group &g = p.groups[0];
  EXPECT_EQ(g.route, Route::kFused);
  EXPECT_EQ(g.index.size(), 10000u);
  ASSERT_EQ(g.fused.size(), 1u); // a uniform batch: one launch
  EXPECT_EQ(g.fused[0].members.size(), 10000u);
  EXPECT_EQ(g.fused[0].lanes, 4); // many matrices of <= 32 rows
  EXPECT_EQ(g.fused[0].mw_max, 32);
  EXPECT_FALSE(g.beside); // nothing iterates beside it
  EXPECT_EQ(p.fused_cols, 64);
}

TEST(Plan, LargeMatricesTakeTheBlockedPath) {
  // (100 matrices: below the Gram route's work, GramRouteByDefault)
  const Plan p = plan_uniform('d', 100, 128, 128);
  ASSERT_EQ(p.groups.size(), 1u);
  const Group &g = p.groups[0];
  EXPECT_EQ(g.route, Route::kBlocked);
  EXPECT_EQ(g.blocked.nb, 16);
  EXPECT_EQ(g.blocked.wr, 1);
  EXPECT_EQ(g.blocked.we, 1);
  for (int mode : g.blocked.mode) EXPECT_EQ(mode, BSVD_PAIR_GRAM);
  for (char c : g.blocked.cublas) EXPECT_FALSE(c); // cuBLAS only in z from 512 rows
  // The automatic preconditioning was weighed and is off for 100 matrices.
  EXPECT_TRUE(p.precondition_auto);
  EXPECT_FALSE(p.precondition);
  EXPECT_FALSE(p.gram_auto);
  EXPECT_NEAR(p.precondition_count, 100, 1e-9);
  EXPECT_GT(p.precondition_cost, 0.1);
  // z from 512 rows: Gram by cuBLAS for matrices of even full pairs.
  const Plan z = plan_uniform('z', 4, 512, 512);
  ASSERT_EQ(z.groups.size(), 1u);
  for (char c : z.groups[0].blocked.cublas) EXPECT_TRUE(c);
}

TEST(Plan, FewLargeMatricesArePreconditioned) {
  const Plan p = plan_uniform('d', 2, 256, 256);
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].route, Route::kQrcp);
  EXPECT_TRUE(p.precondition);
  EXPECT_TRUE(p.groups[0].qr.pivoted);
  EXPECT_FALSE(p.groups[0].qr.tsqr);
  EXPECT_EQ(p.groups[0].blocked.nb, 16);
  // never in s; always with precondition = 1, never with -1
  EXPECT_EQ(plan_uniform('s', 2, 256, 256).groups[0].route, Route::kBlocked);
  Config on, off;
  on.precondition = 1;
  off.precondition = -1;
  EXPECT_EQ(plan_uniform('s', 1000, 128, 128, on).groups[0].route, Route::kQrcp);
  const Plan o = plan_uniform('d', 2, 256, 256, off);
  EXPECT_EQ(o.groups[0].route, Route::kBlocked);
  EXPECT_FALSE(o.precondition_auto);
  // a matrix that no cluster holds keeps the whole call plain (700^2: below
  // the Gram route's work)
  EXPECT_EQ(plan_uniform('d', 1, 700, 700).groups[0].route, Route::kBlocked);
}

// precondition = 2: the blocked path's matrices take the Gram route (its
// BlockedPlan as the plain path's), in _async calls too; those of the fused
// kernel keep theirs (docs/design/gram.md).
TEST(Plan, GramPreconditioningTakesTheBlockedPathsMatrices) {
  Config g;
  g.precondition = 2;
  const Plan p = plan_uniform('d', 1000, 256, 256, g);
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].route, Route::kGram);
  EXPECT_TRUE(p.gram);
  EXPECT_FALSE(p.precondition);
  EXPECT_EQ(p.groups[0].blocked.nb, 16);
  EXPECT_EQ(p.groups[0].blocked.mode.size(), 1000u);
  EXPECT_EQ(plan_uniform('d', 100, 20, 20, g).groups[0].route, Route::kFused);
  Config a = g;
  a.exec = bsvd::detail::Exec::kAsync;
  const Plan q = plan_uniform('d', 1000, 256, 256, a);
  EXPECT_EQ(q.groups[0].route, Route::kGram);
  EXPECT_TRUE(q.gram);
}

// precondition = 0: the blocked path's shapes with work count mw nw^2 of
// 200 x 128^3 and more take the Gram route, its test deciding per group at
// run time (decisions/0022); the rest keep the QRCP rule; the fused kernel's
// and the register tier's matrices, the HSVD and forced settings are
// unchanged.
TEST(Plan, GramRouteByDefault) {
  const Plan p = plan_uniform('d', 1000, 128, 128);
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].route, Route::kGram);
  EXPECT_TRUE(p.gram_auto);
  EXPECT_FALSE(p.gram);
  EXPECT_EQ(p.groups[0].blocked.nb, 16);
  EXPECT_EQ(p.groups[0].blocked.mode.size(), 1000u);
  for (char c : {'s', 'c', 'z'})
    EXPECT_EQ(plan_uniform(c, 1000, 128, 128).groups[0].route, Route::kGram) << c;
  // the work limit: 200 matrices of 128^2, 25 of 256^2, 4 of 512^2, one of 1024^2
  EXPECT_EQ(plan_uniform('d', 200, 128, 128).groups[0].route, Route::kGram);
  EXPECT_EQ(plan_uniform('d', 199, 128, 128).groups[0].route, Route::kBlocked);
  EXPECT_EQ(plan_uniform('d', 25, 256, 256).groups[0].route, Route::kGram);
  EXPECT_NE(plan_uniform('d', 24, 256, 256).groups[0].route, Route::kGram);
  EXPECT_EQ(plan_uniform('d', 4, 512, 512).groups[0].route, Route::kGram);
  EXPECT_EQ(plan_uniform('d', 1, 1024, 1024).groups[0].route, Route::kGram);
  EXPECT_EQ(plan_uniform('d', 1, 4096, 2048).groups[0].route, Route::kGram);
  // from 128 columns (1000 of 80^2 or 127^2: the plain blocked path)
  EXPECT_EQ(plan_uniform('d', 1000, 127, 127).groups[0].route, Route::kBlocked);
  EXPECT_EQ(plan_uniform('d', 1000, 2000, 127).groups[0].route, Route::kBlocked);
  EXPECT_EQ(plan_uniform('d', 1, 2048, 4096).groups[0].route, Route::kGram); // wide: W = A^H
  // async calls too
  Config a;
  a.exec = bsvd::detail::Exec::kAsync;
  EXPECT_EQ(plan_uniform('d', 1000, 256, 256, a).groups[0].route, Route::kGram);
  // not for the fused kernel's matrices, nor the register tier's
  EXPECT_EQ(plan_uniform('d', 100000, 32, 32).groups[0].route, Route::kFused);
  EXPECT_NE(plan_uniform('d', 1000000, 4, 4).groups[0].route, Route::kGram);
  // forced settings and the HSVD keep theirs
  Config plain, qrcp;
  plain.precondition = -1;
  qrcp.precondition = 1;
  EXPECT_EQ(plan_uniform('d', 1000, 256, 256, plain).groups[0].route, Route::kBlocked);
  EXPECT_EQ(plan_uniform('d', 1000, 256, 256, qrcp).groups[0].route, Route::kQrcp);
  EXPECT_FALSE(plan_uniform('d', 1000, 256, 256, plain).gram_auto);
  EXPECT_NE(plan_hsvd_uniform('d', 1000, 256, 256).groups[0].route, Route::kGram);
  // the table's switch (BSVD_GRAM_AUTO=0)
  Tuning off = tuning_table(9, 0);
  for (bool &on : off.gram.auto_on) on = false;
  static const FakeFacts facts;
  EXPECT_EQ(
      make_plan(uniform_shapes('d', 1000, 256, 256), Config(), h100(), facts, off).groups[0].route,
      Route::kBlocked);
  // no GPU: the CPU
  DeviceDesc none;
  none.id = -1;
  EXPECT_EQ(plan_uniform('d', 1000, 256, 256, Config(), none).groups[0].route, Route::kCpu);
}

// A variable-size batch: the work is counted per working shape (mw, nw),
// wide and tall alike; shapes below the limit keep the plain routing.
TEST(Plan, GramRouteCountsWorkPerShape) {
  std::vector<int> m, n;
  for (int i = 0; i < 150; ++i) { // 150 of 128^2, 100 of their transposes' shape
    m.push_back(160);
    n.push_back(128);
  }
  for (int i = 0; i < 100; ++i) {
    m.push_back(128);
    n.push_back(160);
  }
  m.push_back(200); // one 200 x 150
  n.push_back(150);
  m.push_back(20); // one for the fused kernel
  n.push_back(20);
  const std::vector<Route> r = routes(plan_sizes('d', m, n));
  for (int i = 0; i < 250; ++i) ASSERT_EQ(r[size_t(i)], Route::kGram) << i;
  EXPECT_NE(r[250], Route::kGram);
  EXPECT_EQ(r[251], Route::kFused);
  // 150 alone are below the limit
  const std::vector<Route> q = routes(plan_sizes('d', std::vector<int>(m.begin(), m.begin() + 150),
                                                 std::vector<int>(n.begin(), n.begin() + 150)));
  EXPECT_NE(q[0], Route::kGram);
}

TEST(Plan, TallMatricesTakeTheQrFrontEnd) {
  const Plan p = plan_uniform('d', 1000, 2000, 16);
  ASSERT_EQ(p.groups.size(), 1u);
  const Group &g = p.groups[0];
  EXPECT_EQ(g.route, Route::kQr);
  EXPECT_TRUE(g.qr.tsqr); // every matrix has 8 chunks
  EXPECT_FALSE(g.qr.pivoted);
  ASSERT_EQ(g.fused.size(), 1u); // the R factors, 16 x 16, in one launch
  EXPECT_EQ(g.fused[0].mw_max, 16);
  Config never;
  never.qr = -1;
  EXPECT_NE(plan_uniform('d', 1000, 2000, 16, never).groups[0].route, Route::kQr);
  // wide matrices too (A^H)
  EXPECT_EQ(plan_uniform('d', 10, 16, 2000).groups[0].route, Route::kQr);
  // not tall enough
  EXPECT_EQ(plan_uniform('d', 10, 300, 16).groups[0].route, Route::kFused);
}

TEST(Plan, MixedBatchRunsFusedAndQrBesideTheBlockedPath) {
  const std::vector<int> m = {8, 0, 130, 3000, 5, 200};
  const std::vector<int> n = {8, 5, 130, 16, 5, 150};
  const Plan p = plan_sizes('d', m, n);
  const std::vector<Route> r = routes(p);
  EXPECT_EQ(r[0], Route::kFused);
  EXPECT_EQ(r[1], Route::kFused); // empty: the fused kernel writes its info
  EXPECT_EQ(r[3], Route::kQr);
  EXPECT_EQ(r[4], Route::kFused);
  // 130^2 and 200 x 150: few large matrices, preconditioned by the rule
  EXPECT_EQ(r[2], r[5]);
  EXPECT_TRUE(r[2] == Route::kQrcp || r[2] == Route::kBlocked);
  const Group *f = p.find(Route::kFused), *q = p.find(Route::kQr);
  ASSERT_TRUE(f && q);
  EXPECT_TRUE(f->beside);
  EXPECT_TRUE(q->beside);
  // groups in enqueue order: fused, qr, then the iterating paths
  EXPECT_EQ(p.groups[0].route, Route::kFused);
  EXPECT_EQ(p.groups[1].route, Route::kQr);
  EXPECT_EQ(f->index, (std::vector<int>{0, 1, 4}));
  Overrides o;
  o.fused_beside = Force::kOff;
  Shapes s;
  s.precision = 'd';
  s.vectors = true;
  s.count = int(m.size());
  s.dims.mv = m.data();
  s.dims.nv = n.data();
  const FakeFacts facts;
  const Plan serial = make_plan(s, Config(), h100(), facts, with_overrides(tuning_table(9, 0), o));
  EXPECT_FALSE(serial.find(Route::kFused)->beside);
}

TEST(Plan, VariableSizesSplitTheFusedLaunchByItsEnvelope) {
  // Each fits the fused kernel; 900 rows with 110 columns do not.
  Config unblocked;
  unblocked.variant = BSVD_VARIANT_UNBLOCKED;
  const Plan p = plan_sizes('d', {900, 110, 8}, {17, 110, 8}, unblocked);
  const Group *f = p.find(Route::kFused);
  ASSERT_TRUE(f);
  ASSERT_EQ(f->index.size(), 3u);
  ASSERT_EQ(f->fused.size(), 2u);
  // ordered by (nw, mw): 8^2 and 900 x 17 together, 110^2 alone
  EXPECT_EQ(f->fused[0].members, (std::vector<int>{2, 0}));
  EXPECT_EQ(f->fused[0].mw_max, 900);
  EXPECT_EQ(f->fused[0].nw_max, 17);
  EXPECT_EQ(f->fused[1].members, (std::vector<int>{1}));
}

TEST(Plan, ColumnCapWindowForFewMatrices) {
  // 100 matrices of 80^2 d: 3/4 to 1 SM's worth -> the fused kernel up to 88
  const Plan p = plan_uniform('d', 100, 80, 80);
  EXPECT_EQ(p.fused_cols, 88);
  EXPECT_EQ(p.groups[0].route, Route::kFused);
  // 1000 of them: the blocked path
  EXPECT_EQ(plan_uniform('d', 1000, 80, 80).groups[0].route, Route::kBlocked);
  // variant blocked / unblocked force the path
  Config blk, unb;
  blk.variant = BSVD_VARIANT_BLOCKED;
  unb.variant = BSVD_VARIANT_UNBLOCKED;
  EXPECT_EQ(plan_uniform('d', 10, 32, 32, blk).groups[0].route, Route::kBlocked);
  EXPECT_EQ(plan_uniform('d', 1000, 100, 100, unb).groups[0].route, Route::kFused);
  EXPECT_EQ(plan_uniform('d', 10, 300, 300, unb).groups[0].route, Route::kCpu);
}

TEST(Plan, WhatNoGpuPathTakesRunsOnTheCpu) {
  Config oe;
  oe.ordering = BSVD_ORDERING_ODD_EVEN;
  // the fused kernel runs odd-even, the blocked path does not
  EXPECT_EQ(plan_uniform('d', 10, 32, 32, oe).groups[0].route, Route::kFused);
  EXPECT_EQ(plan_uniform('d', 10, 300, 300, oe).groups[0].route, Route::kCpu);
  // block widths beyond the compiled instances
  Config wide;
  wide.block_size = 24;
  wide.precondition = -1;
  const Plan d = plan_uniform('d', 10, 300, 300, wide);
  EXPECT_EQ(d.groups[0].route, Route::kBlocked);
  EXPECT_EQ(d.groups[0].blocked.nb, 24);
  for (int mode : d.groups[0].blocked.mode)
    EXPECT_EQ(mode, BSVD_PAIR_GRAM); // pair kernels: nb <= 16
  EXPECT_EQ(plan_uniform('z', 10, 300, 300, wide).groups[0].route, Route::kCpu);
  // no GPU: everything but the empty matrices
  DeviceDesc none;
  const Plan c = plan_uniform('d', 3, 32, 32, Config(), none);
  EXPECT_EQ(c.groups[0].route, Route::kCpu);
  const Plan e = plan_uniform('d', 3, 0, 32, Config(), none);
  EXPECT_EQ(e.groups[0].route, Route::kFused);
}

TEST(Plan, PairSolversAndTwoLevelOrdering) {
  Config cfg;
  cfg.variant = BSVD_VARIANT_BLOCKED;
  cfg.pair_solver = BSVD_PAIR_SVD_SM;
  cfg.wcycle_blocks = 2;
  cfg.wcycle_sweeps = 3;
  cfg.precondition = -1;
  const Plan p = plan_uniform('d', 4, 200, 200, cfg);
  const Group &g = p.groups[0];
  EXPECT_EQ(g.blocked.wr, 2);
  EXPECT_EQ(g.blocked.we, 3);
  for (int mode : g.blocked.mode) EXPECT_EQ(mode, BSVD_PAIR_SVD_SM);
  // a pair that does not fit shared memory takes the Gram path
  const Plan tall = plan_uniform('d', 1, 4000, 100, cfg);
  EXPECT_EQ(tall.groups[0].blocked.mode[0], BSVD_PAIR_GRAM);
  // preconditioned, the pair solver runs on R^H (100 x 100), which fits
  cfg.precondition = 1;
  const Plan pre = plan_uniform('d', 1, 4000, 100, cfg);
  EXPECT_EQ(pre.groups[0].route, Route::kQrcp);
  EXPECT_EQ(pre.groups[0].blocked.mode[0], BSVD_PAIR_SVD_SM);
}

// The hyperbolic SVD beyond the fused kernel: every matrix whose pair fits
// shared memory takes the blocked path with the one-sided pair solver (the
// one with hyperbolic instances) and the one-level ordering, whatever the
// call asks; never the register tier, QRCP or the Gram preconditioning (J
// would be permuted or V0 not J-orthogonal). A matrix whose pair does not
// fit, or a block width beyond the pair kernels, goes to the CPU. The SVD's
// plan of the same shapes is the SVD's.
TEST(Plan, HyperbolicTakesTheBlockedPairSolver) {
  Config asks;
  asks.pair_solver = BSVD_PAIR_GRAM;
  asks.wcycle_blocks = 2;
  asks.precondition = 1;
  for (auto [prec, n] : {std::pair{'d', 128}, {'d', 256}, {'s', 128}, {'s', 256}})
    for (const Config &cfg : {Config(), asks}) {
      SCOPED_TRACE(testing::Message() << prec << " " << n);
      const Plan p = plan_hsvd_uniform(prec, 1000, n, n, cfg);
      EXPECT_TRUE(p.hyperbolic);
      EXPECT_FALSE(p.precondition);
      EXPECT_FALSE(p.gram);
      ASSERT_EQ(p.groups.size(), 1u);
      const Group &g = p.groups[0];
      EXPECT_EQ(g.route, Route::kBlocked);
      EXPECT_EQ(g.index.size(), 1000u);
      EXPECT_EQ(g.blocked.nb, 16);
      EXPECT_EQ(g.blocked.wr, 1);
      EXPECT_EQ(g.blocked.we, 1);
      ASSERT_EQ(g.blocked.mode.size(), 1000u);
      for (int mode : g.blocked.mode) EXPECT_EQ(mode, BSVD_PAIR_SVD_SM);
      for (char c : g.blocked.cublas) EXPECT_FALSE(c);
    }
  // The SVD of the same shapes: the Gram route (GramRouteByDefault) with
  // the Gram pair solver, and with the call's requests, what it asks for.
  for (int n : {128, 256}) {
    const Plan s = plan_uniform('d', 1000, n, n);
    EXPECT_FALSE(s.hyperbolic);
    ASSERT_EQ(s.groups.size(), 1u);
    EXPECT_EQ(s.groups[0].route, Route::kGram);
    for (int mode : s.groups[0].blocked.mode) EXPECT_EQ(mode, BSVD_PAIR_GRAM);
    EXPECT_TRUE(s.precondition_auto);
    const Plan a = plan_uniform('d', 1000, n, n, asks);
    EXPECT_TRUE(a.precondition);
    ASSERT_EQ(a.groups.size(), 1u);
    EXPECT_EQ(a.groups[0].route, Route::kQrcp);
    EXPECT_EQ(a.groups[0].blocked.wr, 2);
  }
  // Small matrices keep the fused kernel (never the register tier); a pair
  // beyond shared memory (d: 1000 rows of 32 columns) goes to the CPU.
  const Plan mixed = plan_hsvd('d', {8, 20, 128, 1000, 200}, {8, 20, 128, 1000, 160});
  EXPECT_EQ(routes(mixed), (std::vector<Route>{Route::kFused, Route::kFused, Route::kBlocked,
                                               Route::kCpu, Route::kBlocked}));
  for (const Group &g : mixed.groups) {
    EXPECT_NE(g.route, Route::kTiny);
    if (g.route == Route::kBlocked)
      for (int mode : g.blocked.mode) EXPECT_EQ(mode, BSVD_PAIR_SVD_SM);
  }
  // The fused kernel up to the HSVD's own column cap, beyond the SVD's
  // (the HSVD's blocked path is the slower one there).
  EXPECT_EQ(plan_uniform('d', 1000, 100, 100).groups[0].route, Route::kBlocked); // (the SVD's)
  EXPECT_EQ(plan_hsvd_uniform('d', 1000, 100, 100).groups[0].route, Route::kFused);
  EXPECT_EQ(plan_hsvd_uniform('s', 1000, 112, 112).groups[0].route, Route::kFused);
  // A tall one whose pair does not fit but whose R does: the QR front end
  // (G = Q R keeps G's columns), or the CPU when the call turns it off.
  EXPECT_EQ(plan_hsvd_uniform('z', 10, 5000, 24).groups[0].route, Route::kQr);
  Config no_qr;
  no_qr.qr = -1;
  EXPECT_EQ(plan_hsvd_uniform('z', 10, 5000, 24, no_qr).groups[0].route, Route::kCpu);
  EXPECT_EQ(plan_uniform('d', 100000, 8, 8).groups[0].route, Route::kTiny); // (the SVD's)
  EXPECT_EQ(plan_hsvd_uniform('d', 100000, 8, 8).groups[0].route, Route::kFused);
  Config wide;
  wide.block_size = 24;
  EXPECT_EQ(plan_hsvd_uniform('d', 10, 300, 300, wide).groups[0].route, Route::kCpu);
  // variant unblocked: the fused kernel or the CPU, as before
  Config unb;
  unb.variant = BSVD_VARIANT_UNBLOCKED;
  EXPECT_EQ(plan_hsvd_uniform('d', 10, 128, 128, unb).groups[0].route, Route::kCpu);
}

TEST(Plan, ExplainNamesEveryGroup) {
  const Plan p = plan_sizes('d', {8, 3000, 300, 400}, {8, 16, 300, 400});
  const std::string text = explain(p);
  // one line per group, by the path names that opts.path reports
  for (const char *name : {"cuda-fused", "cuda-qr", "cuda-qrcp"})
    EXPECT_NE(text.find(name), std::string::npos) << name << " in\n" << text;
  EXPECT_NE(text.find("sm_90"), std::string::npos) << text;
  EXPECT_NE(text.find("TSQR"), std::string::npos) << text;
  EXPECT_NE(text.find("preconditioning auto on"), std::string::npos) << text;
}

// The blocked path's per-sweep choices.
TEST(BlockedSweep, PlansFollowTheTuning) {
  const Tuning &t = tuning_table(9, 0);
  SweepCounts c;
  c.lean_kernel = true;
  c.gram_pairs = 4000; // 1000 x 128^2: 4 pairs per matrix
  c.own_pairs.assign(1000, 4);
  c.own_slots = 4000;
  c.own_segs = 1;
  c.split_max_tiles = 4096;
  SweepChoice s = plan_sweep(t, 'd', c);
  EXPECT_EQ(s.evd_threads, 32);
  EXPECT_TRUE(s.lean);
  EXPECT_EQ(s.gram, GramPlan::kMma);
  EXPECT_EQ(s.split, 500); // half the pairs in the first group
  c.one_inner = false; // two inner sweeps: the warp kernel
  EXPECT_FALSE(plan_sweep(t, 'd', c).lean);
  c.one_inner = true;
  c.full = false; // a ragged step: 4000 pairs is still the warp plan, not lean
  s = plan_sweep(t, 'd', c);
  EXPECT_EQ(s.evd_threads, 32);
  EXPECT_FALSE(s.lean);
  c.timer_on = true; // stage timers: one stream
  EXPECT_EQ(plan_sweep(t, 'd', c).split, 0);
  // a tail of two small matrices: block plan, tile 2 or split, one group each side
  SweepCounts tail;
  tail.gram_pairs = 8;
  tail.own_pairs = {4, 4};
  tail.own_slots = 8;
  tail.own_segs = 4;
  tail.split_max_tiles = 4096;
  s = plan_sweep(t, 'd', tail);
  EXPECT_EQ(s.evd_threads, 256);
  EXPECT_EQ(s.gram, GramPlan::kSplit);
  EXPECT_EQ(s.split, 1);
  // the wide instance: one eigensolver plan, its own Gram plans
  SweepCounts w = c;
  w.wide = true;
  w.timer_on = false;
  s = plan_sweep(t, 's', w);
  EXPECT_EQ(s.evd_threads, 256);
  EXPECT_EQ(s.gram, GramPlan::kTile4);
  Overrides o;
  o.stream_groups = 1;
  o.evd_threads = 128;
  s = plan_sweep(with_overrides(t, o), 'd', c);
  EXPECT_EQ(s.evd_threads, 128);
  EXPECT_EQ(s.split, 0);
}

// The HBJ orderings run on the fused kernel (its tables); the blocked path
// is round-robin only, so the larger matrices take the CPU twin.
TEST(Plan, TableOrderingsTakeTheFusedKernel) {
  for (bsvd_ordering_t ord : {BSVD_ORDERING_ROW_PARALLEL, BSVD_ORDERING_COLUMN_PARALLEL}) {
    Config c;
    c.ordering = ord;
    EXPECT_EQ(plan_uniform('d', 10, 64, 64, c).groups[0].route, Route::kFused);
    EXPECT_EQ(plan_uniform('d', 10, 300, 300, c).groups[0].route, Route::kCpu);
  }
}

TEST(Plan, TinyMatricesTakeTheRegisterTier) {
  EXPECT_EQ(plan_uniform('d', 1000000, 3, 3).groups[0].route, Route::kTiny);
  EXPECT_EQ(plan_uniform('d', 1000000, 8, 2).groups[0].route, Route::kTiny);
  EXPECT_EQ(plan_uniform('d', 200000, 8, 8).groups[0].route, Route::kTiny);
  EXPECT_EQ(plan_uniform('z', 200000, 9, 9).groups[0].route, Route::kFused);
  // few d matrices of 4 ... 8: the fused kernel stayed faster (docs/perf/tiny.md)
  EXPECT_EQ(plan_uniform('d', 10, 8, 8).groups[0].route, Route::kFused);
  EXPECT_EQ(plan_uniform('d', 10, 3, 3).groups[0].route, Route::kTiny);
  EXPECT_EQ(plan_uniform('s', 10, 6, 6).groups[0].route, Route::kTiny);
  // an explicit variant or another ordering keeps the fused kernel
  Config unb;
  unb.variant = BSVD_VARIANT_UNBLOCKED;
  EXPECT_EQ(plan_uniform('d', 1000000, 3, 3, unb).groups[0].route, Route::kFused);
  Config oe;
  oe.ordering = BSVD_ORDERING_ODD_EVEN;
  EXPECT_EQ(plan_uniform('d', 1000000, 3, 3, oe).groups[0].route, Route::kFused);
  // empty matrices still go to the fused kernel (it writes their info)
  EXPECT_EQ(plan_uniform('d', 1000000, 0, 3).groups[0].route, Route::kFused);
}

// Beyond 8, the lanes variant's wide range (tuning_sm90.cpp): s to 32, d and
// c to 16, at every batch; z stays on the fused kernel; a size between the
// cap and the range (s 7 at few matrices) keeps the fused kernel.
TEST(Plan, WideMatricesTakeTheLanesInstances) {
  for (long count : {1L, 100L, 10000L, 1000000L}) {
    SCOPED_TRACE(count);
    EXPECT_EQ(plan_uniform('s', count, 32, 32).groups[0].route, Route::kTiny);
    EXPECT_EQ(plan_uniform('s', count, 9, 30).groups[0].route, Route::kTiny);
    EXPECT_EQ(plan_uniform('s', count, 33, 33).groups[0].route, Route::kFused);
    EXPECT_EQ(plan_uniform('d', count, 16, 16).groups[0].route, Route::kTiny);
    EXPECT_EQ(plan_uniform('c', count, 12, 9).groups[0].route, Route::kTiny);
    EXPECT_EQ(plan_uniform('d', count, 17, 17).groups[0].route, Route::kFused);
    EXPECT_EQ(plan_uniform('z', count, 12, 12).groups[0].route, Route::kFused);
  }
  EXPECT_EQ(plan_uniform('s', 10, 7, 7).groups[0].route, Route::kFused);
  const Tuning &t = tuning_table(9, 0);
  EXPECT_EQ(tiny_reach(t, 's', 10).max, kTinyInstanceMax[0]);
  // A forced cap is one range: every size up to it, clamped to the reach.
  Tuning f = t;
  f.tiny.max_dim_forced = 32;
  EXPECT_TRUE(tiny_reach(f, 'd', 10).takes(20));
  EXPECT_FALSE(tiny_reach(f, 'z', 10).takes(9));
  f.tiny.max_dim_forced = 0;
  EXPECT_FALSE(tiny_reach(f, 's', 10).takes(16));
}

// The values-only bidiagonal route (decision 0023): off in the table until
// measured; on (BSVD_BIDIAG=1's tuning), values-only calls of every size
// the on-chip GEBRD holds take it under the default precondition and
// variant, and nothing else does.
TEST(Plan, BidiagRouteForValuesOnly) {
  static const FakeFacts facts;
  const auto values = [](char p, int count, int m, int n, const Tuning &t,
                         const Config &cfg = Config()) {
    return make_plan(uniform_shapes(p, count, m, n, false), cfg, h100(), facts, t);
  };
  // The sm_90 table: s 64-160 columns, d 32-96, c and z never.
  const Tuning table = tuning_table(9, 0);
  EXPECT_EQ(values('s', 1000, 128, 128, table).groups[0].route, Route::kBidiag);
  EXPECT_EQ(values('s', 1000, 160, 64, table).groups[0].route, Route::kBidiag);
  EXPECT_NE(values('s', 10000, 32, 32, table).groups[0].route, Route::kBidiag);
  EXPECT_EQ(values('d', 1000, 64, 64, table).groups[0].route, Route::kBidiag);
  EXPECT_EQ(values('d', 10000, 32, 32, table).groups[0].route, Route::kBidiag);
  EXPECT_NE(values('d', 1000, 128, 128, table).groups[0].route, Route::kBidiag);
  EXPECT_NE(values('d', 10000, 16, 16, table).groups[0].route, Route::kBidiag);
  for (char p : {'c', 'z'})
    EXPECT_NE(values(p, 1000, 64, 64, table).groups[0].route, Route::kBidiag) << p;
  Overrides o;
  o.bidiag = Force::kOn;
  const Tuning on = with_overrides(table, o);
  for (char p : {'s', 'd', 'c', 'z'}) {
    const Plan pl = values(p, 1000, 128, 100, on);
    ASSERT_EQ(pl.groups.size(), 1u) << p;
    EXPECT_EQ(pl.groups[0].route, Route::kBidiag) << p;
    EXPECT_EQ(pl.groups[0].index.size(), 1000u) << p;
  }
  EXPECT_EQ(values('d', 10, 4, 4, on).groups[0].route, Route::kBidiag); // beats the tiny tier
  EXPECT_EQ(values('d', 10, 60, 200, on).groups[0].route, Route::kBidiag); // wide
  EXPECT_EQ(values('d', 10, 300, 300, on).groups[0].route, Route::kBidiag); // blocked panels
  EXPECT_EQ(values('z', 10, 160, 160, on).groups[0].route, Route::kBidiag);
  EXPECT_NE(values('d', 10, 20000, 40, on).groups[0].route, Route::kBidiag); // no panel reaches
  EXPECT_NE(plan_uniform('d', 1000, 128, 128).groups[0].route, Route::kBidiag); // vectors
  Config plain, qrcp, blocked;
  plain.precondition = -1;
  qrcp.precondition = 1;
  blocked.variant = BSVD_VARIANT_BLOCKED;
  for (const Config &c : {plain, qrcp, blocked})
    EXPECT_NE(values('d', 1000, 128, 128, on, c).groups[0].route, Route::kBidiag);
  Shapes h = hyperbolic(uniform_shapes('d', 1000, 128, 128, false));
  EXPECT_NE(make_plan(h, Config(), h100(), facts, on).groups[0].route, Route::kBidiag);
  // a variable-size batch: those it reaches, beside the others' routes
  std::vector<int> m{64, 20000, 0, 100}, n{64, 40, 5, 30};
  Shapes vs = sized_shapes('d', m, n);
  vs.vectors = false;
  const std::vector<Route> r = routes(make_plan(vs, Config(), h100(), facts, on));
  EXPECT_EQ(r[0], Route::kBidiag);
  EXPECT_NE(r[1], Route::kBidiag);
  EXPECT_EQ(r[2], Route::kFused); // empty: the fused kernel writes its info
  EXPECT_EQ(r[3], Route::kBidiag);
  EXPECT_NE(explain(make_plan(vs, Config(), h100(), facts, on)).find("cuda-bidiag"),
            std::string::npos);
}

// GEBRD's panel count (plan/bidiag.hpp): the fewest 32-column panels
// after which the trailing matrix fits, none for a matrix that fits, -1
// where no count does; never a panel without a trailing matrix.
TEST(Plan, GebrdPanels) {
  using bsvd::detail::plan::gebrd_panels;
  using bsvd::detail::plan::gebrd_smem_bytes;
  const size_t smem = 227 * 1024;
  EXPECT_EQ(gebrd_panels(0, 5, 32, 8, 0, smem), 0);
  EXPECT_EQ(gebrd_panels(100, 100, 32, 8, 0, smem), 0);
  for (auto [m, n, e] : std::vector<std::array<int, 3>>{{256, 256, 8},
                                                        {512, 512, 8},
                                                        {400, 300, 8},
                                                        {300, 400, 16},
                                                        {1000, 200, 4},
                                                        {160, 160, 16}}) {
    const int p = gebrd_panels(m, n, 32, size_t(e), 0, smem);
    ASSERT_GT(p, 0) << m << "x" << n;
    EXPECT_LT(32 * p, std::min(m, n));
    EXPECT_LE(gebrd_smem_bytes(m - 32 * p, n - 32 * p, size_t(e)), smem);
    EXPECT_GT(gebrd_smem_bytes(m - 32 * (p - 1), n - 32 * (p - 1), size_t(e)), smem);
  }
  EXPECT_EQ(gebrd_panels(256, 256, 32, 8, 0, smem), 3); // 160^2 on chip
  EXPECT_EQ(gebrd_panels(20000, 40, 32, 8, 0, smem), -1); // 8 columns of 19968 rows remain
  EXPECT_EQ(gebrd_panels(40, 20000, 32, 8, 0, smem), -1);
  // extra bytes per min(m, n) entry count against the limit too
  EXPECT_EQ(gebrd_panels(160, 160, 32, 8, 0, smem), 0);
  EXPECT_EQ(gebrd_panels(160, 160, 32, 8, 512, smem), 1);
}
