// T1-T4 ratios, checked against LAPACK's SVD and deliberate corruptions;
// the LAPACK baselines (gesvd, gesvj) pass them.
#include "testing/generate.hpp"
#include "testing/lapack_ref.hpp"
#include "testing/metrics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

namespace bt = bsvd::testing;

namespace {

template <class T> struct RealOf { using type = T; };
template <class R> struct RealOf<std::complex<R>> { using type = R; };
template <class T> T conj_(T x) { return x; }
template <class R> std::complex<R> conj_(std::complex<R> x) { return std::conj(x); }

template <class T> struct Svd {
  using R = typename RealOf<T>::type;
  int m, n, k;
  std::vector<T> A, U, V;
  std::vector<R> S;
  std::vector<double> Sref;
};

// Exact (LAPACK gesvd) SVD of a generated matrix; V = (V^H)^H.
template <class T> Svd<T> lapack_svd(bt::Family f, int m, int n, uint64_t seed) {
  Svd<T> r;
  r.m = m;
  r.n = n;
  r.k = std::min(m, n);
  r.A.resize(size_t(m) * n);
  bt::generate<T>(f, m, n, bt::default_kappa<T>(), seed, r.A.data(), m);
  std::vector<T> W = r.A, VT(size_t(r.k) * n);
  r.U.resize(size_t(m) * r.k);
  r.S.resize(r.k);
  r.V.resize(size_t(n) * r.k);
  EXPECT_EQ(
      0, bt::lapack_gesvd<T>(true, m, n, W.data(), m, r.S.data(), r.U.data(), m, VT.data(), r.k));
  for (int l = 0; l < r.k; ++l)
    for (int j = 0; j < n; ++j) r.V[j + size_t(l) * n] = conj_(VT[l + size_t(j) * r.k]);
  r.Sref.resize(r.k);
  EXPECT_EQ(0, bt::reference_singular_values<T>(m, n, r.A.data(), m, r.Sref.data()));
  return r;
}

template <class T> bt::Ratios ratios(const Svd<T> &s, bool with_ref = true) {
  return bt::accuracy<T, typename Svd<T>::R>(s.m, s.n, s.A.data(), s.m, s.S.data(), s.U.data(), s.m,
                                             s.V.data(), s.n, with_ref ? s.Sref.data() : nullptr);
}

template <class T> class TestingMetrics : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(TestingMetrics, Types);

} // namespace

TEST(TestingMetricsRatios, WorstPassMax) {
  bt::Ratios a;
  EXPECT_EQ(a.worst(), 0);
  EXPECT_TRUE(a.pass());
  a.t3 = 29.9;
  EXPECT_TRUE(a.pass());
  EXPECT_EQ(a.worst(), 29.9);
  a.t2v = 30;
  EXPECT_FALSE(a.pass());
  EXPECT_TRUE(a.pass(31));
  bt::Ratios b;
  b.t1 = 100;
  b.t2v = 1;
  a.max_with(b);
  EXPECT_EQ(a.t1, 100);
  EXPECT_EQ(a.t2v, 30);
  EXPECT_EQ(a.t3, 29.9);
  bt::Ratios n;
  n.t2u = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(n.pass());
  EXPECT_TRUE(std::isnan(n.worst()));
  a.max_with(n);
  EXPECT_TRUE(std::isnan(a.t2u));
  EXPECT_FALSE(a.pass(1e300));
  bt::Ratios c;
  c.max_with(a); // NaN from the other side too
  EXPECT_TRUE(std::isnan(c.t2u));
  EXPECT_EQ(bt::unit_roundoff<float>(), std::ldexp(1.0, -24));
  EXPECT_EQ(bt::unit_roundoff<std::complex<float>>(), std::ldexp(1.0, -24));
  EXPECT_EQ(bt::unit_roundoff<double>(), std::ldexp(1.0, -53));
  EXPECT_EQ(bt::unit_roundoff<std::complex<double>>(), std::ldexp(1.0, -53));
}

TYPED_TEST(TestingMetrics, LapackSvdPasses) {
  using T = TypeParam;
  for (bt::Family f : bt::all_families())
    for (auto [m, n] : {std::pair{1, 1}, {8, 8}, {30, 12}, {12, 30}, {64, 64}}) {
      const auto s = lapack_svd<T>(f, m, n, 17);
      const auto r = ratios(s);
      EXPECT_TRUE(r.pass()) << bt::family_name(f) << " " << m << "x" << n << ": " << r.t1 << " "
                            << r.t2u << " " << r.t2v << " " << r.t3 << " " << r.t4;
      EXPECT_LT(r.worst(), 10.0);
      EXPECT_GE(r.t1, 0.0);
    }
}

