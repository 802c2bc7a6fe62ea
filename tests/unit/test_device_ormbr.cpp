// bsvd::device::ormbr_q / ormbr_p (include/bsvd/device/ormbr.cuh), the
// back-transformation of a bidiagonalization, on the host (their CPU twin):
// Q [X; 0] and P [X; 0] against LAPACK's own Q and P^H formed by xORGBR /
// xUNGBR from the same reflectors (gebd2's and gebrd_blocked's), in units
// of ||X||_1 max(m, n) u; a team of host threads; the argument codes.
#include <bsvd/device/labrd.cuh>
#include <bsvd/device/ormbr.cuh>

#include "bidiag_helpers.hpp"
#include "gebrd_check.hpp"
#include "testing/generate.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <random>
#include <vector>

namespace {

using bidiag_test::R_t;
using bidiag_test::unit_roundoff;
using namespace gebrd_check;

template <class T> class DeviceOrmbr : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(DeviceOrmbr, Types);

template <class T> T rnd(std::mt19937_64 &g) {
  std::uniform_real_distribution<double> U(-1, 1);
  if constexpr (std::is_same_v<T, R_t<T>>)
    return T(U(g));
  else
    return T(U(g), U(g));
}

// max |Y - Z| / (||X||_1 max(m, n) u) over an r x c block (ld r).
template <class T> double dev(int r, int c, const std::vector<T> &Y, const std::vector<W_t<T>> &Z,
                              long double nx, int mx) {
  long double worst = 0;
  for (size_t i = 0; i < size_t(r) * c; ++i)
    worst = std::max(worst, (long double)mag(W_t<T>(Y[i]) - Z[i]));
  return double(worst / (nx * mx * unit_roundoff<R_t<T>>()));
}

// Reduce A (m x n) by gebrd_blocked (panels 0: gebd2), then check Q [X; 0]
// and P [X; 0] for a random k x c X against LAPACK's Q and P on nt threads
// (0: the serial team).
template <class T> void check_case(int m, int n, int nb, int panels, int c, int nt) {
  using W = W_t<T>;
  const int k = std::min(m, n), mx = std::max(m, n), lda = m + 2;
  std::vector<T> A(size_t(lda) * n + kPad, T(0));
  bsvd::testing::generate<T>(bsvd::testing::Family::Random, m, n, 1, 900 + 7 * m + n, A.data(),
                             lda);
  std::vector<T> tq(std::max(k, 1)), tp(std::max(k, 1)), X0(size_t(m) * nb + 1),
      Y0(size_t(n) * nb + 1), wk(mx + 1);
  std::vector<R_t<T>> d(std::max(k, 1)), e(std::max(k, 1));
  ASSERT_EQ(bsvd::device::gebrd_blocked(m, n, A.data(), lda, d.data(), e.data(), tq.data(),
                                        tp.data(), nb, panels, X0.data(), m, Y0.data(), n,
                                        wk.data()),
            0);
  std::mt19937_64 g(5 * m + n + c);
  std::vector<T> X(size_t(k) * c);
  for (T &x : X) x = rnd<T>(g);
  const long double nx = norm1(k, c, X.data(), k);
  // LAPACK's thin Q (m x k) and P^H (k x n) from the same reflectors.
  std::vector<T> Q(A), PH(A);
  ASSERT_EQ(bidiag_test::orgbr('Q', m, k, n, Q.data(), lda, tq.data()), 0);
  ASSERT_EQ(bidiag_test::orgbr('P', k, n, m, PH.data(), lda, tp.data()), 0);
  std::vector<W> QX(size_t(m) * c, W(0)), PX(size_t(n) * c, W(0));
  for (int j = 0; j < c; ++j)
    for (int l = 0; l < k; ++l) {
      const W x = W(X[l + size_t(j) * k]);
      for (int i = 0; i < m; ++i) QX[i + size_t(j) * m] += W(Q[i + size_t(l) * lda]) * x;
      for (int i = 0; i < n; ++i) PX[i + size_t(j) * n] += cj(W(PH[l + size_t(i) * lda])) * x;
    }
  // Ours, C = [X; 0] (ldc m + 1 and n + 1).
  std::vector<T> CQ(size_t(m + 1) * c, T(0)), CP(size_t(n + 1) * c, T(0)),
      work(size_t(mx + c) + 1, T(0));
  for (int j = 0; j < c; ++j)
    for (int l = 0; l < k; ++l) {
      CQ[l + size_t(j) * (m + 1)] = X[l + size_t(j) * k];
      CP[l + size_t(j) * (n + 1)] = X[l + size_t(j) * k];
    }
  auto run = [&](const auto &team) {
    const int a = bsvd::device::ormbr_q(m, n, A.data(), lda, tq.data(), c, CQ.data(), m + 1,
                                        work.data(), team);
    const int b = bsvd::device::ormbr_p(m, n, A.data(), lda, tp.data(), c, CP.data(), n + 1,
                                        work.data(), team);
    return a == 0 && b == 0;
  };
  if (nt == 0) {
    ASSERT_TRUE(run(bsvd::device::serial_team{}));
  } else {
    std::vector<int> ok(nt, 0);
    bidiag_test::run_team(nt,
                          [&](const bidiag_test::HostTeam &team) { ok[team.rank()] = run(team); });
    for (int r : ok) ASSERT_TRUE(r);
  }
  std::vector<T> oq(size_t(m) * c), op(size_t(n) * c);
  for (int j = 0; j < c; ++j) {
    for (int i = 0; i < m; ++i) oq[i + size_t(j) * m] = CQ[i + size_t(j) * (m + 1)];
    for (int i = 0; i < n; ++i) op[i + size_t(j) * n] = CP[i + size_t(j) * (n + 1)];
  }
  EXPECT_LT(dev<T>(m, c, oq, QX, nx, mx), 30.0)
      << m << "x" << n << " Q, nb " << nb << " team " << nt;
  EXPECT_LT(dev<T>(n, c, op, PX, nx, mx), 30.0)
      << m << "x" << n << " P, nb " << nb << " team " << nt;
}

TYPED_TEST(DeviceOrmbr, AgainstLapacksQAndP) {
  using T = TypeParam;
  for (auto [m, n] : std::vector<std::pair<int, int>>{
           {1, 1}, {1, 5}, {5, 1}, {2, 2}, {7, 4}, {4, 7}, {16, 16}, {33, 20}, {20, 33}, {48, 48}})
    for (int c : {1, 3, 8}) check_case<T>(m, n, 1, 0, c, 0);
  // after the blocked reduction (the same reflectors' layout)
  check_case<T>(70, 70, 16, 2, 5, 0);
  check_case<T>(80, 50, 8, 3, 4, 0);
  check_case<T>(50, 80, 8, 3, 4, 0);
}

TYPED_TEST(DeviceOrmbr, HostThreadTeam) {
  using T = TypeParam;
  for (int nt : {1, 3, 4}) {
    check_case<T>(30, 19, 1, 0, 6, nt);
    check_case<T>(19, 30, 1, 0, 6, nt);
  }
}

TYPED_TEST(DeviceOrmbr, BadArgumentsWriteNothing) {
  using T = TypeParam;
  T a[16], t[4], C[16], w[16];
  for (T &x : C) x = T(3);
  EXPECT_EQ(bsvd::device::ormbr_q(-1, 4, a, 4, t, 2, C, 4, w), -1);
  EXPECT_EQ(bsvd::device::ormbr_q(4, -1, a, 4, t, 2, C, 4, w), -2);
  EXPECT_EQ(bsvd::device::ormbr_q(4, 4, a, 3, t, 2, C, 4, w), -4);
  EXPECT_EQ(bsvd::device::ormbr_q(4, 4, a, 4, t, -1, C, 4, w), -6);
  EXPECT_EQ(bsvd::device::ormbr_q(4, 2, a, 4, t, 2, C, 3, w), -8);
  EXPECT_EQ(bsvd::device::ormbr_p(2, 4, a, 2, t, 2, C, 3, w), -8); // P's C has n rows
  for (const T &x : C) EXPECT_EQ(x, T(3));
}

} // namespace
