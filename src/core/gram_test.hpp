// The Gram route's test (plan::GramTuning, decisions/0022): whether the
// single-precision eigenvectors V0 of G = W^H W are predicted to shorten
// the one-sided Jacobi iteration on W enough to pay for the eigensolver.
// Two numbers of G, both invariant under scaling W:
//
//   cos  the RMS cosine between W's columns, sqrt(sum_{i != j} |g_ij|^2 /
//        (g_ii g_jj) / pairs), times sqrt(mw): about 1 for a random
//        matrix at any size, far below 1 where the columns are already
//        nearly orthogonal (the plain iteration converges quadratically
//        from its first sweep: the cluster1 family, 0.06-0.13);
//   rank the effective rank tr(G)^2 / |G|_F^2 = (sum s_i^2)^2 / sum s_i^4:
//        about 1 where one direction holds the matrix and single precision
//        resolves nothing else (the cluster0 family), 5-12 for graded
//        spectra, n/2 for random ones.
//
// The GPU kernel (gram_test_kernel, src/cuda/gram/kernels.cuh) reduces the
// sums per matrix and calls gram_test_pays; gram_test_sums is its CPU twin
// (tests compare the two).
#pragma once

#include "batch.hpp" // BSVD_HD

#include <cmath>
#include <complex>

namespace bsvd::detail {

struct GramTestSums {
  double cos2 = 0; // sum over i != j, g_ii g_jj > 0, of |g_ij|^2 / (g_ii g_jj)
  double pairs = 0; // the number of those (i, j)
  double trace = 0; // sum of g_ii
  double frob2 = 0; // sum of |g_ij|^2 over all (i, j)
};

// The test on the sums of one matrix of mw rows (min_cos, min_rank: the
// GramTuning limits). A zero or non-finite G predicts no gain.
BSVD_HD inline bool gram_test_pays(const GramTestSums &s, int mw, double min_cos, double min_rank) {
  if (!(s.trace > 0) || !(s.frob2 > 0) || !(s.pairs > 0)) return false;
  const double cos = sqrt(s.cos2 / s.pairs * double(mw));
  const double rank = s.trace * s.trace / s.frob2;
  return cos >= min_cos && rank >= min_rank; // false for NaN
}

inline double gram_abs2(float x) { return double(x) * double(x); }
inline double gram_abs2(std::complex<float> x) {
  return double(x.real()) * x.real() + double(x.imag()) * x.imag();
}
inline double gram_diag(float x) { return x > 0 ? double(x) : 0.0; }
inline double gram_diag(std::complex<float> x) { return gram_diag(x.real()); }

// The sums of an n x n Hermitian G (column-major, leading dimension n;
// both triangles read, as the kernel does).
template <class L> GramTestSums gram_test_sums(const L *G, int n) {
  GramTestSums s;
  for (int j = 0; j < n; ++j) {
    const double gjj = gram_diag(G[j + size_t(j) * n]);
    s.trace += gjj;
    for (int i = 0; i < n; ++i) {
      const double a2 = gram_abs2(G[i + size_t(j) * n]);
      s.frob2 += a2;
      const double gii = gram_diag(G[i + size_t(i) * n]);
      if (i != j && gii > 0 && gjj > 0) {
        s.cos2 += a2 / (gii * gjj);
        s.pairs += 1;
      }
    }
  }
  return s;
}

} // namespace bsvd::detail
