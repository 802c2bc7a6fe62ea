// Kernels of the QR preprocessing (see qr.hpp). Included by one .cu file
// per precision.
#pragma once

#include "../common/device_scalar.cuh"
#include "../fused/fused.hpp" // max_smem_optin
#include "../common/matrix_io.cuh"
#include "qr.hpp"
#include "../common/side_stream.hpp"
#include "../tuning.hpp"

#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <type_traits>
#include <vector>

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
  int *nf = nullptr;        // per matrix: 1 when its load found a NaN or Inf
  const int *sel = nullptr; // a launch over some matrices: block -> matrix (null: all)
  int tpm = kQrThreads; // read by load_scaled: the launch's threads per matrix
  int qapply = 0;       // finish: X is formed by qr_apply_q_kernel, not here
  int cb = 0;           // qr_apply_q_kernel: columns of X per block
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
// gets the result: a butterfly within each warp, then one over the warps'
// partials (every warp reduces them alike). red: NT / 32 entries of shared
// memory. The values are >= 0 (norms' parts), so 0 is neutral for both.
template <int NT, bool MAX, class V> __device__ __forceinline__ V qr_block_reduce(V v, V *red) {
  static_assert(NT / 32 <= 32, "one lane per warp's partial");
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const V w = shfl_xor(v, o);
    v = MAX ? fmax(v, w) : v + w;
  }
  const int w = threadIdx.x / 32, l = threadIdx.x % 32;
  __syncthreads(); // red is reused by consecutive reductions
  if (l == 0) red[w] = v;
  __syncthreads();
  v = l < NT / 32 ? red[l] : V(0);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const V u = shfl_xor(v, o);
    v = MAX ? fmax(v, u) : v + u;
  }
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

// H_j^H (or H_j) applied to one column xc of X (rows j..mw-1) by one warp:
// w = f (x_j + sum_{i>j} conj(v_i) x_i), then x_i -= v_i w (v_j = 1), with
// f = conj(tau) (left, H^H) or tau (H). v_i = y[i] vs (SCALED; the same
// product the factorization stores, so the same bits) or y[i]. The sum
// runs in two interleaved partial sums per lane (a shorter dependent
// chain), then over the lanes. With PIV, the column's partial norms *n1,
// *n2 are downdated by its new row j (xLAQP2's rule, as
// householder_qr_pivoted in src/cpu/qr.cpp, recomputing the norm when the
// downdate cancels). Returns the new partial norm (PIV; every lane). The
// caller orders the lanes' writes before the column's next reader
// (__syncwarp or a barrier).
template <bool PIV, bool SCALED = false, class T>
__device__ __forceinline__ dreal_t<T> qr_reflect_column(int j, int mw, const T *y, T f, bool apply,
                                                       T *xc, dreal_t<T> *n1, dreal_t<T> *n2,
                                                       T vs = T()) {
  using R = dreal_t<T>;
  const int l = threadIdx.x % 32;
  const auto v = [&](int i) {
    if constexpr (SCALED) return y[i] * vs;
    else return y[i];
  };
  T xj = xc[j];
  // this column's partial norms, read before any lane writes them
  const R nv0 = PIV ? *n1 : R(0), nv2 = PIV ? *n2 : R(0);
  if (apply) {
    T a0 = dzero<T>(), a1 = dzero<T>();
    int i = j + 1 + l;
    for (; i + 32 < mw; i += 64) {
      dot_acc(a0, v(i), xc[i]);
      dot_acc(a1, v(i + 32), xc[i + 32]);
    }
    if (i < mw) dot_acc(a0, v(i), xc[i]);
    T acc = a0 + a1;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc = acc + shfl_xor(acc, o);
    const T wc = f * (acc + xj);
    for (int i2 = j + 1 + l; i2 < mw; i2 += 32) xc[i2] = xc[i2] - v(i2) * wc;
    xj = xj - wc;
    __syncwarp(); // every lane has read x_j (racecheck: X may be in shared memory)
    if (l == 0) xc[j] = xj;
  }
  R nv = nv0; // the same value in every lane
  if constexpr (PIV) {
    if (nv != R(0)) {
      R tt = dabs(xj) / nv;
      tt = fmax(R(0), (R(1) + tt) * (R(1) - tt));
      const R r = nv / nv2;
      __syncwarp(); // the column's new entries and norms: every lane has read
      if (tt * r * r <= sqrt(kEpsOf<R>)) {
        nv = qr_warp_nrm2(mw - j - 1, xc + j + 1);
        if (l == 0) *n2 = nv;
      } else {
        nv = nv * sqrt(tt);
      }
      if (l == 0) *n1 = nv;
    }
  }
  return nv;
}

