// The host-side plan rules of src/cuda/tuning.hpp (plain C++, no GPU).
#include "cuda/tuning.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

using namespace bsvd::detail::cuda;

namespace {

// Restores an environment variable on scope exit.
class EnvGuard {
public:
  explicit EnvGuard(const char *name) : name_(name) {
    if (const char *v = std::getenv(name)) {
      had_ = true;
      old_ = v;
    }
    unsetenv(name);
  }
  ~EnvGuard() {
    if (had_) setenv(name_, old_.c_str(), 1);
    else unsetenv(name_);
  }
  void set(const char *v) { setenv(name_, v, 1); }

private:
  const char *name_;
  bool had_ = false;
  std::string old_;
};

} // namespace

// The eigensolver plan rule picks, for every batch of the session-14
// measurement (H100, uniform 256^2 batches of 1 ... 1024 matrices, 8
// pairs each, full pairs; tuning.hpp's comment and docs/perf/wcycle.md),
// the plan that was fastest there.
TEST(TuningRules, EvdPlanRuleMatchesTheMeasuredBestPlans) {
  EnvGuard a("BSVD_TLP_THRESHOLD"), b("BSVD_TLP_BLOCK_THRESHOLD"), c("BSVD_EVD_THREADS");
  struct Row { long pairs; int s, d, c, z; };
  const Row best[] = {{8, 256, 256, 256, 256},     {64, 256, 256, 256, 256},
                      {256, 256, 256, 256, 256},   {512, 128, 128, 128, 128},
                      {1024, 32, 32, 128, 128},    {2048, 32, 32, 128, 128},
                      {8192, 32, 32, 128, 128}};
  for (const Row &r : best) {
    SCOPED_TRACE(r.pairs);
    EXPECT_EQ(choose_evd_threads(r.pairs, 's', true), r.s);
    EXPECT_EQ(choose_evd_threads(r.pairs, 'd', true), r.d);
    EXPECT_EQ(choose_evd_threads(r.pairs, 'c', true), r.c);
    EXPECT_EQ(choose_evd_threads(r.pairs, 'z', true), r.z);
  }
  // The crossovers sit between the measured points: 128 threads from 363
  // pairs (tau_block 46341), the warp plan from 906 on full steps (s, d:
  // tau_warp 28963; the whole call at 800 full pairs ran faster on the
  // 128 plan, session 22).
  EXPECT_EQ(choose_evd_threads(362, 'd', true), 256);
  EXPECT_EQ(choose_evd_threads(363, 'd', true), 128);
  EXPECT_EQ(choose_evd_threads(800, 'd', true), 128);
  EXPECT_EQ(choose_evd_threads(905, 'd', true), 128);
  EXPECT_EQ(choose_evd_threads(906, 'd', true), 32);
  EXPECT_EQ(choose_evd_threads(1200, 's', true), 32);
}

// Steps with a ragged pair (session 22, H200 and H100: d and s random, the
// whole call with each plan forced; tuning.hpp): in d the 128 plan won at
// 800 ... 2800 pairs (200 ... 600 x 100^2, 200 and 400 x 200^2),
// which the full-step threshold gave to the warp plan (the d 200 x 100^2
// miss of session 21: 19 % over the best plan on the H100).
TEST(TuningRules, EvdPlanRuleForRaggedSteps) {
  EnvGuard a("BSVD_TLP_THRESHOLD"), b("BSVD_TLP_BLOCK_THRESHOLD"), c("BSVD_EVD_THREADS");
  for (long pairs : {800L, 1200L, 1400L, 1600L, 2400L, 2800L}) {
    SCOPED_TRACE(pairs);
    EXPECT_EQ(choose_evd_threads(pairs, 'd', false), 128);
  }
  EXPECT_EQ(choose_evd_threads(2896, 'd', false), 128);
  EXPECT_EQ(choose_evd_threads(2897, 'd', false), 32); // tau_warp 92682
  // s: the 128 plan at 800 pairs, a tie at 1600, the warp plan at 2400 (H100).
  EXPECT_EQ(choose_evd_threads(800, 's', false), 128);
  EXPECT_EQ(choose_evd_threads(1959, 's', false), 128);
  EXPECT_EQ(choose_evd_threads(1960, 's', false), 32); // tau_warp 62706
  EXPECT_EQ(choose_evd_threads(2400, 's', false), 32);
  // The 128/256 crossover and the complex thresholds do not depend on it.
  EXPECT_EQ(choose_evd_threads(362, 'd', false), 256);
  EXPECT_EQ(choose_evd_threads(363, 'd', false), 128);
  EXPECT_EQ(choose_evd_threads(8192, 'z', false), 128);
  EXPECT_EQ(tlp_warp_threshold('z', false), tlp_warp_threshold('z', true));
  // Which steps are full: every matrix in two or more nb-wide blocks.
  EXPECT_TRUE(full_pairs(128, 16));
  EXPECT_TRUE(full_pairs(32, 16));
  EXPECT_FALSE(full_pairs(16, 16)); // one block: a pair of width nb
  EXPECT_FALSE(full_pairs(100, 16));
  EXPECT_FALSE(full_pairs(200, 16));
  EXPECT_TRUE(full_pairs(200, 8));
}

