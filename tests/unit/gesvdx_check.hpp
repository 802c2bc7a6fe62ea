// The check of selected singular triplets (bsvd_<p>gesvdx_*), shared by
// the cpu backend's tests (test_gesvdx.cpp) and the GPU's
// (gpu/test_gpu_gesvdx.cpp). For a matrix A (m x n) with known singular
// values sigma (testing/generate.hpp's families) and the triplets il ...
// il + ns - 1 found (S, U m x ns, V n x ns), with p = max(m, n), u the
// unit roundoff and ||A|| = sigma_1:
//   val  = max_j |S_j - sigma_{il+j}| / (||A|| p u)
//   res  = max_j ||A v_j - S_j u_j|| / (||A|| p u)
//   orth = max(|U^H U - I|_max, |V^H V - I|_max) / (p u)
// all below 30, the library's bound (ALGORITHMS §1).
#pragma once

#include "blas_api_helpers.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <ostream>
#include <vector>

namespace gesvdx_check {

using blas_test::R_t;

struct Ratios {
  double val = 0, res = 0, orth = 0;
  void max_with(const Ratios &o) {
    val = std::max(val, o.val), res = std::max(res, o.res), orth = std::max(orth, o.orth);
  }
  bool pass(double k = 30) const { return val < k && res < k && orth < k; }
};
inline std::ostream &operator<<(std::ostream &o, const Ratios &r) {
  return o << "val " << r.val << " res " << r.res << " orth " << r.orth;
}

template <class X> std::complex<long double> wide(X x) { return std::complex<long double>(x); }
template <class R> std::complex<long double> wide(std::complex<R> x) {
  return {(long double)x.real(), (long double)x.imag()};
}

// One matrix: A (lda), its prescribed values sigma (descending), the
// triplets of indices il ... il + ns - 1 (U, V null: values only).
template <class T> Ratios check(int m, int n, const T *A, int lda, const std::vector<double> &sigma,
                                int il, int ns, const R_t<T> *S, const T *U, int ldu, const T *V,
                                int ldv) {
  const double u = blas_test::unit_roundoff<T>();
  const double p = std::max(m, n), nrm = sigma.empty() ? 1 : std::max(sigma[0], 1e-300);
  Ratios r;
  for (int j = 0; j < ns; ++j)
    r.val = std::max(r.val, std::abs(double(S[j]) - sigma[size_t(il + j)]) / (nrm * p * u));
  if (!U) return r;
  for (int j = 0; j < ns; ++j) {
    long double s2 = 0;
    for (int i = 0; i < m; ++i) {
      std::complex<long double> av = 0;
      for (int c = 0; c < n; ++c) av += wide(A[i + size_t(c) * lda]) * wide(V[c + size_t(j) * ldv]);
      av -= (long double)S[j] * wide(U[i + size_t(j) * ldu]);
      s2 += std::norm(av);
    }
    r.res = std::max(r.res, double(std::sqrt(s2)) / (nrm * p * u));
  }
  auto orth = [&](int rows, const T *X, int ldx) {
    double worst = 0;
    for (int a = 0; a < ns; ++a)
      for (int b = 0; b < ns; ++b) {
        std::complex<long double> g = 0;
        for (int i = 0; i < rows; ++i)
          g += std::conj(wide(X[i + size_t(a) * ldx])) * wide(X[i + size_t(b) * ldx]);
        if (a == b) g -= 1;
        worst = std::max(worst, double(std::abs(g)));
      }
    return worst / (p * u);
  };
  r.orth = std::max(orth(m, U, ldu), orth(n, V, ldv));
  return r;
}

} // namespace gesvdx_check
