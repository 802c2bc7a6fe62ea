// The hyperbolic SVD's pair kernel (docs/hsvd.md; HBJ Sec. 4.3): one
// launch per step for the matrices with signatures, every pair in shared
// memory. The twin is one pair of src/cpu/jacobi_hyperbolic_blocked.cpp:
// the unblocked hyperbolic iteration (jacobi_hyperbolic.cpp) on the pair's
// k columns for the matrix's inner sweep cap, then the columns back to W
// and the pair's transformation Q into V.
//
// The blocks lie within each side of the boundary np (hsvd_blocks), and the
// block of smaller index comes first, so the pair's own signature is
// partitioned: its first lp columns carry +1. A column pair (p, q) across lp
// takes the hyperbolic step (hyperbolic_rotation: x' = c (x + th y),
// y' = c (y + conj(th) x)), the others the plane rotation; nothing is
// swapped or sorted, so no column leaves its side. Differences from the SVD
// pair kernel (blk_pair_kernel, SVD mode), each the twin's:
//   - the test is the call's tol (the unblocked solver's), not blocked_tol,
//     with the underflow floor, and every rotation counts: the rotated
//     columns are written back as they are, so the Gram-form noise the
//     blocked floors guard against does not arise;
//   - Q is J-unitary: it is neither re-orthogonalized nor sorted, only
//     applied to V;
//   - the matrix's count (BlkParams::rot) gains one per pair that rotated
//     (the twin's count of rotated pairs, for the stop and the inner sweep
//     rule), and a pair with a substituted step sets BlkParams::subst (the
//     outer breakdown rule, driver.cuh); the inner iteration stops after
//     kHyperbolicBreakdownSweeps inner sweeps in a row with one, as the
//     twin's inner run does.
// Norms and inner products are fresh for every rotation (16 lanes per
// column pair), so a substituted step needs no recomputation.
#pragma once

#include "pair.cuh"

