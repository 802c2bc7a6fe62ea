// X = Q [Z; 0] by a grid of blocks per matrix, each holding some of X's
// columns in shared memory and applying the reflectors one by one (the
// pivoted path's Q, and the unpivoted one's when the compact WY form is
// off): the same operations, so the same bits, as the finish kernel.
#pragma once

#include "params.cuh"
#include "reflector.cuh"

namespace bsvd::detail::cuda {

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
template <class Tstd> __global__ void __launch_bounds__(kQApplyThreads)
    qr_apply_q_kernel(const __grid_constant__ QrParams<Tstd> P) {
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

} // namespace bsvd::detail::cuda
