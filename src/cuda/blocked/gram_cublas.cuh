// The Gram stage by cuBLAS (plan::gram_cublas): the kernels
// around the batched GEMM (gram_gemm_batched, host.cu) -- the step's
// pointer triples before it, the lower triangle after it.
#pragma once

#include "params.cuh"

namespace bsvd::detail::cuda {

// The ordering step of MAGMA-SVD Sec. 5.1 for the vendor's batched GEMM: one
// thread per (cuBLAS matrix j, slot x); its pair's three products
// W_i^H W_i, W_i^H W_j, W_j^H W_j (nb x nb each) go to G's blocks (0, 0),
// (0, 1), (1, 1) at positions gbase[j] + 3 x .. + 2.
template <class Tstd, int K> __global__ void __launch_bounds__(128)
    blk_gram_ptr_kernel(const __grid_constant__ BlkParams<Tstd> P) {
  using T = dev_t<Tstd>;
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= (long long)P.ncub * P.half) return;
  const int j = int(e / P.half), x = int(e - (long long)j * P.half), y = P.nown + j;
  const BlkMat M = P.mats[P.act[y]];
  int bi, wi, bj, wj;
  if (!block_pair(M.nw, P.nb, P.wr, P.we, P.step, x, bi, wi, bj, wj)) return;
  T *Wi = P.W + M.woff + size_t(bi) * P.nb * M.mw, *Wj = P.W + M.woff + size_t(bj) * P.nb * M.mw;
  T *G = P.G + (size_t(y) * P.half + x) * K * K;
  const long long at = P.gbase[j] + 3LL * x;
  void **A = P.gptr, **B = P.gptr + P.gcap, **C = P.gptr + 2 * P.gcap;
  A[at] = Wi, B[at] = Wi, C[at] = G;
  A[at + 1] = Wi, B[at + 1] = Wj, C[at + 1] = G + P.nb * K;
  A[at + 2] = Wj, B[at + 2] = Wj, C[at + 2] = G + P.nb + P.nb * K;
}
// After the GEMMs: the lower triangle from the upper (conjugated), the
// diagonal real, as the own Gram kernels store G (the eigensolvers read both
// triangles). One block per cuBLAS slot.
template <class Tstd, int K> __global__ void __launch_bounds__(256)
    blk_gram_mirror_kernel(const __grid_constant__ BlkParams<Tstd> P) {
  using T = dev_t<Tstd>;
  const long long slot = (long long)P.nown * P.half + blockIdx.x;
  int mi, bi, wi, bj, wj;
  BlkMat M;
  if (!slot_block_pair(P, slot, mi, M, bi, wi, bj, wj)) return;
  const int k = wi + wj;
  T *G = P.G + size_t(slot) * K * K;
  for (int e = threadIdx.x; e < k * k; e += 256) {
    const int c = e / k, r = e - c * k;
    if (r > c)
      G[r + c * K] = dconj(G[c + r * K]); // reads the upper triangle only
    else if (r == c)
      G[r + r * K] = real_only(G[r + r * K]);
  }
}

} // namespace bsvd::detail::cuda
