// The wide instance's own Gram kernel (K = 64: block widths 17 ... 32),
// with the row pipeline and tile helpers of gram.cuh.
#pragma once

#include "gram.cuh"

namespace bsvd::detail::cuda {

// The wide instance's own Gram kernel (K = 64, nb up to 32; one plan): one
// block of five warps per (active matrix, pair); the 136 upper 4 x 4 tiles
// of G (a 16 x 16 grid) on threads 0 ... 135, each reading its 4 + 4
// columns of a row as four 2-entry vectors for 16 FMAs. Rows are staged
// kRows = 16 at a time (cp.async, two buffers; lane % 16 = row, so a
// column's 16 rows are one contiguous read), row-major, padded to K + 2.
// Rows are summed by segments as in the narrow plans (gram_tile_add).
constexpr int kGramWideThreads = 160; // 136 multiply; all stage
template <class Tstd, int K> __global__ void __launch_bounds__(kGramWideThreads)
    blk_gram_wide_kernel(const __grid_constant__ BlkParams<Tstd> P) {
  using T = dev_t<Tstd>;
  static_assert(K == 64, "136 threads hold the upper 4 x 4 tiles of K = 64");
  constexpr int kRows = 16, LC = K + 2, kGroups = kGramWideThreads / kRows;
  __shared__ __align__(16) T tile[2][kRows * LC];
  __shared__ T tot[16 * 136]; // running sums by segment (gram_tile_add), column t
  int mi, bi, wi, bj, wj, tr, tc;
  BlkMat M;
  if (!slot_block_pair(P, blockIdx.x, mi, M, bi, wi, bj, wj)) return;
  const int k = wi + wj, t = threadIdx.x;
  upper_tile<16>(t, tr, tc);
  const bool active = t < 136 && 4 * tr < k && 4 * tc < k;
  const T *W = P.W + M.woff;
  const int ldw = M.mw, lr = t % kRows, cg = t / kRows;
  auto stage = [&](int buf, int i0) { // rows [i0, i0 + kRows) into tile[buf]
    gram_stage_row<K>(&tile[buf][lr * LC], 1, i0 + lr, M.mw, cg, kGroups, k, W, ldw, bi, wi, bj,
                      P.nb);
  };
  T acc[4][4];
  gram_tile_zero(acc);
  gram_row_pipeline<kRows>(0, M.mw, stage, [&](int buf, int i0) {
    if (!active) return;
    const T *rows = tile[buf];
    gram_tile_acc<8>(acc, kRows, [&](int i, T(&u)[4], T(&v)[4]) {
      const T *row = rows + i * LC;
      read_adjacent(row + 4 * tr, u[0], u[1]);
      read_adjacent(row + 4 * tr + 2, u[2], u[3]);
      read_adjacent(row + 4 * tc, v[0], v[1]);
      read_adjacent(row + 4 * tc + 2, v[2], v[3]);
    });
    if (gram_segment_ends<kRows>(i0, 0, M.mw)) gram_tile_add(acc, tot + t, 136, i0 < kGramSegRows);
  });
  if (active) {
    gram_tile_load(acc, tot + t, 136);
    gram_tile_store(acc, 4 * tr, 4 * tc, k, P.G + size_t(blockIdx.x) * K * K, K);
  }
}

} // namespace bsvd::detail::cuda
