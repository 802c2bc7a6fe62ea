// bsvd::device::gels (include/bsvd/device/gels.cuh) against LAPACK's xGELS
// on the four problems (QR and LQ, op N and op C), s/d/c/z: the solution,
// the residual rows and the factored A agree to a few units of roundoff
// times the size (the matrices are well conditioned, so any difference of
// method shows). Teams of host threads (team.cuh's contract with the CUDA
// block) give the serial result to roundoff; a team of one, its bits. A
// zero pivot gives xGELS's info and leaves B as it came; empty shapes zero
// X as xGELS does; bad arguments get their positions.
#include <bsvd/device/gels.cuh>

#include "bidiag_helpers.hpp"
#include "blas_api_helpers.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <vector>

namespace {

namespace dev = bsvd::device;
using bidiag_test::R_t;
using blas_test::random_value;

template <class T> class DeviceGels : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(DeviceGels, Types);

int lapack_gels(char t, int m, int n, int k, float *A, int lda, float *B, int ldb) {
  return LAPACKE_sgels(LAPACK_COL_MAJOR, t == 'N' ? 'N' : 'T', m, n, k, A, lda, B, ldb);
}
int lapack_gels(char t, int m, int n, int k, double *A, int lda, double *B, int ldb) {
  return LAPACKE_dgels(LAPACK_COL_MAJOR, t == 'N' ? 'N' : 'T', m, n, k, A, lda, B, ldb);
}
int lapack_gels(char t, int m, int n, int k, std::complex<float> *A, int lda,
                std::complex<float> *B, int ldb) {
  return LAPACKE_cgels(LAPACK_COL_MAJOR, t, m, n, k, A, lda, B, ldb);
}
int lapack_gels(char t, int m, int n, int k, std::complex<double> *A, int lda,
                std::complex<double> *B, int ldb) {
  return LAPACKE_zgels(LAPACK_COL_MAJOR, t, m, n, k, A, lda, B, ldb);
}

// An m x n matrix (leading dimension lda) whose leading diagonal is raised
// by max(m, n): singular values near max(m, n), condition number below 3.
template <class T> std::vector<T> well_conditioned(int m, int n, int lda, std::mt19937_64 &g) {
  std::vector<T> A(size_t(lda) * std::max(n, 1));
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) A[i + size_t(j) * lda] = random_value<T>(g);
  for (int i = 0; i < std::min(m, n); ++i) A[i + size_t(i) * lda] += T(R_t<T>(std::max(m, n)));
  return A;
}

// max |a - b| over the leading rows x cols, relative to max |b| (1 if 0).
template <class T>
double rel_diff(const std::vector<T> &a, const std::vector<T> &b, int rows, int cols, int ld) {
  double d = 0, s = 0;
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) {
      d = std::max(d, double(std::abs(a[i + size_t(j) * ld] - b[i + size_t(j) * ld])));
      s = std::max(s, double(std::abs(b[i + size_t(j) * ld])));
    }
  return d / (s > 0 ? s : 1);
}

struct Shape {
  int m, n, nrhs;
};
const Shape kShapes[] = {{1, 1, 1},   {5, 3, 2},   {40, 17, 3},  {70, 70, 1}, {3, 5, 2},
                         {17, 40, 3}, {33, 64, 1}, {130, 40, 2}, {6, 4, 9}};

// op for the device call and LAPACK's letter: C for complex, T for real.
template <class T> char lapack_letter(dev::op t) {
  return t == dev::op::N ? 'N' : (std::is_same_v<T, R_t<T>> ? 'T' : 'C');
}

TYPED_TEST(DeviceGels, MatchesLapackOnTheFourProblems) {
  using T = TypeParam;
  const double u = bidiag_test::unit_roundoff<R_t<T>>();
  std::mt19937_64 g(91);
  for (const Shape &s : kShapes)
    for (dev::op t : {dev::op::N, dev::op::C}) {
      const int lda = s.m + 2, ldb = std::max(s.m, s.n) + 1;
      const std::vector<T> A0 = well_conditioned<T>(s.m, s.n, lda, g);
      std::vector<T> B0(size_t(ldb) * s.nrhs);
      for (T &v : B0) v = random_value<T>(g);
      std::vector<T> A = A0, B = B0, Aref = A0, Bref = B0;
      std::vector<T> work(dev::gels_work(s.m, s.n, s.nrhs));
      ASSERT_EQ(dev::gels(t, s.m, s.n, s.nrhs, A.data(), lda, B.data(), ldb, work.data()), 0);
      ASSERT_EQ(
          lapack_gels(lapack_letter<T>(t), s.m, s.n, s.nrhs, Aref.data(), lda, Bref.data(), ldb),
          0);
      // X's rows: n (op N) or m (op C); a least-squares problem also
      // leaves its residual's components below them, compared too.
      const int rows = std::max(s.m, s.n);
      const double tol = 30 * rows * u;
      EXPECT_LE(rel_diff(B, Bref, rows, s.nrhs, ldb), tol)
          << bidiag_test::prec_name<T>() << " " << s.m << "x" << s.n << " op " << int(t);
      EXPECT_LE(rel_diff(A, Aref, s.m, s.n, lda), tol)
          << "factored A, " << s.m << "x" << s.n << " op " << int(t);
    }
}

