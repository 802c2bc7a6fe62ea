// The blocked path's eigensolver, Q = eigenvectors of G (MAGMA-SVD Sec.
// 5.3, Algorithm 1: parallel two-sided Jacobi on each Gram matrix): what
// its plans share -- the per-warp shared memory, the one rotation formula,
// the re-orthogonalization and sort (evd_finish), and the kernels' two ends
// (G from the Gram stage in, Q and the rotation flag out). The plans: the
// warp plan (evd_warp.cuh), its lean kernel for d (evd_lean.cuh), the block
// plans of 128 and 256 threads (evd_block.cuh); plan::evd_threads
// (src/plan/tuning.hpp) picks one per sweep. All give the same bits.
//
// Every plan is the twin of cpu::evd_impl: per round-robin step over the k
// indices, each pair's rotation from the current G, then G J (columns) and
// Q J, then J^H G (rows), then the exact 2 x 2 diagonal blocks; then
// Q <- Q + Q (I - Q^H Q) / 2 and the columns ordered by descending
// eigenvalue (stable) when sorting.
#pragma once

#include "params.cuh"

namespace bsvd::detail::cuda {

// The warp plan's shared memory: one warp per (matrix, pair), kEvdWarps of
// them per block. Lane l owns row l for G J and Q J and column l for J^H G
// (k <= 32): G and Q (K x K+1) and the step's rotation records. The block
// plans and the pair kernel hold one as well (G, Q and the finish's fields).
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
template <class T> __device__ __forceinline__ EvdPairRot<T>
evd_pair_rot(dreal_t<T> a, dreal_t<T> b, T g, dreal_t<T> tol, dreal_t<T> floor, dreal_t<T> nullf) {
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

// What a solve did (warp-uniform, or block-uniform in the block plans): the
// rotations applied and how many of them count for convergence
// (blocked_counts; the CPU twin's EvdCount::significant).
struct EvdRun {
  long applied = 0;
  long significant = 0;
};

// Whether the solves of type T keep entries in registers: the warp plan's
// register solve (evd_warp.cuh) and evd_finish's cached column.
template <class T> constexpr bool kEvdInRegisters = sizeof(T) <= 8;

// Barrier of the NT threads that solve one Gram matrix: the warp, or the
// whole block (the block plans run one matrix per block).
template <int NT> __device__ __forceinline__ void evd_sync() {
  if constexpr (NT == 32)
    __syncwarp();
  else
    __syncthreads();
}

// Column j's place when the k eigenvalues eig are ordered descending,
// ties by index (stable); j itself when !sort.
template <class R> __device__ __forceinline__ int evd_rank(const R *eig, int k, int j, bool sort) {
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
    // load latency per add would sit on the tail's critical path
    // (docs/design/blocked.md). The warp plan (register-bound) keeps the
    // plain loop.
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
  evd_finish<T, K, NT>(S, k, tid, P.mats[mi].nw <= P.nb || P.nb >= 8, P.Q + size_t(slot) * K * K,
                       K);
  if (tid == 0) {
    P.pflag[slot] = 1;
    if (run.significant) atomicAdd(&P.rot[mi], int(run.significant));
  }
}
template <class Tstd, class R>
__device__ __forceinline__ R evd_tol(const BlkParams<Tstd> &P, int mi, int k) {
  return blocked_tol(resolve_tol<R>(P.tol, P.mats[mi].mw), k);
}

} // namespace bsvd::detail::cuda
