// BlockedOp (op.hpp).
#include "op.hpp"

#include "../fused/fused.hpp" // precision_elem_bytes
#include "blocked.hpp"

#include <complex>

namespace bsvd::detail::cuda {

bool BlockedOp::can_run(const plan::Plan &p, const plan::Group &g) {
  const int nb = g.blocked.nb;
  const int max_nb = (blocked_has_wide(p.precision) ? kBlockedKwide : kBlockedKmax) / 2;
  return nb >= 1 && nb <= max_nb && p.cfg.ordering == BSVD_ORDERING_ROUND_ROBIN &&
         g.blocked.mode.size() == g.index.size() && g.blocked.cublas.size() == g.index.size();
}

size_t BlockedOp::workspace_bytes(const plan::Plan &p, const plan::Group &g) {
  return blocked_workspace_bytes(g.m, g.n, g.blocked.mode, p.vectors,
                                 precision_elem_bytes(p.precision), g.blocked.nb, g.blocked.wr);
}

template <class T> bsvd_status_t BlockedOp::run(const GroupArgs<T> &a) {
  BSVD_CUDA_TRY(
      run_blocked(a.kb, a.kidx, a.group.m, a.group.n, a.group.blocked, a.plan, a.stream, a.ws));
  return BSVD_STATUS_SUCCESS;
}

template bsvd_status_t BlockedOp::run<float>(const GroupArgs<float> &);
template bsvd_status_t BlockedOp::run<double>(const GroupArgs<double> &);
template bsvd_status_t BlockedOp::run<std::complex<float>>(const GroupArgs<std::complex<float>> &);
template bsvd_status_t
BlockedOp::run<std::complex<double>>(const GroupArgs<std::complex<double>> &);

} // namespace bsvd::detail::cuda
