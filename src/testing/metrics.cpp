// T1-T4 (see metrics.hpp). All arithmetic in long double (complex data as
// separate long double real and imaginary parts). NaN anywhere in the inputs
// propagates to the affected ratio (NaN or inf), so Ratios::pass() is
// false; no max or comparison here may drop a NaN.
#include "testing/metrics.hpp"

#include "testing/scalar_impl.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

namespace bsvd::testing {

namespace {

using LD = long double;

// max that keeps a NaN from either side.
inline double nanmax(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  return a > b ? a : b;
}
inline LD nanmax_ld(LD a, LD b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<LD>::quiet_NaN();
  return a > b ? a : b;
}

// The kernels read the matrices in their own precision (float / double
// loads widen exactly) and do every operation in long double, with complex
// numbers as separate real and imaginary parts: no complex library calls,
// and NaN / Inf propagate the IEEE way. Partial sums are split in two
// independent chains so the x87 pipeline is not latency-bound.

// |x| of a complex number (NaN in, NaN out, unless the other part is
// infinite: still not below a threshold).
inline LD modulus(LD re, LD im) { return std::hypot(re, im); }

template <class T> inline LD re_ld(const T &x) { return static_cast<LD>(detail::real_(x)); }
template <class T> inline LD im_ld(const T &x) { return static_cast<LD>(detail::imag_(x)); }

// ||A||_1 (max column sum of moduli).
template <class T> LD norm1(int m, int n, const T *A, int lda) {
  LD best = 0;
  for (int j = 0; j < n; ++j) {
    const T *a = A + static_cast<size_t>(j) * lda;
    LD s = 0;
    for (int i = 0; i < m; ++i) {
      if constexpr (detail::is_complex_v<T>)
        s += modulus(re_ld(a[i]), im_ld(a[i]));
      else
        s += std::fabs(re_ld(a[i]));
    }
    best = nanmax_ld(best, s);
  }
  return best;
}

// ||A - U diag(S) V^H||_1. Entry (i, j) of the residual is a_ij minus the
// dot product of row i of U with c_j = diag(S) conj(V(j, :)); U is
// transposed once so that its rows are contiguous.
template <class T, class R> LD residual_norm1(int m, int n, int k, const T *A, int lda, const R *S,
                                              const T *U, int ldu, const T *V, int ldv) {
  constexpr bool cplx = detail::is_complex_v<T>;
  std::vector<T> Ut(static_cast<size_t>(m) * k);
  for (int l = 0; l < k; ++l)
    for (int i = 0; i < m; ++i)
      Ut[l + static_cast<size_t>(i) * k] = U[i + static_cast<size_t>(l) * ldu];
  std::vector<LD> cr(k), ci(cplx ? k : 0);
  LD best = 0;
  for (int j = 0; j < n; ++j) {
    for (int l = 0; l < k; ++l) {
      const LD s = static_cast<LD>(S[l]);
      const T &v = V[j + static_cast<size_t>(l) * ldv];
      cr[l] = s * re_ld(v);
      if constexpr (cplx) ci[l] = -s * im_ld(v);
    }
    const T *a = A + static_cast<size_t>(j) * lda;
    LD sum = 0;
    for (int i = 0; i < m; ++i) {
      const T *u = Ut.data() + static_cast<size_t>(i) * k;
      LD r0 = 0, r1 = 0, i0 = 0;
      int l = 0;
      if constexpr (cplx) {
        // one chain per part: with four, the x87 stack (8 registers) spills
        for (; l < k; ++l) {
          const LD ur = re_ld(u[l]), ui = im_ld(u[l]);
          r0 += ur * cr[l] - ui * ci[l];
          i0 += ur * ci[l] + ui * cr[l];
        }
        sum += modulus(re_ld(a[i]) - r0, im_ld(a[i]) - i0);
      } else {
        for (; l + 1 < k; l += 2) {
          r0 += re_ld(u[l]) * cr[l];
          r1 += re_ld(u[l + 1]) * cr[l + 1];
        }
        for (; l < k; ++l) r0 += re_ld(u[l]) * cr[l];
        sum += std::fabs(re_ld(a[i]) - (r0 + r1));
      }
    }
    best = nanmax_ld(best, sum);
  }
  return best;
}

// ||I - Q^H Q||_1 for Q m x k (Q^H Q is Hermitian: the upper triangle is
// computed and mirrored).
template <class T> LD orthogonality_norm1(int m, int k, const T *Q, int ldq) {
  constexpr bool cplx = detail::is_complex_v<T>;
  std::vector<LD> Gr(static_cast<size_t>(k) * k), Gi(cplx ? static_cast<size_t>(k) * k : 0);
  for (int a = 0; a < k; ++a) {
    const T *x = Q + static_cast<size_t>(a) * ldq;
    for (int b = a; b < k; ++b) {
      const T *y = Q + static_cast<size_t>(b) * ldq;
      LD s0 = 0, s1 = 0, t0 = 0;
      int i = 0;
      if constexpr (cplx) { // conj(x) y; one chain per part (see above)
        for (; i < m; ++i) {
          const LD xr = re_ld(x[i]), xi = im_ld(x[i]), yr = re_ld(y[i]), yi = im_ld(y[i]);
          s0 += xr * yr + xi * yi;
          t0 += xr * yi - xi * yr;
        }
      } else {
        for (; i + 1 < m; i += 2) {
          s0 += re_ld(x[i]) * re_ld(y[i]);
          s1 += re_ld(x[i + 1]) * re_ld(y[i + 1]);
        }
        for (; i < m; ++i) s0 += re_ld(x[i]) * re_ld(y[i]);
      }
      Gr[a + static_cast<size_t>(b) * k] = Gr[b + static_cast<size_t>(a) * k] = s0 + s1;
      if constexpr (cplx) {
        Gi[a + static_cast<size_t>(b) * k] = t0;
        Gi[b + static_cast<size_t>(a) * k] = -t0;
      }
    }
  }
  LD best = 0;
  for (int b = 0; b < k; ++b) {
    LD s = 0;
    for (int a = 0; a < k; ++a) {
      const size_t p = a + static_cast<size_t>(b) * k;
      const LD dr = (a == b ? LD(1) : LD(0)) - Gr[p];
      if constexpr (cplx)
        s += modulus(dr, Gi[p]);
      else
        s += std::fabs(dr);
    }
    best = nanmax_ld(best, s);
  }
  return best;
}

} // namespace

double Ratios::worst() const { return nanmax(nanmax(nanmax(t1, t2u), nanmax(t2v, t3)), t4); }

bool Ratios::pass(double k) const {
  // Written as "all below k" so that a NaN ratio fails.
  return t1 < k && t2u < k && t2v < k && t3 < k && t4 < k;
}

void Ratios::max_with(const Ratios &o) {
  t1 = nanmax(t1, o.t1);
  t2u = nanmax(t2u, o.t2u);
  t2v = nanmax(t2v, o.t2v);
  t3 = nanmax(t3, o.t3);
  t4 = nanmax(t4, o.t4);
}

template <> double unit_roundoff<float>() { return 0x1.0p-24; }
template <> double unit_roundoff<double>() { return 0x1.0p-53; }
template <> double unit_roundoff<std::complex<float>>() { return 0x1.0p-24; }
template <> double unit_roundoff<std::complex<double>>() { return 0x1.0p-53; }

template <class T, class R> Ratios accuracy(int m, int n, const T *A, int lda, const R *S,
                                            const T *U, int ldu, const T *V, int ldv,
                                            const double *S_ref) {
  Ratios r;
  const int k = std::min(m, n);
  if (k <= 0) return r;
  const LD u = unit_roundoff<T>();

  if (U && V) {
    const LD res = residual_norm1(m, n, k, A, lda, S, U, ldu, V, ldv);
    const LD anorm = norm1(m, n, A, lda);
    LD t1;
    if (anorm == 0)
      t1 = res == 0 ? LD(0) : res / u; // zero A: the residual itself
    else
      t1 = res / (static_cast<LD>(n) * anorm) / u;
    r.t1 = static_cast<double>(t1);
  }
  if (U) r.t2u = static_cast<double>(orthogonality_norm1(m, k, U, ldu) / m / u);
  if (V) r.t2v = static_cast<double>(orthogonality_norm1(n, k, V, ldv) / n / u);

  if (S_ref) {
    LD ss = 0;
    for (int i = 0; i < k; ++i) {
      const LD d = static_cast<LD>(S[i]) - static_cast<LD>(S_ref[i]);
      ss += d * d;
    }
    const LD tiny = std::numeric_limits<double>::min();
    const LD ref1 = static_cast<LD>(S_ref[0]);
    const LD scale = std::isnan(ref1) ? ref1 : std::max(ref1, tiny);
    r.t3 = static_cast<double>(std::sqrt(ss) / (static_cast<LD>(k) * scale) / u);
  }

  for (int i = 0; i < k; ++i) {
    const bool ok = S[i] >= R(0) && (i == 0 || S[i - 1] >= S[i]); // NaN fails
    if (!ok) {
      r.t4 = std::numeric_limits<double>::infinity();
      break;
    }
  }
  return r;
}

template Ratios accuracy<float, float>(int, int, const float *, int, const float *, const float *,
                                       int, const float *, int, const double *);
template Ratios accuracy<double, double>(int, int, const double *, int, const double *,
                                         const double *, int, const double *, int, const double *);
template Ratios accuracy<std::complex<float>, float>(int, int, const std::complex<float> *, int,
                                                     const float *, const std::complex<float> *,
                                                     int, const std::complex<float> *, int,
                                                     const double *);
template Ratios accuracy<std::complex<double>, double>(int, int, const std::complex<double> *, int,
                                                       const double *, const std::complex<double> *,
                                                       int, const std::complex<double> *, int,
                                                       const double *);

} // namespace bsvd::testing
