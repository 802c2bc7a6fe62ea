// The tuning table's rules (src/plan/tuning.hpp) against the measurements
// they were fitted to, and the overrides that force them (plain C++, no GPU).
#include "plan/tuning.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

using namespace bsvd::detail;
using namespace bsvd::detail::plan;

namespace {

const Tuning &sm90() { return tuning_table(9, 0); }
Tuning forced(const Overrides &o) { return with_overrides(sm90(), o); }

} // namespace

// The eigensolver plan rule picks, for every batch of the
// measurement (H100, uniform 256^2 batches of 1 ... 1024 matrices, 8
// pairs each, full pairs;
// docs/design/decisions/0004-eigensolver-plan-thresholds.md), the plan that
// was fastest there.
TEST(Tuning, EvdPlanRuleMatchesTheMeasuredBestPlans) {
  const Tuning &t = sm90();
  struct Row {
    long pairs;
    int s, d, c, z;
  };
  const Row best[] = {{8, 256, 256, 256, 256},   {64, 256, 256, 256, 256},
                      {256, 256, 256, 256, 256}, {512, 128, 128, 128, 128},
                      {1024, 32, 32, 128, 128},  {2048, 32, 32, 128, 128},
                      {8192, 32, 32, 128, 128}};
  for (const Row &r : best) {
    SCOPED_TRACE(r.pairs);
    EXPECT_EQ(evd_threads(t, 's', r.pairs, true), r.s);
    EXPECT_EQ(evd_threads(t, 'd', r.pairs, true), r.d);
    EXPECT_EQ(evd_threads(t, 'c', r.pairs, true), r.c);
    EXPECT_EQ(evd_threads(t, 'z', r.pairs, true), r.z);
  }
  // The crossovers sit between the measured points: 128 threads from 363
  // pairs (tau_block 46341), the warp plan from 906 on full steps (s, d:
  // tau_warp 28963; the whole call at 800 full pairs ran faster on the
  // 128 plan).
  EXPECT_EQ(evd_threads(t, 'd', 362, true), 256);
  EXPECT_EQ(evd_threads(t, 'd', 363, true), 128);
  EXPECT_EQ(evd_threads(t, 'd', 800, true), 128);
  EXPECT_EQ(evd_threads(t, 'd', 905, true), 128);
  EXPECT_EQ(evd_threads(t, 'd', 906, true), 32);
  EXPECT_EQ(evd_threads(t, 's', 1200, true), 32);
}

// Steps with a ragged pair (H200 and H100: d and s random, the whole call
// with each plan forced): in d the 128 plan won at 800 ... 2800 pairs
// (200 ... 600 x 100^2, 200 and 400 x 200^2), which the full-step
// threshold would give to the warp plan.
TEST(Tuning, EvdPlanRuleForRaggedSteps) {
  const Tuning &t = sm90();
  for (long pairs : {800L, 1200L, 1400L, 1600L, 2400L, 2800L}) {
    SCOPED_TRACE(pairs);
    EXPECT_EQ(evd_threads(t, 'd', pairs, false), 128);
  }
  EXPECT_EQ(evd_threads(t, 'd', 2896, false), 128);
  EXPECT_EQ(evd_threads(t, 'd', 2897, false), 32); // tau_warp 92682
  // s: the 128 plan at 800 pairs, a tie at 1600, the warp plan at 2400 (H100).
  EXPECT_EQ(evd_threads(t, 's', 800, false), 128);
  EXPECT_EQ(evd_threads(t, 's', 1959, false), 128);
  EXPECT_EQ(evd_threads(t, 's', 1960, false), 32); // tau_warp 62706
  EXPECT_EQ(evd_threads(t, 's', 2400, false), 32);
  // The 128/256 crossover and the complex thresholds do not depend on it.
  EXPECT_EQ(evd_threads(t, 'd', 362, false), 256);
  EXPECT_EQ(evd_threads(t, 'd', 363, false), 128);
  EXPECT_EQ(evd_threads(t, 'z', 8192, false), 128);
  EXPECT_EQ(tlp_warp(t, 'z', false), tlp_warp(t, 'z', true));
  // Which steps are full: every matrix in two or more nb-wide blocks.
  EXPECT_TRUE(full_pairs(128, 16));
  EXPECT_TRUE(full_pairs(32, 16));
  EXPECT_FALSE(full_pairs(16, 16)); // one block: a pair of width nb
  EXPECT_FALSE(full_pairs(100, 16));
  EXPECT_FALSE(full_pairs(200, 16));
  EXPECT_TRUE(full_pairs(200, 8));
}

