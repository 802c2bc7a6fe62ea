// bsvd::device::svd: the SVD of one small matrix, called per thread from a
// user's CUDA kernel (or from host code: the same source is its own CPU
// twin). Header-only; compiles with nvcc and with a plain C++17 compiler.
//
//   #include <bsvd/device/svd.cuh>
//   // in a kernel, one thread per matrix:
//   int info = bsvd::device::svd<double, 3, 3>(m, n, A, lda, S, U, ldu, V, ldv);
//
// A = U diag(S) V^H, economy form: U is m x k, S has k entries sorted
// descending and >= 0, V is n x k, k = min(m, n); m <= MaxM and n <= MaxN
// are run-time sizes. Matrices are column-major with leading dimensions, or
// any strided layout through svd_strided (row-major: row stride ld, column
// stride 1). U or V may be null (not computed). T is float, double,
// std::complex<float|double> or bsvd::device::complex<float|double>
// (layout-compatible with std::complex, cuda::std::complex and
// cuComplex/cuDoubleComplex: pass such pointers reinterpret_cast).
//
// Method (docs/design/tiny.md): the matrix (or A^H when m < n) is scaled by
// a power of two so that its largest entry lies in [1, 2) -- exact, and the
// squared column norms can neither overflow nor lose the small columns to
// underflow -- then one-sided Jacobi (Hestenes) with cyclic pair order runs
// on columns held in a MaxM x MaxN register array (every loop over rows and
// columns has compile-time bounds and is unrolled, so nothing is indexed at
// run time). The rotation is the library's (src/core/rotation.hpp:
// Rutishauser's formulas, cos_2, the big-zeta shortcuts, the underflow
// noise floor), so the accuracy contract (T1-T4) is the library's. A 2 x 2
// matrix converges in one rotation plus one checking sweep. Columns whose
// norm is below u sigma_1 are numerically null and their U columns are
// completed by Gram-Schmidt on the unit vector with the largest residual.
//
// Returns the info code: 0 converged, 1 not converged within max_sweeps
// (output written, not at converged accuracy), -1 (BSVD_INFO_NONFINITE) NaN or Inf
// in A (S, U, V set to NaN), -2 m > MaxM or n > MaxN (nothing written).
#pragma once

#include "rotation.cuh"
#include "threshold.cuh"

#include <complex>
#include <float.h>
#include <math.h>

