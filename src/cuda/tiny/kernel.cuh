// The register-tier kernel (tiny.hpp). A block of kTinyThreads threads
// takes as many consecutive matrices. Staged: the block copies its matrices
// into shared memory with coalesced loads (entry k of the block's thread t
// at [k (BT + 1) + t]: the +1 keeps the per-thread reads, stride BT + 1,
// free of bank conflicts), each thread runs bsvd::device::svd_strided on its
// own, writes U, V, S into the same shared memory after a barrier (the
// after_load hook) and the block stores them with coalesced writes.
// Unstaged (pointer arrays, variable sizes, padded leading dimensions):
// each thread reads and writes its matrix in global memory.
#pragma once

#include "../common/device_info.hpp" // max_smem_optin
#include "../common/device_scalar.cuh"
#include "tiny.hpp"

#include <bsvd/device/svd.cuh>

namespace bsvd::detail::cuda {

// The device API's element type of T (layout-compatible).
template <class T> struct api_type { using type = T; };
template <class R> struct api_type<std::complex<R>> { using type = bsvd::device::complex<R>; };

struct BlockBarrier {
  __device__ void operator()() const { __syncthreads(); }
};

inline size_t tiny_region(int m, int n, bool vectors) {
  const int k = m < n ? m : n;
  const int out = vectors ? (m + n + 1) * k : k;
  return size_t(m * n > out ? m * n : out);
}

template <class T, int N, bool kStaged> __global__ void __launch_bounds__(kTinyThreads)
    tiny_kernel(TinyParams<T> P) {
  using W = typename api_type<T>::type;
  using R = real_of_t<T>;
  constexpr int BT = kTinyThreads, LD = BT + 1;
  const int t = threadIdx.x;
  const int g = blockIdx.x * BT + t;
  bsvd::device::options opt;
  opt.tol = P.tol;
  opt.max_sweeps = P.max_sweeps;
  const Batch<T> &B = P.batch;
  if (!kStaged) {
    if (g >= P.count) return;
    const int b = P.map ? P.map[g] : g;
    const int m = B.dims.rows(b), n = B.dims.cols(b);
    const W *A = reinterpret_cast<const W *>(B.A.ptr(b));
    W *U = B.vectors ? reinterpret_cast<W *>(B.U.ptr(b)) : nullptr;
    W *V = B.vectors ? reinterpret_cast<W *>(B.V.ptr(b)) : nullptr;
    int sw = 0;
    const int info =
        bsvd::device::svd_strided<W, N, N>(m, n, A, 1, B.A.ldm(b), B.S.ptr(b), 1, U, 1,
                                           U ? B.U.ldm(b) : 0, V, 1, V ? B.V.ldm(b) : 0, &sw, opt);
    B.info[b] = info;
    if (B.sweeps) B.sweeps[b] = sw;
    return;
  }
  extern __shared__ __align__(16) unsigned char tiny_smem[];
  W *sm = reinterpret_cast<W *>(tiny_smem);
  const int m = B.dims.m, n = B.dims.n, k = m < n ? m : n, mn = m * n;
  const int b0 = blockIdx.x * BT;
  const int nb = P.count - b0 < BT ? P.count - b0 : BT;
  const W *Ag = reinterpret_cast<const W *>(B.A.base) + size_t(b0) * mn;
  for (int idx = t; idx < nb * mn; idx += BT) {
    const int tt = idx / mn, kk = idx - tt * mn;
    sm[kk * LD + tt] = Ag[idx];
  }
  __syncthreads();
  // Threads past the batch's end run a zero matrix (they must reach the
  // barrier inside) and store nothing.
  if (t >= nb)
    for (int kk = 0; kk < mn; ++kk) sm[kk * LD + t] = W{};
  // Outputs after the barrier: U (m k entries), V (n k), S (k reals) per
  // thread, each entry in its own row of LD slots.
  W *su = sm, *sv = sm + size_t(m) * k * LD;
  R *ss = reinterpret_cast<R *>(B.vectors ? sv + size_t(n) * k * LD : sm);
  int sw = 0;
  const int info = bsvd::device::svd_strided<W, N, N>(
      m, n, sm + t, LD, m * LD, ss + t, LD, B.vectors ? su + t : nullptr, LD, m * LD,
      B.vectors ? sv + t : nullptr, LD, n * LD, &sw, opt, BlockBarrier{});
  __syncthreads();
  if (t < nb) {
    B.info[b0 + t] = info;
    if (B.sweeps) B.sweeps[b0 + t] = sw;
  }
  // S holds k reals per matrix at [j LD + t] (of R-sized slots).
  R *Sg = B.S.base + size_t(b0) * k;
  const R *sr = ss;
  for (int idx = t; idx < nb * k; idx += BT) {
    const int tt = idx / k, kk = idx - tt * k;
    Sg[idx] = sr[kk * LD + tt];
  }
  if (!B.vectors) return;
  W *Ug = reinterpret_cast<W *>(B.U.base) + size_t(b0) * m * k;
  W *Vg = reinterpret_cast<W *>(B.V.base) + size_t(b0) * n * k;
  const W *ub = su, *vb = sv;
  for (int idx = t; idx < nb * m * k; idx += BT) {
    const int tt = idx / (m * k), kk = idx - tt * (m * k);
    Ug[idx] = ub[kk * LD + tt];
  }
  for (int idx = t; idx < nb * n * k; idx += BT) {
    const int tt = idx / (n * k), kk = idx - tt * (n * k);
    Vg[idx] = vb[kk * LD + tt];
  }
}

template <class T> bool tiny_staged(const TinyParams<T> &P) {
  const Batch<T> &B = P.batch;
  const Dims &d = B.dims;
  if (P.map || !d.uniform() || B.A.array || B.S.array) return false;
  const int m = d.m, n = d.n, k = m < n ? m : n;
  if (B.A.ld != m || B.A.stride != int64_t(m) * n || B.S.stride != k) return false;
  if (B.vectors && (B.U.array || B.V.array || B.U.ld != m || B.V.ld != n ||
                    B.U.stride != int64_t(m) * k || B.V.stride != int64_t(n) * k))
    return false;
  return true;
}

// Launches `staged` with `smem` bytes of shared memory (raising the
// kernel's limit past 48 KiB when needed) when the batch is staged
// (tiny_staged) and the stage fits a block of this GPU (z 8 x 8 with
// vectors: 141 KB, above 99 KiB GPUs'), else `direct` without; both
// variants of the tier use it.
template <class T> cudaError_t launch_staged_or_direct(void (*staged)(TinyParams<T>),
                                                       void (*direct)(TinyParams<T>),
                                                       const TinyParams<T> &P, int blocks,
                                                       int threads, size_t smem, cudaStream_t s) {
  if (blocks == 0) return cudaSuccess;
  if (tiny_staged(P) && smem <= size_t(max_smem_optin())) {
    if (smem > 48 * 1024) {
      const cudaError_t e =
          cudaFuncSetAttribute(staged, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
      if (e != cudaSuccess) return e;
    }
    staged<<<blocks, threads, smem, s>>>(P);
  } else {
    direct<<<blocks, threads, 0, s>>>(P);
  }
  return cudaGetLastError();
}

template <class T, int N> cudaError_t launch_tiny_n(const TinyParams<T> &P, cudaStream_t s) {
  const int blocks = (P.count + kTinyThreads - 1) / kTinyThreads;
  const size_t smem = tiny_smem_bytes(P.batch.dims.m, P.batch.dims.n, P.batch.vectors, sizeof(T));
  return launch_staged_or_direct<T>(tiny_kernel<T, N, true>, tiny_kernel<T, N, false>, P, blocks,
                                    kTinyThreads, smem, s);
}

template <class T> cudaError_t launch_tiny_impl(const TinyParams<T> &P, cudaStream_t s) {
  switch (P.dim) {
  case 1: return launch_tiny_n<T, 1>(P, s);
  case 2: return launch_tiny_n<T, 2>(P, s);
  case 3: return launch_tiny_n<T, 3>(P, s);
  case 4: return launch_tiny_n<T, 4>(P, s);
  case 5: return launch_tiny_n<T, 5>(P, s);
  case 6: return launch_tiny_n<T, 6>(P, s);
  case 7: return launch_tiny_n<T, 7>(P, s);
  case 8: return launch_tiny_n<T, 8>(P, s);
  default: return cudaErrorInvalidValue;
  }
}

} // namespace bsvd::detail::cuda
