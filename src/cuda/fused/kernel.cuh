// The fused one-sided Jacobi SVD kernel (device code). Included by one .cu
// file per precision (fused_s.cu ... fused_z.cu) so they compile in parallel.
//
// Work decomposition (WCYCLE Sec. IV-B):
//   - a "team" solves matrices: a warp when a matrix needs <= 32 threads
//     (several matrices per warp, __syncwarp between steps), else a named
//     barrier per matrix (several multi-warp matrices per block) or the
//     block; a block holds P.mpb matrices, each in its own slice of shared
//     memory; one team barrier per step (pairs of a step are disjoint);
//   - a matrix's threads form groups of G lanes (G = 32 alpha); a group
//     orthogonalizes one column pair (p, q) of the current round-robin step:
//     one inner product gamma = w_p^H w_q (partial sums over rows l, l+G, ...,
//     then an xor-butterfly inside the group, so every lane holds the same
//     bits), the rotation of rotation.hpp from the carried squared norms
//     alpha = ||w_p||^2, beta = ||w_q||^2 (WCYCLE eq. 6), refreshed from
//     the columns at the start of every sweep; the group computes it itself
//     (group mode) or, when a group has several pairs per step, one lane
//     per pair of the warp does (warp mode, WARP = true);
//   - rows: lane l of a group takes rows l + G b for the RPL row blocks b,
//     starting at block (its group's slot in the warp); with leading
//     dimensions rounded to 128 bytes (plan.cu) the groups of one
//     shared-memory wavefront then read disjoint banks;
//   - control flow is uniform across each warp (invalid pairs / matrices run
//     the shuffles with zeros), so full-mask shuffles are always legal.
//
// The iteration is exactly that of jacobi_unblocked (src/cpu/jacobi.hpp):
// the same ordering (round_robin_pair in closed form, or for every other
// ordering make_ordering's table, packed_pair_table, read from global
// memory), the same rotation formula and test, the same stopping rule (a
// sweep without rotations ends it), so the CPU twin reproduces its singular
// values and sweep counts.
//
// HYP (FusedParams::nplus set): the hyperbolic SVD (docs/hsvd.md), the twin
// of jacobi_hyperbolic.cpp. Columns 0 ... nplus-1 carry +1 in J, the rest
// -1; a pair across nplus takes the hyperbolic step (hyperbolic_rotation,
// rotation.hpp; pair_step below), both of its carried norms shrink, a
// substituted step recomputes both, and kHyperbolicBreakdownSweeps sweeps
// in a row with a substitution stop the matrix (info = breakdown). The
// finish sorts within each side and writes V = J V_acc J.
#pragma once

#include "../../core/ordering.hpp"
#include "../../core/rotation.hpp"
#include "../common/device_scalar.cuh"
#include "fused.hpp"
#include "../common/matrix_io.cuh"

