// bsvd::device::warp_svd: the SVD of one small matrix by a group of L lanes
// of a warp, one lane per column (docs/design/tiny.md, "The lanes variant").
// Header-only; on the host the same source runs all L lanes in lock step
// and is its own CPU twin.
//
//   #include <bsvd/device/warp_svd.cuh>
//   // in a kernel, L = 8 consecutive lanes (aligned to 8) per matrix, all
//   // eight calling with the same arguments and their lane index 0..7:
//   int info = bsvd::device::warp_svd<double, 8, 8, 8>(threadIdx.x & 7, m, n, A, lda, S, U, ldu,
//                                                     V, ldv);
//
// Same contract as bsvd::device::svd (svd.cuh): economy A = U diag(S) V^H,
// S sorted descending, the same info codes (returned on every lane of the
// group), the same scaling, threshold and rotation. L is a power of two,
// max(MaxM, MaxN) <= L <= 32 ... min(MaxM, MaxN) columns need L lanes.
//
// Why lanes: one thread holding an 8 x 8 A and V (128 doubles) spills past
// the 255-register cap; here each lane holds one column of the working
// matrix and one of V. A sweep is L - 1 rounds; in round r lane j pairs with
// lane j ^ r (every pair once per sweep, L/2 disjoint pairs at once), fetches
// its partner's column with __shfl_xor_sync, and both lanes compute the
// rotation from the same bits in the same order (the lower column as x), so
// they agree exactly; each then updates its own column.
#pragma once

#include "svd.cuh"

