// The accuracy checks T1-T4 (docs/accuracy.md, MAGMA-SVD Sec. 5.5),
// reported as multiples of the unit roundoff u of T's precision:
//   t1  = ||A - U S V^H||_1 / (n ||A||_1) / u
//   t2u = ||I - U^H U||_1 / m / u        t2v = ||I - V^H V||_1 / n / u
//   t3  = ||S - S_ref||_F / (min(m,n) * max(S_ref_1, tiny)) / u
//         (MAGMA-SVD's e4 divided by sigma_1 so it is scale-free; the
//         families have sigma_1 = 1 where it is the paper's measure)
//   t4  = 0 if S is sorted descending and non-negative, else infinity.
// A matrix passes when every ratio is below k = 30. Sums are accumulated in
// long double so the check itself adds no error of the order of u.
#pragma once

#include <limits>

namespace bsvd::testing {

constexpr double kThreshold = 30.0;

struct Ratios {
  double t1 = 0, t2u = 0, t2v = 0, t3 = 0, t4 = 0;
  double worst() const;
  bool pass(double k = kThreshold) const;
  void max_with(const Ratios &o); // element-wise maximum (NaN propagates)
};

template <class T> double unit_roundoff(); // 2^-24 or 2^-53

// U, V may be null (values-only: t1 and t2 are reported as 0). S_ref may be
// null (t3 reported as 0). k = min(m, n); U is m x k, V is n x k.
template <class T, class R> Ratios accuracy(int m, int n, const T *A, int lda, const R *S,
                                            const T *U, int ldu, const T *V, int ldv,
                                            const double *S_ref);

} // namespace bsvd::testing
