// Batched GELS through the C API (bsvd_<p>gels_*, bsvd.h "Batched LAPACK:
// GELS") on the cpu backend: LAPACK xGELS's solution and residual rows on
// the four problems of well-conditioned matrices; a rank-deficient and a
// non-finite matrix reported by info without spoiling the rest of the
// batch (B left as it came for the zero pivot); the three forms and the
// thread counts agreeing bit for bit, variable sizes and right-hand-side
// counts included; empty shapes; and the argument checks (-position,
// bsvd_last_error(), nothing written). The device code's own tests are
// test_device_gels.cpp.
#include "bidiag_helpers.hpp"
#include "blas_api_helpers.hpp"

#include <bsvd/bsvd.h>
#include <bsvd/svd.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace blas_test;

template <class T> class Gels : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(Gels, Types);

int ref_gels(char t, int m, int n, int k, float *A, int lda, float *B, int ldb) {
  return LAPACKE_sgels(LAPACK_COL_MAJOR, t == 'N' ? 'N' : 'T', m, n, k, A, lda, B, ldb);
}
int ref_gels(char t, int m, int n, int k, double *A, int lda, double *B, int ldb) {
  return LAPACKE_dgels(LAPACK_COL_MAJOR, t == 'N' ? 'N' : 'T', m, n, k, A, lda, B, ldb);
}
int ref_gels(char t, int m, int n, int k, std::complex<float> *A, int lda, std::complex<float> *B,
             int ldb) {
  return LAPACKE_cgels(LAPACK_COL_MAJOR, t, m, n, k, A, lda, B, ldb);
}
int ref_gels(char t, int m, int n, int k, std::complex<double> *A, int lda, std::complex<double> *B,
             int ldb) {
  return LAPACKE_zgels(LAPACK_COL_MAJOR, t, m, n, k, A, lda, B, ldb);
}

bsvd_options_t cpu_opts(int threads = 0) {
  bsvd_options_t o;
  bsvd_options_init(&o);
  o.backend = BSVD_BACKEND_CPU;
  o.num_threads = threads;
  return o;
}

// count matrices m x n (leading dimension lda, stride lda n), their
// leading diagonal raised by max(m, n): condition numbers below 3.
template <class T> std::vector<T> systems(int count, int m, int n, int lda, std::mt19937_64 &g) {
  std::vector<T> A(size_t(lda) * n * count);
  for (T &v : A) v = random_value<T>(g);
  for (int b = 0; b < count; ++b)
    for (int i = 0; i < std::min(m, n); ++i)
      A[size_t(b) * lda * n + i + size_t(i) * lda] += T(R_t<T>(std::max(m, n)));
  return A;
}

template <class T> std::vector<T> rhs(size_t len, std::mt19937_64 &g) {
  std::vector<T> B(len);
  for (T &v : B) v = random_value<T>(g);
  return B;
}

// max |a - b| / max |b| over rows x cols of column-major arrays (ld).
template <class T> double rel_diff(const T *a, const T *b, int rows, int cols, int ld) {
  double d = 0, s = 0;
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) {
      d = std::max(d, double(std::abs(a[i + size_t(j) * ld] - b[i + size_t(j) * ld])));
      s = std::max(s, double(std::abs(b[i + size_t(j) * ld])));
    }
  return d / (s > 0 ? s : 1);
}

