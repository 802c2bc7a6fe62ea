// bsvd::device::bdsv (include/bsvd/device/bdsv.cuh) run on the host, its
// CPU twin: the singular values of a bidiagonal to high relative accuracy,
//   rel = max_i |s_i - s_i^ref| / (s_i^ref n u),
// against DBDSQR (values only: dqds) in double precision, on random,
// graded (entries over 25 decades in s, 60 in d) and log-uniform
// bidiagonals; beyond DBDSQR's range (30 / 280 decades) by invariants
// (product = |det|, reversal); exact power-of-two scaling; edge cases. Then
// the values route of a full matrix, gebd2 + bdsv, against gesvd on the
// six families (T3 of docs ALGORITHMS §1, T4), and the cooperative path on
// a team of host threads.
#include <bsvd/device/bdsv.cuh>
#include <bsvd/device/gebrd.cuh>

#include "bidiag_helpers.hpp"
#include "testing/generate.hpp"
#include "testing/lapack_ref.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using bidiag_test::R_t;
using bidiag_test::unit_roundoff;
using bsvd::testing::Family;

template <class R> class DeviceBdsv : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(DeviceBdsv, RealTypes);

template <class T> class DeviceBidiagValues : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(DeviceBidiagValues, Types);

template <class R> struct Values {
  std::vector<R> S;
  int info = 99;
};

template <class R> Values<R> values(int n, const R *d, const R *e) {
  Values<R> v;
  v.S.assign(std::max(n, 1), R(-7));
  std::vector<R> work(std::max(2 * n, 1));
  v.info = bsvd::device::bdsv(n, d, e, v.S.data(), work.data());
  return v;
}

// max_i |s_i - ref_i| / (ref_i n u) over the values above bdsv's floor
// (min normal / u of max |b|, 2^-102 in s, 2^-969 in d): below it a value
// may be returned as 0 and is checked for |s_i - ref_i| <= 2 floor
// instead. An exact zero must come out exactly.
template <class R> double rel_ratio(int n, const R *S, const double *ref, double bmax) {
  const double u = unit_roundoff<R>();
  const double floor = double(std::numeric_limits<R>::min()) / u * bmax;
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    const double diff = std::abs(double(S[i]) - ref[i]);
    if (ref[i] == 0)
      worst = std::max(worst, diff == 0 ? 0.0 : std::numeric_limits<double>::infinity());
    else if (ref[i] < floor)
      worst = std::max(worst, diff <= 2 * floor ? 0.0 : std::numeric_limits<double>::infinity());
    else
      worst = std::max(worst, diff / (ref[i] * n * u));
  }
  return worst;
}

template <class R> double max_abs(int n, const R *d, const R *e) {
  double b = 0;
  for (int i = 0; i < n; ++i) b = std::max(b, double(std::abs(d[i])));
  for (int i = 0; i + 1 < n; ++i) b = std::max(b, double(std::abs(e[i])));
  return b;
}

bool sorted_desc(const std::vector<double> &s) {
  for (size_t i = 1; i < s.size(); ++i)
    if (!(s[i - 1] >= s[i]) || s[i] < 0) return false;
  return true;
}

enum class Kind { Random, Graded, Reverse, LogUniform, Zeros };
const char *kind_name(Kind k) {
  switch (k) {
  case Kind::Random: return "random";
  case Kind::Graded: return "graded";
  case Kind::Reverse: return "reverse-graded";
  case Kind::LogUniform: return "log-uniform";
  case Kind::Zeros: return "with-zeros";
  }
  return "?";
}

