// The generators of the accuracy suite: prescribed singular values, Haar
// factors, determinism, edge cases.
#include "testing/generate.hpp"
#include "testing/lapack_ref.hpp"
#include "testing/metrics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <vector>

namespace bt = bsvd::testing;

namespace {

template <class T> struct RealOf { using type = T; };
template <class R> struct RealOf<std::complex<R>> { using type = R; };

template <class T> double re(const T &x) {
  if constexpr (std::is_arithmetic_v<T>)
    return double(x);
  else
    return double(x.real());
}
template <class T> double im(const T &x) {
  if constexpr (std::is_arithmetic_v<T>)
    return 0.0;
  else
    return double(x.imag());
}

const std::pair<int, int> kShapes[] = {{1, 1}, {1, 6},   {6, 1},   {2, 2},  {7, 5},
                                       {5, 7}, {20, 20}, {33, 17}, {16, 40}};

template <class T> class TestingGenerate : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(TestingGenerate, Types);

} // namespace

TEST(TestingGenerateNames, RoundTrip) {
  const char *fam[] = {"random", "arith", "cluster0", "cluster1", "logrand", "geo"};
  ASSERT_EQ(bt::all_families().size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    bt::Family f;
    ASSERT_TRUE(bt::parse_family(fam[i], f));
    EXPECT_EQ(f, bt::all_families()[i]);
    EXPECT_STREQ(bt::family_name(f), fam[i]);
  }
  const char *edges[] = {"zero", "identity", "rankdef", "overflow", "underflow", "nan", "inf"};
  ASSERT_EQ(bt::all_edges().size(), 8u);
  for (size_t i = 0; i < 7; ++i) {
    bt::Edge e;
    ASSERT_TRUE(bt::parse_edge(edges[i], e));
    EXPECT_EQ(e, bt::all_edges()[i]);
    EXPECT_STREQ(bt::edge_name(e), edges[i]);
  }
  bt::Family f;
  bt::Edge e;
  EXPECT_FALSE(bt::parse_family("Random", f));
  EXPECT_FALSE(bt::parse_family("", f));
  EXPECT_FALSE(bt::parse_edge("nans", e));
  EXPECT_EQ(bt::default_kappa<float>(), 1e5);
  EXPECT_EQ(bt::default_kappa<std::complex<float>>(), 1e5);
  EXPECT_EQ(bt::default_kappa<double>(), 1e10);
  EXPECT_EQ(bt::default_kappa<std::complex<double>>(), 1e10);
}

TEST(TestingGenerateSigma, Formulas) {
  const double kappa = 1e4;
  for (bt::Family f : bt::all_families()) {
    if (f == bt::Family::Random) {
      EXPECT_TRUE(bt::family_sigma(f, 5, kappa, 1).empty());
      continue;
    }
    EXPECT_EQ(bt::family_sigma(f, 1, kappa, 3), std::vector<double>{1.0}) << bt::family_name(f);
    EXPECT_TRUE(bt::family_sigma(f, 0, kappa, 3).empty());
    for (int k : {2, 3, 10, 57}) {
      const auto s = bt::family_sigma(f, k, kappa, 7);
      ASSERT_EQ(int(s.size()), k);
      EXPECT_EQ(s.front(), 1.0) << bt::family_name(f);
      EXPECT_NEAR(s.back(), 1.0 / kappa, 1e-15) << bt::family_name(f);
      for (int i = 1; i < k; ++i) EXPECT_LE(s[i], s[i - 1]);
    }
  }
  const int k = 5;
  auto ar = bt::family_sigma(bt::Family::Arith, k, kappa, 0);
  auto c0 = bt::family_sigma(bt::Family::Cluster0, k, kappa, 0);
  auto c1 = bt::family_sigma(bt::Family::Cluster1, k, kappa, 0);
  auto ge = bt::family_sigma(bt::Family::Geo, k, kappa, 0);
  for (int i = 0; i < k; ++i) {
    EXPECT_NEAR(ar[i], 1.0 - (i / 4.0) * (1.0 - 1.0 / kappa), 1e-15);
    EXPECT_EQ(c0[i], i == 0 ? 1.0 : 1.0 / kappa);
    EXPECT_EQ(c1[i], i < k - 1 ? 1.0 : 1.0 / kappa);
    EXPECT_NEAR(ge[i], std::pow(kappa, -i / 4.0), 1e-15 * ge[i] * 10);
  }
  // logrand: logs roughly uniform on [log(1/kappa), 0]
  auto lr = bt::family_sigma(bt::Family::Logrand, 2000, kappa, 11);
  double mean = 0;
  for (double s : lr) mean += std::log10(s);
  mean /= lr.size();
  EXPECT_NEAR(mean, -2.0, 0.15);
  EXPECT_EQ(lr, bt::family_sigma(bt::Family::Logrand, 2000, kappa, 11));
  EXPECT_NE(lr, bt::family_sigma(bt::Family::Logrand, 2000, kappa, 12));
}

