// Kernels of the QR preprocessing (see qr.hpp). Included by one .cu file
// per precision.
#pragma once

#include "device_scalar.cuh"
#include "matrix_io.cuh"
#include "qr.hpp"

namespace bsvd::detail::cuda {

constexpr int kQrThreads = 256;

template <class Tstd> struct QrParams {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  Batch<Tstd> batch; // the caller's (device-visible) batch
  const QrMat *mats = nullptr;
  T *Y = nullptr, *tau = nullptr, *B = nullptr, *U = nullptr, *V = nullptr;
  R *S = nullptr;
  int *escale = nullptr, *info = nullptr, *sweeps = nullptr;
  int tpm = kQrThreads; // read by load_scaled
};

template <class R> __device__ __forceinline__ R qre(R x) { return x; }
template <class R> __device__ __forceinline__ R qre(cx<R> x) { return x.re; }
template <class R> __device__ __forceinline__ R qim(R) { return R(0); }
template <class R> __device__ __forceinline__ R qim(cx<R> x) { return x.im; }
template <class T, class R> __device__ __forceinline__ T qmake(R re, R im);
template <> __device__ __forceinline__ float qmake<float, float>(float re, float) { return re; }
template <> __device__ __forceinline__ double qmake<double, double>(double re, double) { return re; }
template <> __device__ __forceinline__ cx<float> qmake<cx<float>, float>(float re, float im) { return {re, im}; }
template <> __device__ __forceinline__ cx<double> qmake<cx<double>, double>(double re, double im) { return {re, im}; }
// a / b (complex: through b's conjugate and |b|^2; b is never tiny here:
// |alpha - beta| >= |beta| >= the column's norm, prescaled into range).
__device__ __forceinline__ float qdiv(float a, float b) { return a / b; }
__device__ __forceinline__ double qdiv(double a, double b) { return a / b; }
template <class R> __device__ __forceinline__ cx<R> qdiv(cx<R> a, cx<R> b) {
  const R d = b.re * b.re + b.im * b.im;
  return {(a.re * b.re + a.im * b.im) / d, (a.im * b.re - a.re * b.im) / d};
}

// Block-wide reduction (sum or max) of one value per thread; every thread
// gets the result. red: kQrThreads / 32 entries of shared memory.
template <bool MAX, class V> __device__ __forceinline__ V qr_block_reduce(V v, V *red) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const V w = shfl_xor(v, o);
    v = MAX ? fmax(v, w) : v + w;
  }
  const int w = threadIdx.x / 32, l = threadIdx.x % 32;
  __syncthreads(); // red is reused by consecutive reductions
  if (l == 0) red[w] = v;
  __syncthreads();
  v = red[0];
  for (int i = 1; i < kQrThreads / 32; ++i) v = MAX ? fmax(v, red[i]) : v + red[i];
  return v;
}

// H_j^H (or H_j) applied to the columns c0..nc-1 of X (rows j..mw-1, ld
// ldx): w_c = x_jc + sum_{i>j} conj(v_i) x_ic (one warp per column),
// x_ic -= v_i f w_c with f = conj(tau) (left, H^H) or tau (H); v_j = 1.
template <class T>
__device__ __forceinline__ void qr_apply_reflector(int j, int mw, const T *v, T f, T *X,
                                                   int ldx, int c0, int nc, T *wsm) {
  const int t = threadIdx.x, w = t / 32, l = t % 32;
  for (int c = c0 + w; c < nc; c += kQrThreads / 32) {
    const T *xc = X + size_t(c) * ldx;
    T acc = dzero<T>();
    for (int i = j + 1 + l; i < mw; i += 32) dot_acc(acc, v[i], xc[i]);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc = acc + shfl_xor(acc, o);
    if (l == 0) wsm[c] = f * (acc + xc[j]);
  }
  __syncthreads();
  const int rows = mw - j;
  for (long long e = t; e < (long long)rows * (nc - c0); e += kQrThreads) {
    const int c = c0 + int(e / rows), i = j + int(e % rows);
    T *x = X + i + size_t(c) * ldx;
    *x = *x - (i == j ? wsm[c] : v[i] * wsm[c]);
  }
  __syncthreads();
}