TEST(TuningRules, EvdPlanOverrides) {
  EnvGuard a("BSVD_TLP_THRESHOLD"), b("BSVD_TLP_BLOCK_THRESHOLD"), c("BSVD_EVD_THREADS");
  b.set("1000000"); // 128 threads only from 7813 pairs
  EXPECT_EQ(choose_evd_threads(512, 'z', true), 256);
  a.set("1024"); // the warp plan from 32 pairs, full or ragged
  EXPECT_EQ(choose_evd_threads(32, 'z', true), 32);
  EXPECT_EQ(choose_evd_threads(32, 'd', false), 32);
  EXPECT_EQ(choose_evd_threads(31, 'z', true), 256);
  c.set("128");
  EXPECT_EQ(choose_evd_threads(1, 'd', true), 128);
  c.set("64"); // not a plan: ignored
  EXPECT_EQ(choose_evd_threads(31, 'z', true), 256);
  a.set("-5"); // not positive: the default
  EXPECT_EQ(tlp_warp_threshold('d', true), 28963);
  EXPECT_EQ(tlp_warp_threshold('d', false), 92682);
}

// The fused kernel's column cap per call (fused_call_cols) against the
// session-22 grid (H100, 132 SMs; tuning.hpp): best blocked plan / fused
// at 8 ... 264 matrices of 68 ... 88 columns. Every case the rule sends to
// the fused kernel ran faster there; the losing ones stay blocked.
TEST(TuningRules, FusedColumnCapPerCall) {
  EnvGuard e("BSVD_FUSED_MAX_COLS");
  const int sms = 132;
  // (prec, columns, count, measured blocked / fused)
  struct Row { char p; int n, count; double ratio; };
  const Row grid[] = {
      {'d', 68, 8, 1.18},  {'d', 68, 264, 1.54}, {'d', 72, 8, 1.06},   {'d', 72, 200, 1.38},
      {'d', 72, 264, 1.48}, {'d', 76, 8, 0.91},  {'d', 76, 64, 1.04},  {'d', 76, 100, 1.10},
      {'d', 76, 132, 1.28}, {'d', 76, 200, 1.11}, {'d', 80, 8, 0.82},  {'d', 80, 64, 0.95},
      {'d', 80, 100, 1.01}, {'d', 80, 132, 1.15}, {'d', 80, 200, 0.90}, {'d', 88, 32, 0.73},
      {'d', 88, 100, 1.07}, {'d', 88, 132, 1.11}, {'d', 88, 200, 0.75}, {'c', 76, 8, 1.07},
      {'c', 76, 264, 1.54}, {'c', 80, 8, 0.92},  {'c', 80, 100, 1.09}, {'c', 88, 64, 0.96},
      {'c', 88, 132, 1.29}, {'c', 88, 200, 0.90}, {'z', 72, 8, 0.92},  {'z', 72, 100, 1.34},
      {'z', 80, 8, 0.74},  {'z', 80, 132, 1.28}, {'z', 80, 200, 0.89}, {'s', 68, 8, 0.89},
      {'s', 72, 100, 1.04}, {'s', 72, 132, 1.22}, {'s', 76, 100, 0.95}, {'s', 80, 100, 0.92},
      {'s', 88, 132, 0.87}};
  for (const Row &r : grid) {
    SCOPED_TRACE(testing::Message() << r.p << " " << r.count << " x " << r.n << "^2");
    const bool w = r.n <= fused_wide_cols(r.p), x = r.n <= fused_window_cols(r.p);
    const bool fused = r.n <= fused_call_cols(r.p, w ? r.count : 0, x ? r.count : 0, sms);
    if (fused) EXPECT_GT(r.ratio, 1.0);
  }
  // The rule's corners.
  EXPECT_EQ(fused_call_cols('d', 0, 0, sms), kFusedMaxCols);
  EXPECT_EQ(fused_call_cols('d', 1, 1, sms), 72);
  EXPECT_EQ(fused_call_cols('d', 264, 264, sms), 72);
  EXPECT_EQ(fused_call_cols('d', 265, 265, sms), kFusedMaxCols);
  EXPECT_EQ(fused_call_cols('d', 0, 98, sms), kFusedMaxCols); // below 3/4 of the SMs
  EXPECT_EQ(fused_call_cols('d', 0, 99, sms), 88);
  EXPECT_EQ(fused_call_cols('d', 0, 132, sms), 88);
  EXPECT_EQ(fused_call_cols('d', 0, 133, sms), kFusedMaxCols);
  EXPECT_EQ(fused_call_cols('d', 133, 133, sms), 72);
  EXPECT_EQ(fused_call_cols('c', 0, 100, sms), 88);
  EXPECT_EQ(fused_call_cols('c', 5, 5, sms), 76);
  EXPECT_EQ(fused_call_cols('z', 0, 100, sms), 80);
  EXPECT_EQ(fused_call_cols('z', 5, 5, sms), kFusedMaxCols);
  EXPECT_EQ(fused_call_cols('s', 0, 100, sms), 72);
  EXPECT_EQ(fused_call_cols('s', 5, 5, sms), kFusedMaxCols);
  EXPECT_EQ(fused_call_cols('d', 0, 100, 78), kFusedMaxCols); // a smaller GPU: 100 > 78
  e.set("100000"); // the override holds for every count
  EXPECT_EQ(fused_call_cols('d', 0, 0, sms), 100000);
  EXPECT_EQ(fused_call_cols('s', 5000, 5000, sms), 100000);
  EXPECT_EQ(fused_max_cols_override(), 100000);
  e.set("0"); // not positive: the rule
  EXPECT_EQ(fused_call_cols('d', 1, 1, sms), 72);
}