namespace bsvd::detail::cuda {

// Recompute a carried norm from its column when it has shrunk below
// kRecompute times its anchor (the norm at the last recomputation): the
// rule of the CPU twin (src/cpu/one_sided.hpp), which bounds the
// relative drift of every carried norm within a sweep.
template <class R> __device__ __forceinline__ R recompute_factor() { return R(0.1); }

// 2x2 sorting of each rotated pair (HBJ Sec. 4.3 step 5): the larger new
// norm goes to the lower index. Must equal the CPU twin's kSort2x2
// (src/cpu/jacobi_unblocked.cpp): off, because with the index-based
// round-robin / odd-even orderings it costs 30-60 % more sweeps
// (docs/design/fused.md); the final order comes from the descending sort
// at the end.
constexpr bool kSortPairs = false;
static_assert(!kSortPairs, "the step below applies rotations unsorted");

// Group mode keeps a pair's rows in registers between the inner product
// and the update unless that cache (2 RPL elements per lane) reaches 64
// bytes (d with RPL 8: 32² G4, 64² G8); those re-read their rows from
// shared memory instead. Every instance runs at <= 64 registers
// (__launch_bounds__(256, 4)): for the large caches, re-reading at 64
// registers (more resident warps) is faster than caching at 64 (spills)
// or at 128 (fewer resident warps); all other instances are fastest
// caching at 64 (docs/design/fused.md).
template <class Tstd, int RPL> constexpr bool fused_cache_rows() {
  return RPL * int(sizeof(Tstd)) < 64;
}
template <class Tstd, int RPL> constexpr int fused_min_blocks() { return 4; }

// One step on a pair of rows: rot_tangent(x, y, c, te) when tf == te, the
// hyperbolic step x' = c (x + th y), y' = c (y + conj(th) x) with th = te
// when tf == dneg(te) (device_scalar.cuh): the same operations either way.
template <class T, class R> __device__ __forceinline__ void pair_step(T &x, T &y, R c, T tf, T te) {
  const T nx = rot_first(x, y, c, tf);
  y = rot_first(y, x, c, neg_conj(te));
  x = nx;
}

template <class Tstd, int G, int RPL, bool WARP, bool HYP>
__global__ void __launch_bounds__(256, fused_min_blocks<Tstd, RPL>())
    fused_jacobi_kernel(const __grid_constant__ FusedParams<Tstd> P) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  constexpr bool kCacheRows = fused_cache_rows<Tstd, RPL>();
  extern __shared__ __align__(16) unsigned char smem_raw[];

  const int mloc = threadIdx.x / P.tpm;
  const int t = threadIdx.x - mloc * P.tpm;
  const int g = t / G, l = t % G;
  const bool gvalid = g < P.ngroups;
  const long long slot = (long long)blockIdx.x * P.mpb + mloc;
  const bool mvalid = slot < P.count;
  const int b = mvalid ? (P.map ? P.map[slot] : int(slot)) : 0;
  int m = 0, n = 0;
  if (mvalid) {
    m = P.batch.dims.rows(b);
    n = P.batch.dims.cols(b);
  }
  const bool trans = m < n;
  const int mw = trans ? n : m, nw = trans ? m : n;
  const bool vectors = P.batch.vectors;
  const int ldw = P.ldw, ldvw = P.ldvw;
  // Named barriers 1..15 (0 is __syncthreads): one per matrix of the block.
  const Team team{P.tpm <= 32 ? 0 : (P.mpb > 1 && P.mpb < 16 ? 1 : 2), 1 + mloc, P.tpm};

  unsigned char *base = smem_raw + size_t(mloc) * P.smem_per_matrix;
  T *W = reinterpret_cast<T *>(base);
  T *Vw = reinterpret_cast<T *>(base + P.off_v);
  R *nrm = reinterpret_cast<R *>(base + P.off_nrm); // carried norms; mantissas at the end
  R *anc = reinterpret_cast<R *>(base + P.off_anc); // anchors of the carried norms
  int *expo = reinterpret_cast<int *>(base + P.off_expo);
  int *rank = reinterpret_cast<int *>(base + P.off_rank);
  int *flag = reinterpret_cast<int *>(base + P.off_flag);
  T *xs = reinterpret_cast<T *>(base + P.off_x);
  T *coef = reinterpret_cast<T *>(base + P.off_coef);
  int *st = reinterpret_cast<int *>(base + P.off_state);
  unsigned long long *amax_word =
      reinterpret_cast<unsigned long long *>(base + P.off_state + kStInts * sizeof(int));

