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
//     dimensions rounded to 128 bytes (fused_plan.cu) the groups of one
//     shared-memory wavefront then read disjoint banks;
//   - control flow is uniform across each warp (invalid pairs / matrices run
//     the shuffles with zeros), so full-mask shuffles are always legal.
//
// The iteration is exactly that of jacobi_unblocked (src/cpu/jacobi.hpp):
// the same ordering (round_robin_pair, or the odd-even network of
// make_ordering simulated in shared memory), the same rotation formula and
// test, the same stopping rule (a sweep without rotations ends it), so the
// CPU twin reproduces its singular values and sweep counts.
#pragma once

#include "../core/ordering.hpp"
#include "../core/rotation.hpp"
#include "device_scalar.cuh"
#include "fused.hpp"

namespace bsvd::detail::cuda {

enum : int {
  kStActive = 0,   // still iterating
  kStRotated = 1,  // a rotation happened in the current sweep
  kStSweeps = 2,   // sweeps performed
  kStConverged = 3,
  kStNonfinite = 4,
  kStNull = 5,     // some column is numerically null (completion needed)
  kStFound = 6,    // completion: a candidate was accepted
  kStCursor = 7,   // completion: next candidate e_c
  kStInts = 8      // ints before the 8-byte amax word
};

template <class R> __device__ __forceinline__ R min_normal();
template <class R> __device__ __forceinline__ R max_finite();
template <> __device__ __forceinline__ float min_normal<float>() { return 1.17549435e-38f; }
template <> __device__ __forceinline__ float max_finite<float>() { return 3.40282347e+38f; }
template <> __device__ __forceinline__ double min_normal<double>() { return 2.2250738585072014e-308; }
template <> __device__ __forceinline__ double max_finite<double>() { return 1.7976931348623157e+308; }
__device__ __forceinline__ float dfrexp(float x, int *e) { return frexpf(x, e); }
__device__ __forceinline__ double dfrexp(double x, int *e) { return frexp(x, e); }

__device__ __forceinline__ unsigned long long real_bits(float x) { return __float_as_uint(x); }
__device__ __forceinline__ unsigned long long real_bits(double x) {
  return static_cast<unsigned long long>(__double_as_longlong(x));
}
template <class R> __device__ __forceinline__ R bits_real(unsigned long long b);
template <> __device__ __forceinline__ float bits_real<float>(unsigned long long b) {
  return __uint_as_float(static_cast<unsigned>(b));
}
template <> __device__ __forceinline__ double bits_real<double>(unsigned long long b) {
  return __longlong_as_double(static_cast<long long>(b));
}

template <class R> __device__ __forceinline__ R unit_u();
template <> __device__ __forceinline__ float unit_u<float>() { return 5.9604644775390625e-8f; }
template <> __device__ __forceinline__ double unit_u<double>() { return 1.1102230246251565e-16; }

// Sum over the G lanes of a group (xor butterfly: every lane gets the
// same bits, since a + b == b + a exactly).
template <int G, class V> __device__ __forceinline__ V group_sum(V v) {
#pragma unroll
  for (int o = G / 2; o > 0; o >>= 1) v = v + shfl_xor(v, o);
  return v;
}

// The order of the CPU twin's stable sort: sigma = mant 2^expo, mant in
// [1/2, 1) or 0; exact comparison without forming sigma.
template <class R>
__device__ __forceinline__ bool sorts_before(R ma, int ea, R mb, int eb) {
  if (ma == R(0) || mb == R(0)) return ma > mb;
  if (ea != eb) return ea > eb;
  return ma > mb;
}

// The threads that solve one matrix synchronize as a "team": the warp when
// whole matrices fit in one (tpm <= 32), a named barrier of the matrix's
// own warps when a block holds several multi-warp matrices (so matrices of
// one block neither wait for each other nor iterate to the slowest one's
// sweep count in lockstep), else the block.
struct Team {
  int mode; // 0 warp, 1 named barrier (id, count), 2 block
  int id, count;
  __device__ __forceinline__ void sync() const {
    if (mode == 0) __syncwarp();
    else if (mode == 1) asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
    else __syncthreads();
  }
  __device__ __forceinline__ bool any(bool x) const {
    if (mode == 0) return __any_sync(0xffffffffu, x) != 0;
    if (mode == 1) {
      int r;
      asm volatile("{\n\t.reg .pred px, pr;\n\t"
                   "setp.ne.s32 px, %1, 0;\n\t"
                   "bar.red.or.pred pr, %2, %3, px;\n\t"
                   "selp.s32 %0, 1, 0, pr;\n\t}"
                   : "=r"(r)
                   : "r"(int(x)), "r"(id), "r"(count)
                   : "memory");
      return r != 0;
    }
    return __syncthreads_or(x) != 0;
  }
};

// Recompute a carried norm from its column when it has shrunk below
// kRecompute times its anchor (the norm at the last recomputation): the
// rule of the CPU twin (src/cpu/jacobi_unblocked.cpp), which bounds the
// relative drift of every carried norm within a sweep.
template <class R> __device__ __forceinline__ R recompute_factor() { return R(0.1); }

// 2x2 sorting of each rotated pair (HBJ Sec. 4.3 step 5): the larger new
// norm goes to the lower index. Must equal the CPU twin's kSort2x2
// (src/cpu/jacobi_unblocked.cpp): off, because with the index-based
// round-robin / odd-even orderings it costs 30-60 % more sweeps (measured
// there and in docs/perf/fused-kernel.md); the final order comes from the
// descending sort at the end.
constexpr bool kSortPairs = false;
static_assert(!kSortPairs, "the step below applies rotations unsorted");

// Group mode keeps a pair's rows in registers between the inner product
// and the update unless that cache (2 RPL elements per lane) reaches 64
// bytes (d with RPL 8: 32² G4, 64² G8); those re-read their rows from
// shared memory instead. Every instance runs at <= 64 registers
// (__launch_bounds__(256, 4)). Measured (docs/perf/fused-kernel.md v6/v7):
// caching at 128 registers made d RPL 8 1.15-1.8x faster than caching at
// 64 (spills), and re-reading at 64 registers another 1.17x (32² d 6.14 ->
// 5.26 ms: 24 instead of 16 resident warps); all other instances are
// fastest caching at 64.
template <class Tstd, int RPL> constexpr bool fused_cache_rows() {
  return RPL * int(sizeof(Tstd)) < 64;
}
template <class Tstd, int RPL> constexpr int fused_min_blocks() {
  return 4;
}

template <class Tstd, int G, int RPL, bool WARP>
__global__ void __launch_bounds__(256, fused_min_blocks<Tstd, RPL>())
fused_jacobi_kernel(const FusedParams<Tstd> P) {
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
  R *nrm = reinterpret_cast<R *>(base + P.off_nrm);   // carried norms; mantissas at the end
  R *anc = reinterpret_cast<R *>(base + P.off_anc);   // anchors of the carried norms
  int *expo = reinterpret_cast<int *>(base + P.off_expo);
  int *at = reinterpret_cast<int *>(base + P.off_at);
  int *rank = reinterpret_cast<int *>(base + P.off_rank);
  int *flag = reinterpret_cast<int *>(base + P.off_flag);
  T *xs = reinterpret_cast<T *>(base + P.off_x);
  T *coef = reinterpret_cast<T *>(base + P.off_coef);
  int *st = reinterpret_cast<int *>(base + P.off_state);
  unsigned long long *amax_word =
      reinterpret_cast<unsigned long long *>(base + P.off_state + kStInts * sizeof(int));

  // ---- 1. read A once (A^H when m < n), max |a_ij| and finiteness -------
  if (t == 0) {
#pragma unroll
    for (int i = 0; i < kStInts; ++i) st[i] = 0;
    *amax_word = 0;
  }
  team.sync();
  {
    bool fin = true;
    R am = 0;
    if (mvalid) {
      const T *A = reinterpret_cast<const T *>(P.batch.A.ptr(b));
      const int lda = P.batch.A.ldm(b);
      const long long mn = (long long)m * n;
      for (long long e = t; e < mn; e += P.tpm) {
        const int j = int(e / m), i = int(e - (long long)j * m);
        const T a = A[i + (long long)j * lda];
        if (dfinite(a)) am = fmax(am, amax_part(a));
        else fin = false;
        if (trans) W[j + size_t(i) * ldw] = dconj(a);
        else W[i + size_t(j) * ldw] = a;
      }
    }
    if (!fin) st[kStNonfinite] = 1;
    if (am > R(0)) atomicMax(amax_word, real_bits(am));
  }
  team.sync();
  const bool nonfinite = st[kStNonfinite] != 0;
  const R amax = bits_real<R>(*amax_word);
  // Exact power-of-two prescaling, the window of the CPU twin: scale when
  // max |a_ij| < sqrt(min_normal) / u (squares of entries that matter
  // would underflow) or > sqrt(max / (8 mw nw)) (Gram entries and carried
  // norms could overflow); then max |a_ij| in [1, 2).
  int escale = 0;
  if (!nonfinite && amax > R(0)) {
    const double u = double(unit_u<R>());
    const double lo = sqrt(double(min_normal<R>())) / u;
    const double hi = sqrt(double(max_finite<R>())) / sqrt(8.0 * double(mw) * double(nw));
    if (double(amax) < lo || double(amax) > hi) escale = -dilogb(amax);
  }
  if (mvalid && !nonfinite) {
    if (escale != 0)
      for (int e = t; e < mw * nw; e += P.tpm) {
        const int j = e / mw, i = e - j * mw;
        W[i + size_t(j) * ldw] = dldexp(W[i + size_t(j) * ldw], escale);
      }
    if (vectors)
      for (int e = t; e < nw * nw; e += P.tpm) {
        const int j = e / nw, i = e - j * nw;
        Vw[i + size_t(j) * ldvw] = i == j ? done<T>() : dzero<T>();
      }
  }
  // A zero matrix is converged with 0 sweeps (nothing to orthogonalize).
  const bool start = mvalid && !nonfinite && amax > R(0) && nw > 0;
  if (t == 0) {
    st[kStActive] = start ? 1 : 0;
    st[kStConverged] = start ? 0 : 1;
  }
  const R tol = R(P.tol > 0 ? P.tol : sqrt(double(mw > 0 ? mw : 1)) * double(unit_u<R>()));
  const int slots = nw + (nw & 1);
  const int half = slots / 2;
  const bool odd_even = P.ordering == BSVD_ORDERING_ODD_EVEN;
  const int steps = odd_even ? slots : slots - 1;
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
  auto rotate_tail = [&](T *a, T *b, int len, R c, T te) {
    for (int i = l + RPL * G; i < len; i += G) {
      T x = a[i], y = b[i];
      rot_tangent(x, y, c, te, false);
      a[i] = x;
      b[i] = y;
    }
  };
  auto rotate_rows = [&](T *a, T *b, int len, R c, T te) {
#pragma unroll
    for (int r = 0; r < RPL; ++r) {
      const int i = row_of(r);
      if (i < len) {
        T x = a[i], y = b[i];
        rot_tangent(x, y, c, te, false);
        a[i] = x;
        b[i] = y;
      }
    }
    rotate_tail(a, b, len, c, te);
  };
  // Pair k of step s of the current sweep (false: none, or a dummy).
  auto pair_of = [&](bool act, int s, int k, int &p, int &q) -> bool {
    if (!(act && gvalid && s < steps && k < half)) return false;
    if (odd_even) {
      const int *cur = at + (s & 1) * P.slots_max;
      const int i0 = (s & 1) + 2 * k;
      if (i0 + 1 >= slots) return false;
      const int a = cur[i0], c = cur[i0 + 1];
      p = a < c ? a : c;
      q = a < c ? c : a;
    } else if (k == 0) { // round_robin_pair without the modulo
      p = s;
      q = slots - 1;
    } else {
      const int M = slots - 1;
      int a = s + k, c = s - k;
      a -= a >= M ? M : 0;
      c += c < 0 ? M : 0;
      p = a < c ? a : c;
      q = a < c ? c : a;
    }
    return q < nw;
  };
  // Warp mode: the pair records of the current step (slot k < half_max) and
  // the warp's share of the groups of its matrix.
  int *rpq = reinterpret_cast<int *>(base + P.off_rpq);     // p | q << 16, -1 none
  int *rmode = reinterpret_cast<int *>(base + P.off_rmode); // bit0 rotate, 2/3 recompute p/q
  T *rg = reinterpret_cast<T *>(base + P.off_rg);           // gamma, then t conj(e)
  R *rc = reinterpret_cast<R *>(base + P.off_rc);           // cos
  const int span = P.tpm < 32 ? P.tpm : 32; // a matrix's lanes in one warp
  const int gpw = span / G;                 // its groups per warp
  const int wg0 = (t / span) * gpw;         // the first of them
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
    if (act && odd_even)
      for (int i = t; i < slots; i += P.tpm) at[i] = i;
    if (t == 0 && act) st[kStRotated] = 0;
    team.sync();
    for (int s = 0; s < P.steps_max; ++s) {
      const int *cur = at + (s & 1) * P.slots_max;

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
            if (alpha != R(0) && beta != R(0) && needs_rotation(alpha, beta, absg, tol)) {
              const Rotation<R> ro = jacobi_rotation(alpha, beta, absg);
              const R anew = alpha - ro.t * absg; // WCYCLE eq. 6
              const R bnew = beta + ro.t * absg;
              const R ancp = fmax(anc[p], anew), ancq = fmax(anc[q], bnew);
              mode = 1 | (anew < recompute_factor<R>() * ancp ? 4 : 0) |
                     (bnew < recompute_factor<R>() * ancq ? 8 : 0);
              nrm[p] = anew;
              nrm[q] = bnew;
              anc[p] = ancp;
              anc[q] = ancq;
              rg[k] = tconj_phase(ro.t, gam, absg);
              rc[k] = ro.c;
              st[kStRotated] = 1;
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
#pragma unroll
            for (int r = 0; r < RPL; ++r) {
              const int i = row_of(r);
              if (i < mw) {
                T a = wp[i], bq = wq[i];
                rot_tangent(a, bq, c, te, false);
                wp[i] = a;
                wq[i] = bq;
              }
            }
            rotate_tail(wp, wq, mw, c, te);
            if (vectors) rotate_rows(Vw + p * ldvw, Vw + q * ldvw, nw, c, te);
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
          // needs_rotation and jacobi_rotation of rotation.hpp with their
          // independent IEEE operations split over lane pairs (l even: alpha,
          // t; l odd: beta, c) and exchanged by one shuffle each: 5 instead
          // of 7 sqrt/div in the warp's instruction stream, the same bits.
          const bool odd = (l & 1) != 0;
          const R sqx = bsqrt(odd ? beta : alpha);
          const R sqy = shfl_xor(sqx, 1);
          const R sqa = odd ? sqy : sqx, sqb = odd ? sqx : sqy;
          const bool rot = v && alpha != R(0) && beta != R(0) && absg > tol * sqa * sqb;
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
          bool redo_p = false, redo_q = false;
          if (rot) {
            alpha = alpha - ro.t * absg; // WCYCLE eq. 6
            beta = beta + ro.t * absg;
            ancp = fmax(ancp, alpha);
            ancq = fmax(ancq, beta);
            const R c = ro.c;
            const T te = tconj_phase(ro.t, gam, absg);
  #pragma unroll
            for (int r = 0; r < RPL; ++r) {
              const int i = row_of(r);
              if (i < mw) {
                if constexpr (!kCacheRows) {
                  xa[r] = wp[i];
                  xb[r] = wq[i];
                }
                rot_tangent(xa[r], xb[r], c, te, false);
                wp[i] = xa[r];
                wq[i] = xb[r];
              }
            }
            rotate_tail(wp, wq, mw, c, te);
            if (vectors) rotate_rows(Vw + p * ldvw, Vw + q * ldvw, nw, c, te);
            redo_p = alpha < recompute_factor<R>() * ancp;
            redo_q = beta < recompute_factor<R>() * ancq;
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
          }
        }
      }
      if (act && odd_even && s < steps) {
        // Every compared pair of positions exchanges its items.
        int *nxt = at + ((s + 1) & 1) * P.slots_max;
        const int first = s & 1;
        for (int i = t; i < slots; i += P.tpm) {
          int to = i;
          if (i >= first) {
            if (((i - first) & 1) == 0) { if (i + 1 < slots) to = i + 1; }
            else to = i - 1;
          }
          nxt[to] = cur[i];
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
      } else if (sw >= P.max_sweeps) {
        st[kStActive] = 0;
      }
    }
    team.sync();
  }

