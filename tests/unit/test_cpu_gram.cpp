// The Gram preconditioning on the CPU (opts.precondition = 2; gram.cpp):
// V0 from the single-precision Gram matrix's eigenvectors, Jacobi on W V0,
// V = V0 V_J. The CPU twin of the GPU's path cuda-gram.
#include "test_cpu_helpers.hpp"

#include "testing/io.hpp"

using namespace bsvd_cpu_test;
using bsvd::testing::Edge;
using bsvd::testing::Family;

namespace {

template <class T> class CpuGram : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(CpuGram, Types);

Config gram_cfg(bsvd_variant_t variant) {
  Config c;
  c.variant = variant;
  c.precondition = 2;
  return c;
}

// T1-T4 on the six families, square, tall and wide, both variants: a V
// without V0 (or V0 not orthonormal) fails T1 or T2.
TYPED_TEST(CpuGram, FamiliesPassT1toT4) {
  using T = TypeParam;
  for (bsvd_variant_t v : {BSVD_VARIANT_UNBLOCKED, BSVD_VARIANT_BLOCKED})
    for (auto [m, n] :
         std::vector<std::pair<int, int>>{{40, 40}, {75, 33}, {33, 75}, {2, 2}, {9, 1}})
      for (Family f : bsvd::testing::all_families())
        worst_of<T>().add(check_family<T>(f, m, n, gram_cfg(v), 700 + m + 3 * n));
}

// What the preconditioning is for: a random matrix needs far fewer sweeps
// from W V0 (the CPU measurement of docs/design/gram.md: d 128^2 9-10
// plain, 3-4 preconditioned).
TEST(CpuGramSweeps, RandomMatricesNeedFewerSweeps) {
  const int n = 96;
  std::vector<double> A(size_t(n) * n);
  bsvd::testing::generate<double>(Family::Random, n, n, 1, 5, A.data(), n);
  Config plain;
  plain.variant = BSVD_VARIANT_BLOCKED;
  plain.precondition = -1;
  const auto p = solve(n, n, A.data(), n, plain, true);
  const auto g = solve(n, n, A.data(), n, gram_cfg(BSVD_VARIANT_BLOCKED), true);
  ASSERT_EQ(p.status, 0);
  ASSERT_EQ(g.status, 0);
  EXPECT_EQ(g.info, 0);
  EXPECT_LE(g.sweeps + 4, p.sweeps) << "plain " << p.sweeps << ", preconditioned " << g.sweeps;
  EXPECT_LT(measure(n, n, A.data(), n, g, {}).r.worst(), kLimit);
}

// Values only: the same S and sweeps as with vectors.
TYPED_TEST(CpuGram, ValuesOnlySameS) {
  using T = TypeParam;
  const int m = 60, n = 45;
  std::vector<T> A(size_t(m) * n);
  bsvd::testing::generate<T>(Family::Logrand, m, n, bsvd::testing::default_kappa<T>(), 19, A.data(),
                             m);
  const Config cfg = gram_cfg(BSVD_VARIANT_BLOCKED);
  const auto full = solve(m, n, A.data(), m, cfg, true);
  const auto vals = solve(m, n, A.data(), m, cfg, false);
  ASSERT_EQ(full.status, 0);
  ASSERT_EQ(vals.status, 0);
  EXPECT_EQ(full.S, vals.S);
  EXPECT_EQ(full.sweeps, vals.sweeps);
}

// Zero, identity, rank-deficient, overflow, underflow (the single-precision
// copy is scaled to max |f_ij| in [1/2, 1)), NaN, Inf, tiny columns.
TYPED_TEST(CpuGram, EdgeCases) {
  using T = TypeParam;
  const int m = 30, n = 20;
  for (Edge e : {Edge::Zero, Edge::Identity, Edge::RankDeficient, Edge::Overflow, Edge::Underflow,
                 Edge::Nan, Edge::Inf, Edge::TinyColumns}) {
    SCOPED_TRACE(testing::Message() << "edge " << int(e));
    std::vector<T> A(size_t(m) * n);
    bsvd::testing::generate_edge<T>(e, m, n, 37, A.data(), m);
    const auto r = solve(m, n, A.data(), m, gram_cfg(BSVD_VARIANT_BLOCKED));
    ASSERT_EQ(r.status, 0);
    if (e == Edge::Nan || e == Edge::Inf) {
      EXPECT_EQ(r.info, BSVD_INFO_NONFINITE);
      EXPECT_TRUE(std::isnan(double(r.S[0])));
      continue;
    }
    EXPECT_EQ(r.info, 0);
    const auto ms = measure(m, n, A.data(), m, r, {});
    EXPECT_LT(ms.r.worst(), kLimit) << ratios_str(ms);
  }
}

} // namespace