  // ---- 1. read A once (A^H when m < n), max |a_ij| and finiteness -------
  R amax;
  bool nonfinite;
  const int escale = load_scaled(P, team, t, mvalid, b, m, n, vectors, W, ldw, Vw, ldvw, st,
                                 amax_word, amax, nonfinite);
  // A zero matrix is converged with 0 sweeps (nothing to orthogonalize).
  const bool start = mvalid && !nonfinite && amax > R(0) && nw > 0;
  if (t == 0) {
    st[kStActive] = start ? 1 : 0;
    st[kStConverged] = start ? 0 : 1;
  }
  const R tol = resolve_tol<R>(P.tol, mw);
  const int slots = nw + (nw & 1);
  const int half = slots / 2;
  // A table ordering's pairs of this matrix's width (null: round-robin).
  const int *tab = P.ord_off && mvalid ? P.ord_tab + P.ord_off[nw] : nullptr;
  const int steps = tab ? tab[0] : slots - 1;
  // The signature's boundary (HYP): columns np ... nw-1 carry -1.
  const int np = HYP && mvalid ? P.nplus[b] : nw;
  team.sync();

  // ---- 2. sweeps ---------------------------------------------------------
  // Each step: every group takes its pair (p, q), loads both columns into
  // registers (rows in the group-rotated block order of row_of(): the
  // groups of one shared-memory wavefront read disjoint banks, ldw being a
  // multiple of 128 bytes), reduces gamma, computes the rotation itself
  // (all G lanes, the same bits; one pass per warp serves its 32/G pairs),
  // applies it from the registers and updates its carried norms. Pairs of a
  // step are disjoint, so one team barrier per step suffices.
  const int h = (threadIdx.x & 31) / G; // the group's slot in its warp
  auto row_of = [&](int r) { return l + G * ((r + h) & (RPL - 1)); };
  // Rotates this lane's rows of the column pair (a, b) of length len: the
  // rows past the RPL * G that row_of() covers, and (rotate_rows) all of
  // them. Shared by the group mode and the warp mode below.
  auto rotate_tail = [&](T *a, T *b, int len, R c, T tf, T te) {
    for (int i = l + RPL * G; i < len; i += G) {
      T x = a[i], y = b[i];
      pair_step(x, y, c, tf, te);
      a[i] = x;
      b[i] = y;
    }
  };
  auto rotate_rows = [&](T *a, T *b, int len, R c, T tf, T te) {
#pragma unroll
    for (int r = 0; r < RPL; ++r) {
      const int i = row_of(r);
      if (i < len) {
        T x = a[i], y = b[i];
        pair_step(x, y, c, tf, te);
        a[i] = x;
        b[i] = y;
      }
    }
    rotate_tail(a, b, len, c, tf, te);
  };
  // Pair k of step s of the current sweep (false: none, or a dummy).
  auto pair_of = [&](bool act, int s, int k, int &p, int &q) -> bool {
    if (!(act && gvalid && s < steps && k < half)) return false;
    if (tab) return packed_pair(tab[1 + s * half + k], p, q);
    round_robin_pair(slots, s, k, p, q);
    return q < nw;
  };
  // Warp mode: the pair records of the current step (slot k < half_max) and
  // the warp's share of the groups of its matrix.
  int *rpq = reinterpret_cast<int *>(base + P.off_rpq); // p | q << 16, -1 none
  int *rmode = reinterpret_cast<int *>(base + P.off_rmode); // bit0 rotate, 1 hyperbolic,
      // 2/3 recompute p/q
  T *rg = reinterpret_cast<T *>(base + P.off_rg); // gamma, then t conj(e)
  R *rc = reinterpret_cast<R *>(base + P.off_rc); // cos
  const int span = P.tpm < 32 ? P.tpm : 32; // a matrix's lanes in one warp
  const int gpw = span / G; // its groups per warp
  const int wg0 = (t / span) * gpw; // the first of them
  while (team.any(st[kStActive] != 0)) {
    const bool act = st[kStActive] != 0;
    // Fresh squared norms (and anchors) from the columns.
    for (int cc = 0; cc < P.col_iters; ++cc) {
      const int j = g + cc * P.ngroups;
      const bool v = act && gvalid && j < nw;
      R s = 0;
      if (v) {
        const T *wj = W + j * ldw;
#pragma unroll
        for (int r = 0; r < RPL; ++r) {
          const int i = row_of(r);
          if (i < mw) s += abs2(wj[i]);
        }
        for (int i = l + RPL * G; i < mw; i += G) s += abs2(wj[i]);
      }
      s = group_sum<G>(s);
      if (v && l == 0) nrm[j] = anc[j] = s;
    }
    if (t == 0 && act) {
      st[kStRotated] = 0;
      if constexpr (HYP) st[kStSubst] = 0;
    }
    team.sync();
    for (int s = 0; s < P.steps_max; ++s) {

      if constexpr (WARP) {
        // Phase A: gamma of each pair, G lanes per pair, into the records.
        for (int kk = 0; kk < P.pair_iters; ++kk) {
          const int k = g + kk * P.ngroups;
          int p = 0, q = 0;
          const bool v = pair_of(act, s, k, p, q);
          T gam = dzero<T>();
          if (v) {
            const T *wp = W + p * ldw;
            const T *wq = W + q * ldw;
#pragma unroll
            for (int r = 0; r < RPL; ++r) {
              const int i = row_of(r);
              if (i < mw) dot_acc(gam, wp[i], wq[i]);
            }
            for (int i = l + RPL * G; i < mw; i += G) dot_acc(gam, wp[i], wq[i]);
          }
          gam = group_sum<G>(gam);
          if (gvalid && l == 0 && k < P.half_max) {
            rpq[k] = v ? (p | (q << 16)) : -1;
            rg[k] = gam;
          }
        }
        __syncwarp();
        // Phase B: one lane per pair of this warp's groups computes the
        // rotation, the new carried norms and the recompute flags.
        for (int e = t % span; e < P.pair_iters * gpw; e += span) {
          const int kk = e / gpw, gg = wg0 + (e - kk * gpw);
          const int k = gg + kk * P.ngroups;
          if (gg >= P.ngroups || k >= P.half_max) continue;
          const int pq = rpq[k];
          int mode = 0;
          if (pq >= 0) {
            const int p = pq & 0xffff, q = pq >> 16;
            const R alpha = nrm[p], beta = nrm[q];
            const T gam = rg[k];
            const R absg = dabs(gam);
            if (rotates_pair(alpha, beta, absg, tol) && above_underflow_noise(absg, 0)) {
              bool hyp = false, fresh = false;
              if constexpr (HYP) hyp = (p < np) != (q < np);
              Rotation<R> ro;
              if (hyp) {
                const HyperbolicRotation<R> hr = hyperbolic_rotation(alpha, beta, absg);
                ro.t = hr.t;
                ro.c = hr.c;
                fresh = hr.substituted;
              } else {
                ro = jacobi_rotation(alpha, beta, absg);
              }
              const R anew = hyp ? alpha + ro.t * absg : alpha - ro.t * absg; // WCYCLE eq. 6
              const R bnew = beta + ro.t * absg;
              const R ancp = fmax(anc[p], anew), ancq = fmax(anc[q], bnew);
              mode = 1 | (hyp ? 2 : 0) | (fresh || anew < recompute_factor<R>() * ancp ? 4 : 0) |
                     (fresh || bnew < recompute_factor<R>() * ancq ? 8 : 0);
              nrm[p] = anew;
              nrm[q] = bnew;
              anc[p] = ancp;
              anc[q] = ancq;
              rg[k] = tconj_phase(ro.t, gam, absg);
              rc[k] = ro.c;
              st[kStRotated] = 1;
              if (fresh) st[kStSubst] = 1;
            }
          }
          rmode[k] = mode;
        }
        __syncwarp();
        // Phase C: apply the rotations to the columns of W and V.
        for (int kk = 0; kk < P.pair_iters; ++kk) {
          const int k = g + kk * P.ngroups;
          const int mode = act && gvalid && k < half ? rmode[k] : 0;
          int p = 0, q = 0;
          if (mode & 1) {
            const int pq = rpq[k];
            p = pq & 0xffff;
            q = pq >> 16;
          }
          T *wp = W + p * ldw;
          T *wq = W + q * ldw;
          if (mode & 1) {
            const R c = rc[k];
            const T te = rg[k];
            const T tf = HYP && (mode & 2) ? dneg(te) : te;
#pragma unroll
            for (int r = 0; r < RPL; ++r) {
              const int i = row_of(r);
              if (i < mw) {
                T a = wp[i], bq = wq[i];
                pair_step(a, bq, c, tf, te);
                wp[i] = a;
                wq[i] = bq;
              }
            }
            rotate_tail(wp, wq, mw, c, tf, te);
            if (vectors) rotate_rows(Vw + p * ldvw, Vw + q * ldvw, nw, c, tf, te);
          }
          // Recompute a shrunken carried norm from its column (each lane
          // reads back the rows it wrote); warp-uniform branch.
          const bool redo_p = (mode & 4) != 0, redo_q = (mode & 8) != 0;
          if (__any_sync(0xffffffffu, redo_p || redo_q)) {
            R sp = 0, sq = 0;
            if (redo_p || redo_q) {
#pragma unroll
              for (int r = 0; r < RPL; ++r) {
                const int i = row_of(r);
                if (i < mw) {
                  sp += abs2(wp[i]);
                  sq += abs2(wq[i]);
                }
              }
              for (int i = l + RPL * G; i < mw; i += G) {
                sp += abs2(wp[i]);
                sq += abs2(wq[i]);
              }
            }
            sp = group_sum<G>(sp);
            sq = group_sum<G>(sq);
            if (l == 0 && redo_p) nrm[p] = anc[p] = sp;
            if (l == 0 && redo_q) nrm[q] = anc[q] = sq;
          }
        }
      } else {
        for (int kk = 0; kk < P.pair_iters; ++kk) {
          const int k = g + kk * P.ngroups;
          int p = 0, q = 0;
          const bool v = pair_of(act, s, k, p, q);
          T *wp = W + p * ldw;
          T *wq = W + q * ldw;
          T xa[RPL], xb[RPL];
          T gam = dzero<T>();
          R alpha = 0, beta = 0, ancp = 0, ancq = 0;
          if (v) {
            alpha = nrm[p];
            beta = nrm[q];
            ancp = anc[p];
            ancq = anc[q];
#pragma unroll
            for (int r = 0; r < RPL; ++r) {
              const int i = row_of(r);
              xa[r] = dzero<T>();
              xb[r] = dzero<T>();
              if (i < mw) {
                const T a = wp[i], bq = wq[i];
                if constexpr (kCacheRows) {
                  xa[r] = a;
                  xb[r] = bq;
                }
                dot_acc(gam, a, bq);
              }
            }
            for (int i = l + RPL * G; i < mw; i += G) dot_acc(gam, wp[i], wq[i]);
          }
          gam = group_sum<G>(gam);
          __syncwarp(); // every lane has read nrm/anc before lane 0 rewrites them
          const R absg = dabs(gam);
          // rotates_pair and jacobi_rotation of rotation.hpp with their
          // independent IEEE operations split over lane pairs (l even: alpha,
          // t; l odd: beta, c) and exchanged by one shuffle each: 5 instead
          // of 7 sqrt/div in the warp's instruction stream, the same bits.
          const bool odd = (l & 1) != 0;
          const R sqx = bsqrt(odd ? beta : alpha);
          const R sqy = shfl_xor(sqx, 1);
          const R sqa = odd ? sqy : sqx, sqb = odd ? sqx : sqy;
          const bool rot = v && alpha > R(0) && beta > R(0) && absg > tol * sqa * sqb &&
                           above_underflow_noise(absg, 0);
          Rotation<R> ro;
          if (__any_sync(0xffffffffu, rot)) {
            const R zeta = (beta - alpha) / (R(2) * absg);
            const R az = babs(zeta);
            const R act = az >= big_cot<R>() ? R(2) * az : az + bsqrt(bfma(zeta, zeta, R(1)));
            const R sgn = zeta < R(0) ? R(-1) : R(1);
            const R den = bsqrt(bfma(act, act, R(1)));
            const R x = (odd ? act : sgn) / (odd ? den : act);
            const R y = shfl_xor(x, 1);
            ro.t = odd ? y : x;
            ro.c = act >= big_cot<R>() ? R(1) : (odd ? x : y);
          }
          // A pair across the signature's boundary takes the hyperbolic
          // step instead (every lane computes it: the same bits).
          bool hyp = false, fresh = false;
          if constexpr (HYP) {
            hyp = rot && ((p < np) != (q < np));
            if (hyp) {
              const HyperbolicRotation<R> hr = hyperbolic_rotation(alpha, beta, absg);
              ro.t = hr.t;
              ro.c = hr.c;
              fresh = hr.substituted;
            }
          }
          bool redo_p = false, redo_q = false;
          if (rot) {
            alpha = hyp ? alpha + ro.t * absg : alpha - ro.t * absg; // WCYCLE eq. 6
            beta = beta + ro.t * absg;
            ancp = fmax(ancp, alpha);
            ancq = fmax(ancq, beta);
            const R c = ro.c;
            const T te = tconj_phase(ro.t, gam, absg);
            const T tf = hyp ? dneg(te) : te;
#pragma unroll
            for (int r = 0; r < RPL; ++r) {
              const int i = row_of(r);
              if (i < mw) {
                if constexpr (!kCacheRows) {
                  xa[r] = wp[i];
                  xb[r] = wq[i];
                }
                pair_step(xa[r], xb[r], c, tf, te);
                wp[i] = xa[r];
                wq[i] = xb[r];
              }
            }
            rotate_tail(wp, wq, mw, c, tf, te);
            if (vectors) rotate_rows(Vw + p * ldvw, Vw + q * ldvw, nw, c, tf, te);
            redo_p = fresh || alpha < recompute_factor<R>() * ancp;
            redo_q = fresh || beta < recompute_factor<R>() * ancq;
          }
          // Recompute a shrunken carried norm from its rotated column (the
          // CPU twin's rule); warp-uniform branch, so full-mask shuffles.
          if (__any_sync(0xffffffffu, redo_p || redo_q)) {
            R sp = 0, sq = 0;
            if (redo_p || redo_q) {
#pragma unroll
              for (int r = 0; r < RPL; ++r) {
                const int i = row_of(r);
                if (i < mw) {
                  sp += abs2(kCacheRows ? xa[r] : wp[i]);
                  sq += abs2(kCacheRows ? xb[r] : wq[i]);
                }
              }
              for (int i = l + RPL * G; i < mw; i += G) {
                sp += abs2(wp[i]);
                sq += abs2(wq[i]);
              }
            }
            sp = group_sum<G>(sp);
            sq = group_sum<G>(sq);
            if (redo_p) alpha = ancp = sp;
            if (redo_q) beta = ancq = sq;
          }
          if (rot && l == 0) {
            nrm[p] = alpha;
            nrm[q] = beta;
            anc[p] = ancp;
            anc[q] = ancq;
            st[kStRotated] = 1;
            if (fresh) st[kStSubst] = 1;
          }
        }
      }
      team.sync();
    }
    if (t == 0 && act) {
      const int sw = st[kStSweeps] + 1;
      st[kStSweeps] = sw;
      if (!st[kStRotated]) {
        st[kStConverged] = 1;
        st[kStActive] = 0;
      } else {
        bool stop = sw >= P.max_sweeps;
        if constexpr (HYP) {
          // The CPU twin's breakdown rule (jacobi_hyperbolic.cpp).
          const bool sub = st[kStSubst] != 0;
          const int run = sub ? st[kStSubRun] + 1 : 0;
          st[kStSubRun] = run;
          if (run >= kHyperbolicBreakdownSweeps || (stop && sub)) {
            st[kStSubRun] = -1;
            stop = true;
          }
        }
        if (stop) st[kStActive] = 0;
      }
    }
    team.sync();
  }

