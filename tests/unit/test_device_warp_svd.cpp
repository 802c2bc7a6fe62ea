// bsvd::device::warp_svd (include/bsvd/device/warp_svd.cuh) run on the
// host, where the header emulates its L lanes in lock step: the CPU twin of
// the lanes variant (the kernel and users' kernels run the same source).
// T1-T4 on the six families, the edge cases, both shapes, run-time sizes
// below the bounds, exact scaling, values only.
#include <bsvd/device/warp_svd.cuh>

#include "testing/generate.hpp"
#include "testing/io.hpp"
#include "testing/lapack_ref.hpp"
#include "testing/metrics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <sstream>
#include <string>
#include <vector>

namespace {

using bsvd::testing::Edge;
using bsvd::testing::Family;
using bsvd::testing::Ratios;

template <class T> struct real_of { using type = T; };
template <class R> struct real_of<std::complex<R>> { using type = R; };
template <class T> using R_t = typename real_of<T>::type;

template <class T> class DeviceWarpSvd : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(DeviceWarpSvd, Types);

template <class T> struct Out {
  int info = 99, sweeps = -1;
  std::vector<R_t<T>> S;
  std::vector<T> U, V;
};

// warp_svd<T, MaxM, MaxN, L> on a column-major m x n A; outputs with
// leading dimensions m + 1 and n + 2 (the padding must stay untouched).
template <class T, int MaxM, int MaxN, int L>
Out<T> run(int m, int n, const T *A, int lda, bool vectors = true) {
  const int k = std::min(m, n), ldu = m + 1, ldv = n + 2;
  Out<T> o;
  o.S.assign(k, R_t<T>(-7));
  o.U.assign(size_t(ldu) * k, T(-5));
  o.V.assign(size_t(ldv) * k, T(-5));
  o.info = bsvd::device::warp_svd<T, MaxM, MaxN, L>(0, m, n, A, lda, o.S.data(),
                                                    vectors ? o.U.data() : nullptr, ldu,
                                                    vectors ? o.V.data() : nullptr, ldv, &o.sweeps);
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

template <class T, int MaxM, int MaxN, int L> void families_at(int m, int n, uint64_t seed) {
  for (Family f : bsvd::testing::all_families()) {
    std::vector<T> A(size_t(m) * n);
    bsvd::testing::generate<T>(f, m, n, bsvd::testing::default_kappa<T>(), seed, A.data(), m);
    const Out<T> o = run<T, MaxM, MaxN, L>(m, n, A.data(), m);
    EXPECT_EQ(o.info, 0);
    const Ratios r = ratios(m, n, A.data(), m, o, true);
    EXPECT_TRUE(r.pass()) << bsvd::testing::family_name(f) << " " << m << "x" << n << " L " << L
                          << " " << str(r);
    for (size_t j = 0; j < o.S.size(); ++j) {
      EXPECT_GE(o.S[j], R_t<T>(0));
      if (j) EXPECT_GE(o.S[j - 1], o.S[j]);
    }
  }
}

TYPED_TEST(DeviceWarpSvd, FamiliesAllShapesUpTo8) {
  using T = TypeParam;
  for (int m = 1; m <= 8; ++m)
    for (int n = 1; n <= 8; ++n) families_at<T, 8, 8, 8>(m, n, 100 + 10 * m + n);
}

TYPED_TEST(DeviceWarpSvd, FamiliesOtherLaneCounts) {
  using T = TypeParam;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    families_at<T, 2, 2, 2>(2, 2, seed);
    families_at<T, 3, 3, 4>(3, 3, seed);
    families_at<T, 4, 4, 4>(4, 4, seed);
    families_at<T, 5, 3, 4>(5, 3, seed);
    families_at<T, 3, 5, 4>(3, 5, seed);
    families_at<T, 6, 6, 16>(6, 6, seed); // more lanes than columns
  }
  families_at<T, 16, 16, 16>(16, 16, 7);
  families_at<T, 16, 16, 16>(11, 16, 8);
  families_at<T, 16, 16, 16>(16, 9, 9);
}

// The GPU tier's L = 32 instance (src/cuda/tiny/lanes.cuh); in d and z the
// partner's column is fetched twice per round instead of held.
TYPED_TEST(DeviceWarpSvd, FamiliesUpTo32) {
  using T = TypeParam;
  families_at<T, 32, 32, 32>(32, 32, 21);
  families_at<T, 32, 32, 32>(32, 17, 22);
  families_at<T, 32, 32, 32>(20, 29, 23);
}

TYPED_TEST(DeviceWarpSvd, EdgeCases) {
  using T = TypeParam;
  using R = R_t<T>;
  for (auto [m, n] : std::vector<std::pair<int, int>>{
           {1, 1}, {2, 2}, {3, 3}, {2, 1}, {1, 3}, {6, 4}, {4, 6}, {8, 8}})
    for (Edge e : bsvd::testing::all_edges()) {
      std::vector<T> A(size_t(m) * n);
      bsvd::testing::generate_edge<T>(e, m, n, 77, A.data(), m);
      const Out<T> o = run<T, 8, 8, 8>(m, n, A.data(), m);
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

// Power-of-two scaling of one matrix scales S exactly and leaves U, V alone.
TYPED_TEST(DeviceWarpSvd, ScalingIsExact) {
  using T = TypeParam;
  using R = R_t<T>;
  const int hi = std::is_same_v<R, float> ? 124 : 1019;
  for (auto [m, n] : std::vector<std::pair<int, int>>{{3, 3}, {5, 2}, {2, 5}, {8, 8}}) {
    std::vector<T> A(size_t(m) * n);
    bsvd::testing::generate<T>(Family::Random, m, n, 1, 9, A.data(), m);
    for (auto &x : A) x *= R(0.5);
    const Out<T> base = run<T, 8, 8, 8>(m, n, A.data(), m);
    for (int e : {-100, -20, 20, 100, hi}) {
      std::vector<T> B(A);
      for (auto &x : B) x *= std::ldexp(R(1), e);
      const Out<T> o = run<T, 8, 8, 8>(m, n, B.data(), m);
      EXPECT_EQ(o.info, 0);
      for (size_t j = 0; j < o.S.size(); ++j)
        EXPECT_EQ(o.S[j], std::ldexp(base.S[j], e)) << m << "x" << n << " 2^" << e;
      EXPECT_EQ(o.U, base.U);
      EXPECT_EQ(o.V, base.V);
    }
  }
}

TYPED_TEST(DeviceWarpSvd, ValuesOnlyGivesTheSameS) {
  using T = TypeParam;
  for (auto [m, n] : std::vector<std::pair<int, int>>{{3, 3}, {7, 4}, {4, 7}, {8, 8}}) {
    std::vector<T> A(size_t(m) * n);
    bsvd::testing::generate<T>(Family::Geo, m, n, bsvd::testing::default_kappa<T>(), 3, A.data(),
                               m);
    const Out<T> a = run<T, 8, 8, 8>(m, n, A.data(), m, true);
    const Out<T> b = run<T, 8, 8, 8>(m, n, A.data(), m, false);
    EXPECT_EQ(a.S, b.S);
    EXPECT_EQ(a.sweeps, b.sweeps);
  }
}

// The lanes and the one-thread solver run the same rotations in another
// order: singular values agree to rounding (8 sqrt(n) u of sigma_1).
TYPED_TEST(DeviceWarpSvd, AgreesWithOneThreadSolver) {
  using T = TypeParam;
  using R = R_t<T>;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const int m = 8, n = 5 + int(seed % 4);
    std::vector<T> A(size_t(m) * n);
    bsvd::testing::generate<T>(Family::Random, m, n, 1, seed, A.data(), m);
    const Out<T> o = run<T, 8, 8, 8>(m, n, A.data(), m);
    std::vector<R> S(n);
    bsvd::device::svd<T, 8, 8>(m, n, A.data(), m, S.data(), nullptr, 1, nullptr, 1);
    for (int j = 0; j < n; ++j)
      EXPECT_LE(std::abs(double(o.S[j]) - double(S[j])),
                8 * std::sqrt(8.0) * double(bsvd::device::detail::u_<R>()) * double(S[0]));
  }
}

TYPED_TEST(DeviceWarpSvd, SizesBeyondTheBoundWriteNothing) {
  using T = TypeParam;
  using R = R_t<T>;
  std::vector<T> A(16, T(1));
  std::vector<R> S(4, R(-7));
  EXPECT_EQ(
      (bsvd::device::warp_svd<T, 3, 3, 4>(0, 4, 2, A.data(), 4, S.data(), nullptr, 1, nullptr, 1)),
      bsvd::device::kInfoTooLarge);
  EXPECT_EQ(S[0], R(-7));
}

// The register tier's twins on every SuiteSparse matrix of data/matrices
// that the tier can hold (max(m, n) <= 32): the one-thread solver up to 8,
// the lanes variant's instances of 8, 16 and 32 lanes. Rank-deficient ones
// (jgl009, rel3, Tina_AskCal, n3c4-b1, ...) leave columns whose squared
// norm underflows; they ran to the sweep cap before the pair test skipped
// them (threshold.cuh rotates_pair).
template <class T> void expect_matrix_converges(const bsvd::testing::DenseMatrix &dm) {
  const int m = dm.m, n = dm.n, mx = std::max(m, n);
  const std::vector<T> A = bsvd::testing::dense_as<T>(dm);
  auto check = [&](const Out<T> &o, const char *solver) {
    EXPECT_EQ(o.info, 0) << dm.name << " " << m << "x" << n << " " << solver << ", " << o.sweeps
                         << " sweeps";
    const Ratios r = ratios(m, n, A.data(), m, o, true);
    EXPECT_TRUE(r.pass()) << dm.name << " " << solver << " " << str(r);
  };
  if (mx <= 8) {
    Out<T> o;
    const int k = std::min(m, n);
    o.S.assign(k, R_t<T>(-7));
    o.U.assign(size_t(m + 1) * k, T(-5));
    o.V.assign(size_t(n + 2) * k, T(-5));
    o.info = bsvd::device::svd<T, 8, 8>(m, n, A.data(), m, o.S.data(), o.U.data(), m + 1,
                                        o.V.data(), n + 2, &o.sweeps);
    check(o, "svd<8, 8>");
    check(run<T, 8, 8, 8>(m, n, A.data(), m), "warp_svd L 8");
  }
  if (mx <= 16) check(run<T, 16, 16, 16>(m, n, A.data(), m), "warp_svd L 16");
  check(run<T, 32, 32, 32>(m, n, A.data(), m), "warp_svd L 32");
}

TYPED_TEST(DeviceWarpSvd, SuiteSparseMatricesThatFit) {
  using T = TypeParam;
  int tested = 0;
  for (const auto &path : bsvd::testing::list_matrix_market(bsvd::testing::default_matrix_dir())) {
    bsvd::testing::DenseMatrix dm;
    std::string err;
    ASSERT_TRUE(bsvd::testing::read_matrix_market(path, dm, err)) << err;
    if (std::max(dm.m, dm.n) > 32) continue;
    expect_matrix_converges<T>(dm);
    ++tested;
  }
  EXPECT_EQ(tested, 31);
}

} // namespace
