// The hyperbolic SVD (bsvd::gehsvj_strided_batched, docs/hsvd.md) on the
// cpu backend: constructed matrices G = U Sigma V^-1 with known Sigma
// (random unitary U, random J-unitary V built from plane and hyperbolic
// rotations of controlled angle), checked for
//   J-unitarity   ||V^H J V - J||_1 / (n u kappa(V))
//   orthogonality ||U^H U - I||_1 / (n u)
//   residual      ||G - U Sigma V^H||_1 / (||G||_1 n u kappa(V))
//   values        max |sigma_j - sigma_j exact| / (sigma_max n u kappa(V))
//   eigenvalues   max |(+-sigma_j^2) - lambda_j(G J G^H)| / (||G||_2^2 n u kappa(V)),
//                 lambda from LAPACK's Hermitian eigensolver in double
// each below 30 (the T1-T3 constant); kappa(V) = ||V||_2 ||V^-1||_2 =
// ||V||_2^2 (V^-1 = J V^H J). Plus relative accuracy on graded matrices,
// the reductions to the ordinary SVD (nplus = 0, n), the edge cases and
// the argument checks.
#include "core/batch.hpp"
#include "testing/generate.hpp"
#include "testing/lapack_ref.hpp"

#include <bsvd/bsvd.h>
#include <bsvd/svd.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <complex>
#include <limits>
#include <random>
#include <vector>

