// The blocked GPU path (device code and its host driver); see blocked.hpp.
// Included by one .cu file per precision (blocked_s.cu ... blocked_z.cu).
#pragma once

#include "../core/ordering.hpp"
#include "../core/rotation.hpp"
#include "blocked.hpp"
#include "device_scalar.cuh"
#include "matrix_io.cuh"
#include "ws_layout.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

namespace bsvd::detail::cuda {

// One blocked matrix: its batch index, sizes, and where its W (mw x nw,
// ld mw), V (nw x nw, ld nw) and completion scratch (mw + nw) live.
struct BlkMat {
  int b, m, n, mw, nw;
  long long woff, voff, xoff;
};

// Per-matrix state words.
enum : int {
  kBsStart = 0,     // load: iterate (finite, non-zero)
  kBsNonfinite = 1, // load: a NaN or Inf entry
  kBsEscale = 2,    // load: power-of-two prescaling exponent
  kBsConverged = 3, // host, before finish
  kBsSweeps = 4,    // host, before finish
  kBsWords = 5
};

template <class Tstd> struct BlkParams {
  using T = dev_t<Tstd>;
  Batch<Tstd> batch;
  const BlkMat *mats = nullptr;
  int *state = nullptr;   // kBsWords per matrix
  int *rot = nullptr;     // per matrix: a pair rotated in this sweep
  T *W = nullptr, *V = nullptr, *X = nullptr;
  T *G = nullptr, *Q = nullptr; // kBlockedKmax^2 per (active slot, pair)
  int *pflag = nullptr;         // per (active slot, pair): Q != I
  dreal_t<T> *nullf = nullptr;  // per matrix: blocked_null_floor (rotation.hpp)
  const int *act = nullptr;     // active slot -> blocked matrix
  int nact = 0, half = 1, nb = 16, step = 0;
  int eig_sweeps = 1;
  double tol = 0;
  bool vectors = false;
  // fields read by the shared load / finish steps (matrix_io.cuh)
  int tpm = 256, ngroups = 8, col_iters = 1, mw_max = 0, nw_max = 0;
};

// Block columns of pair x of round-robin step `step` for a matrix of nw
// working columns (the CPU twin's block ordering: make_ordering over
// ceil(nw / nb) blocks). One block: the single pair (0, -) of step 0.
__device__ __forceinline__ bool block_pair(int nw, int nb, int step, int x, int &bi, int &wi,
                                           int &bj, int &wj) {
  const int nblk = (nw + nb - 1) / nb;
  if (nblk <= 1) {
    bi = 0; wi = nw; bj = 0; wj = 0;
    return step == 0 && x == 0;
  }
  const int slots = nblk + (nblk & 1);
  if (step >= slots - 1 || x >= slots / 2) return false;
  round_robin_pair(slots, step, x, bi, bj);
  if (bj >= nblk) return false;
  wi = min(nb, nw - bi * nb);
  wj = min(nb, nw - bj * nb);
  return true;
}
__device__ __forceinline__ int pair_col(int c, int bi, int wi, int bj, int nb) {
  return c < wi ? bi * nb + c : bj * nb + (c - wi);
}

template <class R> __device__ __forceinline__ R dreal(R x) { return x; }
template <class R> __device__ __forceinline__ R dreal(cx<R> x) { return x.re; }
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

// ---- gram: G = [W_i W_j]^H [W_i W_j] ----------------------------------------
// One block per (active matrix, pair); rows of the pair's columns staged
// through shared memory kRows at a time (zero beyond k columns); thread
// (tr, tc) of a 16 x 16 grid accumulates the 2 x 2 tile of G at rows 2 tr,
// columns 2 tc when tr <= tc (four products per four shared-memory reads),
// and writes both triangles (the diagonal real).
template <class Tstd, int K>
__global__ void __launch_bounds__(256) blk_gram_kernel(const __grid_constant__ BlkParams<Tstd> P) {
  using T = dev_t<Tstd>;
  static_assert(K == 32, "the 16 x 16 thread grid covers K = 32");
  constexpr int kRows = 32;
  constexpr int LT = kRows + 1;
  __shared__ T tile[K * LT];
  const int y = blockIdx.x / P.half, x = blockIdx.x - y * P.half;
  const BlkMat M = P.mats[P.act[y]];
  int bi, wi, bj, wj;
  if (!block_pair(M.nw, P.nb, P.step, x, bi, wi, bj, wj)) return;
  const int k = wi + wj, t = threadIdx.x;
  const int tr = t % 16, tc = t / 16, r0 = 2 * tr, c0 = 2 * tc;
  const bool active = tr <= tc && r0 < k && c0 < k;
  const T *W = P.W + M.woff;
  const int ldw = M.mw;
  T a00 = dzero<T>(), a01 = dzero<T>(), a10 = dzero<T>(), a11 = dzero<T>();
  for (int i0 = 0; i0 < M.mw; i0 += kRows) {
    const int rows = min(kRows, M.mw - i0);
    for (int e = t; e < kRows * K; e += 256) {
      const int c = e / kRows, r = e - c * kRows;
      tile[c * LT + r] = (r < rows && c < k)
                             ? W[i0 + r + size_t(pair_col(c, bi, wi, bj, P.nb)) * ldw]
                             : dzero<T>();
    }
    __syncthreads();
    if (active) {
      const T *x0 = tile + r0 * LT, *x1 = x0 + LT;
      const T *y0 = tile + c0 * LT, *y1 = y0 + LT;
#pragma unroll 8
      for (int i = 0; i < kRows; ++i) {
        const T u0 = x0[i], u1 = x1[i], v0 = y0[i], v1 = y1[i];
        dot_acc(a00, u0, v0);
        dot_acc(a01, u0, v1);
        dot_acc(a10, u1, v0);
        dot_acc(a11, u1, v1);
      }
    }
    __syncthreads();
  }
  if (!active) return;
  T *G = P.G + size_t(blockIdx.x) * K * K;
  const T acc[2][2] = {{a00, a01}, {a10, a11}};
#pragma unroll
  for (int da = 0; da < 2; ++da)
#pragma unroll
    for (int db = 0; db < 2; ++db) {
      const int r = r0 + da, c = c0 + db;
      if (r >= k || c >= k || r > c) continue;
      if (r == c) {
        G[r + c * K] = real_only(acc[da][db]);
      } else {
        G[r + c * K] = acc[da][db];
        G[c + r * K] = dconj(acc[da][db]);
      }
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

template <class Tstd, int K>
__global__ void __launch_bounds__(32 * kEvdWarps) blk_evd_warp_kernel(const __grid_constant__ BlkParams<Tstd> P) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  constexpr int L = K + 1;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int w = threadIdx.x / 32, l = threadIdx.x % 32;
  const long long slot = (long long)blockIdx.x * kEvdWarps + w;
  if (slot >= (long long)P.nact * P.half) return; // whole warp
  EvdWarpSmem<T, K> &S = reinterpret_cast<EvdWarpSmem<T, K> *>(smem_raw)[w];
  const int y = int(slot / P.half), x = int(slot - (long long)y * P.half);
  const int mi = P.act[y];
  const BlkMat M = P.mats[mi];
  int bi, wi, bj, wj;
  if (!block_pair(M.nw, P.nb, P.step, x, bi, wi, bj, wj)) {
    if (l == 0) P.pflag[slot] = 0;
    return;
  }
  const int k = wi + wj;
  const T *Gg = P.G + size_t(slot) * K * K;
  for (int e = l; e < k * k; e += 32) {
    const int c = e / k, r = e - c * k;
    S.G[r + c * L] = Gg[r + c * K];
    S.Q[r + c * L] = r == c ? done<T>() : dzero<T>();
  }
  __syncwarp();
  R gm = l < k ? fabs(dreal(S.G[l + l * L])) : R(0);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) gm = fmax(gm, shfl_xor(gm, o));
  const R tol = blocked_tol(R(P.tol > 0 ? P.tol : sqrt(double(M.mw)) * double(unit_u<R>())), k);
  const R floor = blocked_noise_floor(gm, k), nullf = P.nullf[mi];
  const int slots = k + (k & 1), steps = slots - 1, half = slots / 2;
  const int cap = P.eig_sweeps > 0 ? P.eig_sweeps : 60;
  long applied = 0;
  bool significant = false;
  for (int sweep = 0; sweep < cap; ++sweep) {
    long in_sweep = 0;
    for (int s = 0; s < steps; ++s) {
      bool mine = false, sig = false;
      if (l < half) {
        int p, q;
        round_robin_pair(slots, s, l, p, q);
        if (q < k) {
          const R a = dreal(S.G[p + p * L]), b = dreal(S.G[q + q * L]);
          const T g = S.G[p + q * L];
          const R ag = dabs(g);
          if (needs_rotation(fabs(a), fabs(b), ag, tol)) {
            const Rotation<R> rot = jacobi_rotation(a, b, ag);
            S.c[l] = rot.c;
            S.te[l] = tconj_phase(rot.t, g, ag);
            S.a[l] = a - rot.t * ag;
            S.b[l] = b + rot.t * ag;
            mine = true;
            sig = blocked_counts(fabs(a), fabs(b), floor, nullf);
          }
        }
        S.p[l] = p;
        S.q[l] = q;
      }
      const unsigned ok = __ballot_sync(0xffffffffu, mine);
      significant = significant || __any_sync(0xffffffffu, sig);
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
    applied += in_sweep;
    if (in_sweep == 0) break;
  }
  if (applied == 0) {
    if (l == 0) P.pflag[slot] = 0;
    return;
  }
  if (l < k) S.eig[l] = dreal(S.G[l + l * L]);
  __syncwarp();
  // C = I - Q^H Q into G; lane = column j.
  if (l < k)
    for (int i = 0; i < k; ++i) {
      T h = dzero<T>();
      for (int r = 0; r < k; ++r) dot_acc(h, S.Q[r + i * L], S.Q[r + l * L]);
      S.G[i + l * L] = i == l ? dfrom_real<T>(R(1) - dreal(h)) : dzero<T>() - h;
    }
  const bool sort = M.nw <= P.nb || P.nb >= 8;
  if (l < k) {
    int r = l;
    if (sort) {
      r = 0;
      const R ej = S.eig[l];
      for (int i = 0; i < k; ++i) r += S.eig[i] > ej || (i < l && S.eig[i] == ej);
    }
    S.rank[l] = r;
  }
  __syncwarp();
  // Q + Q C / 2, column j to position rank[j]; lane = row i.
  T *Qg = P.Q + size_t(slot) * K * K;
  if (l < k)
    for (int j = 0; j < k; ++j) {
      T s = dzero<T>();
      for (int r = 0; r < k; ++r) s = s + S.Q[l + r * L] * S.G[r + j * L];
      Qg[l + S.rank[j] * K] = S.Q[l + j * L] + dscale(s, R(0.5));
    }
  if (l == 0) {
    P.pflag[slot] = 1;
    if (significant) P.rot[mi] = 1;
  }
}

// ---- update: [W_i W_j] <- [W_i W_j] Q, [V_i V_j] <- [V_i V_j] Q --------------
// One thread per row (W's rows, then V's): the row's k entries in
// registers, outputs kChunk at a time; Q (zero-padded to K x K) in shared
// memory, read as broadcasts.
template <class Tstd, int K>
__global__ void __launch_bounds__(128) blk_update_kernel(const __grid_constant__ BlkParams<Tstd> P) {
  using T = dev_t<Tstd>;
  constexpr int kChunk = 8;
  __shared__ T Qs[K * K];
  if (!P.pflag[blockIdx.x]) return;
  const int y = blockIdx.x / P.half, x = blockIdx.x - y * P.half;
  const BlkMat M = P.mats[P.act[y]];
  int bi, wi, bj, wj;
  block_pair(M.nw, P.nb, P.step, x, bi, wi, bj, wj);
  const int k = wi + wj, t = threadIdx.x;
  const T *Qg = P.Q + size_t(blockIdx.x) * K * K;
  for (int e = t; e < K * K; e += 128) {
    const int c = e / K, r = e - c * K;
    Qs[e] = (r < k && c < k) ? Qg[r + c * K] : dzero<T>();
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
      for (int j = 0; j < kChunk; ++j) acc[j] = acc[j] + xr[r] * Qs[r + (c0 + j) * K];
#pragma unroll
    for (int j = 0; j < kChunk; ++j)
      if (c0 + j < k) X[i + size_t(pair_col(c0 + j, bi, wi, bj, P.nb)) * ld] = acc[j];
  }
}

// ---- finish: the fused kernel's finish and write on W, V in global memory ---
__host__ __device__ inline int blk_finish_pad(int n) { return (n + 3) & ~3; }
template <class Tstd>
__global__ void __launch_bounds__(256) blk_finish_kernel(const __grid_constant__ BlkParams<Tstd> P) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  constexpr int G = 32;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ int st[kStInts];
  const BlkMat M = P.mats[blockIdx.x];
  const int *s = P.state + size_t(blockIdx.x) * kBsWords;
  const int t = threadIdx.x, g = t / G, l = t % G;
  const Team team{2, 0, int(blockDim.x)};
  if (t < kStInts) st[t] = 0;
  __syncthreads();
  if (t == 0) {
    st[kStConverged] = s[kBsConverged];
    st[kStSweeps] = s[kBsSweeps];
  }
  // Each array padded to a multiple of 4 entries: ptxas merges the flag
  // reads of the completion loop's remainder into 8-byte loads (flag[c],
  // flag[c + 1] with c + 1 == nw possible), which compute-sanitizer
  // reported as out of bounds when flag ended the allocation.
  const int np = blk_finish_pad(P.nw_max);
  R *nrm = reinterpret_cast<R *>(smem_raw);
  int *expo = reinterpret_cast<int *>(nrm + np);
  int *rank = expo + np;
  int *flag = rank + np;
  T *X = P.X + M.xoff;
  __syncthreads();
  finish_and_write<G>(P, team, t, g, l, g < P.ngroups, true, s[kBsNonfinite] != 0, M.b, M.m,
                      M.n, P.vectors, s[kBsEscale], P.W + M.woff, M.mw,
                      P.vectors ? P.V + M.voff : nullptr, M.nw, nrm, expo, rank, flag, X,
                      X + M.mw, st, finish_null_ratio<R>(min(M.nw, 2 * P.nb)));
}

// ---- host driver -------------------------------------------------------------
struct BlkLayout {
  size_t mats = 0, state = 0, rot = 0, act = 0, nullf = 0, W = 0, V = 0, X = 0, G = 0, Q = 0, pflag = 0;
  size_t total = 0;
  int half = 1;
};

inline BlkLayout blk_layout(const std::vector<int> &m, const std::vector<int> &n, bool vectors,
                            size_t elem, int nb) {
  BlkLayout L;
  const size_t cnt = m.size();
  size_t ew = 0, ev = 0, ex = 0;
  for (size_t i = 0; i < cnt; ++i) {
    const size_t mw = size_t(std::max(m[i], n[i])), nw = size_t(std::min(m[i], n[i]));
    ew += mw * nw;
    if (vectors) {
      ev += nw * nw;
      ex += mw + nw;
    }
    const int nblk = int((nw + nb - 1) / nb);
    const int slots = nblk + (nblk & 1);
    L.half = std::max(L.half, nblk <= 1 ? 1 : slots / 2);
  }
  WsCursor w;
  L.mats = w.take(cnt * sizeof(BlkMat));
  L.state = w.take(cnt * kBsWords * sizeof(int));
  L.rot = w.take(cnt * sizeof(int));
  L.act = w.take(cnt * sizeof(int));
  L.nullf = w.take(cnt * sizeof(double));
  L.W = w.take(ew * elem);
  L.V = w.take(ev * elem);
  L.X = w.take(ex * elem);
  const size_t slots = cnt * size_t(L.half);
  L.G = w.take(slots * kBlockedKmax * kBlockedKmax * elem);
  L.Q = w.take(slots * kBlockedKmax * kBlockedKmax * elem);
  L.pflag = w.take(slots * sizeof(int));
  L.total = w.used;
  return L;
}

// Stage timing with events (profiling only).
struct BlkTimer {
  bool on = false;
  cudaStream_t stream = nullptr;
  std::vector<cudaEvent_t> ev;
  std::vector<int> stage;
  double ms[5] = {0, 0, 0, 0, 0};
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

template <class Tstd>
cudaError_t run_blocked_impl(const Batch<Tstd> &kb, const std::vector<int> &idx,
                             const std::vector<int> &m, const std::vector<int> &n,
                             const Config &cfg, int nb, cudaStream_t stream,
                             unsigned char *ws) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  constexpr int K = kBlockedKmax;
  const auto t0 = std::chrono::steady_clock::now();
  const int cnt = int(idx.size());
  BlockedProfile prof;
  if (cnt == 0) return cudaSuccess;
  const BlkLayout L = blk_layout(m, n, kb.vectors, sizeof(T), nb);

