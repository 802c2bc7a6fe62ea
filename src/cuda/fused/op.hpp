// The fused path as an operation (operation.hpp): the plan's launches of
// the fused kernel over a group's matrices.
#pragma once

#include "../operation.hpp"

namespace bsvd::detail::cuda {

struct FusedOp {
  // Every launch's envelope fits the device and the ordering is one the
  // kernel evaluates.
  static bool can_run(const plan::Plan &p, const plan::Group &g);
  // The slot -> matrix map of the launches, unless one launch takes all
  // kcount matrices of the batch the group indexes, in order.
  static size_t workspace_bytes(const plan::Plan &p, const plan::Group &g, int kcount);
  template <class T> static bsvd_status_t run(const GroupArgs<T> &a);
};

// The launches over kb's matrices kidx[members] (the QR path's R factors
// too); dmap: device room for the map (one int per matrix), or null when
// a single launch takes kb's matrices in order.
template <class T>
bsvd_status_t launch_fused_sets(const Batch<T> &kb, const std::vector<plan::FusedLaunch> &launches,
                                const std::vector<int> &kidx, int *dmap, const Config &cfg,
                                cudaStream_t stream);

} // namespace bsvd::detail::cuda
