// The pair kernels: one launch per step for a matrix whose block pair
// [W_i W_j] fits in shared memory (WCYCLE Algorithm 2, lines 8-11; the
// pair solvers BSVD_PAIR_EVD_SM and BSVD_PAIR_SVD_SM, blocked_pair_mode).
#pragma once

#include "evd_warp.cuh"
#include "gram.cuh"

#include <cstddef>

namespace bsvd::detail::cuda {

// One block of 256 threads per (active matrix, pair): the pair's k columns
// of W are read once into shared memory (leading dimension mw | 1), the
// rotation Q is found there, W's columns are written back once and V's
// rows are multiplied by Q (one thread per row, as blk_update_kernel).
//   SVD = true:  one-sided Jacobi on the pair (WCYCLE Observation 1), 16
//                lanes per column pair, the 16 pairs of a round-robin step
//                at once, fresh inner products per rotation; Q accumulates
//                the rotations and W <- W Q (re-read from global memory,
//                mostly from L2); the twin is rotate_block_pair_svd (CPU).
//   SVD = false: Gram matrix from shared memory, the warp eigensolver
//                (evd_warp_iterate), W <- W Q from shared memory; the twin
//                is rotate_block_pair.
// Both re-orthogonalize Q and order by descending norm as the Gram path.
template <class T, int K> struct PairSmem {
  EvdWarpSmem<T, K> S;
  T Qf[K * K]; // the final rotation, zero-padded
  int cnt[4]; // applied this inner sweep, counted (blocked_counts), applied in total
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
template <class T, int K, class Read, class Write> __device__ __forceinline__ void
rows_times_q(int rows, int k, const T *Qf, int t, int nthreads, Read xrow, Write put) {
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

// One step s of the round-robin over a pair's k columns in shared memory
// (Ws, leading dimension ld, mw rows), for the group g of GL lanes (lane
// l): its column pair (p, q), whether it exists (q < k), and the columns'
// squared norms a, b and inner product gam, summed over the group (every
// lane gets the sums). The SVD mode of blk_pair_kernel and the HSVD's
// pair kernel (pair_hyp.cuh) scan alike.
template <int GL, class T, class R>
__device__ __forceinline__ bool pair_scan(const T *Ws, int ld, int mw, int k, int slots, int half,
                                          int s, int g, int l, int &p, int &q, R &a, R &b, T &gam) {
  p = q = 0;
  bool v = false;
  if (g < half) {
    round_robin_pair(slots, s, g, p, q);
    v = q < k;
  }
  a = 0;
  b = 0;
  gam = dzero<T>();
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
  return v;
}

template <class Tstd, int K, bool SVD> __global__ void __launch_bounds__(256, 2)
    blk_pair_kernel(const __grid_constant__ BlkParams<Tstd> P) {
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
  const R tol = blocked_tol(resolve_tol<R>(P.tol, mw), k);
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
        int p, q;
        R a, b;
        T gam;
        const bool v = pair_scan<GL>(Ws, ld, mw, k, slots, half, s, g, l, p, q, a, b, gam);
        const R ag = dabs(gam);
        if (v && rotates_pair(a, b, ag, tol)) {
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
          gram_tile_acc<4>(acc, min(kGramSegRows, mw - s0), [&](int i, T(&u)[2], T(&v)[2]) {
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

} // namespace bsvd::detail::cuda