TYPED_TEST(Gels, MatchesLapackAndIsolatesBadMatrices) {
  using T = TypeParam;
  const bool real = std::is_same_v<T, R_t<T>>;
  const bsvd_options_t o = cpu_opts();
  std::mt19937_64 g(101);
  struct Shape {
    int m, n, k;
  };
  for (const Shape s : {Shape{40, 17, 3}, Shape{17, 40, 2}, Shape{64, 64, 1}, Shape{100, 8, 4}})
    for (bsvd_op_t t : {BSVD_OP_N, real ? BSVD_OP_T : BSVD_OP_C}) {
      const int count = 5, lda = s.m + 1, ldb = std::max(s.m, s.n) + 2;
      std::vector<T> A = systems<T>(count, s.m, s.n, lda, g);
      std::vector<T> B = rhs<T>(size_t(ldb) * s.k * count, g);
      // Matrix 1 rank deficient (a zero column or row 3), matrix 3 NaN.
      T *A1 = A.data() + size_t(lda) * s.n;
      for (int e = 0; e < (s.m >= s.n ? s.m : s.n); ++e)
        (s.m >= s.n ? A1[e + 3 * size_t(lda)] : A1[3 + size_t(e) * lda]) = T(0);
      A[size_t(3) * lda * s.n + 2] = T(std::numeric_limits<R_t<T>>::quiet_NaN());
      const std::vector<T> A0 = A, B0 = B;
      std::vector<int> info(count, 99);
      ASSERT_EQ(Api<T>::gels_strided(false, t, s.m, s.n, s.k, cp(A.data()), lda, int64_t(lda) * s.n,
                                     cp(B.data()), ldb, int64_t(ldb) * s.k, info.data(), count, &o),
                0)
          << bsvd_last_error();
      EXPECT_EQ(info, (std::vector<int>{0, 4, 0, BSVD_INFO_NONFINITE, 0}));
      const size_t sb = size_t(ldb) * s.k;
      EXPECT_TRUE(std::equal(B.begin() + sb, B.begin() + 2 * sb, B0.begin() + sb))
          << "a rank-deficient matrix's B is left as it came";
      for (int b : {0, 2, 4}) {
        std::vector<T> Ar(A0.begin() + size_t(b) * lda * s.n,
                          A0.begin() + size_t(b + 1) * lda * s.n);
        std::vector<T> Br(B0.begin() + b * sb, B0.begin() + (b + 1) * sb);
        ASSERT_EQ(ref_gels(t == BSVD_OP_N ? 'N'
                           : real         ? 'T'
                                          : 'C',
                           s.m, s.n, s.k, Ar.data(), lda, Br.data(), ldb),
                  0);
        // X and, for least squares, the residual's rows below it.
        const int rows = std::max(s.m, s.n);
        EXPECT_LE(rel_diff(B.data() + b * sb, Br.data(), rows, s.k, ldb),
                  30 * rows * unit_roundoff<T>())
            << s.m << "x" << s.n << " op " << int(t) << " matrix " << b;
        // The rows past max(m, n) are not B's: untouched.
        for (int j = 0; j < s.k; ++j)
          for (int i = rows; i < ldb; ++i)
            EXPECT_EQ(B[b * sb + i + size_t(j) * ldb], B0[b * sb + i + size_t(j) * ldb]);
      }
    }
}

TYPED_TEST(Gels, FormsAndThreadsAgreeBitForBit) {
  using T = TypeParam;
  std::mt19937_64 g(103);
  const int ms[] = {30, 5, 0, 12, 7, 50}, ns[] = {10, 9, 4, 12, 0, 33}, ks[] = {2, 1, 3, 0, 2, 4};
  const int count = 6;
  std::vector<std::vector<T>> A(count), B(count);
  std::vector<int> lda(count), ldb(count);
  for (int b = 0; b < count; ++b) {
    lda[b] = std::max(1, ms[b]) + b % 2;
    ldb[b] = std::max({1, ms[b], ns[b]}) + 1;
    A[b] = systems<T>(1, ms[b], ns[b], lda[b], g);
    if (A[b].empty()) A[b].resize(1);
    B[b] = rhs<T>(size_t(ldb[b]) * std::max(ks[b], 1), g);
  }
  auto run_v = [&](int threads, std::vector<std::vector<T>> &Av, std::vector<std::vector<T>> &Bv) {
    std::vector<T *> pa(count), pb(count);
    for (int b = 0; b < count; ++b) pa[b] = Av[b].data(), pb[b] = Bv[b].data();
    std::vector<int> info(count, 99);
    const bsvd_options_t o = cpu_opts(threads);
    EXPECT_EQ(Api<T>::gels_vbatched(false, BSVD_OP_N, ms, ns, ks, cpa(pa.data()), lda.data(),
                                    cpa(pb.data()), ldb.data(), info.data(), count, &o),
              0)
        << bsvd_last_error();
    EXPECT_EQ(info, std::vector<int>(count, 0));
  };
  auto A1 = A, B1 = B, A2 = A, B2 = B;
  run_v(1, A1, B1);
  run_v(2, A2, B2);
  const bsvd_options_t o = cpu_opts();
  for (int b = 0; b < count; ++b) {
    EXPECT_TRUE(bidiag_test::same_bits(B1[b], B2[b])) << "threads, matrix " << b;
    // One matrix at a time by the strided and batched forms.
    auto As = A[b], Bs = B[b], Ab = A[b], Bb = B[b];
    int info = 99;
    ASSERT_EQ(Api<T>::gels_strided(false, BSVD_OP_N, ms[b], ns[b], ks[b], cp(As.data()), lda[b], 0,
                                   cp(Bs.data()), ldb[b], 0, &info, 1, &o),
              0);
    T *pa = Ab.data(), *pb = Bb.data();
    ASSERT_EQ(Api<T>::gels_batched(false, BSVD_OP_N, ms[b], ns[b], ks[b], cpa(&pa), lda[b],
                                   cpa(&pb), ldb[b], &info, 1, &o),
              0);
    EXPECT_TRUE(bidiag_test::same_bits(Bs, B1[b])) << "strided, matrix " << b;
    EXPECT_TRUE(bidiag_test::same_bits(Bb, B1[b])) << "batched, matrix " << b;
    EXPECT_TRUE(bidiag_test::same_bits(As, A1[b])) << "factored A, matrix " << b;
  }
  // Matrix 2 (0 x 4, 3 right-hand sides) and 4 (7 x 0): X = 0 in the
  // max(m, n) rows; the row past them untouched.
  for (int b : {2, 4})
    for (int j = 0; j < ks[b]; ++j)
      for (int i = 0; i < ldb[b]; ++i)
        EXPECT_EQ(B1[b][i + size_t(j) * ldb[b]],
                  i < std::max(ms[b], ns[b]) ? T(0) : B[b][i + size_t(j) * ldb[b]]);
}

