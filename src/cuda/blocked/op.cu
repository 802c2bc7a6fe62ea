// BlockedOp (op.hpp).
#include "op.hpp"

#include "../fused/fused.hpp" // precision_elem_bytes
#include "blocked.hpp"

#include <complex>

namespace bsvd::detail::cuda {

bool BlockedOp::can_run(const plan::Plan &p, const plan::Group &g) {
  const int nb = g.blocked.nb;
  const int max_nb = (blocked_has_wide(p.precision) ? kBlockedKwide : kBlockedKmax) / 2;
  const bool ok = nb >= 1 && nb <= max_nb && p.cfg.ordering == BSVD_ORDERING_ROUND_ROBIN &&
                  g.blocked.mode.size() == g.index.size() &&
                  g.blocked.cublas.size() == g.index.size();
  if (!ok || !p.hyperbolic) return ok;
  // The HSVD's instances: the one-sided pair kernel of the narrow instance,
  // the one-level ordering, tall or square matrices (run_blocked).
  if (blocked_k_of(nb) != kBlockedKmax || g.blocked.wr != 1 || g.blocked.we != 1) return false;
  for (size_t i = 0; i < g.index.size(); ++i)
    if (g.blocked.mode[i] != BSVD_PAIR_SVD_SM || g.m[i] < g.n[i]) return false;
  return true;
}

size_t BlockedOp::workspace_bytes(const plan::Plan &p, const plan::Group &g) {
  return blocked_workspace_bytes(g.m, g.n, g.blocked.mode, p.vectors,
                                 precision_elem_bytes(p.precision), g.blocked.nb, g.blocked.wr,
                                 p.hyperbolic);
}

// The HSVD's signatures: a.kb.nplus (device memory) for the kernels and
// a.hb.nplus (host memory, the same indexing) for the block layout.
template <class T> bsvd_status_t BlockedOp::run(const GroupArgs<T> &a) {
  if (a.plan.hyperbolic != (a.kb.nplus != nullptr) || (a.kb.nplus && !a.hb.nplus)) {
    set_error("internal error: the blocked path's signatures do not match its plan (hyperbolic "
              "%d, device %s, host %s)",
              int(a.plan.hyperbolic), a.kb.nplus ? "set" : "null", a.hb.nplus ? "set" : "null");
    return BSVD_STATUS_INTERNAL_ERROR;
  }
  BSVD_CUDA_TRY(run_blocked(a.kb, a.kidx, a.group.m, a.group.n, a.group.blocked, a.plan, a.stream,
                            a.ws, a.kb.nplus ? a.hb.nplus : nullptr));
  return BSVD_STATUS_SUCCESS;
}

template bsvd_status_t BlockedOp::run<float>(const GroupArgs<float> &);
template bsvd_status_t BlockedOp::run<double>(const GroupArgs<double> &);
template bsvd_status_t BlockedOp::run<std::complex<float>>(const GroupArgs<std::complex<float>> &);
template bsvd_status_t
BlockedOp::run<std::complex<double>>(const GroupArgs<std::complex<double>> &);

} // namespace bsvd::detail::cuda
