// The hyperbolic SVD (bsvd::gehsvj_strided_batched, docs/hsvd.md) on the
// cpu backend: constructed matrices with known hyperbolic singular values
// judged by the ratios of hsvd_problem.hpp, relative accuracy on graded
// matrices, the reductions to the ordinary SVD (nplus = 0, n), the edge
// cases and the argument checks.
#include "hsvd_problem.hpp"

#include <bsvd/bsvd.h>
#include <bsvd/svd.hpp>
#include <gtest/gtest.h>

namespace {

using namespace hsvd_test;

template <class T> class Hsvd : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(Hsvd, Types);

TYPED_TEST(Hsvd, ConstructedMatrices) {
  using T = TypeParam;
  struct Case {
    int m, n, nplus;
    double kappa_sigma, phimax;
  };
  const Case cases[] = {{2, 2, 1, 10, 1},      {3, 3, 1, 10, 1},     {8, 8, 4, 1e3, 0.5},
                        {20, 16, 5, 1e3, 1},   {40, 33, 20, 1e2, 1}, {64, 64, 32, 1e4, 0.3},
                        {100, 40, 39, 1e3, 1}, {30, 30, 1, 1e3, 1},  {30, 12, 6, 1e3, 2}};
  uint64_t seed = 1;
  for (const Case &c : cases) {
    const Problem<T> P = make_problem<T>(c.m, c.n, c.nplus, c.kappa_sigma, c.phimax, ++seed);
    const Out<T> r = hsvd<T>(c.m, c.n, c.nplus, P.G);
    ASSERT_EQ(r.status, 0) << bsvd_last_error();
    EXPECT_EQ(r.info, 0);
    const Ratios q = measure(P, r);
    char what[160];
    std::snprintf(what, sizeof what,
                  "%dx%d nplus %d: kappa(V) %.2g junit %.2f orth %.2f resid %.2f values %.2f "
                  "eig %.2f sweeps %d",
                  c.m, c.n, c.nplus, q.kappaV, q.junit, q.orth, q.resid, q.values, q.eig, r.sweeps);
    expect_ratios(q, what);
    if (::testing::Test::HasFailure() || std::getenv("BSVD_HSVD_VERBOSE"))
      std::printf("%s\n", what);
  }
}

// Exactly rank-deficient (zero hyperbolic singular values): the rank
// condition still holds (G J G^H = U Sigma J Sigma U^H).
TYPED_TEST(Hsvd, RankDeficient) {
  using T = TypeParam;
  const Problem<T> P = make_problem<T>(24, 12, 5, 1e2, 0.7, 77, 3);
  const Out<T> r = hsvd<T>(24, 12, 5, P.G);
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.info, 0);
  expect_ratios(measure(P, r), "rank-deficient");
}

// J = I or -I: the ordinary SVD, and the same arithmetic as the unblocked
// solver (the same rotations in the same order): bitwise equal outputs.
TYPED_TEST(Hsvd, ReducesToOrdinarySvd) {
  using T = TypeParam;
  const int m = 30, n = 20;
  const Problem<T> P = make_problem<T>(m, n, n, 1e4, 0, 5);
  bsvd_options_t o = cpu_opts();
  o.variant = BSVD_VARIANT_UNBLOCKED;
  bsvd::Result<T> ref;
  ASSERT_EQ(bsvd::svd<T>(bsvd::Job::Vectors, m, n, P.G.data(), 1, ref, o), 0);
  for (int np : {0, n}) {
    const Out<T> r = hsvd<T>(m, n, np, P.G, true, o);
    ASSERT_EQ(r.status, 0);
    EXPECT_EQ(r.info, 0);
    EXPECT_EQ(r.sweeps, ref.sweeps[0]);
    for (int j = 0; j < n; ++j) EXPECT_EQ(r.S[j], ref.S[j]) << "nplus " << np << " j " << j;
    for (size_t i = 0; i < r.U.size(); ++i) ASSERT_EQ(r.U[i], ref.U[i]) << "nplus " << np;
    for (size_t i = 0; i < r.V.size(); ++i) ASSERT_EQ(r.V[i], ref.V[i]) << "nplus " << np;
  }
}

// Values only: the same S as with vectors (V does not steer the iteration).
TYPED_TEST(Hsvd, ValuesOnly) {
  using T = TypeParam;
  const Problem<T> P = make_problem<T>(16, 16, 7, 1e3, 1, 9);
  const Out<T> a = hsvd<T>(16, 16, 7, P.G), b = hsvd<T>(16, 16, 7, P.G, false);
  ASSERT_EQ(b.status, 0);
  EXPECT_EQ(a.S, b.S);
  EXPECT_EQ(a.sweeps, b.sweeps);
}

// A batch whose matrices have different signatures, several threads.
TYPED_TEST(Hsvd, BatchVaryingSignature) {
  using T = TypeParam;
  const int m = 18, n = 12, batch = 7;
  std::vector<int> nplus = {0, 1, 3, 6, 9, 11, 12};
  std::vector<Problem<T>> Ps;
  std::vector<T> A;
  for (int b = 0; b < batch; ++b) {
    Ps.push_back(make_problem<T>(m, n, nplus[b], 1e3, 1, 100 + b));
    A.insert(A.end(), Ps[b].G.begin(), Ps[b].G.end());
  }
  std::vector<R_t<T>> S(size_t(batch) * n);
  std::vector<T> U(size_t(batch) * m * n), V(size_t(batch) * n * n);
  std::vector<int> info(batch, -9), sweeps(batch), path(batch, -1);
  bsvd_options_t o = cpu_opts();
  o.num_threads = 2;
  o.path = path.data();
  ASSERT_EQ(bsvd::gehsvj_strided_batched<T>(bsvd::Job::Vectors, m, n, nplus.data(), A.data(), m,
                                            m * n, S.data(), n, U.data(), m, m * n, V.data(), n,
                                            n * n, info.data(), sweeps.data(), batch, o),
            0)
      << bsvd_last_error();
  for (int b = 0; b < batch; ++b) {
    EXPECT_EQ(info[b], 0);
    EXPECT_EQ(path[b], BSVD_PATH_CPU_UNBLOCKED);
    Out<T> r;
    r.S.assign(S.begin() + b * n, S.begin() + (b + 1) * n);
    r.U.assign(U.begin() + b * m * n, U.begin() + (b + 1) * m * n);
    r.V.assign(V.begin() + b * n * n, V.begin() + (b + 1) * n * n);
    expect_ratios(measure(Ps[b], r), "batch");
  }
}

// Relative accuracy on graded matrices G = B D (B Gaussian, D a diagonal
// grading over 10 decades): the small hyperbolic singular values (down to
// 1e-10 sigma_max, so their eigenvalues of H = G J G^H lie ~1e-20 ||H||,
// far below what any solver on a formed H resolves in s or d) keep their
// relative accuracy. The reference: the same input solved in the wider
// precision (d for s, z for c), whose own error is ~u(d)/u(s) smaller.
// s and c only: d and z have no wider solver here.
template <class T> void graded_case(int m, int n, int nplus, uint64_t seed) {
  using Wd = W_t<T>;
  std::mt19937_64 g(seed);
  std::normal_distribution<double> nd(0, 1);
  std::vector<T> G(size_t(m) * n);
  std::vector<Wd> Gw(size_t(m) * n);
  for (int j = 0; j < n; ++j) {
    const double d = std::pow(10.0, -10.0 * j / (n - 1)); // column grading
    for (int i = 0; i < m; ++i) {
      Wd x;
      if constexpr (bsvd::is_complex<Wd>::value)
        x = Wd(nd(g), nd(g));
      else
        x = nd(g);
      G[i + size_t(j) * m] = T(x * d);
      Gw[i + size_t(j) * m] = Wd(G[i + size_t(j) * m]);
    }
  }
  const Out<T> r = hsvd<T>(m, n, nplus, G, false);
  const Out<Wd> ref = hsvd<Wd>(m, n, nplus, Gw, false);
  ASSERT_EQ(r.info, 0);
  ASSERT_EQ(ref.info, 0);
  double rel = 0;
  for (int j = 0; j < n; ++j) rel = std::max(rel, std::abs(double(r.S[j]) - ref.S[j]) / ref.S[j]);
  // Relative error against n u: the column-scaled condition of B is small
  // (a Gaussian 40 x 24), so a few tens of n u is the expected level.
  EXPECT_LT(rel / (n * uroff<T>()), 30) << "graded " << m << "x" << n << " nplus " << nplus;
  if (std::getenv("BSVD_HSVD_VERBOSE"))
    std::printf("graded %dx%d nplus %d: max relative error %.2g = %.2f n u, smallest %.2g\n", m, n,
                nplus, rel, rel / (n * uroff<T>()), double(ref.S[n - 1]));
}

TYPED_TEST(Hsvd, GradedRelativeAccuracy) {
  using T = TypeParam;
  if constexpr (std::is_same_v<R_t<T>, float>) {
    graded_case<T>(40, 24, 12, 11);
    graded_case<T>(40, 24, 3, 12);
    graded_case<T>(24, 24, 20, 13);
  } else {
    GTEST_SKIP() << "no wider solver for the reference";
  }
}

