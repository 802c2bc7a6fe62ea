// bsvd::device::trsv (include/bsvd/device/trsv.cuh) on teams of host
// threads, the contract the CUDA kernel relies on: any team size, any lead
// size and staging through a work area give the serial bits (each unknown
// receives its updates in substitution order), for every uplo / op / diag,
// increments of both signs and block sizes that do and do not divide n;
// the other triangle of A is never used (NaN there changes nothing); the
// first zero pivot is found by every member alike, x untouched. The serial
// solve's accuracy is tested through the C API (test_trsv.cpp).
#include <bsvd/device/trsv.cuh>

#include "bidiag_helpers.hpp"
#include "blas_api_helpers.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace {

namespace dev = bsvd::device;
using blas_test::random_value;

template <class T> class DeviceTrsv : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(DeviceTrsv, Types);

// A diagonally dominant triangle (uplo) of order n in an lda x n array
// whose other triangle holds NaN.
template <class T> std::vector<T> triangle(dev::uplo ul, int n, int lda, std::mt19937_64 &g) {
  using R = bidiag_test::R_t<T>;
  std::vector<T> A(size_t(lda) * n, T(std::numeric_limits<R>::quiet_NaN()));
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      if (ul == dev::uplo::L ? i >= j : i <= j) A[i + size_t(j) * lda] = random_value<T>(g);
  for (int j = 0; j < n; ++j) A[j + size_t(j) * lda] += T(R(n + 1));
  return A;
}

struct TeamCase {
  int nt, lead, nb;
  bool staged;
};

TYPED_TEST(DeviceTrsv, EveryTeamGivesTheSerialBits) {
  using T = TypeParam;
  std::mt19937_64 g(71);
  const TeamCase cases[] = {{1, 0, 32, true}, {3, 0, 32, false}, {3, 2, 7, true},
                            {8, 4, 32, true}, {8, 3, 7, false},  {33, 32, 32, true}};
  int checked = 0;
  for (int n : {1, 5, 33, 70})
    for (auto ul : {dev::uplo::L, dev::uplo::U})
      for (auto t : {dev::op::N, dev::op::T, dev::op::C})
        for (auto dg : {dev::diag::N, dev::diag::U})
          for (int inc : {1, -2}) {
            const int lda = n + 3, len = 1 + (n - 1) * std::abs(inc);
            const std::vector<T> A = triangle<T>(ul, n, lda, g);
            std::vector<T> b(len);
            for (T &v : b) v = random_value<T>(g);
            for (const TeamCase &c : cases) {
              // (a team far larger than n adds nothing; the team of 33 --
              // a full lead and one more -- once per shape and op)
              if (c.nt > n + 1 || (c.nt > 32 && (inc != 1 || dg != dev::diag::N))) continue;
              std::vector<T> want = b;
              ASSERT_EQ(dev::trsv(ul, t, dg, n, A.data(), lda, want.data(), inc, dev::serial_team{},
                                  c.nb),
                        0);
              for (const T &v : want) ASSERT_TRUE(std::isfinite(std::abs(v)));
              std::vector<T> got = b, work(dev::trsv_work(c.nb));
              std::vector<int> info(c.nt, 99);
              bidiag_test::run_team(
                  c.nt,
                  [&](const bidiag_test::HostTeam &team) {
                    info[team.rank()] = dev::trsv(ul, t, dg, n, A.data(), lda, got.data(), inc,
                                                  team, c.nb, c.staged ? work.data() : nullptr);
                  },
                  c.lead);
              EXPECT_EQ(info, std::vector<int>(c.nt, 0));
              EXPECT_TRUE(bidiag_test::same_bits(got, want))
                  << "n " << n << " uplo " << int(ul) << " op " << int(t) << " diag " << int(dg)
                  << " inc " << inc << " team " << c.nt << " lead " << c.lead << " nb " << c.nb
                  << (c.staged ? " staged" : "");
              ++checked;
            }
          }
  EXPECT_EQ(checked, (1 + 3 + 5 + 5) * 2 * 3 * 2 * 2 + 2 * 2 * 3); // teams per n = 1, 5, 33, 70
}

TYPED_TEST(DeviceTrsv, FirstZeroPivotOnEveryMember) {
  using T = TypeParam;
  std::mt19937_64 g(73);
  const int n = 50, lda = n;
  std::vector<T> A = triangle<T>(dev::uplo::U, n, lda, g);
  A[41 + size_t(41) * lda] = T(0);
  A[17 + size_t(17) * lda] = T(0);
  std::vector<T> x(n);
  for (T &v : x) v = random_value<T>(g);
  for (int nt : {1, 6, 33}) {
    std::vector<T> got = x, work(dev::trsv_work(dev::kTrsvBlock));
    std::vector<int> info(nt, 99);
    bidiag_test::run_team(nt, [&](const bidiag_test::HostTeam &team) {
      info[team.rank()] = dev::trsv(dev::uplo::U, dev::op::N, dev::diag::N, n, A.data(), lda,
                                    got.data(), 1, team, dev::kTrsvBlock, work.data());
    });
    EXPECT_EQ(info, std::vector<int>(nt, 18)) << "team " << nt;
    EXPECT_TRUE(bidiag_test::same_bits(got, x)) << "x must be untouched, team " << nt;
    // A unit diagonal is not read: the same matrix solves.
    bidiag_test::run_team(nt, [&](const bidiag_test::HostTeam &team) {
      info[team.rank()] = dev::trsv(dev::uplo::U, dev::op::N, dev::diag::U, n, A.data(), lda,
                                    got.data(), 1, team, dev::kTrsvBlock, work.data());
    });
    EXPECT_EQ(info, std::vector<int>(nt, 0)) << "team " << nt;
  }
}

} // namespace