namespace bsvd::device {

constexpr int kInfoConverged = 0;
constexpr int kInfoNotConverged = 1;
constexpr int kInfoNonFinite = -1; // BSVD_INFO_NONFINITE
constexpr int kInfoTooLarge = -2; // m > MaxM or n > MaxN: nothing written

template <class R> struct complex { R re, im; };

struct options {
  double tol = 0; // rotation threshold; <= 0: sqrt(max(rows, 16)) u (threshold.cuh)
  int max_sweeps = 0; // <= 0: 80 (as the library)
};

namespace detail {

template <class T> struct traits;
template <> struct traits<float> {
  using R = float;
  using W = float;
};
template <> struct traits<double> {
  using R = double;
  using W = double;
};
template <class R_> struct traits<complex<R_>> {
  using R = R_;
  using W = complex<R_>;
};
template <class R_> struct traits<std::complex<R_>> {
  using R = R_;
  using W = complex<R_>;
};

// ---- real arithmetic, overloaded for float and double ------------------
// (rfma, rabs: rotation.cuh)
BSVD_DEVICE_HD float rhypot(float x, float y) { return hypotf(x, y); }
BSVD_DEVICE_HD double rhypot(double x, double y) { return hypot(x, y); }
BSVD_DEVICE_HD int rilogb(float x) { return ilogbf(x); }
BSVD_DEVICE_HD int rilogb(double x) { return ilogb(x); }
BSVD_DEVICE_HD float rldexp(float x, int e) { return ldexpf(x, e); }
BSVD_DEVICE_HD double rldexp(double x, int e) { return ldexp(x, e); }
template <class R> BSVD_DEVICE_HD R maxfin();
template <> BSVD_DEVICE_HD float maxfin<float>() { return FLT_MAX; }
template <> BSVD_DEVICE_HD double maxfin<double>() { return DBL_MAX; }
template <class R> BSVD_DEVICE_HD R minnorm();
template <> BSVD_DEVICE_HD float minnorm<float>() { return 0x1p-126f; }
template <> BSVD_DEVICE_HD double minnorm<double>() { return 0x1p-1022; }
// Where |gamma| of a complex pair lies below min_normal / u its phase is
// recomputed from a rescaled gamma (rotation.hpp unit_phase).
template <class R> BSVD_DEVICE_HD R phase_low();
template <> BSVD_DEVICE_HD float phase_low<float>() { return 0x1p-102f; }
template <> BSVD_DEVICE_HD double phase_low<double>() { return 0x1p-969; }
// Below this |gamma| is rounding noise of subnormal products
// (rotation.hpp above_underflow_noise with rows <= 2^15).
template <class R> BSVD_DEVICE_HD R gamma_floor() {
  return R(4) * R(1 << 15) * minnorm<R>() * u_<R>();
}

// ---- the working scalar: real, or the complex pair ----------------------
template <class R> BSVD_DEVICE_HD R conj_(R x) { return x; }
template <class R> BSVD_DEVICE_HD complex<R> conj_(complex<R> x) { return {x.re, -x.im}; }
template <class R> BSVD_DEVICE_HD R abs2(R x) { return x * x; }
template <class R> BSVD_DEVICE_HD R abs2(complex<R> x) { return rfma(x.re, x.re, x.im * x.im); }
template <class R> BSVD_DEVICE_HD R amax(R x) { return rabs(x); }
template <class R> BSVD_DEVICE_HD R amax(complex<R> x) {
  const R a = rabs(x.re), b = rabs(x.im);
  return a > b ? a : b;
}
template <class R> BSVD_DEVICE_HD bool finite(R x) { return rabs(x) <= maxfin<R>(); }
template <class R> BSVD_DEVICE_HD bool finite(complex<R> x) { return finite(x.re) && finite(x.im); }
template <class R> BSVD_DEVICE_HD R scale(R x, R f) { return x * f; }
template <class R> BSVD_DEVICE_HD complex<R> scale(complex<R> x, R f) {
  return {x.re * f, x.im * f};
}
// acc += conj(x) y
template <class R> BSVD_DEVICE_HD void dot_acc(R &acc, R x, R y) { acc = rfma(x, y, acc); }
template <class R> BSVD_DEVICE_HD void dot_acc(complex<R> &acc, complex<R> x, complex<R> y) {
  acc.re = rfma(x.re, y.re, acc.re);
  acc.re = rfma(x.im, y.im, acc.re);
  acc.im = rfma(x.re, y.im, acc.im);
  acc.im = rfma(-x.im, y.re, acc.im);
}
// y -= c x
template <class R> BSVD_DEVICE_HD void axpy_neg(R c, R x, R &y) { y = rfma(-c, x, y); }
template <class R> BSVD_DEVICE_HD void axpy_neg(complex<R> c, complex<R> x, complex<R> &y) {
  y.re = rfma(-c.re, x.re, y.re);
  y.re = rfma(c.im, x.im, y.re);
  y.im = rfma(-c.re, x.im, y.im);
  y.im = rfma(-c.im, x.re, y.im);
}
template <class R> BSVD_DEVICE_HD R absg(R g) { return rabs(g); }
template <class R> BSVD_DEVICE_HD R absg(complex<R> g) { return rhypot(g.re, g.im); }
// te = t conj(g / |g|), g != 0 (the phase rescaled near underflow)
template <class R> BSVD_DEVICE_HD R tphase(R t, R g, R) { return g < R(0) ? -t : t; }
template <class R> BSVD_DEVICE_HD complex<R> tphase(R t, complex<R> g, R ag) {
  R re = g.re, im = g.im;
  const R mx = amax(g);
  if (mx < phase_low<R>()) {
    const int e = rilogb(mx);
    re = rldexp(re, -e);
    im = rldexp(im, -e);
    ag = rhypot(re, im);
  }
  return {t * (re / ag), -(t * (im / ag))};
}
// The plane rotation in tangent form (src/cuda/common/device_scalar.cuh):
//   x' = c (x - te y),   y' = c (y + conj(te) x)
template <class R> BSVD_DEVICE_HD void rot(R &x, R &y, R c, R te) {
  const R nx = c * rfma(-te, y, x);
  const R ny = c * rfma(te, x, y);
  x = nx;
  y = ny;
}
template <class R> BSVD_DEVICE_HD void rot(complex<R> &x, complex<R> &y, R c, complex<R> te) {
  const R tr = te.re, ti = te.im;
  const complex<R> nx = {c * rfma(ti, y.im, rfma(-tr, y.re, x.re)),
                         c * rfma(-ti, y.re, rfma(-tr, y.im, x.im))};
  // conj(te) x = (tr xr + ti xi) + i (tr xi - ti xr)
  const complex<R> ny = {c * rfma(ti, x.im, rfma(tr, x.re, y.re)),
                         c * rfma(-ti, x.re, rfma(tr, x.im, y.im))};
  x = nx;
  y = ny;
}
template <class W> BSVD_DEVICE_HD W zero() { return W(0); }
template <> BSVD_DEVICE_HD complex<float> zero<complex<float>>() { return {0.f, 0.f}; }
template <> BSVD_DEVICE_HD complex<double> zero<complex<double>>() { return {0., 0.}; }
template <class W> BSVD_DEVICE_HD W from_real(typename traits<W>::R r) { return W(r); }
template <> BSVD_DEVICE_HD complex<float> from_real<complex<float>>(float r) { return {r, 0.f}; }
template <> BSVD_DEVICE_HD complex<double> from_real<complex<double>>(double r) { return {r, 0.}; }

template <class W> BSVD_DEVICE_HD W nan_of() { return W(NAN); }
template <> BSVD_DEVICE_HD complex<float> nan_of<complex<float>>() { return {NAN, NAN}; }
template <> BSVD_DEVICE_HD complex<double> nan_of<complex<double>>() { return {NAN, NAN}; }

// Multiply by 2^e exactly in two steps (one factor 2^e may not exist).
template <class W, class R> BSVD_DEVICE_HD W pow2_scale(W x, int e) {
  const int e1 = e / 2;
  return scale(scale(x, rldexp(R(1), e1)), rldexp(R(1), e - e1));
}

// The Jacobi sweeps on the scaled working matrix a (columns of MW rows; rows
// >= mw are zero and stay zero) and v (NW x NW, identity at the start).
// Returns the number of sweeps; *converged says whether the last one
// rotated nothing.
template <class W, class R, int MW, int NW, bool kV> BSVD_DEVICE_HD int
sweeps(W (&a)[NW][MW], W (&v)[NW][NW], int mw, int nw, R tol, int max_sweeps, bool *converged) {
  const R floor = gamma_floor<R>();
  R nrm[NW];
  int sweep = 0;
  *converged = false;
  while (sweep < max_sweeps) {
    ++sweep;
#pragma unroll
    for (int j = 0; j < NW; ++j) {
      R s = R(0);
#pragma unroll
      for (int i = 0; i < MW; ++i) s += abs2(a[j][i]);
      nrm[j] = s;
    }
    bool rotated = false;
#pragma unroll
    for (int p = 0; p < NW - 1; ++p) {
#pragma unroll
      for (int q = p + 1; q < NW; ++q) {
        if (q >= nw) continue;
        W g = zero<W>();
#pragma unroll
        for (int i = 0; i < MW; ++i) dot_acc(g, a[p][i], a[q][i]);
        const R ag = absg(g);
        const R alpha = nrm[p], beta = nrm[q];
        if (!rotates_pair(alpha, beta, ag, tol) || !(ag > floor)) continue;
        rotated = true;
        const TanCos<R> tc = jacobi_tan_cos(alpha, beta, ag);
        const R t = tc.t, c = tc.c;
        const W te = tphase(t, g, ag);
#pragma unroll
        for (int i = 0; i < MW; ++i) rot(a[p][i], a[q][i], c, te);
        if (kV) {
#pragma unroll
          for (int i = 0; i < NW; ++i) rot(v[p][i], v[q][i], c, te);
        }
        nrm[p] = rfma(-t, ag, alpha);
        nrm[q] = rfma(t, ag, beta);
      }
    }
    if (!rotated) {
      *converged = true;
      break;
    }
  }
  (void)mw;
  return sweep;
}

// Replaces the columns flagged null (unit norm wanted, none there) by unit
// vectors orthogonal to every accepted column: for each, the candidate e_i
// (i < mw) with the largest residual after two Gram-Schmidt passes.
template <class W, class R, int MW, int NW>
BSVD_DEVICE_HD void complete(W (&a)[NW][MW], bool (&ok)[NW], int mw, int nw) {
#pragma unroll
  for (int j = 0; j < NW; ++j) {
    if (j >= nw || ok[j]) continue;
    W best[MW];
    R best_n = R(-1);
#pragma unroll 1
    for (int c = 0; c < mw; ++c) {
      W x[MW];
#pragma unroll
      for (int i = 0; i < MW; ++i) x[i] = i == c ? from_real<W>(R(1)) : zero<W>();
#pragma unroll
      for (int pass = 0; pass < 2; ++pass) {
#pragma unroll
        for (int l = 0; l < NW; ++l) {
          if (!ok[l]) continue;
          W d = zero<W>();
#pragma unroll
          for (int i = 0; i < MW; ++i) dot_acc(d, a[l][i], x[i]);
#pragma unroll
          for (int i = 0; i < MW; ++i) axpy_neg(d, a[l][i], x[i]);
        }
      }
      R n2 = R(0);
#pragma unroll
      for (int i = 0; i < MW; ++i) n2 += abs2(x[i]);
      if (n2 > best_n) {
        best_n = n2;
#pragma unroll
        for (int i = 0; i < MW; ++i) best[i] = x[i];
      }
    }
    const R inv = R(1) / rsqrt_(best_n);
#pragma unroll
    for (int i = 0; i < MW; ++i) a[j][i] = scale(best[i], inv);
    ok[j] = true;
  }
}

} // namespace detail

// The general form: element (i, j) of A at A[i * a_rs + j * a_cs], of U at
// U[i * u_rs + j * u_cs], of V likewise; S[j * s_inc]. sweeps (may be null)
// gets the number of sweeps run.
// after_load() runs once A is in registers, before anything is written: a
// kernel that stages A and the outputs in the same shared memory passes a
// barrier there (every thread of the block must call svd_strided then;
// it is not called when m or n is 0 or beyond MaxM, MaxN).
struct no_hook {
  BSVD_DEVICE_HD void operator()() const {}
};
template <class T, int MaxM, int MaxN, class AfterLoad = no_hook>
BSVD_DEVICE_HD int svd_strided(int m, int n, const T *A, int a_rs, int a_cs,
                               typename detail::traits<T>::R *S, int s_inc, T *U, int u_rs,
                               int u_cs, T *V, int v_rs, int v_cs, int *sweeps = nullptr,
                               options opt = {}, AfterLoad after_load = {}) {
  using namespace detail;
  using R = typename traits<T>::R;
  using W = typename traits<T>::W;
  static_assert(sizeof(W) == sizeof(T), "T must be layout-compatible with the working type");
  constexpr int MW = MaxM > MaxN ? MaxM : MaxN;
  constexpr int NW = MaxM > MaxN ? MaxN : MaxM;
  const W *a_in = reinterpret_cast<const W *>(A);
  W *u_out = reinterpret_cast<W *>(U);
  W *v_out = reinterpret_cast<W *>(V);
  const bool tr = m < n; // work on A^H
  const int mw = tr ? n : m, nw = tr ? m : n;
  if (sweeps) *sweeps = 0;
  if (m <= 0 || n <= 0) return kInfoConverged;
  if (m > MaxM || n > MaxN) return kInfoTooLarge; // nothing written

  W a[NW][MW];
  R big = R(0);
  bool fin = true;
#pragma unroll
  for (int j = 0; j < NW; ++j) {
#pragma unroll
    for (int i = 0; i < MW; ++i) {
      W x = zero<W>();
      if (i < mw && j < nw) x = tr ? conj_(a_in[j * a_rs + i * a_cs]) : a_in[i * a_rs + j * a_cs];
      fin = fin && finite(x);
      const R ax = amax(x);
      big = ax > big ? ax : big;
      a[j][i] = x;
    }
  }
  after_load();
  const int k = nw;
  // U of A holds v (transposed case) or a; V of A the other.
  W *ua = tr ? v_out : u_out;
  W *va = tr ? u_out : v_out;
  const int ua_rs = tr ? v_rs : u_rs, ua_cs = tr ? v_cs : u_cs;
  const int va_rs = tr ? u_rs : v_rs, va_cs = tr ? u_cs : v_cs;
  if (!fin) {
    const R nan = R(NAN);
    for (int j = 0; j < k; ++j) {
      S[j * s_inc] = nan;
      const W wn = nan_of<W>();
      if (u_out)
        for (int i = 0; i < m; ++i) u_out[i * u_rs + j * u_cs] = wn;
      if (v_out)
        for (int i = 0; i < n; ++i) v_out[i * v_rs + j * v_cs] = wn;
    }
    return kInfoNonFinite;
  }
  const bool want_v = va != nullptr; // right vectors of the working matrix
  const int e = big > R(0) ? rilogb(big) : 0;
#pragma unroll
  for (int j = 0; j < NW; ++j) {
#pragma unroll
    for (int i = 0; i < MW; ++i) a[j][i] = pow2_scale<W, R>(a[j][i], -e);
  }
  W v[NW][NW];
#pragma unroll
  for (int j = 0; j < NW; ++j) {
#pragma unroll
    for (int i = 0; i < NW; ++i) v[j][i] = i == j ? from_real<W>(R(1)) : zero<W>();
  }
  // The library's threshold and test (threshold.cuh), rows = mw.
  const R tol = resolve_tol<R>(opt.tol, mw);
  const int cap = opt.max_sweeps > 0 ? opt.max_sweeps : 80;
  bool conv = false;
  int ns;
  if (want_v)
    ns = detail::sweeps<W, R, MW, NW, true>(a, v, mw, nw, tol, cap, &conv);
  else
    ns = detail::sweeps<W, R, MW, NW, false>(a, v, mw, nw, tol, cap, &conv);
  if (sweeps) *sweeps = ns;

  // Singular values from the final columns; the rank of each (descending,
  // ties by index) is its output position, so nothing moves in registers.
  R s[NW];
  R smax = R(0);
#pragma unroll
  for (int j = 0; j < NW; ++j) {
    R q = R(0);
#pragma unroll
    for (int i = 0; i < MW; ++i) q += abs2(a[j][i]);
    s[j] = rsqrt_(q);
    smax = j < nw && s[j] > smax ? s[j] : smax;
  }
  int rank[NW];
#pragma unroll
  for (int j = 0; j < NW; ++j) {
    int r = 0;
#pragma unroll
    for (int l = 0; l < NW; ++l)
      if (l < nw && (s[l] > s[j] || (s[l] == s[j] && l < j))) ++r;
    rank[j] = r;
  }
#pragma unroll
  for (int j = 0; j < NW; ++j)
    if (j < nw) S[rank[j] * s_inc] = pow2_scale<R, R>(s[j], e);
  if (ua) {
    bool ok[NW];
    bool all = true;
#pragma unroll
    for (int j = 0; j < NW; ++j) {
      ok[j] = j < nw && s[j] > u_<R>() * smax;
      all = all && (ok[j] || j >= nw);
      const R inv = ok[j] ? R(1) / s[j] : R(0);
#pragma unroll
      for (int i = 0; i < MW; ++i) a[j][i] = scale(a[j][i], inv);
    }
    if (!all) complete<W, R, MW, NW>(a, ok, mw, nw);
#pragma unroll
    for (int j = 0; j < NW; ++j) {
      if (j >= nw) continue;
#pragma unroll
      for (int i = 0; i < MW; ++i)
        if (i < mw) ua[i * ua_rs + rank[j] * ua_cs] = a[j][i];
    }
  }
  if (va) {
#pragma unroll
    for (int j = 0; j < NW; ++j) {
      if (j >= nw) continue;
#pragma unroll
      for (int i = 0; i < NW; ++i)
        if (i < nw) va[i * va_rs + rank[j] * va_cs] = v[j][i];
    }
  }
  return conv ? kInfoConverged : kInfoNotConverged;
}

// Column-major with leading dimensions (LAPACK style).
template <class T, int MaxM, int MaxN>
BSVD_DEVICE_HD int svd(int m, int n, const T *A, int lda, typename detail::traits<T>::R *S, T *U,
                       int ldu, T *V, int ldv, int *sweeps = nullptr, options opt = {}) {
  return svd_strided<T, MaxM, MaxN>(m, n, A, 1, lda, S, 1, U, 1, ldu, V, 1, ldv, sweeps, opt);
}

} // namespace bsvd::device
