// Tall-skinny QR (TSQR, src/core/tsqr.hpp) for tall matrices of few
// columns: the chunks factored in shared memory by one block each, their
// stacked R factors once more, and Q applied in compact WY form level by
// level; with the host launches of both halves. The CPU twin is
// tsqr_factor / tsqr_apply_q_wy (src/cpu/qr.cpp).
#pragma once

#include "../common/upload.hpp"
#include "householder.cuh"
#include "params.cuh"
#include "reflector.cuh"
#include "wy.cuh"

#include <algorithm>
#include <vector>

namespace bsvd::detail::cuda {

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
template <class Tstd, int NT, int LEVEL> __global__ void __launch_bounds__(NT)
    qr_tsqr_factor_kernel(const __grid_constant__ QrParams<Tstd> P) {
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
template <class Tstd, int LEVEL> __global__ void __launch_bounds__(kWyThreads)
    qr_tsqr_wy_m_kernel(const __grid_constant__ QrParams<Tstd> P) {
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
template <class Tstd, int LEVEL> __global__ void __launch_bounds__(kWyRows)
    qr_tsqr_wy_apply_kernel(const __grid_constant__ QrParams<Tstd> P) {
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

// The TSQR factorization (QrLayout tsqr, QrMat nc > 0): the one-block
// kernel's load (checks, prescaling), the chunks, the stacked R factors.
template <class Tstd> cudaError_t qr_tsqr_factor(QrParams<Tstd> P, int count, unsigned char *ws,
                                                 const QrLayout &L, const QrMat *hmats,
                                                 cudaStream_t stream) {
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
  if (cudaError_t e = upload_bytes(ws + L.tjobs, jobs.data(), jobs.size() * sizeof(int), stream))
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
    if (cudaError_t e =
            cudaFuncSetAttribute(k1, cudaFuncAttributeMaxDynamicSharedMemorySize, int(s1)))
      return e;
  if (s2 > 48 * 1024)
    if (cudaError_t e =
            cudaFuncSetAttribute(k2, cudaFuncAttributeMaxDynamicSharedMemorySize, int(s2)))
      return e;
  k1<<<unsigned(L.chunks), kQrThreads, s1, stream>>>(P);
  if (cudaError_t e = cudaGetLastError()) return e;
  k2<<<unsigned(count), kQrThreads, s2, stream>>>(P);
  return cudaGetLastError();
}

// X = Q [Z_B; 0] by TSQR's two levels (after qr_finish_kernel with qapply).
template <class Tstd> cudaError_t qr_tsqr_apply(const QrParams<Tstd> &P, int count,
                                                const QrLayout &L, const QrMat *hmats,
                                                cudaStream_t stream) {
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
      if (cudaError_t e =
              cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sm)))
        return e;
  for (auto k : {a2, a1})
    if (sa > 48 * 1024)
      if (cudaError_t e =
              cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sa)))
        return e;
  m2<<<unsigned(count), kWyThreads, sm, stream>>>(P);
  a2<<<dim3(unsigned(count), unsigned((lz_max + kWyRows - 1) / kWyRows)), kWyRows, sa, stream>>>(P);
  m1<<<unsigned(L.chunks), kWyThreads, sm, stream>>>(P);
  a1<<<dim3(unsigned(L.chunks), unsigned((hc_max + kWyRows - 1) / kWyRows)), kWyRows, sa, stream>>>(
      P);
  return cudaGetLastError();
}

} // namespace bsvd::detail::cuda
