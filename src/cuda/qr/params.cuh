// The QR path's kernel parameters: QrParams (one struct for every QR
// kernel, passed by value) and qr_params, which points it into the
// workspace that qr_layout lays out; with the scalar helpers that all the
// QR kernels share. Part of the QR preprocessing (MAGMA-SVD Sec. 9.2,
// qr.hpp).
#pragma once

#include "../common/device_scalar.cuh"
#include "../common/matrix_io.cuh"
#include "qr.hpp"

namespace bsvd::detail::cuda {

// Threads per matrix (one thread block): NT, a template parameter of the
// QR kernels and their helpers (qr_threads in host.cu chooses it).
constexpr int kQrThreads = 256; // the unpivoted path's (tall / wide QR)

template <class Tstd> struct QrParams {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  Batch<Tstd> batch; // the caller's (device-visible) batch
  const QrMat *mats = nullptr;
  T *Y = nullptr, *tau = nullptr, *B = nullptr, *U = nullptr, *V = nullptr;
  R *S = nullptr, *vn = nullptr; // vn: the pivoted factorization's partial norms
  int *escale = nullptr, *info = nullptr, *sweeps = nullptr, *perm = nullptr;
  int *nf = nullptr; // per matrix: 1 when its load found a NaN or Inf
  const int *sel = nullptr; // a launch over some matrices: block -> matrix (null: all)
  int tpm = kQrThreads; // read by load_scaled: the launch's threads per matrix
  int qapply = 0; // finish: X is formed by qr_apply_q_kernel, not here
  int cb = 0; // qr_apply_q_kernel: columns of X per block
  // TSQR (QrMat's nc > 0): the regions of QrLayout of those names, and the
  // chunk jobs (matrix, chunk) of the first level, in launch order
  T *tau1 = nullptr, *Zs = nullptr, *X2 = nullptr, *M1 = nullptr;
  const int *tjobs = nullptr;
};

template <class R> __device__ __forceinline__ R qre(R x) { return x; }
template <class R> __device__ __forceinline__ R qre(cx<R> x) { return x.re; }
template <class R> __device__ __forceinline__ R qim(R) { return R(0); }
template <class R> __device__ __forceinline__ R qim(cx<R> x) { return x.im; }
template <class T, class R> __device__ __forceinline__ T qmake(R re, R im);
template <> __device__ __forceinline__ float qmake<float, float>(float re, float) { return re; }
template <> __device__ __forceinline__ double qmake<double, double>(double re, double) {
  return re;
}
template <> __device__ __forceinline__ cx<float> qmake<cx<float>, float>(float re, float im) {
  return {re, im};
}
template <> __device__ __forceinline__ cx<double> qmake<cx<double>, double>(double re, double im) {
  return {re, im};
}
// a / b (complex: through b's conjugate and |b|^2; b is never tiny here:
// |alpha - beta| >= |beta| >= the column's norm, prescaled into range).
__device__ __forceinline__ float qdiv(float a, float b) { return a / b; }
__device__ __forceinline__ double qdiv(double a, double b) { return a / b; }
template <class R> __device__ __forceinline__ cx<R> qdiv(cx<R> a, cx<R> b) {
  const R d = b.re * b.re + b.im * b.im;
  return {(a.re * b.re + a.im * b.im) / d, (a.im * b.re - a.re * b.im) / d};
}

template <class R> constexpr R kEpsOf = R(0);
template <> constexpr float kEpsOf<float> = 1.1920928955078125e-07f; // FLT_EPSILON
template <> constexpr double kEpsOf<double> = 2.220446049250313e-16; // DBL_EPSILON

// The parameters of a launch over mats, pointed into ws as qr_layout laid
// it out; the launch sets its own fields (sel, nf, tpm, qapply, cb).
template <class Tstd> QrParams<Tstd> qr_params(const Batch<Tstd> &kb, const QrMat *mats,
                                               unsigned char *ws, const QrLayout &L) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  QrParams<Tstd> P;
  P.batch = kb;
  P.mats = mats;
  P.Y = reinterpret_cast<T *>(ws + L.Y);
  P.tau = reinterpret_cast<T *>(ws + L.tau);
  P.B = reinterpret_cast<T *>(ws + L.B);
  P.S = reinterpret_cast<R *>(ws + L.S);
  P.U = reinterpret_cast<T *>(ws + L.U);
  P.V = reinterpret_cast<T *>(ws + L.V);
  P.vn = reinterpret_cast<R *>(ws + L.vn);
  P.perm = reinterpret_cast<int *>(ws + L.perm);
  P.escale = reinterpret_cast<int *>(ws + L.escale);
  P.info = reinterpret_cast<int *>(ws + L.info);
  P.sweeps = reinterpret_cast<int *>(ws + L.sweeps);
  P.tau1 = reinterpret_cast<T *>(ws + L.tau1);
  P.Zs = reinterpret_cast<T *>(ws + L.Zs);
  P.X2 = reinterpret_cast<T *>(ws + L.X2);
  P.M1 = reinterpret_cast<T *>(ws + L.M1);
  P.tjobs = reinterpret_cast<const int *>(ws + L.tjobs);
  return P;
}

} // namespace bsvd::detail::cuda