  // ---- 3. finish: sigma_j = ||w_j|| = mant_j 2^expo_j (scaled, as the CPU
  //         twin: no overflow or underflow), u_j = w_j / sigma_j in place.
  const bool ok = mvalid && !nonfinite;
  for (int cc = 0; cc < P.col_iters; ++cc) {
    const int j = g + cc * P.ngroups;
    const bool v = ok && gvalid && j < nw;
    T *wj = W + size_t(j) * ldw;
    R mx = 0;
    if (v)
      for (int i = l; i < mw; i += G) mx = fmax(mx, amax_part(wj[i]));
#pragma unroll
    for (int o = G / 2; o > 0; o >>= 1) mx = fmax(mx, shfl_xor(mx, o));
    const int ex = mx > R(0) ? dilogb(mx) : 0;
    R s = 0;
    if (v && mx > R(0))
      for (int i = l; i < mw; i += G) s += abs2(dldexp(wj[i], -ex));
    s = group_sum<G>(s);
    if (v) {
      R mant = 0;
      int e2 = 0;
      if (mx > R(0)) {
        const R r = sqrt(s);
        if (vectors)
          for (int i = l; i < mw; i += G) wj[i] = ddiv(dldexp(wj[i], -ex), r);
        mant = dfrexp(r, &e2);
      }
      if (l == 0) {
        nrm[j] = mant;
        expo[j] = mx > R(0) ? ex + e2 : 0;
      }
    }
  }
  team.sync();
  // Stable descending order of (mant, expo): rank of each column.
  if (ok)
    for (int j = t; j < nw; j += P.tpm) {
      const R mj = nrm[j];
      const int ej = expo[j];
      int r = 0;
      for (int i = 0; i < nw; ++i) {
        const R mi = nrm[i];
        const int ei = expo[i];
        r += sorts_before(mi, ei, mj, ej) ||
             (i < j && !sorts_before(mj, ej, mi, ei));
      }
      rank[j] = r;
    }

