// Kernels of the QR preprocessing (see qr.hpp). Included by one .cu file
// per precision.
#pragma once

#include "device_scalar.cuh"
#include "matrix_io.cuh"
#include "qr.hpp"

namespace bsvd::detail::cuda {

// Threads per matrix (one thread block): NT, a template parameter of the
// kernels and helpers below (qr_threads in qr_common.cu chooses it).
constexpr int kQrThreads = 256; // the unpivoted path's (tall / wide QR)

template <class Tstd> struct QrParams {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  Batch<Tstd> batch; // the caller's (device-visible) batch
  const QrMat *mats = nullptr;
  T *Y = nullptr, *tau = nullptr, *B = nullptr, *U = nullptr, *V = nullptr;
  R *S = nullptr, *vn = nullptr; // vn: the pivoted factorization's partial norms
  int *escale = nullptr, *info = nullptr, *sweeps = nullptr, *perm = nullptr;
  int tpm = kQrThreads; // read by load_scaled: the launch's threads per matrix
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

template <class R> constexpr R kEpsOf = R(0);
template <> constexpr float kEpsOf<float> = 1.1920928955078125e-07f;   // FLT_EPSILON
template <> constexpr double kEpsOf<double> = 2.220446049250313e-16;   // DBL_EPSILON

// ||x|| of n entries by one warp (every lane gets it), scaled by the largest
// part as the CPU twin's scaled_nrm2.
template <class T> __device__ __forceinline__ dreal_t<T> qr_warp_nrm2(int n, const T *x) {
  using R = dreal_t<T>;
  const int l = threadIdx.x % 32;
  R mx = 0;
  for (int i = l; i < n; i += 32) mx = fmax(mx, amax_part(x[i]));
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) mx = fmax(mx, shfl_xor(mx, o));
  if (mx == R(0)) return R(0);
  R s = 0;
  for (int i = l; i < n; i += 32) s += abs2(ddiv(x[i], mx));
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s += shfl_xor(s, o);
  return mx * sqrt(s);
}

// Block-wide reduction (sum or max) of one value per thread; every thread
// gets the result. red: NT / 32 entries of shared memory.
template <int NT, bool MAX, class V> __device__ __forceinline__ V qr_block_reduce(V v, V *red) {
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
  for (int i = 1; i < NT / 32; ++i) v = MAX ? fmax(v, red[i]) : v + red[i];
  return v;
}

// ||x||, x = y[i0 .. mw-1], by the whole block (every thread gets it),
// scaled by its largest part as the CPU twin's scaled_nrm2.
template <int NT, class T, class R>
__device__ __forceinline__ R qr_block_nrm2(int i0, int mw, const T *y, R *redr) {
  const int t = threadIdx.x;
  R mx = 0;
  for (int i = i0 + t; i < mw; i += NT) mx = fmax(mx, amax_part(y[i]));
  mx = qr_block_reduce<NT, true>(mx, redr);
  R s = 0;
  if (mx > R(0))
    for (int i = i0 + t; i < mw; i += NT) s += abs2(ddiv(y[i], mx));
  s = qr_block_reduce<NT, false>(s, redr);
  return mx * sqrt(s);
}

// H_j^H (or H_j) applied to the columns c0..nc-1 of X (rows j..mw-1, ld
// ldx), one warp per column: w_c = f (x_jc + sum_{i>j} conj(v_i) x_ic),
// then x_ic -= v_i w_c (v_j = 1), with f = conj(tau) (left, H^H) or tau (H).
// Each column is finished by its warp alone (no barrier inside); the caller
// synchronizes before the columns are read by others. Returns nothing; with
// PIV, each warp also downdates the partial norms of its columns by their
// new row j (xLAQP2's rule, as householder_qr_pivoted in src/cpu/qr.cpp,
// recomputing a norm when the downdate cancels) and offers its first column
// of largest partial norm in cand_v / cand_i[warp].
template <int NT, bool PIV, class T>
__device__ __forceinline__ void qr_apply_reflector(int j, int mw, const T *v, T f, bool apply,
                                                   T *X, int ldx, int c0, int nc,
                                                   dreal_t<T> *vn1, dreal_t<T> *vn2,
                                                   dreal_t<T> *cand_v, int *cand_i) {
  using R = dreal_t<T>;
  const int t = threadIdx.x, w = t / 32, l = t % 32;
  R best_v = R(-1);
  int best_i = nc;
  for (int c = c0 + w; c < nc; c += NT / 32) {
    T *xc = X + size_t(c) * ldx;
    T xj = xc[j];
    // this column's partial norms, read before any lane writes them
    const R nv0 = PIV ? vn1[c] : R(0), nv2 = PIV ? vn2[c] : R(0);
    if (apply) {
      T acc = dzero<T>();
      for (int i = j + 1 + l; i < mw; i += 32) dot_acc(acc, v[i], xc[i]);
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) acc = acc + shfl_xor(acc, o);
      const T wc = f * (acc + xj);
      for (int i = j + 1 + l; i < mw; i += 32) xc[i] = xc[i] - v[i] * wc;
      xj = xj - wc;
      if (l == 0) xc[j] = xj;
    }
    if constexpr (PIV) {
      R nv = nv0; // the same value in every lane
      if (nv != R(0)) {
        R tt = dabs(xj) / nv;
        tt = fmax(R(0), (R(1) + tt) * (R(1) - tt));
        const R r = nv / nv2;
        __syncwarp(); // the column's new entries and norms: every lane has read
        if (tt * r * r <= sqrt(kEpsOf<R>)) {
          nv = qr_warp_nrm2(mw - j - 1, xc + j + 1);
          if (l == 0) vn2[c] = nv;
        } else {
          nv = nv * sqrt(tt);
        }
        if (l == 0) vn1[c] = nv;
      }
      if (nv > best_v) {
        best_v = nv;
        best_i = c;
      }
    }
  }
  if constexpr (PIV) {
    if (l == 0) {
      cand_v[w] = best_v;
      cand_i[w] = best_i;
    }
  }
}

