// include/bsvd/hsvd.hpp: the +-1 signature partition, the column and row
// permutations around bsvd::gehsvj_strided_batched, and the eigenvalues of
// G J G^H assembled from S. The round trip checks what the header's
// comments promise: G = U diag(S) V^H and V^H diag(signs) V = J in the
// caller's column order.
#include <bsvd/hsvd.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace {

TEST(HsvdFront, PartitionIsStable) {
  const int signs[] = {-1, 1, -1, 1, 1, -1};
  int perm[6] = {};
  EXPECT_EQ(bsvd::hsvd_partition(6, signs, perm), 3);
  const int want[] = {1, 3, 4, 0, 2, 5};
  for (int j = 0; j < 6; ++j) EXPECT_EQ(perm[j], want[j]) << j;

  const int plus[] = {1, 1}, minus[] = {-1, -1};
  int p2[2] = {};
  EXPECT_EQ(bsvd::hsvd_partition(2, plus, p2), 2);
  EXPECT_EQ(p2[0], 0);
  EXPECT_EQ(p2[1], 1);
  EXPECT_EQ(bsvd::hsvd_partition(2, minus, p2), 0);
  EXPECT_EQ(bsvd::hsvd_partition(0, nullptr, nullptr), 0);
}

TEST(HsvdFront, PartitionRefusesOtherValues) {
  const int bad[] = {1, 0, -1};
  int perm[3] = {7, 7, 7};
  EXPECT_EQ(bsvd::hsvd_partition(3, bad, perm), -1);
  EXPECT_EQ(perm[0], 7); // untouched
  EXPECT_EQ(bsvd::hsvd_partition(-1, bad, perm), -1);
}

TEST(HsvdFront, Eigenvalues) {
  const double S[] = {2, 3, 1};
  double w[5];
  bsvd::hsvd_eigenvalues(5, 3, 1, S, w); // +4, -9, -1 and two zeros
  const double want[] = {-9, -1, 0, 0, 4};
  for (int j = 0; j < 5; ++j) EXPECT_EQ(w[j], want[j]) << j;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float Sn[] = {nan, 1};
  float wn[3];
  bsvd::hsvd_eigenvalues(3, 2, 1, Sn, wn);
  EXPECT_EQ(wn[0], -1.0f);
  EXPECT_EQ(wn[1], 0.0f);
  EXPECT_TRUE(std::isnan(wn[2]));
}

TEST(HsvdFront, RoundTripInTheCallersColumnOrder) {
  const int m = 7, n = 5;
  const int signs[n] = {-1, 1, 1, -1, 1};
  std::mt19937 gen(36);
  std::normal_distribution<double> dist;
  std::vector<double> G(m * n), Gp(m * n), S(n), U(m * n), Vp(n * n), V(n * n);
  for (double &x : G) x = dist(gen);
  std::vector<int> perm(n);
  int nplus = bsvd::hsvd_partition(n, signs, perm.data());
  ASSERT_EQ(nplus, 3);
  bsvd::hsvd_permute_columns(m, n, perm.data(), G.data(), m, Gp.data(), m);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) EXPECT_EQ(Gp[i + j * m], G[i + perm[j] * m]);
  int info = -9;
  ASSERT_EQ(bsvd::gehsvj_strided_batched<double>(bsvd::Job::Vectors, m, n, &nplus, Gp.data(), m,
                                                 m * n, S.data(), n, U.data(), m, m * n, Vp.data(),
                                                 n, n * n, &info, nullptr, 1),
            0)
      << bsvd_last_error();
  ASSERT_EQ(info, 0);
  bsvd::hsvd_unpermute_rows(n, n, perm.data(), Vp.data(), n, V.data(), n);

  double gnorm = 0, vnorm = 0;
  for (double x : G) gnorm = std::max(gnorm, std::abs(x));
  for (double x : V) vnorm = std::max(vnorm, std::abs(x));
  const double tol = 1e3 * n * std::numeric_limits<double>::epsilon() * vnorm * vnorm;
  for (int i = 0; i < m; ++i) // G = U diag(S) V^T, columns as given
    for (int j = 0; j < n; ++j) {
      double r = 0;
      for (int k = 0; k < n; ++k) r += U[i + k * m] * S[k] * V[j + k * n];
      EXPECT_NEAR(r, G[i + j * m], tol * gnorm) << i << "," << j;
    }
  for (int a = 0; a < n; ++a) // V^T diag(signs) V = J = diag(I_3, -I_2)
    for (int b = 0; b < n; ++b) {
      double r = 0;
      for (int k = 0; k < n; ++k) r += V[k + a * n] * signs[k] * V[k + b * n];
      EXPECT_NEAR(r, a == b ? (a < nplus ? 1.0 : -1.0) : 0.0, tol) << a << "," << b;
    }
  // Without the row unpermutation the relation fails (the test can tell).
  double off = 0;
  for (int k = 0; k < n; ++k) off += Vp[k] * signs[k] * Vp[k];
  EXPECT_GT(std::abs(off - 1.0), 1e3 * tol);
}

} // namespace
