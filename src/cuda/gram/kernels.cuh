// The Gram preconditioning's kernels (op.cu): one block per matrix for the
// copies and checks; the products are cuBLAS's and the eigenvectors
// cuSOLVER's. The CPU twin is solve_gram_preconditioned (src/cpu/solve_one.cpp).
#pragma once

#include "../common/device_scalar.cuh"
#include "../../core/batch.hpp"
#include "../../core/gram_test.hpp"

namespace bsvd::detail::cuda {

constexpr int kGramThreads = 256;

// One matrix of the group, in storage order (shape by shape): its position
// i in the group (and in the blocked path's batch), the caller's index b,
// A's size m x n, W's mw x nw (W = A, or A^H when m < n), and its element
// offsets in the per-matrix regions of mw nw, nw nw and nw entries.
struct GramMat {
  int i, b, m, n, mw, nw;
  long long omn, onn, on;
};

// The single-precision type of T: the eigenvectors' precision.
template <class T> struct low_type { using type = float; };
template <class R> struct low_type<cx<R>> { using type = cx<float>; };
template <class T> using low_t = typename low_type<T>::type;

__device__ __forceinline__ float to_low(float x) { return x; }
__device__ __forceinline__ float to_low(double x) { return float(x); }
template <class R> __device__ __forceinline__ cx<float> to_low(cx<R> x) {
  return {float(x.re), float(x.im)};
}
template <class T> __device__ __forceinline__ T from_low(float x) { return T(x); }
template <class T> __device__ __forceinline__ T from_low(cx<float> x) {
  return {dreal_t<T>(x.re), dreal_t<T>(x.im)};
}
__device__ __forceinline__ bool low_finite(float x) { return isfinite(x); }
__device__ __forceinline__ bool low_finite(cx<float> x) { return isfinite(x.re) && isfinite(x.im); }

template <class R> __device__ __forceinline__ R block_max(R v, R *red) {
  for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int w = threadIdx.x / 32, l = threadIdx.x % 32;
  __syncthreads(); // red is free
  if (l == 0) red[w] = v;
  __syncthreads();
  v = R(0);
  for (int i = 0; i < kGramThreads / 32; ++i) v = fmax(v, red[i]);
  return v;
}

// W (A, or A^H when wide) into P, and the same scaled by a power of two to
// max |w_ij| in [1/2, 1) in single precision into F: its Gram matrix then
// neither overflows nor underflows where W's entries matter. NaN or Inf in
// A: F = 0 (the eigenvectors of a zero Gram matrix), and the blocked path
// reports the matrix from W V0, which holds them too. Block b packs
// mats[b * step] (step > 1: the test's sample).
template <class Tstd> __global__ void __launch_bounds__(kGramThreads)
    gram_pack_kernel(Batch<Tstd> kb, const GramMat *mats, int step, dev_t<Tstd> *P,
                     low_t<dev_t<Tstd>> *F) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  __shared__ R red[kGramThreads / 32];
  const GramMat M = mats[size_t(blockIdx.x) * step];
  const T *A = reinterpret_cast<const T *>(kb.A.ptr(M.b));
  const int lda = kb.A.ldm(M.b);
  const bool wide = M.m < M.n;
  T *W = P + M.omn;
  const long long len = (long long)M.mw * M.nw;
  R amax = R(0);
  bool finite = true;
  for (long long e = threadIdx.x; e < len; e += kGramThreads) {
    const int c = int(e / M.mw), r = int(e - (long long)c * M.mw);
    const T x = wide ? dconj(A[c + size_t(r) * lda]) : A[r + size_t(c) * lda];
    W[e] = x;
    finite = finite && dfinite(x);
    amax = fmax(amax, amax_part(x));
  }
  finite = __syncthreads_and(finite);
  amax = block_max(amax, red);
  int e2 = 0;
  if (finite && amax > R(0)) e2 = dilogb(amax) + 1; // amax 2^-e2 in [1/2, 1)
  low_t<T> *Fm = F + M.omn;
  for (long long e = threadIdx.x; e < len; e += kGramThreads)
    Fm[e] = finite ? to_low(dldexp(W[e], -e2)) : low_t<T>{};
}

