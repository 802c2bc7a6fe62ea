// Shared helpers of the CPU backend tests (test_cpu_*.cpp): one-matrix and
// strided-batch drivers over cpu_gesvj, and the accuracy measures of the
// brief on top of bsvd::testing::accuracy.
#pragma once

#include "core/backends.hpp"
#include "core/batch.hpp"
#include "cpu/jacobi.hpp"
#include "testing/generate.hpp"
#include "testing/metrics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace bsvd_cpu_test {

using bsvd::detail::Batch;
using bsvd::detail::Config;
using bsvd::detail::real_of_t;

template <class T> using R_t = real_of_t<T>;

// The Jacobi twin's configuration: variant unblocked names the solver, so
// the cpu backend never routes these tests' matrices to the LAPACK path
// (plan::cpu_lapack), which the default variant auto takes above 8 columns.
inline Config twin_config() {
  Config c;
  c.variant = BSVD_VARIANT_UNBLOCKED;
  return c;
}

template <class T> double uroff() { return double(bsvd::detail::unit_roundoff<R_t<T>>()); }

template <class T> const char *type_name() {
  if constexpr (std::is_same_v<T, float>)
    return "s";
  else if constexpr (std::is_same_v<T, double>)
    return "d";
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return "c";
  else
    return "z";
}

// Result of one solve with padded leading dimensions.
template <class T> struct Result {
  int m = 0, n = 0, k = 0, ldu = 0, ldv = 0;
  std::vector<R_t<T>> S;
  std::vector<T> U, V;
  int info = -99, sweeps = -1, path = -1;
  bsvd_status_t status = -99;
};

// Solves one matrix through cpu_gesvj (a strided batch of one).
// pad adds rows to ldu / ldv and fills the padding with a sentinel.
template <class T> Result<T> solve(int m, int n, const T *A, int lda, const Config &cfg,
                                   bool vectors = true, int threads = 1, int pad = 0) {
  Result<T> r;
  r.m = m;
  r.n = n;
  r.k = std::min(m, n);
  r.ldu = std::max(1, m) + pad;
  r.ldv = std::max(1, n) + pad;
  r.S.assign(std::max(r.k, 1), R_t<T>(-7));
  if (vectors) {
    r.U.assign(size_t(r.ldu) * std::max(r.k, 1), T(-3));
    r.V.assign(size_t(r.ldv) * std::max(r.k, 1), T(-3));
  }
  Batch<T> b;
  b.vectors = vectors;
  b.count = 1;
  b.dims.m = m;
  b.dims.n = n;
  b.A.base = A;
  b.A.ld = lda;
  b.A.stride = int64_t(lda) * n;
  b.S.base = r.S.data();
  b.S.stride = r.k;
  if (vectors) {
    b.U.base = r.U.data();
    b.U.ld = r.ldu;
    b.U.stride = int64_t(r.ldu) * r.k;
    b.V.base = r.V.data();
    b.V.ld = r.ldv;
    b.V.stride = int64_t(r.ldv) * r.k;
  }
  b.info = &r.info;
  b.sweeps = &r.sweeps;
  const size_t bytes = bsvd::detail::cpu_workspace_bytes(b, cfg, threads);
  std::vector<unsigned char> ws(bytes + 1);
  r.status = bsvd::detail::cpu_gesvj(b, cfg, ws.data() + 1, bytes, threads, &r.path);
  // +1: a deliberately misaligned base; cpu_gesvj must align it itself
  // (bytes includes the room for that).
  return r;
}

struct Measures {
  bsvd::testing::Ratios r; // t1, t2u, t2v, t3 (Frobenius form), t4
  double t3max = 0; // max_i |sigma_i - sigma_true_i| / (sigma_1 u)
  double worst() const { return std::max(r.worst(), t3max); }
};

// Ratios of the brief; sigma_true may be empty (no value check).
template <class T> Measures measure(int m, int n, const T *A, int lda, const Result<T> &res,
                                    const std::vector<double> &sigma_true) {
  Measures ms;
  const bool vec = !res.U.empty();
  std::vector<double> sref(sigma_true);
  ms.r = bsvd::testing::accuracy<T, R_t<T>>(
      m, n, A, lda, res.S.data(), vec ? res.U.data() : nullptr, res.ldu,
      vec ? res.V.data() : nullptr, res.ldv, sref.empty() ? nullptr : sref.data());
  if (!sref.empty() && res.k > 0) {
    const double s1 = std::max(sref[0], std::numeric_limits<double>::min());
    double mx = 0;
    for (int i = 0; i < res.k; ++i) {
      const double d = std::fabs(double(res.S[i]) - sref[i]);
      mx = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(mx, d);
    }
    ms.t3max = mx / (s1 * uroff<T>());
  }
  return ms;
}

