// Numerically null columns: U must stay orthonormal when the iteration
// leaves columns whose squared norm underflows (they are skipped), as on
// rank-deficient SuiteSparse matrices (Erdos971 failed T2 before the
// finish step completed such columns).
#include <bsvd/svd.hpp>

#include "cpu/jacobi.hpp"
#include "testing/generate.hpp"
#include "testing/lapack_ref.hpp"
#include "testing/metrics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <random>
#include <string>
#include <type_traits>
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
      if (j % 3 == 2)
        A[i + j * m] = A[i + (j - 1) * m]; // duplicate
      else
        A[i + j * m] = T(R(bit(g)));
      if (j % 5 == 4) A[i + j * m] *= R(std::numeric_limits<R>::min()) * R(1e3); // tiny column
    }
  bsvd::Result<T> r;
  bsvd_options_t o = bsvd::default_options();
  o.backend = BSVD_BACKEND_CPU;
  ASSERT_EQ(bsvd::svd(bsvd::Job::Vectors, m, n, A.data(), 1, r, o), 0) << bsvd_last_error();
  std::vector<double> ref(n);
  ASSERT_EQ(bsvd::testing::reference_singular_values<T>(m, n, A.data(), m, ref.data()), 0);
  const auto q = bsvd::testing::accuracy<T, R>(m, n, A.data(), m, r.S.data(), r.U.data(), m,
                                               r.V.data(), n, ref.data());
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

// complete_basis directly, in rounds of b = 1 (one at a time), 3 and 16
// candidates: the completed U stays orthonormal, the non-null columns are
// untouched. "pairs": each column of D mixes two rows ((e_2t - e_2t+1) / sqrt 2)
// so that the two candidates of a pair project onto the same direction:
// a round that takes both must reject the second (what is left of it is
// rounding noise), else U loses orthogonality. "units": D holds unit
// vectors, so rows of residual 0 sit among the candidates. "random": a
// Haar-distributed orthonormal D (testing::haar_orthonormal), nulls
// scattered.
template <class T> double orthogonality(int m, int n, const T *U) {
  double worst = 0;
  for (int a = 0; a < n; ++a)
    for (int c = 0; c <= a; ++c) {
      std::complex<double> d = 0;
      for (int i = 0; i < m; ++i)
        d += std::conj(std::complex<double>(U[i + size_t(a) * m])) *
             std::complex<double>(U[i + size_t(c) * m]);
      worst = std::max(worst, std::abs(d - (a == c ? 1.0 : 0.0)));
    }
  return worst;
}

TYPED_TEST(CpuNullColumns, CompletionRoundsStayOrthonormal) {
  using T = TypeParam;
  using R = bsvd::real_t<T>;
  const double u = double(std::numeric_limits<R>::epsilon()) / 2;
  std::mt19937 g(5);
  struct Case {
    const char *name;
    int mw, nw;
  };
  for (Case cs : {Case{"pairs", 16, 16}, Case{"units", 40, 40}, Case{"random", 70, 50},
                  Case{"random wide D", 90, 24}})
    for (int b : {1, 3, 16}) {
      SCOPED_TRACE(::testing::Message() << cs.name << " " << cs.mw << "x" << cs.nw << " b " << b);
      const int mw = cs.mw, nw = cs.nw;
      std::vector<T> U(size_t(mw) * nw, T(0));
      std::vector<char> null(size_t(nw), 1);
      const std::string name = cs.name;
      if (name == "pairs") {
        for (int t = 0; t < mw / 2; t += 2) { // D: every other pair column; 1, 3, .. null
          U[2 * t + size_t(t) * mw] = T(R(1) / std::sqrt(R(2)));
          U[2 * t + 1 + size_t(t) * mw] = T(R(-1) / std::sqrt(R(2)));
          null[t] = 0;
        }
        // The rows 2t, 2t+1 of the odd t hold nothing: residual 1, taken
        // first; those of the even t have residual 1/2 each (ties go to the
        // smaller row: both rows of a pair in one round) and project onto
        // the same direction (e_2t + e_2t+1) / 2.
      } else if (name == "units") {
        for (int c = 0; c < nw; ++c)
          if (c % 4 != 1) {
            U[(c * 7) % mw + size_t(c) * mw] = T(1);
            null[c] = 0;
          }
      } else {
        const int nd = nw / 2;
        using D = std::conditional_t<std::is_same_v<T, R>, double, std::complex<double>>;
        std::vector<D> Qd(size_t(mw) * nd);
        bsvd::testing::haar_orthonormal<D>(mw, nd, g(), Qd.data(), mw);
        std::vector<T> Q(Qd.size());
        for (size_t e = 0; e < Qd.size(); ++e) {
          if constexpr (std::is_same_v<T, R>)
            Q[e] = T(R(Qd[e]));
          else
            Q[e] = T(R(Qd[e].real()), R(Qd[e].imag()));
        }
        std::vector<int> cols(nw);
        for (int c = 0; c < nw; ++c) cols[c] = c;
        std::shuffle(cols.begin(), cols.end(), g);
        for (int k = 0; k < nd; ++k) {
          std::copy(Q.begin() + size_t(k) * mw, Q.begin() + size_t(k + 1) * mw,
                    U.begin() + size_t(cols[k]) * mw);
          null[cols[k]] = 0;
        }
      }
      const std::vector<T> before = U;
      std::vector<T> work(bsvd::detail::completion_work(mw, nw, b));
      bsvd::detail::complete_basis(mw, nw, U.data(), null.data(), b, work.data());
      const double orth = orthogonality(mw, nw, U.data());
      EXPECT_LE(orth, 4.0 * mw * u) << "||U^H U - I||_max";
      for (int c = 0; c < nw; ++c)
        if (!null[c])
          for (int i = 0; i < mw; ++i)
            ASSERT_EQ(U[i + size_t(c) * mw], before[i + size_t(c) * mw]) << "column " << c;
    }
}

// The round width of the blocked path: up to kCompletionMaxBlock, what fits
// kCompletionBytes, and 1 (the one-at-a-time rule) on the unblocked path.
TEST(CompletionWidth, FitsItsBudget) {
  using bsvd::detail::completion_width;
  EXPECT_EQ(completion_width<double>(500, 500, true), 12); // 96 KiB / (1000 * 8)
  EXPECT_EQ(completion_width<double>(150, 120, true), 16);
  EXPECT_EQ(completion_width<std::complex<double>>(4096, 4096, true), 1);
  EXPECT_EQ(bsvd::detail::completion_block(8192, 8192, 16), 0);
  EXPECT_EQ(completion_width<std::complex<double>>(8192, 8192, true), 1);
  EXPECT_EQ(completion_width<float>(500, 500, false), 1);
}

} // namespace