// A bidiagonal of kind k with random signs; decades: the range of the
// graded and log-uniform entries.
template <class R>
void make(Kind k, int n, uint64_t seed, std::vector<R> &d, std::vector<R> &e, double decades) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> U(-1, 1), L(0, 1);
  d.assign(n, 0), e.assign(std::max(n - 1, 1), 0);
  auto entry = [&](int pos) { // pos in [0, 2n - 1)
    const double sgn = U(rng) < 0 ? -1 : 1, f = 0.5 + 0.5 * L(rng);
    const double t = n > 1 ? double(pos) / (2 * n - 2) : 0;
    switch (k) {
    case Kind::Random: return U(rng);
    case Kind::Graded: return sgn * f * std::pow(10.0, -decades * t);
    case Kind::Reverse: return sgn * f * std::pow(10.0, -decades * (1 - t));
    case Kind::LogUniform: return sgn * std::pow(10.0, -decades * L(rng));
    case Kind::Zeros: return L(rng) < 0.25 ? 0.0 : U(rng);
    }
    return 0.0;
  };
  for (int i = 0; i < 2 * n - 1; ++i) (i & 1 ? e[i / 2] : d[i / 2]) = R(entry(i));
}

// The range of the graded entries compared with DBDSQR. Its dqds works on
// the squares of the entries, and beyond about 1e-150 of the largest in d
// it loses the small values: on a log-uniform n = 8 bidiagonal with
// entries down to 1e-193 it returned 2.7601e-213 for the value that
// mpmath (450 digits) and bdsv both give as 2.7137753558890e-213. The wider
// ranges are tested by invariants below.
template <class R> constexpr double kLapackDecades = std::is_same_v<R, float> ? 25 : 60;

TYPED_TEST(DeviceBdsv, RelativeAccuracyAgainstDbdsqr) {
  using R = TypeParam;
  double worst_all = 0;
  for (Kind k : {Kind::Random, Kind::Graded, Kind::Reverse, Kind::LogUniform, Kind::Zeros}) {
    double worst = 0;
    for (int n : {1, 2, 3, 4, 5, 8, 13, 16, 31, 32, 47, 64})
      for (uint64_t seed = 1; seed <= 6; ++seed) {
        std::vector<R> d, e;
        make(k, n, 1000 * seed + n, d, e, kLapackDecades<R>);
        const Values<R> v = values(n, d.data(), e.data());
        EXPECT_EQ(v.info, 0);
        std::vector<double> ref(n), got(v.S.begin(), v.S.begin() + n);
        ASSERT_EQ(bidiag_test::reference_bidiagonal_values(n, d.data(), e.data(), ref.data()), 0);
        const double r = rel_ratio(n, v.S.data(), ref.data(), max_abs(n, d.data(), e.data()));
        EXPECT_LT(r, 10) << kind_name(k) << " n " << n << " seed " << seed;
        EXPECT_TRUE(sorted_desc(got)) << kind_name(k) << " n " << n;
        worst = std::max(worst, r);
      }
    std::printf("[ bdsv ] %s %s: max rel / (n u) %.3g\n", bidiag_test::prec_name<R>(), kind_name(k),
                worst);
    worst_all = std::max(worst_all, worst);
  }
  std::printf("[ bdsv ] %s all: max rel / (n u) %.3g\n", bidiag_test::prec_name<R>(), worst_all);
}