TYPED_TEST(Hsvd, EdgeCases) {
  using T = TypeParam;
  using R = R_t<T>;
  const int m = 6, n = 4;
  // Zero matrix: S = 0, U, V identity columns, info 0.
  Out<T> z = hsvd<T>(m, n, 2, std::vector<T>(m * n, T(0)));
  ASSERT_EQ(z.status, 0);
  EXPECT_EQ(z.info, 0);
  for (R s : z.S) EXPECT_EQ(s, R(0));
  // NaN and Inf: BSVD_INFO_NONFINITE, S NaN.
  for (R bad : {std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::infinity()}) {
    std::vector<T> G = make_problem<T>(m, n, 2, 10, 1, 3).G;
    G[5] = T(bad);
    const Out<T> r = hsvd<T>(m, n, 2, G);
    ASSERT_EQ(r.status, 0);
    EXPECT_EQ(r.info, BSVD_INFO_NONFINITE);
    for (R s : r.S) EXPECT_TRUE(std::isnan(s));
  }
  // The rank condition violated: G = [x, x] with J = diag(1, -1) has
  // G J G^H = 0 but rank(G) = 1.
  {
    std::vector<T> G(2 * m);
    for (int i = 0; i < m; ++i) G[i] = G[m + i] = T(R(i + 1));
    const Out<T> r = hsvd<T>(m, 2, 1, G);
    ASSERT_EQ(r.status, 0);
    EXPECT_EQ(r.info, BSVD_INFO_HYPERBOLIC_BREAKDOWN);
  }
  // Both columns on one side: the ordinary SVD of [x, x], no breakdown.
  {
    std::vector<T> G(2 * m);
    for (int i = 0; i < m; ++i) G[i] = G[m + i] = T(R(i + 1));
    EXPECT_EQ(hsvd<T>(m, 2, 2, G).info, 0);
  }
}

// The blocked variant (jacobi_hyperbolic_blocked.cpp): the constructed
// problems at several block widths (the boundary nplus inside a block's
// reach or on it; one block, two, many; the inner iteration for one sweep,
// for two, and until converged), every ratio below 30, the values within
// the same bound of the unblocked solver's, info 0, path cpu-blocked.
TYPED_TEST(Hsvd, BlockedVariant) {
  using T = TypeParam;
  struct Case {
    int m, n, nplus, nb, eig_sweeps;
  };
  const Case cases[] = {{20, 16, 5, 4, -1},   {20, 16, 8, 4, 1},   {40, 33, 20, 8, 0},
                        {40, 33, 0, 8, -1},   {40, 33, 33, 16, 2}, {30, 12, 6, 2, -1},
                        {64, 64, 31, 16, -1}, {25, 7, 3, 7, -1},   {12, 12, 1, 3, 0}};
  uint64_t seed = 900;
  for (const Case &c : cases) {
    const Problem<T> P = make_problem<T>(c.m, c.n, c.nplus, 1e3, 0.7, ++seed);
    bsvd_options_t o = cpu_opts();
    o.variant = BSVD_VARIANT_BLOCKED;
    o.block_size = c.nb;
    o.eig_sweeps = c.eig_sweeps;
    int path = -1;
    o.path = &path;
    const Out<T> r = hsvd<T>(c.m, c.n, c.nplus, P.G, true, o);
    const Out<T> u = hsvd<T>(c.m, c.n, c.nplus, P.G);
    char what[160];
    std::snprintf(what, sizeof what, "%dx%d nplus %d nb %d eig_sweeps %d: sweeps %d (unblocked %d)",
                  c.m, c.n, c.nplus, c.nb, c.eig_sweeps, r.sweeps, u.sweeps);
    ASSERT_EQ(r.status, 0) << what << ": " << bsvd_last_error();
    EXPECT_EQ(r.info, 0) << what;
    EXPECT_EQ(path, BSVD_PATH_CPU_BLOCKED) << what;
    const Ratios q = measure(P, r);
    expect_ratios(q, what);
    const double smax = double(u.S[0] > u.S[c.nplus % c.n] ? u.S[0] : u.S[c.nplus % c.n]);
    for (int j = 0; j < c.n; ++j)
      EXPECT_LE(std::abs(double(r.S[j]) - double(u.S[j])), 30 * c.n * uroff<T>() * q.kappaV * smax)
          << what << " j " << j;
    if (::testing::Test::HasFailure() || std::getenv("BSVD_HSVD_VERBOSE"))
      std::printf("%s kappa(V) %.2g\n", what, q.kappaV);
  }
}

