// Householder QR, the CPU twin of the GPU QR preprocessing (src/cpu/qr.cpp):
// A = Q R to rounding, Q unitary, R upper triangular with the LAPACK sign
// convention; zero and single columns; a huge and a tiny matrix.
#include "test_cpu_helpers.hpp"

#include "core/tsqr.hpp"
#include "cpu/qr.hpp"

#include <random>

using namespace bsvd_cpu_test;

namespace {

template <class T> class CpuQr : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(CpuQr, Types);

using LD = long double;
template <class T> std::complex<LD> wide(T x) { return {LD(std::real(x)), LD(std::imag(x))}; }

// Y, tau: the factorization of A (m x n, leading dimension m).
template <class T> void check_factors(int m, int n, const std::vector<T> &A,
                                      const std::vector<T> &Y, const std::vector<T> &tau,
                                      double scale) {
  const double u = uroff<T>();
  // Q explicitly: Q I (m x m), then A - Q R and I - Q^H Q.
  std::vector<T> Q(size_t(m) * m, T(0));
  for (int i = 0; i < m; ++i) Q[i + size_t(i) * m] = T(1);
  bsvd::detail::apply_householder_q(m, n, Y.data(), m, tau.data(), m, Q.data(), m);
  LD rn = 0, an = 0, on = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      std::complex<LD> s = 0;
      for (int r = 0; r <= std::min(j, n - 1); ++r)
        s += wide(Q[i + size_t(r) * m]) * wide(Y[r + size_t(j) * m]);
      rn += std::norm(s - wide(A[i + size_t(j) * m]));
      an += std::norm(wide(A[i + size_t(j) * m]));
    }
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < m; ++i) {
      std::complex<LD> s = 0;
      for (int r = 0; r < m; ++r)
        s += std::conj(wide(Q[r + size_t(i) * m])) * wide(Q[r + size_t(j) * m]);
      on += std::norm(s - LD(i == j));
    }
  EXPECT_LE(double(std::sqrt(rn)), 10.0 * m * u * double(std::sqrt(an)) + 1e-300 * scale);
  EXPECT_LE(double(std::sqrt(on)), 10.0 * m * u);
  // the diagonal of R is real (LAPACK: beta real)
  for (int j = 0; j < n; ++j) EXPECT_EQ(std::imag(Y[j + size_t(j) * m]), R_t<T>(0));
}

template <class T> void check_qr(int m, int n, const std::vector<T> &A, double scale) {
  std::vector<T> Y = A, tau(n);
  bsvd::detail::householder_qr(m, n, Y.data(), m, tau.data());
  check_factors(m, n, A, Y, tau, scale);
}

template <class T> T random_entry(std::mt19937_64 &g, double scale) {
  std::normal_distribution<double> d;
  if constexpr (std::is_same_v<T, R_t<T>>)
    return T(d(g) * scale);
  else
    return T(R_t<T>(d(g) * scale), R_t<T>(d(g) * scale));
}

TYPED_TEST(CpuQr, FactorsAndQIsUnitary) {
  using T = TypeParam;
  std::mt19937_64 g(5);
  std::normal_distribution<double> d;
  for (auto [m, n] : std::vector<std::pair<int, int>>{{1, 1}, {5, 1}, {6, 6}, {40, 7}, {90, 33}}) {
    for (double scale : {1.0, 1e30, 1e-30}) {
      if (scale != 1.0 && std::is_same_v<R_t<T>, float>) continue;
      SCOPED_TRACE(testing::Message() << m << "x" << n << " scale " << scale);
      std::vector<T> A(size_t(m) * n);
      for (auto &a : A) {
        if constexpr (std::is_same_v<T, R_t<T>>)
          a = T(d(g) * scale);
        else
          a = T(R_t<T>(d(g) * scale), R_t<T>(d(g) * scale));
      }
      if (n >= 3) // a zero column: tau = 0 there
        for (int i = 0; i < m; ++i) A[i + size_t(2) * m] = T(0);
      check_qr<T>(m, n, A, scale);
    }
  }
}

