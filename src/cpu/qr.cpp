#include "qr.hpp"

#include "../core/tsqr.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

namespace bsvd::detail {
namespace {

template <class R> R re_(R x) { return x; }
template <class R> R re_(std::complex<R> x) { return x.real(); }
template <class R> R im_(R) { return R(0); }
template <class R> R im_(std::complex<R> x) { return x.imag(); }
template <class R> R cj_(R x) { return x; }
template <class R> std::complex<R> cj_(std::complex<R> x) { return std::conj(x); }
template <class R> R mx_(R x) { return std::fabs(x); }
template <class R> R mx_(std::complex<R> x) {
  return std::max(std::fabs(x.real()), std::fabs(x.imag()));
}
template <class R> R sq_(R x) { return x * x; }
template <class R> R sq_(std::complex<R> x) { return x.real() * x.real() + x.imag() * x.imag(); }

// x 2^e (exact unless the result is subnormal).
template <class R> R scale2(R x, int e) { return std::ldexp(x, e); }
template <class R> std::complex<R> scale2(std::complex<R> x, int e) {
  return {std::ldexp(x.real(), e), std::ldexp(x.imag(), e)};
}

// ||x|| of n entries (stride 1) by scaling with the largest part.
template <class T> real_of_t<T> scaled_nrm2(int n, const T *x) {
  using R = real_of_t<T>;
  R mx = 0;
  for (int i = 0; i < n; ++i) mx = std::max(mx, mx_(x[i]));
  if (mx == R(0)) return R(0);
  R s = 0;
  for (int i = 0; i < n; ++i) s += sq_(x[i] / mx);
  return mx * std::sqrt(s);
}

// Step j of the factorization: the reflector of column j (rows j..m-1) and
// its application to columns j+1..n-1.
template <class T> void householder_step(int m, int n, T *Y, int ldy, T *tau, int j) {
  using R = real_of_t<T>;
  T *yj = Y + int64_t(j) * ldy;
  const T alpha = yj[j];
  const R xnorm = scaled_nrm2(m - j - 1, yj + j + 1);
  if (xnorm == R(0) && im_(alpha) == R(0)) {
    tau[j] = T(0);
    return;
  }
  // A tiny column -- the rounding residue of a rank-deficient matrix
  // shrinks by about u per step and reaches the subnormals (GD96_d, with
  // pivoting) -- is scaled by an exact power of two 2^e first, as xLARFG
  // rescales by 1 / safmin: tau and v are invariant under the scaling, and
  // 1 / (alpha - beta) can then neither overflow nor lose precision. The
  // threshold sqrt(min_normal) / eps keeps |alpha - beta|^2, which the GPU's
  // complex division forms (qdiv), well inside the normal range too.
  const R big = std::max({std::fabs(re_(alpha)), std::fabs(im_(alpha)), xnorm});
  const int e = big < std::sqrt(std::numeric_limits<R>::min()) / std::numeric_limits<R>::epsilon()
                    ? -std::ilogb(big)
                    : 0;
  const T as = scale2(alpha, e);
  R xs = xnorm;
  if (e != 0) { // x scaled in place; its norm again (a subnormal one had lost bits)
    for (int i = j + 1; i < m; ++i) yj[i] = scale2(yj[i], e);
    xs = scaled_nrm2(m - j - 1, yj + j + 1);
  }
  // ||(alpha, x)|| scaled as well
  const R ar = std::fabs(re_(as)), ai = std::fabs(im_(as));
  const R sc = std::max({ar, ai, xs});
  const R nrm = sc * std::sqrt(sq_(re_(as) / sc) + sq_(im_(as) / sc) + sq_(xs / sc));
  const R beta = re_(as) >= R(0) ? -nrm : nrm;
  tau[j] = (T(beta) - as) / T(beta);
  const T scal = T(1) / (as - T(beta));
  for (int i = j + 1; i < m; ++i) yj[i] *= scal;
  yj[j] = T(std::ldexp(beta, -e));
  const T ct = cj_(tau[j]);
  for (int c = j + 1; c < n; ++c) {
    T *yc = Y + int64_t(c) * ldy;
    T w = yc[j];
    for (int i = j + 1; i < m; ++i) w += cj_(yj[i]) * yc[i];
    w *= ct;
    yc[j] -= w;
    for (int i = j + 1; i < m; ++i) yc[i] -= yj[i] * w;
  }
}

} // namespace

template <class T> void householder_qr(int m, int n, T *Y, int ldy, T *tau) {
  for (int j = 0; j < n; ++j) householder_step(m, n, Y, ldy, tau, j);
}

template <class T> void householder_qr_pivoted(int m, int n, T *Y, int ldy, T *tau, int *perm) {
  using R = real_of_t<T>;
  std::vector<R> vn1(n), vn2(n); // partial column norms, and each one's last exact value
  for (int c = 0; c < n; ++c) {
    perm[c] = c;
    vn1[c] = vn2[c] = scaled_nrm2(m, Y + int64_t(c) * ldy);
  }
  const R tol3z = std::sqrt(std::numeric_limits<R>::epsilon());
  for (int j = 0; j < n; ++j) {
    int p = j; // the first column of largest partial norm
    for (int c = j + 1; c < n; ++c)
      if (vn1[c] > vn1[p]) p = c;
    if (p != j) {
      std::swap_ranges(Y + int64_t(p) * ldy, Y + int64_t(p) * ldy + m, Y + int64_t(j) * ldy);
      std::swap(perm[p], perm[j]);
      vn1[p] = vn1[j];
      vn2[p] = vn2[j];
    }
    householder_step(m, n, Y, ldy, tau, j);
    // Downdate the trailing partial norms by row j of R; recompute one when
    // the downdate has cancelled too much of it (xLAQP2's test).
    for (int c = j + 1; c < n; ++c) {
      if (vn1[c] == R(0)) continue;
      const T *yc = Y + int64_t(c) * ldy;
      R t = std::abs(yc[j]) / vn1[c];
      t = std::max(R(0), (R(1) + t) * (R(1) - t));
      const R r = vn1[c] / vn2[c];
      if (t * r * r <= tol3z) {
        vn1[c] = scaled_nrm2(m - j - 1, yc + j + 1);
        vn2[c] = vn1[c];
      } else {
        vn1[c] *= std::sqrt(t);
      }
    }
  }
}

template <class T>
void apply_householder_q(int m, int n, const T *Y, int ldy, const T *tau, int k, T *X, int ldx) {
  for (int j = n - 1; j >= 0; --j) {
    if (tau[j] == T(0)) continue;
    const T *yj = Y + int64_t(j) * ldy;
    for (int c = 0; c < k; ++c) {
      T *xc = X + int64_t(c) * ldx;
      T w = xc[j];
      for (int i = j + 1; i < m; ++i) w += cj_(yj[i]) * xc[i];
      w *= tau[j];
      xc[j] -= w;
      for (int i = j + 1; i < m; ++i) xc[i] -= yj[i] * w;
    }
  }
}

template <class T> void apply_householder_q_wy(int m, int n, const T *Y, int ldy, const T *tau,
                                               const T *Z, T *X, int ldx) {
  apply_householder_q_wy(m, n, Y, ldy, tau, Z, n, X, ldx);
}

template <class T> void apply_householder_q_wy(int m, int n, const T *Y, int ldy, const T *tau,
                                               const T *Z, int ldz, T *X, int ldx) {
  const auto v = [&](int r, int k) {
    return r < k ? T(0) : r == k ? T(1) : Y[r + int64_t(k) * ldy];
  };
  std::vector<T> G(size_t(n) * n, T(0)), Tm(size_t(n) * n, T(0)), W(size_t(n) * n),
      M(size_t(n) * n);
  for (int j = 1; j < n; ++j)
    for (int i = 0; i < j; ++i) {
      T acc = T(0);
      for (int r = j; r < m; ++r) acc += cj_(v(r, i)) * v(r, j);
      G[i + size_t(j) * n] = acc;
    }
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < j; ++i) {
      T acc = T(0);
      for (int k = i; k < j; ++k)
        acc += Tm[i + size_t(k) * n] * (T(0) - tau[j] * G[k + size_t(j) * n]);
      Tm[i + size_t(j) * n] = acc;
    }
    Tm[j + size_t(j) * n] = tau[j];
  }
  for (int c = 0; c < n; ++c)
    for (int k = 0; k < n; ++k) {
      T acc = T(0);
      for (int r = k; r < n; ++r) acc += cj_(v(r, k)) * Z[r + size_t(c) * ldz];
      W[k + size_t(c) * n] = acc;
    }
  for (int c = 0; c < n; ++c)
    for (int i = 0; i < n; ++i) {
      T acc = T(0);
      for (int k = i; k < n; ++k) acc += Tm[i + size_t(k) * n] * W[k + size_t(c) * n];
      M[i + size_t(c) * n] = acc;
    }
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c) {
      T x = r < n ? Z[r + size_t(c) * ldz] : T(0);
      for (int k = 0; k <= std::min(r, n - 1); ++k) x -= v(r, k) * M[k + size_t(c) * n];
      X[r + int64_t(c) * ldx] = x;
    }
}

