// The eigensolver's warp plan (evd_common.cuh): one warp per Gram matrix,
// __syncwarp and ballots, no block barriers -- the plan for steps with many
// pairs. Two solves give the same bits: in shared memory (any k, any
// number of sweeps; the pair kernel's EVD_SM runs it too) and with G in
// registers (full pairs, one or two sweeps). The register sweeps and their
// replay on Q are shared with the lean kernel (evd_lean.cuh).
#pragma once

#include "evd_common.cuh"

namespace bsvd::detail::cuda {

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
// round-robin steps until one rotates nothing or cap sweeps ran.
template <class T, int K> __device__ EvdRun evd_warp_iterate(EvdWarpSmem<T, K> &S, int k, int l,
                                                             dreal_t<T> tol, dreal_t<T> nullf,
                                                             int cap) {
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
// bandwidth bounds it (docs/design/blocked.md). Here:
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
//    never live together: ~150 registers instead of 240, so 12 warps per
//    SM instead of 8 for a solve that is latency-bound
//    (docs/design/blocked.md).
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
  if constexpr (N == 2)
    return t[0];
  else
    return reg_select<T, N / 2>(t, idx >> 1);
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
        const int partner = pp == M ? M : (pp + s) % M; // ... and lane (= index)
        const int x = min(pos, pp); // the pair
        const bool first = pos < pp;
        // G(l, partner): a select over the row (a register array cannot be
        // indexed at run time in registers), as a tree over pp's bits.
        const T off = reg_select<T, K>(gr, pp);
        const R dpart = shfl_idx(dg, partner);
        const T opart = shfl_idx(off, partner);
        bool mine = false, sig = false;
        if (first) { // (p, q) = the pair's indices in order
          const bool lp = l < partner;
          const EvdPairRot<T> r =
              evd_pair_rot(lp ? dg : dpart, lp ? dpart : dg, lp ? off : opart, tol, floor, nullf);
          if (r.rotates) {
            H.c[s][x] = r.c;
            H.te[s][x] = lp ? r.te : neg_conj(r.te); // for the positions (x, pp)
            Sa[x] = lp ? r.a : r.b; // new diagonal at position x
            Sb[x] = lp ? r.b : r.a; // ... and at pp
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
template <class T, int K> __device__ EvdRun evd_reg_sweep(EvdWarpSmem<T, K> &S, int l,
                                                          dreal_t<T> tol, dreal_t<T> nullf,
                                                          int cap) {
  using R = dreal_t<T>;
  static_assert(sizeof(EvdRegHist<T, K>) <= sizeof(S.G) && sizeof(EvdRegHist<T, K>) <= sizeof(S.Q),
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
__device__ __forceinline__ EvdRun evd_warp_solve(EvdWarpSmem<T, K> &S, int k, int l, dreal_t<T> tol,
                                                 dreal_t<T> nullf, int cap) {
  if constexpr (kEvdInRegisters<T>)
    if (k == K && cap <= 2) return evd_reg_sweep<T, K>(S, l, tol, nullf, cap);
  return evd_warp_iterate(S, k, l, tol, nullf, cap);
}

// The warp plan's kernel: kEvdWarps Gram matrices per block.
template <class Tstd, int K>
// Three blocks per SM (shared memory allows three: ~18 KB per warp in d).
__global__ void __launch_bounds__(32 * kEvdWarps, 3)
    blk_evd_warp_kernel(const __grid_constant__ BlkParams<Tstd> P) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int w = threadIdx.x / 32, l = threadIdx.x % 32;
  const long long slot = (long long)blockIdx.x * kEvdWarps + w;
  if (slot >= (long long)P.nact * P.half) return; // whole warp
  if (P.evd_lean && *P.evd_lean) return; // the lean kernel's step (whole block)
  EvdWarpSmem<T, K> &S = reinterpret_cast<EvdWarpSmem<T, K> *>(smem_raw)[w];
  int mi, k;
  if (!evd_slot_load<Tstd, T, K, 32>(P, S, slot, l, mi, k)) return;
  const EvdRun run =
      evd_warp_solve<T, K>(S, k, l, evd_tol<Tstd, R>(P, mi, k), P.nullf[mi], P.esw[mi]);
  evd_slot_store<Tstd, T, K, 32>(P, S, slot, l, mi, k, run);
}

} // namespace bsvd::detail::cuda
