// Private helpers of bsvd_testing: scalar traits shared by the generators,
// the metrics and the LAPACK wrappers. Not part of the interface.
#pragma once

#include <cmath>
#include <complex>
#include <type_traits>

namespace bsvd::testing::detail {

template <class T> struct scalar_traits {
  using real = T;
  using wide = double; // the type the generators work in
  using accum = long double; // the type the metrics accumulate in
  static constexpr bool is_complex = false;
};
template <class R> struct scalar_traits<std::complex<R>> {
  using real = R;
  using wide = std::complex<double>;
  using accum = std::complex<long double>;
  static constexpr bool is_complex = true;
};

template <class T> using real_t = typename scalar_traits<T>::real;
template <class T> using wide_t = typename scalar_traits<T>::wide;
template <class T> using accum_t = typename scalar_traits<T>::accum;
template <class T> constexpr bool is_complex_v = scalar_traits<T>::is_complex;

// conj / abs2 / finiteness without std::conj's promotion of reals to complex.
template <class R> inline R conj_(R x) { return x; }
template <class R> inline std::complex<R> conj_(const std::complex<R> &x) { return std::conj(x); }
template <class R> inline R real_(R x) { return x; }
template <class R> inline R real_(const std::complex<R> &x) { return x.real(); }
template <class R> inline R imag_(R) { return R(0); }
template <class R> inline R imag_(const std::complex<R> &x) { return x.imag(); }
template <class R> inline bool finite_(R x) { return std::isfinite(x); }
template <class R> inline bool finite_(const std::complex<R> &x) {
  return std::isfinite(x.real()) && std::isfinite(x.imag());
}

// Conversion between precisions (each part rounded once).
template <class To, class From> inline To convert_(const From &x) {
  if constexpr (is_complex_v<To>) {
    using R = real_t<To>;
    return To(static_cast<R>(real_(x)), static_cast<R>(imag_(x)));
  } else {
    static_assert(!is_complex_v<From>, "complex to real conversion");
    return static_cast<To>(x);
  }
}

} // namespace bsvd::testing::detail
