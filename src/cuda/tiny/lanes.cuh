// The register tier's lanes variant (tiny.hpp, docs/design/tiny.md): L lanes
// per matrix, lane j holding column j of the working matrix and of V
// (bsvd::device::warp_svd_strided), kLanesThreads / L matrices per block.
// Staged as the one-thread kernel (kernel.cuh): the block copies its
// matrices into shared memory with coalesced loads (matrix t of the block at
// [t RS, t RS + m n), RS odd against bank conflicts), the lanes read their
// columns there, write U, V, S into the same region after a barrier and the
// block stores them with coalesced writes. Unstaged: each group reads and
// writes its matrix where it lies.
#pragma once

#include "kernel.cuh"

#include <bsvd/device/warp_svd.cuh>

namespace bsvd::detail::cuda {

// Lanes per matrix of the instance for max(m, n) <= N.
template <int N> constexpr int lanes_of() {
  return N <= 2 ? 2 : N <= 4 ? 4 : N <= 8 ? 8 : N <= 16 ? 16 : 32;
}

// Shared-memory slots (elements) per matrix of a staged lanes launch.
__host__ __device__ inline int lanes_region(int m, int n, bool vectors) {
  const int k = m < n ? m : n, out = vectors ? (m + n + 1) * k : k;
  return (m * n > out ? m * n : out) | 1;
}

// Blocks per SM the compiler must fit (registers per thread <= 65536 /
// (128 B)): the wide instances are latency-bound, so resident warps pay
// more than the spills the bound costs (H100, 10^4 x 16^2 d: 190
// registers, 8 warps per SM, 0.70 ms; bound to 168, 0.62; to 128, 0.58
// with ~450 bytes of spills, which stay outside the sweep loop; to 96,
// 0.71; s 32^2 from 188 to 168 registers: 2.02 -> 1.62 ms;
// docs/perf/tiny-wide.md).
template <class T, int N> constexpr int lanes_min_blocks() {
  return N > 8 && N <= 16 && sizeof(T) <= 8 ? 4 : N > 16 && sizeof(T) == 4 ? 3 : 1;
}
// Beyond 8 only s, d and c have instances (plan::kTinyInstanceMax).
template <class T> constexpr bool has_wide = sizeof(T) <= 8;

template <class T, int N, bool kStaged>
__global__ void __launch_bounds__(kLanesThreads, (lanes_min_blocks<T, N>()))
    lanes_kernel(TinyParams<T> P) {
  using W = typename api_type<T>::type;
  using R = real_of_t<T>;
  constexpr int L = lanes_of<N>(), MB = kLanesThreads / L;
  const int t = threadIdx.x, lane = t % L, tt = t / L;
  const int g = blockIdx.x * MB + tt;
  bsvd::device::options opt;
  opt.tol = P.tol;
  opt.max_sweeps = P.max_sweeps;
  const Batch<T> &B = P.batch;
  if (!kStaged) {
    if (g >= P.count) return; // the whole group leaves together
    const int b = P.map ? P.map[g] : g;
    const int m = B.dims.rows(b), n = B.dims.cols(b);
    const W *A = reinterpret_cast<const W *>(B.A.ptr(b));
    W *U = B.vectors ? reinterpret_cast<W *>(B.U.ptr(b)) : nullptr;
    W *V = B.vectors ? reinterpret_cast<W *>(B.V.ptr(b)) : nullptr;
    int sw = 0;
    const int info = bsvd::device::warp_svd_strided<W, N, N, L>(
        lane, m, n, A, 1, B.A.ldm(b), B.S.ptr(b), 1, U, 1, U ? B.U.ldm(b) : 0, V, 1,
        V ? B.V.ldm(b) : 0, &sw, opt);
    if (lane == 0) {
      B.info[b] = info;
      if (B.sweeps) B.sweeps[b] = sw;
    }
    return;
  }
  extern __shared__ __align__(16) unsigned char lanes_smem[];
  W *sm = reinterpret_cast<W *>(lanes_smem);
  const int m = B.dims.m, n = B.dims.n, k = m < n ? m : n, mn = m * n;
  const int RS = lanes_region(m, n, B.vectors);
  const int b0 = blockIdx.x * MB;
  const int nb = P.count - b0 < MB ? P.count - b0 : MB;
  const W *Ag = reinterpret_cast<const W *>(B.A.base) + size_t(b0) * mn;
  // Matrices past the batch's end are zero (their lanes must reach the
  // barrier inside the solver) and store nothing.
  for (int idx = t; idx < MB * mn; idx += kLanesThreads) {
    const int q = idx / mn, kk = idx - q * mn;
    sm[q * RS + kk] = q < nb ? Ag[idx] : W{};
  }
  __syncthreads();
  W *base = sm + tt * RS;
  // Outputs after the barrier: U (m k), V (n k), then S (k reals). The
  // padding matrices ask for S only: a zero matrix's U is completed by
  // Gram-Schmidt, O(n^4) shuffles (13 ms for one block at 32 x 32 d).
  R *ss = reinterpret_cast<R *>(B.vectors ? base + (m + n) * k : base);
  const bool vec = B.vectors && tt < nb;
  int sw = 0;
  const int info = bsvd::device::warp_svd_strided<W, N, N, L>(
      lane, m, n, base, 1, m, ss, 1, vec ? base : nullptr, 1, m, vec ? base + m * k : nullptr, 1, n,
      &sw, opt, BlockBarrier{});
  __syncthreads();
  if (lane == 0 && tt < nb) {
    B.info[b0 + tt] = info;
    if (B.sweeps) B.sweeps[b0 + tt] = sw;
  }
  R *Sg = B.S.base + size_t(b0) * k;
  const int soff = B.vectors ? (m + n) * k : 0;
  for (int idx = t; idx < nb * k; idx += kLanesThreads) {
    const int q = idx / k, kk = idx - q * k;
    Sg[idx] = reinterpret_cast<const R *>(sm + q * RS + soff)[kk];
  }
  if (!B.vectors) return;
  W *Ug = reinterpret_cast<W *>(B.U.base) + size_t(b0) * m * k;
  W *Vg = reinterpret_cast<W *>(B.V.base) + size_t(b0) * n * k;
  for (int idx = t; idx < nb * m * k; idx += kLanesThreads) {
    const int q = idx / (m * k), kk = idx - q * (m * k);
    Ug[idx] = sm[q * RS + kk];
  }
  for (int idx = t; idx < nb * n * k; idx += kLanesThreads) {
    const int q = idx / (n * k), kk = idx - q * (n * k);
    Vg[idx] = sm[q * RS + m * k + kk];
  }
}

template <class T, int N> cudaError_t launch_lanes_n(const TinyParams<T> &P, cudaStream_t s) {
  constexpr int MB = kLanesThreads / lanes_of<N>();
  const int blocks = (P.count + MB - 1) / MB;
  const Dims &d = P.batch.dims;
  const size_t smem = size_t(MB) * lanes_region(d.m, d.n, P.batch.vectors) * sizeof(T);
  return launch_staged_or_direct<T>(lanes_kernel<T, N, true>, lanes_kernel<T, N, false>, P, blocks,
                                    kLanesThreads, smem, s);
}

template <class T> cudaError_t launch_lanes_impl(const TinyParams<T> &P, cudaStream_t s) {
  switch (P.dim) {
  case 1:
  case 2: return launch_lanes_n<T, 2>(P, s);
  case 3:
  case 4: return launch_lanes_n<T, 4>(P, s);
  case 5: return launch_lanes_n<T, 5>(P, s);
  case 6: return launch_lanes_n<T, 6>(P, s);
  case 7: return launch_lanes_n<T, 7>(P, s);
  case 8: return launch_lanes_n<T, 8>(P, s);
  // Beyond 8 two instances per lane count (L = 16: 12 and 16 rows; L = 32:
  // 24 and 32): a smaller matrix carries zero rows, and its lanes past n
  // idle through the instance's L - 1 rounds.
  default:
    if constexpr (has_wide<T>) {
      switch (P.dim <= 32 ? wide_instance(P.dim) : 0) {
      case 12: return launch_lanes_n<T, 12>(P, s);
      case 16: return launch_lanes_n<T, 16>(P, s);
      case 24: return launch_lanes_n<T, 24>(P, s);
      case 32: return launch_lanes_n<T, 32>(P, s);
      }
    }
    return cudaErrorInvalidValue; // beyond plan::kTinyInstanceMax
  }
}

} // namespace bsvd::detail::cuda