// Each bad argument: its -position, a sentence naming it, nothing written.
TYPED_TEST(Gels, BadArgumentsNamePositions) {
  using T = TypeParam;
  const bool real = std::is_same_v<T, R_t<T>>;
  const bsvd_options_t o = cpu_opts();
  std::vector<T> A(64, T(1)), B(64, T(2));
  const std::vector<T> B0 = B;
  int info[2] = {7, 7};
  auto strided = [&](int t, int m, int n, int k, int lda, int64_t sA, int ldb, int64_t sB, int *inf,
                     int batch) {
    return Api<T>::gels_strided(false, bsvd_op_t(t), m, n, k, cp(A.data()), lda, sA, cp(B.data()),
                                ldb, sB, inf, batch, &o);
  };
  auto expect = [&](bsvd_status_t got, bsvd_status_t want, const char *word) {
    EXPECT_EQ(got, want);
    EXPECT_NE(std::string(bsvd_last_error()).find(word), std::string::npos) << bsvd_last_error();
    EXPECT_TRUE(std::equal(B.begin(), B.end(), B0.begin()));
    EXPECT_EQ(info[0], 7);
  };
  expect(strided(7, 4, 2, 1, 4, 8, 4, 4, info, 2), -1, "trans");
  if (!real) expect(strided(BSVD_OP_T, 4, 2, 1, 4, 8, 4, 4, info, 2), -1, "BSVD_OP_C");
  expect(strided(0, -1, 2, 1, 4, 8, 4, 4, info, 2), -2, "m");
  expect(strided(0, 4, -2, 1, 4, 8, 4, 4, info, 2), -3, "n");
  expect(strided(0, 4, 2, -1, 4, 8, 4, 4, info, 2), -4, "nrhs");
  expect(strided(0, 4, 2, 1, 3, 8, 4, 4, info, 2), -6, "lda");
  expect(strided(0, 4, 2, 1, 4, 7, 4, 4, info, 2), -7, "strideA");
  expect(strided(0, 2, 5, 1, 2, 10, 4, 5, info, 2), -9, "ldb");
  expect(strided(0, 4, 2, 2, 4, 8, 4, 7, info, 2), -10, "strideB");
  expect(strided(0, 4, 2, 1, 4, 8, 4, 4, nullptr, 2), -11, "info");
  expect(strided(0, 4, 2, 1, 4, 8, 4, 4, info, -1), -12, "batch");
  // The vbatched form names the matrix, and NULL size arrays.
  const int m[2] = {4, 4}, n[2] = {2, 5}, k[2] = {1, 1}, lda[2] = {4, 4}, ldb[2] = {4, 4};
  T *pa[2] = {A.data(), A.data() + 32}, *pb[2] = {B.data(), B.data() + 32};
  expect(Api<T>::gels_vbatched(false, BSVD_OP_N, m, n, k, cpa(pa), lda, cpa(pb), ldb, info, 2, &o),
         -8, "ldb[1]");
  expect(Api<T>::gels_vbatched(false, BSVD_OP_N, m, n, nullptr, cpa(pa), lda, cpa(pb), ldb, info, 2,
                               &o),
         -4, "nrhs");
  // The _async forms take device memory.
  bsvd_options_t oa;
  bsvd_options_init(&oa);
  const bsvd_status_t s = Api<T>::gels_strided(true, BSVD_OP_N, 4, 2, 1, cp(A.data()), 4, 8,
                                               cp(B.data()), 4, 4, info, 2, &oa);
  EXPECT_TRUE(s == -8 || s == BSVD_STATUS_BACKEND_UNAVAILABLE) << s << " " << bsvd_last_error();
  EXPECT_TRUE(std::equal(B.begin(), B.end(), B0.begin()));
}

