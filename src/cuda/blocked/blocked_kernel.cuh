// The blocked GPU path (device code and its host driver); see blocked.hpp.
// Included by one .cu file per precision (blocked_s.cu ... blocked_z.cu).
#pragma once

#include "../../core/inner_sweeps.hpp"
#include "../../core/ordering.hpp"
#include "../../core/rotation.hpp"
#include "blocked.hpp"
#include "../common/device_scalar.cuh"
#include "../fused.hpp" // max_smem_optin
#include "../common/matrix_io.cuh"
#include "../common/side_stream.hpp"
#include "../tuning.hpp"
#include "../common/ws_layout.hpp"

#include <algorithm>
#include <chrono>
#include <type_traits>
#include <cmath>
#include <vector>

namespace bsvd::detail::cuda {

// One blocked matrix: its batch index, sizes, and where its W (mw x nw,
// ld mw), V (nw x nw, ld nw) and completion scratch (2 mw + nw) live.
struct BlkMat {
  int b, m, n, mw, nw;
  long long woff, voff, xoff;
};

// Per-matrix state words.
enum : int {
  kBsStart = 0,     // load: iterate (finite, non-zero)
  kBsNonfinite = 1, // load: a NaN or Inf entry
  kBsEscale = 2,    // load: power-of-two prescaling exponent
  kBsWords = 3
};

template <class Tstd> struct BlkParams {
  using T = dev_t<Tstd>;
  Batch<Tstd> batch;
  const BlkMat *mats = nullptr;
  int *state = nullptr;   // kBsWords per matrix
  int *rot = nullptr;     // per matrix: counted rotations of this sweep (blocked_counts)
  const int *esw = nullptr; // per matrix: the inner sweep cap of this sweep (inner_sweeps.hpp)
  T *W = nullptr, *V = nullptr, *X = nullptr;
  T *G = nullptr, *Q = nullptr; // K^2 per (active slot, pair): the instance's Gram order
  // Gram tailoring (the split plan of the own Gram kernel): gseg > 0 when
  // this step's Gram ran per kGramSegRows-row segment, one block each, the
  // partial sums in Gp (kBlockedKmax^2 per (slot, segment), gseg segments
  // per slot); the eigensolver's load folds them in order.
  T *Gp = nullptr;
  int gseg = 0;
  int *pflag = nullptr;         // per (active slot, pair): Q != I
  dreal_t<T> *nullf = nullptr;  // per matrix: blocked_null_floor (rotation.hpp)
  const int *act = nullptr;     // active slot -> blocked matrix
  // Gram by cuBLAS: the active matrices act[nown, nown + ncub) (nw a
  // multiple of 2 nb); gbase[j]: the first of the j-th one's GEMMs in the
  // pointer arrays gptr[0, gcap) (A), [gcap, 2 gcap) (B), [2 gcap, 3 gcap) (C)
  void **gptr = nullptr;
  const int *gbase = nullptr;
  long long gcap = 0;
  int nown = 0, ncub = 0;
  int nact = 0, half = 1, nb = 16, step = 0;
  int wr = 1, we = 1; // the block ordering: Config::wcycle_blocks, wcycle_sweeps (block_pair)
  double tol = 0;
  bool vectors = false;
  // fields read by the shared load / finish steps (matrix_io.cuh)
  int tpm = 256, ngroups = 8, col_iters = 1, mw_max = 0, nw_max = 0;
  // finish: bytes of shared memory for a completion round's X and C (the
  // largest (mw + nw) cb of the batch; 0: every matrix one column at a time)
  int round_bytes = 0;
  // finish: per thread block (matrix mi, converged, sweeps), 3 ints
  const int *fin = nullptr;
};

// Block columns of pair x of step `step` for a matrix of nw working
// columns (the CPU twin's block ordering over ceil(nw / nb) blocks:
// round-robin, or with wr >= 2 the two-level ordering of wcycle_pair,
// ordering.hpp, wr blocks per outer block, we sweeps one level down). One
// block: the single pair (0, -) of step 0.
__device__ __forceinline__ bool block_pair(int nw, int nb, int wr, int we, int step, int x,
                                           int &bi, int &wi, int &bj, int &wj) {
  const int nblk = (nw + nb - 1) / nb;
  if (nblk <= 1) {
    bi = 0; wi = nw; bj = 0; wj = 0;
    return step == 0 && x == 0;
  }
  if (!wcycle_pair(nblk, wr, we, step, x, bi, bj)) return false;
  wi = min(nb, nw - bi * nb);
  wj = min(nb, nw - bj * nb);
  return true;
}
__device__ __forceinline__ int pair_col(int c, int bi, int wi, int bj, int nb) {
  return c < wi ? bi * nb + c : bj * nb + (c - wi);
}

// Slot `slot` = y half + x of the step's launch (active matrix y, pair x):
// its blocked matrix mi, M = mats[mi], and block_pair's columns; false when
// pair x does not exist in this step. I: the caller's integer width for the
// slot (unsigned for blockIdx.x, long long for computed slots).
template <class Tstd, class I>
__device__ __forceinline__ bool slot_block_pair(const BlkParams<Tstd> &P, I slot, int &mi,
                                                BlkMat &M, int &bi, int &wi, int &bj, int &wj) {
  const int y = int(slot / P.half), x = int(slot - I(y) * P.half);
  mi = P.act[y];
  M = P.mats[mi];
  return block_pair(M.nw, P.nb, P.wr, P.we, P.step, x, bi, wi, bj, wj);
}
// Thread t's tile (tr, tc), tr <= tc, of the upper triangle of an N x N grid
// of tiles numbered column by column: t = tc (tc + 1) / 2 + tr.
template <int N> __device__ __forceinline__ void upper_tile(int t, int &tr, int &tc) {
  tc = 0;
  while (tc < N - 1 && (tc + 1) * (tc + 2) / 2 <= t) ++tc;
  tr = t - tc * (tc + 1) / 2;
}

template <class T> __device__ __forceinline__ T real_only(T x) { return x; }
template <class R> __device__ __forceinline__ cx<R> real_only(cx<R> x) { return {x.re, R(0)}; }

// ---- load: W = A (A^H), checks, prescaling, V = I --------------------------
template <class Tstd>
__global__ void __launch_bounds__(256) blk_load_kernel(const __grid_constant__ BlkParams<Tstd> P) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  __shared__ int st[kStInts];
  __shared__ unsigned long long amax_word;
  const BlkMat M = P.mats[blockIdx.x];
  const Team team{2, 0, int(blockDim.x)};
  T *W = P.W + M.woff;
  T *Vw = P.vectors ? P.V + M.voff : nullptr;
  R amax;
  bool nonfinite;
  const int escale = load_scaled(P, team, int(threadIdx.x), true, M.b, M.m, M.n, P.vectors, W,
                                 M.mw, Vw, M.nw, st, &amax_word, amax, nonfinite);
  if (threadIdx.x == 0) {
    int *s = P.state + size_t(blockIdx.x) * kBsWords;
    s[kBsStart] = !nonfinite && amax > R(0);
    s[kBsNonfinite] = nonfinite;
    s[kBsEscale] = escale;
    // amax of the prescaled W: the CPU twin's scale (power-of-two scaling is exact)
    P.nullf[blockIdx.x] = blocked_null_floor(nonfinite ? R(0) : dldexp(amax, escale));
  }
}

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
// The Gram matrix is summed per segment of kGramSegRows rows (rows in order
// within a segment, from zero), and the segments' sums are added in order:
// G = ((S_0 + S_1) + S_2) + ... . Every own-kernel plan computes exactly
// this -- the unsplit plans add each segment's sum to a running sum as it
// completes (gram_tile_add) and store it at the end, the split plan stores
// each segment's sum apart and the eigensolver's load adds them
// (evd_slot_load), the pair kernel folds into its G (gram_tile_fold) -- so
// the plan chosen for a step (which depends on the rest of the batch)
// cannot change a matrix's bits.
constexpr int kGramSegRows = 128;
// Stores the tile at rows r0 .. r0 + N - 1 and columns c0 .. c0 + N - 1 of
// the k x k Hermitian G (leading dimension ldg): the upper entries and
// their conjugates below, the diagonal real; entries outside k or below the
// diagonal of the tile are skipped.
template <int N, class T>
__device__ __forceinline__ void gram_tile_store(const T (&acc)[N][N], int r0, int c0, int k,
                                                T *G, int ldg) {
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
// zeroed. (A read-modify-write of G in global memory per segment instead
// cost d 1000 x 256^2 45 % of its Gram stage: the load's latency stalls
// the two-warp tile-4 blocks.)
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
template <int N, class T>
__device__ __forceinline__ void gram_tile_fold(T (&acc)[N][N], int r0, int c0, int k, T *G,
                                               int ldg, bool first) {
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
// Three plans (choose_gram_tile in tuning.hpp): tile 2 and tile 4, one
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
// History (H100, d 1000 x 512^2, Gram stage / ms per step): 2 x 2 tiles on
// a 16 x 16 grid, column-major tile: 715 ms; registers prefetch: 903;
// cp.async: 695; row-major, paired reads, 136 of 256 threads multiply: 651
// (1.57 ms); 136 of 160 threads: 661 (1.57) -- Nsight Compute: the
// shared-memory pipe at ~1 wavefront per cycle (46 wavefronts per row and
// pair: 2 x 2 tiles read ~4 per 4 FMAs, the staging writes 4-way
// conflicted); tile 4: 505 (1.17; 25 wavefronts per row and pair, DRAM at
// 57 %, the FP64 pipe at ~50 %: half its FMA instructions are the second
// warp's, 4 lanes active). docs/perf/blocked-path.md, Session 8.
constexpr int kGramTile2Threads = 160; // 136 multiply; all stage
constexpr int kGramTile4Threads = 64;  // 36 multiply; all stage
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
template <int kRows, class Stage, class Multiply>
__device__ __forceinline__ void gram_row_pipeline(int row0, int row1, Stage stage,
                                                  Multiply multiply) {
  stage(0, row0);
  int buf = 0;
  for (int i0 = row0; i0 < row1; i0 += kRows, buf ^= 1) {
    if (i0 + kRows < row1) {
      stage(buf ^ 1, i0 + kRows); // the buffer the previous iteration read
      cp_async_wait<1>();         // this tile's copies done (the next may fly)
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
__global__ void __launch_bounds__(kGramTile4Threads, gram_min_blocks<Tstd>()) blk_gram_tile4_kernel(const __grid_constant__ BlkParams<Tstd> P) {
  using T = dev_t<Tstd>;
  static_assert(K == 32 && kGramTile4Threads == 64, "36 threads hold the upper 4 x 4 tiles of K = 32; "
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
    gram_tile_acc<8>(acc, kRows, [&](int i, T (&u)[4], T (&v)[4]) {
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
__global__ void __launch_bounds__(kGramTile2Threads, sizeof(Tstd) <= 8 ? 7 : 6) blk_gram_tile2_kernel(const __grid_constant__ BlkParams<Tstd> P) {
  using T = dev_t<Tstd>;
  static_assert(K == 32, "136 threads hold the upper 2 x 2 tiles of K = 32");
  constexpr int kRows = 32, kWarps = kGramTile2Threads / 32;
  constexpr int LC = K + 2; // even: vector-aligned pairs; 4-way conflicts on the staging writes only
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
    gram_tile_acc<8>(acc, kRows, [&](int i, T (&u)[2], T (&v)[2]) {
      read_adjacent(rows + i * LC + r0, u[0], u[1]);
      read_adjacent(rows + i * LC + c0, v[0], v[1]);
    });
    if constexpr (!SPLIT)
      if (gram_segment_ends<kRows>(i0, row0, row1)) gram_tile_add(acc, tot + t, 136, i0 < kGramSegRows);
  });
  if (!active) return;
  if constexpr (SPLIT) { // the one segment's sum, into its partial tile
    gram_tile_store(acc, r0, c0, k, P.Gp + (size_t(blockIdx.x) * P.gseg + blockIdx.y) * K * K, K);
  } else {
    gram_tile_load(acc, tot + t, 136);
    gram_tile_store(acc, r0, c0, k, P.G + size_t(blockIdx.x) * K * K, K);
  }
}

// The wide instance's own Gram kernel (K = 64, nb up to 32; one plan): one
// block of five warps per (active matrix, pair); the 136 upper 4 x 4 tiles
// of G (a 16 x 16 grid) on threads 0 ... 135, each reading its 4 + 4
// columns of a row as four 2-entry vectors for 16 FMAs. Rows are staged
// kRows = 16 at a time (cp.async, two buffers; lane % 16 = row, so a
// column's 16 rows are one contiguous read), row-major, padded to K + 2.
// Rows are summed by segments as in the narrow plans (gram_tile_add).
constexpr int kGramWideThreads = 160; // 136 multiply; all stage
template <class Tstd, int K>
__global__ void __launch_bounds__(kGramWideThreads) blk_gram_wide_kernel(const __grid_constant__ BlkParams<Tstd> P) {
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
    gram_tile_acc<8>(acc, kRows, [&](int i, T (&u)[4], T (&v)[4]) {
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

// The tensor-core Gram plan (double only; choose_gram_tile returns 5): the
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
template <class Tstd, int K>
__global__ void __launch_bounds__(gram_mma_threads<K>()) blk_gram_mma_kernel(const __grid_constant__ BlkParams<Tstd> P) {
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

// ---- gram by cuBLAS: the step's pointer triples, then the mirror --------------
// The ordering step of MAGMA-SVD Sec. 5.1 for the vendor's batched GEMM: one
// thread per (cuBLAS matrix j, slot x); its pair's three products
// W_i^H W_i, W_i^H W_j, W_j^H W_j (nb x nb each) go to G's blocks (0, 0),
// (0, 1), (1, 1) at positions gbase[j] + 3 x .. + 2.
template <class Tstd, int K>
__global__ void __launch_bounds__(128) blk_gram_ptr_kernel(const __grid_constant__ BlkParams<Tstd> P) {
  using T = dev_t<Tstd>;
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= (long long)P.ncub * P.half) return;
  const int j = int(e / P.half), x = int(e - (long long)j * P.half), y = P.nown + j;
  const BlkMat M = P.mats[P.act[y]];
  int bi, wi, bj, wj;
  if (!block_pair(M.nw, P.nb, P.wr, P.we, P.step, x, bi, wi, bj, wj)) return;
  T *Wi = P.W + M.woff + size_t(bi) * P.nb * M.mw, *Wj = P.W + M.woff + size_t(bj) * P.nb * M.mw;
  T *G = P.G + (size_t(y) * P.half + x) * K * K;
  const long long at = P.gbase[j] + 3LL * x;
  void **A = P.gptr, **B = P.gptr + P.gcap, **C = P.gptr + 2 * P.gcap;
  A[at] = Wi, B[at] = Wi, C[at] = G;
  A[at + 1] = Wi, B[at + 1] = Wj, C[at + 1] = G + P.nb * K;
  A[at + 2] = Wj, B[at + 2] = Wj, C[at + 2] = G + P.nb + P.nb * K;
}
// After the GEMMs: the lower triangle from the upper (conjugated), the
// diagonal real, as the own Gram kernels store G (the eigensolvers read both
// triangles). One block per cuBLAS slot.
template <class Tstd, int K>
__global__ void __launch_bounds__(256) blk_gram_mirror_kernel(const __grid_constant__ BlkParams<Tstd> P) {
  using T = dev_t<Tstd>;
  const long long slot = (long long)P.nown * P.half + blockIdx.x;
  int mi, bi, wi, bj, wj;
  BlkMat M;
  if (!slot_block_pair(P, slot, mi, M, bi, wi, bj, wj)) return;
  const int k = wi + wj;
  T *G = P.G + size_t(slot) * K * K;
  for (int e = threadIdx.x; e < k * k; e += 256) {
    const int c = e / k, r = e - c * k;
    if (r > c) G[r + c * K] = dconj(G[c + r * K]); // reads the upper triangle only
    else if (r == c) G[r + r * K] = real_only(G[r + r * K]);
  }
}

// ---- evd: Q = eigenvectors of G (parallel two-sided Jacobi) ------------------
// The twin of cpu::evd_impl: per round-robin step over the k indices, each
// pair's rotation from the current G (one lane per pair), then G J
// (columns) and Q J, then J^H G (rows), then the exact 2 x 2 diagonal
// blocks; then Q <- Q + Q (I - Q^H Q) / 2 and the columns ordered by
// descending eigenvalue (stable) when sorting. One warp per (matrix, pair),
// kEvdWarps of them per block: __syncwarp and ballots, no block barriers
// (a one-block-per-matrix version was 2.7x slower; docs/perf/blocked-path.md). Lane l owns row l for G J and Q J and
// column l for J^H G (k <= 32). Shared memory per warp: G and Q (K x K+1)
// and the step's rotation records.
constexpr int kEvdWarps = 4;
template <class T, int K> struct EvdWarpSmem {
  using R = dreal_t<T>;
  T G[K * (K + 1)];
  T Q[K * (K + 1)];
  T te[K / 2];
  R c[K / 2], a[K / 2], b[K / 2], eig[K];
  int p[K / 2], q[K / 2], rank[K];
  unsigned ok; // bit j: pair j rotates in this step
};

// The rotation of one pair from a = G_pp, b = G_qq (real) and g = G_pq,
// p < q: when |g| needs one (needs_rotation), c, te and the new diagonal
// a', b' of the exact 2 x 2 result, and whether it counts for convergence
// (blocked_counts). Every eigensolver (shared memory, registers) calls this
// one: their equal bits rest on it.
template <class T> struct EvdPairRot {
  using R = dreal_t<T>;
  bool rotates = false, counts = false;
  R c, a, b;
  T te;
};
template <class T>
__device__ __forceinline__ EvdPairRot<T> evd_pair_rot(dreal_t<T> a, dreal_t<T> b, T g,
                                                     dreal_t<T> tol, dreal_t<T> floor,
                                                     dreal_t<T> nullf) {
  using R = dreal_t<T>;
  EvdPairRot<T> r;
  const R ag = dabs(g);
  if (needs_rotation(fabs(a), fabs(b), ag, tol)) {
    const Rotation<R> rot = jacobi_rotation(a, b, ag);
    r.rotates = true;
    r.c = rot.c;
    r.te = tconj_phase(rot.t, g, ag);
    r.a = a - rot.t * ag;
    r.b = b + rot.t * ag;
    r.counts = blocked_counts(fabs(a), fabs(b), floor, nullf);
  }
  return r;
}

// A rotating pair's record x (c, te, new diagonal a, b) into R: the warp
// solve's EvdWarpSmem and the block solve's EvdStepRec alike.
template <class T, class Rec>
__device__ __forceinline__ void evd_store_rot(Rec &R, int x, const EvdPairRot<T> &r) {
  R.c[x] = r.c;
  R.te[x] = r.te;
  R.a[x] = r.a;
  R.b[x] = r.b;
}

// Pair x of round-robin step s over `slots` indices: (p, q) into S.p[x],
// S.q[x] and, when G_pq needs a rotation, the rotation into S.c, S.te
// and the new diagonal into S.a, S.b (mine); sig: it counts for
// convergence. One thread per pair.
template <class T, int K>
__device__ __forceinline__ void evd_pair_rotation(EvdWarpSmem<T, K> &S, int k, int slots, int s,
                                                  int x, dreal_t<T> tol, dreal_t<T> floor,
                                                  dreal_t<T> nullf, bool &mine, bool &sig) {
  constexpr int L = K + 1;
  int p, q;
  round_robin_pair(slots, s, x, p, q);
  if (q < k) {
    const EvdPairRot<T> r = evd_pair_rot(dreal(S.G[p + p * L]), dreal(S.G[q + q * L]),
                                         S.G[p + q * L], tol, floor, nullf);
    if (r.rotates) {
      evd_store_rot(S, x, r);
      mine = true;
      sig = r.counts;
    }
  }
  S.p[x] = p;
  S.q[x] = q;
}

// The warp's solve of S.G (k x k, S.Q = I on entry): sweeps of parallel
// round-robin steps until one rotates nothing or cap sweeps ran. Returns
// (warp-uniform) the rotations applied and how many of them count for
// convergence (blocked_counts; the CPU twin's EvdCount::significant).
struct EvdRun {
  long applied = 0;
  long significant = 0;
};
template <class T, int K>
__device__ EvdRun evd_warp_iterate(EvdWarpSmem<T, K> &S, int k, int l, dreal_t<T> tol,
                                   dreal_t<T> nullf, int cap) {
  using R = dreal_t<T>;
  constexpr int L = K + 1;
  R gm = l < k ? fabs(dreal(S.G[l + l * L])) : R(0);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) gm = fmax(gm, shfl_xor(gm, o));
  const R floor = blocked_noise_floor(gm, k);
  const int slots = k + (k & 1), steps = slots - 1, half = slots / 2;
  EvdRun run;
  for (int sweep = 0; sweep < cap; ++sweep) {
    long in_sweep = 0;
    for (int s = 0; s < steps; ++s) {
      bool mine = false, sig = false;
      if (l < half) evd_pair_rotation(S, k, slots, s, l, tol, floor, nullf, mine, sig);
      const unsigned ok = __ballot_sync(0xffffffffu, mine);
      run.significant += __popc(__ballot_sync(0xffffffffu, sig));
      if (ok == 0) continue;
      in_sweep += __popc(ok);
      __syncwarp();
      // G J and Q J: lane = row.
      if (l < k)
        for (int j = 0; j < half; ++j) {
          if (!((ok >> j) & 1u)) continue;
          const int p = S.p[j], q = S.q[j];
          const R c = S.c[j];
          const T te = S.te[j];
          T xv = S.G[l + p * L], yv = S.G[l + q * L];
          rot_tangent(xv, yv, c, te, false);
          S.G[l + p * L] = xv;
          S.G[l + q * L] = yv;
          xv = S.Q[l + p * L];
          yv = S.Q[l + q * L];
          rot_tangent(xv, yv, c, te, false);
          S.Q[l + p * L] = xv;
          S.Q[l + q * L] = yv;
        }
      __syncwarp();
      // J^H G: lane = column.
      if (l < k)
        for (int j = 0; j < half; ++j) {
          if (!((ok >> j) & 1u)) continue;
          const int p = S.p[j], q = S.q[j];
          T xv = S.G[p + l * L], yv = S.G[q + l * L];
          rot_tangent(xv, yv, S.c[j], dconj(S.te[j]), false);
          S.G[p + l * L] = xv;
          S.G[q + l * L] = yv;
        }
      __syncwarp();
      if (l < half && ((ok >> l) & 1u)) {
        const int p = S.p[l], q = S.q[l];
        S.G[p + p * L] = dfrom_real<T>(S.a[l]);
        S.G[q + q * L] = dfrom_real<T>(S.b[l]);
        S.G[p + q * L] = dzero<T>();
        S.G[q + p * L] = dzero<T>();
      }
      __syncwarp();
    }
    run.applied += in_sweep;
    if (in_sweep == 0) break;
  }
  return run;
}

// The warp's solve with G in registers, for full pairs (k = K = 32) of
// types up to 8 bytes (s, d, c), one or two sweeps (the inexact mode and the
// stalled matrices' two of InnerSweepRule, src/core/inner_sweeps.hpp; more
// sweeps take the shared-memory solve, which gives the same bits).
// The same operations per entry in the same order as evd_warp_iterate, so
// the same bits; what changes is where the entries live. The shared-memory
// solve moves every entry of G and Q through shared memory for each
// rotation (~12 accesses per pair per lane and step): shared-memory
// bandwidth was its bound (docs/perf/wcycle.md, session 6). Here:
//  - lane l holds row l of G (rows stay put: J^H G mixes the rows of two
//    lanes through one shuffle per entry);
//  - columns are held by *position*: the round-robin step s pairs indices
//    i + j = 2 s (mod 31) and (s, 31), which in positions pos = i - s
//    (mod 31), 31 fixed, is the fixed pairing (0, 31), (x, 31 - x); so G J
//    acts on fixed registers, and between steps every position moves down
//    by one on the 31-cycle (register moves; after 31 steps, i.e. a sweep,
//    positions are indices again);
//  - a pair whose first position holds the larger index is applied with
//    neg_conj(te) (rot_first in device_scalar.cuh: the same bits);
//  - the diagonal is kept apart (dg, real): a lane's own diagonal register
//    only ever mixes into entries of its pair's 2 x 2 block, which the
//    exact values overwrite; the off-diagonal entry of that block is read
//    and zeroed by a select over the row (its register depends on the
//    lane);
//  - Q J (columns of Q only, no lane exchange) is not done alongside: the
//    sweep records each step's rotations (EvdRegHist, in S.G's space, free
//    while G is in registers; a second sweep's in S.Q's, free while Q is
//    the identity it holds on entry) and then replays them on row l of Q
//    in registers, starting from the identity, the 31 steps unrolled so
//    that the positions are compile-time register indices. G and Q are
//    never live together: ~150 registers instead of 240 (12 warps per SM
//    instead of 8; Nsight Compute: latency-bound at 0.41 issued
//    instructions per scheduler and cycle before, docs/perf/blocked-path.md,
//    Session 8).
template <class T> constexpr bool kEvdInRegisters = sizeof(T) <= 8;
template <class T, int K> struct EvdRegHist {
  T te[K - 1][K / 2];
  dreal_t<T> c[K - 1][K / 2];
  unsigned ok[K - 1]; // bit x: pair x (positions x, 31 - x) rotated in step s
};
// r[idx] for a register array r and a run-time idx in [0, N), N a power of
// two: log2(N) levels of selects on idx's bits (N - 1 selects, log2(N) deep)
// instead of N compares and selects in one dependent chain.
template <class T, int N> __device__ __forceinline__ T reg_select(const T (&r)[N], int idx) {
  static_assert(N >= 2 && (N & (N - 1)) == 0, "a power of two");
  T t[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) t[i] = (idx & 1) ? r[2 * i + 1] : r[2 * i];
  if constexpr (N == 2) return t[0];
  else return reg_select<T, N / 2>(t, idx >> 1);
}

// The sweeps of the register solve on row l of G (gr, with its diagonal
// entry dg apart), recording sweep h's rotations in H0 (h = 0) or H1
// (h = 1) and the new diagonals in Sa, Sb; `recorded` returns how many
// sweeps were recorded. Both register solves (evd_reg_sweep below and the
// lean kernel's) call this one: their equal bits rest on it.
template <class T, int K>
__device__ __forceinline__ EvdRun evd_reg_sweeps(T (&gr)[K], dreal_t<T> &dg, EvdRegHist<T, K> *H0,
                                                 EvdRegHist<T, K> *H1, dreal_t<T> *Sa,
                                                 dreal_t<T> *Sb, int l, dreal_t<T> tol,
                                                 dreal_t<T> nullf, int cap, int &recorded) {
  using R = dreal_t<T>;
  static_assert(K == 32, "one lane per row");
  constexpr int M = K - 1; // M: the cycle of positions 0 .. 30
  // Sweep h's history: a select, not an array (an array of pointers
  // indexed at run time lives in local memory).
  auto hist = [H0, H1](int h) -> EvdRegHist<T, K> & { return *(h == 0 ? H0 : H1); };
  EvdRun run;
  recorded = 0; // sweeps whose rotations are in hist(0 .. recorded - 1)
  {
    R gm = fabs(dg);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) gm = fmax(gm, shfl_xor(gm, o));
    const R floor = blocked_noise_floor(gm, K);
#pragma unroll 1
    for (int sweep = 0; sweep < cap && sweep < 2; ++sweep) {
      EvdRegHist<T, K> &H = hist(sweep);
      long in_sweep = 0;
#pragma unroll 1
      for (int s = 0; s < M; ++s) {
        const int pos = l == M ? M : (l - s + M) % M;
        const int pp = pos == 0 ? M : pos == M ? 0 : M - pos; // the partner's position
        const int partner = pp == M ? M : (pp + s) % M;      // ... and lane (= index)
        const int x = min(pos, pp);                           // the pair
        const bool first = pos < pp;
        // G(l, partner): a select over the row (a register array cannot be
        // indexed at run time in registers), as a tree over pp's bits.
        const T off = reg_select<T, K>(gr, pp);
        const R dpart = shfl_idx(dg, partner);
        const T opart = shfl_idx(off, partner);
        bool mine = false, sig = false;
        if (first) { // (p, q) = the pair's indices in order
          const bool lp = l < partner;
          const EvdPairRot<T> r = evd_pair_rot(lp ? dg : dpart, lp ? dpart : dg,
                                               lp ? off : opart, tol, floor, nullf);
          if (r.rotates) {
            H.c[s][x] = r.c;
            H.te[s][x] = lp ? r.te : neg_conj(r.te); // for the positions (x, pp)
            Sa[x] = lp ? r.a : r.b;                    // new diagonal at position x
            Sb[x] = lp ? r.b : r.a;                    // ... and at pp
            mine = true;
            sig = r.counts;
          }
        }
        // Pair x's first position is lane (x + s) mod 31: rotate the ballot.
        const unsigned bal = __ballot_sync(0xffffffffu, mine) & 0x7fffffffu;
        const unsigned ok = ((bal >> s) | (bal << (M - s))) & 0xffffu;
        if (l == 0) H.ok[s] = ok;
        run.significant += __popc(__ballot_sync(0xffffffffu, sig));
        if (ok != 0) {
          in_sweep += __popc(ok);
          __syncwarp();
          // G J: fixed registers.
#pragma unroll
          for (int px = 0; px < K / 2; ++px) {
            if (!((ok >> px) & 1u)) continue;
            const int py = px == 0 ? M : M - px;
            rot_tangent(gr[px], gr[py], H.c[s][px], H.te[s][px], false);
          }
          // J^H G: rows (x, pp) with conj(te); the second row's output is
          // rot_first with the roles exchanged.
          const bool rotates = (ok >> x) & 1u;
          R cm = R(0);
          T sg = dzero<T>();
          if (rotates) {
            cm = H.c[s][x];
            const T rho = dconj(H.te[s][x]);
            sg = first ? rho : neg_conj(rho);
          }
#pragma unroll
          for (int c = 0; c < K; ++c) {
            const T o = shfl_idx(gr[c], partner);
            if (rotates) gr[c] = rot_first(gr[c], o, cm, sg);
          }
          if (rotates) { // the exact 2 x 2 block
            dg = first ? Sa[x] : Sb[x];
#pragma unroll
            for (int c = 0; c < K; ++c)
              if (c == pp) gr[c] = dzero<T>();
          }
          __syncwarp(); // Sa, Sb are read before the next step writes them
        }
        // Positions move down by one on the 31-cycle.
        const T g0 = gr[0];
#pragma unroll
        for (int c = 0; c + 1 < M; ++c) gr[c] = gr[c + 1];
        gr[M - 1] = g0;
      }
      // After 31 steps the positions are the indices again.
      run.applied += in_sweep;
      recorded = sweep + 1;
      if (in_sweep == 0) break; // as the twin: a sweep that rotated nothing ends it
    }
  }
  return run;
}

// Q J, replayed on row l of Q (qr; the identity on entry) from the
// histories of `recorded` sweeps: at step s the positions (px, py) hold the
// columns (px + s) mod 31, (py + s) mod 31 (31 stays 31); each entry sees
// the same rotations in the same order as in the twin (sweep by sweep).
template <class T, int K>
__device__ __forceinline__ void evd_reg_replay(T (&qr)[K], const EvdRegHist<T, K> *H0,
                                               const EvdRegHist<T, K> *H1, int recorded, int l) {
  constexpr int M = K - 1;
#pragma unroll
  for (int c = 0; c < K; ++c) qr[c] = c == l ? done<T>() : dzero<T>();
#pragma unroll 1
  for (int h = 0; h < recorded; ++h) {
    const EvdRegHist<T, K> &H = *(h == 0 ? H0 : H1);
#pragma unroll
    for (int s = 0; s < M; ++s) {
      const unsigned ok = H.ok[s];
#pragma unroll
      for (int px = 0; px < K / 2; ++px) {
        if (!((ok >> px) & 1u)) continue;
        const int py = px == 0 ? M : M - px;
        const int ix = (px + s) % M, iy = py == M ? M : (py + s) % M;
        rot_tangent(qr[ix], qr[iy], H.c[s][px], H.te[s][px], false);
      }
    }
  }
}

// The register solve of the warp plan: G from S.G, the histories in S.G
// (sweep 0, free while G is in registers) and S.Q (sweep 1, free while Q is
// the identity it holds on entry), Q into S.Q and the diagonal into S.G.
template <class T, int K>
__device__ EvdRun evd_reg_sweep(EvdWarpSmem<T, K> &S, int l, dreal_t<T> tol, dreal_t<T> nullf,
                                int cap) {
  using R = dreal_t<T>;
  static_assert(sizeof(EvdRegHist<T, K>) <= sizeof(S.G) &&
                    sizeof(EvdRegHist<T, K>) <= sizeof(S.Q),
                "the histories live in S.G and S.Q");
  constexpr int L = K + 1;
  EvdRegHist<T, K> *H0 = reinterpret_cast<EvdRegHist<T, K> *>(S.G);
  EvdRegHist<T, K> *H1 = reinterpret_cast<EvdRegHist<T, K> *>(S.Q);
  EvdRun run;
  R dg;
  int recorded = 0;
  {
    T gr[K];
#pragma unroll
    for (int c = 0; c < K; ++c) gr[c] = S.G[l + c * L];
    dg = dreal(S.G[l + l * L]);
    __syncwarp(); // G is in registers: S.G takes the history
    run = evd_reg_sweeps<T, K>(gr, dg, H0, H1, S.a, S.b, l, tol, nullf, cap, recorded);
  }
  __syncwarp(); // the histories are complete
  if (run.applied > 0) {
    T qr[K];
    evd_reg_replay<T, K>(qr, H0, H1, recorded, l);
    __syncwarp(); // every lane has read the history in S.Q
#pragma unroll
    for (int c = 0; c < K; ++c) S.Q[l + c * L] = qr[c];
  }
  __syncwarp(); // the history is read before S.G takes the diagonal
  // The diagonal back to shared memory (what evd_slot_store reads).
  S.G[l + l * L] = dfrom_real<T>(dg);
  __syncwarp();
  return run;
}

// The warp solve: in registers when it can (above), else in shared memory.
template <class T, int K>
__device__ __forceinline__ EvdRun evd_warp_solve(EvdWarpSmem<T, K> &S, int k, int l,
                                                 dreal_t<T> tol, dreal_t<T> nullf, int cap) {
  if constexpr (kEvdInRegisters<T>)
    if (k == K && cap <= 2) return evd_reg_sweep<T, K>(S, l, tol, nullf, cap);
  return evd_warp_iterate(S, k, l, tol, nullf, cap);
}

// Barrier of the NT threads that solve one Gram matrix: the warp, or the
// whole block (the block eigensolver below runs one matrix per block).
template <int NT> __device__ __forceinline__ void evd_sync() {
  if constexpr (NT == 32) __syncwarp();
  else __syncthreads();
}

// Column j's place when the k eigenvalues eig are ordered descending,
// ties by index (stable); j itself when !sort.
template <class R>
__device__ __forceinline__ int evd_rank(const R *eig, int k, int j, bool sort) {
  if (!sort) return j;
  int r = 0;
  const R ej = eig[j];
  for (int i = 0; i < k; ++i) r += eig[i] > ej || (i < j && eig[i] == ej);
  return r;
}

// After a solve that rotated, with S.eig[0, k) the new squared column norms
// (eigenvalues): C = I - Q^H Q into S.G, the ranks of descending S.eig
// (stable; identity when !sort) into S.rank, and Q + Q C / 2 with column j
// at position rank[j] into out (leading dimension ldo). NT threads (a warp,
// or the block); thread tid owns column tid % K of C and row tid % K of
// the output, for every (NT / K)-th row / column from tid / K.
template <class T, int K, int NT>
__device__ void evd_finish(EvdWarpSmem<T, K> &S, int k, int tid, bool sort, T *out, int ldo) {
  using R = dreal_t<T>;
  static_assert(NT % K == 0, "whole columns per thread group");
  constexpr int L = K + 1, RS = NT / K;
  const int l = tid % K, r0 = tid / K;
  evd_sync<NT>();
  // Up to 8 bytes per entry (s, d, c) the thread's own column of Q (row of
  // Q below) is read once into registers; the other operand is the same
  // for all threads (a broadcast). Same products in the same order. Not
  // for K = 64 (64 more registers would leave one 256-thread block per SM).
  constexpr bool kCache = kEvdInRegisters<T> && K <= 32;
  T own[kCache ? K : 1];
  if constexpr (kCache) {
#pragma unroll
    for (int r = 0; r < K; ++r) own[r] = l < k && r < k ? S.Q[r + l * L] : dzero<T>();
  }
  // C = I - Q^H Q into G; thread = column l.
  if (l < k)
    for (int i = r0; i < k; i += RS) {
      T h = dzero<T>();
      if constexpr (kCache) {
#pragma unroll
        for (int r = 0; r < K; ++r)
          if (r < k) dot_acc(h, S.Q[r + i * L], own[r]);
      } else {
        for (int r = 0; r < k; ++r) dot_acc(h, S.Q[r + i * L], S.Q[r + l * L]);
      }
      S.G[i + l * L] = i == l ? dfrom_real<T>(R(1) - dreal(h)) : dzero<T>() - h;
    }
  if constexpr (kCache) {
#pragma unroll
    for (int r = 0; r < K; ++r) own[r] = l < k && r < k ? S.Q[l + r * L] : dzero<T>();
  }
  if (tid < k) S.rank[tid] = evd_rank(S.eig, k, tid, sort);
  evd_sync<NT>();
  // Q + Q C / 2, column j to position rank[j]; thread = row l.
  if (l < k)
    for (int j = r0; j < k; j += RS) {
      T s = dzero<T>();
      if constexpr (kCache) {
#pragma unroll
        for (int r = 0; r < K; ++r)
          if (r < k) s = s + own[r] * S.G[r + j * L];
      } else {
        for (int r = 0; r < k; ++r) s = s + S.Q[l + r * L] * S.G[r + j * L];
      }
      out[l + S.rank[j] * ldo] = S.Q[l + j * L] + dscale(s, R(0.5));
    }
  evd_sync<NT>();
}

// The same solve by NT = 128 or 256 threads (one block per Gram matrix),
// for steps with too few pairs to fill the GPU with one warp each (the
// tail of a mixed batch, where a few large matrices iterate alone: the
// warp solve's 31 dependent steps of 16 serial pair updates per lane are
// then the whole step's latency). Every entry sees the same operations in
// the same order as in the warp solve (G J before J^H G, one rotation per
// side, the exact 2 x 2 diagonal block), so all plans give the same bits;
// the block solve spreads the entries over more threads and pipelines the
// steps:
//  - warps 1 .. NT/32 - 1 (the appliers) apply step s: G_next = J^H G J
//    from G_cur into a second buffer (2 x 2 blocks of pairs a (rows), b
//    (columns); blocks no rotation touches are copied) and Q <- Q J in place;
//  - meanwhile warp 0 finds step s + 1's rotations (lane = pair). A pair
//    (p, q) of step s + 1 needs G_next's p, q diagonal and its (p, q)
//    entry: the diagonal is step s's exact 2 x 2 result (or G_cur's when p's
//    pair did not rotate), and the entry is computed from G_cur's 2 x 2
//    block of the step-s pairs of p and q with the two step-s rotations,
//    by the very operations the appliers use for that block;
//  - one barrier per step (there were two: warp 0's rotations, then the
//    others' application, in series). Session 13's Nsight Compute profile
//    of a lone 511^2 matrix: warps 1-7 spent 41 % of their samples at the
//    barrier that waited for warp 0's rotations.
// Step records (pairs, rotations, ok bits, each index's pair) alternate
// between two buffers; G alternates only after steps that rotate.
template <class T, int K> struct EvdStepRec {
  using R = dreal_t<T>;
  T te[K / 2];
  R c[K / 2], a[K / 2], b[K / 2];
  int p[K / 2], q[K / 2];
  int pos[K]; // index i is in pair pos[i] of this step (i < slots)
  unsigned ok; // bit x: pair x rotates
};
template <class T, int K> struct EvdBlockSmem {
  EvdWarpSmem<T, K> S; // G (the first buffer), Q, the finish's fields
  T G2[K * (K + 1)];   // the second G buffer
  EvdStepRec<T, K> rec[2];
};

// The 2 x 2 block of J^H G_cur J at rows (pa, qa) of pair a and columns
// (pb, qb) of pair b of step R (a != b, or a == b when that pair does not
// rotate: then a copy): G J_b, then J_a^H, each only when
// its pair rotates (oa, ob); q >= k is the odd order's empty slot (its
// entries stay zero and are not read). The appliers and warp 0's
// look-ahead both call this one: their equal bits rest on it.
template <class T, int K>
__device__ __forceinline__ void evd_block_2x2(const T *Gc, const EvdStepRec<T, K> &R, int k,
                                              int a, int b, bool oa, bool ob, T &xpp, T &xpq,
                                              T &xqp, T &xqq) {
  constexpr int L = K + 1;
  const int pa = R.p[a], qa = R.q[a], pb = R.p[b], qb = R.q[b];
  const bool va = qa < k, vb = qb < k;
  xpp = Gc[pa + pb * L];
  xpq = vb ? Gc[pa + qb * L] : dzero<T>();
  xqp = va ? Gc[qa + pb * L] : dzero<T>();
  xqq = va && vb ? Gc[qa + qb * L] : dzero<T>();
  if (ob) { // rows pa, qa times J_b (ob implies vb)
    rot_tangent(xpp, xpq, R.c[b], R.te[b], false);
    if (va) rot_tangent(xqp, xqq, R.c[b], R.te[b], false);
  }
  if (oa) { // J_a^H times columns pb, qb (oa implies va)
    rot_tangent(xpp, xqp, R.c[a], dconj(R.te[a]), false);
    if (vb) rot_tangent(xpq, xqq, R.c[a], dconj(R.te[a]), false);
  }
}

// Warp 0, lane x < half: pair x of step s1 and its rotation into Rn, from
// G_cur and the previous step's records Rc (rotations applied to G_cur give
// G_next; Rc.ok = 0: G_cur is current). sig: the rotation counts.
template <class T, int K>
__device__ __forceinline__ void evd_lookahead(const T *Gc, const EvdStepRec<T, K> &Rc,
                                              EvdStepRec<T, K> &Rn, int k, int slots, int s1,
                                              int x, dreal_t<T> tol, dreal_t<T> floor,
                                              dreal_t<T> nullf, bool &mine, bool &sig) {
  using R = dreal_t<T>;
  constexpr int L = K + 1;
  int p, q;
  round_robin_pair(slots, s1, x, p, q);
  Rn.p[x] = p;
  Rn.q[x] = q;
  Rn.pos[p] = x;
  Rn.pos[q] = x;
  if (q >= k) return; // the odd order's empty slot
  const unsigned okc = Rc.ok;
  const int A = Rc.pos[p], B = Rc.pos[q];
  const bool oA = okc != 0 && ((okc >> A) & 1u), oB = okc != 0 && ((okc >> B) & 1u);
  const R dp = oA ? (p == Rc.p[A] ? Rc.a[A] : Rc.b[A]) : dreal(Gc[p + p * L]);
  const R dq = oB ? (q == Rc.p[B] ? Rc.a[B] : Rc.b[B]) : dreal(Gc[q + q * L]);
  T off;
  if (!oA && !oB) {
    off = Gc[p + q * L];
  } else if (A == B) { // (p, q) was step s's pair too (two-index orders): exact zero
    off = dzero<T>();
  } else { // the appliers' block (A rows, B columns)
    T xpp, xpq, xqp, xqq;
    evd_block_2x2(Gc, Rc, k, A, B, oA, oB, xpp, xpq, xqp, xqq);
    const bool pfirst = p == Rc.p[A], qfirst = q == Rc.p[B];
    off = pfirst ? (qfirst ? xpp : xpq) : (qfirst ? xqp : xqq);
  }
  const EvdPairRot<T> r = evd_pair_rot(dp, dq, off, tol, floor, nullf);
  if (r.rotates) {
    evd_store_rot(Rn, x, r);
    mine = true;
    sig = r.counts;
  }
}

// KC > 0: the pair's width k is KC at compile time (full pairs, k = K, the
// common case): the round-robin indices, the 2 x 2 block and (row, pair)
// decompositions become shifts and constants instead of integer divisions
// by run-time values, which sat on every step's dependent chain.
template <class T, int K, int NT, int KC = 0>
__device__ EvdRun evd_block_iterate(EvdBlockSmem<T, K> &B, int k_run, int tid, dreal_t<T> tol,
                                    dreal_t<T> nullf, int cap) {
  static_assert(NT >= 64 && NT % 32 == 0, "warp 0 finds rotations, the others apply them");
  const int k = KC > 0 ? KC : k_run;
  using R = dreal_t<T>;
  constexpr int L = K + 1, NA = NT - 32; // NA appliers
  EvdWarpSmem<T, K> &S = B.S;
  R gm = 0; // max |G_ll|: every thread alike (fmax is exact in any order)
  for (int i = 0; i < k; ++i) gm = fmax(gm, fabs(dreal(S.G[i + i * L])));
  const R floor = blocked_noise_floor(gm, k);
  const int slots = k + (k & 1), steps = slots - 1, half = slots / 2;
  EvdRun run;
  long sig_count = 0; // warp 0's count of significant rotations
  int gc = 0, rc = 0; // live G buffer (0: S.G, 1: G2) and record buffer
  auto gbuf = [&](int i) -> T * { return i == 0 ? S.G : B.G2; };
  // Step 0's rotations from G itself (no previous step).
  if (tid < 32 && cap > 0) {
    if (tid == 0) B.rec[1].ok = 0;
    __syncwarp();
    bool mine = false, sig = false;
    if (tid < half)
      evd_lookahead(S.G, B.rec[1], B.rec[0], k, slots, 0, tid, tol, floor, nullf, mine, sig);
    const unsigned ok = __ballot_sync(0xffffffffu, mine);
    sig_count += __popc(__ballot_sync(0xffffffffu, sig));
    if (tid == 0) B.rec[0].ok = ok;
  }
  __syncthreads();
  for (int sweep = 0; sweep < cap; ++sweep) {
    long in_sweep = 0;
    for (int s = 0; s < steps; ++s) {
      const EvdStepRec<T, K> &Rc = B.rec[rc];
      const unsigned ok = Rc.ok;
      in_sweep += __popc(ok);
      // The next step: within the sweep, or the next sweep's first when
      // this one rotated and the cap allows (the loop's own test, known
      // here from the ok bits every thread has read).
      const bool next = s + 1 < steps || (in_sweep > 0 && sweep + 1 < cap);
      const T *Gc = gbuf(gc);
      if (tid < 32) {
        if (next) {
          EvdStepRec<T, K> &Rn = B.rec[rc ^ 1];
          bool mine = false, sig = false;
          if (tid < half)
            evd_lookahead(Gc, Rc, Rn, k, slots, s + 1 < steps ? s + 1 : 0, tid, tol, floor, nullf,
                          mine, sig);
          const unsigned okn = __ballot_sync(0xffffffffu, mine);
          sig_count += __popc(__ballot_sync(0xffffffffu, sig));
          if (tid == 0) Rn.ok = okn;
        }
      } else if (ok != 0) {
        const int u = tid - 32;
        T *Gn = gbuf(gc ^ 1);
        // G_next = J^H G_cur J by 2 x 2 blocks of pairs (a: rows, b: columns).
        for (int e = u; e < half * half; e += NA) {
          const int a = e % half, b = e / half;
          const bool oa = (ok >> a) & 1u, ob = (ok >> b) & 1u;
          const int pa = Rc.p[a], qa = Rc.q[a], pb = Rc.p[b], qb = Rc.q[b];
          const bool va = qa < k, vb = qb < k; // q = k: the odd order's empty slot
          if (a == b && oa) { // the exact 2 x 2 result, as the warp solve
            Gn[pa + pa * L] = dfrom_real<T>(Rc.a[a]);
            Gn[qa + qa * L] = dfrom_real<T>(Rc.b[a]);
            Gn[pa + qa * L] = dzero<T>();
            Gn[qa + pa * L] = dzero<T>();
            continue;
          }
          T xpp, xpq, xqp, xqq; // (a != b, or a == b and nothing rotates: a copy)
          evd_block_2x2(Gc, Rc, k, a, b, oa, ob, xpp, xpq, xqp, xqq);
          Gn[pa + pb * L] = xpp;
          if (vb) Gn[pa + qb * L] = xpq;
          if (va) Gn[qa + pb * L] = xqp;
          if (va && vb) Gn[qa + qb * L] = xqq;
        }
        // Q <- Q J: (row, pair) entries, in place.
        for (int e = u; e < k * half; e += NA) {
          const int b = e / k, i = e - b * k;
          if (!((ok >> b) & 1u)) continue;
          const int pb = Rc.p[b], qb = Rc.q[b];
          T xv = S.Q[i + pb * L], yv = S.Q[i + qb * L];
          rot_tangent(xv, yv, Rc.c[b], Rc.te[b], false);
          S.Q[i + pb * L] = xv;
          S.Q[i + qb * L] = yv;
        }
      }
      __syncthreads(); // step s applied, step s + 1's rotations found
      if (ok != 0) gc ^= 1;
      rc ^= 1;
    }
    run.applied += in_sweep;
    if (in_sweep == 0) break;
  }
  run.significant = sig_count;
  // The eigenvalues are read from S.G's diagonal (evd_slot_store).
  if (gc == 1) {
    if (tid < k) S.G[tid + tid * L] = B.G2[tid + tid * L];
    __syncthreads();
  }
  return run;
}

// The eigensolver kernels' shared ends: G of slot `slot` into S with
// S.Q = I (returns false, pflag = 0, when the slot has no pair this step),
// and after the solve Q into P.Q (pflag = 1, the matrix's rotation flag).
template <class Tstd, class T, int K, int NT>
__device__ bool evd_slot_load(const BlkParams<Tstd> &P, EvdWarpSmem<T, K> &S, long long slot,
                              int tid, int &mi, int &k) {
  constexpr int L = K + 1;
  BlkMat M;
  int bi, wi, bj, wj;
  if (!slot_block_pair(P, slot, mi, M, bi, wi, bj, wj)) {
    if (tid == 0) P.pflag[slot] = 0;
    return false;
  }
  k = wi + wj;
  // The split Gram plan's partial sums (own-kernel matrices come first in
  // the step's order): added in segment order, as the unsplit plans fold.
  const bool parts = P.gseg > 0 && slot / P.half < P.nown;
  const int nseg = parts ? (M.mw + kGramSegRows - 1) / kGramSegRows : 1;
  const T *Gg = parts ? P.Gp + size_t(slot) * P.gseg * K * K : P.G + size_t(slot) * K * K;
  if (nseg == 1) { // (one loop of independent loads: the common case)
    for (int e = tid; e < k * k; e += NT) {
      const int c = e / k, r = e - c * k;
      S.G[r + c * L] = Gg[r + c * K];
      S.Q[r + c * L] = r == c ? done<T>() : dzero<T>();
    }
  } else {
    // The block plans (NT >= 128) keep four partial tiles' loads in flight
    // before their sums (in segment order, the same bits): one dependent
    // load latency per add sat on the tail's critical path (Nsight Compute,
    // a lone 511^2 matrix: 12 % of the eigensolver launch's stall samples,
    // session 14). The warp plan (register-bound) keeps the plain loop.
    constexpr size_t KK = size_t(K) * K;
    constexpr int kInFlight = NT >= 128 ? 4 : 1;
    for (int e = tid; e < k * k; e += NT) {
      const int c = e / k, r = e - c * k;
      const T *src = Gg + r + c * K;
      T g = src[0];
      for (int sg = 1; sg < nseg; sg += kInFlight) {
        const int n4 = nseg - sg;
        T x[kInFlight];
#pragma unroll
        for (int j = 0; j < kInFlight; ++j) x[j] = j < n4 ? src[(sg + j) * KK] : dzero<T>();
#pragma unroll
        for (int j = 0; j < kInFlight; ++j)
          if (j < n4) g = g + x[j];
      }
      S.G[r + c * L] = g;
      S.Q[r + c * L] = r == c ? done<T>() : dzero<T>();
    }
  }
  evd_sync<NT>();
  return true;
}
template <class Tstd, class T, int K, int NT>
__device__ void evd_slot_store(const BlkParams<Tstd> &P, EvdWarpSmem<T, K> &S, long long slot,
                               int tid, int mi, int k, const EvdRun &run) {
  constexpr int L = K + 1;
  if (run.applied == 0) {
    if (tid == 0) P.pflag[slot] = 0;
    return;
  }
  if (tid < k) S.eig[tid] = dreal(S.G[tid + tid * L]);
  evd_finish<T, K, NT>(S, k, tid, P.mats[mi].nw <= P.nb || P.nb >= 8,
                       P.Q + size_t(slot) * K * K, K);
  if (tid == 0) {
    P.pflag[slot] = 1;
    if (run.significant) atomicAdd(&P.rot[mi], int(run.significant));
  }
}
template <class Tstd, class R>
__device__ __forceinline__ R evd_tol(const BlkParams<Tstd> &P, int mi, int k) {
  return blocked_tol(R(P.tol > 0 ? P.tol : sqrt(double(P.mats[mi].mw)) * double(unit_u<R>())), k);
}

template <class Tstd, int K>
// Three blocks per SM (shared memory allows three: ~18 KB per warp in d).
__global__ void __launch_bounds__(32 * kEvdWarps, 3) blk_evd_warp_kernel(const __grid_constant__ BlkParams<Tstd> P) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int w = threadIdx.x / 32, l = threadIdx.x % 32;
  const long long slot = (long long)blockIdx.x * kEvdWarps + w;
  if (slot >= (long long)P.nact * P.half) return; // whole warp
  EvdWarpSmem<T, K> &S = reinterpret_cast<EvdWarpSmem<T, K> *>(smem_raw)[w];
  int mi, k;
  if (!evd_slot_load<Tstd, T, K, 32>(P, S, slot, l, mi, k)) return;
  const EvdRun run = evd_warp_solve<T, K>(S, k, l, evd_tol<Tstd, R>(P, mi, k), P.nullf[mi],
                                          P.esw[mi]);
  evd_slot_store<Tstd, T, K, 32>(P, S, slot, l, mi, k, run);
}

// The warp plan's lean kernel (double; docs/perf/blocked-path.md, Session
// 19). blk_evd_warp_kernel keeps two K x (K + 1) arrays per warp (G and Q:
// ~17.5 KB in d) and 164 registers, so 12 warps fit per SM, and its register
// solve is latency-bound: throughput follows the warps per SM (s, with half
// the bytes, runs 24 warps per SM and its eigensolver stage takes ~0.55x
// d's). This kernel runs the same register solve with one array per warp:
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
  T X[K * (K + 1)];     // the rotation history, then Q (leading dimension K + 1)
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

template <class Tstd, int K>
__global__ void __launch_bounds__(32 * kEvdWarps, kEvdLeanBlocks) blk_evd_lean_kernel(const __grid_constant__ BlkParams<Tstd> P) {
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
  EvdLeanSmem<T, K> &S = reinterpret_cast<EvdLeanSmem<T, K> *>(smem_raw)[w];
  int mi, bi, wi, bj, wj;
  BlkMat M;
  if (!slot_block_pair(P, slot, mi, M, bi, wi, bj, wj)) {
    if (l == 0) P.pflag[slot] = 0;
    return;
  }
  // (wi + wj == K: the host's gate in run_blocked_impl)
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

// One block of NT threads per Gram matrix (evd_block_iterate): the plan for
// steps with few pairs (choose_evd_threads in tuning.hpp).
template <class Tstd, int K, int NT>
__global__ void __launch_bounds__(NT) blk_evd_block_kernel(const __grid_constant__ BlkParams<Tstd> P) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const long long slot = blockIdx.x;
  if (slot >= (long long)P.nact * P.half) return;
  EvdBlockSmem<T, K> &B = *reinterpret_cast<EvdBlockSmem<T, K> *>(smem_raw);
  EvdWarpSmem<T, K> &S = B.S;
  const int tid = threadIdx.x;
  int mi, k;
  if (!evd_slot_load<Tstd, T, K, NT>(P, S, slot, tid, mi, k)) return;
  const R tol = evd_tol<Tstd, R>(P, mi, k);
  const EvdRun run = k == K ? evd_block_iterate<T, K, NT, K>(B, k, tid, tol, P.nullf[mi], P.esw[mi])
                            : evd_block_iterate<T, K, NT>(B, k, tid, tol, P.nullf[mi], P.esw[mi]);
  evd_slot_store<Tstd, T, K, NT>(P, S, slot, tid, mi, k, run);
}

// ---- pair in shared memory: one launch per step (WCYCLE Alg. 2, l. 8-11) ---
// One block of 256 threads per (active matrix, pair): the pair's k columns
// of W are read once into shared memory (leading dimension mw | 1), the
// rotation Q is found there, W's columns are written back once and V's
// rows are multiplied by Q (one thread per row, as blk_update_kernel).
//   SVD = true:  one-sided Jacobi on the pair (WCYCLE Observation 1), 16
//                lanes per column pair, the 16 pairs of a round-robin step
//                at once, fresh inner products per rotation; Q accumulates
//                the rotations and W <- W Q (re-read from global memory,
//                mostly from L2); the twin is rotate_block_pair_svd (CPU).
//   SVD = false: Gram matrix from shared memory, the warp eigensolver above,
//                W <- W Q from shared memory; the twin is rotate_block_pair.
// Both re-orthogonalize Q and order by descending norm as the Gram path.
template <class T, int K> struct PairSmem {
  EvdWarpSmem<T, K> S;
  T Qf[K * K]; // the final rotation, zero-padded
  int cnt[4];  // applied this inner sweep, counted (blocked_counts), applied in total
};
template <class T, int K> __host__ __device__ constexpr size_t pair_smem_head() {
  return (sizeof(PairSmem<T, K>) + 15) / 16 * 16;
}
template <class T, int K> size_t pair_smem_bytes(int mw) {
  return pair_smem_head<T, K>() + size_t(K) * size_t(mw | 1) * sizeof(T);
}

// X(i, cols) <- X(i, cols) Qf for rows i = t, t + nthreads, ... (< rows);
// xrow(i, c) reads element c of row i. kOut outputs at a time in registers
// (the row is read K / kOut times) keeps the kernel under 128 registers;
// so xrow must not read what put writes (the callers stage X in shared
// memory first).
template <class T, int K, class Read, class Write>
__device__ __forceinline__ void rows_times_q(int rows, int k, const T *Qf, int t, int nthreads,
                                             Read xrow, Write put) {
  constexpr int kOut = 16;
  for (int i = t; i < rows; i += nthreads) {
#pragma unroll 1
    for (int c0 = 0; c0 < k; c0 += kOut) {
      T acc[kOut];
#pragma unroll
      for (int j = 0; j < kOut; ++j) acc[j] = dzero<T>();
#pragma unroll 2
      for (int r = 0; r < k; ++r) {
        const T x = xrow(i, r);
        const T *q = Qf + r + c0 * K;
#pragma unroll
        for (int j = 0; j < kOut; ++j) acc[j] = acc[j] + x * q[j * K];
      }
#pragma unroll
      for (int j = 0; j < kOut; ++j)
        if (c0 + j < k) put(i, c0 + j, acc[j]);
    }
  }
}

template <class Tstd, int K, bool SVD>
__global__ void __launch_bounds__(256, 2) blk_pair_kernel(const __grid_constant__ BlkParams<Tstd> P) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  constexpr int L = K + 1;
  constexpr int NT = 256, GL = 16; // threads; lanes per column pair (SVD)
  static_assert(K == 32, "16 column pairs of 16 lanes cover K = 32");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  PairSmem<T, K> &H = *reinterpret_cast<PairSmem<T, K> *>(smem_raw);
  EvdWarpSmem<T, K> &S = H.S;
  T *Ws = reinterpret_cast<T *>(smem_raw + pair_smem_head<T, K>());
  int mi, bi, wi, bj, wj;
  BlkMat M;
  if (!slot_block_pair(P, blockIdx.x, mi, M, bi, wi, bj, wj)) return; // block-uniform
  const int k = wi + wj, mw = M.mw, ld = mw | 1, t = threadIdx.x;
  T *W = P.W + M.woff;
  // The pair's k columns of X (rows x ?, ld rows) into Ws; barriers on both
  // sides (Ws may still be read before, is read after).
  auto load_pair = [&](const T *X, int rows) {
    __syncthreads();
    for (int e = t; e < k * rows; e += NT) {
      const int c = e / rows, r = e - c * rows;
      Ws[c * ld + r] = X[r + size_t(pair_col(c, bi, wi, bj, P.nb)) * rows];
    }
    __syncthreads();
  };
  for (int e = t; e < k * mw; e += NT) {
    const int c = e / mw, r = e - c * mw;
    Ws[c * ld + r] = W[r + size_t(pair_col(c, bi, wi, bj, P.nb)) * mw];
  }
  for (int e = t; e < K * K; e += NT) H.Qf[e] = dzero<T>();
  for (int e = t; e < k * L; e += NT) {
    const int c = e / L, r = e - c * L;
    S.Q[e] = r == c ? done<T>() : dzero<T>();
  }
  if (t < 4) H.cnt[t] = 0;
  __syncthreads();
  const R tol = blocked_tol(R(P.tol > 0 ? P.tol : sqrt(double(mw)) * double(unit_u<R>())), k);
  const R nullf = P.nullf[mi];
  const int cap = P.esw[mi];
  const bool sort = M.nw <= P.nb || P.nb >= 8;
  const int g = t / GL, l = t % GL;
  // Squared norms of the columns c = g, g + 16 into S.eig (group sums).
  auto column_norms = [&]() {
    for (int c0 = 0; c0 < K; c0 += NT / GL) {
      const int c = c0 + g;
      R s = 0;
      if (c < k)
        for (int i = l; i < mw; i += GL) s += abs2(Ws[c * ld + i]);
      s = group_sum<GL>(s);
      if (c < k && l == 0) S.eig[c] = s;
    }
  };
  if constexpr (SVD) {
    column_norms();
    __syncthreads();
    R gm = 0;
    for (int c = 0; c < k; ++c) gm = fmax(gm, S.eig[c]);
    const R floor = blocked_noise_floor(gm, k);
    const int slots = k + (k & 1), steps = slots - 1, half = slots / 2;
    for (int sweep = 0; sweep < cap; ++sweep) {
      for (int s = 0; s < steps; ++s) {
        int p = 0, q = 0;
        bool v = false;
        if (g < half) {
          round_robin_pair(slots, s, g, p, q);
          v = q < k;
        }
        R a = 0, b = 0;
        T gam = dzero<T>();
        if (v)
          for (int i = l; i < mw; i += GL) {
            const T xp = Ws[p * ld + i], xq = Ws[q * ld + i];
            a += abs2(xp);
            b += abs2(xq);
            dot_acc(gam, xp, xq);
          }
        a = group_sum<GL>(a);
        b = group_sum<GL>(b);
        gam = group_sum<GL>(gam);
        const R ag = dabs(gam);
        if (v && needs_rotation(a, b, ag, tol)) {
          const Rotation<R> rot = jacobi_rotation(a, b, ag);
          const T te = tconj_phase(rot.t, gam, ag);
          for (int i = l; i < mw; i += GL) {
            T xp = Ws[p * ld + i], xq = Ws[q * ld + i];
            rot_tangent(xp, xq, rot.c, te, false);
            Ws[p * ld + i] = xp;
            Ws[q * ld + i] = xq;
          }
          for (int r = l; r < k; r += GL) {
            T xp = S.Q[r + p * L], xq = S.Q[r + q * L];
            rot_tangent(xp, xq, rot.c, te, false);
            S.Q[r + p * L] = xp;
            S.Q[r + q * L] = xq;
          }
          if (l == 0) {
            atomicAdd(&H.cnt[0], 1);
            if (blocked_counts(a, b, floor, nullf)) atomicAdd(&H.cnt[1], 1);
          }
        }
        __syncthreads();
      }
      const int in_sweep = H.cnt[0];
      __syncthreads();
      if (t == 0) {
        H.cnt[2] += in_sweep;
        H.cnt[0] = 0;
      }
      __syncthreads();
      if (in_sweep == 0) break;
    }
    if (H.cnt[2] == 0) return; // nothing rotated: W unchanged (block-uniform)
    column_norms();
    __syncthreads();
    if (t < 32) evd_finish<T, K, 32>(S, k, t, sort, H.Qf, K);
    // W <- W Q from the pair as it was (unchanged in global memory, read
    // again into Ws; the rotated copy is not kept, see
    // rotate_block_pair_svd for why).
    load_pair(W, mw);
    rows_times_q<T, K>(
        mw, k, H.Qf, t, NT, [&](int i, int c) { return Ws[c * ld + i]; },
        [&](int i, int c, T v) { W[i + size_t(pair_col(c, bi, wi, bj, P.nb)) * mw] = v; });
  } else {
    // G = Ws^H Ws: thread (tr, tc) of a 16 x 16 grid, the 2 x 2 tile at
    // rows 2 tr, columns 2 tc when tr <= tc (as blk_gram_tile2_kernel).
    {
      const int tr = t % 16, tc = t / 16, r0 = 2 * tr, c0 = 2 * tc;
      if (tr <= tc && r0 < k && c0 < k) {
        const bool r1 = r0 + 1 < k, c1 = c0 + 1 < k;
        const T *x0 = Ws + r0 * ld, *x1 = Ws + (r1 ? r0 + 1 : r0) * ld;
        const T *y0 = Ws + c0 * ld, *y1 = Ws + (c1 ? c0 + 1 : c0) * ld;
        T acc[2][2] = {{dzero<T>(), dzero<T>()}, {dzero<T>(), dzero<T>()}};
        for (int s0 = 0; s0 < mw; s0 += kGramSegRows) { // by segments, as the Gram path
          gram_tile_acc<4>(acc, min(kGramSegRows, mw - s0), [&](int i, T (&u)[2], T (&v)[2]) {
            u[0] = x0[s0 + i], u[1] = x1[s0 + i], v[0] = y0[s0 + i], v[1] = y1[s0 + i];
          });
          gram_tile_fold(acc, r0, c0, k, S.G, L, s0 == 0);
        }
      }
    }
    __syncthreads();
    if (t < 32) {
      const EvdRun run = evd_warp_iterate(S, k, t, tol, nullf, cap);
      if (run.applied > 0) {
        if (t < k) S.eig[t] = dreal(S.G[t + t * L]);
        evd_finish<T, K, 32>(S, k, t, sort, H.Qf, K);
        if (t == 0) {
          H.cnt[2] = 1;
          H.cnt[1] = int(run.significant);
        }
      }
    }
    __syncthreads();
    if (H.cnt[2] == 0) return;
    rows_times_q<T, K>(
        mw, k, H.Qf, t, NT, [&](int i, int c) { return Ws[c * ld + i]; },
        [&](int i, int c, T v) { W[i + size_t(pair_col(c, bi, wi, bj, P.nb)) * mw] = v; });
  }
  if (P.vectors) {
    // V's pair columns through Ws as well (nw <= mw rows).
    T *V = P.V + M.voff;
    const int nw = M.nw;
    load_pair(V, nw);
    rows_times_q<T, K>(
        nw, k, H.Qf, t, NT, [&](int i, int c) { return Ws[c * ld + i]; },
        [&](int i, int c, T v) { V[i + size_t(pair_col(c, bi, wi, bj, P.nb)) * nw] = v; });
  }
  if (t == 0 && H.cnt[1]) atomicAdd(&P.rot[mi], H.cnt[1]);
}

// ---- update: [W_i W_j] <- [W_i W_j] Q, [V_i V_j] <- [V_i V_j] Q --------------
// One thread per row (W's rows, then V's): the row's k entries in
// registers, outputs kChunk at a time; Q (zero-padded to K x K) in shared
// memory stored by rows (Qs[r K + c] = Q(r, c)), so the kChunk entries of
// row r that one step reads are contiguous and 16-byte aligned: read as
// 128-bit broadcasts (two to four entries per instruction; the one-entry
// broadcasts made this kernel shared-memory bound, one load per FMA).
template <class Tstd, int K>
__global__ void __launch_bounds__(128) blk_update_kernel(const __grid_constant__ BlkParams<Tstd> P) {
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

// ---- finish: the fused kernel's finish and write on W, V in global memory ---
__host__ __device__ inline int blk_finish_pad(int n) { return (n + 7) & ~7; }
constexpr int kFinishThreads = 512; // per matrix: the completion's loops are memory-latency bound
template <class Tstd>
__global__ void __launch_bounds__(kFinishThreads) blk_finish_kernel(const __grid_constant__ BlkParams<Tstd> P) {
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
    rounds.keys = reinterpret_cast<unsigned long long *>(
        rounds.red + 2 * (kFinishThreads / 32) * kCompletionMaxBlock);
    rounds.dl = reinterpret_cast<int *>(rounds.keys + kCompletionMaxBlock);
  }
  __syncthreads();
  finish_and_write<G>(P, team, t, g, l, g < P.ngroups, true, s[kBsNonfinite] != 0, M.b, M.m,
                      M.n, P.vectors, s[kBsEscale], P.W + M.woff, M.mw,
                      P.vectors ? P.V + M.voff : nullptr, M.nw, nrm, expo, rank, flag, X,
                      X + M.mw, st, &key, reinterpret_cast<R *>(X + M.mw + M.nw),
                      finish_null_ratio<R>(min(M.nw, 2 * P.nb)), rounds);
}

// ---- host driver -------------------------------------------------------------
inline size_t blocked_gram_count(const std::vector<int> &mode) {
  size_t c = 0;
  for (int x : mode) c += x == BSVD_PAIR_GRAM;
  return c;
}

struct BlkLayout {
  size_t mats = 0, state = 0, rot = 0, esw = 0, act = 0, nullf = 0, W = 0, V = 0, X = 0, G = 0,
         Q = 0, pflag = 0, Gp = 0;
  long long gp_tiles = 0; // the split Gram plan's partial tiles (kGramSplitMaxTiles at most)
  size_t gptr = 0, gbase = 0, fin = 0;
  long long gcap = 0; // GEMMs the pointer arrays hold (3 per Gram slot)
  size_t total = 0;
  int half = 1;
};

// ngram: matrices whose pairs take the Gram path (G and Q buffers, K x K
// each: the instance's Gram order, blocked_k_of(nb)).
inline BlkLayout blk_layout(const std::vector<int> &m, const std::vector<int> &n, bool vectors,
                            size_t elem, int nb, size_t ngram, int K, int wr) {
  BlkLayout L;
  const size_t cnt = m.size();
  size_t ew = 0, ev = 0, ex = 0, mw_max = 0;
  for (size_t i = 0; i < cnt; ++i) {
    const size_t mw = size_t(std::max(m[i], n[i])), nw = size_t(std::min(m[i], n[i]));
    mw_max = std::max(mw_max, mw);
    ew += mw * nw;
    if (vectors) {
      ev += nw * nw;
      ex += 2 * mw + nw; // completion: x, coef, residuals
    }
    L.half = std::max(L.half, wcycle_pairs(int((nw + nb - 1) / nb), wr));
  }
  WsCursor w;
  L.mats = w.take(cnt * sizeof(BlkMat));
  L.state = w.take(cnt * kBsWords * sizeof(int));
  L.rot = w.take(cnt * sizeof(int));
  L.esw = w.take(cnt * sizeof(int));
  L.act = w.take(cnt * sizeof(int));
  L.nullf = w.take(cnt * sizeof(double));
  L.W = w.take(ew * elem);
  L.V = w.take(ev * elem);
  L.X = w.take(ex * elem);
  const size_t slots = ngram * size_t(L.half);
  L.G = w.take(slots * K * K * elem);
  L.Q = w.take(slots * K * K * elem);
  L.pflag = w.take(slots * sizeof(int));
  const long long segs = (long long)((mw_max + kGramSegRows - 1) / kGramSegRows);
  // (the split plan is the narrow instance's only)
  L.gp_tiles = segs >= 2 && K == kBlockedKmax
                   ? std::min<long long>(kGramSplitMaxTiles, (long long)slots * segs)
                   : 0;
  L.Gp = w.take(size_t(L.gp_tiles) * K * K * elem);
  L.gcap = 3 * (long long)slots;
  L.gptr = w.take(3 * size_t(L.gcap) * sizeof(void *));
  L.gbase = w.take(cnt * sizeof(int));
  L.fin = w.take(3 * cnt * sizeof(int));
  L.total = w.used;
  return L;
}

// Stage timing with events (profiling only).
struct BlkTimer {
  bool on = false;
  cudaStream_t stream = nullptr;
  std::vector<cudaEvent_t> ev;
  std::vector<int> stage;
  double ms[7] = {0, 0, 0, 0, 0, 0, 0};
  void mark(int s) { // event at the start of stage s (-1: end of the last)
    if (!on) return;
    cudaEvent_t e;
    cudaEventCreate(&e);
    cudaEventRecord(e, stream);
    ev.push_back(e);
    stage.push_back(s);
  }
  void collect() { // after a synchronization: fold the recorded intervals
    if (!on || ev.empty()) return;
    for (size_t i = 0; i + 1 < ev.size(); ++i) {
      float f = 0;
      cudaEventElapsedTime(&f, ev[i], ev[i + 1]);
      if (stage[i] >= 0) ms[stage[i]] += f;
    }
    for (size_t i = 0; i + 1 < ev.size(); ++i) cudaEventDestroy(ev[i]);
    ev.erase(ev.begin(), ev.end() - 1);
    stage.erase(stage.begin(), stage.end() - 1);
  }
  ~BlkTimer() {
    for (cudaEvent_t e : ev) cudaEventDestroy(e);
  }
};

bool blocked_profiling_on();
void blocked_store_profile(const BlockedProfile &p);

#define BSVD_BLK_TRY(call)                                                     \
  do {                                                                         \
    const cudaError_t e_ = (call);                                             \
    if (e_ != cudaSuccess) return e_;                                          \
  } while (0)

// K: the instance's Gram order (blocked_k_of(nb)): the narrow one (32)
// with every plan, or the wide one (64): the Gram path only (every mode
// BSVD_PAIR_GRAM; blocked_pair_mode gives that), its own Gram kernel (or
// cuBLAS), the block eigensolver of 256 threads.
template <class Tstd, int K>
cudaError_t run_blocked_impl(const Batch<Tstd> &kb, const std::vector<int> &idx,
                             const std::vector<int> &m, const std::vector<int> &n,
                             const std::vector<int> &mode, const Config &cfg, int nb,
                             cudaStream_t stream, unsigned char *ws) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  constexpr bool kWide = K != kBlockedKmax;
  static_assert(K == kBlockedKmax || K == kBlockedKwide, "the compiled instances");
  const auto t0 = std::chrono::steady_clock::now();
  const int cnt = int(idx.size());
  BlockedProfile prof;
  if (cnt == 0) return cudaSuccess;
  if (blocked_k_of(nb) != K || nb < 1) return cudaErrorInvalidValue;
  if constexpr (kWide)
    for (int x : mode)
      if (x != BSVD_PAIR_GRAM) return cudaErrorInvalidValue;
  const int wr = cfg.wcycle_blocks, we = std::max(1, cfg.wcycle_sweeps);
  const BlkLayout L =
      blk_layout(m, n, kb.vectors, sizeof(T), nb, blocked_gram_count(mode), K, wr);

  BlkParams<Tstd> P;
  P.batch = kb;
  P.vectors = kb.vectors;
  P.nb = nb;
  P.wr = wr;
  P.we = we;
  P.half = L.half;
  P.tol = cfg.tol;
  P.mats = reinterpret_cast<const BlkMat *>(ws + L.mats);
  P.state = reinterpret_cast<int *>(ws + L.state);
  P.rot = reinterpret_cast<int *>(ws + L.rot);
  int *desw = reinterpret_cast<int *>(ws + L.esw);
  P.esw = desw;
  int *dact = reinterpret_cast<int *>(ws + L.act);
  P.act = dact;
  P.W = reinterpret_cast<T *>(ws + L.W);
  P.V = reinterpret_cast<T *>(ws + L.V);
  P.X = reinterpret_cast<T *>(ws + L.X);
  P.G = reinterpret_cast<T *>(ws + L.G);
  T *const gp_base = L.gp_tiles ? reinterpret_cast<T *>(ws + L.Gp) : nullptr;
  P.Q = reinterpret_cast<T *>(ws + L.Q);
  P.pflag = reinterpret_cast<int *>(ws + L.pflag);
  P.nullf = reinterpret_cast<R *>(ws + L.nullf);
  P.gptr = reinterpret_cast<void **>(ws + L.gptr);
  int *dgbase = reinterpret_cast<int *>(ws + L.gbase);
  P.gbase = dgbase;
  P.gcap = L.gcap;

  std::vector<BlkMat> mats(cnt);
  std::vector<int> nblk(cnt), rows(cnt);
  long long ow = 0, ov = 0, ox = 0;
  for (int i = 0; i < cnt; ++i) {
    BlkMat &B = mats[i];
    B.b = idx[i];
    B.m = m[i];
    B.n = n[i];
    B.mw = std::max(m[i], n[i]);
    B.nw = std::min(m[i], n[i]);
    B.woff = ow;
    B.voff = ov;
    B.xoff = ox;
    ow += (long long)B.mw * B.nw;
    if (kb.vectors) {
      ov += (long long)B.nw * B.nw;
      ox += 2 * B.mw + B.nw;
    }
    nblk[i] = (B.nw + nb - 1) / nb;
    rows[i] = B.mw + (kb.vectors ? B.nw : 0);
    P.mw_max = std::max(P.mw_max, B.mw);
    P.nw_max = std::max(P.nw_max, B.nw);
  }
  P.col_iters = (P.nw_max + P.ngroups - 1) / P.ngroups;
  BSVD_BLK_TRY(cudaMemcpyAsync(const_cast<BlkMat *>(P.mats), mats.data(), cnt * sizeof(BlkMat),
                               cudaMemcpyHostToDevice, stream));

  const size_t evd_smem = kEvdWarps * sizeof(EvdWarpSmem<T, K>);
  size_t pair_smem[2] = {0, 0}; // EVD_SM, SVD_SM
  (void)evd_smem; // (the narrow instance's plans only)
  // The lean warp kernel (d, nb 16; evd_lean_ok per sweep below).
  constexpr bool kLean = !kWide && kEvdLean<T>;
  const bool lean_on = kLean && nb == K / 2 && evd_lean_enabled();
  const size_t lean_smem = kEvdWarps * sizeof(EvdLeanSmem<T, K>);
  if constexpr (kLean)
    if (lean_on) {
      BSVD_BLK_TRY(cudaFuncSetAttribute(blk_evd_lean_kernel<Tstd, K>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        int(lean_smem)));
      BSVD_BLK_TRY(cudaFuncSetAttribute(blk_evd_lean_kernel<Tstd, K>,
                                        cudaFuncAttributePreferredSharedMemoryCarveout,
                                        int(cudaSharedmemCarveoutMaxShared)));
    }
  if constexpr (!kWide) {
    BSVD_BLK_TRY(cudaFuncSetAttribute(blk_evd_warp_kernel<Tstd, K>,
                                      cudaFuncAttributeMaxDynamicSharedMemorySize, int(evd_smem)));
    BSVD_BLK_TRY(cudaFuncSetAttribute(blk_evd_warp_kernel<Tstd, K>,
                                      cudaFuncAttributePreferredSharedMemoryCarveout,
                                      int(cudaSharedmemCarveoutMaxShared)));
    // The block plans' two G buffers (z: 52 KB, above the 48 KB default).
    BSVD_BLK_TRY(cudaFuncSetAttribute(blk_evd_block_kernel<Tstd, K, 128>,
                                      cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      int(sizeof(EvdBlockSmem<T, K>))));
    // Shared memory of the pair kernels: their largest matrix.
    for (int i = 0; i < cnt; ++i)
      if (mode[i] != BSVD_PAIR_GRAM) {
        size_t &b = pair_smem[mode[i] == BSVD_PAIR_SVD_SM];
        b = std::max(b, pair_smem_bytes<T, K>(mats[i].mw));
      }
    if (pair_smem[0])
      BSVD_BLK_TRY(cudaFuncSetAttribute(blk_pair_kernel<Tstd, K, false>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        int(pair_smem[0])));
    if (pair_smem[1])
      BSVD_BLK_TRY(cudaFuncSetAttribute(blk_pair_kernel<Tstd, K, true>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        int(pair_smem[1])));
  }
  // The 256-thread block plan (the wide instance's only one: d 105 KB, two
  // blocks per SM with the carveout at its maximum).
  BSVD_BLK_TRY(cudaFuncSetAttribute(blk_evd_block_kernel<Tstd, K, 256>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    int(sizeof(EvdBlockSmem<T, K>))));
  if constexpr (kWide)
    BSVD_BLK_TRY(cudaFuncSetAttribute(blk_evd_block_kernel<Tstd, K, 256>,
                                      cudaFuncAttributePreferredSharedMemoryCarveout,
                                      int(cudaSharedmemCarveoutMaxShared)));

  BlkTimer timer;
  timer.on = blocked_profiling_on();
  timer.stream = stream;
  long launches = 0;

  timer.mark(0);
  blk_load_kernel<Tstd><<<cnt, 256, 0, stream>>>(P);
  ++launches;
  BSVD_BLK_TRY(cudaGetLastError());
  timer.mark(-1);
  std::vector<int> state(size_t(cnt) * kBsWords);
  BSVD_BLK_TRY(cudaMemcpyAsync(state.data(), P.state, state.size() * sizeof(int),
                               cudaMemcpyDeviceToHost, stream));
  BSVD_BLK_TRY(cudaStreamSynchronize(stream));
  timer.collect();

  std::vector<int> active, conv(cnt, 0), sweeps(cnt, 0), rot(cnt);
  // Inner sweeps per matrix and outer sweep: cfg.eig_sweeps, or the rule of
  // inner_sweeps.hpp on the counted rotations (as the CPU twin; a single
  // block takes no rule there either).
  std::vector<InnerSweepRule> rules(cnt);
  std::vector<int> esw(cnt);
  for (int i = 0; i < cnt; ++i) {
    if (state[size_t(i) * kBsWords + kBsStart]) active.push_back(i);
    else conv[i] = 1; // zero (converged, 0 sweeps) or non-finite (reported by info)
  }
  const int max_sweeps = cfg.max_sweeps > 0 ? cfg.max_sweeps : kDefaultMaxSweeps;
  // Gram stage by cuBLAS (tuning.hpp): matrices of full, evenly paired
  // blocks whose row count the rule gives to cuBLAS, when a handle exists.
  constexpr char prec = precision_of<Tstd>();
  std::vector<char> cub(cnt, 0);
  bool any_cub = false;
  for (int i = 0; i < cnt; ++i) {
    // (not with the two-level ordering: the pointer arrays hold nblk / 2
    // GEMMs of real pairs per step, which its steps need not have)
    cub[i] = mode[i] == BSVD_PAIR_GRAM && nblk[i] >= 2 && mats[i].nw % (2 * nb) == 0 &&
             wcycle_r(nblk[i], wr) == 1 && choose_gram_cublas(prec, mats[i].mw);
    any_cub = any_cub || cub[i];
  }
  if (any_cub && !gram_cublas_available()) std::fill(cub.begin(), cub.end(), 0);
  // The finish (blk_finish_kernel), one thread block per matrix, launched
  // for a group of matrices. A matrix that converges while others iterate
  // is finished on a side stream at once: the iteration's tail (a few
  // matrices' dependent steps) leaves most of the GPU idle, and the finish
  // of a rank-deficient matrix (the completion of its null columns, on one
  // multiprocessor) then runs beside it instead of after it.
  size_t fsmem = size_t(blk_finish_pad(P.nw_max)) * (sizeof(R) + 3 * sizeof(int));
  if (kb.vectors) {
    // The completion's rounds: X and C of the widest round the batch needs
    // (completion_block, rotation.hpp; the same widths as the CPU twin), if
    // the device has the shared memory for them (beyond ~6000 columns it
    // has not: every matrix then completes one column at a time, where the
    // CPU twin still takes rounds -- the same kind of completion, possibly
    // other columns).
    size_t xc = 0;
    for (int i = 0; i < cnt; ++i)
      xc = std::max(xc, size_t(mats[i].mw + mats[i].nw) *
                            size_t(completion_block(mats[i].mw, mats[i].nw, int(sizeof(T)))) *
                            sizeof(T));
    xc = (xc + 15) & ~size_t(15);
    const size_t with = fsmem + xc + round_scratch_bytes(kFinishThreads, sizeof(T), P.nw_max);
    if (xc > 0 && with <= size_t(max_smem_optin())) {
      P.round_bytes = int(xc);
      fsmem = with;
    }
  }
  if (fsmem > 48 * 1024)
    BSVD_BLK_TRY(cudaFuncSetAttribute(blk_finish_kernel<Tstd>,
                                      cudaFuncAttributeMaxDynamicSharedMemorySize, int(fsmem)));
  BlkParams<Tstd> Pf = P; // the finish's team: kFinishThreads per matrix
  Pf.tpm = kFinishThreads;
  Pf.ngroups = kFinishThreads / 32;
  Pf.col_iters = (P.nw_max + Pf.ngroups - 1) / Pf.ngroups;
  int *dfin = reinterpret_cast<int *>(ws + L.fin);
  std::vector<int> fin(3 * size_t(cnt)); // (matrix, converged, sweeps) in launch order
  std::vector<char> finished(cnt, 0);
  int nfin = 0;
  auto launch_finish = [&](const std::vector<int> &which, cudaStream_t st) -> cudaError_t {
    if (which.empty()) return cudaSuccess;
    const int off = nfin;
    for (int i : which) {
      fin[3 * size_t(nfin)] = i;
      fin[3 * size_t(nfin) + 1] = conv[i];
      fin[3 * size_t(nfin) + 2] = sweeps[i];
      finished[i] = 1;
      ++nfin;
    }
    cudaError_t e = cudaMemcpyAsync(dfin + 3 * size_t(off), fin.data() + 3 * size_t(off),
                                    3 * which.size() * sizeof(int), cudaMemcpyHostToDevice, st);
    if (e != cudaSuccess) return e;
    BlkParams<Tstd> Pl = Pf;
    Pl.fin = dfin + 3 * size_t(off);
    blk_finish_kernel<Tstd><<<unsigned(which.size()), kFinishThreads, fsmem, st>>>(Pl);
    ++launches;
    return cudaGetLastError();
  };
  SideStream side(stream); // joined and released at scope exit
  SideStream pipe(stream);  // the first group's stream when the Gram path splits in two
  const int groups_wanted = blocked_stream_groups();
  // Block pairs of matrix i per step (one for a single block).
  auto pairs_of = [&](int i) -> long { return wcycle_pairs(nblk[i], wr); };
  std::vector<int> order; // the active matrices: Gram (own kernel, then cuBLAS by mw), EVD_SM, SVD_SM
  std::vector<int> gbase;
  struct GemmGroup { int mw; long long first, count; };
  std::vector<GemmGroup> groups; // runs of equal mw among the cuBLAS matrices
  for (int sweep = 1; sweep <= max_sweeps && !active.empty(); ++sweep) {
    int steps = 1, rmax = 1, nby[3] = {0, 0, 0};
    long gram_pairs = 0; // pairs per step on the Gram path: the TLP of the eigensolver plan
    order.clear();
    for (int want : {int(BSVD_PAIR_GRAM), int(BSVD_PAIR_EVD_SM), int(BSVD_PAIR_SVD_SM)})
      for (int i : active)
        if (mode[i] == want) {
          order.push_back(i);
          ++nby[want - BSVD_PAIR_GRAM];
          steps = std::max(steps, wcycle_steps(nblk[i], wr, we));
          if (want == BSVD_PAIR_GRAM) {
            rmax = std::max(rmax, rows[i]);
            gram_pairs += pairs_of(i);
          }
        }
    // Gram segment: own-kernel matrices first, then the cuBLAS ones by mw.
    const auto gend = order.begin() + nby[0];
    const auto cfirst = std::stable_partition(order.begin(), gend, [&](int i) { return !cub[i]; });
    std::stable_sort(cfirst, gend, [&](int a, int b) { return mats[a].mw < mats[b].mw; });
    P.nown = int(cfirst - order.begin());
    P.ncub = nby[0] - P.nown;
    gbase.clear();
    groups.clear();
    long long at = 0;
    for (auto it = cfirst; it != gend; ++it) {
      const int i = *it;
      gbase.push_back(int(at));
      const long long gemms = 3LL * (nblk[i] / 2);
      if (groups.empty() || groups.back().mw != mats[i].mw) groups.push_back({mats[i].mw, at, 0});
      groups.back().count += gemms;
      at += gemms;
    }
    BSVD_BLK_TRY(cudaMemcpyAsync(dact, order.data(), order.size() * sizeof(int),
                                 cudaMemcpyHostToDevice, stream));
    if (!gbase.empty())
      BSVD_BLK_TRY(cudaMemcpyAsync(dgbase, gbase.data(), gbase.size() * sizeof(int),
                                   cudaMemcpyHostToDevice, stream));
    BSVD_BLK_TRY(cudaMemsetAsync(P.rot, 0, cnt * sizeof(int), stream));
    for (int i = 0; i < cnt; ++i) esw[i] = inner_sweep_cap(cfg.eig_sweeps, rules[i], kInnerConvergeCap);
    BSVD_BLK_TRY(cudaMemcpyAsync(desw, esw.data(), cnt * sizeof(int), cudaMemcpyHostToDevice, stream));
    BlkParams<Tstd> Pe = P, Ps = P;
    P.nact = nby[0];
    Pe.act = dact + nby[0];
    Pe.nact = nby[1];
    Ps.act = dact + nby[0] + nby[1];
    Ps.nact = nby[2];
    // Full step: every Gram-path matrix has full pairs (two or more
    // blocks, all nb wide: a single block is a pair of width nb, not 2 nb).
    // The warp plan's threshold depends on it (tuning.hpp), and the lean
    // warp kernel needs it and one inner sweep (evd_lean_enabled).
    bool full = true, one_inner = true;
    for (int j = 0; j < nby[0]; ++j) {
      full = full && full_pairs(mats[order[j]].nw, nb);
      one_inner = one_inner && esw[order[j]] == 1;
    }
    const int evd_nt = kWide ? 256 : choose_evd_threads(gram_pairs, prec, full);
    const bool lean = lean_on && evd_nt == 32 && full && one_inner;
    long own_pairs = 0; // pairs per step of the own Gram kernel: its plan's TLP
    int own_mw = 0;     // ... and its tallest pair: the split plan's segments
    for (int j = 0; j < P.nown; ++j) {
      own_pairs += pairs_of(order[j]);
      own_mw = std::max(own_mw, mats[order[j]].mw);
    }
    const int own_segs = (own_mw + kGramSegRows - 1) / kGramSegRows;
    const long long own_slots = (long long)P.nown * P.half;
    // (own_slots x own_segs <= kGramSplitMaxTiles implies it fits L.gp_tiles)
    // (the wide instance: blk_gram_wide_kernel, reported as tile 4, or for d
    // the tensor-core plan)
    const int gram_tile =
        kWide ? choose_gram_wide(prec) : choose_gram_tile(own_pairs, own_slots, own_segs, prec);
    P.Gp = gram_tile == 3 ? gp_base : nullptr;
    P.gseg = gram_tile == 3 ? own_segs : 0;
    const unsigned urows = unsigned((rmax + 127) / 128);
    // One step of the Gram path (Gram, eigensolver, update) for the active
    // matrices of Pg, on stream st.
    auto gram_step = [&](const BlkParams<Tstd> &Pg, cudaStream_t st) -> cudaError_t {
      const unsigned grid = unsigned(Pg.nact) * unsigned(Pg.half);
      timer.mark(1);
      if (Pg.nown) {
        const unsigned gg = unsigned(Pg.nown) * unsigned(Pg.half);
        if (gram_tile == 5) { // (d only: choose_gram_tile, choose_gram_wide)
          if constexpr (std::is_same_v<Tstd, double>)
            blk_gram_mma_kernel<Tstd, K><<<gg, gram_mma_threads<K>(), 0, st>>>(Pg);
        } else if constexpr (kWide)
          blk_gram_wide_kernel<Tstd, K><<<gg, kGramWideThreads, 0, st>>>(Pg);
        else if (gram_tile == 4)
          blk_gram_tile4_kernel<Tstd, K><<<gg, kGramTile4Threads, 0, st>>>(Pg);
        else if (gram_tile == 3)
          blk_gram_tile2_kernel<Tstd, K, true>
              <<<dim3(gg, unsigned(Pg.gseg)), kGramTile2Threads, 0, st>>>(Pg);
        else
          blk_gram_tile2_kernel<Tstd, K, false><<<gg, kGramTile2Threads, 0, st>>>(Pg);
        ++prof.gram_steps[gram_tile == 5 ? 3 : gram_tile == 4 ? 1 : gram_tile == 3 ? 2 : 0];
      }
      if (Pg.ncub) {
        const long long threads = (long long)Pg.ncub * Pg.half;
        blk_gram_ptr_kernel<Tstd, K><<<unsigned((threads + 127) / 128), 128, 0, st>>>(Pg);
        if (cudaError_t e = cudaGetLastError()) return e;
        void **A = Pg.gptr, **B = Pg.gptr + Pg.gcap, **C = Pg.gptr + 2 * Pg.gcap;
        for (const GemmGroup &g : groups) {
          if (cudaError_t e = gram_gemm_batched(prec, nb, g.mw, K, A + g.first, B + g.first,
                                                C + g.first, int(g.count), st))
            return e;
          ++prof.gram_cublas;
        }
        blk_gram_mirror_kernel<Tstd, K><<<unsigned(threads), 256, 0, st>>>(Pg);
        launches += 2 + long(groups.size());
      }
      timer.mark(2);
      if constexpr (kWide)
        blk_evd_block_kernel<Tstd, K, 256><<<grid, 256, sizeof(EvdBlockSmem<T, K>), st>>>(Pg);
      else if (evd_nt == 32) {
        if constexpr (kLean)
          if (lean) {
            blk_evd_lean_kernel<Tstd, K>
                <<<(grid + kEvdWarps - 1) / kEvdWarps, 32 * kEvdWarps, lean_smem, st>>>(Pg);
            ++prof.evd_lean_steps;
          }
        if (!lean)
          blk_evd_warp_kernel<Tstd, K>
              <<<(grid + kEvdWarps - 1) / kEvdWarps, 32 * kEvdWarps, evd_smem, st>>>(Pg);
      }
      else if (evd_nt == 128)
        blk_evd_block_kernel<Tstd, K, 128><<<grid, 128, sizeof(EvdBlockSmem<T, K>), st>>>(Pg);
      else
        blk_evd_block_kernel<Tstd, K, 256><<<grid, 256, sizeof(EvdBlockSmem<T, K>), st>>>(Pg);
      ++prof.evd_steps[evd_plan_index(evd_nt)];
      timer.mark(3);
      blk_update_kernel<Tstd, K><<<dim3(grid, urows), 128, 0, st>>>(Pg);
      launches += 2 + (Pg.nown > 0);
      return cudaGetLastError();
    };
    // Two groups of the Gram path's matrices, each on its own stream
    // (blocked_stream_groups, tuning.hpp): the first `split` own-kernel
    // matrices (about half the step's pairs) on the side stream `pipe`, the
    // rest on stream. Their steps are independent, so one group's
    // eigensolver (latency-bound) may run beside the other's Gram or update
    // (memory-bound). The slots of the second group start after the first
    // group's in G, Q and pflag. Not with the stage timer (its events are
    // on stream).
    int split = 0;
    if (groups_wanted == 2 && !timer.on && P.nown >= 2) {
      long acc = 0;
      while (split < P.nown - 1 && 2 * acc < gram_pairs) {
        acc += pairs_of(order[split]);
        ++split;
      }
    }
    BlkParams<Tstd> P1 = P, P2 = P;
    if (split > 0) {
      P1.nown = P1.nact = split;
      P1.ncub = 0;
      P2.act = dact + split;
      P2.nown = P.nown - split;
      P2.nact = P.nact - split;
      const size_t first = size_t(split) * size_t(P.half);
      P2.G = P.G + first * K * K;
      if (P.gseg) P2.Gp = P.Gp + first * size_t(P.gseg) * K * K;
      P2.Q = P.Q + first * K * K;
      P2.pflag = P.pflag + first;
      BSVD_BLK_TRY(pipe.fork());
      ++prof.split_sweeps;
    }
    for (int s = 0; s < steps; ++s) {
      P.step = Pe.step = Ps.step = P1.step = P2.step = s;
      if (split > 0) {
        BSVD_BLK_TRY(gram_step(P1, pipe.get()));
        BSVD_BLK_TRY(gram_step(P2, stream));
      } else if (P.nact) {
        BSVD_BLK_TRY(gram_step(P, stream));
      }
      if constexpr (!kWide) { // (the wide instance: every matrix on the Gram path)
        if (Pe.nact) {
          timer.mark(5);
          blk_pair_kernel<Tstd, K, false>
              <<<unsigned(Pe.nact) * unsigned(P.half), 256, pair_smem[0], stream>>>(Pe);
          ++launches;
        }
        if (Ps.nact) {
          timer.mark(6);
          blk_pair_kernel<Tstd, K, true>
              <<<unsigned(Ps.nact) * unsigned(P.half), 256, pair_smem[1], stream>>>(Ps);
          ++launches;
        }
      }
      timer.mark(-1);
      BSVD_BLK_TRY(cudaGetLastError());
    }
    if (split > 0) BSVD_BLK_TRY(pipe.join());
    BSVD_BLK_TRY(cudaMemcpyAsync(rot.data(), P.rot, cnt * sizeof(int), cudaMemcpyDeviceToHost,
                                 stream));
    BSVD_BLK_TRY(cudaStreamSynchronize(stream));
    timer.collect();
    std::vector<int> still, now;
    for (int i : active) {
      sweeps[i] = sweep;
      if (rot[i]) {
        still.push_back(i);
        if (nblk[i] > 1) rules[i].after_sweep(rot[i]);
      } else {
        conv[i] = 1;
        now.push_back(i);
      }
    }
    if (!now.empty() && !still.empty() && sweep < max_sweeps) {
      // Finished beside the iteration, after what the stream has so far.
      BSVD_BLK_TRY(side.fork());
      BSVD_BLK_TRY(launch_finish(now, side.get()));
    }
    active.swap(still);
    prof.sweeps = sweep;
  }

  // The rest: the matrices that iterated to the end, hit the sweep limit,
  // or never iterated (zero, non-finite).
  std::vector<int> rest;
  for (int i = 0; i < cnt; ++i)
    if (!finished[i]) rest.push_back(i);
  timer.mark(4);
  BSVD_BLK_TRY(launch_finish(rest, stream));
  BSVD_BLK_TRY(side.join()); // the call ends when the side stream's finishes have
  timer.mark(-1);
  if (timer.on) {
    BSVD_BLK_TRY(cudaStreamSynchronize(stream));
    timer.collect();
    prof.load = timer.ms[0];
    prof.gram = timer.ms[1];
    prof.evd = timer.ms[2];
    prof.update = timer.ms[3];
    prof.finish = timer.ms[4];
    prof.pair_evd = timer.ms[5];
    prof.pair_svd = timer.ms[6];
  }
  prof.launches = launches;
  prof.total =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  blocked_store_profile(prof);
  return cudaSuccess;
}

// The instance for nb (blocked_k_of): the wide one where the precision has
// it (blocked_has_wide), else an invalid value (blocked_nb never gives such
// an nb).
template <class Tstd>
cudaError_t run_blocked_any(const Batch<Tstd> &kb, const std::vector<int> &idx,
                            const std::vector<int> &m, const std::vector<int> &n,
                            const std::vector<int> &mode, const Config &cfg, int nb,
                            cudaStream_t stream, unsigned char *ws) {
  if (blocked_k_of(nb) == kBlockedKmax)
    return run_blocked_impl<Tstd, kBlockedKmax>(kb, idx, m, n, mode, cfg, nb, stream, ws);
  if constexpr (blocked_has_wide(precision_of<Tstd>()))
    return run_blocked_impl<Tstd, kBlockedKwide>(kb, idx, m, n, mode, cfg, nb, stream, ws);
  return cudaErrorInvalidValue;
}

#undef BSVD_BLK_TRY

} // namespace bsvd::detail::cuda