TEST(Tuning, EvdPlanOverrides) {
  Overrides o;
  o.tlp_block = 1000000; // 128 threads only from 7813 pairs
  EXPECT_EQ(evd_threads(forced(o), 'z', 512, true), 256);
  o.tlp_warp = 1024; // the warp plan from 32 pairs, full or ragged
  EXPECT_EQ(evd_threads(forced(o), 'z', 32, true), 32);
  EXPECT_EQ(evd_threads(forced(o), 'd', 32, false), 32);
  EXPECT_EQ(evd_threads(forced(o), 'z', 31, true), 256);
  o.evd_threads = 128;
  EXPECT_EQ(evd_threads(forced(o), 'd', 1, true), 128);
  o.evd_threads = 64; // not a plan: ignored
  EXPECT_EQ(evd_threads(forced(o), 'z', 31, true), 256);
  EXPECT_EQ(tlp_warp(sm90(), 'd', true), 28963);
  EXPECT_EQ(tlp_warp(sm90(), 'd', false), 92682);
}

// The fused kernel's column cap per call (fused_call_cols) against the
// grid it was fitted to (H100, 132 SMs;
// docs/design/decisions/0001-fused-column-cap.md): best blocked plan / fused
// at 8 ... 264 matrices of 68 ... 88 columns. Every case the rule sends to
// the fused kernel ran faster there; the losing ones stay blocked.
TEST(Tuning, FusedColumnCapPerCall) {
  const Tuning &t = sm90();
  const int sms = 132;
  const int kFusedMaxCols = t.fused.max_cols;
  EXPECT_EQ(kFusedMaxCols, 64);
  // (prec, columns, count, measured blocked / fused)
  struct Row {
    char p;
    int n, count;
    double ratio;
  };
  const Row grid[] = {
      {'d', 68, 8, 1.18},   {'d', 68, 264, 1.54}, {'d', 72, 8, 1.06},   {'d', 72, 200, 1.38},
      {'d', 72, 264, 1.48}, {'d', 76, 8, 0.91},   {'d', 76, 64, 1.04},  {'d', 76, 100, 1.10},
      {'d', 76, 132, 1.28}, {'d', 76, 200, 1.11}, {'d', 80, 8, 0.82},   {'d', 80, 64, 0.95},
      {'d', 80, 100, 1.01}, {'d', 80, 132, 1.15}, {'d', 80, 200, 0.90}, {'d', 88, 32, 0.73},
      {'d', 88, 100, 1.07}, {'d', 88, 132, 1.11}, {'d', 88, 200, 0.75}, {'c', 76, 8, 1.07},
      {'c', 76, 264, 1.54}, {'c', 80, 8, 0.92},   {'c', 80, 100, 1.09}, {'c', 88, 64, 0.96},
      {'c', 88, 132, 1.29}, {'c', 88, 200, 0.90}, {'z', 72, 8, 0.92},   {'z', 72, 100, 1.34},
      {'z', 80, 8, 0.74},   {'z', 80, 132, 1.28}, {'z', 80, 200, 0.89}, {'s', 68, 8, 0.89},
      {'s', 72, 100, 1.04}, {'s', 72, 132, 1.22}, {'s', 76, 100, 0.95}, {'s', 80, 100, 0.92},
      {'s', 88, 132, 0.87}};
  for (const Row &r : grid) {
    SCOPED_TRACE(testing::Message() << r.p << " " << r.count << " x " << r.n << "^2");
    const bool w = r.n <= fused_wide_cols(t, r.p), x = r.n <= fused_window_cols(t, r.p);
    const bool fused = r.n <= fused_call_cols(t, r.p, w ? r.count : 0, x ? r.count : 0, sms);
    if (fused) EXPECT_GT(r.ratio, 1.0);
  }
  // The rule's corners.
  EXPECT_EQ(fused_call_cols(t, 'd', 0, 0, sms), kFusedMaxCols);
  EXPECT_EQ(fused_call_cols(t, 'd', 1, 1, sms), 72);
  EXPECT_EQ(fused_call_cols(t, 'd', 264, 264, sms), 72);
  EXPECT_EQ(fused_call_cols(t, 'd', 265, 265, sms), kFusedMaxCols);
  EXPECT_EQ(fused_call_cols(t, 'd', 0, 98, sms), kFusedMaxCols); // below 3/4 of the SMs
  EXPECT_EQ(fused_call_cols(t, 'd', 0, 99, sms), 88);
  EXPECT_EQ(fused_call_cols(t, 'd', 0, 132, sms), 88);
  EXPECT_EQ(fused_call_cols(t, 'd', 0, 133, sms), kFusedMaxCols);
  EXPECT_EQ(fused_call_cols(t, 'd', 133, 133, sms), 72);
  EXPECT_EQ(fused_call_cols(t, 'c', 0, 100, sms), 88);
  EXPECT_EQ(fused_call_cols(t, 'c', 5, 5, sms), 76);
  EXPECT_EQ(fused_call_cols(t, 'z', 0, 100, sms), 80);
  EXPECT_EQ(fused_call_cols(t, 'z', 5, 5, sms), kFusedMaxCols);
  EXPECT_EQ(fused_call_cols(t, 's', 0, 100, sms), 72);
  EXPECT_EQ(fused_call_cols(t, 's', 5, 5, sms), kFusedMaxCols);
  EXPECT_EQ(fused_call_cols(t, 'd', 0, 100, 78), kFusedMaxCols); // a smaller GPU: 100 > 78
  Overrides o;
  o.fused_max_cols = 100000; // the override holds for every count
  EXPECT_EQ(fused_call_cols(forced(o), 'd', 0, 0, sms), 100000);
  EXPECT_EQ(fused_call_cols(forced(o), 's', 5000, 5000, sms), 100000);
}

