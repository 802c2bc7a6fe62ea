// FusedOp (op.hpp).
#include "op.hpp"

#include "../common/ws_layout.hpp"
#include "fused.hpp"

#include <complex>

namespace bsvd::detail::cuda {

namespace {
bool needs_map(const plan::Plan &p, const plan::Group &g, int kcount) {
  const size_t k = g.index.size();
  return (!p.uniform && k > 1) || k != size_t(kcount);
}
} // namespace

bool FusedOp::can_run(const plan::Plan &p, const plan::Group &g) {
  if (g.fused.empty() || (p.cfg.ordering != BSVD_ORDERING_ROUND_ROBIN &&
                          p.cfg.ordering != BSVD_ORDERING_ODD_EVEN))
    return false;
  for (const plan::FusedLaunch &l : g.fused)
    if (!fused_fits(p.precision, l.mw_max, l.nw_max, p.vectors, size_t(p.device.smem_optin)))
      return false;
  return true;
}

size_t FusedOp::workspace_bytes(const plan::Plan &p, const plan::Group &g, int kcount) {
  return needs_map(p, g, kcount) ? ws_align(g.index.size() * sizeof(int)) : 0;
}

template <class T> bsvd_status_t FusedOp::run(const GroupArgs<T> &a) {
  int *dmap = needs_map(a.plan, a.group, a.kb.count) ? reinterpret_cast<int *>(a.ws) : nullptr;
  return launch_fused_sets(a.kb, a.group.fused, a.kidx, dmap, a.plan.cfg, a.stream);
}

template <class T>
bsvd_status_t launch_fused_sets(const Batch<T> &kb, const std::vector<plan::FusedLaunch> &launches,
                                const std::vector<int> &kidx, int *dmap, const Config &cfg,
                                cudaStream_t stream) {
  if (dmap) {
    std::vector<int> order;
    for (const plan::FusedLaunch &l : launches)
      for (int i : l.members) order.push_back(kidx[size_t(i)]);
    BSVD_CUDA_TRY(cudaMemcpyAsync(dmap, order.data(), order.size() * sizeof(int),
                                  cudaMemcpyHostToDevice, stream));
  }
  size_t start = 0;
  for (const plan::FusedLaunch &l : launches) {
    FusedParams<T> P;
    P.batch = kb;
    P.mw_max = l.mw_max;
    P.nw_max = l.nw_max;
    P.count = int(l.members.size());
    P.ordering = int(cfg.ordering);
    P.max_sweeps = cfg.max_sweeps > 0 ? cfg.max_sweeps : kDefaultMaxSweeps;
    P.tol = cfg.tol;
    if (dmap) P.map = dmap + start;
    start += l.members.size();
    const FusedShape shape = plan_fused(P, kb.vectors, l.lanes, l.tpm_cap);
    BSVD_CUDA_TRY(launch_fused(P, shape, stream));
  }
  return BSVD_STATUS_SUCCESS;
}

#define BSVD_INSTANTIATE(T)                                                                    \
  template bsvd_status_t FusedOp::run<T>(const GroupArgs<T> &);                                \
  template bsvd_status_t launch_fused_sets<T>(const Batch<T> &,                                \
                                              const std::vector<plan::FusedLaunch> &,          \
                                              const std::vector<int> &, int *, const Config &, \
                                              cudaStream_t);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail::cuda
