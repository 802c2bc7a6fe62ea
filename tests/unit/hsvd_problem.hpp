// Shared by the hyperbolic SVD's CPU and GPU tests (unit/test_hsvd.cpp,
// gpu/test_gpu_hsvd.cpp): problems with known hyperbolic singular values and
// the ratios that judge a solution. A problem is G = U Sigma V^-1 formed in
// double (complex double) and rounded to T, with a random unitary U and a
// random J-unitary V built from plane and hyperbolic rotations of
// controlled angle. The ratios:
//   J-unitarity   ||V^H J V - J||_1 / (n u kappa(V))
//   orthogonality ||U^H U - I||_1 / (n u)
//   residual      ||G - U Sigma V^H||_1 / (||G||_1 n u kappa(V))
//   values        max |sigma_j - sigma_j exact| / (sigma_max n u kappa(V))
//   eigenvalues   max |(+-sigma_j^2) - lambda_j(G J G^H)| / (||G||_2^2 n u kappa(V)),
//                 lambda from LAPACK's Hermitian eigensolver in double
// each below 30 (the T1-T3 constant: expect_ratios); kappa(V) =
// ||V||_2 ||V^-1||_2 = ||V||_2^2 (V^-1 = J V^H J).
#pragma once

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

namespace hsvd_test {

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

inline bsvd_options_t cpu_opts() {
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

inline void expect_ratios(const Ratios &q, const char *what) {
  EXPECT_LT(q.junit, 30) << what;
  EXPECT_LT(q.orth, 30) << what;
  EXPECT_LT(q.resid, 30) << what;
  EXPECT_LT(q.values, 30) << what;
  EXPECT_LT(q.eig, 30) << what;
}

} // namespace hsvd_test