// The automatic preconditioning's cost model (qrcp_auto_cost) against the
// H100 measurements it was fitted to (d, random family: the preconditioned
// call's time over the plain one's,
// docs/design/decisions/0008-preconditioning-cost-model.md;
// two runs of some cases), within the fit's largest residual, and the
// decisions it makes for them (on where the predicted cost is at most
// max_cost). 10 x 256^2 measured 1.28 in the first run and 1.10 in
// the second; the first is left out of the fit.
TEST(Tuning, QrcpAutoCostFollowsTheMeasurement) {
  const Tuning &t = sm90();
  struct Row {
    double count;
    int nw;
    double measured;
    bool on;
  };
  const Row rows[] = {{10, 128, 1.12, false},  {30, 128, 1.15, false},   {100, 128, 1.20, false},
                      {300, 128, 1.31, false}, {1000, 128, 1.33, false}, {4, 128, 1.14, false},
                      {8, 128, 1.12, false},   {10, 192, 1.09, false},   {40, 192, 1.19, false},
                      {3, 256, 1.07, true},    {3, 256, 1.13, true},     {6, 256, 1.12, true},
                      {10, 256, 1.10, false},  {16, 256, 1.13, false},   {30, 256, 1.08, false},
                      {100, 256, 1.16, false}, {1000, 256, 1.24, false}, {4, 384, 1.02, true},
                      {16, 384, 1.14, true},   {2, 512, 1.01, true},     {5, 512, 0.99, true},
                      {10, 512, 1.07, true},   {12, 512, 1.05, true},    {20, 512, 1.04, true},
                      {30, 512, 1.11, true},   {40, 512, 1.08, false},   {100, 512, 1.16, false}};
  for (const Row &r : rows) {
    SCOPED_TRACE(testing::Message() << r.count << " x " << r.nw << "^2");
    EXPECT_NEAR(1 + qrcp_auto_cost(t, r.count, r.nw), r.measured, 0.07);
    EXPECT_EQ(qrcp_auto(t, 'd', r.count, r.nw), r.on);
    EXPECT_EQ(qrcp_auto(t, 'z', r.count, r.nw), r.on); // c and z: d's rule
    EXPECT_FALSE(qrcp_auto(t, 's', r.count, r.nw)); // s: never (its sweeps are cheaper)
  }
  // The SuiteSparse batch: 82 blocked matrices, 14.4 of lnsp_511's work;
  // measured 1.07 on its shapes with random values.
  EXPECT_NEAR(1 + qrcp_auto_cost(t, 14.45, 511), 1.07, 0.02);
  EXPECT_TRUE(qrcp_auto(t, 'd', 14.45, 511));
  // One matrix of 100 columns is preconditioned, two are not; the cost
  // grows with the count and falls with the width.
  EXPECT_TRUE(qrcp_auto(t, 'c', 1, 100));
  EXPECT_FALSE(qrcp_auto(t, 'd', 2, 100));
  EXPECT_FALSE(qrcp_auto(t, 's', 1, 512));
  EXPECT_LT(qrcp_auto_cost(t, 10, 256), qrcp_auto_cost(t, 20, 256));
  EXPECT_GT(qrcp_auto_cost(t, 10, 128), qrcp_auto_cost(t, 10, 256));
  EXPECT_EQ(qrcp_auto_cost(t, 0.5, 0), qrcp_auto_cost(t, 1, 1)); // clamped, no log of 0
}