template <class T> void tsqr_factor(int m, int n, int nc, T *Y, int ldy, T *tau1, T *Z, T *tau2) {
  const int hc = tsqr_chunk_height(m, nc), lz = nc * n;
  for (int c = 0; c < nc; ++c) {
    const int r0 = c * hc, rows = std::min(m, r0 + hc) - r0;
    T *Yc = Y + r0;
    householder_qr(rows, n, Yc, ldy, tau1 + int64_t(c) * n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        Z[c * n + i + int64_t(j) * lz] = i <= j ? Yc[i + int64_t(j) * ldy] : T(0);
  }
  householder_qr(lz, n, Z, lz, tau2);
}

template <class T> void tsqr_apply_q_wy(int m, int n, int nc, const T *Y, int ldy, const T *tau1,
                                        const T *Z, const T *tau2, const T *Zs, T *X, int ldx) {
  const int hc = tsqr_chunk_height(m, nc), lz = nc * n;
  std::vector<T> X2(size_t(lz) * n);
  apply_householder_q_wy(lz, n, Z, lz, tau2, Zs, n, X2.data(), lz);
  for (int c = 0; c < nc; ++c) {
    const int r0 = c * hc, rows = std::min(m, r0 + hc) - r0;
    apply_householder_q_wy(rows, n, Y + r0, ldy, tau1 + int64_t(c) * n, X2.data() + c * n, lz,
                           X + r0, ldx);
  }
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template void householder_qr<T>(int, int, T *, int, T *);                                        \
  template void householder_qr_pivoted<T>(int, int, T *, int, T *, int *);                         \
  template void apply_householder_q<T>(int, int, const T *, int, const T *, int, T *, int);        \
  template void apply_householder_q_wy<T>(int, int, const T *, int, const T *, const T *, T *,     \
                                          int);                                                    \
  template void apply_householder_q_wy<T>(int, int, const T *, int, const T *, const T *, int,     \
                                          T *, int);                                               \
  template void tsqr_factor<T>(int, int, int, T *, int, T *, T *, T *);                            \
  template void tsqr_apply_q_wy<T>(int, int, int, const T *, int, const T *, const T *, const T *, \
                                   const T *, T *, int);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail
