// The Gram route's test (plan::GramTuning, decisions/0022): whether the
// single-precision eigenvectors V0 of G = W^H W are predicted to shorten
// the one-sided Jacobi iteration on W enough to pay for the eigensolver.
// Three numbers of G, all invariant under scaling W's columns' lengths
// together:
//
//   cos   the RMS cosine between W's columns, sqrt(|B|_F^2 / pairs), with
//         B = D^-1/2 G D^-1/2 - I (D = diag(G)): below min_cos (about 100
//         single-precision units) the columns are orthogonal to what
//         single precision resolves, and the plain iteration ends in a
//         sweep or two;
//   srank the stable rank |B|_F^2 / |B|_2^2 of those cosines: about 1
//         where W is an orthogonal matrix changed in one direction (the
//         cluster1 family: the plain iteration ends in 3 sweeps), n/5-n/2
//         for random matrices and for orthogonal ones with random noise (9
//         sweeps at any noise level, against 3-5 preconditioned), 2.5-7.4
//         for graded spectra. |B|_2 is estimated by three steps of the power
//         iteration from a fixed +-1 vector (a lower bound: srank is
//         overestimated, never under);
//   rank  the effective rank tr(G)^2 / |G|_F^2 = (sum s_i^2)^2 / sum s_i^4:
//         about 1 where one direction holds the matrix and single
//         precision resolves nothing else (the cluster0 family), 5-12 for
//         graded spectra, n/2 for random ones.
//
// The GPU kernel (gram_test_kernel, src/cuda/gram/kernels.cuh) reduces the
// sums per matrix and calls gram_test_pays; gram_test_sums is its CPU twin
// (tests compare the two). Both test the matrices gram_sample picks.
#pragma once

#include "batch.hpp" // BSVD_HD

#include <cmath>
#include <complex>
#include <type_traits>
#include <vector>

namespace bsvd::detail {

// The matrices of one shape the test looks at: positions i * step, i <
// count, of the shape's n matrices (GramTuning::sample at most, spread
// evenly from the first); each stands for n / count of them.
struct GramSample {
  int count, step;
};
inline GramSample gram_sample(int n, int sample) {
  const int k = n < 1 ? 0 : (sample < 1 ? 1 : (sample < n ? sample : n));
  return {k, k > 0 ? n / k : 1};
}

struct GramTestSums {
  double cos2 = 0; // |B|_F^2: sum over i != j, g_ii g_jj > 0, of |g_ij|^2 / (g_ii g_jj)
  double pairs = 0; // the number of those (i, j)
  double trace = 0; // sum of g_ii
  double frob2 = 0; // sum of |g_ij|^2 over all (i, j)
  double norm2 = 0; // the estimate of |B|_2^2
};

// Steps of the power iteration on B, and its start: x_i = +-1 / sqrt(n)
// by a fixed hash of i (the kernel and the twin alike).
constexpr int kGramPowerSteps = 3;
BSVD_HD inline double gram_probe(int i, int n) {
  const unsigned h = (unsigned(i) * 2654435761u) >> 13;
  return ((h & 1u) ? 1.0 : -1.0) / sqrt(double(n));
}

// The test on the sums of one matrix (min_cos, min_srank, min_rank: the
// GramTuning limits). A zero or non-finite G predicts no gain.
BSVD_HD inline bool gram_test_pays(const GramTestSums &s, double min_cos, double min_srank,
                                   double min_rank) {
  if (!(s.trace > 0) || !(s.frob2 > 0) || !(s.pairs > 0) || !(s.norm2 > 0)) return false;
  const double cos = sqrt(s.cos2 / s.pairs);
  const double srank = s.cos2 / s.norm2;
  const double rank = s.trace * s.trace / s.frob2;
  return cos >= min_cos && srank >= min_srank && rank >= min_rank; // false for NaN
}

inline double gram_abs2(float x) { return double(x) * double(x); }
inline double gram_abs2(std::complex<float> x) {
  return double(x.real()) * x.real() + double(x.imag()) * x.imag();
}
inline double gram_diag(float x) { return x > 0 ? double(x) : 0.0; }
inline double gram_diag(std::complex<float> x) { return gram_diag(x.real()); }
inline double gram_conj(double x) { return x; }
inline std::complex<double> gram_conj(std::complex<double> x) { return std::conj(x); }

// The sums of an n x n Hermitian G (column-major, leading dimension n;
// both triangles read, as the kernel does), with the power iteration in
// double precision.
template <class L> GramTestSums gram_test_sums(const L *G, int n) {
  using V = std::conditional_t<std::is_same_v<L, float>, double, std::complex<double>>;
  GramTestSums s;
  std::vector<double> dinv(static_cast<size_t>(n));
  for (int j = 0; j < n; ++j) {
    const double gjj = gram_diag(G[j + size_t(j) * n]);
    dinv[size_t(j)] = gjj > 0 ? 1 / std::sqrt(gjj) : 0;
  }
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
  // (B x)_i = dinv_i sum_{j != i} g_ij dinv_j x_j, g_ij = conj(G[j + i n])
  std::vector<V> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) x[size_t(i)] = V(gram_probe(i, n));
  for (int step = 0; step < kGramPowerSteps; ++step) {
    double ny = 0;
    for (int i = 0; i < n; ++i) {
      V acc = 0;
      for (int j = 0; j < n; ++j)
        if (j != i) acc += gram_conj(V(G[j + size_t(i) * n])) * (dinv[size_t(j)] * x[size_t(j)]);
      y[size_t(i)] = dinv[size_t(i)] * acc;
      ny += std::norm(y[size_t(i)]);
    }
    s.norm2 = ny; // |B x|^2 with |x| = 1
    if (!(ny > 0)) break;
    const double r = 1 / std::sqrt(ny);
    for (int i = 0; i < n; ++i) x[size_t(i)] = y[size_t(i)] * r;
  }
  return s;
}

} // namespace bsvd::detail
