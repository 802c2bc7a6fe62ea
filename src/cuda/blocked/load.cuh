// The blocked path's load step, one thread block per matrix: W = A (A^H
// when m < n) with the fused kernel's checks and power-of-two prescaling
// (load_scaled, matrix_io.cuh), V = I, the matrix's state words and its
// null floor (the CPU twin's scale).
#pragma once

#include "../common/matrix_io.cuh"
#include "params.cuh"

namespace bsvd::detail::cuda {

template <class Tstd> __global__ void __launch_bounds__(256)
    blk_load_kernel(const __grid_constant__ BlkParams<Tstd> P) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  __shared__ int st[kStInts];
  __shared__ unsigned long long amax_word;
  const BlkMat M = P.mats[blockIdx.x];
  const Team team{2, 0, int(blockDim.x)};
  T *W = P.W + M.woff;
  T *Vw = P.vectors ? P.V + M.voff : nullptr;
  R amax;
  bool nonfinite;
  const int escale = load_scaled(P, team, int(threadIdx.x), true, M.b, M.m, M.n, P.vectors, W, M.mw,
                                 Vw, M.nw, st, &amax_word, amax, nonfinite);
  if (threadIdx.x == 0) {
    int *s = P.state + size_t(blockIdx.x) * kBsWords;
    s[kBsStart] = !nonfinite && amax > R(0);
    s[kBsNonfinite] = nonfinite;
    s[kBsEscale] = escale;
    // amax of the prescaled W: the CPU twin's scale (power-of-two scaling is exact)
    P.nullf[blockIdx.x] = blocked_null_floor(nonfinite ? R(0) : dldexp(amax, escale));
  }
}

} // namespace bsvd::detail::cuda