// With column pivoting: A P = Q R to rounding, P a permutation, and each
// |R_jj| at least the norm of R(j:k, k) for every later column k (the
// pivot was the largest partial norm; the slack covers the downdated
// norms' rounding, up to ~sqrt(eps) relative). Graded columns (scaled
// 10^-j/2 in reverse order, so pivoting reorders them), a zero column, a
// repeated column; and an exactly rank-r product whose R_rr falls to
// rounding (rank revealing).
TYPED_TEST(CpuQr, PivotedFactorsAndOrdersTheDiagonal) {
  using T = TypeParam;
  using R = R_t<T>;
  const double u = uroff<T>();
  std::mt19937_64 g(11);
  for (auto [m, n] :
       std::vector<std::pair<int, int>>{{1, 1}, {5, 1}, {6, 6}, {40, 7}, {90, 33}, {33, 33}}) {
    SCOPED_TRACE(testing::Message() << m << "x" << n);
    std::vector<T> A(size_t(m) * n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i)
        A[i + size_t(j) * m] = random_entry<T>(g, std::pow(10.0, -0.5 * (n - 1 - j) * 8.0 / n));
    if (n >= 4) {
      for (int i = 0; i < m; ++i) A[i + size_t(1) * m] = T(0); // zero column
      for (int i = 0; i < m; ++i) A[i + size_t(3) * m] = A[i + size_t(n - 1) * m]; // repeat
    }
    std::vector<T> Y = A, tau(n);
    std::vector<int> perm(n, -1);
    bsvd::detail::householder_qr_pivoted(m, n, Y.data(), m, tau.data(), perm.data());
    std::vector<int> seen(n, 0);
    for (int j = 0; j < n; ++j) {
      ASSERT_TRUE(perm[j] >= 0 && perm[j] < n);
      ++seen[perm[j]];
    }
    for (int j = 0; j < n; ++j) EXPECT_EQ(seen[j], 1) << "perm is not a permutation";
    std::vector<T> AP(A.size());
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) AP[i + size_t(j) * m] = A[i + size_t(perm[j]) * m];
    check_factors(m, n, AP, Y, tau, 1.0);
    const double slack = 1 - 100 * std::sqrt(u);
    for (int j = 0; j < n; ++j)
      for (int k = j + 1; k < n; ++k) {
        LD s = 0;
        for (int i = j; i <= std::min(k, m - 1); ++i) s += std::norm(wide(Y[i + size_t(k) * m]));
        EXPECT_GE(double(std::abs(wide(Y[j + size_t(j) * m]))), slack * double(std::sqrt(s)))
            << "column " << k << " had the larger partial norm at step " << j;
      }
  }
  // rank r: |R_rr| at rounding level relative to |R_00|
  const int m = 50, n = 30, r = 12;
  std::vector<T> B(size_t(m) * r), C(size_t(r) * n), A(size_t(m) * n, T(0));
  for (auto &b : B) b = random_entry<T>(g, 1.0);
  for (auto &c : C) c = random_entry<T>(g, 1.0);
  for (int j = 0; j < n; ++j)
    for (int l = 0; l < r; ++l)
      for (int i = 0; i < m; ++i)
        A[i + size_t(j) * m] += B[i + size_t(l) * m] * C[l + size_t(j) * r];
  std::vector<T> Y = A, tau(n);
  std::vector<int> perm(n);
  bsvd::detail::householder_qr_pivoted(m, n, Y.data(), m, tau.data(), perm.data());
  const R r00 = std::abs(Y[0]);
  EXPECT_GT(double(std::abs(Y[(r - 1) + size_t(r - 1) * m])), 1e-3 * double(r00));
  EXPECT_LE(double(std::abs(Y[r + size_t(r) * m])), 100.0 * m * u * double(r00));
}

} // namespace

