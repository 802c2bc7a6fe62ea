// The check of a bidiagonalization against LAPACK (xORGBR / xUNGBR on its
// reflectors, xGEBRD for its bidiagonal), shared by the device header's
// tests (test_device_gebrd.cpp) and the public batched GEBRD's
// (test_gebrd.cpp); the ratios are described at the top of
// test_device_gebrd.cpp.
#pragma once

#include "bidiag_helpers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace gebrd_check {

using bidiag_test::R_t;
using bidiag_test::unit_roundoff;

// The exact check arithmetic: long double, complex where T is.
template <class T> struct wide { using type = long double; };
template <class R> struct wide<std::complex<R>> { using type = std::complex<long double>; };
template <class T> using W_t = typename wide<T>::type;
template <class X> long double mag(X x) { return std::abs(x); }
template <class X> X cj(X x) { return x; }
template <class R> std::complex<R> cj(std::complex<R> x) { return std::conj(x); }

// ||X||_1 (largest column sum) of an m x n column-major matrix.
template <class X> long double norm1(int m, int n, const X *A, int lda) {
  long double best = 0;
  for (int j = 0; j < n; ++j) {
    long double s = 0;
    for (int i = 0; i < m; ++i) s += mag(A[i + size_t(j) * lda]);
    best = std::max(best, s);
  }
  return best;
}

// dev passes below k plus 10 times LAPACK's own sensitivity sens.
struct Ratios {
  double resid = 0, orthq = 0, orthp = 0, dev = 0, sens = 0;
  void max_with(const Ratios &o) {
    resid = std::max(resid, o.resid), orthq = std::max(orthq, o.orthq);
    orthp = std::max(orthp, o.orthp), dev = std::max(dev, o.dev), sens = std::max(sens, o.sens);
  }
  bool pass(double k = 30, bool with_dev = true) const {
    return resid < k && orthq < k && orthp < k && (!with_dev || dev < k + 10 * sens);
  }
};
inline std::ostream &operator<<(std::ostream &o, const Ratios &r) {
  return o << "resid " << r.resid << " orthq " << r.orthq << " orthp " << r.orthp << " dev "
           << r.dev << " (sens " << r.sens << ")";
}
inline std::string str(const Ratios &r) {
  std::ostringstream s;
  s << r;
  return s.str();
}

// Spare entries behind every matrix handed to LAPACK: OpenBLAS's cgemv_n
// (SKYLAKEX kernel, inside cgebrd / clarf) was seen reading past the end
// of the matrix, a segfault when that crosses into an unmapped page.
constexpr size_t kPad = 256;

template <class T> struct Bidiag {
  std::vector<T> A, tauq, taup; // A overwritten by the reduction
  std::vector<R_t<T>> d, e;
  int lda = 0, info = 99;
};

// A copy of A (ld lda) for a reduction to overwrite, its outputs filled
// with -9 (what a reduction leaves unwritten shows).
template <class T> Bidiag<T> unreduced(int m, int n, const T *A, int lda) {
  const size_t k = size_t(std::max(std::min(m, n), 1));
  Bidiag<T> b;
  b.lda = lda;
  b.A.assign(A, A + size_t(lda) * n);
  b.d.assign(k, R_t<T>(-9));
  b.e.assign(k, R_t<T>(-9));
  b.tauq.assign(k, T(-9));
  b.taup.assign(k, T(-9));
  return b;
}

