// The eigensolver's lean warp kernel (double, full pairs, one inner sweep):
// the warp plan's register solve (evd_warp.cuh) with one shared-memory
// array per warp instead of two, for more warps per SM.
#pragma once

#include "evd_warp.cuh"

#include <type_traits>

namespace bsvd::detail::cuda {

// The warp plan's lean kernel (double). blk_evd_warp_kernel keeps two
// K x (K + 1) arrays per warp (G and Q: ~17.5 KB in d) and 164 registers,
// so 12 warps fit per SM, and its register solve is latency-bound:
// throughput follows the warps per SM (docs/design/blocked.md). This kernel
// runs the same register solve with one array per warp:
//  - G's row l is read from global memory straight into registers (the
//    warp plan's rows are coalesced: lane l reads G(l, c), c = 0 .. K-1);
//  - X holds the sweep's rotation history, then Q;
//  - C = I - Q^H Q is symmetric in real arithmetic (C(i, l) and C(l, i) sum
//    the same products in the same order, fma being commutative in its
//    factors), so only its upper triangle is kept (C below), and lane l
//    computes column l of it, rows i <= l;
//  - 13.3 KB per warp and at most 128 registers: 16 warps per SM.
// Every entry sees the operations of the warp plan in the same order: the
// same bits (test EvdPlansGiveTheSameBits). The host launches it only for
// steps where every Gram matrix has full pairs (k = K: nb = 16, n a
// multiple of 16 and at least 32) and one inner sweep; the warp kernel
// takes the rest.
template <class T> constexpr bool kEvdLean = std::is_same_v<T, double>;
constexpr int kEvdLeanBlocks = 4; // per SM: 16 warps
template <class T, int K> struct EvdLeanSmem {
  using R = dreal_t<T>;
  T X[K * (K + 1)]; // the rotation history, then Q (leading dimension K + 1)
  T C[K * (K + 1) / 2]; // C's upper triangle by columns: (i, j), i <= j, at j (j + 1) / 2 + i
  R a[K / 2], b[K / 2], eig[K];
  int rank[K];
};
template <class T, int K>
__device__ __forceinline__ T lean_c(const EvdLeanSmem<T, K> &S, int r, int j, int cj) {
  return r <= j ? S.C[cj + r] : S.C[r * (r + 1) / 2 + j];
}
// evd_finish's warp plan for k = K with the column of Q cached (kCache),
// C kept as its upper triangle; S.eig holds the eigenvalues.
template <class T, int K>
__device__ void evd_finish_lean(EvdLeanSmem<T, K> &S, int l, bool sort, T *out) {
  using R = dreal_t<T>;
  constexpr int L = K + 1;
  __syncwarp();
  T own[K];
#pragma unroll
  for (int r = 0; r < K; ++r) own[r] = S.X[r + l * L];
  // C = I - Q^H Q; lane = column l, rows i <= l.
  for (int i = 0; i <= l; ++i) {
    T h = dzero<T>();
#pragma unroll
    for (int r = 0; r < K; ++r) dot_acc(h, S.X[r + i * L], own[r]);
    S.C[l * (l + 1) / 2 + i] = i == l ? dfrom_real<T>(R(1) - dreal(h)) : dzero<T>() - h;
  }
#pragma unroll
  for (int r = 0; r < K; ++r) own[r] = S.X[l + r * L];
  S.rank[l] = evd_rank(S.eig, K, l, sort);
  __syncwarp();
  // Q + Q C / 2, column j to position rank[j]; lane = row l.
  for (int j = 0; j < K; ++j) {
    const int cj = j * (j + 1) / 2;
    T s = dzero<T>();
#pragma unroll
    for (int r = 0; r < K; ++r) s = s + own[r] * lean_c(S, r, j, cj);
    out[l + S.rank[j] * K] = S.X[l + j * L] + dscale(s, R(0.5));
  }
  __syncwarp();
}

template <class Tstd, int K> __global__ void __launch_bounds__(32 * kEvdWarps, kEvdLeanBlocks)
    blk_evd_lean_kernel(const __grid_constant__ BlkParams<Tstd> P) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  static_assert(K == 32 && kEvdLean<T>, "the lean kernel: d, full pairs of 32");
  static_assert(sizeof(EvdRegHist<T, K>) <= sizeof(EvdLeanSmem<T, K>::X), "the history lives in X");
  constexpr int L = K + 1;
  constexpr size_t KK = size_t(K) * K;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int w = threadIdx.x / 32, l = threadIdx.x % 32;
  const long long slot = (long long)blockIdx.x * kEvdWarps + w;
  if (slot >= (long long)P.nact * P.half) return; // whole warp
  if (P.evd_lean && !*P.evd_lean) return; // the warp kernel's step (whole block)
  EvdLeanSmem<T, K> &S = reinterpret_cast<EvdLeanSmem<T, K> *>(smem_raw)[w];
  int mi, bi, wi, bj, wj;
  BlkMat M;
  if (!slot_block_pair(P, slot, mi, M, bi, wi, bj, wj)) {
    if (l == 0) P.pflag[slot] = 0;
    return;
  }
  // (wi + wj == K: the host gate, BlockedRun::plan_evd in driver.cuh)
  // Row l of G, summed over the split Gram plan's segments in segment order
  // as evd_slot_load sums them.
  const bool parts = P.gseg > 0 && slot / P.half < P.nown;
  const int nseg = parts ? (M.mw + kGramSegRows - 1) / kGramSegRows : 1;
  const T *Gg = parts ? P.Gp + size_t(slot) * P.gseg * KK : P.G + size_t(slot) * KK;
  T gr[K];
#pragma unroll
  for (int c = 0; c < K; ++c) {
    const T *src = Gg + l + c * K;
    T g = src[0];
    for (int sg = 1; sg < nseg; ++sg) g = g + src[sg * KK];
    gr[c] = g;
  }
  R dg = dreal(reg_select<T, K>(gr, l)); // G(l, l)
  EvdRegHist<T, K> *H0 = reinterpret_cast<EvdRegHist<T, K> *>(S.X);
  int recorded = 0;
  const EvdRun run = evd_reg_sweeps<T, K>(gr, dg, H0, H0, S.a, S.b, l, evd_tol<Tstd, R>(P, mi, K),
                                          P.nullf[mi], 1, recorded);
  if (run.applied == 0) {
    if (l == 0) P.pflag[slot] = 0;
    return;
  }
  __syncwarp(); // the history is complete
  {
    T qr[K];
    evd_reg_replay<T, K>(qr, H0, H0, recorded, l);
    __syncwarp(); // every lane has read the history in X
#pragma unroll
    for (int c = 0; c < K; ++c) S.X[l + c * L] = qr[c];
  }
  S.eig[l] = dg;
  evd_finish_lean<T, K>(S, l, M.nw <= P.nb || P.nb >= 8, P.Q + size_t(slot) * KK);
  if (l == 0) {
    P.pflag[slot] = 1;
    if (run.significant) atomicAdd(&P.rot[mi], int(run.significant));
  }
}

} // namespace bsvd::detail::cuda
