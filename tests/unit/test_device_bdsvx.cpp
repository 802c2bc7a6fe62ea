// bsvd::device::bdsvx (include/bsvd/device/bdsvx.cuh), selected singular
// triplets of a bidiagonal, on the host (its CPU twin): the values are
// bdsv's at the same indices, bit for bit; the vectors satisfy
//   res = max_j max(||B v_j - s_j u_j||, ||B^T u_j - s_j v_j||) / (||B|| n u)
//   orth = max(|U^T U - I|, |V^T V - I|) / (n u)
// below 30 (the library's k, docs ALGORITHMS §1) for random, graded,
// clustered and rank-deficient bidiagonals, full and partial index ranges;
// NaN input and bad arguments.
#include <bsvd/device/bdsvx.cuh>

#include "bidiag_helpers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace {

using bidiag_test::unit_roundoff;

template <class R> class DeviceBdsvx : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(DeviceBdsvx, Types);

enum class Kind { Random, Graded, Clustered, Zeros, Equal };

template <class R> void make(Kind k, int n, uint64_t seed, std::vector<R> &d, std::vector<R> &e) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> U(-1, 1), L(0, 1);
  d.assign(n, 0), e.assign(std::max(n - 1, 1), 0);
  for (int i = 0; i < 2 * n - 1; ++i) {
    const double t = n > 1 ? double(i) / (2 * n - 2) : 0;
    double v = U(rng);
    switch (k) {
    case Kind::Random: break;
    case Kind::Graded: v = (v < 0 ? -1 : 1) * (0.5 + 0.5 * L(rng)) * std::pow(10.0, -8 * t); break;
    case Kind::Clustered: v = (i & 1) ? 1e-4 * v : 1 + 1e-3 * v; break; // values near 1
    case Kind::Zeros: v = L(rng) < 0.25 ? 0.0 : v; break;
    case Kind::Equal: v = (i & 1) ? 0.0 : (v < 0 ? -1.0 : 1.0); break; // all values 1
    }
    (i & 1 ? e[i / 2] : d[i / 2]) = R(v);
  }
}

struct Ratios {
  double res = 0, orth = 0;
};

template <class R>
Ratios check(int n, const std::vector<R> &d, const std::vector<R> &e, int il, int iu) {
  const int c = iu - il + 1;
  std::vector<R> S(c, R(-7)), U(size_t(n) * c, R(-7)), V(size_t(n) * c, R(-7)),
      work(bsvd::device::bdsvx_work(n));
  EXPECT_EQ(bsvd::device::bdsvx(n, d.data(), e.data(), il, iu, S.data(), U.data(), n, V.data(), n,
                                work.data()),
            0);
  // bdsv's values at those indices, bit for bit
  std::vector<R> all(n), w2(2 * n);
  bsvd::device::bdsv(n, d.data(), e.data(), all.data(), w2.data());
  for (int j = 0; j < c; ++j) EXPECT_EQ(S[j], all[il + j]) << "value " << il + j;
  const double u = unit_roundoff<R>();
  double nb = 0;
  for (int i = 0; i < n; ++i)
    nb = std::max(nb, std::abs(double(d[i])) + (i + 1 < n ? std::abs(double(e[i])) : 0.0));
  Ratios r;
  for (int j = 0; j < c; ++j) {
    const R *v = V.data() + size_t(j) * n, *uu = U.data() + size_t(j) * n;
    long double r1 = 0, r2 = 0;
    for (int i = 0; i < n; ++i) {
      long double bv = (long double)d[i] * v[i] + (i + 1 < n ? (long double)e[i] * v[i + 1] : 0);
      long double btu = (long double)d[i] * uu[i] + (i > 0 ? (long double)e[i - 1] * uu[i - 1] : 0);
      bv -= (long double)S[j] * uu[i];
      btu -= (long double)S[j] * v[i];
      r1 += bv * bv, r2 += btu * btu;
    }
    const double res = double(std::sqrt(std::max(r1, r2))) / (std::max(nb, 1e-300) * n * u);
    r.res = std::max(r.res, nb > 0 ? res : 0.0);
  }
  for (int a = 0; a < c; ++a)
    for (int b = 0; b < c; ++b) {
      long double gu = 0, gv = 0;
      for (int i = 0; i < n; ++i) {
        gu += (long double)U[i + size_t(a) * n] * U[i + size_t(b) * n];
        gv += (long double)V[i + size_t(a) * n] * V[i + size_t(b) * n];
      }
      const long double id = a == b ? 1 : 0;
      r.orth = std::max(r.orth, double(std::max(std::abs(gu - id), std::abs(gv - id))) / (n * u));
    }
  return r;
}