// The Gram stage's plan per step (gram_plan): tile 2 or the split plan
// below gram_tile4_min_pairs own-kernel pairs; from there the throughput
// plan, which is the tensor-core plan in d and tile 4 elsewhere. Overrides
// force tile 2, tile 4, the split plan (where it fits) or the tensor-core
// plan (d only; tile 4 elsewhere). The wide instance: the tensor-core plan
// in d, its scalar kernel otherwise or when tile 4 is forced.
TEST(Tuning, GramPlanByPrecision) {
  const Tuning &t = sm90();
  const long min4 = t.blocked.gram_tile4_min_pairs, tiles = 4096;
  EXPECT_EQ(min4, 1024);
  EXPECT_EQ(gram_plan(t, 'd', min4, 0, 1, tiles), GramPlan::kMma);
  EXPECT_EQ(gram_plan(t, 's', min4, 0, 1, tiles), GramPlan::kTile4);
  EXPECT_EQ(gram_plan(t, 'z', min4, 0, 1, tiles), GramPlan::kTile4);
  EXPECT_EQ(gram_plan(t, 'd', min4 - 1, 0, 1, tiles), GramPlan::kTile2);
  EXPECT_EQ(gram_plan(t, 'd', 16, 16, 4, tiles), GramPlan::kSplit); // tall pairs, few
  EXPECT_EQ(gram_plan(t, 'd', 16, 2048, 4, tiles), GramPlan::kTile2); // beyond the workspace
  EXPECT_EQ(gram_plan(t, 'd', 500, 500, 4, tiles), GramPlan::kTile2); // beyond two waves
  EXPECT_EQ(gram_plan_wide(t, 'd'), GramPlan::kMma);
  EXPECT_EQ(gram_plan_wide(t, 'c'), GramPlan::kTile4);
  Overrides o;
  o.gram_plan = GramPlan::kTile4;
  EXPECT_EQ(gram_plan(forced(o), 'd', 1, 0, 1, tiles), GramPlan::kTile4);
  EXPECT_EQ(gram_plan(forced(o), 'd', min4, 0, 1, tiles), GramPlan::kTile4);
  EXPECT_EQ(gram_plan_wide(forced(o), 'd'), GramPlan::kTile4);
  o.gram_plan = GramPlan::kMma;
  EXPECT_EQ(gram_plan(forced(o), 'd', 1, 0, 1, tiles), GramPlan::kMma);
  EXPECT_EQ(gram_plan(forced(o), 's', 1, 0, 1, tiles), GramPlan::kTile4);
  o.gram_plan = GramPlan::kTile2;
  EXPECT_EQ(gram_plan(forced(o), 'd', min4, 0, 1, tiles), GramPlan::kTile2);
  o.gram_plan = GramPlan::kSplit;
  EXPECT_EQ(gram_plan(forced(o), 'd', min4, 16, 4, tiles), GramPlan::kSplit);
  EXPECT_EQ(gram_plan(forced(o), 'd', min4, 16, 1, tiles), GramPlan::kTile2); // one segment
}

// cuBLAS forms the Gram matrices in z from 512 rows, nowhere else; the
// overrides force it on or off.
TEST(Tuning, GramByCublas) {
  const Tuning &t = sm90();
  EXPECT_TRUE(gram_cublas(t, 'z', 512));
  EXPECT_FALSE(gram_cublas(t, 'z', 511));
  for (char p : {'s', 'd', 'c'}) EXPECT_FALSE(gram_cublas(t, p, 100000));
  Overrides o;
  o.gram_cublas = Force::kOn;
  EXPECT_TRUE(gram_cublas(forced(o), 'd', 16));
  o.gram_cublas = Force::kOff;
  EXPECT_FALSE(gram_cublas(forced(o), 'z', 4096));
}

// The fused kernel's lanes per column pair (the table) and the overrides.
TEST(Tuning, FusedLanes) {
  const Tuning &t = sm90();
  EXPECT_EQ(fused_lanes(t, 8, 10000, 'd'), 4);
  EXPECT_EQ(fused_lanes(t, 8, 100, 'd'), 8);
  EXPECT_EQ(fused_lanes(t, 32, 1999, 's'), 16);
  EXPECT_EQ(fused_lanes(t, 32, 2000, 's'), 4);
  EXPECT_EQ(fused_lanes(t, 64, 1, 'z'), 8);
  EXPECT_EQ(fused_lanes(t, 118, 1000, 'd'), 4);
  EXPECT_EQ(fused_lanes(t, 118, 1000, 'c'), 4);
  EXPECT_EQ(fused_lanes(t, 167, 1000, 's'), 8);
  EXPECT_EQ(fused_lanes(t, 100, 1000, 'z'), 8);
  Overrides o;
  o.fused_gcd_rule = true; // WCYCLE's rule: max(4, gcd(m, 32))
  EXPECT_EQ(fused_lanes(forced(o), 24, 10000, 'd'), 8);
  EXPECT_EQ(fused_lanes(forced(o), 7, 10000, 'd'), 4);
  EXPECT_EQ(fused_lanes(forced(o), 64, 10000, 'd'), 32);
  o.fused_lanes = 16; // a forced value wins over both
  EXPECT_EQ(fused_lanes(forced(o), 24, 10000, 'd'), 16);
  EXPECT_EQ(fused_tpm_cap(t), 256);
  o.fused_tpm = 64;
  EXPECT_EQ(fused_tpm_cap(forced(o)), 64);
}