  if (vectors) {
    // Numerically null columns, the rule of the CPU twin (solve_one.cpp):
    // sigma_j < u sigma_max. Their direction is not determined by the data
    // (and a column whose squared norm underflowed was never rotated, so
    // not orthogonalized): their U columns are completed to an orthonormal
    // set below; sigma_j keeps its computed value.
    if (ok)
      for (int j = t; j < nw; j += P.tpm) {
        R mmax = 0;
        int emax = 0;
        for (int i = 0; i < nw; ++i)
          if (sorts_before(nrm[i], expo[i], mmax, emax)) {
            mmax = nrm[i];
            emax = expo[i];
          }
        const bool null = nrm[j] == R(0) || dldexp(nrm[j], expo[j] - emax) < unit_u<R>() * mmax;
        flag[j] = !null;
        if (null) st[kStNull] = 1;
      }
    team.sync();
    // Null columns (sigma_j = 0 exactly): complete to an orthonormal set as
    // the CPU twin: candidates e_c from a cursor, two passes of classical
    // Gram-Schmidt against the accepted columns, the first keeping >= 1/2
    // of its squared norm is taken (a second round accepts >= 1/(2 mw);
    // some e_c always keeps >= 1/mw while the set is incomplete).
    if (team.any(ok && st[kStNull] != 0)) {
      if (t == 0) st[kStCursor] = 0;
      for (int j0 = 0; j0 < P.nw_max; ++j0) {
        team.sync();
        const bool need = ok && st[kStNull] != 0 && j0 < nw && !flag[j0];
        if (!team.any(need)) continue;
        if (t == 0) st[kStFound] = 0;
        team.sync();
        for (int round = 0; round < 2; ++round) {
          const R thr = round == 0 ? R(0.5) : R(0.5) / R(mw > 0 ? mw : 1);
          for (int tries = 0; tries < P.mw_max; ++tries) {
            const bool go = need && tries < mw && st[kStFound] == 0;
            if (!team.any(go)) break;
            const int cand = go ? (st[kStCursor] + tries) % mw : 0;
            if (go)
              for (int i = t; i < mw; i += P.tpm)
                xs[i] = i == cand ? done<T>() : dzero<T>();
            team.sync();
            for (int pass = 0; pass < 2; ++pass) {
              if (go)
                for (int c = t; c < nw; c += P.tpm) {
                  T acc = dzero<T>();
                  if (flag[c])
                    for (int i = 0; i < mw; ++i) dot_acc(acc, W[i + size_t(c) * ldw], xs[i]);
                  coef[c] = acc;
                }
              team.sync();
              if (go)
                for (int i = t; i < mw; i += P.tpm) {
                  T acc = xs[i];
                  for (int c = 0; c < nw; ++c)
                    if (flag[c]) acc = acc - W[i + size_t(c) * ldw] * coef[c];
                  xs[i] = acc;
                }
              team.sync();
            }
            if (go && t == 0) {
              R s2 = 0;
              for (int i = 0; i < mw; ++i) s2 += abs2(xs[i]);
              if (s2 >= thr) {
                const R nx = sqrt(s2);
                for (int i = 0; i < mw; ++i) W[i + size_t(j0) * ldw] = ddiv(xs[i], nx);
                flag[j0] = 1;
                st[kStFound] = 1;
                st[kStCursor] = (cand + 1) % mw;
              }
            }
            team.sync();
          }
        }
      }
    }
  }
  team.sync();

