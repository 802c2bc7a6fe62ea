// The option table (src/core/options.hpp) and its public description
// (bsvd_option_info, bsvd_option_set / _get): every row names a field of
// bsvd_options_t, bsvd_options_init gives each row's init, the checks of a
// call reject exactly what the row's range rejects, and Config resolves
// the defaults.
#include "core/api_common.hpp"
#include "core/options.hpp"

#include <bsvd/bsvd.h>

#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace {

using namespace bsvd::detail;

TEST(Options, RowsDescribeTheStruct) {
  ASSERT_EQ(bsvd_option_count(), BSVD_OPTION_COUNT);
  EXPECT_EQ(bsvd_option_info(-1), nullptr);
  EXPECT_EQ(bsvd_option_info(BSVD_OPTION_COUNT), nullptr);
  bsvd_options_t o;
  bsvd_options_init(&o);
  std::set<std::string> names;
  for (int i = 0; i < bsvd_option_count(); ++i) {
    const bsvd_option_info_t *r = bsvd_option_info(i);
    ASSERT_NE(r, nullptr);
    EXPECT_TRUE(names.insert(r->name).second) << "row " << i << " repeats " << r->name;
    EXPECT_EQ(bsvd_option_find(r->name), i);
    EXPECT_LE(r->lo, r->init) << r->name;
    EXPECT_LE(r->init, r->hi) << r->name;
    EXPECT_GT(std::strlen(r->help), 10u) << r->name;
    EXPECT_EQ(r->kind == BSVD_OPTION_ENUM, r->value_name != nullptr) << r->name;
    if (r->kind == BSVD_OPTION_ENUM) {
      EXPECT_EQ(r->lo, 0) << r->name;
      for (int v = 0; v <= int(r->hi); ++v) EXPECT_NE(r->value_name(v), nullptr) << r->name;
      EXPECT_EQ(r->value_name(int(r->hi) + 1), nullptr) << r->name << ": hi below the count";
    }
    double v = -1;
    ASSERT_EQ(bsvd_option_get(&o, i, &v), 0);
    EXPECT_EQ(v, r->init) << r->name << ": bsvd_options_init";
  }
  EXPECT_EQ(bsvd_option_find("stream"), -1); // a per-call field, not a row
  EXPECT_EQ(bsvd_option_find(nullptr), -1);
}

TEST(Options, SetAcceptsTheRangeAndNothingElse) {
  for (int i = 0; i < bsvd_option_count(); ++i) {
    const bsvd_option_info_t &r = *bsvd_option_info(i);
    bsvd_options_t o;
    bsvd_options_init(&o);
    for (double x : {r.lo, r.hi}) {
      ASSERT_EQ(bsvd_option_set(&o, i, x), 0) << r.name << " = " << x << ": " << bsvd_last_error();
      double back = 0;
      ASSERT_EQ(bsvd_option_get(&o, i, &back), 0);
      EXPECT_EQ(back, x) << r.name;
    }
    bsvd_options_t before = o;
    std::vector<double> bad = {std::nan(""), r.lo - 1, std::nextafter(r.hi, HUGE_VAL)};
    if (r.kind != BSVD_OPTION_REAL) bad.push_back(r.lo + 0.5);
    for (double x : bad) {
      EXPECT_EQ(bsvd_option_set(&o, i, x), -3) << r.name << " = " << x;
      EXPECT_NE(std::string(bsvd_last_error()).find(r.name), std::string::npos)
          << bsvd_last_error();
      EXPECT_EQ(std::memcmp(&o, &before, sizeof o), 0) << r.name << ": a refused set wrote";
    }
  }
  bsvd_options_t o;
  bsvd_options_init(&o);
  double v = 0;
  EXPECT_EQ(bsvd_option_set(nullptr, 0, 0), -1);
  EXPECT_EQ(bsvd_option_set(&o, BSVD_OPTION_COUNT, 0), -2);
  EXPECT_EQ(bsvd_option_get(nullptr, 0, &v), -1);
  EXPECT_EQ(bsvd_option_get(&o, -1, &v), -2);
  EXPECT_EQ(bsvd_option_get(&o, 0, nullptr), -3);
}

// A field written outside its row's range is refused by the call, naming
// it (check_options), and writes nothing.
TEST(Options, CallsRejectAFieldOutsideItsRange) {
  for (int i = 0; i < bsvd_option_count(); ++i) {
    const bsvd_option_info_t &r = *bsvd_option_info(i);
    // (An enum below 0 is no value of its C type: not tested.)
    for (double x : {r.lo - 1, r.kind == BSVD_OPTION_REAL ? 1.0 : r.hi + 1}) {
      if ((r.kind == BSVD_OPTION_ENUM && x < 0) || x > INT_MAX) continue;
      bsvd_options_t o;
      bsvd_options_init(&o);
      if (i != bsvd_option_find("backend")) o.backend = BSVD_BACKEND_CPU;
      set_option_value(o, i, x); // bypasses bsvd_option_set's check
      std::vector<double> A = {1, 2, 3, 4}, S(2, -7.0);
      int info = 5;
      const bsvd_status_t st =
          bsvd_dgesvj_strided_batched(BSVD_JOB_VALUES, 2, 2, A.data(), 2, 4, S.data(), 2, nullptr,
                                      2, 4, nullptr, 2, 4, &info, nullptr, 1, &o);
      EXPECT_EQ(st, -18) << r.name << " = " << x;
      EXPECT_NE(std::string(bsvd_last_error()).find(std::string("opts->") + r.name),
                std::string::npos)
          << bsvd_last_error();
      EXPECT_EQ(info, 5) << r.name << ": a refused call wrote info";
      EXPECT_EQ(S[0], -7.0) << r.name << ": a refused call wrote S";
    }
  }
}

TEST(Options, ConfigResolvesTheDefaults) {
  bsvd_options_t o;
  bsvd_options_init(&o);
  const Config c = make_config(o);
  const Config d;
  EXPECT_EQ(c.max_sweeps, kDefaultMaxSweeps);
  EXPECT_EQ(c.wcycle_blocks, 1);
  EXPECT_EQ(c.wcycle_sweeps, 1);
  EXPECT_EQ(c.eig_sweeps, BSVD_EIG_SWEEPS_AUTO);
  EXPECT_EQ(c.max_sweeps, d.max_sweeps); // a default Config is a default call's
  EXPECT_EQ(c.wcycle_blocks, d.wcycle_blocks);
  o.max_sweeps = 7;
  o.wcycle_blocks = 3;
  EXPECT_EQ(make_config(o).max_sweeps, 7);
  EXPECT_EQ(make_config(o).wcycle_blocks, 3);
}

} // namespace
