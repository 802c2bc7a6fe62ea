// CudaFacts and the current device's plan (facts.hpp).
#include "facts.hpp"

#include "blocked/blocked.hpp"
#include "common/device_info.hpp"
#include "fused/fused.hpp"
#include "qr/qr.hpp"

#include "../core/tsqr.hpp"
#include "bidiag/op.hpp"

#include <algorithm>
#include <complex>

namespace bsvd::detail::cuda {

bool CudaFacts::fused_fits(char prec, int mw, int nw, bool vectors) const {
  return cuda::fused_fits(prec, mw, nw, vectors, size_t(d_.smem_optin));
}

// The blocked path's eigensolver kernels have their shared memory fixed at
// compile time: an instance runs where its block plans fit a block (the
// narrow one's 128 and 256 plans: at most 52 KB, every supported GPU; the
// wide one's: d 105 KB, not on 99 KiB GPUs).
int CudaFacts::blocked_max_nb(char prec) const {
  auto fits = [&](int k) { return blocked_evd_smem_bytes(prec, k, 256) <= size_t(d_.smem_optin); };
  if (blocked_has_wide(prec) && fits(kBlockedKwide)) return kBlockedKwide / 2;
  return fits(kBlockedKmax) ? kBlockedKmax / 2 : 0;
}

bool CudaFacts::evd_warp_fits(char prec) const {
  return blocked_evd_smem_bytes(prec, kBlockedKmax, 32) <= size_t(d_.smem_optin);
}

bool CudaFacts::bidiag_reaches(char prec, int m, int n) const {
  return bidiag_values_reach(prec, m, n, size_t(d_.smem_optin));
}

bool CudaFacts::pair_fits(char prec, int mw, int nb) const {
  return blocked_k_of(nb) == kBlockedKmax &&
         blocked_pair_smem_bytes(prec, mw) <= size_t(d_.smem_optin);
}

int CudaFacts::qrcp_cluster_blocks(char prec, int mw, int nw) const {
  const size_t smem = size_t(d_.smem_optin);
  // (qrcp_cluster_fit takes a compute capability: 9 stands for "has
  // clusters", which the device's facts say -- also when BSVD_DEVICE_AS
  // describes a GPU without them)
  const int cc = d_.clusters() ? 9 : 0;
  switch (prec) {
  case 's': return qrcp_cluster_fit<float>(mw, nw, smem, cc);
  case 'd': return qrcp_cluster_fit<double>(mw, nw, smem, cc);
  case 'c': return qrcp_cluster_fit<std::complex<float>>(mw, nw, smem, cc);
  default: return qrcp_cluster_fit<std::complex<double>>(mw, nw, smem, cc);
  }
}

// TSQR's kernels hold a chunk, and then the stacked R factors, in one
// block's shared memory: at most kTsqrMaxStackBytes for the stack, which
// must also fit this GPU.
int CudaFacts::tsqr_chunks(char prec, int mw, int nw) const {
  const size_t eb = precision_elem_bytes(prec);
  const int nc = qr_tsqr_chunks(mw, nw, eb);
  if (nc < 2) return nc;
  const size_t rows = size_t(std::max(tsqr_chunk_height(mw, nc), nc * nw));
  return rows * size_t(nw) * eb <= size_t(d_.smem_optin) ? nc : 0;
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
  return plan::with_overrides(plan::tuning_for(d), current_overrides());
}

plan::Plan call_plan(const plan::Shapes &shapes, const Config &cfg) {
  const plan::DeviceDesc d = current_desc();
  const CudaFacts facts(d);
  return plan::make_plan(shapes, cfg, d, facts,
                         plan::with_overrides(plan::tuning_for(d), current_overrides()));
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
