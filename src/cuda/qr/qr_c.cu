// QR-preprocessing instance for one precision (qr.hpp, launch.cuh).
#include "launch.cuh"

namespace bsvd::detail::cuda {

template <>
cudaError_t qr_factor<std::complex<float>>(const Batch<std::complex<float>> &kb, const QrMat *mats, int count, int nw_max,
                          unsigned char *ws, const QrLayout &L, cudaStream_t stream, int threads, const QrMat *hmats) {
  return qr_factor_impl(kb, mats, count, nw_max, ws, L, stream, threads, hmats);
}
template <>
cudaError_t qr_finish<std::complex<float>>(const Batch<std::complex<float>> &kb, const QrMat *mats, int count, int nw_max,
                          unsigned char *ws, const QrLayout &L, cudaStream_t stream, int threads, const QrMat *hmats) {
  return qr_finish_impl(kb, mats, count, nw_max, ws, L, stream, threads, hmats);
}

template int qrcp_cluster_fit<std::complex<float>>(int m, int n);

} // namespace bsvd::detail::cuda
