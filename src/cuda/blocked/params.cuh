// The blocked path's shared device vocabulary: the per-matrix record
// (BlkMat) and state words, the launch parameters every kernel takes
// (BlkParams), the Gram segment length all plans sum by, and the
// small helpers that map a launch slot to its matrix and block pair (the
// CPU twin's block ordering, ordering.hpp). See blocked.hpp for the
// algorithm.
#pragma once

#include "../../core/ordering.hpp"
#include "../common/device_scalar.cuh"
#include "../common/matrix_io.cuh" // the device helpers every kernel uses (unit_u, group_sum, ...)
#include "blocked.hpp"

namespace bsvd::detail::cuda {

// One blocked matrix: its batch index, sizes, and where its W (mw x nw,
// ld mw), V (nw x nw, ld nw) and completion scratch (2 mw + nw) live.
struct BlkMat {
  int b, m, n, mw, nw;
  long long woff, voff, xoff;
};

// Per-matrix state words.
enum : int {
  kBsStart = 0, // load: iterate (finite, non-zero)
  kBsNonfinite = 1, // load: a NaN or Inf entry
  kBsEscale = 2, // load: power-of-two prescaling exponent
  kBsWords = 3
};

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

template <class Tstd> struct BlkParams {
  using T = dev_t<Tstd>;
  Batch<Tstd> batch;
  const BlkMat *mats = nullptr;
  int *state = nullptr; // kBsWords per matrix
  int *rot = nullptr; // per matrix: counted rotations of this sweep (blocked_counts)
  // per matrix (the HSVD; null for the SVD): nonzero when a pair of this
  // sweep took a substituted hyperbolic step (the breakdown rule)
  int *subst = nullptr;
  const int *esw = nullptr; // per matrix: the inner sweep cap of this sweep (inner_sweeps.hpp)
  T *W = nullptr, *V = nullptr, *X = nullptr;
  T *G = nullptr, *Q = nullptr; // K^2 per (active slot, pair): the instance's Gram order
  // Gram tailoring (the split plan of the own Gram kernel): gseg > 0 when
  // this step's Gram ran per kGramSegRows-row segment, one block each, the
  // partial sums in Gp (kBlockedKmax^2 per (slot, segment), gseg segments
  // per slot); the eigensolver's load folds them in order.
  T *Gp = nullptr;
  int gseg = 0;
  int *pflag = nullptr; // per (active slot, pair): Q != I
  dreal_t<T> *nullf = nullptr; // per matrix: blocked_null_floor (rotation.hpp)
  const int *act = nullptr; // active slot -> blocked matrix
  // the sweep loop on the device (loop.cuh): per matrix, nonzero while it
  // iterates; a slot of a matrix whose flag is off has no pair (nullptr:
  // the host driver's active list holds only iterating matrices)
  const int *alive = nullptr;
  // the sweep loop on the device, where the lean eigensolver is planned:
  // both the lean and the warp kernel are launched each step, and the one
  // *evd_lean does not name (1 lean, 0 warp) returns at once (nullptr: the
  // host chose, only one is launched)
  const int *evd_lean = nullptr;
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
__device__ __forceinline__ bool block_pair(int nw, int nb, int wr, int we, int step, int x, int &bi,
                                           int &wi, int &bj, int &wj) {
  const int nblk = (nw + nb - 1) / nb;
  if (nblk <= 1) {
    bi = 0;
    wi = nw;
    bj = 0;
    wj = 0;
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

// The HSVD's blocks (docs/hsvd.md; the CPU twin jacobi_hyperbolic_blocked.cpp):
// the columns cut into blocks of nb within each side of the signature's
// boundary np, the +1 side [0, np) first, so that no block straddles it and
// every +1 block has a smaller index than every -1 block. Block b < nbp =
// ceil(np / nb) starts at b nb, a later one at np + (b - nbp) nb; there are
// up to one more blocks than ceil(nw / nb).
__host__ __device__ inline int hsvd_plus_blocks(int np, int nb) { return (np + nb - 1) / nb; }
__host__ __device__ inline int hsvd_blocks(int nw, int np, int nb) {
  return hsvd_plus_blocks(np, nb) + hsvd_plus_blocks(nw - np, nb);
}
__host__ __device__ inline int hsvd_block_start(int b, int np, int nb) {
  const int nbp = hsvd_plus_blocks(np, nb);
  return b < nbp ? b * nb : np + (b - nbp) * nb;
}
__host__ __device__ inline int hsvd_block_width(int b, int nw, int np, int nb) {
  const int end = b < hsvd_plus_blocks(np, nb) ? np : nw, w = end - hsvd_block_start(b, np, nb);
  return w < nb ? w : nb;
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
  if (P.alive && !P.alive[mi]) return false;
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

} // namespace bsvd::detail::cuda
