// The QR path's finish: S scaled back, info and sweeps into the caller's
// batch, the side of the vectors without Q copied (row-permuted when
// pivoted), and, unless a grid forms it (apply.cuh, wy.cuh, tsqr.cuh),
// the side that carries Q, X = Q [Z; 0], by one block per matrix.
#pragma once

#include "params.cuh"
#include "reflector.cuh"

namespace bsvd::detail::cuda {

// ---- finish: S scaled back, info, sweeps; U and V ---------------------------
template <class Tstd, int NT> __global__ void __launch_bounds__(NT)
    qr_finish_kernel(const __grid_constant__ QrParams<Tstd> P) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  const QrMat M = P.mats[blockIdx.x];
  const int t = threadIdx.x, mw = M.mw, nw = M.nw, b = M.b;
  const int info = P.info[blockIdx.x], escale = P.escale[blockIdx.x];
  R *S = P.batch.S.ptr(b);
  const R *Sq = P.S + M.S;
  for (int j = t; j < nw; j += NT) S[j] = dldexp(Sq[j], -escale);
  if (t == 0) {
    P.batch.info[b] = info;
    if (P.batch.sweeps) P.batch.sweeps[b] = P.sweeps[blockIdx.x];
  }
  if (!P.batch.vectors) return;
  // B = U_B S V_B^H. Tall: B = R, U = Q [U_B; 0], V = V_B. Wide (W = A^H):
  // B = R^H, U = U_B, V = Q [V_B; 0]. Pivoted (W P = Q R, B = R^H): W's left
  // vectors Q [V_B; 0], its right ones P U_B (row perm[r] of it is row r of
  // U_B), exchanged when wide.
  const bool wide = M.m < M.n, piv = M.piv != 0, flip = wide || piv;
  T *U = reinterpret_cast<T *>(P.batch.U.ptr(b));
  T *V = reinterpret_cast<T *>(P.batch.V.ptr(b));
  const int ldu = P.batch.U.ldm(b), ldv = P.batch.V.ldm(b);
  // Q side X (mw x nw) from Z; the other side O (nw x nw) copied from C.
  T *X = wide ? V : U;
  const int ldx = wide ? ldv : ldu;
  const T *Z = (flip ? P.V : P.U) + (flip ? M.V : M.U);
  T *O = wide ? U : V;
  const int ldo = wide ? ldu : ldv;
  const T *C = (flip ? P.U : P.V) + (flip ? M.U : M.V);
  const int *perm = piv ? P.perm + M.tau : nullptr;
  const bool bad = info == BSVD_INFO_NONFINITE;
  for (int e = t; e < nw * nw; e += NT) {
    const int c = e / nw, r = e - c * nw;
    O[(piv ? perm[r] : r) + size_t(c) * ldo] = bad ? dnan<T>() : C[e];
  }
  if (P.qapply) return; // X: qr_apply_q_kernel
  for (long long e = t; e < (long long)mw * nw; e += NT) {
    const int c = int(e / mw), r = int(e - (long long)c * mw);
    X[r + size_t(c) * ldx] = bad ? dnan<T>() : (r < nw ? Z[r + size_t(c) * nw] : dzero<T>());
  }
  if (bad) return;
  __syncthreads();
  const T *Y = P.Y + M.y, *tau = P.tau + M.tau;
  for (int j = nw - 1; j >= 0; --j) {
    const T tj = tau[j];
    if (qre(tj) == R(0) && qim(tj) == R(0)) continue; // H_j = I (uniform)
    qr_apply_reflector<NT, false>(j, mw, Y + size_t(j) * mw, tj, true, X, ldx, 0, nw, (R *)nullptr,
                                  (R *)nullptr, (R *)nullptr, (int *)nullptr);
    __syncthreads();
  }
}

} // namespace bsvd::detail::cuda
