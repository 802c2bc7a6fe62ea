// The factorization on thread-block clusters (compute capability 9.0):
// one matrix held in the shared memory of a cluster of up to 16 blocks,
// with column pivoting (the preconditioning of HBJ Sec. 2, eq. 2.1) or
// without (the tall / wide path, MAGMA-SVD Sec. 9.2); the cluster sizes of
// the latency and throughput plans, the GPU's capacity for them, and the
// launch. Gives the one-block kernel's bits (householder.cuh).
#pragma once

#include "../common/device_info.hpp"
#include "params.cuh"
#include "reflector.cuh"

#include <algorithm>
#include <cooperative_groups.h>
#include <type_traits>

namespace bsvd::detail::cuda {

// ---- the factorization on a cluster of thread blocks -------------------------
// One matrix per thread-block cluster of C blocks (1 ... 16), held in their
// shared memory: block r owns the columns [r cpb, r cpb + cpb) of W.
// Without PIV (the tall / wide QR path) the pivot of step j is column j
// and B = R (tall) or R^H (wide), as qr_factor_kernel's. With PIV: the
// columns stay where they are; at[k] is the column at position k of
// householder_qr_pivoted's swapped order and loc[c] the position of column
// c, so that the pivot is that kernel's (the largest partial norm, the
// first position on ties). Step j:
//  - every block copies the pivot column's rows j.. from its owner's shared
//    memory (DSMEM) into one of two buffers (by step parity) and forms the
//    reflector itself with qr_factor_kernel's operations, so every block
//    and the one-block kernel get the same bits;
//  - it applies the reflector to its own columns (v_i formed on the fly as
//    the product the one-block kernel stores), downdates their norms, and
//    writes its best column into every block's inbox;
//  - one cluster barrier; then every warp reads the pivot of step j + 1
//    from its own inbox.
// The owner writes the reflector into the pivot column at the start of the
// next step, once the barrier has ordered every block's copy before it. At
// the end each block writes its columns to Y in position order, and its
// rows of B = R^H (R's rows from qrcp_rank's kr dropped). Needs the load
// first (qr_factor_kernel<..., LOAD_ONLY>: Y, escale, nf).
template <class T> __host__ __device__ constexpr size_t qrcp_cluster_smem(int cpb, int mw, int nw) {
  using R = dreal_t<T>;
  return (size_t(cpb) * mw + 2 * size_t(mw)) * sizeof(T) + size_t(2 * cpb + nw) * sizeof(R) +
         size_t(2 * nw) * sizeof(int);
}
template <class Tstd, bool PIV, int NT> __global__ void __launch_bounds__(NT)
    qrcp_cluster_kernel(const __grid_constant__ QrParams<Tstd> P, int cpb) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  __trap(); // clusters need compute capability 9.0; qrcp_cluster_launch refuses before
#else
  static_assert(NT % 32 == 0 && NT / 32 <= 32, "warp 0's lanes hold the warps' candidates");
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  namespace cg = cooperative_groups;
  cg::cluster_group cl = cg::this_cluster();
  const int C = int(cl.num_blocks()), rk = int(cl.block_rank());
  const int mi = P.sel[blockIdx.x / C];
  const QrMat M = P.mats[mi];
  if (P.nf[mi]) return; // the whole cluster returns: no barrier is owed
  __shared__ R redr[NT / 32];
  __shared__ T cf[2]; // conj(tau), 1 / (alpha - beta) of this step's reflector
  __shared__ R cb_s; // its beta (R_jj)
  __shared__ R cand_v[NT / 32];
  __shared__ int cand_i[NT / 32];
  __shared__ R in_v[2][16]; // the cluster's blocks' best columns by step parity
  __shared__ int in_i[2][16], in_p[2][16]; // (and their positions), written into
      // every block by each block (DSMEM)
  extern __shared__ __align__(16) unsigned char qsm[];
  const int t = threadIdx.x, w = t / 32, l = t % 32, mw = M.mw, nw = M.nw;
  const int c0 = rk * cpb, nc = max(0, min(cpb, nw - c0));
  T *Xs = reinterpret_cast<T *>(qsm);
  T *vb = Xs + size_t(cpb) * mw; // two copies of the pivot column, by step parity
  R *n1 = reinterpret_cast<R *>(vb + 2 * mw), *n2 = n1 + cpb, *rd = n2 + cpb;
  int *at = reinterpret_cast<int *>(rd + nw), *loc = at + nw;
  T *Y = P.Y + M.y, *tau = P.tau + M.tau, *B = P.B + M.B;
  int *perm = P.perm + M.tau;
  for (long long e = t; e < (long long)nc * mw; e += NT) Xs[e] = Y[size_t(c0) * mw + e];
  for (int k = t; k < nw; k += NT) at[k] = loc[k] = k;
  __syncthreads();
  auto pos = [&](int c) { return c < nw ? loc[c] : nw; };
  // the best of a warp's lanes' (v, i, position): the largest v, the first
  // position on ties (positions are distinct; "none" is (-1, nw, nw));
  // every lane gets it
  auto warp_best = [&](R &v, int &i, int &ps) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const R ov = shfl_xor(v, o);
      const int oi = __shfl_xor_sync(0xffffffffu, i, o), op = __shfl_xor_sync(0xffffffffu, ps, o);
      if (ov > v || (ov == v && op < ps)) {
        v = ov;
        i = oi;
        ps = op;
      }
    }
  };
  // warp 0: the block's best of the warps' candidates (cand_v / cand_i,
  // after a barrier) into slot par of every block's inbox (lane r writes
  // block r's entry rk)
  auto offer = [&](int par) {
    __syncthreads();
    if (w == 0) {
      R v = l < NT / 32 ? cand_v[l] : R(-1); // lanes without a warp: "none"
      int i = l < NT / 32 ? cand_i[l] : nw, ps = pos(i);
      warp_best(v, i, ps);
      if (l < C) {
        cl.map_shared_rank(&in_v[0][0], l)[par * 16 + rk] = v;
        cl.map_shared_rank(&in_i[0][0], l)[par * 16 + rk] = i;
        cl.map_shared_rank(&in_p[0][0], l)[par * 16 + rk] = ps;
      }
    }
  };
  // the pivot, by every warp: the best of the inbox's slot par (after the
  // cluster barrier; no loc lookups, which the next step changes)
  auto pick = [&](int par) {
    R v = R(-1);
    int i = nw, ps = nw;
    if (l < C) {
      v = in_v[par][l];
      i = in_i[par][l];
      ps = in_p[par][l];
    }
    warp_best(v, i, ps);
    return i;
  };
  if constexpr (PIV) {
    R bv = R(-1);
    int bi = nw;
    for (int k = w; k < nc; k += NT / 32) {
      const R nv = qr_warp_nrm2(mw, Xs + size_t(k) * mw);
      if (l == 0) n1[k] = n2[k] = nv;
      if (nv > bv) {
        bv = nv;
        bi = c0 + k;
      }
    }
    if (l == 0) {
      cand_v[w] = bv;
      cand_i[w] = bi;
    }
    cl.sync(); // every block of the cluster runs before any writes another's memory
    offer(0);
  }
  cl.sync();
  int p = PIV ? pick(0) : 0;
  int pend = -1, pj = 0; // my column awaiting step pj's reflector (vb of pj's parity)
  bool pid = false; // ... an identity step (R_jj stays alpha)
  R pbeta = R(0);
  T pscal = dzero<T>();
  // the owner writes step pj's reflector into its pivot column, scaled as
  // the one-block kernel stores it
  auto write_pending = [&]() {
    if (pend < 0) return;
    T *xc = Xs + size_t(pend) * mw;
    const T *vp = vb + size_t(pj & 1) * mw;
    for (int i = pj + 1 + t; i < mw; i += NT) xc[i] = pid ? vp[i] : vp[i] * pscal;
    if (t == 0 && !pid) xc[pj] = dfrom_real<T>(pbeta);
  };
  for (int j = 0; j < nw; ++j) {
    T *vc = vb + size_t(j & 1) * mw; // this step's copy of the pivot column
    write_pending();
    if (t == 0) { // p moves to position j, the column there to p's
      const int q = loc[p], cj = at[j];
      at[q] = cj;
      loc[cj] = q;
      at[j] = p;
      loc[p] = j;
    }
    {
      const int ow = p / cpb;
      const T *src = cl.map_shared_rank(Xs, ow) + size_t(p - ow * cpb) * mw;
      for (int i = j + t; i < mw; i += NT) vc[i] = src[i];
    }
    __syncthreads();
    // the reflector: qr_factor_kernel's operations on the copy
    T alpha;
    R xnorm;
    bool identity;
    const int e = qr_column_prepare<NT>(j, mw, vc, redr, alpha, xnorm, identity);
    if (t == 0) { // the coefficients: one thread, then the block reads them
      if (identity) {
        if (rk == 0) tau[j] = dzero<T>();
        rd[j] = dabs(alpha);
        cf[0] = cf[1] = dzero<T>();
        cb_s = R(0);
      } else {
        const QrReflector<T> h = qr_reflector(alpha, xnorm, e);
        if (rk == 0) tau[j] = h.tau;
        cf[0] = dconj(h.tau);
        cf[1] = h.scal;
        cb_s = h.beta;
        rd[j] = fabs(cb_s);
      }
    }
    __syncthreads();
    const T f = cf[0], scal = cf[1];
    const R beta_s = cb_s;
    // my columns at positions after j
    R bv = R(-1);
    int bi = nw, bp = nw;
    for (int k = w; k < nc; k += NT / 32) {
      const int c = c0 + k;
      if (loc[c] <= j) continue;
      const R nv =
          qr_reflect_column<PIV, true>(j, mw, vc, f, !identity, Xs + size_t(k) * mw,
                                       PIV ? n1 + k : nullptr, PIV ? n2 + k : nullptr, scal);
      if (nv > bv || (nv == bv && loc[c] < bp)) {
        bv = nv;
        bi = c;
        bp = loc[c];
      }
    }
    if (l == 0) {
      cand_v[w] = bv;
      cand_i[w] = bi;
    }
    const int par = (j + 1) & 1;
    if constexpr (PIV) offer(par);
    pend = p >= c0 && p < c0 + nc ? p - c0 : -1;
    pj = j;
    pid = identity;
    pbeta = beta_s;
    pscal = scal;
    cl.sync(); // every copy of this step's pivot column and every offer done
    if (j + 1 < nw) p = PIV ? pick(par) : j + 1;
  }
  write_pending();
  __syncthreads();
  const int kr = PIV ? qrcp_rank<R>(nw, [&](int k) { return rd[k]; }) : nw;
  for (long long e = t; e < (long long)nc * mw; e += NT) {
    const int k = int(e / mw), r = int(e - (long long)k * mw);
    Y[r + size_t(loc[c0 + k]) * mw] = Xs[e];
  }
  if (PIV && rk == 0)
    for (int k = t; k < nw; k += NT) perm[k] = at[k];
  const bool flip = PIV || M.m < M.n;
  for (long long e = t; e < (long long)nc * nw; e += NT) {
    const int k = int(e / nw), cq = int(e - (long long)k * nw), r = loc[c0 + k];
    const T x = Xs[size_t(k) * mw + cq]; // R[cq, r]: column c at position r holds R's column r
    if (flip) // B = R^H: B's row r (B[r, cq] = conj(R[cq, r]))
      B[r + size_t(cq) * nw] = cq <= r && cq < kr ? dconj(x) : dzero<T>();
    else // B = R: B's column r
      B[cq + size_t(r) * nw] = cq <= r ? x : dzero<T>();
  }
  cl.sync(); // no block leaves while another may still read its shared memory
#endif
}

// Blocks per cluster for the factorization of an mw x nw matrix, by plan
// (plan::qrcp_throughput). Latency plan (kQrcpThreads per block): the
// fewest (1, 2, 4, 8, 16) that leave each block at most 32 columns (one per
// warp) within smem_max bytes, else 16 if that fits. Throughput plan
// (kQrcpThroughputThreads per block): the fewest that fit smem_max, however
// many columns each block then holds. 0: none fits (the one-block kernel
// factors it from global memory).
constexpr size_t kQrcpStaticSmem = 2048; // qrcp_cluster_kernel's static shared memory, at most
template <class T> int qrcp_cluster_size(int mw, int nw, size_t smem_max, bool throughput = false) {
  smem_max -= std::min<size_t>(smem_max, kQrcpStaticSmem);
  for (int c = 1; c <= 16; c *= 2) {
    const int cpb = (nw + c - 1) / c;
    if ((throughput || cpb <= 32) && qrcp_cluster_smem<T>(cpb, mw, nw) <= smem_max) return c;
  }
  return qrcp_cluster_smem<T>((nw + 15) / 16, mw, nw) <= smem_max ? 16 : 0;
}

// qr.hpp's qrcp_cluster_fit (instantiated by the qr_<p>.cu files).
template <class T> int qrcp_cluster_fit(int mw, int nw, size_t smem, int cc_major) {
  if (cc_major < 9) return 0; // no thread-block clusters before compute capability 9.0
  return qrcp_cluster_size<dev_t<T>>(mw, nw, smem, true);
}

template <class Tstd, bool PIV, int NT> cudaLaunchConfig_t
qrcp_cluster_config(int count, int c, size_t smem, cudaStream_t stream, cudaLaunchAttribute *at) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(unsigned(count) * unsigned(c));
  cfg.blockDim = dim3(NT);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  at[0].id = cudaLaunchAttributeClusterDimension;
  at[0].val.clusterDim.x = unsigned(c);
  at[0].val.clusterDim.y = 1;
  at[0].val.clusterDim.z = 1;
  cfg.attrs = at;
  cfg.numAttrs = 1;
  return cfg;
}

// Clusters of c blocks of NT threads with smem bytes each that the GPU runs
// at once (0: none fits, or the attributes were refused: no clusters before
// compute capability 9.0, no 16-block clusters, not this much shared
// memory).
template <class Tstd, bool PIV, int NT> int qrcp_active_clusters(int c, size_t smem) {
  auto kern = qrcp_cluster_kernel<Tstd, PIV, NT>;
  if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)) !=
          cudaSuccess ||
      (c > 8 && cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) !=
                    cudaSuccess)) {
    (void)cudaGetLastError();
    return 0;
  }
  cudaLaunchAttribute at[1];
  const cudaLaunchConfig_t cfg = qrcp_cluster_config<Tstd, PIV, NT>(c, c, smem, nullptr, at);
  int fit = 0;
  if (cudaOccupancyMaxActiveClusters(&fit, kern, &cfg) != cudaSuccess) {
    (void)cudaGetLastError(); // the query's error is this function's answer
    return 0;
  }
  return fit;
}

// f(std::bool_constant<PIV>, std::integral_constant<int, NT>) for the
// pivoting and the plan (thr: the throughput plan's block size): the one
// place that maps the two run-time choices to the kernel's instances.
template <class F> decltype(auto) qrcp_with_instance(bool piv, bool thr, F &&f) {
  using Lat = std::integral_constant<int, kQrcpThreads>;
  using Thr = std::integral_constant<int, kQrcpThroughputThreads>;
  if (piv) return thr ? f(std::true_type{}, Thr{}) : f(std::true_type{}, Lat{});
  return thr ? f(std::false_type{}, Thr{}) : f(std::false_type{}, Lat{});
}

// One launch of qrcp_cluster_kernel over P.sel[0, count) with clusters of
// c blocks of NT threads; cudaErrorNotSupported when no such cluster fits
// the GPU.
template <class Tstd, bool PIV, int NT>
cudaError_t qrcp_cluster_launch(const QrParams<Tstd> &P, int count, int c, int cpb, size_t smem,
                                cudaStream_t stream) {
  // Any refusal here means "not supported": the caller factors these
  // matrices with the one-block kernel.
  if (qrcp_active_clusters<Tstd, PIV, NT>(c, smem) < 1) return cudaErrorNotSupported;
  cudaLaunchAttribute at[1];
  const cudaLaunchConfig_t cfg = qrcp_cluster_config<Tstd, PIV, NT>(count, c, smem, stream, at);
  return cudaLaunchKernelEx(&cfg, qrcp_cluster_kernel<Tstd, PIV, NT>, P, cpb);
}

} // namespace bsvd::detail::cuda