// H_j^H (or H_j) applied to the columns c0..nc-1 of X (ld ldx), one warp
// per column (qr_reflect_column). Each column is finished by its warp
// alone (no barrier inside); the caller synchronizes before the columns
// are read by others. With PIV, each warp also offers its first column of
// largest partial norm in cand_v / cand_i[warp].
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
    const R nv = qr_reflect_column<PIV>(j, mw, v, f, apply, X + size_t(c) * ldx,
                                        PIV ? vn1 + c : nullptr, PIV ? vn2 + c : nullptr);
    if (PIV && nv > best_v) {
      best_v = nv;
      best_i = c;
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

// ||y[i0 .. mw-1]|| for the TSQR factorization: the plain sum of squares in
// one block reduction (two barriers; the max-then-scaled-sum of
// qr_block_nrm2 takes four). The load's prescaling (max |a_ij| at most
// sqrt(max_finite / (8 mw nw))) keeps it from overflowing; where it could
// have lost entries to underflow (a norm below sqrt(min_normal) / eps, the
// tiny columns of householder_step) the scaled two-pass norm is taken
// instead. The same norm to rounding, in another order.
template <int NT, class T, class R>
__device__ __forceinline__ R qr_block_nrm2_fast(int i0, int mw, const T *y, R *red) {
  R s = 0;
  for (int i = i0 + int(threadIdx.x); i < mw; i += NT) s += abs2(y[i]);
  s = qr_block_reduce<NT, false>(s, red);
  const R xn = sqrt(s);
  return xn >= sqrt(min_normal<R>()) / kEpsOf<R> ? xn : qr_block_nrm2<NT>(i0, mw, y, red);
}

// Step j's column y (rows j.., by the whole block): alpha = y_j, xnorm =
// ||y_{j+1..}||, identity (H_j = I), and the exponent e of the tiny-column
// scaling: a column whose entries are all below sqrt(min_normal) / eps (the
// rounding residue of a rank-deficient matrix can reach the subnormals) is
// scaled by 2^e in place and its norm taken again (householder_step,
// src/cpu/qr.cpp). Uniform over the block. FAST: the norms by
// qr_block_nrm2_fast (TSQR), else qr_block_nrm2 (the other kernels' bits).
template <int NT, bool FAST = false, class T>
__device__ __forceinline__ int qr_column_prepare(int j, int mw, T *y, dreal_t<T> *redr, T &alpha,
                                                 dreal_t<T> &xnorm, bool &identity) {
  using R = dreal_t<T>;
  const int t = threadIdx.x;
  const auto norm = [&] {
    if constexpr (FAST) return qr_block_nrm2_fast<NT>(j + 1, mw, y, redr);
    else return qr_block_nrm2<NT>(j + 1, mw, y, redr);
  };
  alpha = y[j];
  xnorm = norm();
  identity = xnorm == R(0) && qim(alpha) == R(0);
  const R big = fmax(fmax(fabs(qre(alpha)), fabs(qim(alpha))), xnorm);
  const int e = !identity && big < sqrt(min_normal<R>()) / kEpsOf<R> ? -dilogb(big) : 0;
  if (e != 0) { // the norm's reductions ordered every read of y before this
    for (int i = j + 1 + t; i < mw; i += NT) y[i] = dldexp(y[i], e);
    __syncthreads();
    xnorm = norm();
  }
  return e;
}

// The Householder reflector of a column with x_j = alpha whose rows below
// j have the norm xnorm after scaling by 2^e (householder_step,
// src/cpu/qr.cpp): tau, scal = 1 / (alpha' - beta) that scales v, and
// beta = R_jj scaled back. One definition for the one-block and the
// cluster factorization, whose equal bits rest on it.
template <class T> struct QrReflector {
  T tau, scal;
  dreal_t<T> beta;
};
template <class T>
__device__ __forceinline__ QrReflector<T> qr_reflector(T alpha, dreal_t<T> xnorm, int e) {
  using R = dreal_t<T>;
  const T as = dldexp(alpha, e);
  const R xs = xnorm; // of the scaled column
  const R ar = fabs(qre(as)), ai = fabs(qim(as));
  const R sc = fmax(fmax(ar, ai), xs);
  const R a1 = qre(as) / sc, a2 = qim(as) / sc, a3 = xs / sc;
  const R nrm = sc * sqrt(a1 * a1 + a2 * a2 + a3 * a3);
  const R beta = qre(as) >= R(0) ? -nrm : nrm;
  const T tj = qdiv(dfrom_real<T>(beta) - as, dfrom_real<T>(beta));
  return {tj, qdiv(done<T>(), as - dfrom_real<T>(beta)), dldexp(beta, -e)};
}

// Thread 0 of the one-block factorizations (qr_factor_kernel, TSQR's
// qr_tsqr_factor_kernel) after qr_column_prepare: tau_j into *tau (0 for
// the identity) and, otherwise, coef = (tau, scal) and beta for the block.
template <class T>
__device__ __forceinline__ void qr_store_reflector(bool identity, T alpha, dreal_t<T> xnorm, int e,
                                                   T *tau, T *coef, dreal_t<T> &beta) {
  if (identity) {
    *tau = dzero<T>();
  } else {
    const QrReflector<T> h = qr_reflector(alpha, xnorm, e);
    *tau = h.tau;
    coef[0] = h.tau;
    coef[1] = h.scal;
    beta = h.beta;
  }
}

// ---- factor: W = A (A^H), prescale, Householder QR in the workspace, B -----
// M.piv: with column pivoting (householder_qr_pivoted's twin: the column of
// largest partial norm first, the first one on ties; perm[j] = the column of
// W that became column j), and B = R^H for the blocked path.
// LOAD_ONLY: the load, its checks and the prescaling only (Y, escale, nf;
// a non-finite matrix's B, tau and perm as below); qrcp_cluster_kernel
// factors.
template <class Tstd, int NT, bool LOAD_ONLY = false>
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
  const int mi = P.sel ? P.sel[blockIdx.x] : int(blockIdx.x);
  const QrMat M = P.mats[mi];
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
  if (t == 0) {
    P.escale[mi] = nonfinite ? 0 : escale;
    if (P.nf) P.nf[mi] = nonfinite ? 1 : 0;
  }
  if (nonfinite) { // B of NaN: the solver of B reports the matrix
    for (int e = t; e < nw * nw; e += NT) B[e] = dnan<T>();
    for (int j = t; j < nw; j += NT) tau[j] = dzero<T>();
    if (piv)
      for (int j = t; j < nw; j += NT) perm[j] = j;
    return;
  }
  if constexpr (LOAD_ONLY) return;
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
    T alpha;
    R xnorm;
    bool identity;
    const int e = qr_column_prepare<NT>(j, mw, yj, redr, alpha, xnorm, identity);
    if (t == 0) qr_store_reflector(identity, alpha, xnorm, e, tau + j, coef, beta_s);
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
  if (P.qapply) return; // X: qr_apply_q_kernel
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

// ---- finish, the Q side, spread over the GPU --------------------------------
// X = Q [Z; 0] (the side of A's vectors that carries Q) by a grid of blocks:
// block (x, y) holds columns [y cb, y cb + cb) of matrix x's X in shared
// memory, one warp per column, and applies H_{nw-1} ... H_0 to them with
// qr_finish_kernel's operations (qr_reflect_column; the same bits). X
// crosses DRAM once, instead of once per reflection with one block per
// matrix. The reflectors pass through shared memory kQApplyChunk at a time
// (one coalesced read of each by the block).
// kQApplyThreads, kQApplyChunk (reflectors staged in shared memory at a
// time): qr.hpp
template <class Tstd>
__global__ void __launch_bounds__(kQApplyThreads) qr_apply_q_kernel(const __grid_constant__ QrParams<Tstd> P) {
  constexpr int NT = kQApplyThreads;
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  extern __shared__ __align__(16) unsigned char qsm[];
  T *Xs = reinterpret_cast<T *>(qsm);
  const int mi = int(blockIdx.x);
  const QrMat M = P.mats[mi];
  const int t = threadIdx.x, w = t / 32, mw = M.mw, nw = M.nw, b = M.b;
  const int c0 = int(blockIdx.y) * P.cb, nc = min(P.cb, nw - c0);
  if (nc <= 0) return;
  T *Vs = Xs + size_t(P.cb) * mw; // kQApplyChunk reflectors, mw rows each
  const bool wide = M.m < M.n, flip = wide || M.piv != 0;
  T *X = reinterpret_cast<T *>(wide ? P.batch.V.ptr(b) : P.batch.U.ptr(b));
  const int ldx = wide ? P.batch.V.ldm(b) : P.batch.U.ldm(b);
  const bool bad = P.info[mi] == BSVD_INFO_NONFINITE;
  if (bad) {
    for (long long e = t; e < (long long)mw * nc; e += NT) {
      const int k = int(e / mw), r = int(e - (long long)k * mw);
      X[r + size_t(c0 + k) * ldx] = dnan<T>();
    }
    return;
  }
  const T *Z = (flip ? P.V : P.U) + (flip ? M.V : M.U);
  for (long long e = t; e < (long long)mw * nc; e += NT) {
    const int k = int(e / mw), r = int(e - (long long)k * mw);
    Xs[e] = r < nw ? Z[r + size_t(c0 + k) * nw] : dzero<T>();
  }
  const T *Y = P.Y + M.y, *tau = P.tau + M.tau;
  for (int j1 = nw - 1; j1 >= 0; j1 -= kQApplyChunk) { // reflectors j1, j1 - 1, ... j0
    const int j0 = max(0, j1 - kQApplyChunk + 1);
    __syncthreads(); // the previous chunk's reflectors are no longer read
    for (int i = t; i < mw; i += NT) { // the chunk's loads in flight together
      T r[kQApplyChunk];
#pragma unroll
      for (int q = 0; q < kQApplyChunk; ++q)
        if (q <= j1 - j0 && i > j1 - q) r[q] = Y[size_t(j1 - q) * mw + i];
#pragma unroll
      for (int q = 0; q < kQApplyChunk; ++q)
        if (q <= j1 - j0 && i > j1 - q) Vs[size_t(q) * mw + i] = r[q];
    }
    __syncthreads();
    for (int q = 0; q <= j1 - j0; ++q) {
      const int j = j1 - q;
      const T tj = tau[j];
      if (qre(tj) == R(0) && qim(tj) == R(0)) continue; // H_j = I (uniform)
      for (int k = w; k < nc; k += NT / 32) {
        qr_reflect_column<false>(j, mw, Vs + size_t(q) * mw, tj, true, Xs + size_t(k) * mw,
                                 (R *)nullptr, (R *)nullptr);
        __syncwarp();
      }
    }
  }
  __syncthreads();
  for (long long e = t; e < (long long)mw * nc; e += NT) {
    const int k = int(e / mw), r = int(e - (long long)k * mw);
    X[r + size_t(c0 + k) * ldx] = Xs[e];
  }
}

// ---- finish, the Q side in compact WY form (the tall / wide QR path) --------
// Q = H_0 ... H_{nw-1} = I - V T V^H (LAPACK xLARFT, forward, columnwise:
// T_jj = tau_j, T(0:j, j) = -tau_j T(0:j, 0:j) G(0:j, j), G = V^H V), so
// X = Q [Z; 0] = [Z; 0] - V M with M = T (V_top^H Z), V_top V's first nw
// rows (unit lower triangular). qr_wy_m_kernel forms M (nw x nw, one block
// per matrix; stored over B, which the fused solve has consumed);
// qr_wy_apply_kernel forms X kWyRows rows per block, every row by one
// thread: X crosses DRAM once and Y is read once, with no dependent chain
// along the rows (qr_apply_q_kernel walks 2 nw column passes per
// reflector). The CPU twin is apply_householder_q_wy (src/cpu/qr.cpp),
// with every sum in the same order. Not for the pivoted path (its X = Q Z
// has no zero rows; qr_apply_q_kernel keeps it).
constexpr int kWyThreads = 256; // qr_wy_m_kernel
constexpr int kWyTile = 64;     // rows of Y staged at a time for G
constexpr int kWyLd = kWyTile + 1; // the tile's leading dimension: a warp's pairs read
                                   // columns kWyLd apart, in different banks (64 apart
                                   // they shared one: 0.91 ms for G at d 1000 x 2000x16)
constexpr int kWyRows = 128;    // qr_wy_apply_kernel: rows (= threads) per block
template <class T> constexpr size_t qr_wy_m_smem(int nw) {
  return (2 * size_t(nw) * nw + size_t(kWyLd) * nw) * sizeof(T);
}
template <class T> constexpr size_t qr_wy_apply_smem(int nw) {
  return (size_t(nw) * nw + size_t(kWyRows) * nw) * sizeof(T);
}

// M = T (V_top^H Z) (nw x nw, into Mo) for the reflectors of Y (mw x nw,
// leading dimension ldy), tau, and Z (nw x nw, leading dimension ldz); one
// block of kWyThreads, shared memory qr_wy_m_smem(nw).
template <class T>
__device__ void qr_wy_m_block(const T *Y, int ldy, int mw, int nw, const T *tau, const T *Z,
                              int ldz, T *Mo, unsigned char *wsm) {
  constexpr int NT = kWyThreads;
  const int t = threadIdx.x;
  T *G = reinterpret_cast<T *>(wsm); // G(i, j) at i + j nw (i < j); later W
  T *Tm = G + size_t(nw) * nw;       // T(i, j) at i + j nw (i <= j)
  T *tile = Tm + size_t(nw) * nw;    // kWyTile rows x nw, leading dimension kWyLd
  // v_k[r]: 0 above row k, 1 at row k, Y below
  const auto v = [&](int r, int k) {
    return r < k ? dzero<T>() : r == k ? done<T>() : Y[r + size_t(k) * ldy];
  };
  const int np = nw * (nw - 1) / 2; // pairs i < j, column by column
  for (int p = t; p < np; p += NT) G[p] = dzero<T>();
  for (int r0 = 0; r0 < mw; r0 += kWyTile) {
    const int nr = min(kWyTile, mw - r0);
    __syncthreads(); // the previous tile is no longer read
    for (int e = t; e < nr * nw; e += NT) {
      const int k = e / nr, r = e - k * nr;
      tile[r + k * kWyLd] = v(r0 + r, k);
    }
    __syncthreads();
    for (int p = t; p < np; p += NT) {
      int j = 1, q = p; // pair p = (i, j): j-th column holds j pairs
      while (q >= j) {
        q -= j;
        ++j;
      }
      const int i = q;
      T acc = G[p];
      for (int r = max(0, j - r0); r < nr; ++r) dot_acc(acc, tile[r + i * kWyLd], tile[r + j * kWyLd]);
      G[p] = acc;
    }
  }
  __syncthreads();
  // T, column by column: w = -tau_j G(0:j, j), then T(0:j, j) = T(0:j, 0:j) w
  for (int j = 0; j < nw; ++j) {
    const T tj = tau[j];
    const T *gj = G + size_t(j) * (j - 1) / 2; // G(0:j, j), packed
    for (int i = t; i < j; i += NT) {
      T acc = dzero<T>();
      for (int k = i; k < j; ++k) acc = acc + Tm[i + size_t(k) * nw] * (dzero<T>() - tj * gj[k]);
      Tm[i + size_t(j) * nw] = acc;
    }
    if (t == 0) Tm[j + size_t(j) * nw] = tj;
    __syncthreads();
  }
  // W = V_top^H Z (over G), then M = T W into B
  T *W = G;
  for (int e = t; e < nw * nw; e += NT) {
    const int c = e / nw, k = e - c * nw;
    T acc = dzero<T>();
    for (int r = k; r < nw; ++r) dot_acc(acc, v(r, k), Z[r + size_t(c) * ldz]);
    W[e] = acc;
  }
  __syncthreads();
  for (int e = t; e < nw * nw; e += NT) {
    const int c = e / nw, i = e - c * nw;
    T acc = dzero<T>();
    for (int k = i; k < nw; ++k) acc = acc + Tm[i + size_t(k) * nw] * W[k + size_t(c) * nw];
    Mo[e] = acc;
  }
}

template <class Tstd>
__global__ void __launch_bounds__(kWyThreads) qr_wy_m_kernel(const __grid_constant__ QrParams<Tstd> P) {
  using T = dev_t<Tstd>;
  extern __shared__ __align__(16) unsigned char wsm[];
  const int mi = int(blockIdx.x);
  const QrMat M = P.mats[mi];
  if (P.info[mi] == BSVD_INFO_NONFINITE) return; // qr_wy_apply_kernel writes NaN
  const bool wide = M.m < M.n;
  const T *Z = (wide ? P.V : P.U) + (wide ? M.V : M.U);
  qr_wy_m_block(P.Y + M.y, M.mw, M.mw, M.nw, P.tau + M.tau, Z, M.nw, P.B + M.B, wsm);
}

// Rows [r0, r0 + kWyRows) of X = [Z; 0] - V M (mw x nw, leading dimension
// ldx; one row per thread), V from Y (leading dimension ldy), M from Mo,
// Z's leading dimension ldz; shared memory qr_wy_apply_smem(nw).
template <class T>
__device__ void qr_wy_apply_rows(const T *Mo, const T *Y, int ldy, int mw, int nw, const T *Z,
                                 int ldz, T *X, int ldx, int r0, unsigned char *wsm) {
  const int t = threadIdx.x, r = r0 + t;
  T *Ms = reinterpret_cast<T *>(wsm);   // M, nw x nw
  T *Xs = Ms + size_t(nw) * nw;         // this thread's row at t + c kWyRows
  for (int e = t; e < nw * nw; e += kWyRows) Ms[e] = Mo[e];
  __syncthreads();
  if (r >= mw) return;
  for (int c = 0; c < nw; ++c) Xs[t + c * kWyRows] = r < nw ? Z[r + size_t(c) * ldz] : dzero<T>();
  const int kmax = min(r, nw - 1);
  for (int k = 0; k <= kmax; ++k) {
    const T vk = r == k ? done<T>() : Y[r + size_t(k) * ldy];
    for (int c = 0; c < nw; ++c)
      Xs[t + c * kWyRows] = Xs[t + c * kWyRows] - vk * Ms[k + size_t(c) * nw];
  }
  for (int c = 0; c < nw; ++c) X[r + size_t(c) * ldx] = Xs[t + c * kWyRows];
}

template <class Tstd>
__global__ void __launch_bounds__(kWyRows) qr_wy_apply_kernel(const __grid_constant__ QrParams<Tstd> P) {
  using T = dev_t<Tstd>;
  extern __shared__ __align__(16) unsigned char wsm[];
  const int mi = int(blockIdx.x);
  const QrMat M = P.mats[mi];
  const int t = threadIdx.x, mw = M.mw, nw = M.nw, b = M.b;
  const int r0 = int(blockIdx.y) * kWyRows, r = r0 + t;
  if (r0 >= mw) return;
  const bool wide = M.m < M.n;
  T *X = reinterpret_cast<T *>(wide ? P.batch.V.ptr(b) : P.batch.U.ptr(b));
  const int ldx = wide ? P.batch.V.ldm(b) : P.batch.U.ldm(b);
  if (P.info[mi] == BSVD_INFO_NONFINITE) {
    if (r < mw)
      for (int c = 0; c < nw; ++c) X[r + size_t(c) * ldx] = dnan<T>();
    return;
  }
  const T *Z = (wide ? P.V : P.U) + (wide ? M.V : M.U);
  qr_wy_apply_rows(P.B + M.B, P.Y + M.y, mw, mw, nw, Z, nw, X, ldx, r0, wsm);
}

// ---- TSQR (QrMat nc > 0; src/core/tsqr.hpp) ------------------------------------
// Level 1 (LEVEL = 1): one block per chunk job (P.tjobs: matrix, chunk),
// the chunk's rows of Y (already loaded and prescaled: qr_factor_kernel's
// load) factored in shared memory by Householder steps (the twin's
// householder_step: the same reflector, qr_reflector, and tiny-column
// scaling; the norm in one reduction and the scaling of v folded into the
// next step, four barriers per step instead of seven),
// its reflectors written back in place, its tau at tau1 + c nw and its R
// (zeros below the diagonal) at rows [c nw, c nw + nw) of the stacked Z.
// Level 2 (LEVEL = 2): one block per matrix, Z (nc nw x nw) factored the
// same way in place (tau2), and B = R (tall) or R^H (wide) as
// qr_factor_kernel writes it. A matrix whose load found a NaN or Inf is
// skipped (its B is NaN already). The CPU twin is tsqr_factor
// (src/cpu/qr.cpp). Dynamic shared memory: the largest rows x nw block.
// The matrix mi and chunk c of this block's TSQR job: level 1 reads the
// (matrix, chunk) pair of job blockIdx.x from jobs, level 2 has one block
// per matrix (c = 0). Every TSQR kernel decodes its job by this one.
template <int LEVEL> __device__ __forceinline__ void tsqr_job(const int *jobs, int &mi, int &c) {
  mi = LEVEL == 1 ? jobs[2 * blockIdx.x] : int(blockIdx.x);
  c = LEVEL == 1 ? jobs[2 * blockIdx.x + 1] : 0;
}
template <class Tstd, int NT, int LEVEL>
__global__ void __launch_bounds__(NT) qr_tsqr_factor_kernel(const __grid_constant__ QrParams<Tstd> P) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  extern __shared__ __align__(16) unsigned char tsm[];
  __shared__ R redr[NT / 32];
  __shared__ T coef[2]; // tau, 1 / (alpha - beta) (of the scaled column)
  __shared__ R beta_s;
  int mi, c;
  tsqr_job<LEVEL>(P.tjobs, mi, c);
  const QrMat M = P.mats[mi];
  if (P.nf[mi]) return;
  const int t = threadIdx.x, nw = M.nw, lz = M.nc * nw;
  const int r0 = c * M.hc;
  const int rows = LEVEL == 1 ? min(M.mw, r0 + M.hc) - r0 : lz;
  T *A = LEVEL == 1 ? P.Y + M.y + r0 : P.Zs + M.zs;
  const int lda = LEVEL == 1 ? M.mw : lz;
  T *tau = LEVEL == 1 ? P.tau1 + M.t1 + size_t(c) * nw : P.tau + M.tau;
  T *S = reinterpret_cast<T *>(tsm); // rows x nw, leading dimension rows
  for (int e = t; e < rows * nw; e += NT) {
    const int k = e / rows, r = e - k * rows;
    S[e] = A[r + size_t(k) * lda];
  }
  __syncthreads();
  bool prev_id = true; // step j - 1 was the identity (nothing to scale)
  const int w = t / 32;
  for (int j = 0; j <= nw; ++j) {
    // Step j - 1's v: its rows below j - 1 scaled (the step's warps read
    // them unscaled, with the scaling applied on the fly), R_{j-1,j-1}.
    if (j > 0 && !prev_id) {
      T *yp = S + size_t(j - 1) * rows;
      const T scal = coef[1];
      for (int i = j + t; i < rows; i += NT) yp[i] = yp[i] * scal;
      if (t == 0) yp[j - 1] = dfrom_real<T>(beta_s);
    }
    if (j == nw) break;
    T *yj = S + size_t(j) * rows;
    T alpha;
    R xnorm;
    bool identity;
    // (the norm's barriers order the scaling above before any later write)
    const int e = qr_column_prepare<NT, true>(j, rows, yj, redr, alpha, xnorm, identity);
    if (t == 0) qr_store_reflector(identity, alpha, xnorm, e, tau + j, coef, beta_s);
    __syncthreads();
    if (!identity) {
      const T f = dconj(coef[0]), vs = coef[1];
      for (int cc = j + 1 + w; cc < nw; cc += NT / 32)
        qr_reflect_column<false, true>(j, rows, yj, f, true, S + size_t(cc) * rows, (R *)nullptr,
                                       (R *)nullptr, vs);
    }
    prev_id = identity;
    __syncthreads();
  }
  __syncthreads();
  for (int e = t; e < rows * nw; e += NT) {
    const int k = e / rows, r = e - k * rows;
    A[r + size_t(k) * lda] = S[e];
  }
  if constexpr (LEVEL == 1) {
    T *Z = P.Zs + M.zs + size_t(c) * nw; // rows [c nw, c nw + nw) of the stacked Z
    for (int e = t; e < nw * nw; e += NT) {
      const int k = e / nw, r = e - k * nw;
      Z[r + size_t(k) * lz] = r <= k ? S[r + size_t(k) * rows] : dzero<T>();
    }
  } else {
    T *B = P.B + M.B;
    const bool flip = M.m < M.n;
    for (int e = t; e < nw * nw; e += NT) {
      const int k = e / nw, r = e - k * nw;
      T v = dzero<T>();
      if (!flip && r <= k) v = S[r + size_t(k) * rows];
      if (flip && r >= k) v = dconj(S[k + size_t(r) * rows]);
      B[e] = v;
    }
  }
}
template <class T> constexpr size_t qr_tsqr_smem(int rows, int nw) {
  return size_t(rows) * size_t(nw) * sizeof(T);
}

// X = Q [Z_B; 0] with TSQR's Q, in compact WY form per level (the twin:
// tsqr_apply_q_wy): level 2 (one block per matrix; its apply over the
// rows of X2) X2 = Q_2 [Z_B; 0] (nc nw x nw) with M_2 stored over B; level
// 1 (one block per chunk job) X_c = Q_c [X2_c; 0] into the chunk's rows of
// the caller's U (V when wide), with M_c in M1. A non-finite matrix's
// rows are NaN (its info says so).
template <class Tstd, int LEVEL>
__global__ void __launch_bounds__(kWyThreads) qr_tsqr_wy_m_kernel(const __grid_constant__ QrParams<Tstd> P) {
  using T = dev_t<Tstd>;
  extern __shared__ __align__(16) unsigned char wsm[];
  int mi, c;
  tsqr_job<LEVEL>(P.tjobs, mi, c);
  const QrMat M = P.mats[mi];
  if (P.info[mi] == BSVD_INFO_NONFINITE) return;
  const int nw = M.nw, lz = M.nc * nw;
  if constexpr (LEVEL == 2) {
    const bool wide = M.m < M.n;
    const T *Zb = (wide ? P.V : P.U) + (wide ? M.V : M.U);
    qr_wy_m_block(P.Zs + M.zs, lz, lz, nw, P.tau + M.tau, Zb, nw, P.B + M.B, wsm);
  } else {
    const int r0 = c * M.hc, rows = min(M.mw, r0 + M.hc) - r0;
    qr_wy_m_block(P.Y + M.y + r0, M.mw, rows, nw, P.tau1 + M.t1 + size_t(c) * nw,
                  P.X2 + M.zs + size_t(c) * nw, lz, P.M1 + M.zs + size_t(c) * nw * nw, wsm);
  }
}
template <class Tstd, int LEVEL>
__global__ void __launch_bounds__(kWyRows) qr_tsqr_wy_apply_kernel(const __grid_constant__ QrParams<Tstd> P) {
  using T = dev_t<Tstd>;
  extern __shared__ __align__(16) unsigned char wsm[];
  int mi, c;
  tsqr_job<LEVEL>(P.tjobs, mi, c);
  const QrMat M = P.mats[mi];
  const int nw = M.nw, lz = M.nc * nw, b = M.b;
  const int r0 = c * M.hc;
  const int rows = LEVEL == 1 ? min(M.mw, r0 + M.hc) - r0 : lz;
  const int q0 = int(blockIdx.y) * kWyRows; // this block's rows of the level's X
  if (q0 >= rows) return;
  const bool wide = M.m < M.n;
  T *X;
  int ldx;
  if constexpr (LEVEL == 2) {
    X = P.X2 + M.zs;
    ldx = lz;
  } else {
    X = reinterpret_cast<T *>(wide ? P.batch.V.ptr(b) : P.batch.U.ptr(b));
    ldx = wide ? P.batch.V.ldm(b) : P.batch.U.ldm(b);
    X += r0;
  }
  if (P.info[mi] == BSVD_INFO_NONFINITE) {
    const int r = q0 + int(threadIdx.x);
    if (r < rows)
      for (int k = 0; k < nw; ++k) X[r + size_t(k) * ldx] = dnan<T>();
    return;
  }
  if constexpr (LEVEL == 2) {
    const T *Zb = (wide ? P.V : P.U) + (wide ? M.V : M.U);
    qr_wy_apply_rows(P.B + M.B, P.Zs + M.zs, lz, lz, nw, Zb, nw, X, ldx, q0, wsm);
  } else {
    qr_wy_apply_rows(P.M1 + M.zs + size_t(c) * nw * nw, P.Y + M.y + r0, M.mw, rows, nw,
                     P.X2 + M.zs + size_t(c) * nw, lz, X, ldx, q0, wsm);
  }
}