TYPED_TEST(DeviceBdsvx, TripletsOfEveryKind) {
  using R = TypeParam;
  for (Kind k : {Kind::Random, Kind::Graded, Kind::Clustered, Kind::Zeros, Kind::Equal}) {
    Ratios worst;
    for (int n : {1, 2, 3, 5, 8, 16, 33, 64, 100})
      for (uint64_t seed = 1; seed <= 5; ++seed) {
        std::vector<R> d, e;
        make(k, n, 77 * seed + n, d, e);
        const int top = std::min(n, 4) - 1, mid = n / 2;
        for (auto [il, iu] : std::vector<std::pair<int, int>>{{0, n - 1}, {0, top}, {mid, n - 1}}) {
          const Ratios r = check(n, d, e, il, iu);
          EXPECT_LT(r.res, 30.0) << int(k) << " n " << n << " [" << il << ", " << iu << "]";
          EXPECT_LT(r.orth, 30.0) << int(k) << " n " << n << " [" << il << ", " << iu << "]";
          worst.res = std::max(worst.res, r.res), worst.orth = std::max(worst.orth, r.orth);
        }
      }
    std::printf("[ bdsvx ] %s kind %d: max res %.3g orth %.3g\n", bidiag_test::prec_name<R>(),
                int(k), worst.res, worst.orth);
  }
}

TYPED_TEST(DeviceBdsvx, NonFiniteAndBadArguments) {
  using R = TypeParam;
  const int n = 5;
  std::vector<R> d(n, R(1)), e(n - 1, R(0.5)), S(n), U(n * n, R(3)), V(n * n, R(3)),
      w(bsvd::device::bdsvx_work(n));
  e[2] = R(NAN);
  EXPECT_EQ(bsvd::device::bdsvx(n, d.data(), e.data(), 0, 1, S.data(), U.data(), n, V.data(), n,
                                w.data()),
            bsvd::device::kInfoNonFinite);
  EXPECT_TRUE(std::isnan(double(S[0])) && std::isnan(double(S[1])));
  EXPECT_EQ(U[0], R(0));
  std::fill(U.begin(), U.end(), R(3));
  EXPECT_EQ(bsvd::device::bdsvx(-1, d.data(), e.data(), 0, 0, S.data(), U.data(), n, V.data(), n,
                                w.data()),
            -1);
  EXPECT_EQ(bsvd::device::bdsvx(n, d.data(), e.data(), -1, 0, S.data(), U.data(), n, V.data(), n,
                                w.data()),
            -4);
  EXPECT_EQ(bsvd::device::bdsvx(n, d.data(), e.data(), 2, 1, S.data(), U.data(), n, V.data(), n,
                                w.data()),
            -5);
  EXPECT_EQ(bsvd::device::bdsvx(n, d.data(), e.data(), 0, n, S.data(), U.data(), n, V.data(), n,
                                w.data()),
            -5);
  EXPECT_EQ(bsvd::device::bdsvx(n, d.data(), e.data(), 0, 1, S.data(), U.data(), n - 1, V.data(), n,
                                w.data()),
            -8);
  EXPECT_EQ(bsvd::device::bdsvx(n, d.data(), e.data(), 0, 1, S.data(), U.data(), n, V.data(), n - 1,
                                w.data()),
            -10);
  for (R x : U) EXPECT_EQ(x, R(3));
}

} // namespace