// The singular values of the generated matrix are the prescribed ones, to
// the rounding of U diag(sigma) V^H to T.
TYPED_TEST(TestingGenerate, PrescribedSingularValues) {
  using T = TypeParam;
  const double u = bt::unit_roundoff<T>();
  const double kappa = bt::default_kappa<T>();
  for (bt::Family f : bt::all_families()) {
    if (f == bt::Family::Random) continue;
    for (auto [m, n] : kShapes) {
      const int lda = m + 3;
      std::vector<T> A(size_t(lda) * n, T(-7));
      std::vector<double> sigma;
      bt::generate<T>(f, m, n, kappa, 1234 + m * 100 + n, A.data(), lda, &sigma);
      const int k = std::min(m, n);
      ASSERT_EQ(int(sigma.size()), k);
      EXPECT_EQ(sigma, bt::family_sigma(f, k, kappa, 1234 + m * 100 + n));
      for (int j = 0; j < n; ++j) // padding untouched
        for (int i = m; i < lda; ++i) ASSERT_EQ(A[i + size_t(j) * lda], T(-7));
      std::vector<double> s(k);
      ASSERT_EQ(bt::reference_singular_values<T>(m, n, A.data(), lda, s.data()), 0);
      // rounding A to T perturbs sigma by at most ||dA||_2 <= ||dA||_F
      // <= u sqrt(mn) max|a_ij| (<= u ||A||_F); plus the double-precision
      // construction (~ k u_double).
      const double tol = std::is_same_v<typename RealOf<T>::type, float>
                             ? 2.0 * u * std::sqrt(double(k)) + 1e-13
                             : 100.0 * u * std::max(m, n);
      for (int i = 0; i < k; ++i)
        EXPECT_NEAR(s[i], sigma[i], tol)
            << bt::family_name(f) << " " << m << "x" << n << " i=" << i;
    }
  }
}

TYPED_TEST(TestingGenerate, RandomFamilyEntries) {
  using T = TypeParam;
  const int m = 31, n = 17;
  std::vector<T> A(size_t(m) * n);
  std::vector<double> sigma{1, 2};
  bt::generate<T>(bt::Family::Random, m, n, 0, 99, A.data(), m, &sigma);
  EXPECT_TRUE(sigma.empty());
  double mean = 0, lo = 1, hi = -1;
  for (const T &a : A) {
    for (double x : {re(a), im(a)}) {
      EXPECT_GE(x, -1.0);
      EXPECT_LT(x, 1.0);
    }
    lo = std::min(lo, re(a));
    hi = std::max(hi, re(a));
    mean += re(a);
  }
  mean /= A.size();
  EXPECT_NEAR(mean, 0.0, 0.1);
  EXPECT_LT(lo, -0.9);
  EXPECT_GT(hi, 0.9);
  if constexpr (!std::is_arithmetic_v<T>) {
    double imsum = 0;
    for (const T &a : A) imsum += std::abs(im(a));
    EXPECT_GT(imsum, 0.3 * A.size()); // E|x| = 1/2
  }
}

TYPED_TEST(TestingGenerate, Deterministic) {
  using T = TypeParam;
  const int m = 13, n = 9;
  for (bt::Family f : bt::all_families()) {
    std::vector<T> A(size_t(m) * n), B(A.size()), C(A.size());
    bt::generate<T>(f, m, n, 1e3, 42, A.data(), m);
    bt::generate<T>(f, m, n, 1e3, 42, B.data(), m);
    bt::generate<T>(f, m, n, 1e3, 43, C.data(), m);
    EXPECT_EQ(0, std::memcmp(A.data(), B.data(), A.size() * sizeof(T))) << bt::family_name(f);
    EXPECT_NE(0, std::memcmp(A.data(), C.data(), A.size() * sizeof(T))) << bt::family_name(f);
  }
  for (bt::Edge e : bt::all_edges()) {
    std::vector<T> A(size_t(m) * n), B(A.size());
    bt::generate_edge<T>(e, m, n, 5, A.data(), m);
    bt::generate_edge<T>(e, m, n, 5, B.data(), m);
    EXPECT_EQ(0, std::memcmp(A.data(), B.data(), A.size() * sizeof(T))) << bt::edge_name(e);
  }
}

