// The blocked path's finish step, one thread block per matrix: the fused
// kernel's finish and write (finish_and_write, matrix_io.cuh; null columns
// completed in rounds, complete_rounds) on W and V in global memory --
// U, S, V, info and sweeps. HYP: the hyperbolic SVD's (signatures in
// P.batch.nplus): each side of nplus sorted on its own, V = J V_acc J, the
// unblocked null threshold u (its twin writes back rotated columns, no
// Gram-form update: hsvd.cpp's finish), and info = breakdown for a matrix
// whose fin word `converged` is -1.
#pragma once

#include "../common/matrix_io.cuh"
#include "params.cuh"

namespace bsvd::detail::cuda {

// The finish's per-column arrays in shared memory, each padded to a multiple
// of 8 entries (the kernel says why); the host sizes them alike.
__host__ __device__ inline int blk_finish_pad(int n) { return (n + 7) & ~7; }
constexpr int kFinishThreads = 512; // per matrix: the completion's loops are memory-latency bound
template <class Tstd, bool HYP = false> __global__ void __launch_bounds__(kFinishThreads)
    blk_finish_kernel(const __grid_constant__ BlkParams<Tstd> P) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  constexpr int G = 32;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ int st[kStInts];
  __shared__ unsigned long long key;
  const int *f = P.fin + 3 * size_t(blockIdx.x);
  const int mi = f[0];
  const BlkMat M = P.mats[mi];
  const int *s = P.state + size_t(mi) * kBsWords;
  const int t = threadIdx.x, g = t / G, l = t % G;
  const Team team{2, 0, int(blockDim.x)};
  if (t < kStInts) st[t] = 0;
  __syncthreads();
  if (t == 0) {
    st[kStConverged] = f[1];
    st[kStSweeps] = f[2];
    if (HYP && f[1] < 0) {
      st[kStConverged] = 0;
      st[kStSubRun] = -1;
    }
  }
  // Each array padded to a multiple of 8 entries: ptxas merges the flag
  // reads of the completion loop's remainder into 8-byte loads (flag[c],
  // flag[c + 1] with c + 1 == nw possible), which compute-sanitizer
  // reported as out of bounds when flag ended the allocation.
  const int np = blk_finish_pad(P.nw_max);
  R *nrm = reinterpret_cast<R *>(smem_raw);
  int *expo = reinterpret_cast<int *>(nrm + np);
  int *rank = expo + np;
  int *flag = rank + np;
  T *X = P.X + M.xoff;
  // The completion's rounds (complete_rounds, matrix_io.cuh) after the
  // arrays: X and C in round_bytes (what the host sized for the largest
  // (mw + nw) cb of the batch), then the partial sums, keys and D's list.
  RoundSmem<T> rounds;
  if (P.round_bytes > 0) {
    unsigned char *base = reinterpret_cast<unsigned char *>(flag + np);
    rounds.cb = completion_block(M.mw, M.nw, int(sizeof(T)));
    rounds.X = reinterpret_cast<T *>(base);
    rounds.C = rounds.X + size_t(M.mw) * rounds.cb;
    rounds.red = reinterpret_cast<T *>(base + P.round_bytes);
    rounds.keys = reinterpret_cast<unsigned long long *>(rounds.red + 2 * (kFinishThreads / 32) *
                                                                          kCompletionMaxBlock);
    rounds.dl = reinterpret_cast<int *>(rounds.keys + kCompletionMaxBlock);
  }
  __syncthreads();
  finish_and_write<G>(P, team, t, g, l, g < P.ngroups, true, s[kBsNonfinite] != 0, M.b, M.m, M.n,
                      P.vectors, s[kBsEscale], P.W + M.woff, M.mw,
                      P.vectors ? P.V + M.voff : nullptr, M.nw, nrm, expo, rank, flag, X, X + M.mw,
                      st, &key, reinterpret_cast<R *>(X + M.mw + M.nw),
                      HYP ? unit_u<R>() : finish_null_ratio<R>(min(M.nw, 2 * P.nb)), rounds,
                      HYP ? P.batch.nplus[M.b] : -1);
}

} // namespace bsvd::detail::cuda
