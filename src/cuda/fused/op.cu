// FusedOp (op.hpp).
#include "op.hpp"

#include "../../core/ordering.hpp"
#include "../common/upload.hpp"
#include "../common/ws_layout.hpp"
#include "fused.hpp"

#include <algorithm>

#include <complex>

namespace bsvd::detail::cuda {

namespace {

bool needs_map(const plan::Plan &p, const plan::Group &g, int kcount) {
  const size_t k = g.index.size();
  return (!p.uniform && k > 1) || k != size_t(kcount);
}

std::vector<int> working_widths(const plan::Group &g) {
  std::vector<int> nw(g.index.size());
  for (size_t i = 0; i < nw.size(); ++i) nw[i] = std::min(g.m[i], g.n[i]);
  return nw;
}

// The tables of the widths the launches hold: offsets by width (0 ... the
// widest), then each width's packed_pair_table; empty for round-robin.
std::vector<int> order_tables(bsvd_ordering_t ordering,
                              const std::vector<plan::FusedLaunch> &launches,
                              const std::vector<int> &nw) {
  if (ordering == BSVD_ORDERING_ROUND_ROBIN) return {};
  int wmax = 0;
  for (const plan::FusedLaunch &l : launches) wmax = std::max(wmax, l.nw_max);
  std::vector<char> used(size_t(wmax) + 1, 0);
  for (const plan::FusedLaunch &l : launches)
    for (int i : l.members) used[size_t(nw[size_t(i)])] = 1;
  std::vector<int> pool(size_t(wmax) + 1, 0);
  for (int w = 0; w <= wmax; ++w)
    if (used[size_t(w)]) {
      pool[size_t(w)] = int(pool.size());
      const std::vector<int> t = packed_pair_table(ordering, w);
      pool.insert(pool.end(), t.begin(), t.end());
    }
  return pool;
}

} // namespace

size_t fused_order_bytes(bsvd_ordering_t ordering, const std::vector<plan::FusedLaunch> &launches,
                         const std::vector<int> &nw) {
  return ws_align(order_tables(ordering, launches, nw).size() * sizeof(int));
}

bool FusedOp::can_run(const plan::Plan &p, const plan::Group &g) {
  if (g.fused.empty()) return false;
  for (const plan::FusedLaunch &l : g.fused)
    if (!fused_fits(p.precision, l.mw_max, l.nw_max, p.vectors, size_t(p.device.smem_optin)))
      return false;
  return true;
}

namespace {
size_t map_bytes(const plan::Plan &p, const plan::Group &g, int kcount) {
  return needs_map(p, g, kcount) ? ws_align(g.index.size() * sizeof(int)) : 0;
}
} // namespace

size_t FusedOp::workspace_bytes(const plan::Plan &p, const plan::Group &g, int kcount) {
  return map_bytes(p, g, kcount) + fused_order_bytes(p.cfg.ordering, g.fused, working_widths(g));
}

template <class T> bsvd_status_t FusedOp::run(const GroupArgs<T> &a) {
  const size_t mb = map_bytes(a.plan, a.group, a.kb.count);
  int *dmap = mb ? reinterpret_cast<int *>(a.ws) : nullptr;
  int *dord = reinterpret_cast<int *>(a.ws + mb);
  return launch_fused_sets(a.kb, a.group.fused, a.kidx, working_widths(a.group), dmap, dord,
                           a.plan.cfg, a.stream);
}

template <class T>
bsvd_status_t launch_fused_sets(const Batch<T> &kb, const std::vector<plan::FusedLaunch> &launches,
                                const std::vector<int> &kidx, const std::vector<int> &nw, int *dmap,
                                int *dord, const Config &cfg, cudaStream_t stream) {
  const std::vector<int> tables = order_tables(cfg.ordering, launches, nw);
  if (!tables.empty()) BSVD_CUDA_TRY(upload(dord, tables, stream));
  if (dmap) {
    std::vector<int> order;
    for (const plan::FusedLaunch &l : launches)
      for (int i : l.members) order.push_back(kidx[size_t(i)]);
    BSVD_CUDA_TRY(upload(dmap, order, stream));
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
    if (!tables.empty()) {
      P.ord_tab = P.ord_off = dord;
      for (int i : l.members)
        P.steps_max = std::max(P.steps_max, tables[size_t(tables[size_t(nw[size_t(i)])])]);
    }
    if (dmap) P.map = dmap + start;
    start += l.members.size();
    P.nplus = kb.nplus;
    const FusedShape shape = plan_fused(P, kb.vectors, l.lanes, l.tpm_cap);
    BSVD_CUDA_TRY(kb.nplus ? launch_fused_hyp(P, shape, stream) : launch_fused(P, shape, stream));
  }
  return BSVD_STATUS_SUCCESS;
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template bsvd_status_t FusedOp::run<T>(const GroupArgs<T> &);                                    \
  template bsvd_status_t launch_fused_sets<T>(                                                     \
      const Batch<T> &, const std::vector<plan::FusedLaunch> &, const std::vector<int> &,          \
      const std::vector<int> &, int *, int *, const Config &, cudaStream_t);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail::cuda