TEST(TestingGenerateFactors, OrthonormalAndExact) {
  for (auto [m, n] : kShapes) {
    for (bt::Family f : {bt::Family::Arith, bt::Family::Geo}) {
      std::vector<double> U, V, sigma;
      bt::generate_factors<double>(f, m, n, 1e10, 8, U, sigma, V);
      const int k = std::min(m, n);
      std::vector<double> A(size_t(m) * n);
      bt::generate<double>(f, m, n, 1e10, 8, A.data(), m);
      // The factors reproduce A and are orthonormal (sorted sigma: t4 = 0).
      const auto r = bt::accuracy<double, double>(m, n, A.data(), m, sigma.data(), U.data(), m,
                                                  V.data(), n, sigma.data());
      EXPECT_LT(r.t1, 5.0) << m << "x" << n;
      EXPECT_LT(r.t2u, 5.0 * std::sqrt(double(k)));
      EXPECT_LT(r.t2v, 5.0 * std::sqrt(double(k)));
      EXPECT_EQ(r.t3, 0.0);
      EXPECT_EQ(r.t4, 0.0);

      using Z = std::complex<double>;
      std::vector<Z> Uz, Vz, Az(size_t(m) * n);
      bt::generate_factors<Z>(f, m, n, 1e10, 8, Uz, sigma, Vz);
      bt::generate<Z>(f, m, n, 1e10, 8, Az.data(), m);
      const auto rz = bt::accuracy<Z, double>(m, n, Az.data(), m, sigma.data(), Uz.data(), m,
                                              Vz.data(), n, sigma.data());
      EXPECT_LT(rz.t1, 5.0);
      EXPECT_LT(rz.t2u, 5.0 * std::sqrt(double(k)));
      EXPECT_LT(rz.t2v, 5.0 * std::sqrt(double(k)));
    }
  }
  std::vector<double> U, V, s;
  EXPECT_THROW(bt::generate_factors<double>(bt::Family::Random, 3, 3, 1, 1, U, s, V),
               std::invalid_argument);
}

// The sign fix makes Q Haar: e.g. for 2 x 2 real Q, Q(0,0) = cos(theta) with
// theta uniform, so it is positive half of the time and its square has mean
// 1/2 (without the fix, Householder QR gives Q(0,0) < 0 always). For complex
// Q the phase of Q(0,0) is uniform.
TEST(TestingGenerateFactors, HaarSignFix) {
  const int trials = 4000;
  int positive = 0;
  double sq = 0;
  std::complex<double> phase_sum = 0;
  for (int t = 0; t < trials; ++t) {
    double Q[4];
    bt::haar_orthonormal<double>(2, 2, 1000 + t, Q, 2);
    positive += Q[0] > 0;
    sq += Q[0] * Q[0];
    std::complex<double> Z[9];
    bt::haar_orthonormal<std::complex<double>>(3, 3, 5000 + t, Z, 3);
    phase_sum += Z[0] / std::abs(Z[0]);
  }
  EXPECT_NEAR(double(positive) / trials, 0.5, 0.04);
  EXPECT_NEAR(sq / trials, 0.5, 0.03);
  EXPECT_LT(std::abs(phase_sum) / trials, 0.05);

  // Tall Q (m > k): orthonormal columns.
  std::vector<double> Q(50 * 7);
  bt::haar_orthonormal<double>(50, 7, 3, Q.data(), 50);
  for (int a = 0; a < 7; ++a)
    for (int b = 0; b < 7; ++b) {
      double s = 0;
      for (int i = 0; i < 50; ++i) s += Q[i + a * 50] * Q[i + b * 50];
      EXPECT_NEAR(s, a == b ? 1.0 : 0.0, 1e-14);
    }
}