  // ---- 4. write S, U, V, info, sweeps once -------------------------------
  if (!mvalid) return;
  const int k = nw;
  R *S = P.batch.S.ptr(b);
  if (nonfinite) {
    for (int j = t; j < k; j += P.tpm) S[j] = R(NAN);
    if (vectors) {
      T *U = reinterpret_cast<T *>(P.batch.U.ptr(b));
      T *V = reinterpret_cast<T *>(P.batch.V.ptr(b));
      const int ldu = P.batch.U.ldm(b), ldv = P.batch.V.ldm(b);
      for (int e = t; e < m * k; e += P.tpm) {
        const int j = e / m, i = e - j * m;
        U[i + (long long)j * ldu] = dnan<T>();
      }
      for (int e = t; e < n * k; e += P.tpm) {
        const int j = e / n, i = e - j * n;
        V[i + (long long)j * ldv] = dnan<T>();
      }
    }
  } else {
    for (int j = t; j < k; j += P.tpm) S[rank[j]] = dldexp(nrm[j], expo[j] - escale);
    if (vectors) {
      T *U = reinterpret_cast<T *>(P.batch.U.ptr(b));
      T *V = reinterpret_cast<T *>(P.batch.V.ptr(b));
      const int ldu = P.batch.U.ldm(b), ldv = P.batch.V.ldm(b);
      // W side (mw x k): U, or V when m < n; V side (nw x k): V, or U.
      T *Ow = trans ? V : U;
      const int ldow = trans ? ldv : ldu;
      T *Ov = trans ? U : V;
      const int ldov = trans ? ldu : ldv;
      for (int e = t; e < mw * k; e += P.tpm) {
        const int j = e / mw, i = e - j * mw;
        Ow[i + (long long)rank[j] * ldow] = W[i + size_t(j) * ldw];
      }
      for (int e = t; e < nw * k; e += P.tpm) {
        const int j = e / nw, i = e - j * nw;
        Ov[i + (long long)rank[j] * ldov] = Vw[i + size_t(j) * ldvw];
      }
    }
  }
  if (t == 0) {
    P.batch.info[b] = nonfinite ? BSVD_INFO_NONFINITE : (st[kStConverged] ? 0 : 1);
    if (P.batch.sweeps) P.batch.sweeps[b] = st[kStSweeps];
  }
}

