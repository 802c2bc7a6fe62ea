// Host side of the QR path's two launches, qr_factor and qr_finish
// (qr.hpp): which kernels factor the matrices (TSQR, clusters under the
// latency or throughput plan, or one block each) and which form the side
// that carries Q (TSQR's levels, compact WY, the grid, or the finish
// kernel). Included by one .cu file per precision (qr_<p>.cu).
#pragma once

#include "../common/device_info.hpp"
#include "../common/side_stream.hpp"
#include "../common/upload.hpp"
#include "../../plan/tuning.hpp"
#include "apply.cuh"
#include "finish.cuh"
#include "householder.cuh"
#include "params.cuh"
#include "qrcp.cuh"
#include "tsqr.cuh"
#include "wy.cuh"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

namespace bsvd::detail::cuda {

// Launch with q.threads per matrix (256, 512 or 1024) for the one-block
// kernel; q.cluster = false factors every matrix with it. hmats: a host copy of mats (null: one-block kernel for
// all; the matrices of one call are all pivoted or all not). With it, the
// matrices that fit a cluster's shared memory (qrcp_cluster_size) are
// loaded by the one-block kernel's load and factored by
// qrcp_cluster_kernel, one launch per cluster size (largest first), under
// the plan that plan::qrcp_throughput picks for the call. The latency plan's
// blocks have kQrcpThreads threads: it gives the one-block kernel's bits at
// nt = kQrcpThreads (the pivoted default; the unpivoted path's one-block
// kernel runs 256); the throughput plan's have kQrcpThroughputThreads and
// give the one-block kernel's bits at that count.
template <class Tstd> cudaError_t qr_factor_impl(const Batch<Tstd> &kb, const QrMat *mats,
                                                 int count, int nw_max, unsigned char *ws,
                                                 const QrLayout &L, cudaStream_t stream,
                                                 const QrLaunch &q, const QrMat *hmats) {
  using T = dev_t<Tstd>;
  (void)nw_max;
  const int nt = q.threads;
  if (count <= 0) return cudaSuccess;
  QrParams<Tstd> P = qr_params(kb, mats, ws, L);
  if (L.tsqr && hmats && hmats[0].nc > 0) return qr_tsqr_factor(P, count, ws, L, hmats, stream);
  std::vector<int> rest, grp[5];
  const bool cluster = hmats && q.cluster;
  const bool piv = hmats && hmats[0].piv;
  const size_t smax = size_t(max_smem_optin());
  // The matrices by cluster size under a plan (rest: none fits), each
  // size's launch shape (cpb from its widest matrix; the shared memory its
  // members need at that cpb), and the plan's cost in steps
  // (plan::qrcp_throughput): per size, waves of the clusters the GPU runs at
  // once times the widest matrix's columns (the sizes run beside each
  // other: the largest cost counts). A matrix that its size's launch shape
  // does not fit (a tall one beside a wider one: cpb from the wider, rows
  // from the tall) moves up to the next size, or to rest after 16.
  const size_t lim = smax - std::min<size_t>(smax, kQrcpStaticSmem);
  struct Shape {
    int cpb = 0;
    size_t smem = 0;
  };
  auto group = [&](bool thr, std::vector<int> &rs, std::vector<int> *gr, Shape *sh) -> double {
    rs.clear();
    for (int g = 0; g < 5; ++g) gr[g].clear();
    for (int i = 0; i < count; ++i) {
      const int c = qrcp_cluster_size<T>(hmats[i].mw, hmats[i].nw, smax, thr);
      if (c == 0)
        rs.push_back(i);
      else
        gr[__builtin_ctz(unsigned(c))].push_back(i);
    }
    double cost = 0;
    for (int g = 0; g < 5; ++g) {
      sh[g] = Shape{};
      if (gr[g].empty()) continue;
      const int c = 1 << g;
      int nw = 0;
      for (int i : gr[g]) nw = std::max(nw, hmats[i].nw);
      const int cpb = (nw + c - 1) / c;
      std::vector<int> keep;
      size_t smem = 0;
      for (int i : gr[g]) {
        const size_t need = qrcp_cluster_smem<T>(cpb, hmats[i].mw, hmats[i].nw);
        if (need <= lim) {
          keep.push_back(i);
          smem = std::max(smem, need);
        } else {
          (g < 4 ? gr[g + 1] : rs).push_back(i);
        }
      }
      gr[g].swap(keep);
      if (gr[g].empty()) continue;
      sh[g] = Shape{cpb, smem};
      const int fit = qrcp_with_instance(piv, thr, [&](auto pv, auto nt_) {
        return qrcp_active_clusters<Tstd, decltype(pv)::value, decltype(nt_)::value>(c, smem);
      });
      if (fit < 1) return 1e300; // this plan's clusters do not run here
      cost = std::max(cost, double((gr[g].size() + fit - 1) / fit) * nw);
    }
    return cost;
  };
  bool thr = false;
  Shape shape[5];
  if (cluster) {
    const double lat = group(false, rest, grp, shape);
    std::vector<int> rest_t, grp_t[5];
    Shape shape_t[5];
    const double tcost = group(true, rest_t, grp_t, shape_t);
    const bool pick = rest_t.size() <= rest.size() && plan::qrcp_throughput(*q.tuning, lat, tcost);
    if (q.tuning->qrcp.trace)
      std::fprintf(stderr,
                   "bsvd qrcp plan: %d matrices, steps latency %.0f throughput %.0f -> %s\n", count,
                   lat, tcost, pick ? "throughput" : "latency");
    if (pick) {
      thr = true;
      rest.swap(rest_t);
      for (int g = 0; g < 5; ++g) {
        grp[g].swap(grp_t[g]);
        shape[g] = shape_t[g];
      }
    }
  }
  if (!cluster || int(rest.size()) == count) {
    qr_factor_block_launch(P, count, nt, stream);
    return cudaGetLastError();
  }
  // sel: the one-block kernel's matrices, then each cluster group's
  std::vector<int> sel(rest);
  int off[5];
  for (int g = 4; g >= 0; --g) {
    off[g] = int(sel.size());
    sel.insert(sel.end(), grp[g].begin(), grp[g].end());
  }
  int *dsel = reinterpret_cast<int *>(ws + L.sel);
  if (cudaError_t e = upload(dsel, sel, stream)) return e;
  P.nf = reinterpret_cast<int *>(ws + L.nf);
  if (!rest.empty()) {
    P.sel = dsel;
    qr_factor_block_launch(P, int(rest.size()), nt, stream);
  }
  const int ncl = count - int(rest.size());
  P.sel = dsel + rest.size();
  P.tpm = kQrcpThreads;
  qr_factor_kernel<Tstd, kQrcpThreads, true><<<ncl, kQrcpThreads, 0, stream>>>(P);
  if (cudaError_t e = cudaGetLastError()) return e;
  // the largest clusters on the call's stream, the other sizes beside it
  // (they fill the SMs that the GPCs leave over for large clusters)
  std::vector<std::unique_ptr<SideStream>> side;
  bool first = true;
  for (int g = 4; g >= 0; --g) {
    if (grp[g].empty()) continue;
    cudaStream_t st = stream;
    if (!first) {
      side.push_back(std::make_unique<SideStream>(stream));
      if (cudaError_t e = side.back()->fork()) return e;
      st = side.back()->get();
    }
    first = false;
    const int c = 1 << g, cpb = shape[g].cpb;
    P.sel = dsel + off[g];
    const size_t smem = shape[g].smem;
    const int n = int(grp[g].size());
    const cudaError_t e = qrcp_with_instance(piv, thr, [&](auto pv, auto nt_) {
      return qrcp_cluster_launch<Tstd, decltype(pv)::value, decltype(nt_)::value>(P, n, c, cpb,
                                                                                  smem, st);
    });
    if (e == cudaErrorNotSupported) { // no cluster of c blocks fits: one block each
      qr_factor_block_launch(P, n, thr ? kQrcpThroughputThreads : nt, st);
      if (cudaError_t e2 = cudaGetLastError()) return e2;
    } else if (e) {
      return e;
    }
  }
  if (cudaError_t e = cudaGetLastError()) return e;
  for (auto &sd : side)
    if (cudaError_t e = sd->join()) return e;
  return cudaSuccess;
}

// The finish (S, info, sweeps, the side without Q); X = Q [Z; 0] by
// qr_apply_q_kernel when hmats is given and a column of X fits shared
// memory, else by the finish kernel itself.
template <class Tstd> cudaError_t qr_finish_impl(const Batch<Tstd> &kb, const QrMat *mats,
                                                 int count, int nw_max, unsigned char *ws,
                                                 const QrLayout &L, cudaStream_t stream,
                                                 const QrLaunch &q, const QrMat *hmats) {
  using T = dev_t<Tstd>;
  if (count <= 0) return cudaSuccess;
  const int nt = q.threads;
  QrParams<Tstd> P = qr_params(kb, mats, ws, L);
  P.tpm = nt == 1024 || nt == 512 ? nt : 256;
  int mw_max = 0;
  if (hmats)
    for (int i = 0; i < count; ++i) mw_max = std::max(mw_max, hmats[i].mw);
  const size_t col = size_t(mw_max) * sizeof(T);
  const bool tsqr = L.tsqr && hmats && hmats[0].nc > 0;
  if (tsqr && kb.vectors) P.qapply = 1; // qr_tsqr_apply forms X
  // Q's application: the compact WY form for the unpivoted path (its X has
  // zero rows below nw; q.wy), else a grid of blocks per matrix (q.apply;
  // else the finish kernel applies it itself).
  bool wy = false;
  if (!tsqr && kb.vectors && hmats && mw_max > 0 && !hmats[0].piv && q.wy) {
    const size_t lim = size_t(max_smem_optin());
    wy = qr_wy_m_smem<T>(nw_max) <= lim && qr_wy_apply_smem<T>(nw_max) <= lim;
    if (wy) P.qapply = 1;
  }
  if (!tsqr && !wy && kb.vectors && hmats && mw_max > 0 && q.apply) {
    if (const int cb = qr_apply_cols(col, size_t(max_smem_optin()))) {
      P.qapply = 1;
      P.cb = cb;
    }
  }
  if (P.tpm == 1024)
    qr_finish_kernel<Tstd, 1024><<<count, 1024, 0, stream>>>(P);
  else if (P.tpm == 512)
    qr_finish_kernel<Tstd, 512><<<count, 512, 0, stream>>>(P);
  else
    qr_finish_kernel<Tstd, 256><<<count, 256, 0, stream>>>(P);
  if (cudaError_t e = cudaGetLastError()) return e;
  if (!P.qapply) return cudaSuccess;
  if (tsqr) return qr_tsqr_apply(P, count, L, hmats, stream);
  if (wy) {
    const size_t sm = qr_wy_m_smem<T>(nw_max), sa = qr_wy_apply_smem<T>(nw_max);
    auto km = qr_wy_m_kernel<Tstd>;
    auto ka = qr_wy_apply_kernel<Tstd>;
    if (sm > 48 * 1024)
      if (cudaError_t e =
              cudaFuncSetAttribute(km, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sm)))
        return e;
    if (sa > 48 * 1024)
      if (cudaError_t e =
              cudaFuncSetAttribute(ka, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sa)))
        return e;
    km<<<count, kWyThreads, sm, stream>>>(P);
    if (cudaError_t e = cudaGetLastError()) return e;
    const dim3 grid(unsigned(count), unsigned((mw_max + kWyRows - 1) / kWyRows));
    ka<<<grid, kWyRows, sa, stream>>>(P);
    return cudaGetLastError();
  }
  const size_t smem = size_t(P.cb + kQApplyChunk) * col;
  auto kern = qr_apply_q_kernel<Tstd>;
  if (smem > 48 * 1024)
    if (cudaError_t e =
            cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)))
      return e;
  const dim3 grid(unsigned(count), unsigned((nw_max + P.cb - 1) / P.cb));
  kern<<<grid, kQApplyThreads, smem, stream>>>(P);
  return cudaGetLastError();
}

} // namespace bsvd::detail::cuda
