// The Gram preconditioning on the CPU (opts.precondition = 2; gram.cpp):
// V0 from the single-precision Gram matrix's eigenvectors, Jacobi on W V0,
// V = V0 V_J. The CPU twin of the GPU's path cuda-gram.
#include "test_cpu_helpers.hpp"

#include "testing/io.hpp"

using namespace bsvd_cpu_test;
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
  expect_values_only_same_s<TypeParam>(gram_cfg(BSVD_VARIANT_BLOCKED), 19);
}

// Each edge case alone (overflow and underflow: the single-precision copy is
// scaled to max |f_ij| in [1/2, 1)).
TYPED_TEST(CpuGram, EdgeCases) { expect_edge_cases<TypeParam>(gram_cfg(BSVD_VARIANT_BLOCKED), 37); }

} // namespace
