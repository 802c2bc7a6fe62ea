// LAPACK (LAPACKE over OpenBLAS): the reference singular values for T3 and
// the CPU baselines of `bsvd bench`.
#pragma once

namespace bsvd::testing {

// Singular values of A (m x n) in double precision, descending: single and
// single-complex input is promoted, then xGESVD. Returns LAPACK's info.
template <class T> int reference_singular_values(int m, int n, const T *A, int lda, double *S);

// Eigenvalues of the Hermitian n x n H (lower triangle read) in double
// precision, ascending: xSYEV / xHEEV on a promoted copy. The independent
// reference of the hyperbolic SVD's tests (the eigenvalues of G J G^H).
// Returns LAPACK's info.
template <class T> int reference_hermitian_eigenvalues(int n, const T *H, int ldh, double *w);

// Working-precision LAPACK drivers on a copy of A (the baselines):
// gesvd with economy U and V^H (or values only), and gesvj (one-sided
// Jacobi; m >= n required by LAPACK, the caller transposes wide input).
// S has min(m, n) entries of T's real type. Returns LAPACK's info.
// Both overwrite A (pass the copy): gesvj returns U (m x n) in A; its S is
// already multiplied by LAPACK's SCALE (work(1) / rwork(1)). With vectors =
// false, U, VT and V are not referenced (may be null).
// Non-finite input (any of the three functions): LAPACK is not called, S is
// filled with NaN and the result is LAPACKE's code for a bad A (-6 for
// gesvd, -7 for gesvj).
template <class T, class R>
int lapack_gesvd(bool vectors, int m, int n, T *A, int lda, R *S, T *U, int ldu, T *VT, int ldvt);
// The same by gesdd (divide and conquer; what numpy.linalg.svd calls).
template <class T, class R>
int lapack_gesdd(bool vectors, int m, int n, T *A, int lda, R *S, T *U, int ldu, T *VT, int ldvt);
template <class T, class R>
int lapack_gesvj(bool vectors, int m, int n, T *A, int lda, R *S, T *V, int ldv);

} // namespace bsvd::testing
