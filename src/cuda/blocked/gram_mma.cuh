// The tensor-core Gram plan (double, either instance): FP64 mma.m8n8k4 on
// the row pipeline of gram.cuh.
#pragma once

#include "gram.cuh"

#include <type_traits>

namespace bsvd::detail::cuda {

// The tensor-core Gram plan (double only; plan::gram_plan gives kMma): the
// FP64 matrix instruction mma.m8n8k4 (D = A B + C on 8 x 8 x 4 tiles). One
// block of K / 8 warps per (active matrix, pair); G's upper 8 x 8 tiles
// (I <= J of a (K / 8)^2 grid: 10 for K = 32, 36 for K = 64) are dealt to
// the warps round-robin, and every warp runs all rows, four at a time, in
// order. Rows are staged kRows = 32 at a time (cp.async, two buffers),
// column-major with leading dimension kRows + 4: the fragments of the A
// operand (X_I^T: row lane / 4, column lane % 4) and of the B operand (X_J:
// row lane % 4, column lane / 4) are the same entries X(k0 + lane % 4,
// 8 I + lane / 4), and a warp's 32 of them fall in two 128-byte wavefronts.
// The hardware sums each group of four products in its own order, so the
// bits differ from the scalar plans' (and the CPU twin's) in the last
// places, as cuBLAS's do; G is stored exactly Hermitian (upper entries and
// their mirror).
__device__ __forceinline__ void mma_m8n8k4_f64(double (&d)[2], double a, double b) {
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
               : "+d"(d[0]), "+d"(d[1])
               : "d"(a), "d"(b));
}
template <int K> constexpr int gram_mma_threads() { return 32 * (K / 8); }
template <class Tstd, int K> __global__ void __launch_bounds__(gram_mma_threads<K>())
    blk_gram_mma_kernel(const __grid_constant__ BlkParams<Tstd> P) {
  static_assert(std::is_same_v<Tstd, double>, "FP64 tensor-core instructions");
  constexpr int NI = K / 8, NW = NI, kRows = 32, LR = kRows + 4;
  constexpr int kTiles = NI * (NI + 1) / 2, kPer = (kTiles + NW - 1) / NW;
  __shared__ __align__(16) double tile[2][K * LR];
  int mi, bi, wi, bj, wj;
  BlkMat M;
  if (!slot_block_pair(P, blockIdx.x, mi, M, bi, wi, bj, wj)) return;
  const int k = wi + wj, t = threadIdx.x, w = t / 32, lane = t % 32;
  const double *W = P.W + M.woff;
  const int ldw = M.mw;
  auto stage = [&](int buf, int i0) { // rows [i0, i0 + kRows) into tile[buf]; lane = row
    gram_stage_row<K>(&tile[buf][lane], LR, i0 + lane, M.mw, w, NW, k, W, ldw, bi, wi, bj, P.nb);
  };
  // This warp's tiles: numbers w, w + NW, ... of the upper triangle (column
  // by column), as (I, J); none beyond k.
  int ti[kPer], tj[kPer];
  bool tv[kPer];
  double acc[kPer][2];
#pragma unroll
  for (int x = 0; x < kPer; ++x) {
    const int e = w + x * NW;
    int I = 0, J = 0;
    if (e < kTiles) upper_tile<NI>(e, I, J);
    ti[x] = I;
    tj[x] = J;
    tv[x] = e < kTiles && 8 * J < k; // (I <= J)
    acc[x][0] = acc[x][1] = 0.0;
  }
  const int fr = lane / 4, fk = lane % 4;
  gram_row_pipeline<kRows>(0, M.mw, stage, [&](int buf, int) {
    const double *X = tile[buf];
#pragma unroll
    for (int k0 = 0; k0 < kRows; k0 += 4) {
#pragma unroll
      for (int x = 0; x < kPer; ++x)
        if (tv[x])
          mma_m8n8k4_f64(acc[x], X[(8 * ti[x] + fr) * LR + k0 + fk],
                         X[(8 * tj[x] + fr) * LR + k0 + fk]);
    }
  });
  double *G = P.G + size_t(blockIdx.x) * K * K;
#pragma unroll
  for (int x = 0; x < kPer; ++x) {
    if (!tv[x]) continue;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = 8 * ti[x] + fr, c = 8 * tj[x] + 2 * fk + h;
      if (r >= k || c >= k || r > c) continue;
      G[r + c * K] = acc[x][h];
      if (r != c) G[c + r * K] = acc[x][h];
    }
  }
}

} // namespace bsvd::detail::cuda
