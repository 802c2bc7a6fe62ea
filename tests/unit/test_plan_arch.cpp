// The planner on the GPU generations bsvd supports (issue 53), with
// injected device facts: the tables by architecture family and the
// fallback, the facts of an imitated GPU (BSVD_DEVICE_AS), and the routes
// a GPU without clusters or with less shared memory per block takes. Plain
// C++: the facts below follow the cuda backend's (src/cuda/facts.cu) in
// what they depend on -- shared memory per block and cluster launch.
#include "core/overrides.hpp"
#include "plan/blocked_sweep.hpp"
#include "plan/plan.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

using namespace bsvd::detail;
using namespace bsvd::detail::plan;

namespace {

size_t eb(char p) { return p == 's' ? 4 : p == 'z' ? 16 : 8; }

// A GPU's facts from its description: what fits is decided by its shared
// memory per block, the pivoted factorization's clusters by cluster launch,
// the warp eigensolver plan as the compiled one (z: 140 KB).
class DescFacts : public PathFacts {
public:
  explicit DescFacts(const DeviceDesc &d) : smem_(size_t(d.smem_optin)), clusters_(d.clusters()) {}
  bool fused_fits(char p, int mw, int nw, bool vectors) const override {
    const size_t w = size_t(mw + 1) * nw, v = vectors ? size_t(nw + 1) * nw : 0;
    return (w + v) * eb(p) + 64 * size_t(nw) <= smem_;
  }
  int blocked_max_nb(char p) const override { return p == 'z' || smem_ < 105 * 1024 ? 16 : 32; }
  bool pair_fits(char p, int mw, int nb) const override {
    return nb <= 16 && size_t(mw) * 32 * eb(p) <= smem_;
  }
  int qrcp_cluster_blocks(char p, int mw, int nw) const override {
    return clusters_ && size_t(mw) * nw * eb(p) <= 16 * smem_ ? 4 : 0;
  }
  int tsqr_chunks(char, int mw, int nw) const override { return nw <= 32 ? (mw + 255) / 256 : 0; }
  int qr_apply_cols(char, int) const override { return 4; }
  bool evd_warp_fits(char p) const override { return p != 'z' || smem_ >= 140 * 1024; }

private:
  size_t smem_;
  bool clusters_;
};

DeviceDesc h100() {
  DeviceDesc d;
  d.id = 0;
  d.cc_major = 9;
  d.sm_count = 132;
  d.smem_optin = 227 * 1024;
  d.cluster_launch = 1;
  d.fp64_ratio = 2;
  d.l2_bytes = 50LL << 20;
  std::strcpy(d.name, "NVIDIA H100 80GB HBM3");
  return d;
}

DeviceDesc gpu(int cc_major, int cc_minor, int sms, int smem_kib, int clusters, int fp64_ratio) {
  DeviceDesc d;
  d.id = 0;
  d.cc_major = cc_major;
  d.cc_minor = cc_minor;
  d.sm_count = sms;
  d.smem_optin = smem_kib * 1024;
  d.cluster_launch = clusters;
  d.fp64_ratio = fp64_ratio;
  return d;
}
DeviceDesc a100() { return gpu(8, 0, 108, 163, 0, 2); }
DeviceDesc rtx4090() { return gpu(8, 9, 128, 99, 0, 64); }
DeviceDesc rtx5090() { return gpu(12, 0, 170, 99, 1, 64); }
DeviceDesc b200() { return gpu(10, 0, 148, 227, 1, 2); }

Shapes uniform_shapes(char p, int count, int m, int n) {
  Shapes s;
  s.precision = p;
  s.vectors = true;
  s.count = count;
  s.dims.m = m;
  s.dims.n = n;
  return s;
}

Plan plan_on(const DeviceDesc &d, char p, int count, int m, int n, const Config &cfg = Config()) {
  const DescFacts facts(d);
  return make_plan(uniform_shapes(p, count, m, n), cfg, d, facts, tuning_for(d));
}

} // namespace

// sm_90 keeps its measured table, the very one the other plan tests read.
TEST(PlanArch, Sm90ReadsItsMeasuredTable) {
  ASSERT_NE(measured_table(9, 0), nullptr);
  EXPECT_EQ(measured_table(9, 0), &tuning_table(9, 0));
  const Tuning t = tuning_for(h100());
  EXPECT_STREQ(t.name, tuning_table(9, 0).name);
  for (int p = 0; p < 4; ++p) {
    EXPECT_EQ(t.blocked.tlp_warp_full[p], tuning_table(9, 0).blocked.tlp_warp_full[p]);
    EXPECT_EQ(t.blocked.tlp_warp_ragged[p], tuning_table(9, 0).blocked.tlp_warp_ragged[p]);
  }
  EXPECT_EQ(t.blocked.gram_split_max_blocks, tuning_table(9, 0).blocked.gram_split_max_blocks);
  // An H100 described with its facts plans as one described by the
  // compute capability, SMs and shared memory alone (the older tests').
  DeviceDesc bare = gpu(9, 0, 132, 227, -1, 0);
  EXPECT_TRUE(bare.clusters());
  EXPECT_FALSE(bare.slow_fp64());
}

