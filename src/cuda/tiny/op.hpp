// The register tier as an operation (operation.hpp): one launch of the
// tiny kernel over a group's matrices.
#pragma once

#include "../operation.hpp"

namespace bsvd::detail::cuda {

struct TinyOp {
  // Every matrix of the group has max(m, n) within the precision's
  // compiled reach (plan::kTinyInstanceMax).
  static bool can_run(const plan::Plan &p, const plan::Group &g);
  // The slot -> matrix map, unless the group is the whole batch in order.
  static size_t workspace_bytes(const plan::Plan &p, const plan::Group &g, int kcount);
  template <class T> static bsvd_status_t run(const GroupArgs<T> &a);
};

} // namespace bsvd::detail::cuda