// ---- the factorization on a cluster of thread blocks -------------------------
// One matrix per thread-block cluster of C blocks (1 ... 16), held in their
// shared memory: block r owns the columns [r cpb, r cpb + cpb) of W.
// Without PIV (the tall / wide QR path) the pivot of step j is column j
// and B = R (tall) or R^H (wide), as qr_factor_kernel's. With PIV: the
// columns stay where they are; at[k] is the column at position k of
// householder_qr_pivoted's swapped order and loc[c] the position of column
// c, so that the pivot is that kernel's (the largest partial norm, the
// first position on ties). Step j:
//  - every block copies the pivot column's rows j.. from its owner's shared
//    memory (DSMEM) into one of two buffers (by step parity) and forms the
//    reflector itself with qr_factor_kernel's operations, so every block
//    and the one-block kernel get the same bits;
//  - it applies the reflector to its own columns (v_i formed on the fly as
//    the product the one-block kernel stores), downdates their norms, and
//    writes its best column into every block's inbox;
//  - one cluster barrier; then every warp reads the pivot of step j + 1
//    from its own inbox.
// The owner writes the reflector into the pivot column at the start of the
// next step, once the barrier has ordered every block's copy before it. At
// the end each block writes its columns to Y in position order, and its
// rows of B = R^H (R's rows from qrcp_rank's kr dropped). Needs the load
// first (qr_factor_kernel<..., LOAD_ONLY>: Y, escale, nf).
template <class T> __host__ __device__ constexpr size_t qrcp_cluster_smem(int cpb, int mw, int nw) {
  using R = dreal_t<T>;
  return (size_t(cpb) * mw + 2 * size_t(mw)) * sizeof(T) + size_t(2 * cpb + nw) * sizeof(R) +
         size_t(2 * nw) * sizeof(int);
}
template <class Tstd, bool PIV, int NT>
__global__ void __launch_bounds__(NT) qrcp_cluster_kernel(const __grid_constant__ QrParams<Tstd> P,
                                                          int cpb) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  __trap(); // clusters need compute capability 9.0; qrcp_cluster_launch refuses before