// V0 from the eigenvectors of F^H F (columns ascending in G, cuSOLVER's
// order), columns by descending eigenvalue, in the working precision. A
// failed or non-finite solve gives V0 = I (the plain iteration). B1 = 3/2 I
// for the first Newton-Schulz step.
template <class Tstd> __global__ void __launch_bounds__(kGramThreads)
    gram_v0_kernel(const GramMat *mats, const low_t<dev_t<Tstd>> *G, const int *sinfo,
                   dev_t<Tstd> *V0, dev_t<Tstd> *B1) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  const GramMat M = mats[blockIdx.x];
  const int nw = M.nw;
  const low_t<T> *Gm = G + M.onn;
  T *V = V0 + M.onn, *B = B1 + M.onn;
  bool ok = sinfo[blockIdx.x] == 0;
  for (int e = threadIdx.x; e < nw * nw && ok; e += kGramThreads) ok = low_finite(Gm[e]);
  ok = __syncthreads_and(ok);
  for (int e = threadIdx.x; e < nw * nw; e += kGramThreads) {
    const int c = e / nw, r = e - c * nw;
    V[e] = ok ? from_low<T>(Gm[r + size_t(nw - 1 - c) * nw]) : (r == c ? done<T>() : dzero<T>());
    B[e] = r == c ? dfrom_real<T>(R(1.5)) : dzero<T>();
  }
}

// B1 = 3/2 I (the second Newton-Schulz step).
template <class Tstd> __global__ void __launch_bounds__(kGramThreads)
    gram_fill_kernel(const GramMat *mats, dev_t<Tstd> *B1) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  const GramMat M = mats[blockIdx.x];
  const int nw = M.nw;
  T *B = B1 + M.onn;
  for (int e = threadIdx.x; e < nw * nw; e += kGramThreads) {
    const int c = e / nw, r = e - c * nw;
    B[e] = r == c ? dfrom_real<T>(R(1.5)) : dzero<T>();
  }
}

// With C = V0^H V0: V0 = I unless max |C - I| <= tol (the iteration would
// otherwise rotate A by a matrix that is not orthogonal).
template <class Tstd> __global__ void __launch_bounds__(kGramThreads)
    gram_check_kernel(const GramMat *mats, const dev_t<Tstd> *C, dev_t<Tstd> *V0,
                      dreal_t<dev_t<Tstd>> tol) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  const GramMat M = mats[blockIdx.x];
  const int nw = M.nw;
  const T *Cm = C + M.onn;
  bool ok = true;
  for (int e = threadIdx.x; e < nw * nw; e += kGramThreads) {
    const int c = e / nw, r = e - c * nw;
    const T d = r == c ? Cm[e] - done<T>() : Cm[e];
    ok = ok && dabs(d) <= tol; // (false for NaN)
  }
  if (__syncthreads_and(ok)) return;
  T *V = V0 + M.onn;
  for (int e = threadIdx.x; e < nw * nw; e += kGramThreads) {
    const int c = e / nw, r = e - c * nw;
    V[e] = r == c ? done<T>() : dzero<T>();
  }
}

// The results into the caller's batch: S, info, sweeps; with vectors the
// left vectors of W V0 (Uw, mw x nw) and V0 V_J (X, nw x nw): U and V of a
// tall matrix, V and U of a wide one (W = A^H).
template <class Tstd> __global__ void __launch_bounds__(kGramThreads)
    gram_store_kernel(Batch<Tstd> kb, const GramMat *mats, const dreal_t<dev_t<Tstd>> *S,
                      const int *info, const int *sweeps, const dev_t<Tstd> *Uw,
                      const dev_t<Tstd> *X) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  const GramMat M = mats[blockIdx.x];
  const int b = M.b, mw = M.mw, nw = M.nw;
  R *Sb = kb.S.ptr(b);
  for (int j = threadIdx.x; j < nw; j += kGramThreads) Sb[j] = S[M.on + j];
  if (threadIdx.x == 0) {
    kb.info[b] = info[M.i];
    if (kb.sweeps) kb.sweeps[b] = sweeps[M.i];
  }
  if (!kb.vectors) return;
  const bool wide = M.m < M.n;
  T *U = reinterpret_cast<T *>(kb.U.ptr(b));
  T *V = reinterpret_cast<T *>(kb.V.ptr(b));
  const int ldu = kb.U.ldm(b), ldv = kb.V.ldm(b);
  T *L = wide ? V : U; // W V0's left vectors
  const int ldl = wide ? ldv : ldu;
  T *Rt = wide ? U : V; // V0 V_J
  const int ldr = wide ? ldu : ldv;
  const T *Um = Uw + M.omn, *Xm = X + M.onn;
  for (long long e = threadIdx.x; e < (long long)mw * nw; e += kGramThreads) {
    const int c = int(e / mw), r = int(e - (long long)c * mw);
    L[r + size_t(c) * ldl] = Um[e];
  }
  for (int e = threadIdx.x; e < nw * nw; e += kGramThreads) {
    const int c = e / nw, r = e - c * nw;
    Rt[r + size_t(c) * ldr] = Xm[e];
  }
}