TYPED_TEST(TestingGenerate, Edges) {
  using T = TypeParam;
  using R = typename RealOf<T>::type;
  for (auto [m, n] : kShapes) {
    const int k = std::min(m, n);
    const int lda = m + 1;
    std::vector<T> A(size_t(lda) * n);
    std::vector<double> s(k);
    auto at = [&](int i, int j) { return A[i + size_t(j) * lda]; };

    bt::generate_edge<T>(bt::Edge::Zero, m, n, 1, A.data(), lda);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) ASSERT_EQ(at(i, j), T(0));

    bt::generate_edge<T>(bt::Edge::Identity, m, n, 1, A.data(), lda);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) ASSERT_EQ(at(i, j), T(i == j ? 1 : 0));

    bt::generate_edge<T>(bt::Edge::RankDeficient, m, n, 1, A.data(), lda);
    ASSERT_EQ(bt::reference_singular_values<T>(m, n, A.data(), lda, s.data()), 0);
    const int r = std::max(1, k / 2);
    for (int i = 0; i < k; ++i) {
      if (i < r)
        EXPECT_GT(s[i], 0.09) << m << "x" << n;
      else
        EXPECT_LT(s[i], 50 * bt::unit_roundoff<T>()) << m << "x" << n << " i=" << i;
    }

    // Overflow: largest entry ~ 1e-2 max / sqrt(mn), sigma_1 finite.
    bt::generate_edge<T>(bt::Edge::Overflow, m, n, 1, A.data(), lda);
    double amax = 0;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) amax = std::max(amax, double(std::abs(at(i, j))));
    const double big = 1e-2 * double(std::numeric_limits<R>::max()) / std::sqrt(double(m) * n);
    EXPECT_NEAR(amax / big, 1.0, 1e-5);
    ASSERT_EQ(bt::reference_singular_values<T>(m, n, A.data(), lda, s.data()), 0);
    EXPECT_TRUE(std::isfinite(s[0]));
    EXPECT_LE(s[0], double(std::numeric_limits<R>::max()) * 1e-2 * (1 + 1e-6));

    // Underflow: largest entry ~ 1e3 min normal: normal, the rest tiny.
    bt::generate_edge<T>(bt::Edge::Underflow, m, n, 1, A.data(), lda);
    amax = 0;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) amax = std::max(amax, double(std::abs(at(i, j))));
    EXPECT_NEAR(amax / (1e3 * double(std::numeric_limits<R>::min())), 1.0, 1e-4);
    ASSERT_EQ(bt::reference_singular_values<T>(m, n, A.data(), lda, s.data()), 0);
    EXPECT_GT(s[0], 0.0);

    for (bt::Edge e : {bt::Edge::Nan, bt::Edge::Inf}) {
      bt::generate_edge<T>(e, m, n, 77, A.data(), lda);
      int bad = 0;
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
          const double x = re(at(i, j));
          if (e == bt::Edge::Nan ? std::isnan(x) : (std::isinf(x) && x > 0))
            ++bad;
          else
            EXPECT_TRUE(std::isfinite(x) && std::abs(x) <= 1.0);
          EXPECT_TRUE(std::isfinite(im(at(i, j))));
        }
      EXPECT_EQ(bad, 1) << bt::edge_name(e);
      EXPECT_LT(bt::reference_singular_values<T>(m, n, A.data(), lda, s.data()), 0);
      EXPECT_TRUE(std::isnan(s[0]));
    }
  }
}

TEST(TestingGenerateEdges, UnderflowHasDenormalsButNotOnly) {
  const int m = 40, n = 40;
  std::vector<double> A(m * n);
  bt::generate_edge<double>(bt::Edge::Underflow, m, n, 3, A.data(), m);
  int normal = 0, sub = 0;
  for (double a : A) {
    if (std::fpclassify(a) == FP_NORMAL) ++normal;
    if (std::fpclassify(a) == FP_SUBNORMAL) ++sub;
  }
  EXPECT_GT(normal, 0);
  EXPECT_GT(sub, 0);
}

TEST(TestingGenerateEdges, EmptyAndBadArguments) {
  double a = 5;
  bt::generate<double>(bt::Family::Geo, 0, 3, 1e3, 1, &a, 1);
  bt::generate_edge<double>(bt::Edge::Nan, 3, 0, 1, &a, 3);
  EXPECT_EQ(a, 5);
  EXPECT_THROW(bt::generate<double>(bt::Family::Geo, 3, 3, 1e3, 1, &a, 2), std::invalid_argument);
}