#else
  static_assert(NT % 32 == 0 && NT / 32 <= 32, "warp 0's lanes hold the warps' candidates");
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  namespace cg = cooperative_groups;
  cg::cluster_group cl = cg::this_cluster();
  const int C = int(cl.num_blocks()), rk = int(cl.block_rank());
  const int mi = P.sel[blockIdx.x / C];
  const QrMat M = P.mats[mi];
  if (P.nf[mi]) return; // the whole cluster returns: no barrier is owed
  __shared__ R redr[NT / 32];
  __shared__ T cf[2]; // conj(tau), 1 / (alpha - beta) of this step's reflector
  __shared__ R cb_s;  // its beta (R_jj)
  __shared__ R cand_v[NT / 32];
  __shared__ int cand_i[NT / 32];
  __shared__ R in_v[2][16]; // the cluster's blocks' best columns by step parity
  __shared__ int in_i[2][16], in_p[2][16]; // (and their positions), written into
                                           // every block by each block (DSMEM)
  extern __shared__ __align__(16) unsigned char qsm[];
  const int t = threadIdx.x, w = t / 32, l = t % 32, mw = M.mw, nw = M.nw;
  const int c0 = rk * cpb, nc = max(0, min(cpb, nw - c0));
  T *Xs = reinterpret_cast<T *>(qsm);
  T *vb = Xs + size_t(cpb) * mw; // two copies of the pivot column, by step parity
  R *n1 = reinterpret_cast<R *>(vb + 2 * mw), *n2 = n1 + cpb, *rd = n2 + cpb;
  int *at = reinterpret_cast<int *>(rd + nw), *loc = at + nw;
  T *Y = P.Y + M.y, *tau = P.tau + M.tau, *B = P.B + M.B;
  int *perm = P.perm + M.tau;
  for (long long e = t; e < (long long)nc * mw; e += NT) Xs[e] = Y[size_t(c0) * mw + e];
  for (int k = t; k < nw; k += NT) at[k] = loc[k] = k;
  __syncthreads();
  auto pos = [&](int c) { return c < nw ? loc[c] : nw; };
  // the best of a warp's lanes' (v, i, position): the largest v, the first
  // position on ties (positions are distinct; "none" is (-1, nw, nw));
  // every lane gets it
  auto warp_best = [&](R &v, int &i, int &ps) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const R ov = shfl_xor(v, o);
      const int oi = __shfl_xor_sync(0xffffffffu, i, o), op = __shfl_xor_sync(0xffffffffu, ps, o);
      if (ov > v || (ov == v && op < ps)) {
        v = ov;
        i = oi;
        ps = op;
      }
    }
  };
  // warp 0: the block's best of the warps' candidates (cand_v / cand_i,
  // after a barrier) into slot par of every block's inbox (lane r writes
  // block r's entry rk)
  auto offer = [&](int par) {
    __syncthreads();
    if (w == 0) {
      R v = l < NT / 32 ? cand_v[l] : R(-1); // lanes without a warp: "none"
      int i = l < NT / 32 ? cand_i[l] : nw, ps = pos(i);
      warp_best(v, i, ps);
      if (l < C) {
        cl.map_shared_rank(&in_v[0][0], l)[par * 16 + rk] = v;
        cl.map_shared_rank(&in_i[0][0], l)[par * 16 + rk] = i;
        cl.map_shared_rank(&in_p[0][0], l)[par * 16 + rk] = ps;
      }
    }
  };
  // the pivot, by every warp: the best of the inbox's slot par (after the
  // cluster barrier; no loc lookups, which the next step changes)
  auto pick = [&](int par) {
    R v = R(-1);
    int i = nw, ps = nw;
    if (l < C) {
      v = in_v[par][l];
      i = in_i[par][l];
      ps = in_p[par][l];
    }
    warp_best(v, i, ps);
    return i;
  };
  if constexpr (PIV) {
    R bv = R(-1);
    int bi = nw;
    for (int k = w; k < nc; k += NT / 32) {
      const R nv = qr_warp_nrm2(mw, Xs + size_t(k) * mw);
      if (l == 0) n1[k] = n2[k] = nv;
      if (nv > bv) {
        bv = nv;
        bi = c0 + k;
      }
    }
    if (l == 0) {
      cand_v[w] = bv;
      cand_i[w] = bi;
    }
    cl.sync(); // every block of the cluster runs before any writes another's memory
    offer(0);
  }
  cl.sync();
  int p = PIV ? pick(0) : 0;
  int pend = -1, pj = 0; // my column awaiting step pj's reflector (vb of pj's parity)
  bool pid = false;      // ... an identity step (R_jj stays alpha)
  R pbeta = R(0);
  T pscal = dzero<T>();
  // the owner writes step pj's reflector into its pivot column, scaled as
  // the one-block kernel stores it
  auto write_pending = [&]() {
    if (pend < 0) return;
    T *xc = Xs + size_t(pend) * mw;
    const T *vp = vb + size_t(pj & 1) * mw;
    for (int i = pj + 1 + t; i < mw; i += NT) xc[i] = pid ? vp[i] : vp[i] * pscal;
    if (t == 0 && !pid) xc[pj] = dfrom_real<T>(pbeta);
  };
  for (int j = 0; j < nw; ++j) {
    T *vc = vb + size_t(j & 1) * mw; // this step's copy of the pivot column
    write_pending();
    if (t == 0) { // p moves to position j, the column there to p's
      const int q = loc[p], cj = at[j];
      at[q] = cj;
      loc[cj] = q;
      at[j] = p;
      loc[p] = j;
    }
    {
      const int ow = p / cpb;
      const T *src = cl.map_shared_rank(Xs, ow) + size_t(p - ow * cpb) * mw;
      for (int i = j + t; i < mw; i += NT) vc[i] = src[i];
    }
    __syncthreads();
    // the reflector: qr_factor_kernel's operations on the copy
    T alpha;
    R xnorm;
    bool identity;
    const int e = qr_column_prepare<NT>(j, mw, vc, redr, alpha, xnorm, identity);
    if (t == 0) { // the coefficients: one thread, then the block reads them
      if (identity) {
        if (rk == 0) tau[j] = dzero<T>();
        rd[j] = dabs(alpha);
        cf[0] = cf[1] = dzero<T>();
        cb_s = R(0);
      } else {
        const QrReflector<T> h = qr_reflector(alpha, xnorm, e);
        if (rk == 0) tau[j] = h.tau;
        cf[0] = dconj(h.tau);
        cf[1] = h.scal;
        cb_s = h.beta;
        rd[j] = fabs(cb_s);
      }
    }
    __syncthreads();
    const T f = cf[0], scal = cf[1];
    const R beta_s = cb_s;
    // my columns at positions after j
    R bv = R(-1);
    int bi = nw, bp = nw;
    for (int k = w; k < nc; k += NT / 32) {
      const int c = c0 + k;
      if (loc[c] <= j) continue;
      const R nv = qr_reflect_column<PIV, true>(j, mw, vc, f, !identity, Xs + size_t(k) * mw,
                                                PIV ? n1 + k : nullptr, PIV ? n2 + k : nullptr,
                                                scal);
      if (nv > bv || (nv == bv && loc[c] < bp)) {
        bv = nv;
        bi = c;
        bp = loc[c];
      }
    }
    if (l == 0) {
      cand_v[w] = bv;
      cand_i[w] = bi;
    }
    const int par = (j + 1) & 1;
    if constexpr (PIV) offer(par);
    pend = p >= c0 && p < c0 + nc ? p - c0 : -1;
    pj = j;
    pid = identity;
    pbeta = beta_s;
    pscal = scal;
    cl.sync(); // every copy of this step's pivot column and every offer done
    if (j + 1 < nw) p = PIV ? pick(par) : j + 1;
  }
  write_pending();
  __syncthreads();
  const int kr = PIV ? qrcp_rank<R>(nw, [&](int k) { return rd[k]; }) : nw;
  for (long long e = t; e < (long long)nc * mw; e += NT) {
    const int k = int(e / mw), r = int(e - (long long)k * mw);
    Y[r + size_t(loc[c0 + k]) * mw] = Xs[e];
  }
  if (PIV && rk == 0)
    for (int k = t; k < nw; k += NT) perm[k] = at[k];
  const bool flip = PIV || M.m < M.n;
  for (long long e = t; e < (long long)nc * nw; e += NT) {
    const int k = int(e / nw), cq = int(e - (long long)k * nw), r = loc[c0 + k];
    const T x = Xs[size_t(k) * mw + cq]; // R[cq, r]: column c at position r holds R's column r
    if (flip) // B = R^H: B's row r (B[r, cq] = conj(R[cq, r]))
      B[r + size_t(cq) * nw] = cq <= r && cq < kr ? dconj(x) : dzero<T>();
    else // B = R: B's column r
      B[cq + size_t(r) * nw] = cq <= r ? x : dzero<T>();
  }
  cl.sync(); // no block leaves while another may still read its shared memory
