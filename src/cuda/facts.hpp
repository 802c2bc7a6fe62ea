// The planner's view of the GPU paths on one device (plan::PathFacts, from
// the paths' own layouts), and the plan of a call on the current device.
#pragma once

#include "../plan/plan.hpp"

namespace bsvd::detail::cuda {

class CudaFacts final : public plan::PathFacts {
public:
  explicit CudaFacts(const plan::DeviceDesc &d) : d_(d) {}
  bool fused_fits(char prec, int mw, int nw, bool vectors) const override;
  int blocked_max_nb(char prec) const override;
  bool pair_fits(char prec, int mw, int nb) const override;
  int qrcp_cluster_blocks(char prec, int mw, int nw) const override;
  int tsqr_chunks(char prec, int mw, int nw) const override;
  int qr_apply_cols(char prec, int mw) const override;
  bool evd_warp_fits(char prec) const override;
  bool bidiag_reaches(char prec, int m, int n) const override;

private:
  plan::DeviceDesc d_;
};

// The current device's tuning table with the current overrides.
plan::Tuning current_tuning();

// The plan of a call on the current device (no visible GPU: the cuda
// backend's fallback plan, every non-empty matrix on the CPU).
plan::Plan call_plan(const plan::Shapes &shapes, const Config &cfg);

// Single rules on the current device, for tests and the benchmark: the
// QR front end's choice of an m x n matrix, the blocked path's block width
// and pair solver.
bool qr_route(char prec, int m, int n, bool vectors, int qr);
int blocked_nb(const Config &cfg, char prec);
int blocked_pair_mode(char prec, int m, int n, const Config &cfg, int nb);

} // namespace bsvd::detail::cuda