  // ---- 3-4. finish, then write S, U, V, info, sweeps once ------------------
  finish_and_write<G>(P, team, t, g, l, gvalid, mvalid, nonfinite, b, m, n, vectors, escale, W, ldw,
                      Vw, ldvw, nrm, expo, rank, flag, xs, coef, st, amax_word,
                      static_cast<R *>(nullptr), unit_u<R>(), RoundSmem<T>{}, HYP ? np : -1);
}

// ---- host side: instantiation and dispatch over (G, RPL) -----------------
template <class Tstd, int G, bool WARP, bool HYP>
cudaError_t launch_rpl(const FusedParams<Tstd> &P, int rpl, dim3 grid, dim3 block, size_t smem,
                       cudaStream_t stream) {
  auto go = [&](auto kernel) -> cudaError_t {
    // Set per call: all instances share one function-pointer type, so no
    // per-instance cache can live in this lambda (a host call of ~1 us).
    if (smem > 48 * 1024) {
      const cudaError_t e =
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
      if (e != cudaSuccess) return e;
    }
    kernel<<<grid, block, smem, stream>>>(P);
    return cudaGetLastError();
  };
  switch (rpl) {
  case 1: return go(fused_jacobi_kernel<Tstd, G, 1, WARP, HYP>);
  case 2: return go(fused_jacobi_kernel<Tstd, G, 2, WARP, HYP>);
  case 4: return go(fused_jacobi_kernel<Tstd, G, 4, WARP, HYP>);
  default: return go(fused_jacobi_kernel<Tstd, G, 8, WARP, HYP>);
  }
}