namespace {

// The compact WY application (apply_householder_q_wy, the twin of the GPU's
// qr_wy kernels) against the reflector-by-reflector one on X = [Z; 0]: the
// same Q to rounding (max |difference| <= 4 (m + n) u, X's columns have
// norm ~1), for tall shapes with a zero column (tau = 0), a single column,
// a square matrix; and X's columns stay orthonormal for a unitary Z.
TYPED_TEST(CpuQr, WyApplicationMatchesReflectors) {
  using T = TypeParam;
  std::mt19937_64 g(11);
  const double u = uroff<T>();
  for (auto [m, n] :
       std::vector<std::pair<int, int>>{{2000, 16}, {300, 7}, {40, 1}, {33, 33}, {500, 40}}) {
    SCOPED_TRACE(testing::Message() << m << "x" << n);
    std::vector<T> Y(size_t(m) * n), tau(n), Z(size_t(n) * n);
    for (auto &a : Y) a = random_entry<T>(g, 1.0);
    if (n >= 3)
      for (int i = 0; i < m; ++i) Y[i + size_t(2) * m] = T(0);
    bsvd::detail::householder_qr(m, n, Y.data(), m, tau.data());
    // Z unitary: the Q factor of a random n x n matrix
    std::vector<T> Zf(size_t(n) * n), zt(n);
    for (auto &a : Zf) a = random_entry<T>(g, 1.0);
    bsvd::detail::householder_qr(n, n, Zf.data(), n, zt.data());
    for (int c = 0; c < n; ++c)
      for (int r = 0; r < n; ++r) Z[r + size_t(c) * n] = r == c ? T(1) : T(0);
    bsvd::detail::apply_householder_q(n, n, Zf.data(), n, zt.data(), n, Z.data(), n);
    std::vector<T> Xr(size_t(m) * n, T(0)), Xw(size_t(m) * n, T(-7));
    for (int c = 0; c < n; ++c)
      for (int r = 0; r < n; ++r) Xr[r + size_t(c) * m] = Z[r + size_t(c) * n];
    bsvd::detail::apply_householder_q(m, n, Y.data(), m, tau.data(), n, Xr.data(), m);
    bsvd::detail::apply_householder_q_wy(m, n, Y.data(), m, tau.data(), Z.data(), Xw.data(), m);
    double worst = 0;
    for (size_t e = 0; e < Xr.size(); ++e) worst = std::max(worst, double(std::abs(Xr[e] - Xw[e])));
    EXPECT_LE(worst, 4.0 * (m + n) * u);
    // orthonormal columns
    double orth = 0;
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) {
        std::complex<LD> s = 0;
        for (int r = 0; r < m; ++r)
          s += std::conj(wide(Xw[r + size_t(a) * m])) * wide(Xw[r + size_t(b) * m]);
        orth = std::max(orth, double(std::abs(s - std::complex<LD>(a == b ? 1 : 0))));
      }
    EXPECT_LE(orth, 4.0 * (m + n) * u);
  }
}