#endif
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
  P.tau1 = reinterpret_cast<T *>(ws + L.tau1);
  P.Zs = reinterpret_cast<T *>(ws + L.Zs);
  P.X2 = reinterpret_cast<T *>(ws + L.X2);
  P.M1 = reinterpret_cast<T *>(ws + L.M1);
  P.tjobs = reinterpret_cast<const int *>(ws + L.tjobs);
  return P;
}

// The TSQR factorization (QrLayout tsqr, QrMat nc > 0): the one-block
// kernel's load (checks, prescaling), the chunks, the stacked R factors.
template <class Tstd>
cudaError_t qr_tsqr_factor(QrParams<Tstd> P, int count, unsigned char *ws, const QrLayout &L,
                           const QrMat *hmats, cudaStream_t stream) {
  using T = dev_t<Tstd>;
  std::vector<int> jobs;
  jobs.reserve(size_t(2 * L.chunks));
  int rows_max = 0, lz_max = 0, nw_max = 0;
  for (int i = 0; i < count; ++i) {
    const QrMat &q = hmats[i];
    for (int c = 0; c < q.nc; ++c) {
      jobs.push_back(i);
      jobs.push_back(c);
    }
    rows_max = std::max(rows_max, q.hc);
    lz_max = std::max(lz_max, q.nc * q.nw);
    nw_max = std::max(nw_max, q.nw);
  }
  if ((long long)jobs.size() != 2 * L.chunks) return cudaErrorInvalidValue;
  if (cudaError_t e = cudaMemcpyAsync(ws + L.tjobs, jobs.data(), jobs.size() * sizeof(int),
                                      cudaMemcpyHostToDevice, stream))
    return e;
  P.nf = reinterpret_cast<int *>(ws + L.nf);
  P.sel = nullptr;
  P.tpm = kQrThreads;
  qr_factor_kernel<Tstd, kQrThreads, true><<<count, kQrThreads, 0, stream>>>(P);
  if (cudaError_t e = cudaGetLastError()) return e;
  const size_t s1 = qr_tsqr_smem<T>(rows_max, nw_max), s2 = qr_tsqr_smem<T>(lz_max, nw_max);
  auto k1 = qr_tsqr_factor_kernel<Tstd, kQrThreads, 1>;
  auto k2 = qr_tsqr_factor_kernel<Tstd, kQrThreads, 2>;
  if (s1 > 48 * 1024)
    if (cudaError_t e = cudaFuncSetAttribute(k1, cudaFuncAttributeMaxDynamicSharedMemorySize, int(s1)))
      return e;
  if (s2 > 48 * 1024)
    if (cudaError_t e = cudaFuncSetAttribute(k2, cudaFuncAttributeMaxDynamicSharedMemorySize, int(s2)))
      return e;
  k1<<<unsigned(L.chunks), kQrThreads, s1, stream>>>(P);
  if (cudaError_t e = cudaGetLastError()) return e;
  k2<<<unsigned(count), kQrThreads, s2, stream>>>(P);
  return cudaGetLastError();
}

// X = Q [Z_B; 0] by TSQR's two levels (after qr_finish_kernel with qapply).
template <class Tstd>
cudaError_t qr_tsqr_apply(const QrParams<Tstd> &P, int count, const QrLayout &L,
                          const QrMat *hmats, cudaStream_t stream) {
  using T = dev_t<Tstd>;
  int hc_max = 0, lz_max = 0, nw_max = 0;
  for (int i = 0; i < count; ++i) {
    hc_max = std::max(hc_max, hmats[i].hc);
    lz_max = std::max(lz_max, hmats[i].nc * hmats[i].nw);
    nw_max = std::max(nw_max, hmats[i].nw);
  }
  const size_t sm = qr_wy_m_smem<T>(nw_max), sa = qr_wy_apply_smem<T>(nw_max);
  auto m2 = qr_tsqr_wy_m_kernel<Tstd, 2>;
  auto m1 = qr_tsqr_wy_m_kernel<Tstd, 1>;
  auto a2 = qr_tsqr_wy_apply_kernel<Tstd, 2>;
  auto a1 = qr_tsqr_wy_apply_kernel<Tstd, 1>;
  for (auto k : {m2, m1})
    if (sm > 48 * 1024)
      if (cudaError_t e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sm)))
        return e;
  for (auto k : {a2, a1})
    if (sa > 48 * 1024)
      if (cudaError_t e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sa)))
        return e;
  m2<<<unsigned(count), kWyThreads, sm, stream>>>(P);
  a2<<<dim3(unsigned(count), unsigned((lz_max + kWyRows - 1) / kWyRows)), kWyRows, sa, stream>>>(P);
  m1<<<unsigned(L.chunks), kWyThreads, sm, stream>>>(P);
  a1<<<dim3(unsigned(L.chunks), unsigned((hc_max + kWyRows - 1) / kWyRows)), kWyRows, sa, stream>>>(P);
  return cudaGetLastError();
}

// Environment switches for measurements and the same-bits tests:
// BSVD_QR_CLUSTER=0 factors every matrix with the one-block kernel;
// BSVD_QR_APPLY=0 forms X in qr_finish_kernel (one block per matrix).
inline bool qr_env_on(const char *name) {
  const char *e = std::getenv(name);
  return !(e && e[0] == '0');
}