// The C++ forms (bsvd/svd.hpp) of GELS and TRSV give the C forms' bits.
TYPED_TEST(Gels, CppFormsMatchTheC) {
  using T = TypeParam;
  const bsvd_options_t o = cpu_opts();
  std::mt19937_64 g(107);
  const int m = 20, n = 9, k = 2, count = 3;
  const std::vector<T> A0 = systems<T>(count, m, n, m, g), B0 = rhs<T>(size_t(m) * k * count, g);
  std::vector<T> Ac = A0, Bc = B0, Ap = A0, Bp = B0;
  std::vector<int> ic(count), ip(count);
  ASSERT_EQ(Api<T>::gels_strided(false, BSVD_OP_N, m, n, k, cp(Ac.data()), m, int64_t(m) * n,
                                 cp(Bc.data()), m, int64_t(m) * k, ic.data(), count, &o),
            0);
  ASSERT_EQ(bsvd::gels_strided_batched<T>(BSVD_OP_N, m, n, k, Ap.data(), m, int64_t(m) * n,
                                          Bp.data(), m, int64_t(m) * k, ip.data(), count, o),
            0);
  EXPECT_TRUE(bidiag_test::same_bits(Bc, Bp));
  EXPECT_EQ(ic, ip);
  std::vector<int> ms(count, m), ns(count, n), ks(count, k), lds(count, m);
  std::vector<T *> pa, pb;
  std::vector<T> Av = A0, Bv = B0;
  for (int b = 0; b < count; ++b)
    pa.push_back(Av.data() + size_t(b) * m * n), pb.push_back(Bv.data() + size_t(b) * m * k);
  ASSERT_EQ(bsvd::gels_vbatched<T>(BSVD_OP_N, ms.data(), ns.data(), ks.data(), pa.data(),
                                   lds.data(), pb.data(), lds.data(), ip.data(), count, o),
            0);
  EXPECT_TRUE(bidiag_test::same_bits(Bc, Bv));
  // TRSV with the R factors left in Ac (upper, n x n, lda m).
  std::vector<T> xc = rhs<T>(size_t(n) * count, g), xp = xc;
  ASSERT_EQ(Api<T>::trsv_strided(false, BSVD_UPLO_U, BSVD_OP_C, BSVD_DIAG_N, n, cp(Ac.data()), m,
                                 int64_t(m) * n, cp(xc.data()), 1, n, ic.data(), count, &o),
            0);
  ASSERT_EQ(bsvd::trsv_strided_batched<T>(BSVD_UPLO_U, BSVD_OP_C, BSVD_DIAG_N, n, Ac.data(), m,
                                          int64_t(m) * n, xp.data(), 1, n, ip.data(), count, o),
            0);
  EXPECT_TRUE(bidiag_test::same_bits(xc, xp));
  EXPECT_EQ(ic, std::vector<int>(count, 0));
  // The _async forms take device memory: host data is refused.
  bsvd_options_t oa = bsvd::default_options();
  EXPECT_NE(bsvd::gels_strided_batched_async<T>(BSVD_OP_N, m, n, k, Ap.data(), m, int64_t(m) * n,
                                                Bp.data(), m, int64_t(m) * k, ip.data(), count, oa),
            0);
}

// ---- gelsd ------------------------------------------------------------------