// Ranges beyond DBDSQR's (entries over 30 decades in s, 280 in d): the
// product of the values is |det B| = prod |d_i| (in logarithms, to within
// the relative accuracy of every value), and the values of B reversed
// (d and e in reverse order: P B^T P, the same values, computed by a
// recurrence in the opposite order) agree with B's to 2 (5 n u).
TYPED_TEST(DeviceBdsv, WideRangeInvariants) {
  using R = TypeParam;
  const double u = unit_roundoff<R>(), decades = std::is_same_v<R, float> ? 30 : 280;
  double worst_det = 0, worst_rev = 0;
  int checked = 0;
  for (Kind k : {Kind::Graded, Kind::Reverse, Kind::LogUniform})
    for (int n : {2, 5, 8, 16, 33, 64})
      for (uint64_t seed = 1; seed <= 4; ++seed) {
        std::vector<R> d, e;
        make(k, n, 7000 * seed + n, d, e, decades);
        const Values<R> v = values(n, d.data(), e.data());
        std::vector<R> dr(d.rbegin(), d.rend()), er(e.begin(), e.begin() + (n - 1));
        std::reverse(er.begin(), er.end());
        const Values<R> w = values(n, dr.data(), er.data());
        bool all_positive = true;
        long double logs = 0, logd = 0;
        for (int i = 0; i < n; ++i) {
          // Below bdsv's floor a value is 0 in both orders.
          if (v.S[i] == 0 || w.S[i] == 0) {
            EXPECT_EQ(v.S[i], w.S[i]) << kind_name(k) << " n " << n << " seed " << seed;
            all_positive = false;
            continue;
          }
          logs += std::log((long double)v.S[i]);
          logd += std::log(std::abs((long double)d[i]));
          worst_rev = std::max(worst_rev, std::abs(double(v.S[i]) - w.S[i]) / (v.S[i] * n * u));
        }
        if (!all_positive) continue; // |det| is then below the floor too
        ++checked;
        worst_det = std::max(worst_det, double(std::abs(logs - logd)) / (n * n * u));
      }
  EXPECT_GT(checked, 20);
  EXPECT_LT(worst_det, 10);
  EXPECT_LT(worst_rev, 10);
  std::printf("[ bdsv ] %s wide range: |log prod s - log |det|| / (n^2 u) %.3g, reversed / (n u) "
              "%.3g (%d matrices with every value above the floor)\n",
              bidiag_test::prec_name<R>(), worst_det, worst_rev, checked);
}

// Diagonal B: the values are |d| sorted, to within the bisection's 2 u.
TYPED_TEST(DeviceBdsv, DiagonalIsExactToBisectionWidth) {
  using R = TypeParam;
  const int n = 20;
  std::vector<R> d(n), e(n - 1, R(0));
  for (int i = 0; i < n; ++i) d[i] = R((i % 2 ? -1 : 1) * std::pow(R(3), R(i - 10)));
  const Values<R> v = values(n, d.data(), e.data());
  std::vector<R> want(n);
  for (int i = 0; i < n; ++i) want[i] = std::abs(d[i]);
  std::sort(want.begin(), want.end(), [](R a, R b) { return a > b; });
  for (int i = 0; i < n; ++i)
    EXPECT_LE(std::abs(v.S[i] - want[i]), 2 * unit_roundoff<R>() * want[i]);
}

// Scaling B by 2^k scales every computed value by exactly 2^k (the
// algorithm's first step is such a scaling), here up to near overflow and
// down to near underflow.
TYPED_TEST(DeviceBdsv, PowerOfTwoScalingIsExact) {
  using R = TypeParam;
  const int big = std::numeric_limits<R>::max_exponent - 4;
  const int small = std::numeric_limits<R>::min_exponent + 40;
  for (int n : {1, 7, 30}) {
    std::vector<R> d, e;
    make(Kind::Random, n, 17 + n, d, e, 0);
    for (R &x : d) x = std::abs(x) < R(1e-3) ? R(0.5) : x; // keep the scaled entries normal
    for (R &x : e) x = std::abs(x) < R(1e-3) ? R(0.25) : x;
    const Values<R> v = values(n, d.data(), e.data());
    for (int s : {big, small}) {
      std::vector<R> ds(d), es(e);
      for (R &x : ds) x = std::ldexp(x, s);
      for (R &x : es) x = std::ldexp(x, s);
      const Values<R> w = values(n, ds.data(), es.data());
      EXPECT_EQ(w.info, 0);
      for (int i = 0; i < n; ++i)
        EXPECT_EQ(w.S[i], std::ldexp(v.S[i], s)) << "n " << n << " 2^" << s;
    }
  }
}

