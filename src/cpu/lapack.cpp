// xGESDD for the cpu backend's LAPACK path (lapack.hpp).
#include "lapack.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#if defined(BSVD_WITH_LAPACK)
#include <lapacke.h>
#endif

// OpenBLAS's thread control, when the linked BLAS is OpenBLAS; weak, so
// that a reference BLAS (no such symbols) links too and the calls are
// skipped.
extern "C" {
__attribute__((weak)) void openblas_set_num_threads(int);
__attribute__((weak)) int openblas_get_num_threads(void);
}

namespace bsvd::detail::cpu {

namespace {

#if defined(BSVD_WITH_LAPACK)
using cf = lapack_complex_float;
using cd = lapack_complex_double;

// One entry point per precision, column-major, the caller's work arrays
// (LAPACKE's _work form allocates nothing and checks nothing).
int gesdd(char jobz, int m, int n, float *a, int lda, float *s, float *u, int ldu, float *vt,
          int ldvt, float *work, int lwork, float *, int *iwork) {
  return LAPACKE_sgesdd_work(LAPACK_COL_MAJOR, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork,
                             iwork);
}
int gesdd(char jobz, int m, int n, double *a, int lda, double *s, double *u, int ldu, double *vt,
          int ldvt, double *work, int lwork, double *, int *iwork) {
  return LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork,
                             iwork);
}
int gesdd(char jobz, int m, int n, std::complex<float> *a, int lda, float *s,
          std::complex<float> *u, int ldu, std::complex<float> *vt, int ldvt,
          std::complex<float> *work, int lwork, float *rwork, int *iwork) {
  return LAPACKE_cgesdd_work(LAPACK_COL_MAJOR, jobz, m, n, reinterpret_cast<cf *>(a), lda, s,
                             reinterpret_cast<cf *>(u), ldu, reinterpret_cast<cf *>(vt), ldvt,
                             reinterpret_cast<cf *>(work), lwork, rwork, iwork);
}
int gesdd(char jobz, int m, int n, std::complex<double> *a, int lda, double *s,
          std::complex<double> *u, int ldu, std::complex<double> *vt, int ldvt,
          std::complex<double> *work, int lwork, double *rwork, int *iwork) {
  return LAPACKE_zgesdd_work(LAPACK_COL_MAJOR, jobz, m, n, reinterpret_cast<cd *>(a), lda, s,
                             reinterpret_cast<cd *>(u), ldu, reinterpret_cast<cd *>(vt), ldvt,
                             reinterpret_cast<cd *>(work), lwork, rwork, iwork);
}
#endif

// LAPACK's optimal lwork for xGESDD of mw x nw, asked once per thread and
// size (the map is cleared when a variable-size batch fills it).
template <class T> int optimal_lwork(int mw, int nw, bool vectors) {
#if defined(BSVD_WITH_LAPACK)
  thread_local std::map<std::tuple<int, int, bool>, int> cache;
  const auto key = std::make_tuple(mw, nw, vectors);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  if (cache.size() > 256) cache.clear();
  using R = real_of_t<T>;
  T q = T(0);
  R s = 0, rq = 0;
  int iq = 0;
  T dummy = T(0);
  const int info =
      gesdd(vectors ? 'S' : 'N', mw, nw, &dummy, mw, &s, &dummy, mw, &dummy, nw, &q, -1, &rq, &iq);
  // The query's answer, never below LAPACK's documented minimum (some
  // versions round the real value down).
  const int mn = nw, mx = mw;
  const int minimum = is_cplx_v<T>
                          ? (vectors ? mn * mn + 2 * mn + mx : 2 * mn + mx)
                          : (vectors ? 4 * mn * mn + 7 * mn + mx : 3 * mn + std::max(mx, 7 * mn));
  const int lw = std::max(info == 0 ? int(std::real(q)) + 1 : 0, minimum);
  cache.emplace(key, lw);
  return lw;
#else
  (void)mw;
  (void)nw;
  (void)vectors;
  return 1;
#endif
}

// Real workspace of the complex drivers (xGESDD's LRWORK, the larger form
// of the LAPACK versions in use).
template <class T> size_t rwork_elems(int mw, int nw, bool vectors) {
  if constexpr (!is_cplx_v<T>) {
    return 0;
  } else {
    const size_t mn = size_t(nw), mx = size_t(mw);
    return vectors ? std::max(5 * mn * mn + 5 * mn, 2 * mx * mn + 2 * mn * mn + mn) : 7 * mn;
  }
}

} // namespace

bool lapack_built() {
#if defined(BSVD_WITH_LAPACK)
  return true;
#else
  return false;
#endif
}

template <class T> void LapackLayout<T>::carve(Arena &a, int mw, int nw, bool vectors) {
  lwork = optimal_lwork<T>(mw, nw, vectors);
  W = a.take<T>(size_t(mw) * nw);
  if (vectors) VT = a.take<T>(size_t(nw) * nw);
  work = a.take<T>(size_t(lwork));
  if (is_cplx_v<T>) rwork = a.take<R>(rwork_elems<T>(mw, nw, vectors));
  iwork = a.take<int>(8 * size_t(nw));
}

template <class T> size_t lapack_layout_bytes(int mw, int nw, bool vectors) {
  Arena dry;
  LapackLayout<T> L;
  L.carve(dry, mw, nw, vectors);
  return dry.used();
}

template <class T> int lapack_gesdd(int mw, int nw, bool vectors, const LapackLayout<T> &L,
                                    real_of_t<T> *S, T *U, int ldu) {
#if defined(BSVD_WITH_LAPACK)
  // jobz 'N': U and VT are not referenced; L.W stands in for them.
  return gesdd(vectors ? 'S' : 'N', mw, nw, L.W, mw, S, vectors ? U : L.W, vectors ? ldu : mw,
               vectors ? L.VT : L.W, nw, L.work, L.lwork, L.rwork, L.iwork);
#else
  (void)mw, (void)nw, (void)vectors, (void)L, (void)S, (void)U, (void)ldu;
  return 1;
#endif
}

int blas_threads_set(int threads) {
  if (!openblas_set_num_threads || !openblas_get_num_threads) return -1;
  const int old = openblas_get_num_threads();
  if (old != threads) openblas_set_num_threads(threads);
  return old;
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template struct LapackLayout<T>;                                                                 \
  template size_t lapack_layout_bytes<T>(int, int, bool);                                          \
  template int lapack_gesdd<T>(int, int, bool, const LapackLayout<T> &, real_of_t<T> *, T *, int);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail::cpu