// The ratios of the header's top, plus the exact facts of LAPACK's layout
// (the bidiagonal also stored in A, real).
template <class T> Ratios check(int m, int n, const T *A0, int lda, const Bidiag<T> &b) {
  using W = W_t<T>;
  const double u = unit_roundoff<R_t<T>>();
  const int k = std::min(m, n), mx = std::max(m, n);
  const bool upper = m >= n;
  Ratios r;
  EXPECT_EQ(b.info, 0);
  for (int i = 0; i < k; ++i) {
    EXPECT_EQ(b.A[i + size_t(i) * lda], T(b.d[i])) << "d in A, i " << i;
    if (i + 1 < k) {
      const T stored = upper ? b.A[i + size_t(i + 1) * lda] : b.A[i + 1 + size_t(i) * lda];
      EXPECT_EQ(stored, T(b.e[i])) << "e in A, i " << i;
    }
  }
  // Q (m x k) and P^H (k x n) by LAPACK from our reflectors.
  std::vector<T> Q(b.A), PH(b.A);
  Q.resize(b.A.size() + kPad), PH.resize(b.A.size() + kPad);
  EXPECT_EQ(bidiag_test::orgbr('Q', m, k, n, Q.data(), lda, b.tauq.data()), 0);
  EXPECT_EQ(bidiag_test::orgbr('P', k, n, m, PH.data(), lda, b.taup.data()), 0);
  // Q B (m x k), then (Q B) P^H.
  std::vector<W> QB(size_t(m) * k, W(0));
  for (int j = 0; j < k; ++j)
    for (int i = 0; i < m; ++i) {
      W s = W(Q[i + size_t(j) * lda]) * W(b.d[j]);
      if (upper && j > 0) s += W(Q[i + size_t(j - 1) * lda]) * W(b.e[j - 1]);
      if (!upper && j + 1 < k) s += W(Q[i + size_t(j + 1) * lda]) * W(b.e[j]);
      QB[i + size_t(j) * m] = s;
    }
  std::vector<W> E(size_t(m) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      W s = W(A0[i + size_t(j) * lda]);
      for (int l = 0; l < k; ++l) s -= QB[i + size_t(l) * m] * W(PH[l + size_t(j) * lda]);
      E[i + size_t(j) * m] = s;
    }
  const long double na = norm1(m, n, A0, lda), ne = norm1(m, n, E.data(), m);
  if (na == 0)
    EXPECT_EQ(ne, 0.0L);
  else
    r.resid = double(ne / (na * mx * u));
  std::vector<W> G(size_t(k) * k);
  for (int j = 0; j < k; ++j)
    for (int i = 0; i < k; ++i) {
      W s = W(i == j ? 1 : 0);
      for (int l = 0; l < m; ++l) s -= cj(W(Q[l + size_t(i) * lda])) * W(Q[l + size_t(j) * lda]);
      G[i + size_t(j) * k] = s;
    }
  r.orthq = double(norm1(k, k, G.data(), k) / (m * u));
  for (int j = 0; j < k; ++j)
    for (int i = 0; i < k; ++i) {
      W s = W(i == j ? 1 : 0);
      for (int l = 0; l < n; ++l) s -= W(PH[i + size_t(l) * lda]) * cj(W(PH[j + size_t(l) * lda]));
      G[i + size_t(j) * k] = s;
    }
  r.orthp = double(norm1(k, k, G.data(), k) / (n * u));
  // d and e against xGEBRD's, up to sign. The bidiagonal is not a
  // well-conditioned function of A (like a Lanczos basis; clustered values
  // make it worse), so the difference is measured against LAPACK's own
  // sensitivity: xGEBRD on A with every entry changed by a relative u.
  auto lapack_be = [&](const std::vector<T> &M, std::vector<R_t<T>> &dl, std::vector<R_t<T>> &el) {
    std::vector<T> Al(M), tq(std::max(k, 1)), tp(std::max(k, 1));
    Al.resize(M.size() + kPad); // OpenBLAS's c gemv kernel reads past the end
    dl.assign(std::max(k, 1), 0), el.assign(std::max(k, 1), 0);
    EXPECT_EQ(bidiag_test::gebrd(m, n, Al.data(), lda, dl.data(), el.data(), tq.data(), tp.data()),
              0);
  };
  std::vector<R_t<T>> dl, el, dp, ep;
  std::vector<T> Ap(A0, A0 + size_t(lda) * n);
  lapack_be(Ap, dl, el);
  std::mt19937_64 rng(m * 131 + n);
  std::uniform_real_distribution<double> pert(-1, 1);
  for (T &x : Ap) x *= R_t<T>(1 + u * pert(rng));
  lapack_be(Ap, dp, ep);
  long double dev = 0, sens = 0;
  for (int i = 0; i < k; ++i) {
    dev = std::max(dev, std::abs(mag(b.d[i]) - mag(dl[i])));
    sens = std::max(sens, std::abs(mag(dp[i]) - mag(dl[i])));
    if (i + 1 < k) {
      dev = std::max(dev, std::abs(mag(b.e[i]) - mag(el[i])));
      sens = std::max(sens, std::abs(mag(ep[i]) - mag(el[i])));
    }
  }
  if (na > 0) {
    r.dev = double(dev / (na * mx * u));
    r.sens = double(sens / (na * mx * u));
  }
  return r;
}

} // namespace gebrd_check
