// The one-block Householder factorization (MAGMA-SVD Sec. 9.2; with
// column pivoting, the preconditioning of HBJ Sec. 2): one thread block
// per matrix loads W = A (A^H when wide) with the checks and prescaling of
// the other paths, factors it in the workspace and writes B = R (tall) or
// R^H (wide or pivoted) for the solver; and its launch at 256, 512 or 1024
// threads per matrix.
#pragma once

#include "params.cuh"
#include "reflector.cuh"

namespace bsvd::detail::cuda {

// ---- factor: W = A (A^H), prescale, Householder QR in the workspace, B -----
// M.piv: with column pivoting (householder_qr_pivoted's twin: the column of
// largest partial norm first, the first one on ties; perm[j] = the column of
// W that became column j), and B = R^H for the blocked path.
// LOAD_ONLY: the load, its checks and the prescaling only (Y, escale, nf;
// a non-finite matrix's B, tau and perm as below); qrcp_cluster_kernel
// factors.
template <class Tstd, int NT, bool LOAD_ONLY = false> __global__ void __launch_bounds__(NT)
    qr_factor_kernel(const __grid_constant__ QrParams<Tstd> P) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  __shared__ int st[kStInts];
  __shared__ unsigned long long amax_word;
  __shared__ R redr[NT / 32];
  __shared__ T coef[2]; // tau, 1 / (alpha - beta) (of the scaled column)
  __shared__ R beta_s;
  __shared__ R cand_v[NT / 32];
  __shared__ int cand_i[NT / 32];
  const int mi = P.sel ? P.sel[blockIdx.x] : int(blockIdx.x);
  const QrMat M = P.mats[mi];
  const int t = threadIdx.x, mw = M.mw, nw = M.nw, w = t / 32, l = t % 32;
  const bool piv = M.piv != 0;
  const Team team{2, 0, NT};
  T *Y = P.Y + M.y, *tau = P.tau + M.tau, *B = P.B + M.B;
  R *vn1 = piv ? P.vn + 2 * M.tau : nullptr, *vn2 = piv ? vn1 + nw : nullptr;
  int *perm = piv ? P.perm + M.tau : nullptr;
  R amax;
  bool nonfinite;
  const int escale = load_scaled(P, team, t, true, M.b, M.m, M.n, false, Y, mw, (T *)nullptr, 0, st,
                                 &amax_word, amax, nonfinite);
  __syncthreads(); // load_scaled's last pass (the prescaling) is per thread
  if (t == 0) {
    P.escale[mi] = nonfinite ? 0 : escale;
    if (P.nf) P.nf[mi] = nonfinite ? 1 : 0;
  }
  if (nonfinite) { // B of NaN: the solver of B reports the matrix
    for (int e = t; e < nw * nw; e += NT) B[e] = dnan<T>();
    for (int j = t; j < nw; j += NT) tau[j] = dzero<T>();
    if (piv)
      for (int j = t; j < nw; j += NT) perm[j] = j;
    return;
  }
  if constexpr (LOAD_ONLY) return;
  int p = 0; // the pivot of the next step
  if (piv) {
    R bv = R(-1);
    int bi = nw;
    for (int c = w; c < nw; c += NT / 32) {
      const R nv = qr_warp_nrm2(mw, Y + size_t(c) * mw);
      if (l == 0) vn1[c] = vn2[c] = nv;
      if (nv > bv) {
        bv = nv;
        bi = c;
      }
    }
    if (l == 0) {
      cand_v[w] = bv;
      cand_i[w] = bi;
    }
    for (int c = t; c < nw; c += NT) perm[c] = c;
    __syncthreads();
    p = qr_pick_pivot<NT>(cand_v, cand_i);
  }
  for (int j = 0; j < nw; ++j) {
    T *yj = Y + size_t(j) * mw;
    if (piv && p != j) {
      T *yp = Y + size_t(p) * mw;
      for (int i = t; i < mw; i += NT) {
        const T a = yj[i];
        yj[i] = yp[i];
        yp[i] = a;
      }
      if (t == 0) {
        const int q = perm[p];
        perm[p] = perm[j];
        perm[j] = q;
        vn1[p] = vn1[j];
        vn2[p] = vn2[j];
      }
      __syncthreads();
    }
    T alpha;
    R xnorm;
    bool identity;
    const int e = qr_column_prepare<NT>(j, mw, yj, redr, alpha, xnorm, identity);
    if (t == 0) qr_store_reflector(identity, alpha, xnorm, e, tau + j, coef, beta_s);
    __syncthreads();
    if (!identity) { // uniform: every thread reduced the same values
      const T scal = coef[1];
      for (int i = j + 1 + t; i < mw; i += NT) yj[i] = yj[i] * scal;
      __syncthreads();
    }
    if (piv)
      qr_apply_reflector<NT, true>(j, mw, yj, dconj(coef[0]), !identity, Y, mw, j + 1, nw, vn1, vn2,
                                   cand_v, cand_i);
    else
      qr_apply_reflector<NT, false>(j, mw, yj, dconj(coef[0]), !identity, Y, mw, j + 1, nw,
                                    (R *)nullptr, (R *)nullptr, (R *)nullptr, (int *)nullptr);
    if (t == 0 && !identity) yj[j] = dfrom_real<T>(beta_s);
    __syncthreads();
    if (piv) p = qr_pick_pivot<NT>(cand_v, cand_i);
  }
  // B = R (tall) or R^H (wide, or pivoted), nw x nw, leading dimension nw;
  // pivoted: R's rows from the first with |R_jj| < u |R_00| dropped
  // (qrcp_rank, rotation.hpp; every thread finds the same kr).
  const bool flip = M.m < M.n || piv;
  const int kr = piv ? qrcp_rank<R>(nw, [&](int j) { return dabs(Y[j + size_t(j) * mw]); }) : nw;
  for (int e = t; e < nw * nw; e += NT) {
    const int c = e / nw, r = e - c * nw;
    T v = dzero<T>();
    if (!flip && r <= c) v = Y[r + size_t(c) * mw];
    if (flip && r >= c && c < kr) v = dconj(Y[c + size_t(r) * mw]);
    B[e] = v;
  }
}

// qr_factor_kernel over count matrices (P.sel's, or all) at nt threads per
// matrix (1024 or 512, else 256).
template <class Tstd>
void qr_factor_block_launch(QrParams<Tstd> P, int count, int nt, cudaStream_t stream) {
  P.tpm = nt == 1024 || nt == 512 ? nt : 256;
  if (P.tpm == 1024)
    qr_factor_kernel<Tstd, 1024><<<count, 1024, 0, stream>>>(P);
  else if (P.tpm == 512)
    qr_factor_kernel<Tstd, 512><<<count, 512, 0, stream>>>(P);
  else
    qr_factor_kernel<Tstd, 256><<<count, 256, 0, stream>>>(P);
}

} // namespace bsvd::detail::cuda
