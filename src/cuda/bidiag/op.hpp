// The values-only bidiagonal route as an operation (operation.hpp;
// Route::kBidiag, path cuda-bidiag, decision 0023). A group whose matrices
// all fit on chip takes one launch: each matrix reduced to bidiagonal form
// in one thread block with the matrix in shared memory (the device API's
// gebd2, as the batched GEBRD's on-chip regime) and its singular values
// then found there by bisection on the Golub-Kahan tridiagonal (bdsv.cuh,
// decision 0021). A group with a larger matrix copies A into the
// workspace, runs the batched GEBRD's launches on the copy (blocked panels
// until the trailing matrix is on chip; blocked.hpp) and then a bisection
// kernel. The caller's A is read, not written; S, info (0 or
// BSVD_INFO_NONFINITE) and sweeps (0: nothing iterates) are written.
#pragma once

#include "../operation.hpp"

namespace bsvd::detail::cuda {

// Whether an m x n matrix of precision prec fits the route's one kernel
// (plan::bidiag_values_smem_bytes) within smem bytes per block.
bool bidiag_values_fit(char prec, int m, int n, size_t smem);
// Whether the route takes it at all: on chip, or by the batched GEBRD's
// panels (plan::gebrd_panels) and a bisection kernel after it -- the
// plan's fact (CudaFacts::bidiag_reaches) and can_run's check.
bool bidiag_values_reach(char prec, int m, int n, size_t smem);

struct BidiagOp {
  // Values only, every matrix non-empty and within the GPU's shared memory
  // per block (what the plan's facts checked).
  static bool can_run(const plan::Plan &p, const plan::Group &g);
  // The slot -> matrix map, unless the group is the whole batch in order.
  static size_t workspace_bytes(const plan::Plan &p, const plan::Group &g, int kcount);
  template <class T> static bsvd_status_t run(const GroupArgs<T> &a);
};

} // namespace bsvd::detail::cuda