// The automatic preconditioning's cost model (qrcp_auto_cost) against the
// H100 measurements it was fitted to (d, random family: the preconditioned
// call's time over the plain one's; docs/perf/wcycle.md, Session 17; two
// runs of some cases), within the fit's largest residual, and the
// decisions it makes for them (on where the predicted cost is at most
// kQrcpAutoMaxCost). 10 x 256^2 measured 1.28 in the first run and 1.10 in
// the second; the first is left out of the fit.
TEST(TuningRules, QrcpAutoCostFollowsTheMeasurement) {
  struct Row { double count; int nw; double measured; bool on; };
  const Row rows[] = {
      {10, 128, 1.12, false},  {30, 128, 1.15, false},  {100, 128, 1.20, false},
      {300, 128, 1.31, false}, {1000, 128, 1.33, false}, {4, 128, 1.14, false},
      {8, 128, 1.12, false},   {10, 192, 1.09, false},  {40, 192, 1.19, false},
      {3, 256, 1.07, true},    {3, 256, 1.13, true},    {6, 256, 1.12, true},
      {10, 256, 1.10, false},  {16, 256, 1.13, false},  {30, 256, 1.08, false},
      {100, 256, 1.16, false}, {1000, 256, 1.24, false}, {4, 384, 1.02, true},
      {16, 384, 1.14, true},   {2, 512, 1.01, true},    {5, 512, 0.99, true},
      {10, 512, 1.07, true},   {12, 512, 1.05, true},   {20, 512, 1.04, true},
      {30, 512, 1.11, true},   {40, 512, 1.08, false},  {100, 512, 1.16, false}};
  for (const Row &r : rows) {
    SCOPED_TRACE(testing::Message() << r.count << " x " << r.nw << "^2");
    EXPECT_NEAR(1 + qrcp_auto_cost(r.count, r.nw), r.measured, 0.07);
    EXPECT_EQ(qrcp_auto_rule(r.count, r.nw, 'd'), r.on);
    EXPECT_EQ(qrcp_auto_rule(r.count, r.nw, 'z'), r.on); // c and z: d's rule
    EXPECT_FALSE(qrcp_auto_rule(r.count, r.nw, 's'));    // s: never (its sweeps are cheaper)
  }
  // The SuiteSparse batch: 82 blocked matrices, 14.4 of lnsp_511's work;
  // measured 1.07 on its shapes with random values (Session 16).
  EXPECT_NEAR(1 + qrcp_auto_cost(14.45, 511), 1.07, 0.02);
  EXPECT_TRUE(qrcp_auto_rule(14.45, 511, 'd'));
  // One matrix of 100 columns is preconditioned, two are not; the cost
  // grows with the count and falls with the width.
  EXPECT_TRUE(qrcp_auto_rule(1, 100, 'c'));
  EXPECT_FALSE(qrcp_auto_rule(2, 100, 'd'));
  EXPECT_FALSE(qrcp_auto_rule(1, 512, 's'));
  EXPECT_LT(qrcp_auto_cost(10, 256), qrcp_auto_cost(20, 256));
  EXPECT_GT(qrcp_auto_cost(10, 128), qrcp_auto_cost(10, 256));
  EXPECT_EQ(qrcp_auto_cost(0.5, 0), qrcp_auto_cost(1, 1)); // clamped, no log of 0
}

