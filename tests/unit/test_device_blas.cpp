// bsvd::device::gemv's split op T / C (include/bsvd/device/blas.cuh, the
// `lanes` argument) on the host: the partial sums and their butterfly in
// the documented order (a real product recomputed here with std::fma), the
// same bits on teams of host threads as on one thread, and the plan's lanes
// rule (plan::gemv_lanes). Its accuracy against CBLAS is tested through the
// C API (test_gemv.cpp), whose cpu backend takes the same split; the GPU
// test compares the kernel's bits with that backend's.
#include <bsvd/device/blas.cuh>

#include "bidiag_helpers.hpp"
#include "blas_api_helpers.hpp"
#include "plan/bidiag.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <vector>

namespace {

namespace dev = bsvd::device;
using blas_test::random_value;
namespace plan = bsvd::detail::plan;

template <class T> class DeviceSplitGemv : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(DeviceSplitGemv, Types);

template <class T> class DeviceSplitGemvReal : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(DeviceSplitGemvReal, RealTypes);

// y_c = alpha (sum over p of the partials, combined pairwise at offsets
// g/2, ..., 1) + beta y_c, every operation rounded as the header says.
TYPED_TEST(DeviceSplitGemvReal, ButterflyInTheDocumentedOrder) {
  using T = TypeParam;
  std::mt19937_64 g(5);
  const int m = 37, n = 6, lda = 40;
  std::vector<T> A(size_t(lda) * n), x(m), y(n);
  for (T &v : A) v = random_value<T>(g);
  for (T &v : x) v = random_value<T>(g);
  for (T &v : y) v = random_value<T>(g);
  const T alpha = random_value<T>(g), beta = random_value<T>(g);
  for (int lanes : {2, 8, 32}) {
    std::vector<T> want = y, got = y;
    for (int c = 0; c < n; ++c) {
      std::vector<T> part(lanes, T(0)), next(lanes);
      for (int p = 0; p < lanes; ++p)
        for (int i = p; i < m; i += lanes)
          part[p] = std::fma(A[i + size_t(c) * lda], x[i], part[p]);
      for (int o = lanes / 2; o > 0; o /= 2) {
        for (int p = 0; p < lanes; ++p) next[p] = part[p] + part[p ^ o];
        part = next;
      }
      want[c] = std::fma(beta, y[c], alpha * part[0]);
    }
    dev::gemv(dev::op::T, m, n, alpha, A.data(), lda, x.data(), 1, beta, got.data(), 1,
              dev::serial_team{}, lanes);
    EXPECT_TRUE(bidiag_test::same_bits(got, want)) << "lanes " << lanes;
  }
}

// Teams of 3 and 8 host threads, every op T / C, increments of both signs,
// lanes 2 and 32 (with rows fewer and more than the lanes): the bits of one
// thread. Lanes 1 and op N stay the serial row order.
TYPED_TEST(DeviceSplitGemv, TeamsGiveTheSerialBits) {
  using T = TypeParam;
  std::mt19937_64 g(9);
  int checked = 0;
  for (auto [m, n] : {std::pair{5, 9}, std::pair{70, 33}})
    for (auto t : {dev::op::T, dev::op::C})
      for (int inc : {1, -2})
        for (int lanes : {2, 32}) {
          const int lda = m + 1;
          std::vector<T> A(size_t(lda) * n), x(size_t(1 + (m - 1) * std::abs(inc))),
              y(size_t(1 + (n - 1) * std::abs(inc)));
          for (T &v : A) v = random_value<T>(g);
          for (T &v : x) v = random_value<T>(g);
          for (T &v : y) v = random_value<T>(g);
          const T alpha = random_value<T>(g), beta = random_value<T>(g);
          std::vector<T> want = y;
          dev::gemv(t, m, n, alpha, A.data(), lda, x.data(), inc, beta, want.data(), inc,
                    dev::serial_team{}, lanes);
          for (int nt : {3, 8}) {
            std::vector<T> got = y;
            bidiag_test::run_team(nt, [&](const bidiag_test::HostTeam &team) {
              dev::gemv(t, m, n, alpha, A.data(), lda, x.data(), inc, beta, got.data(), inc, team,
                        lanes);
            });
            EXPECT_TRUE(bidiag_test::same_bits(got, want))
                << m << "x" << n << " op " << int(t) << " inc " << inc << " lanes " << lanes
                << " team " << nt;
            ++checked;
          }
        }
  EXPECT_EQ(checked, 2 * 2 * 2 * 2 * 2);
}

TEST(DeviceSplitGemvPlan, LanesRule) {
  EXPECT_EQ(plan::gemv_lanes(true, 1000), 1);
  EXPECT_EQ(plan::gemv_lanes(false, 0), 1);
  EXPECT_EQ(plan::gemv_lanes(false, 1), 1);
  EXPECT_EQ(plan::gemv_lanes(false, 2), 2);
  EXPECT_EQ(plan::gemv_lanes(false, 5), 8);
  EXPECT_EQ(plan::gemv_lanes(false, 32), 32);
  EXPECT_EQ(plan::gemv_lanes(false, 1000), 32);
  static_assert(plan::gemv_lanes(false, 17) == 32, "a constant expression (device code uses it)");
}

} // namespace
