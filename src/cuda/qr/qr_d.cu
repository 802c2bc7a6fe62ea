// QR-preprocessing instance for one precision (qr.hpp, launch.cuh).
#include "launch.cuh"

namespace bsvd::detail::cuda {

template <> cudaError_t qr_factor<double>(const Batch<double> &kb, const QrMat *mats, int count,
                                          int nw_max, unsigned char *ws, const QrLayout &L,
                                          cudaStream_t stream, const QrLaunch &q,
                                          const QrMat *hmats) {
  return qr_factor_impl(kb, mats, count, nw_max, ws, L, stream, q, hmats);
}
template <> cudaError_t qr_finish<double>(const Batch<double> &kb, const QrMat *mats, int count,
                                          int nw_max, unsigned char *ws, const QrLayout &L,
                                          cudaStream_t stream, const QrLaunch &q,
                                          const QrMat *hmats) {
  return qr_finish_impl(kb, mats, count, nw_max, ws, L, stream, q, hmats);
}

template int qrcp_cluster_fit<double>(int mw, int nw, size_t smem, int cc_major);

} // namespace bsvd::detail::cuda