TYPED_TEST(TestingMetrics, CorruptionsFail) {
  using T = TypeParam;
  using R = typename RealOf<T>::type;
  const auto good = lapack_svd<T>(bt::Family::Arith, 20, 15, 3);
  ASSERT_TRUE(ratios(good).pass());

  { // U off orthogonality by 1e3 u: t2u (and t1) fail, t2v does not
    auto s = good;
    s.U[5 + 2 * s.m] += T(R(1e3 * bt::unit_roundoff<T>()));
    const auto r = ratios(s);
    EXPECT_GT(r.t2u, 30.0);
    EXPECT_LT(r.t2v, 30.0);
    EXPECT_FALSE(r.pass());
  }
  { // V perturbed: t2v
    auto s = good;
    s.V[3] *= R(1 + 1e4 * bt::unit_roundoff<T>());
    const auto r = ratios(s);
    EXPECT_GT(r.t2v, 30.0);
    EXPECT_LT(r.t2u, 30.0);
  }
  { // S perturbed: t1 and t3
    auto s = good;
    s.S[0] *= R(1 + 1e4 * bt::unit_roundoff<T>());
    const auto r = ratios(s);
    EXPECT_GT(r.t3, 30.0);
    EXPECT_GT(r.t1, 30.0);
    EXPECT_EQ(r.t4, 0.0);
  }
  { // unsorted S: t4 = inf
    auto s = good;
    std::swap(s.S[3], s.S[4]);
    EXPECT_TRUE(std::isinf(ratios(s).t4));
    EXPECT_FALSE(ratios(s).pass());
  }
  { // negative S: t4 = inf (t1 is broken as well, but t4 flags it alone)
    auto s = good;
    s.S.back() = -s.S.back();
    EXPECT_TRUE(std::isinf(ratios(s).t4));
  }
  { // NaN in S, in U, in V: never a silent pass, nothing reads 0
    for (int where = 0; where < 3; ++where) {
      auto s = good;
      const R nan = std::numeric_limits<R>::quiet_NaN();
      if (where == 0) s.S[2] = nan;
      if (where == 1) s.U[7] = T(nan);
      if (where == 2) s.V[1] = T(nan);
      const auto r = ratios(s);
      EXPECT_FALSE(r.pass()) << where;
      EXPECT_TRUE(std::isnan(r.t1) || std::isinf(r.t1)) << where;
      EXPECT_TRUE(std::isnan(r.worst()) || std::isinf(r.worst()));
    }
  }
  { // values only: t1, t2 = 0; without S_ref: t3 = 0
    const auto r = bt::accuracy<T, R>(good.m, good.n, good.A.data(), good.m, good.S.data(), nullptr,
                                      0, nullptr, 0, good.Sref.data());
    EXPECT_EQ(r.t1, 0);
    EXPECT_EQ(r.t2u, 0);
    EXPECT_EQ(r.t2v, 0);
    EXPECT_LT(r.t3, 30.0);
    EXPECT_EQ(ratios(good, false).t3, 0);
  }
}

TYPED_TEST(TestingMetrics, ZeroMatrix) {
  using T = TypeParam;
  using R = typename RealOf<T>::type;
  const int m = 6, n = 4, k = 4;
  std::vector<T> A(m * n, T(0)), U(m * k, T(0)), V(n * k, T(0));
  for (int i = 0; i < k; ++i) U[i + i * m] = V[i + i * n] = T(1);
  std::vector<R> S(k, R(0));
  std::vector<double> Sref(k, 0.0);
  auto r = bt::accuracy<T, R>(m, n, A.data(), m, S.data(), U.data(), m, V.data(), n, Sref.data());
  EXPECT_TRUE(r.pass());
  EXPECT_EQ(r.worst(), 0.0);
  S[0] = R(1e-3); // wrong answer for a zero matrix
  r = bt::accuracy<T, R>(m, n, A.data(), m, S.data(), U.data(), m, V.data(), n, Sref.data());
  EXPECT_FALSE(r.pass());
  EXPECT_GT(r.t1, 30.0);
  EXPECT_GT(r.t3, 30.0);
}

TYPED_TEST(TestingMetrics, LapackGesvjPasses) {
  using T = TypeParam;
  using R = typename RealOf<T>::type;
  for (bt::Family f : bt::all_families())
    for (auto [m, n] : {std::pair{1, 1}, {9, 9}, {40, 13}}) {
      std::vector<T> A(size_t(m) * n);
      bt::generate<T>(f, m, n, bt::default_kappa<T>(), 5, A.data(), m);
      std::vector<T> W = A, V(size_t(n) * n);
      std::vector<R> S(n);
      std::vector<double> Sref(n);
      ASSERT_EQ(0, bt::reference_singular_values<T>(m, n, A.data(), m, Sref.data()));
      ASSERT_EQ(0, bt::lapack_gesvj<T>(true, m, n, W.data(), m, S.data(), V.data(), n));
      const auto r =
          bt::accuracy<T, R>(m, n, A.data(), m, S.data(), W.data(), m, V.data(), n, Sref.data());
      EXPECT_TRUE(r.pass()) << bt::family_name(f) << " " << m << "x" << n << ": " << r.t1 << " "
                            << r.t2u << " " << r.t2v << " " << r.t3 << " " << r.t4;
      // values only
      W = A;
      std::vector<R> S2(n);
      ASSERT_EQ(0, bt::lapack_gesvj<T>(false, m, n, W.data(), m, S2.data(), nullptr, 1));
      const auto r2 =
          bt::accuracy<T, R>(m, n, A.data(), m, S2.data(), nullptr, 0, nullptr, 0, Sref.data());
      EXPECT_TRUE(r2.pass()) << r2.t3;
    }
  // gesvj needs m >= n; gesvd values only; NaN input is refused.
  std::vector<T> A(12, T(1));
  std::vector<R> S(4);
  EXPECT_EQ(-5, bt::lapack_gesvj<T>(false, 3, 4, A.data(), 3, S.data(), nullptr, 1));
  EXPECT_EQ(0, bt::lapack_gesvd<T>(false, 3, 4, A.data(), 3, S.data(), nullptr, 1, nullptr, 1));
  EXPECT_NEAR(S[0], std::sqrt(12.0), 1e-5);
  A.assign(12, T(1));
  A[4] = T(std::numeric_limits<R>::quiet_NaN());
  EXPECT_EQ(-7, bt::lapack_gesvj<T>(false, 4, 3, A.data(), 4, S.data(), nullptr, 1));
  EXPECT_TRUE(std::isnan(S[0]));
  A[4] = T(std::numeric_limits<R>::infinity());
  EXPECT_EQ(-6, bt::lapack_gesvd<T>(false, 4, 3, A.data(), 4, S.data(), nullptr, 1, nullptr, 1));
}
