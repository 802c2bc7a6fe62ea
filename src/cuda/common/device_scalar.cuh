// Device-side scalar arithmetic for the four precisions: real float/double
// and a plain complex pair (layout-compatible with std::complex, whose
// members are host-only). Batch<T> holds std::complex pointers; kernels
// reinterpret them as dev_t<T> pointers.
#pragma once

#include "../../core/rotation.hpp"

#include <complex>
#include <cuda_runtime.h>

namespace bsvd::detail::cuda {

template <class R> struct alignas(2 * sizeof(R)) cx { R re, im; };

template <class T> struct dev_type { using type = T; };
template <> struct dev_type<std::complex<float>> { using type = cx<float>; };
template <> struct dev_type<std::complex<double>> { using type = cx<double>; };
template <class T> using dev_t = typename dev_type<T>::type;

template <class T> struct dev_real { using type = T; };
template <class R> struct dev_real<cx<R>> { using type = R; };
template <class T> using dreal_t = typename dev_real<T>::type;

template <class T> struct is_cx { static constexpr bool value = false; };
template <class R> struct is_cx<cx<R>> { static constexpr bool value = true; };

// ---- real ------------------------------------------------------------------
__device__ __forceinline__ float dconj(float x) { return x; }
__device__ __forceinline__ double dconj(double x) { return x; }
__device__ __forceinline__ float abs2(float x) { return x * x; }
__device__ __forceinline__ double abs2(double x) { return x * x; }
__device__ __forceinline__ float amax_part(float x) { return fabsf(x); }
__device__ __forceinline__ double amax_part(double x) { return fabs(x); }
__device__ __forceinline__ bool dfinite(float x) { return isfinite(x); }
__device__ __forceinline__ bool dfinite(double x) { return isfinite(x); }
// acc += conj(x) * y
__device__ __forceinline__ void dot_acc(float &acc, float x, float y) { acc = fmaf(x, y, acc); }
__device__ __forceinline__ void dot_acc(double &acc, double x, double y) { acc = fma(x, y, acc); }
__device__ __forceinline__ float dabs(float g) { return fabsf(g); }
__device__ __forceinline__ double dabs(double g) { return fabs(g); }
// t conj(g / |g|)  (g != 0)
__device__ __forceinline__ float tconj_phase(float t, float g, float) { return g < 0 ? -t : t; }
__device__ __forceinline__ double tconj_phase(double t, double g, double) { return g < 0 ? -t : t; }
__device__ __forceinline__ float dscale(float x, float r) { return x * r; }
__device__ __forceinline__ double dscale(double x, double r) { return x * r; }
__device__ __forceinline__ float ddiv(float x, float r) { return x / r; }
__device__ __forceinline__ double ddiv(double x, double r) { return x / r; }
__device__ __forceinline__ float dldexp(float x, int e) { return ldexpf(x, e); }
__device__ __forceinline__ int dilogb(float x) { return ilogbf(x); }
__device__ __forceinline__ int dilogb(double x) { return ilogb(x); }
__device__ __forceinline__ double dldexp(double x, int e) { return ldexp(x, e); }
// The plane rotation in tangent form (HBJ eq. 4.1, the CPU twin's rotate):
//   x' = c (x - te y),  y' = c (y + conj(te) x),  stored exchanged if swap.
// rot_first(x, y, c, t) = c (x - t y) is its first output; the second is
// rot_first(y, x, c, neg_conj(te)) bit for bit (the operands of every fma
// only change sign), so a rotation applied with the roles of x and y
// exchanged is the same rotation with neg_conj(te) (the register
// eigensolver of the blocked path, blocked/evd_*.cuh, relies on this).
// The hyperbolic step of the HSVD (rotation.hpp, hyperbolic_rotation),
//   x' = c (x + th y),  y' = c (y + conj(th) x),
// is rot_first(x, y, c, dneg(th)) and rot_first(y, x, c, neg_conj(th)):
// rot_tangent's second output with te = th, its first with te = -th.
__device__ __forceinline__ float neg_conj(float t) { return -t; }
__device__ __forceinline__ double neg_conj(double t) { return -t; }
__device__ __forceinline__ float dneg(float t) { return -t; }
__device__ __forceinline__ double dneg(double t) { return -t; }
template <class R> __device__ __forceinline__ R rot_first(R x, R y, R c, R t) {
  return c * fma(-t, y, x);
}
template <class R> __device__ __forceinline__ void rot_tangent(R &x, R &y, R c, R te, bool swap) {
  const R nx = rot_first(x, y, c, te);
  const R ny = rot_first(y, x, c, neg_conj(te));
  x = swap ? ny : nx;
  y = swap ? nx : ny;
}
template <class R> __device__ __forceinline__ R dreal(R x) { return x; }
template <class R> __device__ __forceinline__ R dreal(cx<R> x) { return x.re; }
template <class T> __device__ __forceinline__ T dzero() { return T(0); }
template <class T> __device__ __forceinline__ T done() { return T(1); }
template <class T> __device__ __forceinline__ T dnan() { return T(NAN); }
template <class T> __device__ __forceinline__ T dfrom_real(dreal_t<T> r) { return T(r); }
__device__ __forceinline__ float shfl_xor(float v, int o) {
  return __shfl_xor_sync(0xffffffffu, v, o);
}
__device__ __forceinline__ double shfl_xor(double v, int o) {
  return __shfl_xor_sync(0xffffffffu, v, o);
}
__device__ __forceinline__ float shfl_idx(float v, int src) {
  return __shfl_sync(0xffffffffu, v, src);
}
__device__ __forceinline__ double shfl_idx(double v, int src) {
  return __shfl_sync(0xffffffffu, v, src);
}

// ---- complex ---------------------------------------------------------------
template <class R> __device__ __forceinline__ cx<R> dconj(cx<R> x) { return {x.re, -x.im}; }
template <class R> __device__ __forceinline__ R abs2(cx<R> x) { return x.re * x.re + x.im * x.im; }
template <class R> __device__ __forceinline__ R amax_part(cx<R> x) {
  return fmax(amax_part(x.re), amax_part(x.im));
}
template <class R> __device__ __forceinline__ bool dfinite(cx<R> x) {
  return dfinite(x.re) && dfinite(x.im);
}
template <class R> __device__ __forceinline__ void dot_acc(cx<R> &acc, cx<R> x, cx<R> y) {
  // conj(x) * y = (xr yr + xi yi) + i (xr yi - xi yr)
  dot_acc(acc.re, x.re, y.re);
  dot_acc(acc.re, x.im, y.im);
  dot_acc(acc.im, x.re, y.im);
  acc.im = fma(-x.im, y.re, acc.im);
}
__device__ __forceinline__ float dabs(cx<float> g) { return hypotf(g.re, g.im); }
__device__ __forceinline__ double dabs(cx<double> g) { return hypot(g.re, g.im); }
template <class R> __device__ __forceinline__ cx<R> tconj_phase(R t, cx<R> g, R absg) {
  R er, ei; // g / |g|, rescaled near the underflow threshold (rotation.hpp)
  unit_phase(g.re, g.im, absg, er, ei);
  return {t * er, -(t * ei)};
}
template <class R> __device__ __forceinline__ cx<R> dscale(cx<R> x, R r) {
  return {x.re * r, x.im * r};
}
template <class R> __device__ __forceinline__ cx<R> ddiv(cx<R> x, R r) {
  return {x.re / r, x.im / r};
}
template <class R> __device__ __forceinline__ cx<R> dldexp(cx<R> x, int e) {
  return {dldexp(x.re, e), dldexp(x.im, e)};
}
template <class R> __device__ __forceinline__ cx<R> neg_conj(cx<R> t) { return {-t.re, t.im}; }
template <class R> __device__ __forceinline__ cx<R> dneg(cx<R> t) { return {-t.re, -t.im}; }
template <class R> __device__ __forceinline__ cx<R> rot_first(cx<R> x, cx<R> y, R c, cx<R> te) {
  // te y = (tr yr - ti yi) + i (tr yi + ti yr)
  const R tr = te.re, ti = te.im;
  return {c * fma(ti, y.im, fma(-tr, y.re, x.re)), c * fma(-ti, y.re, fma(-tr, y.im, x.im))};
}
template <class R>
__device__ __forceinline__ void rot_tangent(cx<R> &x, cx<R> &y, R c, cx<R> te, bool swap) {
  // y + conj(te) x = y - neg_conj(te) x
  const cx<R> nx = rot_first(x, y, c, te);
  const cx<R> ny = rot_first(y, x, c, neg_conj(te));
  x = swap ? ny : nx;
  y = swap ? nx : ny;
}
template <> __device__ __forceinline__ cx<float> dzero<cx<float>>() { return {0.f, 0.f}; }
template <> __device__ __forceinline__ cx<double> dzero<cx<double>>() { return {0., 0.}; }
template <> __device__ __forceinline__ cx<float> done<cx<float>>() { return {1.f, 0.f}; }
template <> __device__ __forceinline__ cx<double> done<cx<double>>() { return {1., 0.}; }
template <> __device__ __forceinline__ cx<float> dnan<cx<float>>() { return {NAN, NAN}; }
template <> __device__ __forceinline__ cx<double> dnan<cx<double>>() { return {NAN, NAN}; }
template <> __device__ __forceinline__ cx<float> dfrom_real<cx<float>>(float r) { return {r, 0.f}; }
template <> __device__ __forceinline__ cx<double> dfrom_real<cx<double>>(double r) {
  return {r, 0.};
}
template <class R> __device__ __forceinline__ cx<R> shfl_xor(cx<R> v, int o) {
  return {shfl_xor(v.re, o), shfl_xor(v.im, o)};
}
template <class R> __device__ __forceinline__ cx<R> shfl_idx(cx<R> v, int src) {
  return {shfl_idx(v.re, src), shfl_idx(v.im, src)};
}
template <class R> __device__ __forceinline__ cx<R> operator+(cx<R> a, cx<R> b) {
  return {a.re + b.re, a.im + b.im};
}
template <class R> __device__ __forceinline__ cx<R> operator-(cx<R> a, cx<R> b) {
  return {a.re - b.re, a.im - b.im};
}
template <class R> __device__ __forceinline__ cx<R> operator*(cx<R> a, cx<R> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

} // namespace bsvd::detail::cuda
