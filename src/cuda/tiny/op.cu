// TinyOp (op.hpp).
#include "op.hpp"

#include "../common/upload.hpp"
#include "../common/ws_layout.hpp"
#include "tiny.hpp"

#include <algorithm>
#include <complex>

namespace bsvd::detail::cuda {

namespace {
bool needs_map(const plan::Plan &p, const plan::Group &g, int kcount) {
  return !p.uniform || g.size() != size_t(kcount);
}
// The m, n lists hold one entry for a whole group, one per matrix otherwise.
int group_dim(const plan::Group &g) {
  int d = 0;
  for (size_t i = 0; i < g.m.size(); ++i) d = std::max({d, g.m[i], g.n[i]});
  return d;
}
} // namespace

size_t tiny_smem_bytes(int m, int n, bool vectors, size_t elem) {
  const int k = std::min(m, n);
  const int out = vectors ? (m + n + 1) * k : k;
  return size_t(std::max(m * n, out)) * (kTinyThreads + 1) * elem;
}

bool TinyOp::can_run(const plan::Plan &, const plan::Group &g) {
  for (size_t i = 0; i < g.m.size(); ++i)
    if (g.m[i] < 1 || g.n[i] < 1 || std::max(g.m[i], g.n[i]) > kTinyMaxDim) return false;
  return g.size() > 0;
}

size_t TinyOp::workspace_bytes(const plan::Plan &p, const plan::Group &g, int kcount) {
  return needs_map(p, g, kcount) ? ws_align(g.size() * sizeof(int)) : 0;
}

template <class T> bsvd_status_t TinyOp::run(const GroupArgs<T> &a) {
  TinyParams<T> P;
  P.batch = a.kb;
  P.count = int(a.group.size());
  P.dim = group_dim(a.group);
  P.tol = a.plan.cfg.tol;
  P.max_sweeps = a.plan.cfg.max_sweeps > 0 ? a.plan.cfg.max_sweeps : kDefaultMaxSweeps;
  P.lanes = P.dim >= plan::tiny_lanes_from(a.plan.tuning, a.plan.precision, a.plan.count);
  if (needs_map(a.plan, a.group, a.kb.count)) {
    int *dmap = reinterpret_cast<int *>(a.ws);
    BSVD_CUDA_TRY(upload(dmap, a.kidx, a.stream));
    P.map = dmap;
  }
  BSVD_CUDA_TRY(launch_tiny(P, a.stream));
  return BSVD_STATUS_SUCCESS;
}

#define BSVD_INSTANTIATE(T) template bsvd_status_t TinyOp::run<T>(const GroupArgs<T> &);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail::cuda
