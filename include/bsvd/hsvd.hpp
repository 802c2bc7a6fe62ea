// bsvd C++ helpers around the hyperbolic SVD (bsvd::gehsvj_strided_batched,
// docs/hsvd.md), header-only: the library takes J partitioned,
// J = diag(I_nplus, -I_(n - nplus)); these take a +-1 vector over G's
// columns instead, and assemble the eigenvalues of H = G J G^H from S.
//
//   std::vector<int> perm(n);
//   int nplus = bsvd::hsvd_partition(n, signs, perm.data());   // -1: not +-1
//   bsvd::hsvd_permute_columns(m, n, perm.data(), G, m, Gp, m);  // Gp = G[:, perm]
//   bsvd::gehsvj_strided_batched<double>(bsvd::Job::Vectors, m, n, &nplus, Gp, m, m * n,
//                                        S, n, U, m, m * n, Vp, n, n * n, &info, nullptr, 1);
//   bsvd::hsvd_unpermute_rows(n, n, perm.data(), Vp, n, V, n);  // G = U diag(S) V^H
//   bsvd::hsvd_eigenvalues(m, n, nplus, S, w);                  // w: m values, ascending
#ifndef BSVD_HSVD_HPP
#define BSVD_HSVD_HPP

#include <bsvd/svd.hpp>

#include <algorithm>
#include <cstddef>

namespace bsvd {

// The stable partition of a signature signs[0 .. n) of +1 and -1 entries:
// perm lists the columns with +1 first, then those with -1, each side in
// its original order. Returns nplus, the number of +1 entries; -1 (perm
// untouched) when an entry is neither +1 nor -1 or n < 0.
inline int hsvd_partition(int n, const int *signs, int *perm) {
  if (n < 0) return -1;
  int nplus = 0;
  for (int j = 0; j < n; ++j) {
    if (signs[j] != 1 && signs[j] != -1) return -1;
    nplus += signs[j] == 1;
  }
  int p = 0, q = nplus;
  for (int j = 0; j < n; ++j) perm[signs[j] == 1 ? p++ : q++] = j;
  return nplus;
}

// B = G[:, perm]: column j of B (m x n, column-major, ldb) is column perm[j]
// of G (ldg). The partitioned input of gehsvj_strided_batched.
template <class T>
void hsvd_permute_columns(int m, int n, const int *perm, const T *G, int ldg, T *B, int ldb) {
  for (int j = 0; j < n; ++j)
    std::copy(G + std::ptrdiff_t(perm[j]) * ldg, G + std::ptrdiff_t(perm[j]) * ldg + m,
              B + std::ptrdiff_t(j) * ldb);
}

// The V of the original column order: G[:, perm] = U diag(S) Vp^H gives
// G = U diag(S) V^H with V = P Vp, i.e. row perm[i] of V is row i of Vp
// (n x cols, column-major). V then satisfies V^H diag(signs) V = J.
template <class T>
void hsvd_unpermute_rows(int n, int cols, const int *perm, const T *Vp, int ldvp, T *V, int ldv) {
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < n; ++i)
      V[perm[i] + std::ptrdiff_t(j) * ldv] = Vp[i + std::ptrdiff_t(j) * ldvp];
}

// The m eigenvalues of H = G J G^H (m x m) from the hyperbolic singular
// values S[0 .. n) of G, J = diag(I_nplus, -I_(n - nplus)): +S[j]^2 for
// j < nplus, -S[j]^2 for j >= nplus, and m - n zeros, ascending in w
// (NaN, from a matrix with info = BSVD_INFO_NONFINITE, last).
template <class R> void hsvd_eigenvalues(int m, int n, int nplus, const R *S, R *w) {
  for (int j = 0; j < n; ++j) w[j] = (j < nplus ? S[j] : -S[j]) * S[j];
  std::fill(w + n, w + m, R(0));
  // A strict weak order with NaN: std::sort's plain < is not one then.
  std::sort(w, w + m, [](R a, R b) { return a < b || (b != b && a == a); });
}

} // namespace bsvd

#endif // BSVD_HSVD_HPP
