// LAPACKE wrappers: reference singular values (double precision gesvd) and
// the working-precision baselines gesvd / gesvj.
#include "testing/lapack_ref.hpp"

#include "testing/scalar_impl.hpp"

#include <algorithm>
#include <complex>
#include <limits>
#include <type_traits>
#include <vector>

// LAPACKE's complex types are std::complex (layout-compatible with Fortran
// COMPLEX by the C++ standard), so no casts are needed below.
#define LAPACK_COMPLEX_CUSTOM
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <lapacke.h>

namespace bsvd::testing {

using detail::real_t;
using detail::wide_t;

namespace {

using cf = std::complex<float>;
using cd = std::complex<double>;

// LAPACKE's own code for an invalid (NaN) A in ?gesvd (argument 6) and
// ?gesvj (argument 7). LAPACK is not called on non-finite input at all:
// its behaviour there (Inf in particular, which LAPACKE's NaN check lets
// through) is not specified.
constexpr int kGesvdBadA = -6;
constexpr int kGesvjBadA = -7;

template <class T> bool all_finite(int m, int n, const T *A, int lda) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      if (!detail::finite_(A[i + static_cast<size_t>(j) * lda])) return false;
  return true;
}

template <class R> void fill_nan(int k, R *S) {
  for (int i = 0; i < k; ++i) S[i] = std::numeric_limits<R>::quiet_NaN();
}

lapack_int gesdd(char j, int m, int n, float *A, int lda, float *S, float *U, int ldu, float *VT,
                 int ldvt) {
  return LAPACKE_sgesdd(LAPACK_COL_MAJOR, j, m, n, A, lda, S, U, ldu, VT, ldvt);
}
lapack_int gesdd(char j, int m, int n, double *A, int lda, double *S, double *U, int ldu,
                 double *VT, int ldvt) {
  return LAPACKE_dgesdd(LAPACK_COL_MAJOR, j, m, n, A, lda, S, U, ldu, VT, ldvt);
}
lapack_int gesdd(char j, int m, int n, cf *A, int lda, float *S, cf *U, int ldu, cf *VT, int ldvt) {
  return LAPACKE_cgesdd(LAPACK_COL_MAJOR, j, m, n, A, lda, S, U, ldu, VT, ldvt);
}
lapack_int gesdd(char j, int m, int n, cd *A, int lda, double *S, cd *U, int ldu, cd *VT,
                 int ldvt) {
  return LAPACKE_zgesdd(LAPACK_COL_MAJOR, j, m, n, A, lda, S, U, ldu, VT, ldvt);
}
lapack_int gesvd(char ju, char jv, int m, int n, float *A, int lda, float *S, float *U, int ldu,
                 float *VT, int ldvt, float *superb) {
  return LAPACKE_sgesvd(LAPACK_COL_MAJOR, ju, jv, m, n, A, lda, S, U, ldu, VT, ldvt, superb);
}
lapack_int gesvd(char ju, char jv, int m, int n, double *A, int lda, double *S, double *U, int ldu,
                 double *VT, int ldvt, double *superb) {
  return LAPACKE_dgesvd(LAPACK_COL_MAJOR, ju, jv, m, n, A, lda, S, U, ldu, VT, ldvt, superb);
}
lapack_int gesvd(char ju, char jv, int m, int n, cf *A, int lda, float *S, cf *U, int ldu, cf *VT,
                 int ldvt, float *superb) {
  return LAPACKE_cgesvd(LAPACK_COL_MAJOR, ju, jv, m, n, A, lda, S, U, ldu, VT, ldvt, superb);
}
lapack_int gesvd(char ju, char jv, int m, int n, cd *A, int lda, double *S, cd *U, int ldu, cd *VT,
                 int ldvt, double *superb) {
  return LAPACKE_zgesvd(LAPACK_COL_MAJOR, ju, jv, m, n, A, lda, S, U, ldu, VT, ldvt, superb);
}

lapack_int gesvj(char ju, char jv, int m, int n, float *A, int lda, float *S, float *V, int ldv,
                 float *stat) {
  return LAPACKE_sgesvj(LAPACK_COL_MAJOR, 'G', ju, jv, m, n, A, lda, S, 0, V, ldv, stat);
}
lapack_int gesvj(char ju, char jv, int m, int n, double *A, int lda, double *S, double *V, int ldv,
                 double *stat) {
  return LAPACKE_dgesvj(LAPACK_COL_MAJOR, 'G', ju, jv, m, n, A, lda, S, 0, V, ldv, stat);
}
lapack_int gesvj(char ju, char jv, int m, int n, cf *A, int lda, float *S, cf *V, int ldv,
                 float *stat) {
  return LAPACKE_cgesvj(LAPACK_COL_MAJOR, 'G', ju, jv, m, n, A, lda, S, 0, V, ldv, stat);
}
lapack_int gesvj(char ju, char jv, int m, int n, cd *A, int lda, double *S, cd *V, int ldv,
                 double *stat) {
  return LAPACKE_zgesvj(LAPACK_COL_MAJOR, 'G', ju, jv, m, n, A, lda, S, 0, V, ldv, stat);
}

} // namespace

