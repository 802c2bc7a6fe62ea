// bsvd::device::svd (include/bsvd/device/svd.cuh) run on the host: the
// header is its own CPU twin, so these are the accuracy tests of the code
// that GPU kernels (the tiny tier, users' kernels) run. T1-T4 on the six
// families, the edge cases, both shapes (m >= n, m < n), every n up to MaxN
// with run-time sizes below the compile-time bound, and strided layouts.
#include <bsvd/device/svd.cuh>

#include "testing/generate.hpp"
#include "testing/lapack_ref.hpp"
#include "testing/metrics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <sstream>
#include <vector>

namespace {

using bsvd::testing::Edge;
using bsvd::testing::Family;
using bsvd::testing::Ratios;

template <class T> struct real_of { using type = T; };
template <class R> struct real_of<std::complex<R>> { using type = R; };
template <class T> using R_t = typename real_of<T>::type;

template <class T> class DeviceSvd : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(DeviceSvd, Types);

template <class T> struct Out {
  int info = 99, sweeps = -1;
  std::vector<R_t<T>> S;
  std::vector<T> U, V;
};

// Runs svd<T, MaxM, MaxN> on a column-major m x n A into column-major
// outputs with leading dimensions m + 1 and n + 2 (padding must stay
// untouched).
template <class T, int MaxM, int MaxN>
Out<T> run(int m, int n, const T *A, int lda, bool vectors = true) {
  const int k = std::min(m, n), ldu = m + 1, ldv = n + 2;
  Out<T> o;
  o.S.assign(k, R_t<T>(-7));
  o.U.assign(size_t(ldu) * k, T(-5));
  o.V.assign(size_t(ldv) * k, T(-5));
  o.info =
      bsvd::device::svd<T, MaxM, MaxN>(m, n, A, lda, o.S.data(), vectors ? o.U.data() : nullptr,
                                       ldu, vectors ? o.V.data() : nullptr, ldv, &o.sweeps);
  for (int j = 0; j < k; ++j) {
    EXPECT_EQ(o.U[m + size_t(j) * ldu], T(-5));
    EXPECT_EQ(o.V[n + size_t(j) * ldv], T(-5));
  }
  return o;
}

template <class T>
Ratios ratios(int m, int n, const T *A, int lda, const Out<T> &o, bool with_ref) {
  std::vector<double> sref(std::min(m, n));
  if (with_ref) {
    std::vector<T> Ac(A, A + size_t(lda) * n);
    EXPECT_EQ(bsvd::testing::reference_singular_values<T>(m, n, Ac.data(), lda, sref.data()), 0);
  }
  return bsvd::testing::accuracy<T, R_t<T>>(m, n, A, lda, o.S.data(), o.U.data(), m + 1, o.V.data(),
                                            n + 2, with_ref ? sref.data() : nullptr);
}

std::string str(const Ratios &r) {
  std::ostringstream s;
  s << "t1 " << r.t1 << " t2u " << r.t2u << " t2v " << r.t2v << " t3 " << r.t3 << " t4 " << r.t4;
  return s.str();
}

// Every family, every m x n with 1 <= m, n <= 8 (MaxM = MaxN = 8, so
// padding rows and columns are exercised), and 2 x 2 / 3 x 3 at their
// exact bounds.
template <class T, int MaxM, int MaxN> void families_at(int m, int n, uint64_t seed) {
  for (Family f : bsvd::testing::all_families()) {
    std::vector<T> A(size_t(m) * n);
    bsvd::testing::generate<T>(f, m, n, bsvd::testing::default_kappa<T>(), seed, A.data(), m);
    const Out<T> o = run<T, MaxM, MaxN>(m, n, A.data(), m);
    EXPECT_EQ(o.info, 0);
    const Ratios r = ratios(m, n, A.data(), m, o, true);
    EXPECT_TRUE(r.pass()) << bsvd::testing::family_name(f) << " " << m << "x" << n << " " << str(r);
    for (auto s : o.S) EXPECT_GE(s, R_t<T>(0));
  }
}

TYPED_TEST(DeviceSvd, FamiliesAllShapesUpTo8) {
  using T = TypeParam;
  for (int m = 1; m <= 8; ++m)
    for (int n = 1; n <= 8; ++n) families_at<T, 8, 8>(m, n, 100 + 10 * m + n);
}

TYPED_TEST(DeviceSvd, FamiliesExactBounds) {
  using T = TypeParam;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    families_at<T, 2, 2>(2, 2, seed);
    families_at<T, 3, 3>(3, 3, seed);
    families_at<T, 4, 4>(4, 4, seed);
    families_at<T, 5, 3>(5, 3, seed);
    families_at<T, 3, 5>(3, 5, seed);
  }
  families_at<T, 16, 16>(16, 16, 7);
  families_at<T, 16, 16>(11, 16, 8);
}