// The pivot: the first column of largest partial norm among the warps'
// candidates (every thread computes the same; after a barrier).
template <int NT, class R>
__device__ __forceinline__ int qr_pick_pivot(const R *cand_v, const int *cand_i) {
  R bv = cand_v[0];
  int bi = cand_i[0];
  for (int w = 1; w < NT / 32; ++w)
    if (cand_v[w] > bv || (cand_v[w] == bv && cand_i[w] < bi)) {
      bv = cand_v[w];
      bi = cand_i[w];
    }
  return bi;
}

// ---- factor: W = A (A^H), prescale, Householder QR in the workspace, B -----
// M.piv: with column pivoting (householder_qr_pivoted's twin: the column of
// largest partial norm first, the first one on ties; perm[j] = the column of
// W that became column j), and B = R^H for the blocked path.
template <class Tstd, int NT>
__global__ void __launch_bounds__(NT) qr_factor_kernel(const __grid_constant__ QrParams<Tstd> P) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  __shared__ int st[kStInts];
  __shared__ unsigned long long amax_word;
  __shared__ R redr[NT / 32];
  __shared__ T coef[2]; // tau, 1 / (alpha - beta) (of the scaled column)
  __shared__ R beta_s;
  __shared__ R cand_v[NT / 32];
  __shared__ int cand_i[NT / 32];
  const QrMat M = P.mats[blockIdx.x];
  const int t = threadIdx.x, mw = M.mw, nw = M.nw, w = t / 32, l = t % 32;
  const bool piv = M.piv != 0;
  const Team team{2, 0, NT};
  T *Y = P.Y + M.y, *tau = P.tau + M.tau, *B = P.B + M.B;
  R *vn1 = piv ? P.vn + 2 * M.tau : nullptr, *vn2 = piv ? vn1 + nw : nullptr;
  int *perm = piv ? P.perm + M.tau : nullptr;
  R amax;
  bool nonfinite;
  const int escale = load_scaled(P, team, t, true, M.b, M.m, M.n, false, Y, mw, (T *)nullptr, 0,
                                 st, &amax_word, amax, nonfinite);
  __syncthreads(); // load_scaled's last pass (the prescaling) is per thread
  if (t == 0) P.escale[blockIdx.x] = nonfinite ? 0 : escale;
  if (nonfinite) { // B of NaN: the solver of B reports the matrix
    for (int e = t; e < nw * nw; e += NT) B[e] = dnan<T>();
    for (int j = t; j < nw; j += NT) tau[j] = dzero<T>();
    if (piv)
      for (int j = t; j < nw; j += NT) perm[j] = j;
    return;
  }
  int p = 0; // the pivot of the next step
  if (piv) {
    R bv = R(-1);
    int bi = nw;
    for (int c = w; c < nw; c += NT / 32) {
      const R nv = qr_warp_nrm2(mw, Y + size_t(c) * mw);
      if (l == 0) vn1[c] = vn2[c] = nv;
      if (nv > bv) {
        bv = nv;
        bi = c;
      }
    }
    if (l == 0) {
      cand_v[w] = bv;
      cand_i[w] = bi;
    }
    for (int c = t; c < nw; c += NT) perm[c] = c;
    __syncthreads();
    p = qr_pick_pivot<NT>(cand_v, cand_i);
  }
  for (int j = 0; j < nw; ++j) {
    T *yj = Y + size_t(j) * mw;
    if (piv && p != j) {
      T *yp = Y + size_t(p) * mw;
      for (int i = t; i < mw; i += NT) {
        const T a = yj[i];
        yj[i] = yp[i];
        yp[i] = a;
      }
      if (t == 0) {
        const int q = perm[p];
        perm[p] = perm[j];
        perm[j] = q;
        vn1[p] = vn1[j];
        vn2[p] = vn2[j];
      }
      __syncthreads();
    }
    const T alpha = yj[j];
    R xnorm = qr_block_nrm2<NT>(j + 1, mw, yj, redr);
    const bool identity = xnorm == R(0) && qim(alpha) == R(0);
    // A tiny column (the rounding residue of a rank-deficient matrix can
    // reach the subnormals) is scaled by 2^e first, in place, and its norm
    // taken again (householder_step, src/cpu/qr.cpp). Uniform.
    const R big = fmax(fmax(fabs(qre(alpha)), fabs(qim(alpha))), xnorm);
    const int e = !identity && big < sqrt(min_normal<R>()) / kEpsOf<R> ? -dilogb(big) : 0;
    if (e != 0) {
      for (int i = j + 1 + t; i < mw; i += NT) yj[i] = dldexp(yj[i], e);
      __syncthreads();
      xnorm = qr_block_nrm2<NT>(j + 1, mw, yj, redr);
    }
    if (t == 0) {
      if (identity) {
        tau[j] = dzero<T>();
      } else {
        const T as = dldexp(alpha, e);
        const R xs = xnorm; // of the scaled column
        const R ar = fabs(qre(as)), ai = fabs(qim(as));
        const R sc = fmax(fmax(ar, ai), xs);
        const R a1 = qre(as) / sc, a2 = qim(as) / sc, a3 = xs / sc;
        const R nrm = sc * sqrt(a1 * a1 + a2 * a2 + a3 * a3);
        const R beta = qre(as) >= R(0) ? -nrm : nrm;
        const T tj = qdiv(dfrom_real<T>(beta) - as, dfrom_real<T>(beta));
        tau[j] = tj;
        coef[0] = tj;
        coef[1] = qdiv(done<T>(), as - dfrom_real<T>(beta));
        beta_s = dldexp(beta, -e);
      }
    }
    __syncthreads();
    if (!identity) { // uniform: every thread reduced the same values
      const T scal = coef[1];
      for (int i = j + 1 + t; i < mw; i += NT) yj[i] = yj[i] * scal;
      __syncthreads();
    }
    if (piv)
      qr_apply_reflector<NT, true>(j, mw, yj, dconj(coef[0]), !identity, Y, mw, j + 1, nw, vn1, vn2,
                               cand_v, cand_i);
    else
      qr_apply_reflector<NT, false>(j, mw, yj, dconj(coef[0]), !identity, Y, mw, j + 1, nw,
                                (R *)nullptr, (R *)nullptr, (R *)nullptr, (int *)nullptr);
    if (t == 0 && !identity) yj[j] = dfrom_real<T>(beta_s);
    __syncthreads();
    if (piv) p = qr_pick_pivot<NT>(cand_v, cand_i);
  }
  // B = R (tall) or R^H (wide, or pivoted), nw x nw, leading dimension nw;
  // pivoted: R's rows from the first with |R_jj| < u |R_00| dropped
  // (qrcp_rank, rotation.hpp; every thread finds the same kr).
  const bool flip = M.m < M.n || piv;
  const int kr = piv ? qrcp_rank<R>(nw, [&](int j) { return dabs(Y[j + size_t(j) * mw]); }) : nw;
  for (int e = t; e < nw * nw; e += NT) {
    const int c = e / nw, r = e - c * nw;
    T v = dzero<T>();
    if (!flip && r <= c) v = Y[r + size_t(c) * mw];
    if (flip && r >= c && c < kr) v = dconj(Y[c + size_t(r) * mw]);
    B[e] = v;
  }
}

