// make_plan and the per-matrix rules it applies (plan.hpp).
#include "plan.hpp"

#include "../core/ordering.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

namespace bsvd::detail::plan {

namespace {

size_t elem_bytes(char prec) { return prec == 's' ? 4 : prec == 'z' ? 16 : 8; }

// The shapes of a call, visited once per distinct description: a uniform
// batch as one shape of `count` matrices, a variable one matrix by matrix.
template <class F> void for_each_shape(const Shapes &s, F &&f) {
  if (s.dims.uniform()) {
    if (s.count > 0) f(s.dims.m, s.dims.n, long(s.count));
    return;
  }
  for (int b = 0; b < s.count; ++b) f(s.dims.rows(b), s.dims.cols(b), 1L);
}

// The automatic routing's fused column cap for the call: the counts of its
// matrices beyond max_cols that fit the fused kernel and take no QR path.
int call_fused_cols(const Shapes &s, const Config &cfg, const DeviceDesc &dev,
                    const PathFacts &facts, const Tuning &t) {
  const char prec = s.precision;
  long wide = 0, window = 0;
  if (cfg.variant == BSVD_VARIANT_AUTO) {
    const int wcap = fused_wide_cols(t, prec), ncap = fused_window_cols(t, prec);
    for_each_shape(s, [&](int m, int n, long mult) {
      const int k = std::min(m, n);
      if (k <= t.fused.max_cols || k > std::max(wcap, ncap) ||
          qr_route(prec, m, n, s.vectors, cfg.qr, facts, t) ||
          !facts.fused_fits(prec, std::max(m, n), k, s.vectors))
        return;
      wide += k <= wcap ? mult : 0;
      window += k <= ncap ? mult : 0;
    });
  }
  return fused_call_cols(t, prec, wide, window, dev.sm_count);
}

// Working shapes (mw, nw).
using ShapeSet = std::set<std::pair<int, int>>;

// The working shapes (mw, nw) of the matrices the plain routing (no
// preconditioning) sends to the blocked path, with their counts, in the
// order the call first names them: one routing per matrix for both
// automatic preconditionings below.
struct BlockedShape {
  int mw, nw;
  long count;
};
std::vector<BlockedShape> plain_blocked_shapes(const Plan &p, const Shapes &s, int nb,
                                               const PathFacts &facts) {
  std::vector<BlockedShape> out;
  std::map<std::pair<int, int>, size_t> at;
  for_each_shape(s, [&](int m, int n, long mult) {
    if (route(s.precision, m, n, s.vectors, true, p.cfg, nb, false, p.fused_cols, facts,
              p.tuning) != Route::kBlocked)
      return;
    const std::pair<int, int> key{std::max(m, n), std::min(m, n)};
    const auto it = at.emplace(key, out.size()).first;
    if (it->second == out.size()) out.push_back({key.first, key.second, 0});
    out[it->second].count += mult;
  });
  return out;
}

// The Gram route chosen by the plan (precondition = 0; decision 0022): the
// shapes whose work in the call passes gram_auto.
ShapeSet auto_gram_shapes(const Plan &p, char prec, const std::vector<BlockedShape> &blocked) {
  ShapeSet out;
  for (const BlockedShape &b : blocked)
    if (gram_auto(p.tuning, prec, b.count, b.mw, b.nw)) out.insert({b.mw, b.nw});
  return out;
}

// The automatic QRCP preconditioning: every matrix the plain routing sends
// to the blocked path (but the Gram route's shapes) is preconditioned when
// each fits a cluster of the pivoted factorization and the cost model
// predicts a small cost for their count (in units of the largest one's
// work, mw nw^2) and the largest's columns.
void auto_precondition(Plan &p, char prec, const PathFacts &facts,
                       const std::vector<BlockedShape> &blocked, const ShapeSet &gram) {
  double wsum = 0, wmax = 0;
  int nw_max = 0;
  bool fit = true;
  for (const BlockedShape &b : blocked) {
    if (gram.count({b.mw, b.nw})) continue;
    if (facts.qrcp_cluster_blocks(prec, b.mw, b.nw) == 0) {
      fit = false;
      break;
    }
    const double w = double(b.mw) * b.nw * b.nw;
    wsum += w * double(b.count);
    if (w > wmax) {
      wmax = w;
      nw_max = b.nw;
    }
  }
  p.precondition_auto = true;
  p.precondition_count = wmax > 0 ? wsum / wmax : 0;
  p.precondition_cols = nw_max;
  p.precondition_cost = wmax > 0 ? qrcp_auto_cost(p.tuning, p.precondition_count, nw_max) : 0;
  p.precondition = fit && wmax > 0 && qrcp_auto(p.tuning, prec, p.precondition_count, nw_max);
}

// The fused kernel's launches over matrices sizes (mw, nw) (positions
// 0 ... k-1): one launch when the batch is uniform, else the matrices ordered
// by (nw, mw) and cut greedily into launches whose joint envelope fits --
// matrices that each fit may not fit together (1000 x 17 with 150 x 150).
std::vector<FusedLaunch> fused_launches(const std::vector<int> &mw, const std::vector<int> &nw,
                                        bool uniform, char prec, bool vectors,
                                        const PathFacts &facts, const Tuning &t) {
  const int k = int(mw.size());
  std::vector<std::vector<int>> sets;
  std::vector<int> order(k);
  for (int i = 0; i < k; ++i) order[i] = i;
  if (uniform || k <= 1) {
    sets.push_back(order);
  } else {
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return nw[a] != nw[b] ? nw[a] < nw[b] : mw[a] < mw[b]; });
    int gm = 0, gn = 0;
    for (int i : order) {
      const int m2 = std::max(gm, mw[i]), n2 = std::max(gn, nw[i]);
      if (sets.empty() || !facts.fused_fits(prec, std::max(m2, n2), std::min(m2, n2), vectors)) {
        sets.emplace_back();
        gm = mw[i];
        gn = nw[i];
      } else {
        gm = m2;
        gn = n2;
      }
      sets.back().push_back(i);
    }
  }
  std::vector<FusedLaunch> out;
  for (auto &set : sets) {
    FusedLaunch l;
    for (int i : set) {
      l.mw_max = std::max(l.mw_max, mw[i]);
      l.nw_max = std::max(l.nw_max, nw[i]);
    }
    l.members = std::move(set);
    l.lanes = fused_lanes(t, std::max(l.mw_max, 1), long(l.members.size()), prec);
    l.tpm_cap = fused_tpm_cap(t);
    out.push_back(std::move(l));
  }
  return out;
}

// uniform: every matrix of the group has one size (decided once).
void fill_blocked(BlockedPlan &bp, const std::vector<int> &m, const std::vector<int> &n,
                  bool uniform, char prec, const Config &cfg, int nb, const PathFacts &facts,
                  const Tuning &t) {
  bp.nb = nb;
  bp.wr = cfg.wcycle_blocks;
  bp.we = std::max(1, cfg.wcycle_sweeps);
  const size_t k = m.size();
  bp.mode.resize(k);
  bp.cublas.assign(k, 0);
  for (size_t i = 0; i < k; ++i) {
    if (uniform && i > 0) {
      bp.mode[i] = bp.mode[0];
      bp.cublas[i] = bp.cublas[0];
      continue;
    }
    const int mw = std::max(m[i], n[i]), nw = std::min(m[i], n[i]);
    bp.mode[i] = blocked_pair_mode(prec, mw, cfg, nb, facts, t);
    const int nblk = (nw + nb - 1) / nb;
    // cuBLAS forms the Gram matrices of whole pairs of full blocks, half a
    // step's worth of GEMMs per matrix: one-level orderings only.
    bp.cublas[i] = bp.mode[i] == BSVD_PAIR_GRAM && nblk >= 2 && nw % (2 * nb) == 0 &&
                   wcycle_r(nblk, bp.wr) == 1 && gram_cublas(t, prec, mw);
  }
}

QrPlan qr_settings(bool pivoted, const std::vector<int> &m, const std::vector<int> &n, bool uniform,
                   char prec, const DeviceDesc &dev, const PathFacts &facts, const Tuning &t) {
  QrPlan q;
  q.pivoted = pivoted;
  q.wy = t.qr.wy;
  // Clusters only where the device has them: the launch would also find
  // out (its cluster queries fail), but a GPU described as an older one
  // (BSVD_DEVICE_AS) has them and must not use them.
  q.cluster = t.qr.cluster && dev.clusters();
  q.apply = t.qr.apply;
  q.threads = t.qr.threads_forced;
  // TSQR (Q in WY form) when every matrix of the call has two or more chunks.
  q.tsqr = !pivoted && !m.empty() && t.qr.tsqr && t.qr.wy;
  for (size_t i = 0; i < (uniform ? std::min<size_t>(m.size(), 1) : m.size()) && q.tsqr; ++i)
    q.tsqr = facts.tsqr_chunks(prec, std::max(m[i], n[i]), std::min(m[i], n[i])) >= 2;
  return q;
}

} // namespace

const char *route_name(Route r) {
  switch (r) {
  case Route::kFused: return "fused";
  case Route::kTiny: return "tiny";
  case Route::kBlocked: return "blocked";
  case Route::kQr: return "qr";
  case Route::kQrcp: return "qrcp";
  case Route::kGram: return "gram";
  case Route::kCpu: return "cpu";
  case Route::kBidiag: return "bidiag";
  }
  return "?";
}

const Group *Plan::find(Route r) const {
  for (const Group &g : groups)
    if (g.route == r) return &g;
  return nullptr;
}
Group *Plan::find(Route r) {
  for (Group &g : groups)
    if (g.route == r) return &g;
  return nullptr;
}

namespace {
// A plan's description of the call, before any route is chosen.
Plan call_of(const Shapes &s, const Config &cfg, const Tuning &t) {
  Plan p;
  p.precision = s.precision;
  p.vectors = s.vectors;
  p.count = s.count;
  p.uniform = s.dims.uniform();
  p.cfg = cfg;
  p.tuning = t;
  p.fused_cols = t.fused.max_cols;
  return p;
}
} // namespace

namespace {
// The size rule of the LAPACK path: the own Jacobi solver for working
// matrices of at most this many columns, xGESDD above (measured on the
// 2-core development machine against Debian's OpenBLAS 0.3.21, square
// random matrices, threads over the batch: docs/perf/cpu.md). Complex:
// xGESDD from 1 column (the Jacobi solver's complex loops are not
// vectorized, design/cpu.md).
constexpr int kCpuJacobiMaxColsSV = 8, kCpuJacobiMaxColsSN = 4;
constexpr int kCpuJacobiMaxColsDV = 8, kCpuJacobiMaxColsDN = 4;

int cpu_jacobi_max_cols(char prec, bool vectors) {
  switch (prec) {
  case 's': return vectors ? kCpuJacobiMaxColsSV : kCpuJacobiMaxColsSN;
  case 'd': return vectors ? kCpuJacobiMaxColsDV : kCpuJacobiMaxColsDN;
  default: return 0;
  }
}
} // namespace

bool cpu_lapack(char prec, int m, int n, bool vectors, const Config &cfg, Force force) {
#if defined(BSVD_WITH_LAPACK)
  const bool jacobi_asked = cfg.variant != BSVD_VARIANT_AUTO || cfg.tol > 0 ||
                            cfg.max_sweeps != kDefaultMaxSweeps ||
                            cfg.ordering != BSVD_ORDERING_ROUND_ROBIN || cfg.precondition > 0;
  if (jacobi_asked || force == Force::kOff) return false;
  if (force == Force::kOn) return true;
  return std::min(m, n) > cpu_jacobi_max_cols(prec, vectors);
#else
  (void)prec, (void)m, (void)n, (void)vectors, (void)cfg, (void)force;
  return false;
#endif
}

Plan cpu_plan(const Shapes &s, const Config &cfg) {
  Plan p = call_of(s, cfg, tuning_table(0, 0));
  const Force force = current_overrides().cpu_lapack;
  Group g[2]; // Jacobi, LAPACK
  g[1].lapack = true;
  if (s.dims.uniform()) { // one decision, no per-matrix lists (Group::whole)
    Group &to = g[cpu_lapack(s.precision, s.dims.m, s.dims.n, s.vectors, cfg, force) ? 1 : 0];
    to.whole = std::max(s.count, 0);
    to.m.assign(1, s.dims.m);
    to.n.assign(1, s.dims.n);
  } else {
    for (int b = 0; b < s.count; ++b) {
      const int m = s.dims.rows(b), n = s.dims.cols(b);
      Group &to = g[cpu_lapack(s.precision, m, n, s.vectors, cfg, force) ? 1 : 0];
      to.index.push_back(b);
      to.m.push_back(m);
      to.n.push_back(n);
    }
  }
  for (Group &x : g)
    if (x.size() > 0) p.groups.push_back(std::move(x));
  return p;
}

int blocked_nb(const Config &cfg, char prec, const PathFacts &facts) {
  const int nb = block_width(cfg.block_size);
  return nb <= facts.blocked_max_nb(prec) ? nb : 0;
}

int blocked_pair_mode(char prec, int mw, const Config &cfg, int nb, const PathFacts &facts,
                      const Tuning &t) {
  if (!facts.pair_fits(prec, mw, nb)) return BSVD_PAIR_GRAM;
  if (cfg.pair_solver != BSVD_PAIR_AUTO) return cfg.pair_solver;
  return auto_pair_solver(t);
}

bool qr_route(char prec, int m, int n, bool vectors, int qr, const PathFacts &facts,
              const Tuning &t) {
  const int mw = std::max(m, n), nw = std::min(m, n);
  if (qr < 0 || nw < 1 || !facts.fused_fits(prec, nw, nw, vectors)) return false;
  if (qr > 0) return true;
  const QrTuning &q = t.qr;
  if (mw < q.auto_ratio * nw || mw < q.auto_min_rows) return false;
  if (facts.fused_fits(prec, mw, nw, vectors)) return true;
  if (q.wy)
    return nw <= q.auto_max_cols && (size_t(mw) * nw * elem_bytes(prec) <= q.auto_max_bytes ||
                                     (q.tsqr && facts.tsqr_chunks(prec, mw, nw) >= 2));
  return nw <= q.auto_max_cols_grid && facts.qr_apply_cols(prec, mw) >= q.auto_apply_cols;
}

// Empty matrices go to the fused kernel (it writes their info); with no GPU
// every other matrix goes to the CPU. variant = blocked sends every matrix to
// the blocked path (preconditioned when the call is), unblocked those that
// fit to the fused kernel, the others to the CPU's unblocked solver; auto
// sends those that fit and have at most fused_cols columns to the fused
// kernel and the rest to the blocked path. The blocked path implements
// round-robin orderings only.
// The values-only bidiagonal route (BidiagTuning): under the defaults that
// promise no more than T1-T4 (precondition = 0: it does not keep the
// relative accuracy of tiny singular values that one-sided Jacobi has),
// variant auto, the table's precisions and sizes, where it fits on chip.
static bool bidiag_takes(char prec, int m, int n, const Config &cfg, const PathFacts &facts,
                         const Tuning &t) {
  const int nw = std::min(m, n), p = prec_index(prec);
  return cfg.precondition == 0 && cfg.variant == BSVD_VARIANT_AUTO && t.bidiag.on[p] &&
         nw >= t.bidiag.min_cols[p] && nw <= t.bidiag.max_cols[p] &&
         facts.bidiag_reaches(prec, m, n);
}

Route route(char prec, int m, int n, bool vectors, bool gpu, const Config &cfg, int nb,
            bool precondition, int fused_cols, const PathFacts &facts, const Tuning &t,
            TinyReach tiny) {
  if (m == 0 || n == 0) return Route::kFused;
  if (!gpu) return Route::kCpu;
  const bool blk_ok = nb > 0 && cfg.ordering == BSVD_ORDERING_ROUND_ROBIN;
  const Route blk = gram_preconditioned(cfg) ? Route::kGram
                    : precondition           ? Route::kQrcp
                                             : Route::kBlocked;
  if (cfg.variant == BSVD_VARIANT_BLOCKED) return blk_ok ? blk : Route::kCpu;
  if (!vectors && bidiag_takes(prec, m, n, cfg, facts, t)) return Route::kBidiag;
  if (qr_route(prec, m, n, vectors, cfg.qr, facts, t)) return Route::kQr;
  const int mw = std::max(m, n), nw = std::min(m, n);
  const bool fused_ok = facts.fused_fits(prec, mw, nw, vectors);
  if (cfg.variant == BSVD_VARIANT_UNBLOCKED) return fused_ok ? Route::kFused : Route::kCpu;
  if (tiny.takes(mw) && cfg.ordering == BSVD_ORDERING_ROUND_ROBIN) return Route::kTiny;
  if (fused_ok && (!blk_ok || nw <= fused_cols)) return Route::kFused;
  return blk_ok ? blk : Route::kCpu;
}

