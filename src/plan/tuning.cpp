// The query functions of tuning.hpp and the overrides' landing places.
#include "tuning.hpp"

#include <algorithm>
#include <cmath>

namespace bsvd::detail::plan {

Tuning with_overrides(Tuning t, const Overrides &o) {
  t.fused.lanes_forced = o.fused_lanes;
  t.fused.lanes_gcd_rule = o.fused_gcd_rule;
  if (o.fused_tpm > 0) t.fused.threads_per_matrix = o.fused_tpm;
  t.fused.max_cols_forced = o.fused_max_cols;
  t.tiny.max_dim_forced = o.tiny_max_dim;
  t.tiny.lanes_from_forced = o.tiny_lanes_from;
  if (o.fused_beside != Force::kAuto) t.fused.beside_blocked = o.fused_beside == Force::kOn;

  BlockedTuning &b = t.blocked;
  b.gram_cublas_forced = o.gram_cublas;
  b.gram_forced = o.gram_plan;
  if (o.tlp_warp > 0)
    for (int p = 0; p < 4; ++p) b.tlp_warp_full[p] = b.tlp_warp_ragged[p] = o.tlp_warp;
  if (o.tlp_block > 0) b.tlp_block = o.tlp_block;
  b.evd_threads_forced = o.evd_threads;
  if (o.evd_lean != Force::kAuto) b.lean = o.evd_lean == Force::kOn;
  if (o.stream_groups > 0) b.stream_groups = o.stream_groups;
  b.profile = o.profile;

  if (o.qr_wy != Force::kAuto) t.qr.wy = o.qr_wy == Force::kOn;
  if (o.qr_tsqr != Force::kAuto) t.qr.tsqr = o.qr_tsqr == Force::kOn;
  t.qr.threads_forced = o.qr_threads;
  if (o.qr_cluster != Force::kAuto) t.qr.cluster = o.qr_cluster == Force::kOn;
  if (o.qr_apply != Force::kAuto) t.qr.apply = o.qr_apply == Force::kOn;
  t.qrcp.throughput_forced = o.qrcp_throughput;
  t.qrcp.trace = o.qrcp_trace;
  t.gram.trace = o.gram_trace;
  if (o.gram_auto != Force::kAuto)
    for (bool &on : t.gram.auto_on) on = o.gram_auto == Force::kOn;
  if (o.bidiag != Force::kAuto) {
    for (int p = 0; p < 4; ++p) {
      t.bidiag.on[p] = o.bidiag == Force::kOn;
      t.bidiag.min_cols[p] = 1;
      t.bidiag.max_cols[p] = 1 << 30;
    }
  }
  if (o.dist_min_cols > 0) t.dist.min_cols = o.dist_min_cols;
  if (o.dist_pair_cols > 0) t.dist.pair_cols = std::max(2, o.dist_pair_cols);
  if (o.dist_inner_sweeps >= 0) t.dist.inner_sweeps = o.dist_inner_sweeps;
  return t;
}

namespace {
// WCYCLE's rule: G = max(4, gcd(m*, 32)).
int lanes_gcd_rule(int m_star) {
  int a = m_star > 0 ? m_star : 1, b = 32;
  while (b) {
    const int r = a % b;
    a = b;
    b = r;
  }
  return a < 4 ? 4 : a;
}
} // namespace

int fused_lanes(const Tuning &t, int m_star, long batch, char prec) {
  const FusedTuning &f = t.fused;
  if (f.lanes_forced) return f.lanes_forced;
  if (f.lanes_gcd_rule) return lanes_gcd_rule(m_star);
  const bool big = batch >= f.big_batch;
  for (int i = 0; i < 3; ++i)
    if (m_star <= f.rows_le[i]) return big ? f.lanes_big[i] : f.lanes_small[i];
  return f.lanes_beyond[prec_index(prec)];
}

int fused_call_cols(const Tuning &t, char prec, long wide, long window, int sms) {
  const FusedTuning &f = t.fused;
  if (f.max_cols_forced > 0) return f.max_cols_forced;
  if (window > 0 && 4 * window >= 3L * sms && window <= sms) return fused_window_cols(t, prec);
  if (wide > 0 && wide <= 2L * sms) return fused_wide_cols(t, prec);
  return f.max_cols;
}

bool gram_cublas(const Tuning &t, char prec, int mw) {
  const BlockedTuning &b = t.blocked;
  if (b.gram_cublas_forced != Force::kAuto) return b.gram_cublas_forced == Force::kOn;
  const int from = b.gram_cublas_min_rows[prec_index(prec)];
  return from > 0 && mw >= from;
}

GramPlan gram_plan(const Tuning &t, char prec, long pairs, long slots, int segs, long max_tiles) {
  const BlockedTuning &b = t.blocked;
  const bool fits = segs >= 2 && slots * segs <= max_tiles;
  const GramPlan throughput = prec == 'd' ? GramPlan::kMma : GramPlan::kTile4;
  switch (b.gram_forced) {
  case GramPlan::kSplit: return fits ? GramPlan::kSplit : GramPlan::kTile2;
  case GramPlan::kMma: return throughput;
  case GramPlan::kTile2:
  case GramPlan::kTile4: return b.gram_forced;
  case GramPlan::kAuto: break;
  }
  if (pairs >= b.gram_tile4_min_pairs) return throughput;
  return fits && pairs * segs <= b.gram_split_max_blocks ? GramPlan::kSplit : GramPlan::kTile2;
}

GramPlan gram_plan_wide(const Tuning &t, char prec) {
  if (t.blocked.gram_forced == GramPlan::kTile4) return GramPlan::kTile4;
  return prec == 'd' ? GramPlan::kMma : GramPlan::kTile4;
}

long tlp_warp(const Tuning &t, char prec, bool full) {
  const int p = prec_index(prec);
  return full ? t.blocked.tlp_warp_full[p] : t.blocked.tlp_warp_ragged[p];
}

int evd_threads(const Tuning &t, char prec, long pairs, bool full) {
  const bool warp = t.blocked.warp_fits[prec_index(prec)];
  const int forced = t.blocked.evd_threads_forced;
  if (is_evd_plan(forced) && (forced != 32 || warp)) return forced;
  const int nt = evd_threads_rule(pairs, tlp_warp(t, prec, full), tlp_block(t));
  return nt != 32 || warp ? nt : 128;
}

double qrcp_auto_cost(const Tuning &t, double count, int nw) {
  const QrcpTuning &c = t.qrcp;
  return c.cost0 + c.cost_count * std::log2(std::max(count, 1.0)) +
         c.cost_width * std::log2(double(std::max(nw, 1)));
}

bool qrcp_auto(const Tuning &t, char prec, double count, int nw) {
  return t.qrcp.auto_on[prec_index(prec)] && qrcp_auto_cost(t, count, nw) <= t.qrcp.max_cost;
}

bool gram_auto(const Tuning &t, char prec, long count, int mw, int nw) {
  const GramTuning &g = t.gram;
  return g.auto_on[prec_index(prec)] && nw >= std::max(g.min_cols, 2) &&
         double(count) * mw * double(nw) * nw >= g.auto_min_work;
}

bool qrcp_throughput(const Tuning &t, double latency_steps, double throughput_steps) {
  if (t.qrcp.throughput_forced != Force::kAuto) return t.qrcp.throughput_forced == Force::kOn;
  return throughput_steps * t.qrcp.throughput_step_cost < latency_steps;
}

} // namespace bsvd::detail::plan