template <class T> int reference_singular_values(int m, int n, const T *A, int lda, double *S) {
  const int k = std::min(m, n);
  if (k <= 0) return 0;
  if (!all_finite(m, n, A, lda)) {
    fill_nan(k, S);
    return kGesvdBadA;
  }
  using D = wide_t<T>;
  std::vector<D> W(static_cast<size_t>(m) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      W[i + static_cast<size_t>(j) * m] = detail::convert_<D>(A[i + static_cast<size_t>(j) * lda]);
  std::vector<double> superb(std::max(1, k - 1));
  D dummy{};
  return gesvd('N', 'N', m, n, W.data(), m, S, &dummy, 1, &dummy, 1, superb.data());
}

template <class T> int reference_hermitian_eigenvalues(int n, const T *H, int ldh, double *w) {
  if (n <= 0) return 0;
  using D = wide_t<T>;
  std::vector<D> W(static_cast<size_t>(n) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      W[i + static_cast<size_t>(j) * n] = detail::convert_<D>(H[i + static_cast<size_t>(j) * ldh]);
  if constexpr (std::is_same_v<D, double>)
    return LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'L', n, W.data(), n, w);
  else
    return LAPACKE_zheev(LAPACK_COL_MAJOR, 'N', 'L', n, W.data(), n, w);
}

template <class T, class R>
int lapack_gesvd(bool vectors, int m, int n, T *A, int lda, R *S, T *U, int ldu, T *VT, int ldvt) {
  static_assert(std::is_same_v<R, real_t<T>>, "S must be T's real type");
  const int k = std::min(m, n);
  if (k <= 0) return 0;
  if (!all_finite(m, n, A, lda)) {
    fill_nan(k, S);
    return kGesvdBadA;
  }
  std::vector<R> superb(std::max(1, k - 1));
  T dummy{};
  const char job = vectors ? 'S' : 'N';
  return gesvd(job, job, m, n, A, lda, S, vectors ? U : &dummy, vectors ? ldu : 1,
               vectors ? VT : &dummy, vectors ? ldvt : 1, superb.data());
}

template <class T, class R>
int lapack_gesdd(bool vectors, int m, int n, T *A, int lda, R *S, T *U, int ldu, T *VT, int ldvt) {
  static_assert(std::is_same_v<R, real_t<T>>, "S must be T's real type");
  const int k = std::min(m, n);
  if (k <= 0) return 0;
  if (!all_finite(m, n, A, lda)) {
    fill_nan(k, S);
    return kGesvdBadA;
  }
  T dummy{};
  return gesdd(vectors ? 'S' : 'N', m, n, A, lda, S, vectors ? U : &dummy, vectors ? ldu : 1,
               vectors ? VT : &dummy, vectors ? ldvt : 1);
}

template <class T, class R>
int lapack_gesvj(bool vectors, int m, int n, T *A, int lda, R *S, T *V, int ldv) {
  static_assert(std::is_same_v<R, real_t<T>>, "S must be T's real type");
  if (m < 0) return -4; // LAPACK's argument numbers (M is 4th, N 5th)
  if (n < 0 || n > m) return -5;
  if (n == 0) return 0;
  if (!all_finite(m, n, A, lda)) {
    fill_nan(n, S);
    return kGesvjBadA;
  }
  T dummy{};
  if (vectors) {
    if (!V || ldv < n) return -11;
    // LAPACKE checks V for NaN when jobv = 'V' although it is output only.
    for (int j = 0; j < n; ++j)
      std::fill(V + static_cast<size_t>(j) * ldv, V + static_cast<size_t>(j) * ldv + n, T(0));
  }
  // stat(1) is read by LAPACKE (it matters for jobu = 'C' only).
  R stat[6] = {1, 0, 0, 0, 0, 0};
  const int info = gesvj(vectors ? 'U' : 'N', vectors ? 'V' : 'N', m, n, A, lda, S,
                         vectors ? V : &dummy, vectors ? ldv : 1, stat);
  // xGESVJ returns SCALE in work(1) (rwork(1) for complex), which LAPACKE
  // copies to stat[0]: the singular values are SCALE * SVA(1:n). SCALE != 1
  // only when the values span (nearly) the whole exponent range.
  if (info >= 0 && stat[0] != R(1))
    for (int i = 0; i < n; ++i) S[i] *= stat[0];
  return info;
}

#define BSVD_INSTANTIATE(T, R)                                                                     \
  template int reference_singular_values<T>(int, int, const T *, int, double *);                   \
  template int reference_hermitian_eigenvalues<T>(int, const T *, int, double *);                  \
  template int lapack_gesvd<T, R>(bool, int, int, T *, int, R *, T *, int, T *, int);              \
  template int lapack_gesdd<T, R>(bool, int, int, T *, int, R *, T *, int, T *, int);              \
  template int lapack_gesvj<T, R>(bool, int, int, T *, int, R *, T *, int);
BSVD_INSTANTIATE(float, float)
BSVD_INSTANTIATE(double, double)
BSVD_INSTANTIATE(std::complex<float>, float)
BSVD_INSTANTIATE(std::complex<double>, double)
#undef BSVD_INSTANTIATE

} // namespace bsvd::testing