// The Gram stage's plan per step (choose_gram_tile): tile 2 or the split
// plan below kGramTile4MinPairs own-kernel pairs; from there the
// throughput plan, which is the tensor-core plan (5) in d and tile 4
// elsewhere (session 18); BSVD_GRAM_TILE forces 2, 4, the split plan (s,
// where it fits) or the tensor-core plan (m: d only, tile 4 elsewhere).
// The wide instance: the tensor-core plan in d, its scalar kernel (4)
// otherwise or when BSVD_GRAM_TILE=4.
TEST(TuningRules, GramPlanByPrecision) {
  EnvGuard g("BSVD_GRAM_TILE");
  EXPECT_EQ(choose_gram_tile(kGramTile4MinPairs, 0, 1, 'd'), 5);
  EXPECT_EQ(choose_gram_tile(kGramTile4MinPairs, 0, 1, 's'), 4);
  EXPECT_EQ(choose_gram_tile(kGramTile4MinPairs, 0, 1, 'z'), 4);
  EXPECT_EQ(choose_gram_tile(kGramTile4MinPairs - 1, 0, 1, 'd'), 2);
  EXPECT_EQ(choose_gram_tile(16, 16, 4, 'd'), 3); // tall pairs, few: split
  EXPECT_EQ(choose_gram_wide('d'), 5);
  EXPECT_EQ(choose_gram_wide('c'), 4);
  g.set("4");
  EXPECT_EQ(choose_gram_tile(1, 0, 1, 'd'), 4);
  EXPECT_EQ(choose_gram_tile(kGramTile4MinPairs, 0, 1, 'd'), 4);
  EXPECT_EQ(choose_gram_wide('d'), 4);
  g.set("m");
  EXPECT_EQ(choose_gram_tile(1, 0, 1, 'd'), 5);
  EXPECT_EQ(choose_gram_tile(1, 0, 1, 's'), 4);
  g.set("2");
  EXPECT_EQ(choose_gram_tile(kGramTile4MinPairs, 0, 1, 'd'), 2);
}