// ---- factor: W = A (A^H), prescale, Householder QR in the workspace, B -----
template <class Tstd>
__global__ void __launch_bounds__(kQrThreads) qr_factor_kernel(const __grid_constant__ QrParams<Tstd> P) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ int st[kStInts];
  __shared__ unsigned long long amax_word;
  __shared__ R redr[kQrThreads / 32];
  __shared__ T coef[2]; // tau, 1 / (alpha - beta)
  __shared__ R beta_s;
  T *wsm = reinterpret_cast<T *>(smem_raw); // nw_max entries
  const QrMat M = P.mats[blockIdx.x];
  const int t = threadIdx.x, mw = M.mw, nw = M.nw;
  const Team team{2, 0, kQrThreads};
  T *Y = P.Y + M.y, *tau = P.tau + M.tau, *B = P.B + M.B;
  R amax;
  bool nonfinite;
  const int escale = load_scaled(P, team, t, true, M.b, M.m, M.n, false, Y, mw, (T *)nullptr, 0,
                                 st, &amax_word, amax, nonfinite);
  __syncthreads(); // load_scaled's last pass (the prescaling) is per thread
  if (t == 0) P.escale[blockIdx.x] = nonfinite ? 0 : escale;
  if (nonfinite) { // B of NaN: the fused kernel reports the matrix
    for (int e = t; e < nw * nw; e += kQrThreads) B[e] = dnan<T>();
    for (int j = t; j < nw; j += kQrThreads) tau[j] = dzero<T>();
    return;
  }
  for (int j = 0; j < nw; ++j) {
    T *yj = Y + size_t(j) * mw;
    // ||x||, x = y_{j+1:mw, j}, scaled by its largest part
    R mx = 0;
    for (int i = j + 1 + t; i < mw; i += kQrThreads) mx = fmax(mx, amax_part(yj[i]));
    mx = qr_block_reduce<true>(mx, redr);
    R s = 0;
    if (mx > R(0))
      for (int i = j + 1 + t; i < mw; i += kQrThreads) s += abs2(ddiv(yj[i], mx));
    s = qr_block_reduce<false>(s, redr);
    const T alpha = yj[j];
    const R xnorm = mx * sqrt(s);
    const bool identity = xnorm == R(0) && qim(alpha) == R(0);
    if (t == 0) {
      if (identity) {
        tau[j] = dzero<T>();
      } else {
        const R ar = fabs(qre(alpha)), ai = fabs(qim(alpha));
        const R sc = fmax(fmax(ar, ai), xnorm);
        const R a1 = qre(alpha) / sc, a2 = qim(alpha) / sc, a3 = xnorm / sc;
        const R nrm = sc * sqrt(a1 * a1 + a2 * a2 + a3 * a3);
        const R beta = qre(alpha) >= R(0) ? -nrm : nrm;
        const T tj = qdiv(dfrom_real<T>(beta) - alpha, dfrom_real<T>(beta));
        tau[j] = tj;
        coef[0] = tj;
        coef[1] = qdiv(done<T>(), alpha - dfrom_real<T>(beta));
        beta_s = beta;
      }
    }
    __syncthreads();
    if (identity) continue; // uniform: every thread reduced the same values
    const T scal = coef[1];
    for (int i = j + 1 + t; i < mw; i += kQrThreads) yj[i] = yj[i] * scal;
    __syncthreads();
    qr_apply_reflector(j, mw, yj, dconj(coef[0]), Y, mw, j + 1, nw, wsm);
    if (t == 0) yj[j] = dfrom_real<T>(beta_s);
    __syncthreads();
  }
  // B = R (tall) or R^H (wide), nw x nw, leading dimension nw
  const bool wide = M.m < M.n;
  for (int e = t; e < nw * nw; e += kQrThreads) {
    const int c = e / nw, r = e - c * nw;
    T v = dzero<T>();
    if (!wide && r <= c) v = Y[r + size_t(c) * mw];
    if (wide && r >= c) v = dconj(Y[c + size_t(r) * mw]);
    B[e] = v;
  }
}

