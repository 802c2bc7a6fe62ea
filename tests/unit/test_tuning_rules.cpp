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
// pairs each; tuning.hpp's comment and docs/perf/wcycle.md), the plan that
// was fastest there.
TEST(TuningRules, EvdPlanRuleMatchesTheMeasuredBestPlans) {
  EnvGuard a("BSVD_TLP_THRESHOLD"), b("BSVD_TLP_BLOCK_THRESHOLD"), c("BSVD_EVD_THREADS");
  struct Row { long pairs; int s, d, c, z; };
  const Row best[] = {{8, 256, 256, 256, 256},     {64, 256, 256, 256, 256},
                      {256, 256, 256, 256, 256},   {512, 128, 128, 128, 128},
                      {1024, 32, 32, 128, 128},    {2048, 32, 32, 128, 128},
                      {8192, 32, 32, 128, 128}};
  for (const Row &r : best) {
    SCOPED_TRACE(r.pairs);
    EXPECT_EQ(choose_evd_threads(r.pairs, 's'), r.s);
    EXPECT_EQ(choose_evd_threads(r.pairs, 'd'), r.d);
    EXPECT_EQ(choose_evd_threads(r.pairs, 'c'), r.c);
    EXPECT_EQ(choose_evd_threads(r.pairs, 'z'), r.z);
  }
  // The crossovers sit between the measured points: 128 threads from 363
  // pairs (tau_block 46341), the warp plan from 725 (s, d: tau_warp 23170).
  EXPECT_EQ(choose_evd_threads(362, 'd'), 256);
  EXPECT_EQ(choose_evd_threads(363, 'd'), 128);
  EXPECT_EQ(choose_evd_threads(724, 'd'), 128);
  EXPECT_EQ(choose_evd_threads(725, 'd'), 32);
}

TEST(TuningRules, EvdPlanOverrides) {
  EnvGuard a("BSVD_TLP_THRESHOLD"), b("BSVD_TLP_BLOCK_THRESHOLD"), c("BSVD_EVD_THREADS");
  b.set("1000000"); // 128 threads only from 7813 pairs
  EXPECT_EQ(choose_evd_threads(512, 'z'), 256);
  a.set("1024"); // the warp plan from 32 pairs
  EXPECT_EQ(choose_evd_threads(32, 'z'), 32);
  EXPECT_EQ(choose_evd_threads(31, 'z'), 256);
  c.set("128");
  EXPECT_EQ(choose_evd_threads(1, 'd'), 128);
  c.set("64"); // not a plan: ignored
  EXPECT_EQ(choose_evd_threads(31, 'z'), 256);
  a.set("-5"); // not positive: the default
  EXPECT_EQ(tlp_warp_threshold('d'), 23170);
}
