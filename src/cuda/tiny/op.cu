// TinyOp (op.hpp).
#include "op.hpp"

#include "../common/upload.hpp"
#include "../common/ws_layout.hpp"
#include "tiny.hpp"

#include <algorithm>
#include <complex>

namespace bsvd::detail::cuda {

size_t tiny_smem_bytes(int m, int n, bool vectors, size_t elem) {
  const int k = std::min(m, n);
  const int out = vectors ? (m + n + 1) * k : k;
  return size_t(std::max(m * n, out)) * (kTinyThreads + 1) * elem;
}

bool TinyOp::can_run(const plan::Plan &p, const plan::Group &g) {
  const int reach = plan::kTinyInstanceMax[plan::prec_index(p.precision)];
  for (size_t i = 0; i < g.m.size(); ++i)
    if (g.m[i] < 1 || g.n[i] < 1 || std::max(g.m[i], g.n[i]) > reach) return false;
  return g.size() > 0;
}

size_t TinyOp::workspace_bytes(const plan::Plan &p, const plan::Group &g, int kcount) {
  return needs_slot_map(p, g, kcount) ? ws_align(g.size() * sizeof(int)) : 0;
}

// One launch per instance: variable sizes are ordered by instance in the
// slot -> matrix map (stable: batch order within each), so a 3 x 3 matrix
// beside a 30 x 30 one does not run the 32-lane instance.
template <class T> bsvd_status_t TinyOp::run(const GroupArgs<T> &a) {
  TinyParams<T> P;
  P.batch = a.kb;
  P.tol = a.plan.cfg.tol;
  P.max_sweeps = a.plan.cfg.max_sweeps > 0 ? a.plan.cfg.max_sweeps : kDefaultMaxSweeps;
  const int lanes_from = plan::tiny_lanes_from(a.plan.tuning, a.plan.precision, a.plan.count);
  const plan::Group &g = a.group;
  const auto dim_of = [&](size_t i) {
    return g.m.size() == 1 ? std::max(g.m[0], g.n[0]) : std::max(g.m[i], g.n[i]);
  };
  // Launches [first, first + count) of the map (null: the whole batch).
  const auto launch = [&](const int *map, int count, int dim) -> bsvd_status_t {
    P.map = map;
    P.count = count;
    P.dim = dim;
    P.lanes = dim > kTinyThreadMaxDim || dim >= lanes_from;
    BSVD_CUDA_TRY(launch_tiny(P, a.stream));
    return BSVD_STATUS_SUCCESS;
  };
  if (!needs_slot_map(a.plan, g, a.kb.count)) return launch(nullptr, int(g.size()), dim_of(0));
  std::vector<int> order;
  const std::vector<TinyLaunch> launches = tiny_launches(g.size(), dim_of, order);
  int *dmap = reinterpret_cast<int *>(a.ws);
  if (order.empty()) {
    BSVD_CUDA_TRY(upload(dmap, a.kidx, a.stream)); // one launch: the group's own order
  } else {
    std::vector<int> map(order.size());
    for (size_t i = 0; i < order.size(); ++i) map[i] = a.kidx[size_t(order[i])];
    BSVD_CUDA_TRY(upload(dmap, map, a.stream));
  }
  for (const TinyLaunch &l : launches) {
    const bsvd_status_t st = launch(dmap + l.first, l.count, l.dim);
    if (st != BSVD_STATUS_SUCCESS) return st;
  }
  return BSVD_STATUS_SUCCESS;
}

#define BSVD_INSTANTIATE(T) template bsvd_status_t TinyOp::run<T>(const GroupArgs<T> &);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail::cuda