// Blocks per cluster for the factorization of an mw x nw matrix, by plan
// (qrcp_throughput_rule, tuning.hpp). Latency plan (kQrcpThreads per block): the
// fewest (1, 2, 4, 8, 16) that leave each block at most 32 columns (one per
// warp) within smem_max bytes, else 16 if that fits. Throughput plan
// (kQrcpThroughputThreads per block): the fewest that fit smem_max, however
// many columns each block then holds. 0: none fits (the one-block kernel
// factors it from global memory).
constexpr size_t kQrcpStaticSmem = 2048; // qrcp_cluster_kernel's static shared memory, at most
template <class T> int qrcp_cluster_size(int mw, int nw, size_t smem_max, bool throughput = false) {
  smem_max -= std::min<size_t>(smem_max, kQrcpStaticSmem);
  for (int c = 1; c <= 16; c *= 2) {
    const int cpb = (nw + c - 1) / c;
    if ((throughput || cpb <= 32) && qrcp_cluster_smem<T>(cpb, mw, nw) <= smem_max) return c;
  }
  return qrcp_cluster_smem<T>((nw + 15) / 16, mw, nw) <= smem_max ? 16 : 0;
}

// qr.hpp's qrcp_cluster_fit (instantiated by the qr_<p>.cu files).
template <class T> int qrcp_cluster_fit(int m, int n) {
  if (cc_major() < 9) return 0; // no thread-block clusters before compute capability 9.0
  return qrcp_cluster_size<dev_t<T>>(std::max(m, n), std::min(m, n), size_t(max_smem_optin()), true);
}

template <class Tstd, bool PIV, int NT> cudaLaunchConfig_t qrcp_cluster_config(int count, int c,
                                                                                size_t smem,
                                                                                cudaStream_t stream,
                                                                                cudaLaunchAttribute *at) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(unsigned(count) * unsigned(c));
  cfg.blockDim = dim3(NT);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  at[0].id = cudaLaunchAttributeClusterDimension;
  at[0].val.clusterDim.x = unsigned(c);
  at[0].val.clusterDim.y = 1;
  at[0].val.clusterDim.z = 1;
  cfg.attrs = at;
  cfg.numAttrs = 1;
  return cfg;
}

// Clusters of c blocks of NT threads with smem bytes each that the GPU runs
// at once (0: none fits, or the attributes were refused: no clusters before
// compute capability 9.0, no 16-block clusters, not this much shared
// memory).
template <class Tstd, bool PIV, int NT> int qrcp_active_clusters(int c, size_t smem) {
  auto kern = qrcp_cluster_kernel<Tstd, PIV, NT>;
  if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)) != cudaSuccess ||
      (c > 8 && cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) !=
                    cudaSuccess)) {
    (void)cudaGetLastError();
    return 0;
  }
  cudaLaunchAttribute at[1];
  const cudaLaunchConfig_t cfg = qrcp_cluster_config<Tstd, PIV, NT>(c, c, smem, nullptr, at);
  int fit = 0;
  if (cudaOccupancyMaxActiveClusters(&fit, kern, &cfg) != cudaSuccess) {
    (void)cudaGetLastError(); // the query's error is this function's answer
    return 0;
  }
  return fit;
}

// f(std::bool_constant<PIV>, std::integral_constant<int, NT>) for the
// pivoting and the plan (thr: the throughput plan's block size): the one
// place that maps the two run-time choices to the kernel's instances.
template <class F> decltype(auto) qrcp_with_instance(bool piv, bool thr, F &&f) {
  using Lat = std::integral_constant<int, kQrcpThreads>;
  using Thr = std::integral_constant<int, kQrcpThroughputThreads>;
  if (piv) return thr ? f(std::true_type{}, Thr{}) : f(std::true_type{}, Lat{});
  return thr ? f(std::false_type{}, Thr{}) : f(std::false_type{}, Lat{});
}

// One launch of qrcp_cluster_kernel over P.sel[0, count) with clusters of
// c blocks of NT threads; cudaErrorNotSupported when no such cluster fits
// the GPU.
template <class Tstd, bool PIV, int NT>
cudaError_t qrcp_cluster_launch(const QrParams<Tstd> &P, int count, int c, int cpb, size_t smem,
                                cudaStream_t stream) {
  // Any refusal here means "not supported": the caller factors these
  // matrices with the one-block kernel.
  if (qrcp_active_clusters<Tstd, PIV, NT>(c, smem) < 1) return cudaErrorNotSupported;
  cudaLaunchAttribute at[1];
  const cudaLaunchConfig_t cfg = qrcp_cluster_config<Tstd, PIV, NT>(count, c, smem, stream, at);
  return cudaLaunchKernelEx(&cfg, qrcp_cluster_kernel<Tstd, PIV, NT>, P, cpb);
}

template <class Tstd>
void qr_factor_block_launch(QrParams<Tstd> P, int count, int nt, cudaStream_t stream) {
  P.tpm = nt == 1024 || nt == 512 ? nt : 256;
  if (P.tpm == 1024) qr_factor_kernel<Tstd, 1024><<<count, 1024, 0, stream>>>(P);
  else if (P.tpm == 512) qr_factor_kernel<Tstd, 512><<<count, 512, 0, stream>>>(P);
  else qr_factor_kernel<Tstd, 256><<<count, 256, 0, stream>>>(P);
}

