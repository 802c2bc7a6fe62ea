// The blocked path as an operation (operation.hpp): block Jacobi on the
// group's matrices with the plan's settings (blocked.hpp, driver.cuh).
#pragma once

#include "../operation.hpp"

namespace bsvd::detail::cuda {

struct BlockedOp {
  // A compiled instance takes the block width; the ordering is round-robin.
  static bool can_run(const plan::Plan &p, const plan::Group &g);
  // The blocked layout (layout.hpp) of the group's matrices.
  static size_t workspace_bytes(const plan::Plan &p, const plan::Group &g);
  template <class T> static bsvd_status_t run(const GroupArgs<T> &a);
};

} // namespace bsvd::detail::cuda