Config hyperbolic_settings(const Config &cfg) {
  Config c = cfg;
  c.precondition = -1;
  c.pair_solver = BSVD_PAIR_SVD_SM;
  c.wcycle_blocks = 1;
  c.wcycle_sweeps = 1;
  return c;
}

Plan make_plan(const Shapes &s, const Config &call_cfg, const DeviceDesc &device,
               const PathFacts &facts, const Tuning &tuning) {
  const Config cfg = s.hyperbolic ? hyperbolic_settings(call_cfg) : call_cfg;
  Plan p = call_of(s, cfg, tuning);
  // What the table cannot know: which eigensolver plans fit this GPU.
  for (char c : {'s', 'd', 'c', 'z'})
    p.tuning.blocked.warp_fits[prec_index(c)] = facts.evd_warp_fits(c);
  p.hyperbolic = s.hyperbolic;
  p.device = device;
  const char prec = s.precision;
  const bool gpu = device.id >= 0;
  const int nb = blocked_nb(cfg, prec, facts);
  p.fused_cols = gpu ? call_fused_cols(s, cfg, device, facts, tuning) : tuning.fused.max_cols;
  // The HSVD's blocked path has the one-sided pair solver only, slower than
  // the Gram path the SVD's cap weighs the fused kernel against: its own cap.
  if (s.hyperbolic) p.fused_cols = std::max(p.fused_cols, tuning.fused.hyp_max_cols);
  ShapeSet gram_shapes; // the Gram route's shapes chosen by the plan
  if (cfg.precondition == 2) {
    p.gram = gpu && gram_preconditioned(cfg);
  } else if (cfg.precondition > 0) {
    p.precondition = true;
  } else if (cfg.precondition == 0 && gpu) {
    const std::vector<BlockedShape> blocked = plain_blocked_shapes(p, s, nb, facts);
    if (!s.hyperbolic) gram_shapes = auto_gram_shapes(p, prec, blocked);
    p.gram_auto = !gram_shapes.empty();
    auto_precondition(p, prec, facts, blocked, gram_shapes);
  }

  // The register tier's reach for this call's batch.
  const TinyReach reach = gpu && !s.hyperbolic ? tiny_reach(tuning, prec, s.count) : TinyReach{};
  // Every matrix's route; a uniform batch takes one decision.
  Group fused, tiny, blocked, qr, qrcp, gram, bidiag, cpu;
  fused.route = Route::kFused;
  tiny.route = Route::kTiny;
  blocked.route = Route::kBlocked;
  qr.route = Route::kQr;
  qrcp.route = Route::kQrcp;
  gram.route = Route::kGram;
  bidiag.route = Route::kBidiag;
  cpu.route = Route::kCpu;
  const bool uniform = s.dims.uniform();
  auto group_of = [&](Route r) -> Group & {
    return r == Route::kFused     ? fused
           : r == Route::kTiny    ? tiny
           : r == Route::kBlocked ? blocked
           : r == Route::kQr      ? qr
           : r == Route::kQrcp    ? qrcp
           : r == Route::kGram    ? gram
           : r == Route::kBidiag  ? bidiag
                                  : cpu;
  };
  // The HSVD's blocked path holds a pair's columns in shared memory: a
  // matrix whose pair does not fit takes the QR front end where its R fits
  // the fused kernel (unless the call turned it off), else the CPU.
  auto route_of = [&](int m, int n) {
    const Route r = route(prec, m, n, s.vectors, gpu, cfg, nb, p.precondition, p.fused_cols, facts,
                          tuning, reach);
    if ((r == Route::kBlocked || r == Route::kQrcp) &&
        gram_shapes.count({std::max(m, n), std::min(m, n)}))
      return Route::kGram;
    if (!s.hyperbolic || r != Route::kBlocked || facts.pair_fits(prec, std::max(m, n), nb))
      return r;
    return cfg.qr >= 0 && qr_route(prec, m, n, s.vectors, 1, facts, tuning) ? Route::kQr
                                                                            : Route::kCpu;
  };
  if (uniform) { // one decision, every matrix (a call's host work stays small)
    Group &g = group_of(route_of(s.dims.m, s.dims.n));
    if (g.route == Route::kTiny) { // no per-matrix lists (Group::whole)
      g.whole = std::max(s.count, 0);
      g.m.assign(1, s.dims.m);
      g.n.assign(1, s.dims.n);
    } else {
      g.index.resize(size_t(std::max(s.count, 0)));
      std::iota(g.index.begin(), g.index.end(), 0);
      g.m.assign(g.index.size(), s.dims.m);
      g.n.assign(g.index.size(), s.dims.n);
    }
  } else {
    for (int b = 0; b < s.count; ++b) {
      const int m = s.dims.rows(b), n = s.dims.cols(b);
      Group &g = group_of(route_of(m, n));
      g.index.push_back(b);
      g.m.push_back(m);
      g.n.push_back(n);
    }
  }

  auto working = [](const Group &g, std::vector<int> &mw, std::vector<int> &nw) {
    mw.resize(g.index.size());
    nw.resize(g.index.size());
    for (size_t i = 0; i < g.index.size(); ++i) {
      mw[i] = std::max(g.m[i], g.n[i]);
      nw[i] = std::min(g.m[i], g.n[i]);
    }
  };
  std::vector<int> mw, nw;
  if (!fused.index.empty()) {
    if (uniform) {
      FusedLaunch l;
      l.members.resize(fused.index.size());
      std::iota(l.members.begin(), l.members.end(), 0);
      l.mw_max = std::max(s.dims.m, s.dims.n);
      l.nw_max = std::min(s.dims.m, s.dims.n);
      l.lanes = fused_lanes(tuning, std::max(l.mw_max, 1), long(l.members.size()), prec);
      l.tpm_cap = fused_tpm_cap(tuning);
      fused.fused.push_back(std::move(l));
    } else {
      working(fused, mw, nw);
      fused.fused = fused_launches(mw, nw, false, prec, s.vectors, facts, tuning);
    }
  }
  if (!qr.index.empty()) {
    working(qr, mw, nw);
    // The fused kernel on the R factors (nw x nw), a variable-size batch
    // (of one size when the call's is uniform: one launch, in order).
    qr.fused = fused_launches(nw, nw, uniform, prec, s.vectors, facts, tuning);
    qr.qr = qr_settings(false, qr.m, qr.n, uniform, prec, device, facts, tuning);
  }
  if (!blocked.index.empty())
    fill_blocked(blocked.blocked, blocked.m, blocked.n, uniform, prec, cfg, nb, facts, tuning);
  if (!gram.index.empty()) // A V0 has A's shape
    fill_blocked(gram.blocked, gram.m, gram.n, uniform, prec, cfg, nb, facts, tuning);
  if (!qrcp.index.empty()) {
    working(qrcp, mw, nw);
    fill_blocked(qrcp.blocked, nw, nw, uniform, prec, cfg, nb, facts, tuning); // B = R^H
    qrcp.qr = qr_settings(true, qrcp.m, qrcp.n, uniform, prec, device, facts, tuning);
  }
  // The fused kernel and the QR path beside the blocked path: its sweeps
  // wait on the host once each, and its last ones leave most of the GPU idle.
  const bool iterates = !blocked.index.empty() || !qrcp.index.empty() || !gram.index.empty();
  const bool beside = iterates && fused_beside_blocked(tuning);
  fused.beside = qr.beside = tiny.beside = beside;
  for (Group *g : {&fused, &tiny, &bidiag, &qr, &blocked, &qrcp, &gram, &cpu})
    if (g->size() > 0) p.groups.push_back(std::move(*g));
  return p;
}

} // namespace bsvd::detail::plan