// Families without a measured table take the fallback, named as such.
TEST(PlanArch, OtherFamiliesTakeTheFallback) {
  for (const DeviceDesc &d : {a100(), rtx4090(), rtx5090(), b200()}) {
    SCOPED_TRACE(d.cc_major * 10 + d.cc_minor);
    EXPECT_EQ(measured_table(d.cc_major, d.cc_minor), nullptr);
    const Tuning t = tuning_for(d);
    EXPECT_NE(std::string(t.name).find("fallback"), std::string::npos) << t.name;
    // the kernels' shapes stay: the fused caps, the register tier, QR
    EXPECT_EQ(t.fused.max_cols, tuning_table(9, 0).fused.max_cols);
    EXPECT_EQ(t.qr.auto_ratio, tuning_table(9, 0).qr.auto_ratio);
    EXPECT_EQ(t.blocked.gram_split_max_blocks, 14L * d.sm_count);
  }
  EXPECT_NE(std::string(tuning_for(a100()).name).find("sm_80"), std::string::npos);
  EXPECT_NE(std::string(tuning_for(rtx4090()).name).find("sm_89"), std::string::npos);
}

// The TLP thresholds count threads in flight: they scale with the SMs, and
// on a GPU with 1/64-rate FP64 the d and z ones also by its FP64 rate.
TEST(PlanArch, FallbackThresholdsScaleWithSmsAndFp64) {
  const Tuning &h = tuning_table(9, 0);
  const Tuning a = tuning_for(a100()); // 108 SMs, fast FP64
  EXPECT_EQ(a.blocked.tlp_warp_full[1], std::lround(h.blocked.tlp_warp_full[1] * 108.0 / 132));
  EXPECT_EQ(a.blocked.tlp_block, std::lround(h.blocked.tlp_block * 108.0 / 132));
  const Tuning g = tuning_for(rtx4090()); // 128 SMs, FP64 1/64
  const double sms = 128.0 / 132;
  EXPECT_EQ(g.blocked.tlp_warp_full[0], std::lround(h.blocked.tlp_warp_full[0] * sms)); // s
  EXPECT_EQ(g.blocked.tlp_warp_full[1], std::lround(h.blocked.tlp_warp_full[1] * sms * 2 / 64));
  EXPECT_EQ(g.blocked.tlp_warp_ragged[3],
            std::lround(h.blocked.tlp_warp_ragged[3] * sms * 2 / 64)); // z
  // so that d takes the warp plan at far fewer pairs than s there
  EXPECT_EQ(evd_threads(g, 'd', 64, true), 32);
  EXPECT_NE(evd_threads(g, 's', 64, true), 32);
  EXPECT_NE(evd_threads(h, 'd', 64, true), 32);
}

// BSVD_DEVICE_AS narrows a GPU's facts to an older generation's, never
// widens them, and keeps the GPU's own compute capability for `bsvd plan`.
TEST(PlanArch, DeviceAsNarrowsTheFacts) {
  DeviceDesc d = h100();
  ASSERT_TRUE(device_as(d, 80));
  EXPECT_EQ(d.cc_major, 8);
  EXPECT_EQ(d.cc_minor, 0);
  EXPECT_EQ(d.smem_optin, 163 * 1024);
  EXPECT_FALSE(d.clusters());
  EXPECT_EQ(d.sm_count, 132);
  EXPECT_EQ(d.real_cc_major, 9);
  EXPECT_EQ(d.real_cc_minor, 0);
  DeviceDesc e = h100();
  ASSERT_TRUE(device_as(e, 86));
  EXPECT_EQ(e.smem_optin, 99 * 1024);
  EXPECT_TRUE(e.slow_fp64());
  DeviceDesc f = rtx4090(); // 99 KiB: an sm_80 imitation keeps 99
  ASSERT_TRUE(device_as(f, 80));
  EXPECT_EQ(f.smem_optin, 99 * 1024);
  DeviceDesc g = a100(); // no clusters: sm_120's cannot be had
  ASSERT_TRUE(device_as(g, 120));
  EXPECT_FALSE(g.clusters());
  DeviceDesc u = h100();
  EXPECT_FALSE(device_as(u, 75));
  EXPECT_EQ(u.cc_major, 9);
  EXPECT_EQ(u.real_cc_major, 0);
}

TEST(PlanArch, DeviceAsOverrideReadsItsValues) {
  Overrides o;
  EXPECT_TRUE(set_override(o, "BSVD_DEVICE_AS", "sm_80"));
  EXPECT_EQ(o.device_as, 80);
  EXPECT_TRUE(set_override(o, "BSVD_DEVICE_AS", "86"));
  EXPECT_EQ(o.device_as, 86);
  EXPECT_TRUE(set_override(o, "BSVD_DEVICE_AS", "SM_120"));
  EXPECT_EQ(o.device_as, 120);
  EXPECT_TRUE(set_override(o, "BSVD_DEVICE_AS", "sm_75")); // not a supported generation
  EXPECT_EQ(o.device_as, 0);
  EXPECT_TRUE(set_override(o, "BSVD_DEVICE_AS", nullptr));
  EXPECT_EQ(o.device_as, 0);
}

