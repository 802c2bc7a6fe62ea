// Per-matrix steps shared by every GPU solver: the team abstraction, the
// load of A with its checks and prescaling (step 1), and the finish and
// write of U, S, V, info, sweeps (steps 3-4). The fused kernel runs them on
// W and V in shared memory, the blocked path (blocked/finish.cuh) on W and
// V in global memory; the code is the same, so both reproduce the CPU
// twin's finish (src/cpu/solve_one.cpp) in the same way.
//
// The step functions take the launch parameters as a template type PP with
// the fields they read: batch (device-visible Batch), tpm (threads per
// matrix), ngroups and col_iters (G-lane groups over the columns), mw_max
// and nw_max (largest working dimensions of the launch, for uniform loop
// counts across a team).
#pragma once

#include "../../core/batch.hpp"
#include "../../core/rotation.hpp"
#include "device_scalar.cuh"

namespace bsvd::detail::cuda {

enum : int {
  kStActive = 0, // still iterating
  kStRotated = 1, // a rotation happened in the current sweep
  kStSweeps = 2, // sweeps performed
  kStConverged = 3,
  kStNonfinite = 4,
  kStNull = 5, // some column is numerically null (completion needed)
  kStSubst = 6, // HSVD: a substituted hyperbolic step in the current sweep
  kStSubRun = 7, // HSVD: sweeps in a row with one; -1: breakdown
  kStInts = 8 // ints before the 8-byte amax word
};

// min_normal<R>(): rotation.hpp (host and device).
template <class R> __device__ __forceinline__ R max_finite();
template <> __device__ __forceinline__ float max_finite<float>() { return 3.40282347e+38f; }
template <> __device__ __forceinline__ double max_finite<double>() {
  return 1.7976931348623157e+308;
}
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
template <class R> __device__ __forceinline__ bool sorts_before(R ma, int ea, R mb, int eb) {
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
    if (mode == 0)
      __syncwarp();
    else if (mode == 1)
      asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
    else
      __syncthreads();
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

// ---- step 1: W = A (A^H when m < n), checks, prescaling, V = I ------------
// st (kStInts ints) and *amax_word are reset here. Returns the power-of-two
// exponent escale applied to W (S is scaled back by it); amax and nonfinite
// receive max |a_ij| and whether some entry was NaN or Inf.
template <class PP, class T, class R>
__device__ __forceinline__ int load_scaled(const PP &P, const Team &team, int t, bool mvalid, int b,
                                           int m, int n, bool vectors, T *W, int ldw, T *Vw,
                                           int ldvw, int *st, unsigned long long *amax_word,
                                           R &amax_out, bool &nonfinite_out) {
  const bool trans = m < n;
  const int mw = trans ? n : m, nw = trans ? m : n;
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
        if (dfinite(a))
          am = fmax(am, amax_part(a));
        else
          fin = false;
        if (trans)
          W[j + size_t(i) * ldw] = dconj(a);
        else
          W[i + size_t(j) * ldw] = a;
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
  amax_out = amax;
  nonfinite_out = nonfinite;
  return escale;
}

// ---- the completion in rounds (blocked path) ---------------------------------
// The twin is complete_basis (src/cpu/complete.cpp), the rule at
// completion_block (rotation.hpp). One matrix per thread block (team = the
// block), W in global memory, the round's candidates X (mw x cb) and
// coefficients C (|D| x cb, by position in the list of D's columns) in
// shared memory. The loops over D's columns go through that list (built
// per round, with the list of the null columns) and load W kUnrollW columns
// at a time, so that the loads are in flight together (the rounds are bound
// by instruction issue; docs/design/decisions/0015-side-stream-and-early-finish.md
// has the measurement). Wherever a step works row by row a row belongs to one
// thread (i = t + r tpm), so the candidates of a round are orthogonalized
// against each other with one barrier per reduction and none between them.
template <class T> struct RoundSmem {
  T *X = nullptr; // column k at X + k mw
  T *C = nullptr; // C[q cb + k]: D's q-th column
  T *red = nullptr; // 2 x (tpm / 32) x kCompletionMaxBlock partial sums
  unsigned long long *keys = nullptr; // kCompletionMaxBlock
  // nw + 1 entries: D's columns ascending from the front, the null
  // columns ascending from the back (the j-th at nw - 1 - j), |D| last
  int *dl = nullptr;
  int cb = 0; // round width; 0: the one-at-a-time loop
};
__host__ __device__ constexpr size_t round_scratch_bytes(int tpm, size_t elem, int nw_max) {
  return 2 * size_t(tpm / 32) * kCompletionMaxBlock * elem +
         kCompletionMaxBlock * sizeof(unsigned long long) + size_t(nw_max + 1) * sizeof(int);
}

template <class T, class R> __device__ void complete_rounds(const RoundSmem<T> &S, int t, int tpm,
                                                            T *W, int ldw, int mw, int nw,
                                                            int *flag, R *resid) {
  constexpr int KB = kCompletionMaxBlock;
  constexpr int kUnrollW = 8;
  const int nwarp = tpm / 32, w = t / 32, lane = t % 32, cb = S.cb;
  T *X = S.X, *C = S.C;
  const int *dl = S.dl;
  int buf = 0;
  bool first = true;
  for (;;) {
    __syncthreads(); // flag, resid and the last round's keys settled
    if (t < 32) { // the two lists, by warp ballots
      const unsigned below = (1u << lane) - 1u;
      int base = 0, nbase = 0;
      for (int c0 = 0; c0 < nw; c0 += 32) {
        const int c = c0 + lane;
        const bool f = c < nw && flag[c], z = c < nw && !flag[c];
        const unsigned m = __ballot_sync(0xffffffffu, f), mz = __ballot_sync(0xffffffffu, z);
        if (f) S.dl[base + __popc(m & below)] = c;
        if (z) S.dl[nw - 1 - (nbase + __popc(mz & below))] = c;
        base += __popc(m);
        nbase += __popc(mz);
      }
      if (lane == 0) S.dl[nw] = base;
    }
    if (t < KB) S.keys[t] = 0;
    __syncthreads();
    const int nd = dl[nw], left = nw - nd; // left: null columns still to fill
    if (left == 0) break;
    const int nb = min(cb, left);
    // W_D's column at D position q, row i.
    auto wd = [&](int i, int q) { return W[i + size_t(dl[q]) * ldw]; };
    if (first) { // r_i = 1 - sum_{c in D} |w_ic|^2 (rows of this thread)
      first = false;
      for (int i = t; i < mw; i += tpm) {
        R s = 0;
#pragma unroll kUnrollW
        for (int q = 0; q < nd; ++q) s += abs2(wd(i, q));
        resid[i] = R(1) - s;
      }
      __syncthreads();
    }
    // 1. the nb largest keys, descending (keys are distinct).
    unsigned long long prev = ~0ull;
    for (int k = 0; k < nb; ++k) {
      unsigned long long best = 0;
      for (int i = t; i < mw; i += tpm) {
        const unsigned long long key = completion_key(resid[i], i, mw);
        if (key < prev) best = max(best, key);
      }
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) best = max(best, __shfl_xor_sync(0xffffffffu, best, o));
      if (lane == 0 && best) atomicMax(&S.keys[k], best);
      __syncthreads();
      prev = S.keys[k];
    }
    auto cand = [&](int k) { return completion_row(S.keys[k], mw); };
    const R rho = fmax(resid[cand(0)], R(0));
    // 2. X = [e_cand] - W_D (W_D^H X), twice; pass 0's C = conj(rows cand).
    for (int e = t; e < nb * mw; e += tpm) {
      const int k = e / mw, i = e - k * mw;
      X[e] = i == cand(k) ? done<T>() : dzero<T>();
    }
    for (int e = t; e < nd * nb; e += tpm) {
      const int q = e / nb, k = e - q * nb;
      C[q * cb + k] = dconj(wd(cand(k), q));
    }
    __syncthreads();
    for (int pass = 0; pass < 2; ++pass) {
      if (pass == 1) {
        // C = W_D^H X: a warp per column, lanes over the rows (coalesced
        // reads of w_c, kUnrollW / 2 rows in flight per lane;
        // conflict-free reads of X).
        constexpr int U = kUnrollW / 2;
        for (int q = w; q < nd; q += nwarp) {
          T acc[KB];
#pragma unroll
          for (int k = 0; k < KB; ++k) acc[k] = dzero<T>();
          const T *wc = W + size_t(dl[q]) * ldw;
          for (int i0 = lane; i0 < mw; i0 += 32 * U) {
            T wi[U];
#pragma unroll
            for (int u = 0; u < U; ++u) wi[u] = i0 + 32 * u < mw ? wc[i0 + 32 * u] : dzero<T>();
#pragma unroll
            for (int u = 0; u < U; ++u)
              if (i0 + 32 * u < mw)
#pragma unroll
                for (int k = 0; k < KB; ++k)
                  if (k < nb) dot_acc(acc[k], wi[u], X[k * mw + i0 + 32 * u]);
          }
#pragma unroll
          for (int k = 0; k < KB; ++k)
            if (k < nb) {
              acc[k] = group_sum<32>(acc[k]);
              if (lane == 0) C[q * cb + k] = acc[k];
            }
        }
        __syncthreads();
      }
      // X -= W_D C: a thread per row, kUnrollW columns of W in flight.
      for (int i = t; i < mw; i += tpm) {
        T x[KB];
#pragma unroll
        for (int k = 0; k < KB; ++k) x[k] = k < nb ? X[k * mw + i] : dzero<T>();
        for (int q0 = 0; q0 < nd; q0 += kUnrollW) {
          T wq[kUnrollW];
#pragma unroll
          for (int u = 0; u < kUnrollW; ++u) wq[u] = q0 + u < nd ? wd(i, q0 + u) : dzero<T>();
#pragma unroll
          for (int u = 0; u < kUnrollW; ++u)
            if (q0 + u < nd)
#pragma unroll
              for (int k = 0; k < KB; ++k)
                if (k < nb) x[k] = x[k] - wq[u] * C[(q0 + u) * cb + k];
        }
#pragma unroll
        for (int k = 0; k < KB; ++k)
          if (k < nb) X[k * mw + i] = x[k];
      }
      __syncthreads();
    }
    // 3. each candidate against the ones this round accepted (twice), in
    // key order; accepted ones normalized into X's first acc columns. All
    // threads form the same sums in the same order: the decisions agree.
    int acc = 0;
    for (int k = 0; k < nb; ++k) {
      for (int pass = 0; pass < 2 && acc > 0; ++pass) {
        T d[KB];
#pragma unroll
        for (int a = 0; a < KB; ++a) d[a] = dzero<T>();
        for (int i = t; i < mw; i += tpm) {
          const T y = X[k * mw + i];
#pragma unroll
          for (int a = 0; a < KB; ++a)
            if (a < acc) dot_acc(d[a], X[a * mw + i], y);
        }
        T *rb = S.red + size_t(buf) * nwarp * KB;
        buf ^= 1;
#pragma unroll
        for (int a = 0; a < KB; ++a)
          if (a < acc) {
            d[a] = group_sum<32>(d[a]);
            if (lane == 0) rb[w * KB + a] = d[a];
          }
        __syncthreads();
#pragma unroll
        for (int a = 0; a < KB; ++a)
          if (a < acc) {
            T s = dzero<T>();
            for (int q = 0; q < nwarp; ++q) s = s + rb[q * KB + a];
            d[a] = s;
          }
        for (int i = t; i < mw; i += tpm) {
          T y = X[k * mw + i];
#pragma unroll
          for (int a = 0; a < KB; ++a)
            if (a < acc) y = y - X[a * mw + i] * d[a];
          X[k * mw + i] = y;
        }
      }
      R s = 0;
      for (int i = t; i < mw; i += tpm) s += abs2(X[k * mw + i]);
      s = group_sum<32>(s);
      T *rb = S.red + size_t(buf) * nwarp * KB;
      buf ^= 1;
      if (lane == 0) rb[w * KB] = dfrom_real<T>(s);
      __syncthreads();
      R lft = 0;
      for (int q = 0; q < nwarp; ++q) lft += dreal(rb[q * KB]);
      if (k > 0 && !completion_accepts(lft, rho)) continue;
      const R nx = sqrt(lft);
      const int ck = cand(k);
      for (int i = t; i < mw; i += tpm)
        X[acc * mw + i] = nx > R(0) ? ddiv(X[k * mw + i], nx) : (i == ck ? done<T>() : dzero<T>());
      ++acc;
    }
    // 4. the accepted columns fill the first acc null columns (ascending);
    // r_i downdated.
    for (int a = 0; a < acc; ++a) {
      const int j = dl[nw - 1 - a];
      for (int i = t; i < mw; i += tpm) {
        const T u = X[a * mw + i];
        W[i + size_t(j) * ldw] = u;
        resid[i] -= abs2(u);
      }
    }
    if (t < acc) flag[dl[nw - 1 - t]] = 1;
  }
}

// ---- steps 3-4: finish and write -------------------------------------------
// On entry W holds the orthogonalized columns (ldw), Vw the accumulated
// rotations (ldvw), st[kStConverged] and st[kStSweeps] the iteration's
// outcome. nrm, expo, rank, flag: nw_max entries of scratch; xs: mw_max,
// coef: nw_max, key: one word, resid: mw or null (null-column completion);
// rounds.cb > 0 (one matrix per block, resid given): the completion in
// rounds, else one column at a time. nplus >= 0: the HSVD's signature
// (fused kernel, HYP): each side of nplus sorted on its own, V written as
// J V_acc J (hsvd.cpp says why), info = breakdown when st[kStSubRun] < 0.
template <int G, class PP, class T, class R> __device__ __forceinline__ void
finish_and_write(const PP &P, const Team &team, int t, int g, int l, bool gvalid, bool mvalid,
                 bool nonfinite, int b, int m, int n, bool vectors, int escale, T *W, int ldw,
                 const T *Vw, int ldvw, R *nrm, int *expo, int *rank, int *flag, T *xs, T *coef,
                 int *st, unsigned long long *key, R *resid, R null_ratio,
                 const RoundSmem<T> &rounds = {}, int nplus = -1) {
  const bool trans = m < n;
  const int mw = trans ? n : m, nw = trans ? m : n;
  // 3. finish: sigma_j = ||w_j|| = mant_j 2^expo_j (scaled, as the CPU
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
  // Stable descending order of (mant, expo): rank of each column (within
  // its side of nplus, the +1 side first, for the HSVD).
  if (ok)
    for (int j = t; j < nw; j += P.tpm) {
      const R mj = nrm[j];
      const int ej = expo[j];
      const bool minus = nplus >= 0 && j >= nplus;
      const int lo = minus ? nplus : 0, hi = nplus >= 0 && !minus ? nplus : nw;
      int r = lo;
      for (int i = lo; i < hi; ++i) {
        const R mi = nrm[i];
        const int ei = expo[i];
        r += sorts_before(mi, ei, mj, ej) || (i < j && !sorts_before(mj, ej, mi, ei));
      }
      rank[j] = r;
    }

  if (vectors) {
    // Numerically null columns, the rule of the CPU twin (solve_one.cpp):
    // sigma_j < null_ratio sigma_max (u, or k u on the blocked path:
    // finish_null_ratio in rotation.hpp). Their direction is not determined by the data
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
        const bool null = nrm[j] == R(0) || dldexp(nrm[j], expo[j] - emax) < null_ratio * mmax;
        flag[j] = !null;
        if (null) st[kStNull] = 1;
      }
    team.sync();
    // Null columns: complete to an orthonormal set as the CPU twin
    // (complete_basis, src/cpu/complete.cpp, with b = 1): for each null j0 in ascending
    // order the pivot e_c with the largest residual r_c = 1 - sum_{c' in D}
    // |w_cc'|^2 against the accepted set D (completion_key, rotation.hpp;
    // *key, a word of the team's shared memory), then two
    // passes of classical Gram-Schmidt against D and normalization. One
    // candidate per column (the r_c sum to mw - |D| >= 1). With resid
    // (mw entries) the r_c are formed once and then downdated by each new
    // column, as the twin; without (the fused kernel: no room in shared
    // memory) they are formed again for each column. Every loop over the
    // columns is branch-free (coef_c = 0 outside D) so that its loads are
    // in flight together: W may be in global memory.
    const bool anynull = ok && st[kStNull] != 0;
    if (rounds.cb > 0) {
      // One matrix per block: anynull is the block's.
      if (anynull) complete_rounds(rounds, t, P.tpm, W, ldw, mw, nw, flag, resid);
    } else if (team.any(anynull)) {
      auto residual = [&](int i) {
        R s = 0;
#pragma unroll 8
        for (int c = 0; c < nw; ++c) {
          const R w2 = abs2(W[i + size_t(c) * ldw]); // loaded whatever flag[c]
          s += flag[c] ? w2 : R(0);
        }
        return R(1) - s;
      };
      if (resid && anynull)
        for (int i = t; i < mw; i += P.tpm) resid[i] = residual(i);
      for (int j0 = 0; j0 < P.nw_max; ++j0) {
        team.sync();
        const bool need = anynull && j0 < nw && !flag[j0];
        if (!team.any(need)) continue;
        if (t == 0) *key = 0;
        team.sync();
        if (need) {
          // Thread per row: reads of W coalesced across the team.
          unsigned long long best = 0;
          for (int i = t; i < mw; i += P.tpm)
            best = max(best, static_cast<unsigned long long>(
                                 completion_key(resid ? resid[i] : residual(i), i, mw)));
          if (best) atomicMax(key, best);
        }
        team.sync();
        const int cand = completion_row(*key, mw);
        // x = e_cand; first pass: coef_c = w_c^H e_cand = conj(w_cand,c).
        if (need) {
          for (int i = t; i < mw; i += P.tpm) xs[i] = i == cand ? done<T>() : dzero<T>();
          for (int c = t; c < nw; c += P.tpm)
            coef[c] = flag[c] ? dconj(W[cand + size_t(c) * ldw]) : dzero<T>();
        }
        team.sync();
        for (int pass = 0; pass < 2; ++pass) {
          if (pass == 1) {
            // coef_c = w_c^H x: one G-lane group per column (coalesced
            // reads of w_c). Uniform trip count (col_iters) so the group
            // sums see whole warps.
            for (int cc = 0; cc < P.col_iters; ++cc) {
              const int c = g + cc * P.ngroups;
              const bool vc = need && gvalid && c < nw;
              const bool use = vc && flag[c];
              T acc = dzero<T>();
              if (use)
                for (int i = l; i < mw; i += G) dot_acc(acc, W[i + size_t(c) * ldw], xs[i]);
              acc = group_sum<G>(acc);
              if (vc && l == 0) coef[c] = use ? acc : dzero<T>();
            }
            team.sync();
          }
          if (need)
            for (int i = t; i < mw; i += P.tpm) {
              T acc = xs[i];
#pragma unroll 8
              for (int c = 0; c < nw; ++c) acc = acc - W[i + size_t(c) * ldw] * coef[c];
              xs[i] = acc;
            }
          team.sync();
        }
        if (need) {
          // Every thread forms ||x||^2 in the same order (broadcast reads),
          // then writes its rows of the new column and downdates resid.
          R s2 = 0;
          for (int i = 0; i < mw; ++i) s2 += abs2(xs[i]);
          const R nx = sqrt(s2);
          for (int i = t; i < mw; i += P.tpm) {
            const T u = nx > R(0) ? ddiv(xs[i], nx) : (i == cand ? done<T>() : dzero<T>());
            W[i + size_t(j0) * ldw] = u;
            if (resid) resid[i] -= abs2(u);
          }
        }
        team.sync();
        if (need && t == 0) flag[j0] = 1;
      }
    }
  }
  team.sync();

  // 4. write S, U, V, info, sweeps once -------------------------------
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
        const T x = Vw[i + size_t(j) * ldvw];
        Ov[i + (long long)rank[j] * ldov] = nplus >= 0 && (i < nplus) != (j < nplus) ? dneg(x) : x;
      }
    }
  }
  if (t == 0) {
    P.batch.info[b] = nonfinite                         ? BSVD_INFO_NONFINITE
                      : nplus >= 0 && st[kStSubRun] < 0 ? BSVD_INFO_HYPERBOLIC_BREAKDOWN
                      : st[kStConverged]                ? 0
                                                        : 1;
    if (P.batch.sweeps) P.batch.sweeps[b] = st[kStSweeps];
  }
}

} // namespace bsvd::detail::cuda