// ---- finish: S scaled back, info, sweeps; U and V ---------------------------
template <class Tstd, int NT>
__global__ void __launch_bounds__(NT) qr_finish_kernel(const __grid_constant__ QrParams<Tstd> P) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  const QrMat M = P.mats[blockIdx.x];
  const int t = threadIdx.x, mw = M.mw, nw = M.nw, b = M.b;
  const int info = P.info[blockIdx.x], escale = P.escale[blockIdx.x];
  R *S = P.batch.S.ptr(b);
  const R *Sq = P.S + M.S;
  for (int j = t; j < nw; j += NT) S[j] = dldexp(Sq[j], -escale);
  if (t == 0) {
    P.batch.info[b] = info;
    if (P.batch.sweeps) P.batch.sweeps[b] = P.sweeps[blockIdx.x];
  }
  if (!P.batch.vectors) return;
  // B = U_B S V_B^H. Tall: B = R, U = Q [U_B; 0], V = V_B. Wide (W = A^H):
  // B = R^H, U = U_B, V = Q [V_B; 0]. Pivoted (W P = Q R, B = R^H): W's left
  // vectors Q [V_B; 0], its right ones P U_B (row perm[r] of it is row r of
  // U_B), exchanged when wide.
  const bool wide = M.m < M.n, piv = M.piv != 0, flip = wide || piv;
  T *U = reinterpret_cast<T *>(P.batch.U.ptr(b));
  T *V = reinterpret_cast<T *>(P.batch.V.ptr(b));
  const int ldu = P.batch.U.ldm(b), ldv = P.batch.V.ldm(b);
  // Q side X (mw x nw) from Z; the other side O (nw x nw) copied from C.
  T *X = wide ? V : U;
  const int ldx = wide ? ldv : ldu;
  const T *Z = (flip ? P.V : P.U) + (flip ? M.V : M.U);
  T *O = wide ? U : V;
  const int ldo = wide ? ldu : ldv;
  const T *C = (flip ? P.U : P.V) + (flip ? M.U : M.V);
  const int *perm = piv ? P.perm + M.tau : nullptr;
  const bool bad = info == BSVD_INFO_NONFINITE;
  for (int e = t; e < nw * nw; e += NT) {
    const int c = e / nw, r = e - c * nw;
    O[(piv ? perm[r] : r) + size_t(c) * ldo] = bad ? dnan<T>() : C[e];
  }
  for (long long e = t; e < (long long)mw * nw; e += NT) {
    const int c = int(e / mw), r = int(e - (long long)c * mw);
    X[r + size_t(c) * ldx] = bad ? dnan<T>() : (r < nw ? Z[r + size_t(c) * nw] : dzero<T>());
  }
  if (bad) return;
  __syncthreads();
  const T *Y = P.Y + M.y, *tau = P.tau + M.tau;
  for (int j = nw - 1; j >= 0; --j) {
    const T tj = tau[j];
    if (qre(tj) == R(0) && qim(tj) == R(0)) continue; // H_j = I (uniform)
    qr_apply_reflector<NT, false>(j, mw, Y + size_t(j) * mw, tj, true, X, ldx, 0, nw, (R *)nullptr,
                              (R *)nullptr, (R *)nullptr, (int *)nullptr);
    __syncthreads();
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
  P.vn = reinterpret_cast<R *>(ws + L.vn);
  P.perm = reinterpret_cast<int *>(ws + L.perm);
  P.escale = reinterpret_cast<int *>(ws + L.escale);
  P.info = reinterpret_cast<int *>(ws + L.info);
  P.sweeps = reinterpret_cast<int *>(ws + L.sweeps);
  return P;
}