// ---- finish: S scaled back, info, sweeps; U and V ---------------------------
template <class Tstd>
__global__ void __launch_bounds__(kQrThreads) qr_finish_kernel(const __grid_constant__ QrParams<Tstd> P) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T *wsm = reinterpret_cast<T *>(smem_raw);
  const QrMat M = P.mats[blockIdx.x];
  const int t = threadIdx.x, mw = M.mw, nw = M.nw, b = M.b;
  const int info = P.info[blockIdx.x], escale = P.escale[blockIdx.x];
  R *S = P.batch.S.ptr(b);
  const R *Sq = P.S + M.S;
  for (int j = t; j < nw; j += kQrThreads) S[j] = dldexp(Sq[j], -escale);
  if (t == 0) {
    P.batch.info[b] = info;
    if (P.batch.sweeps) P.batch.sweeps[b] = P.sweeps[blockIdx.x];
  }
  if (!P.batch.vectors) return;
  const bool wide = M.m < M.n;
  T *U = reinterpret_cast<T *>(P.batch.U.ptr(b));
  T *V = reinterpret_cast<T *>(P.batch.V.ptr(b));
  const int ldu = P.batch.U.ldm(b), ldv = P.batch.V.ldm(b);
  // Q side X (mw x nw) from Z; the other side O (nw x nw) copied from C.
  T *X = wide ? V : U;
  const int ldx = wide ? ldv : ldu;
  const T *Z = (wide ? P.V : P.U) + (wide ? M.V : M.U);
  T *O = wide ? U : V;
  const int ldo = wide ? ldu : ldv;
  const T *C = (wide ? P.U : P.V) + (wide ? M.U : M.V);
  const bool bad = info == BSVD_INFO_NONFINITE;
  for (int e = t; e < nw * nw; e += kQrThreads) {
    const int c = e / nw, r = e - c * nw;
    O[r + size_t(c) * ldo] = bad ? dnan<T>() : C[e];
  }
  for (long long e = t; e < (long long)mw * nw; e += kQrThreads) {
    const int c = int(e / mw), r = int(e - (long long)c * mw);
    X[r + size_t(c) * ldx] = bad ? dnan<T>() : (r < nw ? Z[r + size_t(c) * nw] : dzero<T>());
  }
  if (bad) return;
  __syncthreads();
  const T *Y = P.Y + M.y, *tau = P.tau + M.tau;
  for (int j = nw - 1; j >= 0; --j) {
    const T tj = tau[j];
    if (qre(tj) == R(0) && qim(tj) == R(0)) continue; // H_j = I (uniform)
    qr_apply_reflector(j, mw, Y + size_t(j) * mw, tj, X, ldx, 0, nw, wsm);
  }
}

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
  P.escale = reinterpret_cast<int *>(ws + L.escale);
  P.info = reinterpret_cast<int *>(ws + L.info);
  P.sweeps = reinterpret_cast<int *>(ws + L.sweeps);
  return P;
}

template <class Tstd>
cudaError_t qr_factor_impl(const Batch<Tstd> &kb, const QrMat *mats, int count, int nw_max,
                           unsigned char *ws, const QrLayout &L, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  const size_t smem = size_t(std::max(nw_max, 1)) * sizeof(dev_t<Tstd>);
  qr_factor_kernel<Tstd><<<count, kQrThreads, smem, stream>>>(qr_params(kb, mats, ws, L));
  return cudaGetLastError();
}
template <class Tstd>
cudaError_t qr_finish_impl(const Batch<Tstd> &kb, const QrMat *mats, int count, int nw_max,
                           unsigned char *ws, const QrLayout &L, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  const size_t smem = size_t(std::max(nw_max, 1)) * sizeof(dev_t<Tstd>);
  qr_finish_kernel<Tstd><<<count, kQrThreads, smem, stream>>>(qr_params(kb, mats, ws, L));
  return cudaGetLastError();
}

} // namespace bsvd::detail::cuda