TYPED_TEST(DeviceSvd, EdgeCases) {
  using T = TypeParam;
  using R = R_t<T>;
  for (auto [m, n] : std::vector<std::pair<int, int>>{
           {1, 1}, {2, 2}, {3, 3}, {2, 1}, {1, 3}, {6, 4}, {4, 6}, {8, 8}})
    for (Edge e : bsvd::testing::all_edges()) {
      std::vector<T> A(size_t(m) * n);
      bsvd::testing::generate_edge<T>(e, m, n, 77, A.data(), m);
      const Out<T> o = run<T, 8, 8>(m, n, A.data(), m);
      const int k = std::min(m, n);
      const std::string what = std::string(bsvd::testing::edge_name(e)) + " " + std::to_string(m) +
                               "x" + std::to_string(n);
      if (e == Edge::Nan || e == Edge::Inf) {
        EXPECT_EQ(o.info, bsvd::device::kInfoNonFinite) << what;
        for (int j = 0; j < k; ++j) {
          EXPECT_TRUE(std::isnan(o.S[j])) << what;
          EXPECT_TRUE(std::isnan(std::real(o.U[j * (m + 1)]))) << what;
          EXPECT_TRUE(std::isnan(std::real(o.V[j * (n + 2)]))) << what;
        }
        continue;
      }
      EXPECT_EQ(o.info, 0) << what;
      const bool ref = e != Edge::Overflow; // LAPACK's reference may overflow there
      const Ratios r = ratios(m, n, A.data(), m, o, ref);
      EXPECT_TRUE(r.pass()) << what << " " << str(r);
      for (R s : o.S) EXPECT_TRUE(std::isfinite(s)) << what;
      if (e == Edge::Zero)
        for (int j = 0; j < k; ++j) {
          EXPECT_EQ(o.S[j], R(0));
          for (int i = 0; i < m; ++i) EXPECT_EQ(o.U[i + size_t(j) * (m + 1)], T(i == j ? 1 : 0));
          for (int i = 0; i < n; ++i) EXPECT_EQ(o.V[i + size_t(j) * (n + 2)], T(i == j ? 1 : 0));
        }
      if (e == Edge::Identity)
        for (int j = 0; j < k; ++j) EXPECT_EQ(o.S[j], R(1)) << what;
      if (e == Edge::RankDeficient)
        for (int j = std::max(1, k / 2); j < k; ++j)
          EXPECT_LT(double(o.S[j]), 30 * k * double(bsvd::device::detail::u_<R>()) * o.S[0]);
    }
}

// Scaled copies of one matrix: S scales exactly (power-of-two factors) and
// U, V do not change, from near underflow (subnormal entries included) to
// near overflow.
TYPED_TEST(DeviceSvd, ScalingIsExact) {
  using T = TypeParam;
  using R = R_t<T>;
  const int lo = std::is_same_v<R, float> ? -140 : -1060;
  const int hi = std::is_same_v<R, float> ? 124 : 1019;
  for (auto [m, n] : std::vector<std::pair<int, int>>{{3, 3}, {2, 2}, {5, 2}, {2, 5}}) {
    std::vector<T> A(size_t(m) * n);
    bsvd::testing::generate<T>(Family::Random, m, n, 1, 9, A.data(), m);
    for (auto &x : A) x *= R(0.5); // entries below 1 keep the scaled ones finite
    const Out<T> base = run<T, 5, 5>(m, n, A.data(), m);
    for (int e : {lo, -300 * (lo < -200), -20, 20, 300 * (hi > 200), hi}) {
      std::vector<T> B(A);
      for (auto &x : B) x *= std::ldexp(R(1), e);
      if (e < -126) continue; // subnormal entries lose bits: not an exact copy
      const Out<T> o = run<T, 5, 5>(m, n, B.data(), m);
      EXPECT_EQ(o.info, 0);
      for (size_t j = 0; j < o.S.size(); ++j)
        EXPECT_EQ(o.S[j], std::ldexp(base.S[j], e)) << m << "x" << n << " 2^" << e;
      EXPECT_EQ(o.U, base.U);
      EXPECT_EQ(o.V, base.V);
    }
  }
}