TYPED_TEST(DeviceBdsv, EdgeCases) {
  using R = TypeParam;
  // n = 0: nothing; n = 1: |d|; zero matrix: zeros; bad n: -1.
  R d1 = R(-3), e0 = R(0), s = R(-7), w[2];
  EXPECT_EQ(bsvd::device::bdsv(0, &d1, &e0, &s, w), 0);
  EXPECT_EQ(s, R(-7));
  EXPECT_EQ(bsvd::device::bdsv(1, &d1, static_cast<const R *>(nullptr), &s, w), 0);
  EXPECT_EQ(s, R(3));
  EXPECT_EQ(bsvd::device::bdsv(-1, &d1, &e0, &s, w), -1);
  std::vector<R> z(5, R(0));
  Values<R> v = values(5, z.data(), z.data());
  EXPECT_EQ(v.info, 0);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(v.S[i], R(0));
  // A zero on the diagonal makes B singular: an exact zero value (one here:
  // the rank is 3, columns 1 and 2 being parallel).
  std::vector<R> d = {R(1), R(0), R(2), R(0)}, e = {R(0.5), R(0.25), R(0.125)};
  v = values(4, d.data(), e.data());
  EXPECT_EQ(v.S[3], R(0));
  EXPECT_GT(v.S[2], R(0));
  // Non-finite input: a clear info, NaN values, no hang.
  for (R bad : {std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::infinity(),
                -std::numeric_limits<R>::infinity()})
    for (int pos : {0, 3, 6}) {
      std::vector<R> dd = {R(1), R(2), R(3), R(4)}, ee = {R(1), R(1), R(1)};
      (pos & 1 ? ee[pos / 2] : dd[pos / 2]) = bad;
      v = values(4, dd.data(), ee.data());
      EXPECT_EQ(v.info, bsvd::device::kInfoNonFinite);
      for (int i = 0; i < 4; ++i) EXPECT_TRUE(std::isnan(v.S[i]));
    }
  // The largest finite entries: values near overflow, still finite.
  std::vector<R> dm(3, std::numeric_limits<R>::max() / 4), em(2, std::numeric_limits<R>::max() / 8);
  v = values(3, dm.data(), em.data());
  EXPECT_EQ(v.info, 0);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(std::isfinite(v.S[i]));
}

// The cooperative path (every member bisects its own values, member 0
// sorts) gives the serial bits for any team size.
TYPED_TEST(DeviceBdsv, HostThreadTeamMatchesSerial) {
  using R = TypeParam;
  for (int n : {1, 5, 33}) {
    std::vector<R> d, e;
    make(Kind::LogUniform, n, 99 + n, d, e, kLapackDecades<R>);
    const Values<R> v = values(n, d.data(), e.data());
    for (int nt : {1, 3, 4}) {
      std::vector<R> S(n, R(-7)), work(2 * n);
      std::vector<int> info(nt, 99);
      bidiag_test::run_team(nt, [&](const bidiag_test::HostTeam &team) {
        info[team.rank()] = bsvd::device::bdsv(n, d.data(), e.data(), S.data(), work.data(), team);
      });
      for (int i : info) EXPECT_EQ(i, 0);
      for (int i = 0; i < n; ++i) EXPECT_EQ(S[i], v.S[i]) << "n " << n << " team " << nt;
    }
  }
}

