// Householder building blocks shared by every QR factorization (one
// block, TSQR's chunks, the cluster) and by the application of Q: norms
// scaled as the CPU twin's (src/cpu/qr.cpp), block reductions, one
// reflector applied to a column (with xLAQP2's norm downdate when
// pivoting), the pivot choice, and the reflector of a column (LAPACK
// xGEQR2's, householder_step's twin). One definition each, so that the
// kernels built on them give the same bits.
#pragma once

#include "params.cuh"

namespace bsvd::detail::cuda {

// ||x|| of n entries by one warp (every lane gets it), scaled by the largest
// part as the CPU twin's scaled_nrm2.
template <class T> __device__ __forceinline__ dreal_t<T> qr_warp_nrm2(int n, const T *x) {
  using R = dreal_t<T>;
  const int l = threadIdx.x % 32;
  R mx = 0;
  for (int i = l; i < n; i += 32) mx = fmax(mx, amax_part(x[i]));
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) mx = fmax(mx, shfl_xor(mx, o));
  if (mx == R(0)) return R(0);
  R s = 0;
  for (int i = l; i < n; i += 32) s += abs2(ddiv(x[i], mx));
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s += shfl_xor(s, o);
  return mx * sqrt(s);
}

// Block-wide reduction (sum or max) of one value per thread; every thread
// gets the result: a butterfly within each warp, then one over the warps'
// partials (every warp reduces them alike). red: NT / 32 entries of shared
// memory. The values are >= 0 (norms' parts), so 0 is neutral for both.
template <int NT, bool MAX, class V> __device__ __forceinline__ V qr_block_reduce(V v, V *red) {
  static_assert(NT / 32 <= 32, "one lane per warp's partial");
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const V w = shfl_xor(v, o);
    v = MAX ? fmax(v, w) : v + w;
  }
  const int w = threadIdx.x / 32, l = threadIdx.x % 32;
  __syncthreads(); // red is reused by consecutive reductions
  if (l == 0) red[w] = v;
  __syncthreads();
  v = l < NT / 32 ? red[l] : V(0);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const V u = shfl_xor(v, o);
    v = MAX ? fmax(v, u) : v + u;
  }
  return v;
}

// ||x||, x = y[i0 .. mw-1], by the whole block (every thread gets it),
// scaled by its largest part as the CPU twin's scaled_nrm2.
template <int NT, class T, class R>
__device__ __forceinline__ R qr_block_nrm2(int i0, int mw, const T *y, R *redr) {
  const int t = threadIdx.x;
  R mx = 0;
  for (int i = i0 + t; i < mw; i += NT) mx = fmax(mx, amax_part(y[i]));
  mx = qr_block_reduce<NT, true>(mx, redr);
  R s = 0;
  if (mx > R(0))
    for (int i = i0 + t; i < mw; i += NT) s += abs2(ddiv(y[i], mx));
  s = qr_block_reduce<NT, false>(s, redr);
  return mx * sqrt(s);
}