TYPED_TEST(DeviceGels, TeamsGiveTheSerialResult) {
  using T = TypeParam;
  const double u = bidiag_test::unit_roundoff<R_t<T>>();
  std::mt19937_64 g(93);
  for (const Shape &s : {Shape{40, 17, 3}, Shape{17, 40, 2}, Shape{70, 70, 2}})
    for (dev::op t : {dev::op::N, dev::op::C}) {
      const int lda = s.m, ldb = std::max(s.m, s.n);
      const std::vector<T> A0 = well_conditioned<T>(s.m, s.n, lda, g);
      std::vector<T> B0(size_t(ldb) * s.nrhs);
      for (T &v : B0) v = random_value<T>(g);
      std::vector<T> Aw = A0, Bw = B0, work(dev::gels_work(s.m, s.n, s.nrhs));
      ASSERT_EQ(dev::gels(t, s.m, s.n, s.nrhs, Aw.data(), lda, Bw.data(), ldb, work.data()), 0);
      for (int nt : {1, 3, 8, 33}) {
        std::vector<T> A = A0, B = B0, tw(work.size()), stage(dev::trsv_work(dev::kTrsvBlock));
        std::vector<int> info(nt, 99);
        bidiag_test::run_team(nt, [&](const bidiag_test::HostTeam &team) {
          info[team.rank()] = dev::gels(t, s.m, s.n, s.nrhs, A.data(), lda, B.data(), ldb,
                                        tw.data(), team, nt == 8 ? stage.data() : nullptr);
        });
        EXPECT_EQ(info, std::vector<int>(nt, 0));
        if (nt == 1) {
          EXPECT_TRUE(bidiag_test::same_bits(B, Bw)) << "a team of one is the serial code";
        } else {
          // (the norms' team sums round differently: roundoff, not bits)
          EXPECT_LE(rel_diff(B, Bw, ldb, s.nrhs, ldb), 30 * ldb * u)
              << s.m << "x" << s.n << " op " << int(t) << " team " << nt;
        }
      }
    }
}

TYPED_TEST(DeviceGels, ZeroPivotLeavesBAsItCame) {
  using T = TypeParam;
  std::mt19937_64 g(95);
  for (const Shape &s : {Shape{30, 12, 2}, Shape{12, 30, 2}})
    for (dev::op t : {dev::op::N, dev::op::C}) {
      const int lda = s.m, ldb = std::max(s.m, s.n);
      std::vector<T> A = well_conditioned<T>(s.m, s.n, lda, g);
      // A zero column 7 (QR) or row 7 (LQ): the factor's 8th pivot is 0.
      for (int e = 0; e < std::max(s.m, s.n); ++e)
        if (s.m >= s.n ? e < s.m : e < s.n)
          (s.m >= s.n ? A[e + size_t(7) * lda] : A[7 + size_t(e) * lda]) = T(0);
      std::vector<T> B(size_t(ldb) * s.nrhs);
      for (T &v : B) v = random_value<T>(g);
      const std::vector<T> B0 = B;
      std::vector<T> work(dev::gels_work(s.m, s.n, s.nrhs));
      for (int nt : {1, 5}) {
        std::vector<T> Ac = A;
        B = B0;
        std::vector<int> info(nt, 99);
        bidiag_test::run_team(nt, [&](const bidiag_test::HostTeam &team) {
          info[team.rank()] =
              dev::gels(t, s.m, s.n, s.nrhs, Ac.data(), lda, B.data(), ldb, work.data(), team);
        });
        EXPECT_EQ(info, std::vector<int>(nt, 8)) << s.m << "x" << s.n << " team " << nt;
        EXPECT_TRUE(bidiag_test::same_bits(B, B0)) << "B must be untouched";
      }
    }
}

TYPED_TEST(DeviceGels, EmptyShapesAndBadArguments) {
  using T = TypeParam;
  std::vector<T> A(16, T(1)), B(16, T(R_t<T>(7))), work(64);
  // min(m, n) = 0: the max(m, n) rows of X are zero, the rest untouched.
  ASSERT_EQ(dev::gels(dev::op::N, 0, 3, 2, A.data(), 1, B.data(), 4, work.data()), 0);
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 4; ++i) EXPECT_EQ(B[i + 4 * j], i < 3 ? T(0) : T(R_t<T>(7)));
  EXPECT_EQ(dev::gels(dev::op::N, 3, 0, 0, A.data(), 3, B.data(), 3, work.data()), 0);
  EXPECT_EQ(dev::gels(dev::op::N, -1, 2, 1, A.data(), 1, B.data(), 2, work.data()), -2);
  EXPECT_EQ(dev::gels(dev::op::N, 2, -1, 1, A.data(), 2, B.data(), 2, work.data()), -3);
  EXPECT_EQ(dev::gels(dev::op::N, 2, 2, -1, A.data(), 2, B.data(), 2, work.data()), -4);
  EXPECT_EQ(dev::gels(dev::op::N, 3, 2, 1, A.data(), 2, B.data(), 3, work.data()), -6);
  EXPECT_EQ(dev::gels(dev::op::N, 2, 3, 1, A.data(), 2, B.data(), 2, work.data()), -8);
}

} // namespace