// Without clusters the pivoted factorization runs on one block, and the
// automatic preconditioning (which needs them) stays off; an explicit one
// still runs.
TEST(PlanArch, NoClustersMeansQrcpOnOneBlock) {
  // 1000 matrices of 256^2 d: preconditioned automatically on the H100
  const Plan h = plan_on(h100(), 'd', 1000, 256, 256);
  ASSERT_TRUE(h.precondition_auto);
  if (h.precondition) {
    ASSERT_NE(h.find(Route::kQrcp), nullptr);
    EXPECT_TRUE(h.find(Route::kQrcp)->qr.cluster);
  }
  for (const DeviceDesc &d : {a100(), rtx4090()}) {
    const Plan p = plan_on(d, 'd', 1000, 256, 256);
    EXPECT_FALSE(p.precondition);
    ASSERT_NE(p.find(Route::kGram), nullptr); // (decision 0022; no cluster needed)
    EXPECT_NE(plan_on(d, 'd', 10, 256, 256).find(Route::kBlocked), nullptr);
    Config on;
    on.precondition = 1;
    const Plan q = plan_on(d, 'd', 1000, 256, 256, on);
    ASSERT_NE(q.find(Route::kQrcp), nullptr);
    EXPECT_FALSE(q.find(Route::kQrcp)->qr.cluster);
    EXPECT_NE(explain(q).find("on one block"), std::string::npos) << explain(q);
  }
  // An H100 told it is an sm_80 plans as one.
  DeviceDesc as80 = h100();
  device_as(as80, 80);
  Config on;
  on.precondition = 1;
  const Plan q = plan_on(as80, 'd', 1000, 256, 256, on);
  ASSERT_NE(q.find(Route::kQrcp), nullptr);
  EXPECT_FALSE(q.find(Route::kQrcp)->qr.cluster);
}

// Less shared memory per block: the fused kernel takes fewer columns, and
// the matrices it cannot hold go to the blocked path.
TEST(PlanArch, SmallerSharedMemoryShrinksTheFusedReach) {
  // d 80^2 with vectors: about 102 KB, fits 163 and 227 KiB, not 99
  EXPECT_EQ(plan_on(h100(), 'd', 100, 80, 80).groups[0].route, Route::kFused);
  EXPECT_EQ(plan_on(rtx4090(), 'd', 100, 80, 80).groups[0].route, Route::kBlocked);
  EXPECT_EQ(plan_on(rtx4090(), 'd', 100, 48, 48).groups[0].route, Route::kFused);
  // z 100^2: fused nowhere at this size with vectors beyond 163 KiB
  EXPECT_EQ(plan_on(a100(), 'z', 100, 100, 100).groups[0].route, Route::kBlocked);
}

// Where the warp eigensolver plan does not fit a block (z on 99 KiB GPUs),
// the rule takes the 128-thread plan, also when the warp plan is forced.
TEST(PlanArch, WarpPlanOnlyWhereItFits) {
  const Plan p = plan_on(rtx4090(), 'z', 2000, 256, 256);
  EXPECT_FALSE(p.tuning.blocked.warp_fits[prec_index('z')]);
  EXPECT_TRUE(p.tuning.blocked.warp_fits[prec_index('d')]);
  for (long pairs : {8L, 1000L, 100000L})
    EXPECT_NE(evd_threads(p.tuning, 'z', pairs, true), 32) << pairs;
  EXPECT_EQ(evd_threads(p.tuning, 'd', 100000, true), 32);
  Tuning forced = p.tuning;
  forced.blocked.evd_threads_forced = 32;
  EXPECT_EQ(evd_threads(forced, 'z', 100000, true), 128);
  EXPECT_EQ(evd_threads(forced, 'd', 100000, true), 32);
  SweepCounts c;
  c.gram_pairs = 100000;
  EXPECT_NE(plan_sweep(p.tuning, 'z', c).evd_threads, 32);
  // on the H100 the warp plan stays
  const Plan h = plan_on(h100(), 'z', 2000, 256, 256);
  EXPECT_EQ(evd_threads(h.tuning, 'z', 100000, true), 32);
}

// `bsvd plan` names the device, its facts and the table.
TEST(PlanArch, ExplainNamesTheDeviceFactsAndTable) {
  const std::string h = explain(plan_on(h100(), 'd', 10, 32, 32));
  for (const char *s : {"GPU 0 NVIDIA H100 80GB HBM3", "sm_90", "132 SMs", "227 KiB shared memory",
                        "clusters", "FP64 1/2", "L2 50 MiB", tuning_table(9, 0).name})
    EXPECT_NE(h.find(s), std::string::npos) << s << " in\n" << h;
  DeviceDesc as80 = h100();
  device_as(as80, 80);
  const std::string a = explain(plan_on(as80, 'd', 10, 32, 32));
  for (const char *s : {"sm_80 as set by BSVD_DEVICE_AS; the GPU is sm_90", "163 KiB",
                        "no clusters", "sm_80 fallback"})
    EXPECT_NE(a.find(s), std::string::npos) << s << " in\n" << a;
}