// H_j^H (or H_j) applied to one column xc of X (rows j..mw-1) by one warp:
// w = f (x_j + sum_{i>j} conj(v_i) x_i), then x_i -= v_i w (v_j = 1), with
// f = conj(tau) (left, H^H) or tau (H). v_i = y[i] vs (SCALED; the same
// product the factorization stores, so the same bits) or y[i]. The sum
// runs in two interleaved partial sums per lane (a shorter dependent
// chain), then over the lanes. With PIV, the column's partial norms *n1,
// *n2 are downdated by its new row j (xLAQP2's rule, as
// householder_qr_pivoted in src/cpu/qr.cpp, recomputing the norm when the
// downdate cancels). Returns the new partial norm (PIV; every lane). The
// caller orders the lanes' writes before the column's next reader
// (__syncwarp or a barrier).
template <bool PIV, bool SCALED = false, class T>
__device__ __forceinline__ dreal_t<T> qr_reflect_column(int j, int mw, const T *y, T f, bool apply,
                                                        T *xc, dreal_t<T> *n1, dreal_t<T> *n2,
                                                        T vs = T()) {
  using R = dreal_t<T>;
  const int l = threadIdx.x % 32;
  const auto v = [&](int i) {
    if constexpr (SCALED)
      return y[i] * vs;
    else
      return y[i];
  };
  T xj = xc[j];
  // this column's partial norms, read before any lane writes them
  const R nv0 = PIV ? *n1 : R(0), nv2 = PIV ? *n2 : R(0);
  if (apply) {
    T a0 = dzero<T>(), a1 = dzero<T>();
    int i = j + 1 + l;
    for (; i + 32 < mw; i += 64) {
      dot_acc(a0, v(i), xc[i]);
      dot_acc(a1, v(i + 32), xc[i + 32]);
    }
    if (i < mw) dot_acc(a0, v(i), xc[i]);
    T acc = a0 + a1;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc = acc + shfl_xor(acc, o);
    const T wc = f * (acc + xj);
    for (int i2 = j + 1 + l; i2 < mw; i2 += 32) xc[i2] = xc[i2] - v(i2) * wc;
    xj = xj - wc;
    __syncwarp(); // every lane has read x_j (racecheck: X may be in shared memory)
    if (l == 0) xc[j] = xj;
  }
  R nv = nv0; // the same value in every lane
  if constexpr (PIV) {
    if (nv != R(0)) {
      R tt = dabs(xj) / nv;
      tt = fmax(R(0), (R(1) + tt) * (R(1) - tt));
      const R r = nv / nv2;
      __syncwarp(); // the column's new entries and norms: every lane has read
      if (tt * r * r <= sqrt(kEpsOf<R>)) {
        nv = qr_warp_nrm2(mw - j - 1, xc + j + 1);
        if (l == 0) *n2 = nv;
      } else {
        nv = nv * sqrt(tt);
      }
      if (l == 0) *n1 = nv;
    }
  }
  return nv;
}

// H_j^H (or H_j) applied to the columns c0..nc-1 of X (ld ldx), one warp
// per column (qr_reflect_column). Each column is finished by its warp
// alone (no barrier inside); the caller synchronizes before the columns
// are read by others. With PIV, each warp also offers its first column of
// largest partial norm in cand_v / cand_i[warp].
template <int NT, bool PIV, class T> __device__ __forceinline__ void
qr_apply_reflector(int j, int mw, const T *v, T f, bool apply, T *X, int ldx, int c0, int nc,
                   dreal_t<T> *vn1, dreal_t<T> *vn2, dreal_t<T> *cand_v, int *cand_i) {
  using R = dreal_t<T>;
  const int t = threadIdx.x, w = t / 32, l = t % 32;
  R best_v = R(-1);
  int best_i = nc;
  for (int c = c0 + w; c < nc; c += NT / 32) {
    const R nv = qr_reflect_column<PIV>(j, mw, v, f, apply, X + size_t(c) * ldx,
                                        PIV ? vn1 + c : nullptr, PIV ? vn2 + c : nullptr);
    if (PIV && nv > best_v) {
      best_v = nv;
      best_i = c;
    }
  }
  if constexpr (PIV) {
    if (l == 0) {
      cand_v[w] = best_v;
      cand_i[w] = best_i;
    }
  }
}

// The pivot: the first column of largest partial norm among the warps'
// candidates (every thread computes the same; after a barrier).
template <int NT, class R>
__device__ __forceinline__ int qr_pick_pivot(const R *cand_v, const int *cand_i) {
  R bv = cand_v[0];
  int bi = cand_i[0];
  for (int w = 1; w < NT / 32; ++w)
    if (cand_v[w] > bv || (cand_v[w] == bv && cand_i[w] < bi)) {
      bv = cand_v[w];
      bi = cand_i[w];
    }
  return bi;
}

// ||y[i0 .. mw-1]|| for the TSQR factorization: the plain sum of squares in
// one block reduction (two barriers; the max-then-scaled-sum of
// qr_block_nrm2 takes four). The load's prescaling (max |a_ij| at most
// sqrt(max_finite / (8 mw nw))) keeps it from overflowing; where it could
// have lost entries to underflow (a norm below sqrt(min_normal) / eps, the
// tiny columns of householder_step) the scaled two-pass norm is taken
// instead. The same norm to rounding, in another order.
template <int NT, class T, class R>
__device__ __forceinline__ R qr_block_nrm2_fast(int i0, int mw, const T *y, R *red) {
  R s = 0;
  for (int i = i0 + int(threadIdx.x); i < mw; i += NT) s += abs2(y[i]);
  s = qr_block_reduce<NT, false>(s, red);
  const R xn = sqrt(s);
  return xn >= sqrt(min_normal<R>()) / kEpsOf<R> ? xn : qr_block_nrm2<NT>(i0, mw, y, red);
}