TYPED_TEST(DeviceSvd, ValuesOnlyGivesTheSameS) {
  using T = TypeParam;
  for (auto [m, n] : std::vector<std::pair<int, int>>{{3, 3}, {7, 4}, {4, 7}}) {
    std::vector<T> A(size_t(m) * n);
    bsvd::testing::generate<T>(Family::Geo, m, n, bsvd::testing::default_kappa<T>(), 3, A.data(),
                               m);
    const Out<T> a = run<T, 8, 8>(m, n, A.data(), m, true);
    const Out<T> b = run<T, 8, 8>(m, n, A.data(), m, false);
    EXPECT_EQ(a.S, b.S);
    EXPECT_EQ(a.sweeps, b.sweeps);
  }
}

// Row-major input and output through svd_strided give the same bits as the
// column-major form.
TYPED_TEST(DeviceSvd, RowMajorLayout) {
  using T = TypeParam;
  using R = R_t<T>;
  const int m = 3, n = 3;
  std::vector<T> A(9), Ar(9);
  bsvd::testing::generate<T>(Family::Random, m, n, 1, 11, A.data(), m);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) Ar[i * n + j] = A[i + j * m];
  std::vector<R> S(3), Sr(3);
  std::vector<T> U(9), V(9), Ur(9), Vr(9);
  bsvd::device::svd<T, 3, 3>(m, n, A.data(), m, S.data(), U.data(), m, V.data(), n);
  bsvd::device::svd_strided<T, 3, 3>(m, n, Ar.data(), n, 1, Sr.data(), 1, Ur.data(), 3, 1,
                                     Vr.data(), 3, 1);
  EXPECT_EQ(S, Sr);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      EXPECT_EQ(U[i + 3 * j], Ur[i * 3 + j]);
      EXPECT_EQ(V[i + 3 * j], Vr[i * 3 + j]);
    }
}

TYPED_TEST(DeviceSvd, SizesBeyondTheBoundWriteNothing) {
  using T = TypeParam;
  using R = R_t<T>;
  std::vector<T> A(16, T(1));
  std::vector<R> S(4, R(-7));
  EXPECT_EQ((bsvd::device::svd<T, 3, 3>(4, 2, A.data(), 4, S.data(), nullptr, 1, nullptr, 1)),
            bsvd::device::kInfoTooLarge);
  EXPECT_EQ(S[0], R(-7));
  EXPECT_EQ((bsvd::device::svd<T, 3, 3>(0, 2, A.data(), 1, S.data(), nullptr, 1, nullptr, 1)), 0);
}

// The 2 x 2 case: one rotation and one checking sweep, rarely a second
// rotation; with a threshold of sqrt(2) u some ran to the cap (threshold.cuh).
TYPED_TEST(DeviceSvd, TwoByTwoSweeps) {
  using T = TypeParam;
  int worst = 0;
  for (uint64_t seed = 1; seed <= 5000; ++seed) {
    std::vector<T> A(4);
    bsvd::testing::generate<T>(Family::Random, 2, 2, 1, seed, A.data(), 2);
    const Out<T> o = run<T, 2, 2>(2, 2, A.data(), 2);
    ASSERT_EQ(o.info, 0) << seed;
    worst = std::max(worst, o.sweeps);
  }
  EXPECT_LE(worst, 3);
}

// The stopping rule (threshold.cuh) on random tiny matrices: none may end
// at the sweep cap. 10^5 of each of 2 x 2, 3 x 3, 4 x 4 per precision
// (the first of the batches of test_cpu_convergence.cpp, which checks the
// library's CPU solver on 10^6 d; the GPU tier on 10^6: test_gpu_tiny.cpp).
template <class T, int N> void expect_random_converge(int m, int n, long count, int max_sweeps) {
  std::vector<T> A(size_t(m) * n);
  std::vector<R_t<T>> S(std::min(m, n));
  long bad = 0;
  int worst = 0;
  for (long b = 0; b < count; ++b) {
    bsvd::testing::generate<T>(Family::Random, m, n, 1, 7 * 1000003ull + uint64_t(b), A.data(), m);
    int sw = 0;
    const int info =
        bsvd::device::svd<T, N, N>(m, n, A.data(), m, S.data(), nullptr, 1, nullptr, 1, &sw);
    if (info != 0 && bad++ == 0)
      ADD_FAILURE() << m << "x" << n << " matrix " << b << " info " << info;
    worst = std::max(worst, sw);
  }
  EXPECT_EQ(bad, 0) << m << "x" << n;
  EXPECT_LE(worst, max_sweeps) << m << "x" << n;
}

TYPED_TEST(DeviceSvd, RandomTinyConverge) {
  using T = TypeParam;
  expect_random_converge<T, 2>(2, 2, 100000, 3);
  expect_random_converge<T, 3>(3, 3, 100000, 6);
  expect_random_converge<T, 4>(4, 4, 100000, 7);
}

} // namespace