// The preconditioning's factorization plan and the other switches land
// where the rules read them.
TEST(Tuning, OverridesLandInTheTable) {
  const Tuning &t = sm90();
  EXPECT_TRUE(qrcp_throughput(t, 10, 9));
  EXPECT_FALSE(qrcp_throughput(t, 10, 10)); // a tie: the latency plan
  Overrides o;
  o.qrcp_throughput = Force::kOff;
  EXPECT_FALSE(qrcp_throughput(forced(o), 10, 1));
  o.qrcp_throughput = Force::kOn;
  EXPECT_TRUE(qrcp_throughput(forced(o), 1, 10));
  EXPECT_EQ(stream_groups(t), 2);
  EXPECT_TRUE(evd_lean(t));
  EXPECT_TRUE(fused_beside_blocked(t));
  o.stream_groups = 1;
  o.evd_lean = Force::kOff;
  o.fused_beside = Force::kOff;
  o.qr_wy = Force::kOff;
  o.qr_threads = 512;
  const Tuning f = forced(o);
  EXPECT_EQ(stream_groups(f), 1);
  EXPECT_FALSE(evd_lean(f));
  EXPECT_FALSE(fused_beside_blocked(f));
  EXPECT_FALSE(f.qr.wy);
  EXPECT_EQ(qr_threads(f, true, 1024), 512);
  EXPECT_EQ(qr_threads(t, true, 1024), 1024);
  EXPECT_EQ(qr_threads(t, false, 1024), 256);
}

// The environment reaches the overrides through the one loader; values
// that are not choices are ignored.
TEST(Tuning, OverridesFromTheEnvironment) {
  struct Env {
    const char *name;
    Env(const char *n, const char *v) : name(n) { setenv(n, v, 1); }
    ~Env() { unsetenv(name); }
  };
  {
    Env a("BSVD_EVD_THREADS", "128"), b("BSVD_GRAM_TILE", "s"), c("BSVD_QR_TSQR", "0"),
        d("BSVD_TLP_THRESHOLD", "-5"), e("BSVD_FUSED_LANES", "12"), f("BSVD_GRAM", "cublas"),
        g("BSVD_PROFILE", "1"), h("BSVD_QRCP_PLAN", "latency"), i("BSVD_HOST_CHUNK", "0");
    const Overrides o = overrides_from_env();
    EXPECT_EQ(o.evd_threads, 128);
    EXPECT_EQ(o.gram_plan, GramPlan::kSplit);
    EXPECT_EQ(o.qr_tsqr, Force::kOff);
    EXPECT_EQ(o.tlp_warp, 0); // not positive: the table's
    EXPECT_EQ(o.fused_lanes, 0); // not a lane count: the table's
    EXPECT_EQ(o.gram_cublas, Force::kOn);
    EXPECT_TRUE(o.profile);
    EXPECT_EQ(o.qrcp_throughput, Force::kOff);
    EXPECT_EQ(o.host_chunk, 0); // never streamed
  }
  for (const char *v : {"-3", "x", ""}) {
    Env a("BSVD_HOST_CHUNK", v);
    EXPECT_EQ(overrides_from_env().host_chunk, -1) << v; // the default
  }
  {
    Env a("BSVD_HOST_CHUNK", "65536");
    EXPECT_EQ(overrides_from_env().host_chunk, 65536);
  }
  const Overrides none = overrides_from_env();
  EXPECT_EQ(none.evd_threads, 0);
  EXPECT_EQ(none.gram_plan, GramPlan::kAuto);
  EXPECT_FALSE(none.profile);
  // ScopedOverrides restores the set it replaced.
  Overrides o;
  o.stream_groups = 1;
  const int before = current_overrides().stream_groups;
  {
    ScopedOverrides scope(o);
    EXPECT_EQ(current_overrides().stream_groups, 1);
  }
  EXPECT_EQ(current_overrides().stream_groups, before);
}