// ---- host side: instantiation and dispatch over (G, RPL) -----------------
template <class Tstd, int G, bool WARP>
cudaError_t launch_rpl(const FusedParams<Tstd> &P, int rpl, dim3 grid, dim3 block,
                       size_t smem, cudaStream_t stream) {
  auto go = [&](auto kernel) -> cudaError_t {
    // Set per call: all instances share one function-pointer type, so no
    // per-instance cache can live in this lambda (a host call of ~1 us).
    if (smem > 48 * 1024) {
      const cudaError_t e = cudaFuncSetAttribute(
          kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
      if (e != cudaSuccess) return e;
    }
    kernel<<<grid, block, smem, stream>>>(P);
    return cudaGetLastError();
  };
  switch (rpl) {
  case 1: return go(fused_jacobi_kernel<Tstd, G, 1, WARP>);
  case 2: return go(fused_jacobi_kernel<Tstd, G, 2, WARP>);
  case 4: return go(fused_jacobi_kernel<Tstd, G, 4, WARP>);
  default: return go(fused_jacobi_kernel<Tstd, G, 8, WARP>);
  }
}

template <class Tstd>
cudaError_t launch_fused_impl(const FusedParams<Tstd> &P, FusedShape shape,
                              cudaStream_t stream) {
  if (P.count <= 0) return cudaSuccess;
  const dim3 block(unsigned(P.mpb * P.tpm));
  const dim3 grid(unsigned((P.count + P.mpb - 1) / P.mpb));
  const size_t smem = P.smem_per_matrix * size_t(P.mpb);
  if (shape.warp_rot) {
    switch (shape.lanes) {
    case 4: return launch_rpl<Tstd, 4, true>(P, shape.rows_per_lane, grid, block, smem, stream);
    case 8: return launch_rpl<Tstd, 8, true>(P, shape.rows_per_lane, grid, block, smem, stream);
    case 16: return launch_rpl<Tstd, 16, true>(P, shape.rows_per_lane, grid, block, smem, stream);
    default: return launch_rpl<Tstd, 32, true>(P, shape.rows_per_lane, grid, block, smem, stream);
    }
  }
  switch (shape.lanes) {
  case 4: return launch_rpl<Tstd, 4, false>(P, shape.rows_per_lane, grid, block, smem, stream);
  case 8: return launch_rpl<Tstd, 8, false>(P, shape.rows_per_lane, grid, block, smem, stream);
  case 16: return launch_rpl<Tstd, 16, false>(P, shape.rows_per_lane, grid, block, smem, stream);
  default: return launch_rpl<Tstd, 32, false>(P, shape.rows_per_lane, grid, block, smem, stream);
  }
}

} // namespace bsvd::detail::cuda