// The values route of a full matrix: gebd2, then bdsv on (d, e), against
// gesvd (in double) on the six families and on random matrices: T3 =
// ||S - S_ref||_F / (k S_ref_1 u) below 30, and T4.
TYPED_TEST(DeviceBidiagValues, FamiliesAgainstGesvd) {
  using T = TypeParam;
  using R = R_t<T>;
  const double u = unit_roundoff<R>();
  double worst = 0;
  for (auto [m, n] : std::vector<std::pair<int, int>>{{1, 1},
                                                      {1, 9},
                                                      {9, 1},
                                                      {2, 2},
                                                      {8, 8},
                                                      {20, 13},
                                                      {13, 20},
                                                      {64, 17},
                                                      {17, 64},
                                                      {64, 64}})
    for (Family f : bsvd::testing::all_families()) {
      const int k = std::min(m, n);
      std::vector<T> A(size_t(m) * n);
      bsvd::testing::generate<T>(f, m, n, bsvd::testing::default_kappa<T>(), 3 * m + n, A.data(),
                                 m);
      std::vector<double> ref(k);
      std::vector<T> Ac(A);
      ASSERT_EQ(bsvd::testing::reference_singular_values<T>(m, n, Ac.data(), m, ref.data()), 0);
      std::vector<R> d(k), e(k), S(k), rw(2 * k);
      std::vector<T> tq(k), tp(k), work(std::max(m, n));
      ASSERT_EQ(bsvd::device::gebd2(m, n, A.data(), m, d.data(), e.data(), tq.data(), tp.data(),
                                    work.data()),
                0);
      ASSERT_EQ(bsvd::device::bdsv(k, d.data(), e.data(), S.data(), rw.data()), 0);
      long double ss = 0;
      for (int i = 0; i < k; ++i) ss += (S[i] - ref[i]) * (long double)(S[i] - ref[i]);
      const double t3 = double(std::sqrt(ss) / (k * std::max(ref[0], 1e-300) * u));
      EXPECT_LT(t3, 30) << bsvd::testing::family_name(f) << " " << m << "x" << n;
      EXPECT_TRUE(sorted_desc(std::vector<double>(S.begin(), S.end())));
      worst = std::max(worst, t3);
    }
  std::printf("[ gebd2+bdsv ] %s families: max T3 %.3g\n", bidiag_test::prec_name<T>(), worst);
}

// Edge matrices through the route: zero, identity, rank-deficient, near
// overflow and underflow; NaN / Inf reported by bdsv.
TYPED_TEST(DeviceBidiagValues, EdgeMatrices) {
  using T = TypeParam;
  using R = R_t<T>;
  const double u = unit_roundoff<R>();
  for (auto [m, n] : std::vector<std::pair<int, int>>{{1, 1}, {6, 6}, {9, 4}, {4, 9}})
    for (auto edge : bsvd::testing::all_edges()) {
      const int k = std::min(m, n);
      std::vector<T> A(size_t(m) * n);
      bsvd::testing::generate_edge<T>(edge, m, n, 5, A.data(), m);
      std::vector<T> Ac(A);
      std::vector<double> ref(k);
      const bool have_ref = edge != bsvd::testing::Edge::Overflow;
      if (have_ref) bsvd::testing::reference_singular_values<T>(m, n, Ac.data(), m, ref.data());
      std::vector<R> d(k), e(k), S(k), rw(2 * k);
      std::vector<T> tq(k), tp(k), work(std::max(m, n));
      bsvd::device::gebd2(m, n, A.data(), m, d.data(), e.data(), tq.data(), tp.data(), work.data());
      const int info = bsvd::device::bdsv(k, d.data(), e.data(), S.data(), rw.data());
      const std::string what = std::string(bsvd::testing::edge_name(edge)) + " " +
                               std::to_string(m) + "x" + std::to_string(n);
      if (edge == bsvd::testing::Edge::Nan || edge == bsvd::testing::Edge::Inf) {
        EXPECT_EQ(info, bsvd::device::kInfoNonFinite) << what;
        continue;
      }
      EXPECT_EQ(info, 0) << what;
      for (R s : S) EXPECT_TRUE(std::isfinite(s)) << what;
      if (!have_ref) continue;
      long double ss = 0;
      for (int i = 0; i < k; ++i) ss += (S[i] - ref[i]) * (long double)(S[i] - ref[i]);
      const double scale = ref[0] > 0 ? ref[0] : 1;
      EXPECT_LT(double(std::sqrt(ss) / (k * scale * u)), 30) << what;
    }
}

} // namespace