namespace bsvd::device {

namespace detail {

#if defined(__CUDA_ARCH__)
// One lane of the group per thread: arrays hold K = 1 entry.
template <int L> struct lanes_ctx {
  static constexpr int K = 1;
  int me; // lane in the group
  unsigned mask; // the group's lanes in the warp
  __device__ int lane(int) const { return me; }
  __device__ float xo(float v, int r) const { return __shfl_xor_sync(mask, v, r, L); }
  __device__ double xo(double v, int r) const { return __shfl_xor_sync(mask, v, r, L); }
  __device__ int xo(int v, int r) const { return __shfl_xor_sync(mask, v, r, L); }
  template <class R> __device__ complex<R> xo(complex<R> v, int r) const {
    return {xo(v.re, r), xo(v.im, r)};
  }
  __device__ float bc(float v, int l) const { return __shfl_sync(mask, v, l, L); }
  __device__ double bc(double v, int l) const { return __shfl_sync(mask, v, l, L); }
  __device__ int bc(int v, int l) const { return __shfl_sync(mask, v, l, L); }
  template <class R> __device__ complex<R> bc(complex<R> v, int l) const {
    return {bc(v.re, l), bc(v.im, l)};
  }
  // Partner values: out[o] = in of lane lane(o) ^ r.
  template <class X> __device__ void xchg(const X (&in)[1], X (&out)[1], int r) const {
    out[0] = xo(in[0], r);
  }
  template <class X, int N> __device__ void xchg(const X (&in)[1][N], X (&out)[1][N], int r) const {
#pragma unroll
    for (int i = 0; i < N; ++i) out[0][i] = xo(in[0][i], r);
  }
  // Entry i of the partner's column: out = in[i] of lane me ^ r.
  template <class X, int N>
  __device__ void xchg_at(const X (&in)[1][N], int i, X (&out)[1], int r) const {
    out[0] = xo(in[0][i], r);
  }
  // The value of lane l.
  template <class X> __device__ X from(const X (&in)[1], int l) const { return bc(in[0], l); }
  __device__ bool any(const bool (&f)[1]) const { return __any_sync(mask, f[0]); }
};
#else
// All L lanes in one host thread: arrays hold K = L entries, entry o is
// lane o, and an exchange reads the partner's entry.
template <int L> struct lanes_ctx {
  static constexpr int K = L;
  int lane(int o) const { return o; }
  template <class X> void xchg(const X (&in)[L], X (&out)[L], int r) const {
    for (int o = 0; o < L; ++o) out[o] = in[o ^ r];
  }
  template <class X, int N> void xchg(const X (&in)[L][N], X (&out)[L][N], int r) const {
    for (int o = 0; o < L; ++o)
      for (int i = 0; i < N; ++i) out[o][i] = in[o ^ r][i];
  }
  template <class X, int N> void xchg_at(const X (&in)[L][N], int i, X (&out)[L], int r) const {
    for (int o = 0; o < L; ++o) out[o] = in[o ^ r][i];
  }
  template <class X> X from(const X (&in)[L], int l) const { return in[l]; }
  bool any(const bool (&f)[L]) const {
    bool a = false;
    for (int o = 0; o < L; ++o) a = a || f[o];
    return a;
  }
};
#endif

// own' = c (own + s other) of the tangent-form rotation (svd.cuh rot):
// the lower column x of the pair gets s = -te, the upper y gets conj(te),
// so each lane computes exactly the bits rot() gives its column.
template <class R> BSVD_DEVICE_HD R rot_own(R own, R other, R c, R te, bool lo) {
  return c * rfma(lo ? -te : te, other, own);
}
template <class R>
BSVD_DEVICE_HD complex<R> rot_own(complex<R> own, complex<R> other, R c, complex<R> te, bool lo) {
  const R sr = lo ? -te.re : te.re, ti = te.im;
  return {c * rfma(ti, other.im, rfma(sr, other.re, own.re)),
          c * rfma(-ti, other.re, rfma(sr, other.im, own.im))};
}

template <class R> BSVD_DEVICE_HD R add2(R x, R y) { return x + y; }
template <class R> BSVD_DEVICE_HD complex<R> add2(complex<R> x, complex<R> y) {
  return {x.re + y.re, x.im + y.im};
}

// The group maximum by butterfly (the same result on every lane).
template <class Ctx, class R> BSVD_DEVICE_HD void group_max(const Ctx &ctx, R (&x)[Ctx::K], int L) {
  for (int r = 1; r < L; r <<= 1) {
    R y[Ctx::K];
    ctx.xchg(x, y, r);
#pragma unroll
    for (int o = 0; o < Ctx::K; ++o) x[o] = y[o] > x[o] ? y[o] : x[o];
  }
}

// The sweeps of the lanes variant: lane j holds column j of the scaled
// working matrix (a) and of V (v); columns >= nw are zero and never rotate.
//
// The partner's columns travel by shuffles. Its column of the working
// matrix is fetched once per round into registers when it takes at most 128
// bytes (kHold) and serves the inner product and the update; a longer one
// (d from 17 rows, z from 9) is fetched twice, entry by entry, so that a
// lane holds two columns, not three, and stays within its registers. The
// partner's column of V: up to 8 rows (kEarlyV) fetched with the others at
// the start of the round, where its latency hides behind the rotation's;
// beyond, entry by entry and only in rounds where a pair of the group
// rotates (near convergence most rounds rotate nothing), which keeps the
// wide instances' registers down. Every lane sees the same bits in the same
// order either way: the results do not depend on these choices.
template <class W, class R, int MW, int NW, int L, bool kV, class Ctx>
BSVD_DEVICE_HD int lane_sweeps(const Ctx &ctx, W (&a)[Ctx::K][MW], W (&v)[Ctx::K][NW], int nw,
                               R tol, int max_sweeps, bool *converged) {
  constexpr int K = Ctx::K;
  constexpr bool kHold = MW * sizeof(W) <= 128;
  constexpr bool kEarlyV = MW <= 8;
  const R floor = gamma_floor<R>();
  R nrm[K];
  int sweep = 0;
  *converged = false;
  while (sweep < max_sweeps) {
    ++sweep;
#pragma unroll
    for (int o = 0; o < K; ++o) {
      R s = R(0);
#pragma unroll
      for (int i = 0; i < MW; ++i) s += abs2(a[o][i]);
      nrm[o] = s;
    }
    bool rotated[K];
#pragma unroll
    for (int o = 0; o < K; ++o) rotated[o] = false;
#pragma unroll 1
    for (int r = 1; r < L; ++r) {
      R pn[K];
      ctx.xchg(nrm, pn, r);
      bool lo[K];
      W g[K];
#pragma unroll
      for (int o = 0; o < K; ++o) {
        lo[o] = ctx.lane(o) < (ctx.lane(o) ^ r);
        g[o] = zero<W>();
      }
      // Beyond 8 rows the inner product runs as two chains (even and odd
      // rows), halving its latency; both lanes of a pair add in one order.
      W g2[K];
#pragma unroll
      for (int o = 0; o < K; ++o) g2[o] = zero<W>();
      W pa[K][kHold ? MW : 1];
      if constexpr (kHold) ctx.xchg(a, pa, r);
      W pv[K][kEarlyV && kV ? NW : 1];
      if constexpr (kEarlyV && kV) ctx.xchg(v, pv, r);
#pragma unroll
      for (int i = 0; i < MW; ++i) {
        W x[K];
        if constexpr (kHold) {
#pragma unroll
          for (int o = 0; o < K; ++o) x[o] = pa[o][kHold ? i : 0];
        } else {
          ctx.xchg_at(a, i, x, r);
        }
#pragma unroll
        for (int o = 0; o < K; ++o) {
          W &acc = MW > 8 && (i & 1) ? g2[o] : g[o];
          dot_acc(acc, lo[o] ? a[o][i] : x[o], lo[o] ? x[o] : a[o][i]);
        }
      }
      if constexpr (MW > 8) {
#pragma unroll
        for (int o = 0; o < K; ++o) g[o] = add2(g[o], g2[o]);
      }
      bool rot[K];
      R c[K];
      W te[K];
#pragma unroll
      for (int o = 0; o < K; ++o) {
        const int j = ctx.lane(o), p = j ^ r;
        rot[o] = false;
        c[o] = R(1);
        te[o] = zero<W>();
        if (j >= nw || p >= nw) continue;
        const R ag = absg(g[o]);
        const R alpha = lo[o] ? nrm[o] : pn[o], beta = lo[o] ? pn[o] : nrm[o];
        if (!rotates_pair(alpha, beta, ag, tol) || !(ag > floor)) continue;
        rot[o] = rotated[o] = true;
        const TanCos<R> tc = jacobi_tan_cos(alpha, beta, ag);
        const R t = tc.t;
        c[o] = tc.c;
        te[o] = tphase(t, g[o], ag);
        nrm[o] = rfma(lo[o] ? -t : t, ag, nrm[o]);
      }
      if (!kEarlyV && !ctx.any(rot)) continue; // the same on every lane of the group
      // This lane's column x (of W or V) rotated against the partner's:
      // its copy px held, or fetched entry by entry.
      const auto rotate_held = [&](auto &x, const auto &px) {
        constexpr int N = int(sizeof(x[0]) / sizeof(x[0][0]));
#pragma unroll
        for (int o = 0; o < K; ++o) {
          if (!rot[o]) continue;
#pragma unroll
          for (int i = 0; i < N; ++i) x[o][i] = rot_own(x[o][i], px[o][i], c[o], te[o], lo[o]);
        }
      };
      const auto rotate_fetched = [&](auto &x) {
        constexpr int N = int(sizeof(x[0]) / sizeof(x[0][0]));
#pragma unroll
        for (int i = 0; i < N; ++i) {
          W y[K];
          ctx.xchg_at(x, i, y, r);
#pragma unroll
          for (int o = 0; o < K; ++o)
            if (rot[o]) x[o][i] = rot_own(x[o][i], y[o], c[o], te[o], lo[o]);
        }
      };
      if constexpr (kHold)
        rotate_held(a, pa);
      else
        rotate_fetched(a);
      if constexpr (kV && kEarlyV)
        rotate_held(v, pv);
      else if constexpr (kV)
        rotate_fetched(v);
    }
    if (!ctx.any(rotated)) {
      *converged = true;
      break;
    }
  }
  return sweep;
}

// Null columns (bit clear in ok) replaced by unit vectors orthogonal to the
// accepted ones, in column order, as svd.cuh complete(): every lane runs the
// same Gram-Schmidt on columns broadcast from their lanes, the null
// column's lane keeps the result.
template <class W, class R, int MW, int L, class Ctx>
BSVD_DEVICE_HD void lane_complete(const Ctx &ctx, W (&a)[Ctx::K][MW], unsigned ok, int mw, int nw) {
  constexpr int K = Ctx::K;
#pragma unroll 1
  for (int j = 0; j < nw; ++j) {
    if (ok >> j & 1u) continue;
    W best[MW];
    R best_n = R(-1);
#pragma unroll 1
    for (int c = 0; c < mw; ++c) {
      W x[MW];
#pragma unroll
      for (int i = 0; i < MW; ++i) x[i] = i == c ? from_real<W>(R(1)) : zero<W>();
#pragma unroll 1
      for (int pass = 0; pass < 2; ++pass) {
#pragma unroll 1
        for (int l = 0; l < nw; ++l) {
          if (!(ok >> l & 1u)) continue;
          W col[MW];
#pragma unroll
          for (int i = 0; i < MW; ++i) {
            W ai[K];
#pragma unroll
            for (int o = 0; o < K; ++o) ai[o] = a[o][i];
            col[i] = ctx.from(ai, l);
          }
          W d = zero<W>();
#pragma unroll
          for (int i = 0; i < MW; ++i) dot_acc(d, col[i], x[i]);
#pragma unroll
          for (int i = 0; i < MW; ++i) axpy_neg(d, col[i], x[i]);
        }
      }
      R n2 = R(0);
#pragma unroll
      for (int i = 0; i < MW; ++i) n2 += abs2(x[i]);
      if (n2 > best_n) {
        best_n = n2;
#pragma unroll
        for (int i = 0; i < MW; ++i) best[i] = x[i];
      }
    }
    const R inv = R(1) / rsqrt_(best_n);
#pragma unroll
    for (int o = 0; o < K; ++o)
      if (ctx.lane(o) == j) {
#pragma unroll
        for (int i = 0; i < MW; ++i) a[o][i] = scale(best[i], inv);
      }
    ok |= 1u << j;
  }
}

template <class T, int MaxM, int MaxN, int L, class Ctx, class AfterLoad>
BSVD_DEVICE_HD int lanes_svd(const Ctx &ctx, int m, int n, const T *A, int a_rs, int a_cs,
                             typename traits<T>::R *S, int s_inc, T *U, int u_rs, int u_cs, T *V,
                             int v_rs, int v_cs, int *sweeps_out, options opt,
                             AfterLoad after_load) {
  using R = typename traits<T>::R;
  using W = typename traits<T>::W;
  constexpr int K = Ctx::K;
  constexpr int MW = MaxM > MaxN ? MaxM : MaxN;
  constexpr int NW = MaxM > MaxN ? MaxN : MaxM;
  static_assert(sizeof(W) == sizeof(T), "T must be layout-compatible with the working type");
  static_assert(L >= NW && L <= 32 && (L & (L - 1)) == 0, "L: a power of two, >= min(MaxM, MaxN)");
  const W *a_in = reinterpret_cast<const W *>(A);
  W *u_out = reinterpret_cast<W *>(U);
  W *v_out = reinterpret_cast<W *>(V);
  const bool tr = m < n;
  const int mw = tr ? n : m, nw = tr ? m : n;
  if (sweeps_out) *sweeps_out = 0;
  if (m <= 0 || n <= 0) return kInfoConverged;
  if (m > MaxM || n > MaxN) return kInfoTooLarge;

  W a[K][MW];
  R big[K];
  int fin[K];
#pragma unroll
  for (int o = 0; o < K; ++o) {
    const int j = ctx.lane(o);
    big[o] = R(0);
    fin[o] = 1;
#pragma unroll
    for (int i = 0; i < MW; ++i) {
      W x = zero<W>();
      if (i < mw && j < nw) x = tr ? conj_(a_in[j * a_rs + i * a_cs]) : a_in[i * a_rs + j * a_cs];
      fin[o] = fin[o] && finite(x);
      const R ax = amax(x);
      big[o] = ax > big[o] ? ax : big[o];
      a[o][i] = x;
    }
    fin[o] = 1 - fin[o]; // group_max of "not finite"
  }
  after_load();
  group_max(ctx, big, L);
  group_max(ctx, fin, L);
  W *ua = tr ? v_out : u_out;
  W *va = tr ? u_out : v_out;
  const int ua_rs = tr ? v_rs : u_rs, ua_cs = tr ? v_cs : u_cs;
  const int va_rs = tr ? u_rs : v_rs, va_cs = tr ? u_cs : v_cs;
  if (fin[0]) {
#pragma unroll
    for (int o = 0; o < K; ++o) {
      const int j = ctx.lane(o);
      if (j >= nw) continue;
      S[j * s_inc] = R(NAN);
      const W wn = nan_of<W>();
      if (u_out)
        for (int i = 0; i < m; ++i) u_out[i * u_rs + j * u_cs] = wn;
      if (v_out)
        for (int i = 0; i < n; ++i) v_out[i * v_rs + j * v_cs] = wn;
    }
    return kInfoNonFinite;
  }
  const int e = big[0] > R(0) ? rilogb(big[0]) : 0;
  W v[K][NW];
#pragma unroll
  for (int o = 0; o < K; ++o) {
    const int j = ctx.lane(o);
#pragma unroll
    for (int i = 0; i < MW; ++i) a[o][i] = pow2_scale<W, R>(a[o][i], -e);
#pragma unroll
    for (int i = 0; i < NW; ++i) v[o][i] = i == j ? from_real<W>(R(1)) : zero<W>();
  }
  const R tol = resolve_tol<R>(opt.tol, mw);
  const int cap = opt.max_sweeps > 0 ? opt.max_sweeps : 80;
  bool conv = false;
  const int ns = va ? lane_sweeps<W, R, MW, NW, L, true>(ctx, a, v, nw, tol, cap, &conv)
                    : lane_sweeps<W, R, MW, NW, L, false>(ctx, a, v, nw, tol, cap, &conv);
  if (sweeps_out) *sweeps_out = ns;

  // Singular values, their ranks (descending, ties by index) from the
  // group's values, S written by each column's lane.
  R s[K], smax[K];
#pragma unroll
  for (int o = 0; o < K; ++o) {
    R q = R(0);
#pragma unroll
    for (int i = 0; i < MW; ++i) q += abs2(a[o][i]);
    s[o] = rsqrt_(q);
    smax[o] = ctx.lane(o) < nw ? s[o] : R(0);
  }
  group_max(ctx, smax, L);
  int rank[K];
#pragma unroll
  for (int o = 0; o < K; ++o) rank[o] = 0;
  unsigned ok = 0; // bit l: column l is numerically nonzero
#pragma unroll
  for (int l = 0; l < L; ++l) {
    const R sl = ctx.from(s, l);
    if (l < nw && sl > u_<R>() * smax[0]) ok |= 1u << l;
#pragma unroll
    for (int o = 0; o < K; ++o) {
      const int j = ctx.lane(o);
      if (l < nw && (sl > s[o] || (sl == s[o] && l < j))) ++rank[o];
    }
  }
#pragma unroll
  for (int o = 0; o < K; ++o)
    if (ctx.lane(o) < nw) S[rank[o] * s_inc] = pow2_scale<R, R>(s[o], e);
  if (ua) {
    const bool all = ok == (nw >= 32 ? 0xffffffffu : (1u << nw) - 1u);
#pragma unroll
    for (int o = 0; o < K; ++o) {
      const int j = ctx.lane(o);
      const R inv = ok >> j & 1u ? R(1) / s[o] : R(0);
#pragma unroll
      for (int i = 0; i < MW; ++i) a[o][i] = scale(a[o][i], inv);
    }
    if (!all) lane_complete<W, R, MW, L>(ctx, a, ok, mw, nw);
#pragma unroll
    for (int o = 0; o < K; ++o) {
      if (ctx.lane(o) >= nw) continue;
#pragma unroll
      for (int i = 0; i < MW; ++i)
        if (i < mw) ua[i * ua_rs + rank[o] * ua_cs] = a[o][i];
    }
  }
  if (va) {
#pragma unroll
    for (int o = 0; o < K; ++o) {
      if (ctx.lane(o) >= nw) continue;
#pragma unroll
      for (int i = 0; i < NW; ++i)
        if (i < nw) va[i * va_rs + rank[o] * va_cs] = v[o][i];
    }
  }
  return conv ? kInfoConverged : kInfoNotConverged;
}

} // namespace detail

// The general strided form (svd.cuh svd_strided), called by all L lanes of
// an aligned group with the same arguments and lane = 0 ... L - 1 (on the
// host: once, lane ignored, all lanes emulated). after_load runs on every
// lane once A is in registers (a block barrier for kernels that stage in
// shared memory: every thread of the block must call then).
template <class T, int MaxM, int MaxN, int L, class AfterLoad = no_hook>
BSVD_DEVICE_HD int warp_svd_strided(int lane, int m, int n, const T *A, int a_rs, int a_cs,
                                    typename detail::traits<T>::R *S, int s_inc, T *U, int u_rs,
                                    int u_cs, T *V, int v_rs, int v_cs, int *sweeps = nullptr,
                                    options opt = {}, AfterLoad after_load = {}) {
#if defined(__CUDA_ARCH__)
  const unsigned base = (threadIdx.x & 31u) & ~unsigned(L - 1);
  const unsigned mask = L == 32 ? 0xffffffffu : ((1u << L) - 1u) << base;
  const detail::lanes_ctx<L> ctx{lane, mask};
#else
  (void)lane;
  const detail::lanes_ctx<L> ctx{};
#endif
  return detail::lanes_svd<T, MaxM, MaxN, L>(ctx, m, n, A, a_rs, a_cs, S, s_inc, U, u_rs, u_cs, V,
                                             v_rs, v_cs, sweeps, opt, after_load);
}

// Column-major with leading dimensions.
template <class T, int MaxM, int MaxN, int L>
BSVD_DEVICE_HD int warp_svd(int lane, int m, int n, const T *A, int lda,
                            typename detail::traits<T>::R *S, T *U, int ldu, T *V, int ldv,
                            int *sweeps = nullptr, options opt = {}) {
  return warp_svd_strided<T, MaxM, MaxN, L>(lane, m, n, A, 1, lda, S, 1, U, 1, ldu, V, 1, ldv,
                                            sweeps, opt);
}

} // namespace bsvd::device