// Step j's column y (rows j.., by the whole block): alpha = y_j, xnorm =
// ||y_{j+1..}||, identity (H_j = I), and the exponent e of the tiny-column
// scaling: a column whose entries are all below sqrt(min_normal) / eps (the
// rounding residue of a rank-deficient matrix can reach the subnormals) is
// scaled by 2^e in place and its norm taken again (householder_step,
// src/cpu/qr.cpp). Uniform over the block. FAST: the norms by
// qr_block_nrm2_fast (TSQR), else qr_block_nrm2 (the other kernels' bits).
template <int NT, bool FAST = false, class T>
__device__ __forceinline__ int qr_column_prepare(int j, int mw, T *y, dreal_t<T> *redr, T &alpha,
                                                 dreal_t<T> &xnorm, bool &identity) {
  using R = dreal_t<T>;
  const int t = threadIdx.x;
  const auto norm = [&] {
    if constexpr (FAST)
      return qr_block_nrm2_fast<NT>(j + 1, mw, y, redr);
    else
      return qr_block_nrm2<NT>(j + 1, mw, y, redr);
  };
  alpha = y[j];
  xnorm = norm();
  identity = xnorm == R(0) && qim(alpha) == R(0);
  const R big = fmax(fmax(fabs(qre(alpha)), fabs(qim(alpha))), xnorm);
  const int e = !identity && big < sqrt(min_normal<R>()) / kEpsOf<R> ? -dilogb(big) : 0;
  if (e != 0) { // the norm's reductions ordered every read of y before this
    for (int i = j + 1 + t; i < mw; i += NT) y[i] = dldexp(y[i], e);
    __syncthreads();
    xnorm = norm();
  }
  return e;
}

// The Householder reflector of a column with x_j = alpha whose rows below
// j have the norm xnorm after scaling by 2^e (householder_step,
// src/cpu/qr.cpp): tau, scal = 1 / (alpha' - beta) that scales v, and
// beta = R_jj scaled back. One definition for the one-block and the
// cluster factorization, whose equal bits rest on it.
template <class T> struct QrReflector {
  T tau, scal;
  dreal_t<T> beta;
};
template <class T>
__device__ __forceinline__ QrReflector<T> qr_reflector(T alpha, dreal_t<T> xnorm, int e) {
  using R = dreal_t<T>;
  const T as = dldexp(alpha, e);
  const R xs = xnorm; // of the scaled column
  const R ar = fabs(qre(as)), ai = fabs(qim(as));
  const R sc = fmax(fmax(ar, ai), xs);
  const R a1 = qre(as) / sc, a2 = qim(as) / sc, a3 = xs / sc;
  const R nrm = sc * sqrt(a1 * a1 + a2 * a2 + a3 * a3);
  const R beta = qre(as) >= R(0) ? -nrm : nrm;
  const T tj = qdiv(dfrom_real<T>(beta) - as, dfrom_real<T>(beta));
  return {tj, qdiv(done<T>(), as - dfrom_real<T>(beta)), dldexp(beta, -e)};
}

// Thread 0 of the one-block factorizations (qr_factor_kernel, TSQR's
// qr_tsqr_factor_kernel) after qr_column_prepare: tau_j into *tau (0 for
// the identity) and, otherwise, coef = (tau, scal) and beta for the block.
template <class T>
__device__ __forceinline__ void qr_store_reflector(bool identity, T alpha, dreal_t<T> xnorm, int e,
                                                   T *tau, T *coef, dreal_t<T> &beta) {
  if (identity) {
    *tau = dzero<T>();
  } else {
    const QrReflector<T> h = qr_reflector(alpha, xnorm, e);
    *tau = h.tau;
    coef[0] = h.tau;
    coef[1] = h.scal;
    beta = h.beta;
  }
}

} // namespace bsvd::detail::cuda
