// The LAPACK path of the cpu backend (BSVD_PATH_CPU_LAPACK): one matrix by
// xGESDD (divide and conquer on the bidiagonal form) through the LAPACKE
// the library links, on the prepared working matrix of solve_one_impl.
// When the library is built without LAPACK (BSVD_WITH_LAPACK undefined),
// lapack_built() is false, the planner never routes a matrix here and
// lapack_gesdd reports failure.
#pragma once

#include "cpu_internal.hpp"

namespace bsvd::detail::cpu {

// Whether this build links LAPACK.
bool lapack_built();

// The scratch of one xGESDD solve of a working mw x nw matrix (mw >= nw):
// W (the copy LAPACK destroys), VT (nw x nw), and LAPACK's own work arrays
// at their optimal sizes (a workspace query, cached per thread and size).
template <class T> struct LapackLayout {
  using R = real_of_t<T>;
  T *W = nullptr, *VT = nullptr, *work = nullptr;
  R *rwork = nullptr; // complex only
  int *iwork = nullptr;
  int lwork = 0;
  void carve(Arena &a, int mw, int nw, bool vectors);
};

template <class T> size_t lapack_layout_bytes(int mw, int nw, bool vectors);

// SVD of L.W = Uw diag(S) VT (mw x nw, ld mw; destroyed): S (nw values,
// descending) into S; with vectors Uw into U (ld ldu) and VT into L.VT
// (ld nw). Returns LAPACK's info: 0 success, > 0 the bidiagonal solver did
// not converge (the caller falls back to the Jacobi solver).
template <class T> int lapack_gesdd(int mw, int nw, bool vectors, const LapackLayout<T> &L,
                                    real_of_t<T> *S, T *U, int ldu);

// OpenBLAS's global thread count (the library's own LAPACK calls and the
// caller's): the previous value, or -1 when the BLAS is not OpenBLAS.
int blas_threads_set(int threads);

} // namespace bsvd::detail::cpu