int ref_gelsd(int m, int n, int k, float *A, int lda, float *B, int ldb, float *S, float rc,
              int *rank) {
  return LAPACKE_sgelsd(LAPACK_COL_MAJOR, m, n, k, A, lda, B, ldb, S, rc, rank);
}
int ref_gelsd(int m, int n, int k, double *A, int lda, double *B, int ldb, double *S, double rc,
              int *rank) {
  return LAPACKE_dgelsd(LAPACK_COL_MAJOR, m, n, k, A, lda, B, ldb, S, rc, rank);
}
int ref_gelsd(int m, int n, int k, std::complex<float> *A, int lda, std::complex<float> *B, int ldb,
              float *S, float rc, int *rank) {
  return LAPACKE_cgelsd(LAPACK_COL_MAJOR, m, n, k, A, lda, B, ldb, S, rc, rank);
}
int ref_gelsd(int m, int n, int k, std::complex<double> *A, int lda, std::complex<double> *B,
              int ldb, double *S, double rc, int *rank) {
  return LAPACKE_zgelsd(LAPACK_COL_MAJOR, m, n, k, A, lda, B, ldb, S, rc, rank);
}

// Rank-deficient matrices (rank r of min(m, n): a product of m x r and
// r x n factors) next to full-rank, zero and NaN ones: LAPACK's xGELSD
// minimum-norm solution, rank and singular values; A untouched.
TYPED_TEST(Gels, GelsdMatchesLapackOnRankDeficientBatches) {
  using T = TypeParam;
  using R = R_t<T>;
  const bsvd_options_t o = cpu_opts();
  std::mt19937_64 g(109);
  struct Shape {
    int m, n, k, r;
  };
  for (const Shape s : {Shape{30, 12, 2, 5}, Shape{12, 30, 3, 7}, Shape{16, 16, 1, 16}}) {
    const int count = 4, lda = s.m, ldb = std::max(s.m, s.n), kk = std::min(s.m, s.n);
    std::vector<T> A(size_t(lda) * s.n * count);
    for (int b = 0; b < count; ++b) {
      std::vector<T> F = rhs<T>(size_t(s.m) * s.r, g), G = rhs<T>(size_t(s.r) * s.n, g);
      for (int j = 0; j < s.n; ++j)
        for (int i = 0; i < s.m; ++i) {
          T acc = T(0);
          for (int l = 0; l < s.r; ++l) acc += F[i + size_t(l) * s.m] * G[l + size_t(j) * s.r];
          A[size_t(b) * lda * s.n + i + size_t(j) * lda] = acc;
        }
    }
    std::fill(A.begin() + size_t(2) * lda * s.n, A.begin() + size_t(3) * lda * s.n, T(0));
    A[size_t(3) * lda * s.n + 1] = T(std::numeric_limits<R>::quiet_NaN());
    const std::vector<T> A0 = A, B0 = rhs<T>(size_t(ldb) * s.k * count, g);
    std::vector<T> B = B0;
    std::vector<R> S(size_t(kk) * count);
    std::vector<int> rank(count, -7), info(count, -7);
    const R rcond = R(1e3) * std::numeric_limits<R>::epsilon();
    ASSERT_EQ(Api<T>::gelsd_strided(false, s.m, s.n, s.k, cp(A.data()), lda, int64_t(lda) * s.n,
                                    cp(B.data()), ldb, int64_t(ldb) * s.k, S.data(), kk, rcond,
                                    rank.data(), info.data(), count, &o),
              0)
        << bsvd_last_error();
    EXPECT_TRUE(bidiag_test::same_bits(A, A0)) << "A is only read";
    EXPECT_EQ(info, (std::vector<int>{0, 0, 0, BSVD_INFO_NONFINITE}));
    EXPECT_EQ(rank, (std::vector<int>{s.r, s.r, 0, 0}));
    for (int b = 0; b < 3; ++b) {
      std::vector<T> Ar(A0.begin() + size_t(b) * lda * s.n, A0.begin() + size_t(b + 1) * lda * s.n);
      std::vector<T> Br(B0.begin() + size_t(b) * ldb * s.k, B0.begin() + size_t(b + 1) * ldb * s.k);
      std::vector<R> Sr(kk);
      int rr = -1;
      ASSERT_EQ(ref_gelsd(s.m, s.n, s.k, Ar.data(), lda, Br.data(), ldb, Sr.data(), rcond, &rr), 0);
      EXPECT_EQ(rr, rank[b]) << "matrix " << b;
      // X to a few hundred units of roundoff of the kept spectrum's
      // condition (the factors' products are well conditioned on it).
      EXPECT_LE(rel_diff(B.data() + size_t(b) * ldb * s.k, Br.data(), s.n, s.k, ldb),
                2000 * ldb * unit_roundoff<T>())
          << bidiag_test::prec_name<T>() << " " << s.m << "x" << s.n << " matrix " << b;
      for (int i = 0; i < kk; ++i)
        EXPECT_NEAR(double(S[size_t(b) * kk + i]), double(Sr[i]),
                    64 * ldb * unit_roundoff<T>() * double(Sr[0]) + 1e-300);
    }
    for (int j = 0; j < s.k; ++j)
      for (int i = 0; i < s.n; ++i)
        EXPECT_TRUE(std::isnan(std::abs(B[size_t(3) * ldb * s.k + i + size_t(j) * ldb])));
    // The C++ form: the C form's bits.
    std::vector<T> Bp = B0;
    std::vector<R> Sp(S.size());
    std::vector<int> rp(count), ip(count);
    ASSERT_EQ(bsvd::gelsd_strided_batched<T>(s.m, s.n, s.k, A.data(), lda, int64_t(lda) * s.n,
                                             Bp.data(), ldb, int64_t(ldb) * s.k, Sp.data(), kk,
                                             rcond, rp.data(), ip.data(), count, o),
              0);
    EXPECT_TRUE(bidiag_test::same_bits(Bp, B));
    EXPECT_TRUE(bidiag_test::same_bits(Sp, S));
    EXPECT_EQ(rp, rank);
  }
}

