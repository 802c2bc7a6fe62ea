// bsvd::device::gebrd_blocked (include/bsvd/device/labrd.cuh), the CPU
// twin of the GPU's blocked GEBRD regime: backward stability against
// LAPACK with the ratios of test_device_gebrd.cpp (xORGBR / xUNGBR on its
// reflectors); the bidiagonal's singular values against gebd2's; a team of
// host threads; LAPACK's argument codes.
#include <bsvd/device/labrd.cuh>

#include "bidiag_helpers.hpp"
#include "gebrd_check.hpp"
#include "testing/generate.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstdio>
#include <vector>

namespace {

using bidiag_test::R_t;
using bidiag_test::unit_roundoff;
using bsvd::testing::Family;
using namespace gebrd_check;

template <class T> class DeviceLabrd : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(DeviceLabrd, Types);

// The reduction by gebrd_blocked on nt host threads (0: the serial team).
template <class T> Bidiag<T> reduce(int m, int n, const T *A, int lda, int nb, int panels, int nt) {
  Bidiag<T> b = unreduced(m, n, A, lda);
  std::vector<T> X(size_t(std::max(m, 1)) * nb, T(-7)), Y(size_t(std::max(n, 1)) * nb, T(-7)),
      work(std::max({m, n, 1}), T(0));
  auto body = [&](const auto &team) {
    return bsvd::device::gebrd_blocked(m, n, b.A.data(), lda, b.d.data(), b.e.data(), b.tauq.data(),
                                       b.taup.data(), nb, panels, X.data(), std::max(m, 1),
                                       Y.data(), std::max(n, 1), work.data(), team);
  };
  if (nt == 0) {
    b.info = body(bsvd::device::serial_team{});
  } else {
    std::vector<int> info(nt, 99);
    bidiag_test::run_team(
        nt, [&](const bidiag_test::HostTeam &team) { info[team.rank()] = body(team); });
    b.info = *std::max_element(info.begin(), info.end());
  }
  return b;
}

template <class T> Bidiag<T> reduce_gebd2(int m, int n, const T *A, int lda) {
  return reduce<T>(m, n, A, lda, 1, 0, 0); // no panel: gebd2 alone
}

struct Case {
  int m, n, nb, panels;
};

const std::vector<Case> &cases() {
  static const std::vector<Case> c = {
      {2, 2, 1, 1},    {3, 2, 1, 1},     {2, 3, 1, 1},     {9, 9, 2, 3},   {17, 9, 4, 2},
      {9, 17, 4, 2},   {40, 40, 8, 4},   {40, 40, 16, 2},  {64, 33, 8, 3}, {33, 64, 8, 3},
      {70, 70, 32, 2}, {100, 60, 16, 3}, {60, 100, 16, 3}, {1, 30, 1, 0},  {30, 1, 1, 0},
      {48, 48, 47, 1}, {48, 48, 1, 47}};
  return c;
}

TYPED_TEST(DeviceLabrd, RandomShapesAgainstLapack) {
  using T = TypeParam;
  Ratios worst;
  for (const Case &c : cases())
    for (int lpad : {0, 5}) {
      const int lda = c.m + lpad;
      std::vector<T> A(size_t(lda) * c.n + kPad, T(0));
      bsvd::testing::generate<T>(Family::Random, c.m, c.n, 1, 400 + 31 * c.m + c.n + lpad, A.data(),
                                 lda);
      const Bidiag<T> b = reduce(c.m, c.n, A.data(), lda, c.nb, c.panels, 0);
      ASSERT_EQ(b.info, 0);
      const Ratios r = check(c.m, c.n, A.data(), lda, b);
      EXPECT_TRUE(r.pass(30, false)) << c.m << "x" << c.n << " nb " << c.nb << " panels "
                                     << c.panels << " lda " << lda << ": " << r;
      worst.max_with(r);
    }
  std::printf("[ labrd ] %s random: max %s\n", bidiag_test::prec_name<T>(), str(worst).c_str());
}

// The same bidiagonal as gebd2 up to the backward errors of both: their
// singular values (LAPACK's dqds on each d, e) differ by at most
// ||dA||_2 (Weyl), measured in units of ||A||_1 max(m, n) u. (d and e
// themselves are not compared entry by entry: the trailing entries of a
// random matrix's bidiagonal move by far more than u under rounding
// elsewhere, as LAPACK's own sensitivity in `check` shows.)
TYPED_TEST(DeviceLabrd, SameValuesAsGebd2) {
  using T = TypeParam;
  using R = R_t<T>;
  const double u = unit_roundoff<R>();
  double worst = 0;
  for (const Case &c : cases()) {
    std::vector<T> A(size_t(c.m) * c.n);
    bsvd::testing::generate<T>(Family::Random, c.m, c.n, 1, 77 * c.m + c.n, A.data(), c.m);
    const Bidiag<T> b = reduce(c.m, c.n, A.data(), c.m, c.nb, c.panels, 0);
    const Bidiag<T> g = reduce_gebd2(c.m, c.n, A.data(), c.m);
    const int k = std::min(c.m, c.n);
    std::vector<double> sb(k), sg(k);
    ASSERT_EQ(bidiag_test::reference_bidiagonal_values(k, b.d.data(), b.e.data(), sb.data()), 0);
    ASSERT_EQ(bidiag_test::reference_bidiagonal_values(k, g.d.data(), g.e.data(), sg.data()), 0);
    const double scale = double(norm1(c.m, c.n, A.data(), c.m)) * std::max(c.m, c.n) * u;
    double dev = 0;
    for (int i = 0; i < k; ++i) dev = std::max(dev, std::abs(sb[i] - sg[i]) / scale);
    EXPECT_LT(dev, 30.0) << c.m << "x" << c.n << " nb " << c.nb << " panels " << c.panels;
    worst = std::max(worst, dev);
  }
  std::printf("[ labrd ] %s values against gebd2's: max %.3g\n", bidiag_test::prec_name<T>(),
              worst);
}

TYPED_TEST(DeviceLabrd, FamiliesAgainstLapack) {
  using T = TypeParam;
  for (auto [m, n] : std::vector<std::pair<int, int>>{{48, 48}, {60, 24}, {24, 60}})
    for (Family f : bsvd::testing::all_families()) {
      std::vector<T> A(size_t(m) * n + kPad);
      bsvd::testing::generate<T>(f, m, n, bsvd::testing::default_kappa<T>(), 5 * m + n, A.data(),
                                 m);
      const Ratios r = check(m, n, A.data(), m, reduce(m, n, A.data(), m, 8, 2, 0));
      EXPECT_TRUE(r.pass(30, false))
          << bsvd::testing::family_name(f) << " " << m << "x" << n << ": " << r;
    }
}

// A team of host threads: a team of one is the serial code bit for bit;
// larger teams pass the same ratios (their norms add partial sums in
// another order: the bits of the GEMVs and the update are the serial
// ones, LARFG's norms are not).
TYPED_TEST(DeviceLabrd, HostThreadTeam) {
  using T = TypeParam;
  for (const Case &c : {Case{40, 40, 8, 4}, Case{33, 21, 4, 3}, Case{21, 33, 4, 3}}) {
    std::vector<T> A(size_t(c.m) * c.n + kPad);
    bsvd::testing::generate<T>(Family::Random, c.m, c.n, 1, 3 * c.m + c.n, A.data(), c.m);
    const Bidiag<T> s = reduce(c.m, c.n, A.data(), c.m, c.nb, c.panels, 0);
    const Bidiag<T> one = reduce(c.m, c.n, A.data(), c.m, c.nb, c.panels, 1);
    EXPECT_EQ(one.A, s.A) << c.m << "x" << c.n;
    EXPECT_EQ(one.d, s.d);
    EXPECT_EQ(one.e, s.e);
    EXPECT_EQ(one.tauq, s.tauq);
    EXPECT_EQ(one.taup, s.taup);
    for (int nt : {3, 4}) {
      const Ratios r =
          check(c.m, c.n, A.data(), c.m, reduce(c.m, c.n, A.data(), c.m, c.nb, c.panels, nt));
      EXPECT_TRUE(r.pass(30, false)) << c.m << "x" << c.n << " team " << nt << ": " << r;
    }
  }
}

TYPED_TEST(DeviceLabrd, BadArgumentsWriteNothing) {
  using T = TypeParam;
  using R = R_t<T>;
  T a[16], t[4], X[16], Y[16], w[4];
  for (T &v : a) v = T(3);
  R d[4], e[4];
  EXPECT_EQ(bsvd::device::gebrd_blocked(-1, 4, a, 4, d, e, t, t, 1, 1, X, 4, Y, 4, w), -1);
  EXPECT_EQ(bsvd::device::gebrd_blocked(4, -1, a, 4, d, e, t, t, 1, 1, X, 4, Y, 4, w), -2);
  EXPECT_EQ(bsvd::device::gebrd_blocked(4, 4, a, 3, d, e, t, t, 1, 1, X, 4, Y, 4, w), -4);
  EXPECT_EQ(bsvd::device::gebrd_blocked(4, 4, a, 4, d, e, t, t, 0, 1, X, 4, Y, 4, w), -8);
  EXPECT_EQ(bsvd::device::gebrd_blocked(4, 4, a, 4, d, e, t, t, 2, 2, X, 4, Y, 4, w), -9);
  EXPECT_EQ(bsvd::device::gebrd_blocked(4, 4, a, 4, d, e, t, t, 1, -1, X, 4, Y, 4, w), -9);
  for (const T &v : a) EXPECT_EQ(v, T(3));
}

} // namespace