// TSQR (tsqr_factor, tsqr_apply_q_wy; the twin of the GPU's factorization
// of tall matrices of few columns): with Zs = I, X = Q's first n columns;
// X R = A to rounding, X orthonormal, |R_jj| those of householder_qr;
// with a unitary Zs, X = (Q's first n columns) Zs. Shapes: several chunks,
// a short last chunk, one column, 32 columns, a zero column (then R_jj from
// column 2 on is not unique, and only the first two are compared).
TYPED_TEST(CpuQr, TsqrFactorsAndAppliesQ) {
  using T = TypeParam;
  std::mt19937_64 g(23);
  const double u = uroff<T>();
  for (auto [m, n] : std::vector<std::pair<int, int>>{
           {2000, 16}, {300, 7}, {1000, 32}, {513, 20}, {257, 1}, {777, 3}}) {
    SCOPED_TRACE(testing::Message() << m << "x" << n);
    const int nc = bsvd::detail::tsqr_chunks(m, n);
    ASSERT_GE(nc, 2);
    std::vector<T> A(size_t(m) * n);
    for (auto &a : A) a = random_entry<T>(g, 1.0);
    const bool zero_col = n >= 3 && (m == 300 || m == 777); // rank-deficient: R not unique
    if (zero_col)
      for (int i = 0; i < m; ++i) A[i + size_t(2) * m] = T(0);
    std::vector<T> Y = A, tau1(size_t(nc) * n), Z(size_t(nc) * n * n), tau2(n);
    bsvd::detail::tsqr_factor(m, n, nc, Y.data(), m, tau1.data(), Z.data(), tau2.data());
    const int lz = nc * n;
    std::vector<T> I(size_t(n) * n, T(0)), X(size_t(m) * n, T(-7));
    for (int j = 0; j < n; ++j) I[j + size_t(j) * n] = T(1);
    bsvd::detail::tsqr_apply_q_wy(m, n, nc, Y.data(), m, tau1.data(), Z.data(), tau2.data(),
                                  I.data(), X.data(), m);
    LD rn = 0, an = 0, on = 0;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        std::complex<LD> s = 0;
        for (int r = 0; r <= j; ++r) s += wide(X[i + size_t(r) * m]) * wide(Z[r + size_t(j) * lz]);
        rn += std::norm(s - wide(A[i + size_t(j) * m]));
        an += std::norm(wide(A[i + size_t(j) * m]));
      }
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) {
        std::complex<LD> s = 0;
        for (int r = 0; r < m; ++r)
          s += std::conj(wide(X[r + size_t(a) * m])) * wide(X[r + size_t(b) * m]);
        on += std::norm(s - LD(a == b));
      }
    EXPECT_LE(double(std::sqrt(rn)), 10.0 * m * u * double(std::sqrt(an)));
    EXPECT_LE(double(std::sqrt(on)), 10.0 * m * u);
    std::vector<T> H = A, th(n);
    bsvd::detail::householder_qr(m, n, H.data(), m, th.data());
    for (int j = 0; j < (zero_col ? 2 : n); ++j)
      EXPECT_NEAR(double(std::abs(Z[j + size_t(j) * lz])), double(std::abs(H[j + size_t(j) * m])),
                  10.0 * m * u * double(std::sqrt(an)))
          << "R_jj, j = " << j;
    // a unitary Zs: X Zs
    std::vector<T> Zf(size_t(n) * n), zt(n), Zs(size_t(n) * n), Xz(size_t(m) * n);
    for (auto &a : Zf) a = random_entry<T>(g, 1.0);
    bsvd::detail::householder_qr(n, n, Zf.data(), n, zt.data());
    Zs = I;
    bsvd::detail::apply_householder_q(n, n, Zf.data(), n, zt.data(), n, Zs.data(), n);
    bsvd::detail::tsqr_apply_q_wy(m, n, nc, Y.data(), m, tau1.data(), Z.data(), tau2.data(),
                                  Zs.data(), Xz.data(), m);
    double worst = 0;
    for (int c = 0; c < n; ++c)
      for (int r = 0; r < m; ++r) {
        std::complex<LD> s = 0;
        for (int k = 0; k < n; ++k) s += wide(X[r + size_t(k) * m]) * wide(Zs[k + size_t(c) * n]);
        worst = std::max(worst, double(std::abs(s - wide(Xz[r + size_t(c) * m]))));
      }
    EXPECT_LE(worst, 8.0 * (m + n) * u);
  }
}

// The chunking shared by TSQR's GPU kernels and its twin: at least two
// chunks of at most kTsqrRows rows, the last one at least nw rows, at most
// kTsqrMaxCols columns; 0 where TSQR does not apply.
TEST(CpuTsqr, Chunking) {
  using bsvd::detail::kTsqrRows;
  using bsvd::detail::tsqr_chunk_height;
  using bsvd::detail::tsqr_chunks;
  EXPECT_EQ(tsqr_chunks(kTsqrRows, 16), 0); // one chunk
  EXPECT_EQ(tsqr_chunks(2000, 33), 0); // too many columns
  EXPECT_EQ(tsqr_chunks(2000, 0), 0);
  EXPECT_EQ(tsqr_chunks(2000, 16), 8);
  EXPECT_EQ(tsqr_chunk_height(2000, 8), 250);
  for (int mw : {257, 300, 511, 513, 777, 1000, 1025, 2000, 3001, 20000})
    for (int nw : {1, 7, 16, 32}) {
      const int nc = tsqr_chunks(mw, nw);
      if (nc == 0) continue;
      const int hc = tsqr_chunk_height(mw, nc);
      EXPECT_GE(nc, 2) << mw << "x" << nw;
      EXPECT_LE(hc, kTsqrRows) << mw << "x" << nw;
      EXPECT_GE(mw - (nc - 1) * hc, nw) << mw << "x" << nw << ": the last chunk";
      EXPECT_LE(mw - (nc - 1) * hc, hc) << mw << "x" << nw;
    }
}

} // namespace
