// X = Q [Z; 0] in compact WY form, Q = I - V T V^H (LAPACK xLARFT): the
// unpivoted QR path's application of Q, and TSQR's per level (tsqr.cuh).
// The CPU twin is apply_householder_q_wy (src/cpu/qr.cpp).
#pragma once

#include "params.cuh"

namespace bsvd::detail::cuda {

// ---- finish, the Q side in compact WY form (the tall / wide QR path) --------
// Q = H_0 ... H_{nw-1} = I - V T V^H (LAPACK xLARFT, forward, columnwise:
// T_jj = tau_j, T(0:j, j) = -tau_j T(0:j, 0:j) G(0:j, j), G = V^H V), so
// X = Q [Z; 0] = [Z; 0] - V M with M = T (V_top^H Z), V_top V's first nw
// rows (unit lower triangular). qr_wy_m_kernel forms M (nw x nw, one block
// per matrix; stored over B, which the fused solve has consumed);
// qr_wy_apply_kernel forms X kWyRows rows per block, every row by one
// thread: X crosses DRAM once and Y is read once, with no dependent chain
// along the rows (qr_apply_q_kernel walks 2 nw column passes per
// reflector). The CPU twin is apply_householder_q_wy (src/cpu/qr.cpp),
// with every sum in the same order. Not for the pivoted path (its X = Q Z
// has no zero rows; qr_apply_q_kernel keeps it).
constexpr int kWyThreads = 256; // qr_wy_m_kernel
constexpr int kWyTile = 64; // rows of Y staged at a time for G
constexpr int kWyLd = kWyTile + 1; // the tile's leading dimension: a warp's pairs read
    // columns kWyLd apart, in different banks (64 apart
    // they would all read one bank)
constexpr int kWyRows = 128; // qr_wy_apply_kernel: rows (= threads) per block
template <class T> constexpr size_t qr_wy_m_smem(int nw) {
  return (2 * size_t(nw) * nw + size_t(kWyLd) * nw) * sizeof(T);
}
template <class T> constexpr size_t qr_wy_apply_smem(int nw) {
  return (size_t(nw) * nw + size_t(kWyRows) * nw) * sizeof(T);
}

// M = T (V_top^H Z) (nw x nw, into Mo) for the reflectors of Y (mw x nw,
// leading dimension ldy), tau, and Z (nw x nw, leading dimension ldz); one
// block of kWyThreads, shared memory qr_wy_m_smem(nw).
template <class T> __device__ void qr_wy_m_block(const T *Y, int ldy, int mw, int nw, const T *tau,
                                                 const T *Z, int ldz, T *Mo, unsigned char *wsm) {
  constexpr int NT = kWyThreads;
  const int t = threadIdx.x;
  T *G = reinterpret_cast<T *>(wsm); // G(i, j) at i + j nw (i < j); later W
  T *Tm = G + size_t(nw) * nw; // T(i, j) at i + j nw (i <= j)
  T *tile = Tm + size_t(nw) * nw; // kWyTile rows x nw, leading dimension kWyLd
  // v_k[r]: 0 above row k, 1 at row k, Y below
  const auto v = [&](int r, int k) {
    return r < k ? dzero<T>() : r == k ? done<T>() : Y[r + size_t(k) * ldy];
  };
  const int np = nw * (nw - 1) / 2; // pairs i < j, column by column
  for (int p = t; p < np; p += NT) G[p] = dzero<T>();
  for (int r0 = 0; r0 < mw; r0 += kWyTile) {
    const int nr = min(kWyTile, mw - r0);
    __syncthreads(); // the previous tile is no longer read
    for (int e = t; e < nr * nw; e += NT) {
      const int k = e / nr, r = e - k * nr;
      tile[r + k * kWyLd] = v(r0 + r, k);
    }
    __syncthreads();
    for (int p = t; p < np; p += NT) {
      int j = 1, q = p; // pair p = (i, j): j-th column holds j pairs
      while (q >= j) {
        q -= j;
        ++j;
      }
      const int i = q;
      T acc = G[p];
      for (int r = max(0, j - r0); r < nr; ++r)
        dot_acc(acc, tile[r + i * kWyLd], tile[r + j * kWyLd]);
      G[p] = acc;
    }
  }
  __syncthreads();
  // T, column by column: w = -tau_j G(0:j, j), then T(0:j, j) = T(0:j, 0:j) w
  for (int j = 0; j < nw; ++j) {
    const T tj = tau[j];
    const T *gj = G + size_t(j) * (j - 1) / 2; // G(0:j, j), packed
    for (int i = t; i < j; i += NT) {
      T acc = dzero<T>();
      for (int k = i; k < j; ++k) acc = acc + Tm[i + size_t(k) * nw] * (dzero<T>() - tj * gj[k]);
      Tm[i + size_t(j) * nw] = acc;
    }
    if (t == 0) Tm[j + size_t(j) * nw] = tj;
    __syncthreads();
  }
  // W = V_top^H Z (over G), then M = T W into B
  T *W = G;
  for (int e = t; e < nw * nw; e += NT) {
    const int c = e / nw, k = e - c * nw;
    T acc = dzero<T>();
    for (int r = k; r < nw; ++r) dot_acc(acc, v(r, k), Z[r + size_t(c) * ldz]);
    W[e] = acc;
  }
  __syncthreads();
  for (int e = t; e < nw * nw; e += NT) {
    const int c = e / nw, i = e - c * nw;
    T acc = dzero<T>();
    for (int k = i; k < nw; ++k) acc = acc + Tm[i + size_t(k) * nw] * W[k + size_t(c) * nw];
    Mo[e] = acc;
  }
}

template <class Tstd> __global__ void __launch_bounds__(kWyThreads)
    qr_wy_m_kernel(const __grid_constant__ QrParams<Tstd> P) {
  using T = dev_t<Tstd>;
  extern __shared__ __align__(16) unsigned char wsm[];
  const int mi = int(blockIdx.x);
  const QrMat M = P.mats[mi];
  if (P.info[mi] == BSVD_INFO_NONFINITE) return; // qr_wy_apply_kernel writes NaN
  const bool wide = M.m < M.n;
  const T *Z = (wide ? P.V : P.U) + (wide ? M.V : M.U);
  qr_wy_m_block(P.Y + M.y, M.mw, M.mw, M.nw, P.tau + M.tau, Z, M.nw, P.B + M.B, wsm);
}

// Rows [r0, r0 + kWyRows) of X = [Z; 0] - V M (mw x nw, leading dimension
// ldx; one row per thread), V from Y (leading dimension ldy), M from Mo,
// Z's leading dimension ldz; shared memory qr_wy_apply_smem(nw).
template <class T> __device__ void qr_wy_apply_rows(const T *Mo, const T *Y, int ldy, int mw,
                                                    int nw, const T *Z, int ldz, T *X, int ldx,
                                                    int r0, unsigned char *wsm) {
  const int t = threadIdx.x, r = r0 + t;
  T *Ms = reinterpret_cast<T *>(wsm); // M, nw x nw
  T *Xs = Ms + size_t(nw) * nw; // this thread's row at t + c kWyRows
  for (int e = t; e < nw * nw; e += kWyRows) Ms[e] = Mo[e];
  __syncthreads();
  if (r >= mw) return;
  for (int c = 0; c < nw; ++c) Xs[t + c * kWyRows] = r < nw ? Z[r + size_t(c) * ldz] : dzero<T>();
  const int kmax = min(r, nw - 1);
  for (int k = 0; k <= kmax; ++k) {
    const T vk = r == k ? done<T>() : Y[r + size_t(k) * ldy];
    for (int c = 0; c < nw; ++c)
      Xs[t + c * kWyRows] = Xs[t + c * kWyRows] - vk * Ms[k + size_t(c) * nw];
  }
  for (int c = 0; c < nw; ++c) X[r + size_t(c) * ldx] = Xs[t + c * kWyRows];
}

template <class Tstd> __global__ void __launch_bounds__(kWyRows)
    qr_wy_apply_kernel(const __grid_constant__ QrParams<Tstd> P) {
  using T = dev_t<Tstd>;
  extern __shared__ __align__(16) unsigned char wsm[];
  const int mi = int(blockIdx.x);
  const QrMat M = P.mats[mi];
  const int t = threadIdx.x, mw = M.mw, nw = M.nw, b = M.b;
  const int r0 = int(blockIdx.y) * kWyRows, r = r0 + t;
  if (r0 >= mw) return;
  const bool wide = M.m < M.n;
  T *X = reinterpret_cast<T *>(wide ? P.batch.V.ptr(b) : P.batch.U.ptr(b));
  const int ldx = wide ? P.batch.V.ldm(b) : P.batch.U.ldm(b);
  if (P.info[mi] == BSVD_INFO_NONFINITE) {
    if (r < mw)
      for (int c = 0; c < nw; ++c) X[r + size_t(c) * ldx] = dnan<T>();
    return;
  }
  const T *Z = (wide ? P.V : P.U) + (wide ? M.V : M.U);
  qr_wy_apply_rows(P.B + M.B, P.Y + M.y, mw, mw, nw, Z, nw, X, ldx, r0, wsm);
}

} // namespace bsvd::detail::cuda
