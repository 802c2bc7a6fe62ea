#include "qr.hpp"

#include <algorithm>
#include <cmath>
#include <complex>

namespace bsvd::detail {
namespace {

template <class R> R re_(R x) { return x; }
template <class R> R re_(std::complex<R> x) { return x.real(); }
template <class R> R im_(R) { return R(0); }
template <class R> R im_(std::complex<R> x) { return x.imag(); }
template <class R> R cj_(R x) { return x; }
template <class R> std::complex<R> cj_(std::complex<R> x) { return std::conj(x); }
template <class R> R mx_(R x) { return std::fabs(x); }
template <class R> R mx_(std::complex<R> x) { return std::max(std::fabs(x.real()), std::fabs(x.imag())); }
template <class R> R sq_(R x) { return x * x; }
template <class R> R sq_(std::complex<R> x) { return x.real() * x.real() + x.imag() * x.imag(); }

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

} // namespace

template <class T> void householder_qr(int m, int n, T *Y, int ldy, T *tau) {
  using R = real_of_t<T>;
  for (int j = 0; j < n; ++j) {
    T *yj = Y + int64_t(j) * ldy;
    const T alpha = yj[j];
    const R xnorm = scaled_nrm2(m - j - 1, yj + j + 1);
    if (xnorm == R(0) && im_(alpha) == R(0)) {
      tau[j] = T(0);
      continue;
    }
    // ||(alpha, x)|| scaled as well
    const R ar = std::fabs(re_(alpha)), ai = std::fabs(im_(alpha));
    const R sc = std::max({ar, ai, xnorm});
    const R nrm = sc * std::sqrt(sq_(re_(alpha) / sc) + sq_(im_(alpha) / sc) + sq_(xnorm / sc));
    const R beta = re_(alpha) >= R(0) ? -nrm : nrm;
    tau[j] = (T(beta) - alpha) / T(beta);
    const T scal = T(1) / (alpha - T(beta));
    for (int i = j + 1; i < m; ++i) yj[i] *= scal;
    yj[j] = T(beta);
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

#define BSVD_INSTANTIATE(T)                                                                     \
  template void householder_qr<T>(int, int, T *, int, T *);                                     \
  template void apply_householder_q<T>(int, int, const T *, int, const T *, int, T *, int);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail
