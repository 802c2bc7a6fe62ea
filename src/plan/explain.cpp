// explain (plan.hpp): a plan as a readable table, for `bsvd plan` and
// Python's bsvd.plan.
#include "plan.hpp"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <map>

namespace bsvd::detail::plan {

namespace {

std::string format(const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

std::string range(const std::vector<int> &v) {
  if (v.empty()) return "-";
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return *lo == *hi ? format("%d", *lo) : format("%d..%d", *lo, *hi);
}

std::string bytes(size_t b) {
  if (b >= (size_t(1) << 20)) return format("%.1f MiB", double(b) / double(1 << 20));
  if (b >= 1024) return format("%.1f KiB", double(b) / 1024.0);
  return format("%zu B", b);
}

// The public name of a group's path (bsvd_path_string: what opts.path
// reports for its matrices).
const char *path_name(const Group &g, const Config &cfg) {
  switch (g.route) {
  case Route::kFused: return bsvd_path_string(BSVD_PATH_CUDA_FUSED);
  case Route::kTiny: return bsvd_path_string(BSVD_PATH_CUDA_TINY);
  case Route::kBlocked: return bsvd_path_string(BSVD_PATH_CUDA_BLOCKED);
  case Route::kQr: return bsvd_path_string(BSVD_PATH_CUDA_QR);
  case Route::kQrcp: return bsvd_path_string(BSVD_PATH_CUDA_QRCP);
  case Route::kGram: return bsvd_path_string(BSVD_PATH_CUDA_GRAM);
  case Route::kBidiag: return bsvd_path_string(BSVD_PATH_CUDA_BIDIAG);
  case Route::kCpu: break;
  }
  if (g.lapack) return bsvd_path_string(BSVD_PATH_CPU_LAPACK);
  return bsvd_path_string(cfg.variant == BSVD_VARIANT_BLOCKED ? BSVD_PATH_CPU_BLOCKED
                                                              : BSVD_PATH_CPU_UNBLOCKED);
}

std::string fused_params(const std::vector<FusedLaunch> &launches) {
  std::map<int, int> lanes; // lanes -> launches
  for (const FusedLaunch &l : launches) ++lanes[l.lanes];
  std::string s =
      format("%zu launch%s, lanes per pair", launches.size(), launches.size() == 1 ? "" : "es");
  for (const auto &kv : lanes)
    s += kv.second == 1 ? format(" %d", kv.first) : format(" %d (x%d)", kv.first, kv.second);
  if (!launches.empty()) s += format(", <= %d threads per matrix", launches[0].tpm_cap);
  return s;
}

std::string blocked_params(const BlockedPlan &b, const Tuning &t) {
  std::map<int, int> modes;
  for (int m : b.mode) ++modes[m];
  std::string s = format("block width %d", b.nb);
  if (b.wr > 1) s += format(", two-level %d x %d", b.wr, b.we);
  s += ", pairs by";
  for (const auto &kv : modes) s += format(" %s %d", bsvd_pair_solver_string(kv.first), kv.second);
  const long cub = long(std::count(b.cublas.begin(), b.cublas.end(), 1));
  if (cub) s += format(", Gram by cuBLAS %ld", cub);
  s += format(", %d stream group%s", stream_groups(t), stream_groups(t) == 1 ? "" : "s");
  return s;
}

std::string qr_params(const QrPlan &q) {
  std::string s = q.pivoted ? "QR with column pivoting" : q.tsqr ? "TSQR" : "Householder QR";
  if (q.pivoted)
    s += q.cluster ? " on clusters" : " on one block";
  else
    s += q.wy ? ", Q in WY form" : q.apply ? ", Q by a grid" : ", Q in the finish";
  if (q.threads) s += format(", %d threads", q.threads);
  return s;
}

std::string group_params(const Group &g, const Plan &p) {
  switch (g.route) {
  case Route::kFused: return fused_params(g.fused);
  case Route::kTiny: return "one thread (or a few lanes) per matrix, in registers";
  case Route::kBlocked: return blocked_params(g.blocked, p.tuning);
  case Route::kQr: return qr_params(g.qr) + "; R by the fused kernel: " + fused_params(g.fused);
  case Route::kQrcp:
    return qr_params(g.qr) + "; R^H by the blocked path: " + blocked_params(g.blocked, p.tuning);
  case Route::kGram:
    return "V0 of the Gram matrix in single precision; A V0 by the blocked path: " +
           blocked_params(g.blocked, p.tuning);
  case Route::kBidiag:
    return "GEBRD in one thread block per matrix (shared memory), then bisection on the "
           "bidiagonal";
  case Route::kCpu: {
    if (g.lapack) return "LAPACK xGESDD, one call per matrix";
    std::string s = format("the CPU solver, ordering %s", bsvd_ordering_string(p.cfg.ordering));
    if (p.cfg.variant == BSVD_VARIANT_BLOCKED)
      s += format(", block width %d", block_width(p.cfg.block_size));
    return s;
  }
  }
  return "";
}

// The device and the facts the plan read: "GPU 0 NVIDIA H100 80GB HBM3
// (sm_90, 132 SMs, 227 KiB shared memory per block, clusters, FP64 1/2 of
// FP32, L2 50 MiB)"; unknown facts are left out.
std::string device_line(const DeviceDesc &d) {
  std::string s = format("GPU %d", d.id);
  if (d.name[0]) s += format(" %s", d.name);
  s += format(" (sm_%d%d", d.cc_major, d.cc_minor);
  if (d.real_cc_major)
    s += format(" as set by BSVD_DEVICE_AS; the GPU is sm_%d%d", d.real_cc_major, d.real_cc_minor);
  s += format(", %d SMs, %d KiB shared memory per block", d.sm_count, d.smem_optin / 1024);
  s += d.clusters() ? ", clusters" : ", no clusters";
  if (d.fp64_ratio > 0) s += format(", FP64 1/%d of FP32", d.fp64_ratio);
  if (d.l2_bytes > 0) s += format(", L2 %lld MiB", d.l2_bytes >> 20);
  return s + ")";
}

} // namespace

std::string explain(const Plan &p) {
  std::string out =
      format("plan: %d matrices, precision %c, %s%s; ", p.count, p.precision,
             p.vectors ? "U, S and V" : "S only", p.hyperbolic ? ", hyperbolic SVD" : "");
  if (p.device.id >= 0)
    out += device_line(p.device) + format(", tuning %s\n", p.tuning.name);
  else
    out += "no GPU: every matrix on the CPU\n";
  out += format("fused column cap %d; preconditioning ", p.fused_cols);
  if (p.precondition_auto) {
    if (p.gram_auto)
      out += format("auto: Gram eigenvectors where the test on the Gram matrices of a sample "
                    "of each group (%d matrices) predicts a gain (RMS cosine >= %.0e, stable "
                    "rank of the cosines >= %.1f, effective rank >= %.1f), the plain blocked "
                    "path where not; the rest QRCP ",
                    p.tuning.gram.sample, p.tuning.gram.min_cos, p.tuning.gram.min_srank,
                    p.tuning.gram.min_rank);
    out += format("auto %s (%.2f matrices of %d columns, predicted cost %.3f, limit %.3f)\n",
                  p.precondition ? "on" : "off", p.precondition_count, p.precondition_cols,
                  p.precondition_cost, p.tuning.qrcp.max_cost);
  } else
    out += p.gram           ? "Gram eigenvectors (asked for)\n"
           : p.precondition ? "on (asked for)\n"
                            : "off\n";
  out += format("%3s  %-13s %9s  %-20s %-6s %10s  %s\n", "#", "path", "matrices", "rows x cols",
                "stream", "workspace", "parameters");
  int k = 0;
  for (const Group &g : p.groups) {
    out += format("%3d  %-13s %9zu  %-20s %-6s %10s  %s\n", ++k, path_name(g, p.cfg), g.size(),
                  (range(g.m) + " x " + range(g.n)).c_str(),
                  g.route == Route::kCpu ? "host"
                  : g.beside             ? "side"
                                         : "main",
                  bytes(g.workspace_bytes).c_str(), group_params(g, p).c_str());
  }
  out += format("workspace: %s\n", bytes(p.workspace_bytes).c_str());
  return out;
}

} // namespace bsvd::detail::plan
