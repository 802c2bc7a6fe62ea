// The Gram preconditioning as an operation (operation.hpp; route kGram,
// opts->precondition = 2; docs/design/gram.md): V0 = eigenvectors of the
// Gram matrix W^H W formed in single precision, made orthonormal in the
// working precision, then the blocked path on W V0 and V = V0 V_J. Its own
// work synchronizes nothing; the blocked path synchronizes once per sweep.
#pragma once

#include "../operation.hpp"

namespace bsvd::detail::cuda {

struct GramOp {
  // The blocked path takes the group (block width, round-robin).
  static bool can_run(const plan::Plan &p, const plan::Group &g);
  // The preconditioner's buffers, the eigensolver's workspace and the
  // blocked path's workspace for W V0.
  static size_t workspace_bytes(const plan::Plan &p, const plan::Group &g);
  template <class T> static bsvd_status_t run(const GroupArgs<T> &a);
};

} // namespace bsvd::detail::cuda