// The Gram route's test (core/gram_test.hpp; the plan chose the route) on
// each matrix's single-precision G = F^H F: one block per matrix reduces
// the sums in double, then runs the power iteration on the cosines B =
// D^-1/2 G D^-1/2 - I (a warp per row, reading column i of G for row i:
// g_ij = conj(G[j + i n])) with its vectors in probe (5 n doubles per
// matrix: 1/sqrt(g_jj), x and y as real and imaginary parts). Block b
// tests mats[b * step] (gram_sample) and writes work[b] = weight mw nw^2
// (weight: the matrices it stands for) and gain[b] = the same where the
// test predicts a gain, else 0.
__device__ __forceinline__ double gram_abs2_d(float x) { return double(x) * double(x); }
__device__ __forceinline__ double gram_abs2_d(cx<float> x) {
  return double(x.re) * double(x.re) + double(x.im) * double(x.im);
}
__device__ __forceinline__ double gram_diag_d(float x) { return x > 0.f ? double(x) : 0.0; }
__device__ __forceinline__ double gram_diag_d(cx<float> x) { return gram_diag_d(x.re); }
// conj(g) (xr + i xi) accumulated into (ar, ai)
__device__ __forceinline__ void gram_cmac(double &ar, double &ai, float g, double xr, double) {
  ar += double(g) * xr;
  (void)ai;
}
__device__ __forceinline__ void gram_cmac(double &ar, double &ai, cx<float> g, double xr,
                                          double xi) {
  const double a = g.re, b = g.im; // (a - i b)(xr + i xi)
  ar += a * xr + b * xi;
  ai += a * xi - b * xr;
}

template <int N>
__device__ __forceinline__ void gram_block_sum(double (&v)[N], double (*red)[kGramThreads / 32]) {
  for (int q = 0; q < N; ++q)
    for (int o = 16; o > 0; o >>= 1) v[q] += __shfl_xor_sync(0xffffffffu, v[q], o);
  const int w = threadIdx.x / 32, l = threadIdx.x % 32;
  __syncthreads(); // red is free
  if (l == 0)
    for (int q = 0; q < N; ++q) red[q][w] = v[q];
  __syncthreads();
  for (int q = 0; q < N; ++q) {
    v[q] = 0;
    for (int i = 0; i < kGramThreads / 32; ++i) v[q] += red[q][i];
  }
}

