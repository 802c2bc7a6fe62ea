// Numerically null columns: U must stay orthonormal when the iteration
// leaves columns whose squared norm underflows (they are skipped), as on
// rank-deficient SuiteSparse matrices (Erdos971 failed T2 before the
// finish step completed such columns).
#include <bsvd/svd.hpp>

#include "testing/lapack_ref.hpp"
#include "testing/metrics.hpp"

#include <gtest/gtest.h>

#include <complex>
#include <random>
#include <vector>

namespace {

template <class T> class CpuNullColumns : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(CpuNullColumns, Types);

TYPED_TEST(CpuNullColumns, TinyAndDuplicateColumnsKeepUOrthonormal) {
  using T = TypeParam;
  using R = bsvd::real_t<T>;
  const int m = 40, n = 24;
  std::mt19937 g(3);
  std::uniform_int_distribution<int> bit(0, 1);
  std::vector<T> A(size_t(m) * n);
  // A 0/1 pattern matrix (like a graph adjacency) with duplicated columns
  // and columns scaled to the edge of underflow: rank far below n.
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      if (j % 3 == 2) A[i + j * m] = A[i + (j - 1) * m];               // duplicate
      else A[i + j * m] = T(R(bit(g)));
      if (j % 5 == 4) A[i + j * m] *= R(std::numeric_limits<R>::min()) * R(1e3); // tiny column
    }
  bsvd::Result<T> r;
  bsvd_options_t o = bsvd::default_options();
  o.backend = BSVD_BACKEND_CPU;
  ASSERT_EQ(bsvd::svd(bsvd::Job::Vectors, m, n, A.data(), 1, r, o), 0) << bsvd_last_error();
  std::vector<double> ref(n);
  ASSERT_EQ(bsvd::testing::reference_singular_values<T>(m, n, A.data(), m, ref.data()), 0);
  const auto q = bsvd::testing::accuracy<T, R>(m, n, A.data(), m, r.S.data(), r.U.data(), m, r.V.data(), n,
                                               ref.data());
  EXPECT_TRUE(q.pass()) << "T1 " << q.t1 << " T2u " << q.t2u << " T2v " << q.t2v << " T3 " << q.t3;
  EXPECT_EQ(r.info[0], 0);
}

// Rank 2 of 150 x 120 (118 null columns to complete, the case of the
// graph matrices that made the completion the GPU finish's largest cost):
// the pivoted completion (complete_basis: the row with the largest
// residual, one candidate per column) must leave U orthonormal on both the
// unblocked and the blocked variant, and a wide rank-2 matrix (completion
// on the V side of A^H) as well.
TYPED_TEST(CpuNullColumns, LowRankCompletesUAndV) {
  using T = TypeParam;
  using R = bsvd::real_t<T>;
  std::mt19937 g(11);
  std::normal_distribution<double> nd(0.0, 1.0);
  for (auto [m, n] : std::vector<std::pair<int, int>>{{150, 120}, {60, 90}})
    for (bsvd_variant_t var : {BSVD_VARIANT_UNBLOCKED, BSVD_VARIANT_BLOCKED}) {
      SCOPED_TRACE(::testing::Message() << m << "x" << n << " variant " << int(var));
      std::vector<T> A(size_t(m) * n, T(0));
      for (int r = 0; r < 2; ++r) { // A = x1 y1^T + x2 y2^T
        std::vector<T> x(m), y(n);
        for (auto &v : x) v = T(R(nd(g)));
        for (auto &v : y) v = T(R(nd(g)));
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < m; ++i) A[i + size_t(j) * m] += x[i] * y[j];
      }
      bsvd::Result<T> r;
      bsvd_options_t o = bsvd::default_options();
      o.backend = BSVD_BACKEND_CPU;
      o.variant = var;
      ASSERT_EQ(bsvd::svd(bsvd::Job::Vectors, m, n, A.data(), 1, r, o), 0) << bsvd_last_error();
      const int k = std::min(m, n);
      std::vector<double> ref(k);
      ASSERT_EQ(bsvd::testing::reference_singular_values<T>(m, n, A.data(), m, ref.data()), 0);
      const auto q = bsvd::testing::accuracy<T, R>(m, n, A.data(), m, r.S.data(), r.U.data(), m,
                                                   r.V.data(), n, ref.data());
      EXPECT_TRUE(q.pass()) << "T1 " << q.t1 << " T2u " << q.t2u << " T2v " << q.t2v << " T3 "
                            << q.t3;
      EXPECT_EQ(r.info[0], 0);
    }
}

} // namespace
