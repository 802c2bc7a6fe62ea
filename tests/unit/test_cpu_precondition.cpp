// QR preconditioning on the CPU (opts.precondition = 1; solve_one.cpp,
// solve_preconditioned): A P = Q R with column pivoting, Jacobi on R^H,
// U = Q V_R, V = P U_R. The CPU twin of the GPU's path cuda-qrcp.
#include "test_cpu_helpers.hpp"

#include "testing/io.hpp"
#include "testing/lapack_ref.hpp"

using namespace bsvd_cpu_test;
using bsvd::testing::Family;

namespace {

template <class T> class CpuPrecondition : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(CpuPrecondition, Types);

Config pre_cfg(bsvd_variant_t variant) {
  Config c;
  c.variant = variant;
  c.precondition = 1;
  return c;
}

// T1-T4 on the six families, square, tall and wide, both variants. The
// permutation and Q are both exercised: a V without P or a U without Q
// fails T1.
TYPED_TEST(CpuPrecondition, FamiliesPassT1toT4) {
  using T = TypeParam;
  for (bsvd_variant_t v : {BSVD_VARIANT_UNBLOCKED, BSVD_VARIANT_BLOCKED})
    for (auto [m, n] :
         std::vector<std::pair<int, int>>{{40, 40}, {75, 33}, {33, 75}, {2, 2}, {9, 1}})
      for (Family f : bsvd::testing::all_families())
        worst_of<T>().add(check_family<T>(f, m, n, pre_cfg(v), 500 + m + 3 * n));
}

// Values only: the same S and sweeps as with vectors.
TYPED_TEST(CpuPrecondition, ValuesOnlySameS) {
  expect_values_only_same_s<TypeParam>(pre_cfg(BSVD_VARIANT_BLOCKED), 17);
}

// Each edge case alone, solved as the unpreconditioned solve would report it.
TYPED_TEST(CpuPrecondition, EdgeCases) {
  expect_edge_cases<TypeParam>(pre_cfg(BSVD_VARIANT_BLOCKED), 31);
}

// Rank 50 of 200 (columns 50.. repeat 0..): R's last 150 rows are the
// rounding residue, which shrinks by about u per step (the 2^e rescaling of
// the Householder steps), and R^H has 150 numerically null columns.
TYPED_TEST(CpuPrecondition, RepeatedColumns) {
  using T = TypeParam;
  const int m = 200, n = 200;
  std::vector<T> A(size_t(m) * n);
  bsvd::testing::generate<T>(Family::Cluster1, m, n, bsvd::testing::default_kappa<T>(), 48,
                             A.data(), m);
  for (int j = 50; j < n; ++j)
    for (int i = 0; i < m; ++i) A[i + size_t(j) * m] = A[i + size_t(j - 50) * m];
  const auto r = solve(m, n, A.data(), m, pre_cfg(BSVD_VARIANT_BLOCKED));
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.info, 0);
  std::vector<double> ref(n);
  ASSERT_EQ(bsvd::testing::reference_singular_values<T>(m, n, A.data(), m, ref.data()), 0);
  const auto ms = measure(m, n, A.data(), m, r, ref);
  EXPECT_LT(ms.r.worst(), kLimit) << ratios_str(ms);
}

// The point of it (HBJ Sec. 2): fewer sweeps on a slowly converging
// SuiteSparse matrix (dwt_193: 19 -> 9 with the blocked solver,
// docs/perf/raw/precondition-sweeps-cpu-2026-11-22.txt), same accuracy.
TEST(CpuPreconditionSweeps, FewerSweepsOnSuiteSparse) {
  bsvd::testing::DenseMatrix dm;
  std::string err;
  ASSERT_TRUE(bsvd::testing::read_matrix_market(
      bsvd::testing::default_matrix_dir() + "/dwt_193.mtx", dm, err))
      << err;
  const int m = dm.m, n = dm.n;
  Config plain;
  plain.variant = BSVD_VARIANT_BLOCKED;
  plain.block_size = 16;
  Config pre = plain;
  pre.precondition = 1;
  const auto a = solve(m, n, dm.a.data(), m, plain);
  const auto b = solve(m, n, dm.a.data(), m, pre);
  ASSERT_EQ(a.info, 0);
  ASSERT_EQ(b.info, 0);
  EXPECT_LE(b.sweeps, a.sweeps * 2 / 3) << "plain " << a.sweeps << ", preconditioned " << b.sweeps;
  std::vector<double> ref(std::min(m, n));
  ASSERT_EQ(bsvd::testing::reference_singular_values<double>(m, n, dm.a.data(), m, ref.data()), 0);
  const auto ms = measure(m, n, dm.a.data(), m, b, ref);
  EXPECT_LT(ms.worst(), kLimit) << ratios_str(ms);
}

} // namespace