template <class L> __global__ void __launch_bounds__(kGramThreads)
    gram_test_kernel(const GramMat *mats, int step, double weight, const L *G, double *probe,
                     double min_cos, double min_srank, double min_rank, double *work,
                     double *gain) {
  constexpr bool kCx = !std::is_same_v<L, float>;
  __shared__ double red[4][kGramThreads / 32];
  const GramMat M = mats[size_t(blockIdx.x) * step];
  const int nw = M.nw;
  const L *Gm = G + M.onn;
  double *dinv = probe + 5 * M.on, *xr = dinv + nw, *xi = xr + nw, *yr = xi + nw, *yi = yr + nw;
  double v[4] = {0, 0, 0, 0}; // cos2, pairs, trace, frob2 (GramTestSums)
  for (int e = threadIdx.x; e < nw * nw; e += kGramThreads) {
    const int c = e / nw, r = e - c * nw;
    const double a2 = gram_abs2_d(Gm[e]);
    const double gcc = gram_diag_d(Gm[c + size_t(c) * nw]);
    v[3] += a2;
    if (r == c) {
      v[2] += gcc;
    } else {
      const double grr = gram_diag_d(Gm[r + size_t(r) * nw]);
      if (grr > 0 && gcc > 0) {
        v[0] += a2 / (grr * gcc);
        v[1] += 1;
      }
    }
  }
  gram_block_sum(v, red);
  for (int j = threadIdx.x; j < nw; j += kGramThreads) {
    const double g = gram_diag_d(Gm[j + size_t(j) * nw]);
    dinv[j] = g > 0 ? 1 / sqrt(g) : 0;
    xr[j] = gram_probe(j, nw);
    xi[j] = 0;
  }
  __syncthreads();
  const int w = threadIdx.x / 32, l = threadIdx.x % 32;
  double norm2 = 0;
  for (int step = 0; step < kGramPowerSteps; ++step) {
    for (int i = w; i < nw; i += kGramThreads / 32) { // row i of B x
      double ar = 0, ai = 0;
      const L *col = Gm + size_t(i) * nw;
      for (int j = l; j < nw; j += 32)
        if (j != i) gram_cmac(ar, ai, col[j], dinv[j] * xr[j], dinv[j] * xi[j]);
      for (int o = 16; o > 0; o >>= 1) {
        ar += __shfl_xor_sync(0xffffffffu, ar, o);
        if (kCx) ai += __shfl_xor_sync(0xffffffffu, ai, o);
      }
      if (l == 0) {
        yr[i] = dinv[i] * ar;
        yi[i] = dinv[i] * ai;
      }
    }
    __syncthreads();
    double ny[1] = {0};
    for (int i = threadIdx.x; i < nw; i += kGramThreads) ny[0] += yr[i] * yr[i] + yi[i] * yi[i];
    gram_block_sum(ny, red);
    norm2 = ny[0];
    if (!(norm2 > 0)) break;
    const double rs = 1 / sqrt(norm2);
    for (int i = threadIdx.x; i < nw; i += kGramThreads) {
      xr[i] = yr[i] * rs;
      xi[i] = yi[i] * rs;
    }
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
  GramTestSums s;
  s.cos2 = v[0];
  s.pairs = v[1];
  s.trace = v[2];
  s.frob2 = v[3];
  s.norm2 = norm2;
  const double wk = weight * double(M.mw) * double(nw) * double(nw);
  work[blockIdx.x] = wk;
  gain[blockIdx.x] = gram_test_pays(s, min_cos, min_srank, min_rank) ? wk : 0.0;
}

// The group's decision: preconditioned when the matrices predicted to gain
// hold at least half the work. decision[0] = 1 or 0, decision[1..2] = the
// work predicted to gain and the total (the trace); a captured call's two
// if nodes take it (then_cond = decision, else_cond = its negation;
// has_cond 0 outside a capture).
__global__ void __launch_bounds__(kGramThreads)
    gram_decide_kernel(int cnt, const double *work, const double *gain, double *decision,
                       cudaGraphConditionalHandle then_cond, cudaGraphConditionalHandle else_cond,
                       int has_cond) {
  __shared__ double red[2][kGramThreads / 32];
  double v[2] = {0, 0};
  for (int i = threadIdx.x; i < cnt; i += kGramThreads) {
    v[0] += gain[i];
    v[1] += work[i];
  }
  for (int q = 0; q < 2; ++q)
    for (int o = 16; o > 0; o >>= 1) v[q] += __shfl_xor_sync(0xffffffffu, v[q], o);
  const int w = threadIdx.x / 32, l = threadIdx.x % 32;
  if (l == 0) {
    red[0][w] = v[0];
    red[1][w] = v[1];
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  double g = 0, t = 0;
  for (int i = 0; i < kGramThreads / 32; ++i) {
    g += red[0][i];
    t += red[1][i];
  }
  const bool go = t > 0 && 2 * g >= t;
  decision[0] = go ? 1.0 : 0.0;
  decision[1] = g;
  decision[2] = t;
  if (has_cond) {
    cudaGraphSetConditional(then_cond, go ? 1u : 0u);
    cudaGraphSetConditional(else_cond, go ? 0u : 1u);
  }
}

} // namespace bsvd::detail::cuda
