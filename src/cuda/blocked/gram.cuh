// The own Gram kernels, G = [W_i W_j]^H [W_i W_j] per (active matrix, block
// pair) of a step (MAGMA-SVD Sec. 5.2): the tile helpers every plan and the
// pair kernel share, the row pipeline through shared memory, and the narrow
// instance's scalar plans -- tile 4, tile 2 and tile 2 split (the Gram
// tailoring of WCYCLE Sec. IV-D-1). The wide instance's kernel, the
// tensor-core plan and the cuBLAS stage are in gram_wide.cuh, gram_mma.cuh
// and gram_cublas.cuh.
#pragma once

#include "params.cuh"

namespace bsvd::detail::cuda {

// The N x N Gram tile acc[a][b] += x_a^H y_b over rows [0, len), row i's
// 2 N entries (x_0 .. x_{N-1}, y_0 .. y_{N-1}) from load(i, x, y): the Gram
// kernel reads them from a row-major tile, the pair kernel from columns;
// both sum the rows in order, as the CPU twin. UNROLL: the loop's unrolling.
template <int UNROLL, int N, class T, class Load>
__device__ __forceinline__ void gram_tile_acc(T (&acc)[N][N], int len, Load load) {
#pragma unroll UNROLL
  for (int i = 0; i < len; ++i) {
    T u[N], v[N];
    load(i, u, v);
#pragma unroll
    for (int a = 0; a < N; ++a)
#pragma unroll
      for (int b = 0; b < N; ++b) dot_acc(acc[a][b], u[a], v[b]);
  }
}
// Stores the tile at rows r0 .. r0 + N - 1 and columns c0 .. c0 + N - 1 of
// the k x k Hermitian G (leading dimension ldg): the upper entries and
// their conjugates below, the diagonal real; entries outside k or below the
// diagonal of the tile are skipped.
template <int N, class T> __device__ __forceinline__ void
gram_tile_store(const T (&acc)[N][N], int r0, int c0, int k, T *G, int ldg) {
#pragma unroll
  for (int da = 0; da < N; ++da)
#pragma unroll
    for (int db = 0; db < N; ++db) {
      const int r = r0 + da, c = c0 + db;
      if (r >= k || c >= k || r > c) continue;
      if (r == c) {
        G[r + c * ldg] = real_only(acc[da][db]);
      } else {
        G[r + c * ldg] = acc[da][db];
        G[c + r * ldg] = dconj(acc[da][db]);
      }
    }
}
// The unsplit Gram kernels' running sum over segments: the thread's column
// tot[e * stride] (e = da N + db; shared memory, the thread's own) gets the
// segment's sum (first segment: stored, then added in order); acc is
// zeroed. (Not a read-modify-write of G in global memory per segment: the
// load's latency stalls the two-warp tile-4 blocks; docs/design/blocked.md.)
template <int N, class T>
__device__ __forceinline__ void gram_tile_add(T (&acc)[N][N], T *tot, int stride, bool first) {
#pragma unroll
  for (int da = 0; da < N; ++da)
#pragma unroll
    for (int db = 0; db < N; ++db) {
      T &t = tot[(da * N + db) * stride];
      t = first ? acc[da][db] : t + acc[da][db];
      acc[da][db] = dzero<T>();
    }
}
template <int N, class T> __device__ __forceinline__ void gram_tile_zero(T (&acc)[N][N]) {
#pragma unroll
  for (int da = 0; da < N; ++da)
#pragma unroll
    for (int db = 0; db < N; ++db) acc[da][db] = dzero<T>();
}
template <int N, class T>
__device__ __forceinline__ void gram_tile_load(T (&acc)[N][N], const T *tot, int stride) {
#pragma unroll
  for (int da = 0; da < N; ++da)
#pragma unroll
    for (int db = 0; db < N; ++db) acc[da][db] = tot[(da * N + db) * stride];
}
// Folds a tile's segment sum into G held in shared memory (the pair
// kernel) -- first: the first segment, stored -- and zeroes it; entries as
// gram_tile_store.
template <int N, class T> __device__ __forceinline__ void
gram_tile_fold(T (&acc)[N][N], int r0, int c0, int k, T *G, int ldg, bool first) {
  if (!first) {
#pragma unroll
    for (int da = 0; da < N; ++da)
#pragma unroll
      for (int db = 0; db < N; ++db) {
        const int r = r0 + da, c = c0 + db;
        if (r < k && c < k && r <= c) acc[da][db] = G[r + c * ldg] + acc[da][db];
      }
  }
  gram_tile_store(acc, r0, c0, k, G, ldg);
  gram_tile_zero(acc);
}

// ---- gram: G = [W_i W_j]^H [W_i W_j] ----------------------------------------
// Three plans (plan::gram_plan): tile 2 and tile 4, one
// block per (active matrix, pair), and tile 2 split, one block per (active
// matrix, pair, segment). Rows of the pair's columns are staged through
// shared memory kRows = 32 at a time (two buffers: the next tile is copied
// by cp.async, no registers held, while the current one is multiplied),
// zero beyond k columns and the rows; every thread sums its entries by
// segments as above (zero rows add fma(0, 0, x) = x): the plans give the
// same bits. (The CPU twin's form_gram sums in its own order, two
// accumulators per product: the twin agrees to rounding.)
//  - tile 4 (throughput; blk_gram_tile4_kernel): two warps; the 36 upper
//    4 x 4 tiles of G (an 8 x 8 grid, tr <= tc) on threads 0 ... 35, each
//    reading its 4 + 4 columns of a row as four 2-entry vectors for 16
//    FMAs. Tile layout (gram_unit_pos): row-major, K entries per row, no
//    padding; columns 2 u, 2 u + 1 (unit u) adjacent at unit position
//    ((u & 1) << 3 | u >> 1) ^ (r & 7): the units a warp reads in one
//    instruction (2 tr over the eight tr, or 2 tr + 1) fall in eight
//    distinct 16-byte bank groups, and the staging copies -- lane -> rows
//    r, r + 8 of one unit -- in sixteen distinct 8-byte ones.
//  - tile 2 (latency; blk_gram_tile2_kernel): five warps; the 136 upper
//    2 x 2 tiles (a 16 x 16 grid) on threads 0 ... 135, two 2-entry reads
//    per row for 4 FMAs; row-major tile padded to K + 2. A quarter of the
//    tile-4 plan's FMAs per thread and row: a pair's rows go through ~2x
//    faster when the GPU is nearly idle (the tail of a mixed batch).
// Tile 4 exists because tile 2 is bound by the shared-memory pipe (its
// 2 x 2 tiles read about one entry per FMA); tile 4 reads half as many
// wavefronts per row and pair (docs/design/blocked.md has the profiles).
constexpr int kGramTile2Threads = 160; // 136 multiply; all stage
constexpr int kGramTile4Threads = 64; // 36 multiply; all stage
// Blocks per SM asked of ptxas for the tile-4 plan: the most whose register
// cap (65536 / (64 blocks)) it fits without spills (s 80, d 96, c 128,
// z 168 registers); shared memory allows 13 (8-byte types).
template <class Tstd> constexpr int gram_min_blocks() {
  constexpr char p = precision_of<Tstd>();
  return p == 's' ? 12 : p == 'd' ? 10 : p == 'c' ? 8 : 6;
}
__device__ __forceinline__ int gram_unit_pos(int u, int r) {
  return (((u & 1) << 3) | (u >> 1)) ^ (r & 7);
}
template <class T>
__device__ __forceinline__ void cp_async_or_zero(T *dst, const T *src, bool valid) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16, "cp.async sizes");
  const unsigned d = unsigned(__cvta_generic_to_shared(dst));
  // src-size 0: nothing is read, the sizeof(T) bytes are zero-filled
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(d), "l"(src),
               "n"(int(sizeof(T))), "r"(valid ? int(sizeof(T)) : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
// Row r of a block pair's columns c = c0, c0 + cstep, ... < K into
// dst[c * cstride] by cp.async (zeros for c >= k or r >= rend), then the
// group commit: the staging of the Gram kernels whose tiles are plain
// (tile 2, the wide kernel, the tensor-core plan).
template <int K, class T>
__device__ __forceinline__ void gram_stage_row(T *dst, int cstride, int r, int rend, int c0,
                                               int cstep, int k, const T *W, int ldw, int bi,
                                               int wi, int bj, int nb) {
  for (int c = c0; c < K; c += cstep) {
    const bool ok = r < rend && c < k;
    cp_async_or_zero(dst + c * cstride, ok ? W + r + size_t(pair_col(c, bi, wi, bj, nb)) * ldw : W,
                     ok);
  }
  cp_async_commit();
}
template <int N> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
// Two adjacent entries p[0], p[1] of a row-major tile (p 2 sizeof(T)-aligned)
// in one vector read (8 or 16 bytes; z: two 16-byte reads).
template <class T> __device__ __forceinline__ void read_adjacent(const T *p, T &a, T &b) {
  if constexpr (sizeof(T) == 4) {
    const float2 v = *reinterpret_cast<const float2 *>(p);
    __builtin_memcpy(&a, &v.x, 4);
    __builtin_memcpy(&b, &v.y, 4);
  } else if constexpr (sizeof(T) == 8) {
    const double2 v = *reinterpret_cast<const double2 *>(p);
    __builtin_memcpy(&a, &v.x, 8);
    __builtin_memcpy(&b, &v.y, 8);
  } else {
    a = p[0];
    b = p[1];
  }
}
// The Gram kernels' row pipeline over two shared-memory buffers:
// stage(buf, i0) copies rows [i0, i0 + kRows) into buffer buf by cp.async
// (and commits the group), multiply(buf) consumes one; the copy of the next
// rows flies while the current ones are multiplied.
template <int kRows, class Stage, class Multiply> __device__ __forceinline__ void
gram_row_pipeline(int row0, int row1, Stage stage, Multiply multiply) {
  stage(0, row0);
  int buf = 0;
  for (int i0 = row0; i0 < row1; i0 += kRows, buf ^= 1) {
    if (i0 + kRows < row1) {
      stage(buf ^ 1, i0 + kRows); // the buffer the previous iteration read
      cp_async_wait<1>(); // this tile's copies done (the next may fly)
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    multiply(buf, i0);
    __syncthreads(); // the buffer is refilled by the next iteration's stage
  }
}
// After the stage of rows [i0, i0 + kRows) of [row0, row1): does a segment
// end here (kGramSegRows is a multiple of kRows)?
template <int kRows> __device__ __forceinline__ bool gram_segment_ends(int i0, int row0, int row1) {
  static_assert(kGramSegRows % kRows == 0, "stages tile the segments");
  return (i0 + kRows - row0) % kGramSegRows == 0 || i0 + kRows >= row1;
}
template <class Tstd, int K>
__global__ void __launch_bounds__(kGramTile4Threads, gram_min_blocks<Tstd>())
    blk_gram_tile4_kernel(const __grid_constant__ BlkParams<Tstd> P) {
  using T = dev_t<Tstd>;
  static_assert(K == 32 && kGramTile4Threads == 64,
                "36 threads hold the upper 4 x 4 tiles of K = 32; "
                "two warps stage 16 rows each");
  constexpr int kRows = 32;
  __shared__ __align__(16) T tile[2][kRows * K];
  __shared__ T tot[16 * 36]; // running sums by segment (gram_tile_add), column t
  int mi, bi, wi, bj, wj, tr, tc;
  BlkMat M;
  if (!slot_block_pair(P, blockIdx.x, mi, M, bi, wi, bj, wj)) return;
  const int k = wi + wj, t = threadIdx.x;
  upper_tile<8>(t, tr, tc);
  const bool active = t < 36 && 4 * tr < k && 4 * tc < k;
  const T *W = P.W + M.woff;
  const int ldw = M.mw, lane = t % 32;
  // This thread's copies: row sr of each stage, column 2 u + sh of each unit u.
  const int sr = 16 * (t / 32) + 8 * (lane >> 4) + (lane & 7), sh = (lane >> 3) & 1;
  int coff[K / 2]; // column offsets in W (32 bits: half the registers of pointers); -1: zero
#pragma unroll
  for (int u = 0; u < K / 2; ++u) {
    const int c = 2 * u + sh;
    coff[u] = c < k ? pair_col(c, bi, wi, bj, P.nb) * ldw : -1;
  }
  auto stage = [&](int buf, int i0) { // rows [i0, i0 + kRows) into tile[buf]
    const int r = i0 + sr;
    T *dst = tile[buf] + sr * K + sh;
#pragma unroll
    for (int u = 0; u < K / 2; ++u) {
      const bool ok = r < M.mw && coff[u] >= 0;
      cp_async_or_zero(dst + 2 * gram_unit_pos(u, sr), W + (ok ? r + coff[u] : 0), ok);
    }
    cp_async_commit();
  };
  T acc[4][4];
  gram_tile_zero(acc);
  gram_row_pipeline<kRows>(0, M.mw, stage, [&](int buf, int i0) {
    if (!active) return;
    const T *rows = tile[buf];
    gram_tile_acc<8>(acc, kRows, [&](int i, T(&u)[4], T(&v)[4]) {
      const T *row = rows + i * K;
      const int sw = i & 7; // gram_unit_pos of units 2 tr, 2 tr + 1, 2 tc, 2 tc + 1
      read_adjacent(row + 2 * (tr ^ sw), u[0], u[1]);
      read_adjacent(row + 2 * ((8 | tr) ^ sw), u[2], u[3]);
      read_adjacent(row + 2 * (tc ^ sw), v[0], v[1]);
      read_adjacent(row + 2 * ((8 | tc) ^ sw), v[2], v[3]);
    });
    if (gram_segment_ends<kRows>(i0, 0, M.mw)) gram_tile_add(acc, tot + t, 36, i0 < kGramSegRows);
  });
  if (active) {
    gram_tile_load(acc, tot + t, 36);
    gram_tile_store(acc, 4 * tr, 4 * tc, k, P.G + size_t(blockIdx.x) * K * K, K);
  }
}

// SPLIT: the tailored plan (WCYCLE Sec. IV-D-1): block (slot, y) sums
// segment y of the pair's rows alone into its partial tile of P.Gp, so a
// pair's rows spread over ceil(mw / kGramSegRows) blocks (the tail of a
// mixed batch: a few tall pairs on a GPU of 132 SMs).
template <class Tstd, int K, bool SPLIT>
__global__ void __launch_bounds__(kGramTile2Threads, sizeof(Tstd) <= 8 ? 7 : 6)
    blk_gram_tile2_kernel(const __grid_constant__ BlkParams<Tstd> P) {
  using T = dev_t<Tstd>;
  static_assert(K == 32, "136 threads hold the upper 2 x 2 tiles of K = 32");
  constexpr int kRows = 32, kWarps = kGramTile2Threads / 32;
  constexpr int LC =
      K + 2; // even: vector-aligned pairs; 4-way conflicts on the staging writes only
  __shared__ __align__(16) T tile[2][kRows * LC];
  __shared__ T tot[SPLIT ? 1 : 4 * 136]; // running sums by segment (unsplit), column t
  int mi, bi, wi, bj, wj, tr, tc;
  BlkMat M;
  if (!slot_block_pair(P, blockIdx.x, mi, M, bi, wi, bj, wj)) return;
  const int row0 = SPLIT ? int(blockIdx.y) * kGramSegRows : 0;
  if (row0 >= M.mw) return; // a segment beyond this matrix's rows
  const int row1 = SPLIT ? min(M.mw, row0 + kGramSegRows) : M.mw;
  const int k = wi + wj, t = threadIdx.x;
  upper_tile<16>(t, tr, tc);
  const int r0 = 2 * tr, c0 = 2 * tc;
  const bool active = t < 136 && r0 < k && c0 < k;
  const T *W = P.W + M.woff;
  const int ldw = M.mw, lr = t % 32, cw = t / 32;
  auto stage = [&](int buf, int i0) { // rows [i0, i0 + kRows) into tile[buf]; lane = row
    gram_stage_row<K>(&tile[buf][lr * LC], 1, i0 + lr, row1, cw, kWarps, k, W, ldw, bi, wi, bj,
                      P.nb);
  };
  T acc[2][2] = {{dzero<T>(), dzero<T>()}, {dzero<T>(), dzero<T>()}};
  gram_row_pipeline<kRows>(row0, row1, stage, [&](int buf, int i0) {
    if (!active) return;
    const T *rows = tile[buf];
    gram_tile_acc<8>(acc, kRows, [&](int i, T(&u)[2], T(&v)[2]) {
      read_adjacent(rows + i * LC + r0, u[0], u[1]);
      read_adjacent(rows + i * LC + c0, v[0], v[1]);
    });
    if constexpr (!SPLIT)
      if (gram_segment_ends<kRows>(i0, row0, row1))
        gram_tile_add(acc, tot + t, 136, i0 < kGramSegRows);
  });
  if (!active) return;
  if constexpr (SPLIT) { // the one segment's sum, into its partial tile
    gram_tile_store(acc, r0, c0, k, P.Gp + (size_t(blockIdx.x) * P.gseg + blockIdx.y) * K * K, K);
  } else {
    gram_tile_load(acc, tot + t, 136);
    gram_tile_store(acc, r0, c0, k, P.G + size_t(blockIdx.x) * K * K, K);
  }
}

} // namespace bsvd::detail::cuda