inline std::string ratios_str(const Measures &m) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "t1=%.3g t2u=%.3g t2v=%.3g t3F=%.3g t3max=%.3g t4=%.3g", m.r.t1,
                m.r.t2u, m.r.t2v, m.r.t3, m.t3max, m.r.t4);
  return buf;
}

constexpr double kLimit = 30.0;

// Generates a matrix of the family with the default kappa of T, solves it
// and checks every ratio; returns the measures (for the worst-ratio log).
template <class T> Measures check_family(bsvd::testing::Family f, int m, int n, const Config &cfg,
                                         uint64_t seed, double kappa = 0) {
  if (kappa <= 0) kappa = bsvd::testing::default_kappa<T>();
  const int lda = std::max(1, m) + 1;
  std::vector<T> A(size_t(lda) * std::max(n, 1), T(0));
  std::vector<double> sigma;
  bsvd::testing::generate<T>(f, m, n, kappa, seed, A.data(), lda, &sigma);
  const Result<T> res = solve(m, n, A.data(), lda, cfg, true, 1, 2);
  EXPECT_EQ(res.status, 0);
  EXPECT_EQ(res.info, 0) << m << "x" << n << " sweeps " << res.sweeps;
  const Measures ms = measure(m, n, A.data(), lda, res, sigma);
  EXPECT_LT(ms.worst(), kLimit) << type_name<T>() << " " << bsvd::testing::family_name(f) << " "
                                << m << "x" << n << ": " << ratios_str(ms);
  // Padding rows of U and V untouched.
  for (int j = 0; j < res.k; ++j) {
    for (int i = std::max(1, m); i < res.ldu; ++i) EXPECT_EQ(res.U[i + size_t(j) * res.ldu], T(-3));
    for (int i = std::max(1, n); i < res.ldv; ++i) EXPECT_EQ(res.V[i + size_t(j) * res.ldv], T(-3));
  }
  return ms;
}

// Values only: the same S and sweeps as with vectors under cfg (one code
// path up to the vectors' assembly), on a 60 x 45 logrand matrix.
template <class T> void expect_values_only_same_s(const Config &cfg, uint64_t seed) {
  const int m = 60, n = 45;
  std::vector<T> A(size_t(m) * n);
  bsvd::testing::generate<T>(bsvd::testing::Family::Logrand, m, n,
                             bsvd::testing::default_kappa<T>(), seed, A.data(), m);
  const auto full = solve(m, n, A.data(), m, cfg, true);
  const auto vals = solve(m, n, A.data(), m, cfg, false);
  ASSERT_EQ(full.status, 0);
  ASSERT_EQ(vals.status, 0);
  EXPECT_EQ(full.S, vals.S);
  EXPECT_EQ(full.sweeps, vals.sweeps);
}

// Zero, identity, rank-deficient, overflow, underflow, NaN, Inf, tiny
// columns (30 x 20), each alone under cfg: reported as the plain solve
// reports it (NaN / Inf: info BSVD_INFO_NONFINITE and NaN values), the
// others within kLimit.
template <class T> void expect_edge_cases(const Config &cfg, uint64_t seed) {
  using bsvd::testing::Edge;
  const int m = 30, n = 20;
  for (Edge e : {Edge::Zero, Edge::Identity, Edge::RankDeficient, Edge::Overflow, Edge::Underflow,
                 Edge::Nan, Edge::Inf, Edge::TinyColumns}) {
    SCOPED_TRACE(testing::Message() << "edge " << int(e));
    std::vector<T> A(size_t(m) * n);
    bsvd::testing::generate_edge<T>(e, m, n, seed, A.data(), m);
    const auto r = solve(m, n, A.data(), m, cfg);
    ASSERT_EQ(r.status, 0);
    if (e == Edge::Nan || e == Edge::Inf) {
      EXPECT_EQ(r.info, BSVD_INFO_NONFINITE);
      EXPECT_TRUE(std::isnan(double(r.S[0])));
      continue;
    }
    EXPECT_EQ(r.info, 0);
    const auto ms = measure(m, n, A.data(), m, r, {});
    EXPECT_LT(ms.r.worst(), kLimit) << ratios_str(ms);
  }
}

// Worst ratios seen per type, printed at the end of the suites.
struct Worst {
  double t1 = 0, t2 = 0, t3 = 0;
  void add(const Measures &m) {
    t1 = std::max(t1, m.r.t1);
    t2 = std::max({t2, m.r.t2u, m.r.t2v});
    t3 = std::max({t3, m.t3max, m.r.t3});
  }
};
template <class T> Worst &worst_of() {
  static Worst w;
  return w;
}

} // namespace bsvd_cpu_test