// HYP: the hyperbolic instances (P.nplus set), compiled in fused_hyp_*.cu.
template <class Tstd, bool HYP>
cudaError_t launch_fused_impl(const FusedParams<Tstd> &P, FusedShape shape, cudaStream_t stream) {
  if (P.count <= 0) return cudaSuccess;
  const dim3 block(unsigned(P.mpb * P.tpm));
  const dim3 grid(unsigned((P.count + P.mpb - 1) / P.mpb));
  const size_t smem = P.smem_per_matrix * size_t(P.mpb);
  if (shape.warp_rot) {
    switch (shape.lanes) {
    case 4:
      return launch_rpl<Tstd, 4, true, HYP>(P, shape.rows_per_lane, grid, block, smem, stream);
    case 8:
      return launch_rpl<Tstd, 8, true, HYP>(P, shape.rows_per_lane, grid, block, smem, stream);
    case 16:
      return launch_rpl<Tstd, 16, true, HYP>(P, shape.rows_per_lane, grid, block, smem, stream);
    default:
      return launch_rpl<Tstd, 32, true, HYP>(P, shape.rows_per_lane, grid, block, smem, stream);
    }
  }
  switch (shape.lanes) {
  case 4: return launch_rpl<Tstd, 4, false, HYP>(P, shape.rows_per_lane, grid, block, smem, stream);
  case 8: return launch_rpl<Tstd, 8, false, HYP>(P, shape.rows_per_lane, grid, block, smem, stream);
  case 16:
    return launch_rpl<Tstd, 16, false, HYP>(P, shape.rows_per_lane, grid, block, smem, stream);
  default:
    return launch_rpl<Tstd, 32, false, HYP>(P, shape.rows_per_lane, grid, block, smem, stream);
  }
}

} // namespace bsvd::detail::cuda