// Launch with nt threads per matrix (256, 512 or 1024; qr_threads).
template <class Tstd>
cudaError_t qr_factor_impl(const Batch<Tstd> &kb, const QrMat *mats, int count, int nw_max,
                           unsigned char *ws, const QrLayout &L, cudaStream_t stream, int nt) {
  (void)nw_max;
  if (count <= 0) return cudaSuccess;
  QrParams<Tstd> P = qr_params(kb, mats, ws, L);
  P.tpm = nt == 1024 || nt == 512 ? nt : 256;
  if (P.tpm == 1024) qr_factor_kernel<Tstd, 1024><<<count, 1024, 0, stream>>>(P);
  else if (P.tpm == 512) qr_factor_kernel<Tstd, 512><<<count, 512, 0, stream>>>(P);
  else qr_factor_kernel<Tstd, 256><<<count, 256, 0, stream>>>(P);
  return cudaGetLastError();
}
template <class Tstd>
cudaError_t qr_finish_impl(const Batch<Tstd> &kb, const QrMat *mats, int count, int nw_max,
                           unsigned char *ws, const QrLayout &L, cudaStream_t stream, int nt) {
  (void)nw_max;
  if (count <= 0) return cudaSuccess;
  QrParams<Tstd> P = qr_params(kb, mats, ws, L);
  P.tpm = nt == 1024 || nt == 512 ? nt : 256;
  if (P.tpm == 1024) qr_finish_kernel<Tstd, 1024><<<count, 1024, 0, stream>>>(P);
  else if (P.tpm == 512) qr_finish_kernel<Tstd, 512><<<count, 512, 0, stream>>>(P);
  else qr_finish_kernel<Tstd, 256><<<count, 256, 0, stream>>>(P);
  return cudaGetLastError();
}

} // namespace bsvd::detail::cuda