namespace bsvd::detail::cuda {

// A launch slot's HSVD block pair: matrix mi, the blocks' widths wi, wj and
// first columns ci, cj (bi < bj: the +1 block first), and lp, the pair's
// +1 columns. false when the pair does not exist in this step. One block
// (a matrix of nb columns or fewer, all on one side): the single pair of
// step 0, as block_pair.
struct HypPair {
  int mi, wi, wj, ci, cj, lp;
};
template <class Tstd, class I> __device__ __forceinline__ bool
slot_hyp_pair(const BlkParams<Tstd> &P, I slot, BlkMat &M, HypPair &h) {
  const int y = int(slot / P.half), x = int(slot - I(y) * P.half);
  h.mi = P.act[y];
  M = P.mats[h.mi];
  if (P.alive && !P.alive[h.mi]) return false;
  const int nw = M.nw, np = P.batch.nplus[M.b], nb = P.nb;
  const int nblk = hsvd_blocks(nw, np, nb), nbp = hsvd_plus_blocks(np, nb);
  if (nblk <= 1) {
    h.wi = nw;
    h.wj = h.ci = h.cj = 0;
    h.lp = np;
    return P.step == 0 && x == 0;
  }
  int bi, bj;
  if (!wcycle_pair(nblk, P.wr, P.we, P.step, x, bi, bj)) return false;
  if (bi > bj) {
    const int b = bi;
    bi = bj;
    bj = b;
  }
  h.wi = hsvd_block_width(bi, nw, np, nb);
  h.wj = hsvd_block_width(bj, nw, np, nb);
  h.ci = hsvd_block_start(bi, np, nb);
  h.cj = hsvd_block_start(bj, np, nb);
  h.lp = (bi < nbp ? h.wi : 0) + (bj < nbp ? h.wj : 0);
  return true;
}

template <class Tstd, int K> __global__ void __launch_bounds__(256, 2)
    blk_pair_hyp_kernel(const __grid_constant__ BlkParams<Tstd> P) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  constexpr int L = K + 1;
  constexpr int NT = 256, GL = 16; // threads; lanes per column pair
  static_assert(K == 32, "16 column pairs of 16 lanes cover K = 32");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  // The SVD pair kernel's layout (pair_smem_bytes: the plan's pair_fits
  // holds for both); of EvdWarpSmem only Q is used.
  PairSmem<T, K> &H = *reinterpret_cast<PairSmem<T, K> *>(smem_raw);
  T *Qs = H.S.Q;
  T *Ws = reinterpret_cast<T *>(smem_raw + pair_smem_head<T, K>());
  BlkMat M;
  HypPair h;
  if (!slot_hyp_pair(P, blockIdx.x, M, h)) return; // block-uniform
  const int k = h.wi + h.wj, mw = M.mw, ld = mw | 1, t = threadIdx.x;
  auto col = [&](int c) { return c < h.wi ? h.ci + c : h.cj + (c - h.wi); };
  T *W = P.W + M.woff;
  for (int e = t; e < k * mw; e += NT) {
    const int c = e / mw, r = e - c * mw;
    Ws[c * ld + r] = W[r + size_t(col(c)) * mw];
  }
  for (int e = t; e < k * L; e += NT) {
    const int c = e / L, r = e - c * L;
    Qs[e] = r == c ? done<T>() : dzero<T>();
  }
  // rotations this inner sweep, a substitution this inner sweep, rotations
  // in total, a substitution in any inner sweep
  if (t < 4) H.cnt[t] = 0;
  __syncthreads();
  const R tol = resolve_tol<R>(P.tol, mw);
  const int cap = P.esw[h.mi];
  const int g = t / GL, l = t % GL;
  const int slots = k + (k & 1), steps = slots - 1, half = slots / 2;
  int run = 0; // inner sweeps in a row with a substitution (block-uniform)
  for (int sweep = 0; sweep < cap; ++sweep) {
    for (int s = 0; s < steps; ++s) {
      int p, q;
      R a, b;
      T gam;
      const bool v = pair_scan<GL>(Ws, ld, mw, k, slots, half, s, g, l, p, q, a, b, gam);
      const R ag = dabs(gam);
      if (v && rotates_pair(a, b, ag, tol) && above_underflow_noise(ag, mw)) {
        const bool hyp = (p < h.lp) != (q < h.lp);
        R c, tt;
        bool sub = false;
        if (hyp) {
          const HyperbolicRotation<R> hr = hyperbolic_rotation(a, b, ag);
          c = hr.c;
          tt = hr.t;
          sub = hr.substituted;
        } else {
          const Rotation<R> rot = jacobi_rotation(a, b, ag);
          c = rot.c;
          tt = rot.t;
        }
        // x' = c (x - tf y), y' = c (y + conj(te) x): the plane rotation
        // with tf = te, the hyperbolic step with tf = -te (device_scalar.cuh)
        const T te = tconj_phase(tt, gam, ag);
        const T tf = hyp ? dneg(te) : te;
        for (int i = l; i < mw; i += GL) {
          const T xp = Ws[p * ld + i], xq = Ws[q * ld + i];
          Ws[p * ld + i] = rot_first(xp, xq, c, tf);
          Ws[q * ld + i] = rot_first(xq, xp, c, neg_conj(te));
        }
        for (int r = l; r < k; r += GL) {
          const T xp = Qs[r + p * L], xq = Qs[r + q * L];
          Qs[r + p * L] = rot_first(xp, xq, c, tf);
          Qs[r + q * L] = rot_first(xq, xp, c, neg_conj(te));
        }
        if (l == 0) {
          atomicAdd(&H.cnt[0], 1);
          if (sub) H.cnt[1] = 1;
        }
      }
      __syncthreads();
    }
    const int in_sweep = H.cnt[0], sub_sweep = H.cnt[1];
    __syncthreads();
    if (t == 0) {
      H.cnt[2] += in_sweep;
      H.cnt[3] |= sub_sweep;
      H.cnt[0] = H.cnt[1] = 0;
    }
    __syncthreads();
    if (in_sweep == 0) break;
    run = sub_sweep ? run + 1 : 0;
    if (run >= kHyperbolicBreakdownSweeps) break;
  }
  if (H.cnt[2] == 0) return; // nothing rotated: W unchanged (block-uniform)
  for (int e = t; e < k * mw; e += NT) {
    const int c = e / mw, r = e - c * mw;
    W[r + size_t(col(c)) * mw] = Ws[c * ld + r];
  }
  if (P.vectors) {
    // V's pair columns through Ws (nw <= mw rows), times Q.
    for (int e = t; e < K * K; e += NT) {
      const int c = e / K, r = e - c * K;
      H.Qf[e] = r < k && c < k ? Qs[r + c * L] : dzero<T>();
    }
    T *V = P.V + M.voff;
    const int nw = M.nw;
    __syncthreads(); // (Ws read by the write-back above)
    for (int e = t; e < k * nw; e += NT) {
      const int c = e / nw, r = e - c * nw;
      Ws[c * ld + r] = V[r + size_t(col(c)) * nw];
    }
    __syncthreads();
    rows_times_q<T, K>(
        nw, k, H.Qf, t, NT, [&](int i, int c) { return Ws[c * ld + i]; },
        [&](int i, int c, T x) { V[i + size_t(col(c)) * nw] = x; });
  }
  if (t == 0) {
    atomicAdd(&P.rot[h.mi], 1);
    if (H.cnt[3]) P.subst[h.mi] = 1;
  }
}

} // namespace bsvd::detail::cuda
