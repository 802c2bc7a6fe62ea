// The eigensolver's block plans (evd_common.cuh): one block of 128 or 256
// threads per Gram matrix, for steps with few pairs (the tail of a mixed
// batch; plan::evd_threads, the TLP model of WCYCLE Sec. IV-D), and the
// wide instance's only plan (256 threads, K = 64).
#pragma once

#include "evd_common.cuh"

namespace bsvd::detail::cuda {

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
//  - one barrier per step, not two (warp 0's rotations, then the others'
//    application, in series): with two, the appliers would spend much of
//    a lone matrix's time waiting for warp 0 (docs/design/blocked.md).
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
  T G2[K * (K + 1)]; // the second G buffer
  EvdStepRec<T, K> rec[2];
};

// The 2 x 2 block of J^H G_cur J at rows (pa, qa) of pair a and columns
// (pb, qb) of pair b of step R (a != b, or a == b when that pair does not
// rotate: then a copy): G J_b, then J_a^H, each only when
// its pair rotates (oa, ob); q >= k is the odd order's empty slot (its
// entries stay zero and are not read). The appliers and warp 0's
// look-ahead both call this one: their equal bits rest on it.
template <class T, int K>
__device__ __forceinline__ void evd_block_2x2(const T *Gc, const EvdStepRec<T, K> &R, int k, int a,
                                              int b, bool oa, bool ob, T &xpp, T &xpq, T &xqp,
                                              T &xqq) {
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
                                              EvdStepRec<T, K> &Rn, int k, int slots, int s1, int x,
                                              dreal_t<T> tol, dreal_t<T> floor, dreal_t<T> nullf,
                                              bool &mine, bool &sig) {
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

// One block of NT threads per Gram matrix (evd_block_iterate): the plan for
// steps with few pairs (plan::evd_threads).
template <class Tstd, int K, int NT> __global__ void __launch_bounds__(NT)
    blk_evd_block_kernel(const __grid_constant__ BlkParams<Tstd> P) {
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

} // namespace bsvd::detail::cuda