  BlkParams<Tstd> P;
  P.batch = kb;
  P.vectors = kb.vectors;
  P.nb = nb;
  P.half = L.half;
  P.tol = cfg.tol;
  P.eig_sweeps = cfg.eig_sweeps;
  P.mats = reinterpret_cast<const BlkMat *>(ws + L.mats);
  P.state = reinterpret_cast<int *>(ws + L.state);
  P.rot = reinterpret_cast<int *>(ws + L.rot);
  int *dact = reinterpret_cast<int *>(ws + L.act);
  P.act = dact;
  P.W = reinterpret_cast<T *>(ws + L.W);
  P.V = reinterpret_cast<T *>(ws + L.V);
  P.X = reinterpret_cast<T *>(ws + L.X);
  P.G = reinterpret_cast<T *>(ws + L.G);
  P.Q = reinterpret_cast<T *>(ws + L.Q);
  P.pflag = reinterpret_cast<int *>(ws + L.pflag);
  P.nullf = reinterpret_cast<R *>(ws + L.nullf);

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
      ox += B.mw + B.nw;
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
  BSVD_BLK_TRY(cudaFuncSetAttribute(blk_evd_warp_kernel<Tstd, K>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, int(evd_smem)));

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
  for (int i = 0; i < cnt; ++i) {
    if (state[size_t(i) * kBsWords + kBsStart]) active.push_back(i);
    else conv[i] = 1; // zero (converged, 0 sweeps) or non-finite (reported by info)
  }
  const int max_sweeps = cfg.max_sweeps > 0 ? cfg.max_sweeps : kDefaultMaxSweeps;
  for (int sweep = 1; sweep <= max_sweeps && !active.empty(); ++sweep) {
    P.nact = int(active.size());
    int steps = 1, rmax = 1;
    for (int i : active) {
      steps = std::max(steps, nblk[i] <= 1 ? 1 : nblk[i] + (nblk[i] & 1) - 1);
      rmax = std::max(rmax, rows[i]);
    }
    BSVD_BLK_TRY(cudaMemcpyAsync(dact, active.data(), active.size() * sizeof(int),
                                 cudaMemcpyHostToDevice, stream));
    BSVD_BLK_TRY(cudaMemsetAsync(P.rot, 0, cnt * sizeof(int), stream));
    const unsigned grid = unsigned(P.nact) * unsigned(P.half);
    const dim3 ugrid(grid, unsigned((rmax + 127) / 128));
    for (int s = 0; s < steps; ++s) {
      P.step = s;
      timer.mark(1);
      blk_gram_kernel<Tstd, K><<<grid, 256, 0, stream>>>(P);
      timer.mark(2);
      blk_evd_warp_kernel<Tstd, K>
          <<<(grid + kEvdWarps - 1) / kEvdWarps, 32 * kEvdWarps, evd_smem, stream>>>(P);
      timer.mark(3);
      blk_update_kernel<Tstd, K><<<ugrid, 128, 0, stream>>>(P);
      timer.mark(-1);
      launches += 3;
      BSVD_BLK_TRY(cudaGetLastError());
    }
    BSVD_BLK_TRY(cudaMemcpyAsync(rot.data(), P.rot, cnt * sizeof(int), cudaMemcpyDeviceToHost,
                                 stream));
    BSVD_BLK_TRY(cudaStreamSynchronize(stream));
    timer.collect();
    std::vector<int> still;
    for (int i : active) {
      sweeps[i] = sweep;
      if (rot[i]) still.push_back(i);
      else conv[i] = 1;
    }
    active.swap(still);
    prof.sweeps = sweep;
  }

  for (int i = 0; i < cnt; ++i) {
    state[size_t(i) * kBsWords + kBsConverged] = conv[i];
    state[size_t(i) * kBsWords + kBsSweeps] = sweeps[i];
  }
  BSVD_BLK_TRY(cudaMemcpyAsync(P.state, state.data(), state.size() * sizeof(int),
                               cudaMemcpyHostToDevice, stream));
  const size_t smem = size_t(blk_finish_pad(P.nw_max)) * (sizeof(R) + 3 * sizeof(int));
  if (smem > 48 * 1024)
    BSVD_BLK_TRY(cudaFuncSetAttribute(blk_finish_kernel<Tstd>,
                                      cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  timer.mark(4);
  blk_finish_kernel<Tstd><<<cnt, 256, smem, stream>>>(P);
  ++launches;
  BSVD_BLK_TRY(cudaGetLastError());
  timer.mark(-1);
  if (timer.on) {
    BSVD_BLK_TRY(cudaStreamSynchronize(stream));
    timer.collect();
    prof.load = timer.ms[0];
    prof.gram = timer.ms[1];
    prof.evd = timer.ms[2];
    prof.update = timer.ms[3];
    prof.finish = timer.ms[4];
  }
  prof.launches = launches;
  prof.total =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  blocked_store_profile(prof);
  return cudaSuccess;
}

#undef BSVD_BLK_TRY

} // namespace bsvd::detail::cuda
