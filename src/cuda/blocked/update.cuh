// The blocked path's update step: [W_i W_j] <- [W_i W_j] Q and
// [V_i V_j] <- [V_i V_j] Q for every (active matrix, pair) whose Q is
// not the identity.
#pragma once

#include "params.cuh"

namespace bsvd::detail::cuda {

// One thread per row (W's rows, then V's): the row's k entries in
// registers, outputs kChunk at a time; Q (zero-padded to K x K) in shared
// memory stored by rows (Qs[r K + c] = Q(r, c)), so the kChunk entries of
// row r that one step reads are contiguous and 16-byte aligned: read as
// 128-bit broadcasts (two to four entries per instruction; the one-entry
// broadcasts made this kernel shared-memory bound, one load per FMA).
template <class Tstd, int K> __global__ void __launch_bounds__(128)
    blk_update_kernel(const __grid_constant__ BlkParams<Tstd> P) {
  using T = dev_t<Tstd>;
  constexpr int kChunk = 8;
  __shared__ __align__(16) T Qs[K * K];
  if (!P.pflag[blockIdx.x]) return;
  int mi, bi, wi, bj, wj;
  BlkMat M;
  slot_block_pair(P, blockIdx.x, mi, M, bi, wi, bj, wj); // exists: pflag is set
  const int k = wi + wj, t = threadIdx.x;
  const T *Qg = P.Q + size_t(blockIdx.x) * K * K;
  for (int e = t; e < K * K; e += 128) {
    const int c = e / K, r = e - c * K;
    Qs[r * K + c] = (r < k && c < k) ? Qg[r + c * K] : dzero<T>();
  }
  __syncthreads();
  const int row = blockIdx.y * 128 + t;
  const int rows = M.mw + (P.vectors ? M.nw : 0);
  if (row >= rows) return;
  T *X;
  int ld, i;
  if (row < M.mw) {
    X = P.W + M.woff;
    ld = M.mw;
    i = row;
  } else {
    X = P.V + M.voff;
    ld = M.nw;
    i = row - M.mw;
  }
  T xr[K];
#pragma unroll
  for (int c = 0; c < K; ++c)
    xr[c] = c < k ? X[i + size_t(pair_col(c, bi, wi, bj, P.nb)) * ld] : dzero<T>();
#pragma unroll
  for (int c0 = 0; c0 < K; c0 += kChunk) {
    T acc[kChunk];
#pragma unroll
    for (int j = 0; j < kChunk; ++j) acc[j] = dzero<T>();
#pragma unroll
    for (int r = 0; r < K; ++r)
#pragma unroll
      for (int j = 0; j < kChunk; ++j) acc[j] = acc[j] + xr[r] * Qs[r * K + c0 + j];
#pragma unroll
    for (int j = 0; j < kChunk; ++j)
      if (c0 + j < k) X[i + size_t(pair_col(c0 + j, bi, wi, bj, P.nb)) * ld] = acc[j];
  }
}

} // namespace bsvd::detail::cuda