// Launch with nt threads per matrix (256, 512 or 1024; qr_threads) for the
// one-block kernel. hmats: a host copy of mats (null: one-block kernel for
// all; the matrices of one call are all pivoted or all not). With it, the
// matrices that fit a cluster's shared memory (qrcp_cluster_size) are
// loaded by the one-block kernel's load and factored by
// qrcp_cluster_kernel, one launch per cluster size (largest first), under
// the plan that qrcp_throughput_rule picks for the call. The latency plan's
// blocks have kQrcpThreads threads: it gives the one-block kernel's bits at
// nt = kQrcpThreads (the pivoted default; the unpivoted path's one-block
// kernel runs 256); the throughput plan's have kQrcpThroughputThreads and
// give the one-block kernel's bits at that count.
template <class Tstd>
cudaError_t qr_factor_impl(const Batch<Tstd> &kb, const QrMat *mats, int count, int nw_max,
                           unsigned char *ws, const QrLayout &L, cudaStream_t stream, int nt,
                           const QrMat *hmats) {
  using T = dev_t<Tstd>;
  (void)nw_max;
  if (count <= 0) return cudaSuccess;
  QrParams<Tstd> P = qr_params(kb, mats, ws, L);
  if (L.tsqr && hmats && hmats[0].nc > 0) return qr_tsqr_factor(P, count, ws, L, hmats, stream);
  std::vector<int> rest, grp[5];
  const bool cluster = hmats && qr_env_on("BSVD_QR_CLUSTER");
  const bool piv = hmats && hmats[0].piv;
  const size_t smax = size_t(max_smem_optin());
  // The matrices by cluster size under a plan (rest: none fits), each
  // size's launch shape (cpb from its widest matrix; the shared memory its
  // members need at that cpb), and the plan's cost in steps
  // (qrcp_throughput_rule): per size, waves of the clusters the GPU runs at
  // once times the widest matrix's columns (the sizes run beside each
  // other: the largest cost counts). A matrix that its size's launch shape
  // does not fit (a tall one beside a wider one: cpb from the wider, rows
  // from the tall) moves up to the next size, or to rest after 16.
  const size_t lim = smax - std::min<size_t>(smax, kQrcpStaticSmem);
  struct Shape { int cpb = 0; size_t smem = 0; };
  auto group = [&](bool thr, std::vector<int> &rs, std::vector<int> *gr, Shape *sh) -> double {
    rs.clear();
    for (int g = 0; g < 5; ++g) gr[g].clear();
    for (int i = 0; i < count; ++i) {
      const int c = qrcp_cluster_size<T>(hmats[i].mw, hmats[i].nw, smax, thr);
      if (c == 0) rs.push_back(i);
      else gr[__builtin_ctz(unsigned(c))].push_back(i);
    }
    double cost = 0;
    for (int g = 0; g < 5; ++g) {
      sh[g] = Shape{};
      if (gr[g].empty()) continue;
      const int c = 1 << g;
      int nw = 0;
      for (int i : gr[g]) nw = std::max(nw, hmats[i].nw);
      const int cpb = (nw + c - 1) / c;
      std::vector<int> keep;
      size_t smem = 0;
      for (int i : gr[g]) {
        const size_t need = qrcp_cluster_smem<T>(cpb, hmats[i].mw, hmats[i].nw);
        if (need <= lim) {
          keep.push_back(i);
          smem = std::max(smem, need);
        } else {
          (g < 4 ? gr[g + 1] : rs).push_back(i);
        }
      }
      gr[g].swap(keep);
      if (gr[g].empty()) continue;
      sh[g] = Shape{cpb, smem};
      const int fit = qrcp_with_instance(piv, thr, [&](auto pv, auto nt_) {
        return qrcp_active_clusters<Tstd, decltype(pv)::value, decltype(nt_)::value>(c, smem);
      });
      if (fit < 1) return 1e300; // this plan's clusters do not run here
      cost = std::max(cost, double((gr[g].size() + fit - 1) / fit) * nw);
    }
    return cost;
  };
  bool thr = false;
  Shape shape[5];
  if (cluster) {
    const double lat = group(false, rest, grp, shape);
    std::vector<int> rest_t, grp_t[5];
    Shape shape_t[5];
    const double tcost = group(true, rest_t, grp_t, shape_t);
    const bool pick = rest_t.size() <= rest.size() && qrcp_throughput_rule(lat, tcost);
    if (const char *e = std::getenv("BSVD_QRCP_PLAN_TRACE"); e && e[0] == '1')
      std::fprintf(stderr, "bsvd qrcp plan: %d matrices, steps latency %.0f throughput %.0f -> %s\n",
                   count, lat, tcost, pick ? "throughput" : "latency");
    if (pick) {
      thr = true;
      rest.swap(rest_t);
      for (int g = 0; g < 5; ++g) {
        grp[g].swap(grp_t[g]);
        shape[g] = shape_t[g];
      }
    }
  }
  if (!cluster || int(rest.size()) == count) {
    qr_factor_block_launch(P, count, nt, stream);
    return cudaGetLastError();
  }
  // sel: the one-block kernel's matrices, then each cluster group's
  std::vector<int> sel(rest);
  int off[5];
  for (int g = 4; g >= 0; --g) {
    off[g] = int(sel.size());
    sel.insert(sel.end(), grp[g].begin(), grp[g].end());
  }
  int *dsel = reinterpret_cast<int *>(ws + L.sel);
  if (cudaError_t e = cudaMemcpyAsync(dsel, sel.data(), sel.size() * sizeof(int),
                                      cudaMemcpyHostToDevice, stream))
    return e;
  P.nf = reinterpret_cast<int *>(ws + L.nf);
  if (!rest.empty()) {
    P.sel = dsel;
    qr_factor_block_launch(P, int(rest.size()), nt, stream);
  }
  const int ncl = count - int(rest.size());
  P.sel = dsel + rest.size();
  P.tpm = kQrcpThreads;
  qr_factor_kernel<Tstd, kQrcpThreads, true><<<ncl, kQrcpThreads, 0, stream>>>(P);
  if (cudaError_t e = cudaGetLastError()) return e;
  // the largest clusters on the call's stream, the other sizes beside it
  // (they fill the SMs that the GPCs leave over for large clusters)
  std::vector<std::unique_ptr<SideStream>> side;
  bool first = true;
  for (int g = 4; g >= 0; --g) {
    if (grp[g].empty()) continue;
    cudaStream_t st = stream;
    if (!first) {
      side.push_back(std::make_unique<SideStream>(stream));
      if (cudaError_t e = side.back()->fork()) return e;
      st = side.back()->get();
    }
    first = false;
    const int c = 1 << g, cpb = shape[g].cpb;
    P.sel = dsel + off[g];
    const size_t smem = shape[g].smem;
    const int n = int(grp[g].size());
    const cudaError_t e = qrcp_with_instance(piv, thr, [&](auto pv, auto nt_) {
      return qrcp_cluster_launch<Tstd, decltype(pv)::value, decltype(nt_)::value>(P, n, c, cpb,
                                                                                 smem, st);
    });
    if (e == cudaErrorNotSupported) { // no cluster of c blocks fits: one block each
      qr_factor_block_launch(P, n, thr ? kQrcpThroughputThreads : nt, st);
      if (cudaError_t e2 = cudaGetLastError()) return e2;
    } else if (e) {
      return e;
    }
  }
  if (cudaError_t e = cudaGetLastError()) return e;
  for (auto &sd : side)
    if (cudaError_t e = sd->join()) return e;
  return cudaSuccess;
}

// The finish (S, info, sweeps, the side without Q); X = Q [Z; 0] by
// qr_apply_q_kernel when hmats is given and a column of X fits shared
// memory, else by the finish kernel itself.
template <class Tstd>
cudaError_t qr_finish_impl(const Batch<Tstd> &kb, const QrMat *mats, int count, int nw_max,
                           unsigned char *ws, const QrLayout &L, cudaStream_t stream, int nt,
                           const QrMat *hmats) {
  using T = dev_t<Tstd>;
  if (count <= 0) return cudaSuccess;
  QrParams<Tstd> P = qr_params(kb, mats, ws, L);
  P.tpm = nt == 1024 || nt == 512 ? nt : 256;
  int mw_max = 0;
  if (hmats)
    for (int i = 0; i < count; ++i) mw_max = std::max(mw_max, hmats[i].mw);
  const size_t col = size_t(mw_max) * sizeof(T);
  const bool tsqr = L.tsqr && hmats && hmats[0].nc > 0;
  if (tsqr && kb.vectors) P.qapply = 1; // qr_tsqr_apply forms X
  // Q's application: the compact WY form for the unpivoted path (its X has
  // zero rows below nw; BSVD_QR_WY=0 turns it off), else a grid of blocks
  // per matrix (BSVD_QR_APPLY=0: the finish kernel applies it itself).
  bool wy = false;
  if (!tsqr && kb.vectors && hmats && mw_max > 0 && !hmats[0].piv && qr_wy_enabled()) {
    const size_t lim = size_t(max_smem_optin());
    wy = qr_wy_m_smem<T>(nw_max) <= lim && qr_wy_apply_smem<T>(nw_max) <= lim;
    if (wy) P.qapply = 1;
  }
  if (!tsqr && !wy && kb.vectors && hmats && mw_max > 0 && qr_env_on("BSVD_QR_APPLY")) {
    if (const int cb = qr_apply_cols(col)) {
      P.qapply = 1;
      P.cb = cb;
    }
  }
  if (P.tpm == 1024) qr_finish_kernel<Tstd, 1024><<<count, 1024, 0, stream>>>(P);
  else if (P.tpm == 512) qr_finish_kernel<Tstd, 512><<<count, 512, 0, stream>>>(P);
  else qr_finish_kernel<Tstd, 256><<<count, 256, 0, stream>>>(P);
  if (cudaError_t e = cudaGetLastError()) return e;
  if (!P.qapply) return cudaSuccess;
  if (tsqr) return qr_tsqr_apply(P, count, L, hmats, stream);
  if (wy) {
    const size_t sm = qr_wy_m_smem<T>(nw_max), sa = qr_wy_apply_smem<T>(nw_max);
    auto km = qr_wy_m_kernel<Tstd>;
    auto ka = qr_wy_apply_kernel<Tstd>;
    if (sm > 48 * 1024)
      if (cudaError_t e = cudaFuncSetAttribute(km, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sm)))
        return e;
    if (sa > 48 * 1024)
      if (cudaError_t e = cudaFuncSetAttribute(ka, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sa)))
        return e;
    km<<<count, kWyThreads, sm, stream>>>(P);
    if (cudaError_t e = cudaGetLastError()) return e;
    const dim3 grid(unsigned(count), unsigned((mw_max + kWyRows - 1) / kWyRows));
    ka<<<grid, kWyRows, sa, stream>>>(P);
    return cudaGetLastError();
  }
  const size_t smem = size_t(P.cb + kQApplyChunk) * col;
  auto kern = qr_apply_q_kernel<Tstd>;
  if (smem > 48 * 1024)
    if (cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)))
      return e;
  const dim3 grid(unsigned(count), unsigned((nw_max + P.cb - 1) / P.cb));
  kern<<<grid, kQApplyThreads, smem, stream>>>(P);
  return cudaGetLastError();
}

} // namespace bsvd::detail::cuda