// The blocked variant's breakdown rule and values-only form: [x, x] with
// J = diag(1, -1) in blocks of one column stops with the breakdown code;
// the values without vectors are those with.
TYPED_TEST(Hsvd, BlockedBreakdownAndValuesOnly) {
  using T = TypeParam;
  using R = R_t<T>;
  bsvd_options_t o = cpu_opts();
  o.variant = BSVD_VARIANT_BLOCKED;
  o.block_size = 1;
  std::vector<T> G(12);
  for (int i = 0; i < 6; ++i) G[i] = G[6 + i] = T(R(i + 1));
  EXPECT_EQ(hsvd<T>(6, 2, 1, G, true, o).info, BSVD_INFO_HYPERBOLIC_BREAKDOWN);
  EXPECT_EQ(hsvd<T>(6, 2, 2, G, true, o).info, 0);
  o.block_size = 4;
  const Problem<T> P = make_problem<T>(24, 16, 9, 1e3, 1, 31);
  const Out<T> a = hsvd<T>(24, 16, 9, P.G, true, o), b = hsvd<T>(24, 16, 9, P.G, false, o);
  ASSERT_EQ(b.status, 0);
  EXPECT_EQ(a.S, b.S);
  EXPECT_EQ(a.sweeps, b.sweeps);
}

TYPED_TEST(Hsvd, Arguments) {
  using T = TypeParam;
  const int m = 5, n = 4;
  std::vector<T> A(m * n, T(1)), U(m * n), V(n * n);
  std::vector<R_t<T>> S(n);
  int info = 0, np = 2;
  auto call = [&](int mm, int nn, const int *nplus, bsvd_options_t o) {
    return bsvd::gehsvj_strided_batched<T>(bsvd::Job::Vectors, mm, nn, nplus, A.data(), 5, 20,
                                           S.data(), n, U.data(), 5, 20, V.data(), n, 16, &info,
                                           nullptr, 1, o);
  };
  EXPECT_EQ(call(m, n, &np, cpu_opts()), 0);
  EXPECT_EQ(call(3, n, &np, cpu_opts()), -3) << "m < n is refused"; // lda 5 >= m
  EXPECT_NE(std::string(bsvd_last_error()).find("m >= n"), std::string::npos);
  EXPECT_EQ(call(m, n, nullptr, cpu_opts()), -4);
  int bad = n + 1;
  EXPECT_EQ(call(m, n, &bad, cpu_opts()), -4);
  bad = -1;
  EXPECT_EQ(call(m, n, &bad, cpu_opts()), -4);
  EXPECT_NE(std::string(bsvd_last_error()).find("nplus"), std::string::npos);
  bsvd_options_t o = cpu_opts();
  o.backend = BSVD_BACKEND_CUDA; // the GPU path (gpu/test_gpu_hsvd.cpp), where there is one
  EXPECT_EQ(call(m, n, &np, o), bsvd_cuda_available() ? 0 : BSVD_STATUS_BACKEND_UNAVAILABLE);
  const int gpu_or_none = bsvd_cuda_available() ? 0 : BSVD_STATUS_BACKEND_UNAVAILABLE;
  o = cpu_opts();
  o.device_count = BSVD_DEVICES_ALL; // as gesvj: several GPUs for host data on cuda
  EXPECT_EQ(call(m, n, &np, o), 0);
  o.backend = BSVD_BACKEND_CUDA;
  EXPECT_EQ(call(m, n, &np, o), gpu_or_none);
  o = cpu_opts();
  o.variant = BSVD_VARIANT_BLOCKED; // the cpu's blocked variant (HsvdBlocked below)
  EXPECT_EQ(call(m, n, &np, o), 0);
  o.backend = BSVD_BACKEND_CUDA; // the plan's (the GPU's blocked path, or the cpu's)
  EXPECT_EQ(call(m, n, &np, o), gpu_or_none);
  for (int pre : {1, 2}) { // neither preconditioning keeps J
    o = cpu_opts();
    o.precondition = pre;
    EXPECT_EQ(call(m, n, &np, o), BSVD_STATUS_NOT_SUPPORTED);
    EXPECT_NE(std::string(bsvd_last_error()).find("J"), std::string::npos);
  }
  o = cpu_opts();
  o.backend = BSVD_BACKEND_AUTO; // host data: the GPU where there is one, else the cpu
  EXPECT_EQ(call(m, n, &np, o), 0);
}

} // namespace
