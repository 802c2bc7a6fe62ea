// Shared by the tests of the batched building blocks' C API (test_gemv.cpp,
// test_gebrd.cpp, test_trsv.cpp): the s / d / c / z entry points behind one C++ name per
// form (std::complex in, bsvd_cfloat / bsvd_cdouble out), and the random
// numbers of the tests.
#pragma once

#include <bsvd/bsvd.h>

#include <complex>
#include <cstring>
#include <random>
#include <type_traits>

namespace blas_test {

template <class T> struct real_of { using type = T; };
template <class R> struct real_of<std::complex<R>> { using type = R; };
template <class T> using R_t = typename real_of<T>::type;

template <class T> struct c_of { using type = T; };
template <> struct c_of<std::complex<float>> { using type = bsvd_cfloat; };
template <> struct c_of<std::complex<double>> { using type = bsvd_cdouble; };
template <class T> using C_t = typename c_of<T>::type;

template <class T> C_t<T> cv(T x) {
  C_t<T> c;
  std::memcpy(static_cast<void *>(&c), &x, sizeof c);
  return c;
}
template <class T> C_t<T> *cp(T *p) { return reinterpret_cast<C_t<T> *>(p); }
template <class T> const C_t<T> *cp(const T *p) { return reinterpret_cast<const C_t<T> *>(p); }
// (pointer arrays: their own name, which overload resolution cannot confuse)
template <class T> C_t<T> *const *cpa(T *const *p) { return reinterpret_cast<C_t<T> *const *>(p); }
template <class T> const C_t<T> *const *cpa(const T *const *p) {
  return reinterpret_cast<const C_t<T> *const *>(p);
}

template <class T> constexpr double unit_roundoff() {
  return sizeof(R_t<T>) == sizeof(float) ? 0x1p-24 : 0x1p-53;
}

template <class T> T random_value(std::mt19937_64 &g) {
  std::uniform_real_distribution<double> U(-1, 1);
  if constexpr (std::is_same_v<T, R_t<T>>)
    return T(U(g));
  else {
    const double re = U(g);
    return T(R_t<T>(re), R_t<T>(U(g)));
  }
}

template <class T> struct Api;

// The entry points of precision T. The suffix _async picks those forms.
#define BLAS_TEST_FORWARD(p, T)                                                                    \
  template <> struct Api<T> {                                                                      \
    template <class... A> static bsvd_status_t gemv_strided(bool async, A... a) {                  \
      return async ? bsvd_##p##gemv_strided_batched_async(a...)                                    \
                   : bsvd_##p##gemv_strided_batched(a...);                                         \
    }                                                                                              \
    template <class... A> static bsvd_status_t gemv_batched(bool async, A... a) {                  \
      return async ? bsvd_##p##gemv_batched_async(a...) : bsvd_##p##gemv_batched(a...);            \
    }                                                                                              \
    template <class... A> static bsvd_status_t gemv_vbatched(bool async, A... a) {                 \
      return async ? bsvd_##p##gemv_vbatched_async(a...) : bsvd_##p##gemv_vbatched(a...);          \
    }                                                                                              \
    template <class... A> static bsvd_status_t trsv_strided(bool async, A... a) {                  \
      return async ? bsvd_##p##trsv_strided_batched_async(a...)                                    \
                   : bsvd_##p##trsv_strided_batched(a...);                                         \
    }                                                                                              \
    template <class... A> static bsvd_status_t trsv_batched(bool async, A... a) {                  \
      return async ? bsvd_##p##trsv_batched_async(a...) : bsvd_##p##trsv_batched(a...);            \
    }                                                                                              \
    template <class... A> static bsvd_status_t trsv_vbatched(bool async, A... a) {                 \
      return async ? bsvd_##p##trsv_vbatched_async(a...) : bsvd_##p##trsv_vbatched(a...);          \
    }                                                                                              \
    template <class... A> static bsvd_status_t gels_strided(bool async, A... a) {                  \
      return async ? bsvd_##p##gels_strided_batched_async(a...)                                    \
                   : bsvd_##p##gels_strided_batched(a...);                                         \
    }                                                                                              \
    template <class... A> static bsvd_status_t gels_batched(bool async, A... a) {                  \
      return async ? bsvd_##p##gels_batched_async(a...) : bsvd_##p##gels_batched(a...);            \
    }                                                                                              \
    template <class... A> static bsvd_status_t gels_vbatched(bool async, A... a) {                 \
      return async ? bsvd_##p##gels_vbatched_async(a...) : bsvd_##p##gels_vbatched(a...);          \
    }                                                                                              \
    template <class... A> static bsvd_status_t gelsd_strided(bool async, A... a) {                 \
      return async ? bsvd_##p##gelsd_strided_batched_async(a...)                                   \
                   : bsvd_##p##gelsd_strided_batched(a...);                                        \
    }                                                                                              \
    template <class... A> static bsvd_status_t gebrd_strided(bool async, A... a) {                 \
      return async ? bsvd_##p##gebrd_strided_batched_async(a...)                                   \
                   : bsvd_##p##gebrd_strided_batched(a...);                                        \
    }                                                                                              \
    template <class... A> static bsvd_status_t gebrd_batched(bool async, A... a) {                 \
      return async ? bsvd_##p##gebrd_batched_async(a...) : bsvd_##p##gebrd_batched(a...);          \
    }                                                                                              \
    template <class... A> static bsvd_status_t gebrd_vbatched(bool async, A... a) {                \
      return async ? bsvd_##p##gebrd_vbatched_async(a...) : bsvd_##p##gebrd_vbatched(a...);        \
    }                                                                                              \
    template <class... A> static bsvd_status_t gesvdx_strided(bool async, A... a) {                \
      return async ? bsvd_##p##gesvdx_strided_batched_async(a...)                                  \
                   : bsvd_##p##gesvdx_strided_batched(a...);                                       \
    }                                                                                              \
    template <class... A> static bsvd_status_t gesvdx_batched(bool async, A... a) {                \
      return async ? bsvd_##p##gesvdx_batched_async(a...) : bsvd_##p##gesvdx_batched(a...);        \
    }                                                                                              \
    template <class... A> static bsvd_status_t gesvdx_vbatched(bool async, A... a) {               \
      return async ? bsvd_##p##gesvdx_vbatched_async(a...) : bsvd_##p##gesvdx_vbatched(a...);      \
    }                                                                                              \
  };
BLAS_TEST_FORWARD(s, float)
BLAS_TEST_FORWARD(d, double)
BLAS_TEST_FORWARD(c, std::complex<float>)
BLAS_TEST_FORWARD(z, std::complex<double>)
#undef BLAS_TEST_FORWARD

inline bsvd_options_t options(bsvd_backend_t backend) {
  bsvd_options_t o;
  bsvd_options_init(&o);
  o.backend = backend;
  return o;
}

} // namespace blas_test