TYPED_TEST(Gels, GelsdBadArgumentsNamePositions) {
  using T = TypeParam;
  using R = R_t<T>;
  const bsvd_options_t o = cpu_opts();
  std::vector<T> A(64, T(1)), B(64, T(2));
  const std::vector<T> B0 = B;
  std::vector<R> S(8);
  int rank[2] = {7, 7}, info[2] = {7, 7};
  auto call = [&](int m, int n, int k, int lda, int64_t sA, int ldb, int64_t sB, int64_t sS, R rc,
                  int *rk, int *inf, int batch) {
    return Api<T>::gelsd_strided(false, m, n, k, cp(A.data()), lda, sA, cp(B.data()), ldb, sB,
                                 S.data(), sS, rc, rk, inf, batch, &o);
  };
  const R nan = std::numeric_limits<R>::quiet_NaN();
  const struct {
    bsvd_status_t got, want;
    const char *word;
  } cases[] = {{call(-1, 2, 1, 4, 8, 4, 4, 2, 0, rank, info, 2), -1, "m"},
               {call(4, 2, -1, 4, 8, 4, 4, 2, 0, rank, info, 2), -3, "nrhs"},
               {call(4, 2, 1, 3, 8, 4, 4, 2, 0, rank, info, 2), -5, "lda"},
               {call(4, 2, 1, 4, 7, 4, 4, 2, 0, rank, info, 2), -6, "strideA"},
               {call(2, 5, 1, 2, 10, 4, 5, 2, 0, rank, info, 2), -8, "ldb"},
               {call(4, 2, 2, 4, 8, 4, 7, 2, 0, rank, info, 2), -9, "strideB"},
               {call(4, 2, 1, 4, 8, 4, 4, 1, 0, rank, info, 2), -11, "strideS"},
               {call(4, 2, 1, 4, 8, 4, 4, 2, nan, rank, info, 2), -12, "rcond"},
               {call(4, 2, 1, 4, 8, 4, 4, 2, 0, nullptr, info, 2), -13, "rank"},
               {call(4, 2, 1, 4, 8, 4, 4, 2, 0, rank, nullptr, 2), -14, "info"},
               {call(4, 2, 1, 4, 8, 4, 4, 2, 0, rank, info, -1), -15, "batch"}};
  for (const auto &c : cases) {
    EXPECT_EQ(c.got, c.want) << c.word;
  }
  EXPECT_TRUE(std::equal(B.begin(), B.end(), B0.begin()));
  EXPECT_EQ(rank[0], 7);
  EXPECT_EQ(info[0], 7);
}

} // namespace
