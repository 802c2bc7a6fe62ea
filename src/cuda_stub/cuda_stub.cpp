// The cuda backend of a build without CUDA: it exists and says so.
#include "../core/backends.hpp"
#include "../plan/plan.hpp"

#include <complex>

namespace bsvd::detail {

bool cuda_available() { return false; }
std::string cuda_status_reason() { return "this library was built without CUDA"; }

template <class T> int cuda_locate(const Batch<T> &, int *arg) {
  if (arg) *arg = 0;
  return 0; // without CUDA every pointer is taken as host memory
}

template <class T> size_t cuda_workspace_bytes(const Batch<T> &, const Config &) { return 0; }

template <class T> std::string cuda_explain(const Batch<T> &batch, const Config &cfg, int) {
  const plan::NoDeviceFacts facts;
  return "the cuda backend is not built into this library\n" +
         plan::explain(plan::make_plan(plan::shapes_of(batch), cfg, plan::DeviceDesc(), facts,
                                       plan::tuning_table(0, 0)));
}

template <class T>
bsvd_status_t cuda_gesvj(const Batch<T> &, const Config &, void *, void *, size_t, int *) {
  set_error("the cuda backend is not built into this library (configured without CUDA)");
  return BSVD_STATUS_BACKEND_UNAVAILABLE;
}

int cuda_device_count() { return 0; }
int cuda_current_device() { return -1; }

template <class T>
bsvd_status_t cuda_gesvj_on(int, const Batch<T> &b, const Config &c, void *, int *path) {
  return cuda_gesvj(b, c, nullptr, nullptr, 0, path);
}

template <class T> bsvd_status_t cuda_gesvj_distributed(const std::vector<int> &, const Batch<T> &b,
                                                        const Config &c, const dist::Settings &,
                                                        int *path) {
  return cuda_gesvj(b, c, nullptr, nullptr, 0, path);
}

int cuda_memory_space(const void *p) { return p ? 0 : -2; }

template <class T> bsvd_status_t cuda_gemv(const GemvBatch<T> &, void *, Exec) {
  set_error("the cuda backend is not built into this library (configured without CUDA)");
  return BSVD_STATUS_BACKEND_UNAVAILABLE;
}

template <class T> bsvd_status_t cuda_trsv(const TrsvBatch<T> &, void *, Exec) {
  set_error("the cuda backend is not built into this library (configured without CUDA)");
  return BSVD_STATUS_BACKEND_UNAVAILABLE;
}
template <class T> bsvd_status_t cuda_gels(const GelsBatch<T> &, void *, Exec) {
  set_error("the cuda backend is not built into this library (configured without CUDA)");
  return BSVD_STATUS_BACKEND_UNAVAILABLE;
}
template <class T> bsvd_status_t cuda_gelsd_apply(const GelsdBatch<T> &, void *, Exec) {
  set_error("the cuda backend is not built into this library (configured without CUDA)");
  return BSVD_STATUS_BACKEND_UNAVAILABLE;
}

bsvd_status_t cuda_scratch_alloc(void **, size_t, void *) {
  set_error("the cuda backend is not built into this library (configured without CUDA)");
  return BSVD_STATUS_BACKEND_UNAVAILABLE;
}
bsvd_status_t cuda_scratch_free(void *, void *) { return BSVD_STATUS_SUCCESS; }

template <class T> bsvd_status_t cuda_gebrd(const GebrdBatch<T> &, void *, Exec) {
  set_error("the cuda backend is not built into this library (configured without CUDA)");
  return BSVD_STATUS_BACKEND_UNAVAILABLE;
}

template <class T> bsvd_status_t cuda_gesvdx(const GesvdxBatch<T> &, void *, Exec) {
  set_error("the cuda backend is not built into this library (configured without CUDA)");
  return BSVD_STATUS_BACKEND_UNAVAILABLE;
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template bsvd_status_t cuda_gemv<T>(const GemvBatch<T> &, void *, Exec);                         \
  template bsvd_status_t cuda_gesvdx<T>(const GesvdxBatch<T> &, void *, Exec);                     \
  template bsvd_status_t cuda_gebrd<T>(const GebrdBatch<T> &, void *, Exec);                       \
  template bsvd_status_t cuda_trsv<T>(const TrsvBatch<T> &, void *, Exec);                         \
  template bsvd_status_t cuda_gels<T>(const GelsBatch<T> &, void *, Exec);                         \
  template bsvd_status_t cuda_gelsd_apply<T>(const GelsdBatch<T> &, void *, Exec);                 \
  template bsvd_status_t cuda_gesvj_distributed<T>(const std::vector<int> &, const Batch<T> &,     \
                                                   const Config &, const dist::Settings &, int *); \
  template bsvd_status_t cuda_gesvj_on<T>(int, const Batch<T> &, const Config &, void *, int *);   \
  template int cuda_locate<T>(const Batch<T> &, int *);                                            \
  template size_t cuda_workspace_bytes<T>(const Batch<T> &, const Config &);                       \
  template std::string cuda_explain<T>(const Batch<T> &, const Config &, int);                     \
  template bsvd_status_t cuda_gesvj<T>(const Batch<T> &, const Config &, void *, void *, size_t,   \
                                       int *);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail
