// The fused path as an operation (operation.hpp): the plan's launches of
// the fused kernel over a group's matrices.
#pragma once

#include "../operation.hpp"

namespace bsvd::detail::cuda {

struct FusedOp {
  // Every launch's envelope fits the device (every ordering runs: round-
  // robin in closed form, the others from their tables).
  static bool can_run(const plan::Plan &p, const plan::Group &g);
  // The slot -> matrix map of the launches, unless one launch takes all
  // kcount matrices of the batch the group indexes, in order; and the
  // ordering's tables (fused_order_bytes).
  static size_t workspace_bytes(const plan::Plan &p, const plan::Group &g, int kcount);
  template <class T> static bsvd_status_t run(const GroupArgs<T> &a);
};

// Bytes of the tables of an ordering other than round-robin for the
// launches' matrices (nw[i]: the working width of the group's i-th matrix);
// 0 for round-robin, which the kernel evaluates in closed form.
size_t fused_order_bytes(bsvd_ordering_t ordering, const std::vector<plan::FusedLaunch> &launches,
                         const std::vector<int> &nw);

// The launches over kb's matrices kidx[members] (the QR path's R factors
// too); nw[i]: the working width of the i-th; dmap: device room for the map
// (one int per matrix), or null when a single launch takes kb's matrices in
// order; dord: device room of fused_order_bytes for the ordering's tables.
// kb.nplus set (device memory): the HSVD's instances.
template <class T>
bsvd_status_t launch_fused_sets(const Batch<T> &kb, const std::vector<plan::FusedLaunch> &launches,
                                const std::vector<int> &kidx, const std::vector<int> &nw, int *dmap,
                                int *dord, const Config &cfg, cudaStream_t stream);

} // namespace bsvd::detail::cuda