namespace {

template <class T> using R_t = bsvd::real_t<T>;
template <class T> using W_t =
    std::conditional_t<bsvd::is_complex<T>::value, std::complex<double>, double>;
template <class T> double uroff() { return double(bsvd::detail::unit_roundoff<R_t<T>>()); }
template <class D> D conj_(D x) {
  if constexpr (bsvd::is_complex<D>::value)
    return std::conj(x);
  else
    return x;
}
// A random unit phase (1 or -1 for real D).
template <class D> D phase(std::mt19937_64 &g) {
  std::uniform_real_distribution<double> u(0, 2 * M_PI);
  const double a = u(g);
  if constexpr (bsvd::is_complex<D>::value)
    return D(std::cos(a), std::sin(a));
  else
    return a < M_PI ? 1.0 : -1.0;
}

bsvd_options_t cpu_opts() {
  bsvd_options_t o = bsvd::default_options();
  o.backend = BSVD_BACKEND_CPU;
  return o;
}

// One matrix's outputs.
template <class T> struct Out {
  std::vector<R_t<T>> S;
  std::vector<T> U, V;
  int info = -99, sweeps = -1;
  bsvd_status_t status = -99;
};

template <class T> Out<T> hsvd(int m, int n, int nplus, const std::vector<T> &G, bool vec = true,
                               bsvd_options_t o = cpu_opts()) {
  Out<T> r;
  r.S.assign(n, R_t<T>(-7));
  if (vec) {
    r.U.assign(size_t(m) * n, T(-3));
    r.V.assign(size_t(n) * n, T(-3));
  }
  r.status = bsvd::gehsvj_strided_batched<T>(
      vec ? bsvd::Job::Vectors : bsvd::Job::Values, m, n, &nplus, G.data(), m, int64_t(m) * n,
      r.S.data(), n, vec ? r.U.data() : nullptr, m, int64_t(m) * n, vec ? r.V.data() : nullptr, n,
      int64_t(n) * n, &r.info, &r.sweeps, 1, o);
  return r;
}

// A problem with known hyperbolic singular values: G = U Sigma V^-1 formed
// in double (complex double) and rounded to T. V is a product of `rots`
// random rotations, hyperbolic ones (|phi| <= phimax) between the two
// sides of nplus, plane ones within a side.
template <class T> struct Problem {
  using D = W_t<T>;
  int m = 0, n = 0, nplus = 0;
  std::vector<double> sigma; // exact, each side descending
  std::vector<T> G;
  std::vector<D> Gd; // G as rounded, widened
};

template <class T> Problem<T> make_problem(int m, int n, int nplus, double kappa_sigma,
                                           double phimax, uint64_t seed, int zeros = 0) {
  using D = W_t<T>;
  Problem<T> P;
  P.m = m;
  P.n = n;
  P.nplus = nplus;
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> unif(0, 1);
  P.sigma.resize(n);
  for (int j = 0; j < n; ++j) P.sigma[j] = std::pow(kappa_sigma, -unif(g));
  for (int z = 0; z < zeros && z < n; ++z) P.sigma[(z * 7 + 3) % n] = 0;
  std::sort(P.sigma.begin(), P.sigma.begin() + nplus, std::greater<double>());
  std::sort(P.sigma.begin() + nplus, P.sigma.end(), std::greater<double>());
  std::vector<D> U(size_t(m) * n), V(size_t(n) * n, D(0));
  bsvd::testing::haar_orthonormal<D>(m, n, seed * 31 + 1, U.data(), m);
  for (int j = 0; j < n; ++j) V[j + size_t(j) * n] = 1;
  std::uniform_int_distribution<int> pick(0, n - 1);
  for (int r = 0; r < 4 * n && n > 1; ++r) {
    int p = pick(g), q = pick(g);
    if (p == q) continue;
    const D e = phase<D>(g);
    double c, s; // columns p, q of V: vp' = c vp + s conj(e) vq, vq' = +-s e vp + c vq
    const bool hyp = (p < nplus) != (q < nplus);
    const double phi = (2 * unif(g) - 1) * (hyp ? phimax : M_PI);
    c = hyp ? std::cosh(phi) : std::cos(phi);
    s = hyp ? std::sinh(phi) : std::sin(phi);
    for (int i = 0; i < n; ++i) {
      const D a = V[i + size_t(p) * n], b = V[i + size_t(q) * n];
      V[i + size_t(p) * n] = c * a + s * conj_(e) * b;
      V[i + size_t(q) * n] = (hyp ? s : -s) * e * a + c * b;
    }
  }
  // G = U Sigma V^-1, V^-1 = J V^H J.
  auto sg = [&](int i) { return i < nplus ? 1.0 : -1.0; };
  P.G.resize(size_t(m) * n);
  P.Gd.resize(size_t(m) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      D x = 0;
      for (int k = 0; k < n; ++k)
        x += U[i + size_t(k) * m] * P.sigma[k] * sg(k) * sg(j) * conj_(V[j + size_t(k) * n]);
      P.G[i + size_t(j) * m] = T(x);
      P.Gd[i + size_t(j) * m] = D(P.G[i + size_t(j) * m]);
    }
  return P;
}

// The ratios of the header comment.
struct Ratios {
  double junit = 0, orth = 0, resid = 0, values = 0, eig = 0, kappaV = 0;
};

template <class T> Ratios measure(const Problem<T> &P, const Out<T> &r) {
  using D = W_t<T>;
  const int m = P.m, n = P.n, np = P.nplus;
  const double u = uroff<T>();
  Ratios q;
  auto sg = [&](int i) { return i < np ? 1.0 : -1.0; };
  // kappa(V) = sigma_max(V)^2.
  std::vector<double> sv(n);
  bsvd::testing::reference_singular_values<T>(n, n, r.V.data(), n, sv.data());
  q.kappaV = sv[0] * sv[0];
  double j1 = 0, o1 = 0;
  for (int j = 0; j < n; ++j) {
    double cj = 0, co = 0;
    for (int i = 0; i < n; ++i) {
      D x = 0, y = 0;
      for (int k = 0; k < n; ++k)
        x += conj_(D(r.V[k + size_t(i) * n])) * sg(k) * D(r.V[k + size_t(j) * n]);
      for (int k = 0; k < m; ++k) y += conj_(D(r.U[k + size_t(i) * m])) * D(r.U[k + size_t(j) * m]);
      cj += std::abs(x - (i == j ? sg(i) : 0.0));
      co += std::abs(y - (i == j ? 1.0 : 0.0));
    }
    j1 = std::max(j1, cj);
    o1 = std::max(o1, co);
  }
  q.junit = j1 / (n * u * q.kappaV);
  q.orth = o1 / (n * u);
  double r1 = 0, g1 = 0;
  for (int j = 0; j < n; ++j) {
    double cr = 0, cg = 0;
    for (int i = 0; i < m; ++i) {
      D x = 0;
      for (int k = 0; k < n; ++k)
        x += D(r.U[i + size_t(k) * m]) * double(r.S[k]) * conj_(D(r.V[j + size_t(k) * n]));
      cr += std::abs(P.Gd[i + size_t(j) * m] - x);
      cg += std::abs(P.Gd[i + size_t(j) * m]);
    }
    r1 = std::max(r1, cr);
    g1 = std::max(g1, cg);
  }
  q.resid = g1 > 0 ? r1 / (g1 * n * u * q.kappaV) : r1;
  const double smax = *std::max_element(P.sigma.begin(), P.sigma.end());
  for (int j = 0; j < n; ++j)
    q.values =
        std::max(q.values, std::abs(double(r.S[j]) - P.sigma[j]) / (smax * n * u * q.kappaV));
  // Eigenvalues of H = G J G^H (m x m; m - n of them zero) against +-S^2.
  std::vector<D> H(size_t(m) * m);
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < m; ++i) {
      D x = 0;
      for (int k = 0; k < n; ++k)
        x += P.Gd[i + size_t(k) * m] * sg(k) * conj_(P.Gd[j + size_t(k) * m]);
      H[i + size_t(j) * m] = x;
    }
  std::vector<double> lam(m), mine(m, 0.0);
  bsvd::testing::reference_hermitian_eigenvalues<D>(m, H.data(), m, lam.data());
  for (int j = 0; j < n; ++j) mine[j] = sg(j) * double(r.S[j]) * double(r.S[j]);
  std::sort(mine.begin(), mine.end());
  std::vector<double> gs(n);
  bsvd::testing::reference_singular_values<D>(m, n, P.Gd.data(), m, gs.data());
  for (int j = 0; j < m; ++j)
    q.eig = std::max(q.eig, std::abs(mine[j] - lam[j]) / (gs[0] * gs[0] * n * u * q.kappaV));
  return q;
}

template <class T> class Hsvd : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(Hsvd, Types);

void expect_ratios(const Ratios &q, const char *what) {
  EXPECT_LT(q.junit, 30) << what;
  EXPECT_LT(q.orth, 30) << what;
  EXPECT_LT(q.resid, 30) << what;
  EXPECT_LT(q.values, 30) << what;
  EXPECT_LT(q.eig, 30) << what;
}

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
  o.backend = BSVD_BACKEND_CUDA;
  EXPECT_EQ(call(m, n, &np, o), BSVD_STATUS_NOT_SUPPORTED);
  o = cpu_opts();
  o.variant = BSVD_VARIANT_BLOCKED;
  EXPECT_EQ(call(m, n, &np, o), BSVD_STATUS_NOT_SUPPORTED);
  for (int pre : {1, 2}) { // neither preconditioning keeps J
    o = cpu_opts();
    o.precondition = pre;
    EXPECT_EQ(call(m, n, &np, o), BSVD_STATUS_NOT_SUPPORTED);
    EXPECT_NE(std::string(bsvd_last_error()).find("J"), std::string::npos);
  }
  o = cpu_opts();
  o.backend = BSVD_BACKEND_AUTO; // host data: the cpu, GPU or not
  EXPECT_EQ(call(m, n, &np, o), 0);
}

} // namespace
