// CudaFacts and the current device's plan (facts.hpp).
#include "facts.hpp"

#include "blocked/blocked.hpp"
#include "common/device_info.hpp"
#include "fused/fused.hpp"
#include "qr/qr.hpp"

#include <algorithm>
#include <complex>

namespace bsvd::detail::cuda {

bool CudaFacts::fused_fits(char prec, int mw, int nw, bool vectors) const {
  return cuda::fused_fits(prec, mw, nw, vectors, size_t(d_.smem_optin));
}

int CudaFacts::blocked_max_nb(char prec) const {
  return (blocked_has_wide(prec) ? kBlockedKwide : kBlockedKmax) / 2;
}

bool CudaFacts::pair_fits(char prec, int mw, int nb) const {
  return blocked_k_of(nb) == kBlockedKmax &&
         blocked_pair_smem_bytes(prec, mw) <= size_t(d_.smem_optin);
}

int CudaFacts::qrcp_cluster_blocks(char prec, int mw, int nw) const {
  const size_t smem = size_t(d_.smem_optin);
  switch (prec) {
  case 's': return qrcp_cluster_fit<float>(mw, nw, smem, d_.cc_major);
  case 'd': return qrcp_cluster_fit<double>(mw, nw, smem, d_.cc_major);
  case 'c': return qrcp_cluster_fit<std::complex<float>>(mw, nw, smem, d_.cc_major);
  default: return qrcp_cluster_fit<std::complex<double>>(mw, nw, smem, d_.cc_major);
  }
}

int CudaFacts::tsqr_chunks(char prec, int mw, int nw) const {
  return qr_tsqr_chunks(mw, nw, precision_elem_bytes(prec));
}

int CudaFacts::qr_apply_cols(char prec, int mw) const {
  return cuda::qr_apply_cols(size_t(mw) * precision_elem_bytes(prec), size_t(d_.smem_optin));
}

namespace {
// The current device (id -1 when there is none).
plan::DeviceDesc current_desc() {
  plan::DeviceDesc d;
  if (!gpu_visible() || !current_device_desc(d)) d = plan::DeviceDesc();
  return d;
}
} // namespace

plan::Tuning current_tuning() {
  const plan::DeviceDesc d = current_desc();
  return plan::with_overrides(plan::tuning_table(d.cc_major, d.cc_minor), current_overrides());
}

plan::Plan call_plan(const plan::Shapes &shapes, const Config &cfg) {
  const plan::DeviceDesc d = current_desc();
  const CudaFacts facts(d);
  return plan::make_plan(
      shapes, cfg, d, facts,
      plan::with_overrides(plan::tuning_table(d.cc_major, d.cc_minor), current_overrides()));
}

bool qr_route(char prec, int m, int n, bool vectors, int qr) {
  const CudaFacts facts(current_desc());
  return plan::qr_route(prec, m, n, vectors, qr, facts, current_tuning());
}

int blocked_nb(const Config &cfg, char prec) {
  const CudaFacts facts(current_desc());
  return plan::blocked_nb(cfg, prec, facts);
}

int blocked_pair_mode(char prec, int m, int n, const Config &cfg, int nb) {
  const CudaFacts facts(current_desc());
  return plan::blocked_pair_mode(prec, std::max(m, n), cfg, nb, facts, current_tuning());
}

} // namespace bsvd::detail::cuda
