// The hyperbolic SVD on the cuda backend (backends.hpp, cuda_gehsvj;
// docs/hsvd.md). Its GPU path is the fused kernel's hyperbolic instances
// (fused/kernel.cuh, HYP), so the call's plan is the SVD's with every other
// GPU path turned off: variant unblocked (no register tier, no blocked
// path), no QR front end, no preconditioning. A matrix beyond the fused
// kernel's envelope lands in the plan's cpu group:
//   - host data: the whole call is solved by the cpu solver (a strided call
//     has one size, so its matrices are all on the GPU or all beyond it);
//   - device data: NOT_SUPPORTED before anything runs (the hyperbolic
//     blocked path does not exist yet).
// Host data is staged through packed device copies of A and the outputs,
// all at once (a batch whose copies do not fit the GPU gets ALLOC_FAILED),
// written back row by row into the caller's leading dimensions (padding
// and the gaps between matrices stay untouched).
#include "../core/backends.hpp"
#include "call.hpp"
#include "common/ws_layout.hpp"
#include "facts.hpp"
#include "fused/op.hpp"

#include <algorithm>
#include <complex>
#include <vector>

#include <cuda_runtime.h>

namespace bsvd::detail {

namespace {

using exec::DeviceBuffer;
using plan::Group;
using plan::Route;

template <class T> plan::Plan hsvd_plan(const Batch<T> &batch, const Config &cfg) {
  Config c = cfg;
  c.variant = BSVD_VARIANT_UNBLOCKED;
  c.qr = -1;
  c.precondition = -1;
  return cuda::call_plan(plan::shapes_of(batch), c);
}

// rows x cols blocks of `count` matrices between strided layouts (elements
// of E): one copy when both are contiguous, one 2-D copy when each side's
// columns are evenly spaced across matrices, else one 2-D copy per matrix.
template <class E> cudaError_t copy_strided(E *dst, int64_t dld, int64_t dstride, const E *src,
                                            int64_t sld, int64_t sstride, int rows, int cols,
                                            int count, cudaMemcpyKind kind, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0 || count <= 0) return cudaSuccess;
  const size_t w = size_t(rows) * sizeof(E);
  const int64_t block = int64_t(rows) * cols;
  if (dld == rows && sld == rows && dstride == block && sstride == block)
    return cudaMemcpyAsync(dst, src, size_t(block) * count * sizeof(E), kind, stream);
  if (dstride == dld * cols && sstride == sld * cols)
    return cudaMemcpy2DAsync(dst, size_t(dld) * sizeof(E), src, size_t(sld) * sizeof(E), w,
                             size_t(cols) * count, kind, stream);
  for (int b = 0; b < count; ++b)
    if (cudaError_t e =
            cudaMemcpy2DAsync(dst + b * dstride, size_t(dld) * sizeof(E), src + b * sstride,
                              size_t(sld) * sizeof(E), w, size_t(cols), kind, stream))
      return e;
  return cudaSuccess;
}

// The fused group of the plan on kb (device-visible; kb's matrix b is the
// call's matrix b), with the signatures uploaded next to its workspace.
template <class T> bsvd_status_t launch_hsvd(const plan::Plan &p, const Batch<T> &kb,
                                             const int *nplus, cudaStream_t stream,
                                             DeviceBuffer &buf) {
  const Group *g = p.find(Route::kFused);
  if (!g) return BSVD_STATUS_SUCCESS;
  const size_t nb = cuda::ws_align(size_t(kb.count) * sizeof(int));
  const size_t wb = cuda::FusedOp::workspace_bytes(p, *g, kb.count);
  BSVD_CUDA_TRY(cudaMallocAsync(&buf.ptr, nb + wb, stream));
  buf.stream = stream;
  unsigned char *ws = static_cast<unsigned char *>(buf.ptr);
  int *dnplus = reinterpret_cast<int *>(ws);
  BSVD_CUDA_TRY(cudaMemcpyAsync(dnplus, nplus, size_t(kb.count) * sizeof(int),
                                cudaMemcpyHostToDevice, stream));
  const cuda::GroupArgs<T> a{p, *g, kb, kb, g->index, ws + nb, stream, dnplus};
  return cuda::FusedOp::run(a);
}

void report(const plan::Plan &p, const std::vector<int> &info, int *path) {
  if (path)
    exec::report_paths(
        p, [&](int b) { return info[size_t(b)]; }, {}, path);
}

template <class T> bsvd_status_t run_device(const Batch<T> &batch, const plan::Plan &p,
                                            const int *nplus, cudaStream_t stream, int *path) {
  if (const Group *cg = exec::cpu_group(p)) {
    set_error("the hyperbolic SVD's GPU path takes matrices that fit the one-kernel solver; "
              "matrix %d (%d x %d) does not (no blocked hyperbolic path yet): pass host data "
              "with opts->backend = cpu",
              cg->at(0), cg->rows(0), cg->cols(0));
    return BSVD_STATUS_NOT_SUPPORTED;
  }
  DeviceBuffer buf;
  BSVD_TRY_STATUS(launch_hsvd(p, batch, nplus, stream, buf));
  BSVD_CUDA_TRY(cudaStreamSynchronize(stream));
  if (path) {
    std::vector<int> info(size_t(batch.count));
    BSVD_CUDA_TRY(
        cudaMemcpy(info.data(), batch.info, info.size() * sizeof(int), cudaMemcpyDeviceToHost));
    report(p, info, path);
  }
  return BSVD_STATUS_SUCCESS;
}

template <class T> bsvd_status_t run_host(const Batch<T> &batch, const plan::Plan &p,
                                          const int *nplus, const Config &cfg, int threads,
                                          cudaStream_t stream, int *path) {
  using R = real_of_t<T>;
  if (exec::cpu_group(p)) return cpu_gehsvj(batch, nplus, cfg, threads, path);
  const int m = batch.dims.m, n = batch.dims.n, count = batch.count;
  const bool vec = batch.vectors;
  const size_t mn = size_t(m) * n, nn = size_t(n) * n;
  const size_t ba = cuda::ws_align(mn * count * sizeof(T)),
               bs = cuda::ws_align(size_t(n) * count * sizeof(R)), bu = vec ? ba : 0,
               bv = vec ? cuda::ws_align(nn * count * sizeof(T)) : 0,
               bi = cuda::ws_align(size_t(count) * sizeof(int));
  DeviceBuffer data;
  data.stream = stream;
  const size_t total = ba + bs + bu + bv + 2 * bi;
  if (const cudaError_t e = cudaMallocAsync(&data.ptr, total, stream)) {
    if (e != cudaErrorMemoryAllocation) BSVD_CUDA_TRY(e);
    cudaGetLastError();
    set_error("the hyperbolic SVD stages host data on the GPU at once, and the %zu bytes of "
              "this batch do not fit: split the batch, or pass device data",
              total);
    return BSVD_STATUS_ALLOC_FAILED;
  }
  unsigned char *d = static_cast<unsigned char *>(data.ptr);
  Batch<T> kb = batch;
  T *dA = reinterpret_cast<T *>(d);
  R *dS = reinterpret_cast<R *>(d + ba);
  T *dU = reinterpret_cast<T *>(d + ba + bs);
  T *dV = reinterpret_cast<T *>(d + ba + bs + bu);
  kb.info = reinterpret_cast<int *>(d + ba + bs + bu + bv);
  kb.sweeps = reinterpret_cast<int *>(d + ba + bs + bu + bv + bi);
  kb.A = {};
  kb.A.base = dA;
  kb.A.stride = int64_t(mn);
  kb.A.ld = std::max(m, 1);
  kb.S = {};
  kb.S.base = dS;
  kb.S.stride = n;
  kb.U = {};
  kb.V = {};
  if (vec) {
    kb.U.base = dU;
    kb.U.stride = int64_t(mn);
    kb.U.ld = std::max(m, 1);
    kb.V.base = dV;
    kb.V.stride = int64_t(nn);
    kb.V.ld = std::max(n, 1);
  }
  const Batch<T> &b = batch;
  BSVD_CUDA_TRY(copy_strided(dA, m, int64_t(mn), b.A.base, b.A.ld, b.A.stride, m, n, count,
                             cudaMemcpyHostToDevice, stream));
  DeviceBuffer work;
  BSVD_TRY_STATUS(launch_hsvd(p, kb, nplus, stream, work));
  // (each S a column of n rows: one 2-D copy for any strideS)
  BSVD_CUDA_TRY(copy_strided(b.S.base, b.S.stride, b.S.stride, static_cast<const R *>(dS), n, n, n,
                             1, count, cudaMemcpyDeviceToHost, stream));
  if (vec) {
    BSVD_CUDA_TRY(copy_strided(b.U.base, b.U.ld, b.U.stride, static_cast<const T *>(dU), m,
                               int64_t(mn), m, n, count, cudaMemcpyDeviceToHost, stream));
    BSVD_CUDA_TRY(copy_strided(b.V.base, b.V.ld, b.V.stride, static_cast<const T *>(dV), n,
                               int64_t(nn), n, n, count, cudaMemcpyDeviceToHost, stream));
  }
  BSVD_CUDA_TRY(cudaMemcpyAsync(b.info, kb.info, size_t(count) * sizeof(int),
                                cudaMemcpyDeviceToHost, stream));
  if (b.sweeps)
    BSVD_CUDA_TRY(cudaMemcpyAsync(b.sweeps, kb.sweeps, size_t(count) * sizeof(int),
                                  cudaMemcpyDeviceToHost, stream));
  BSVD_CUDA_TRY(cudaStreamSynchronize(stream));
  report(p, std::vector<int>(b.info, b.info + count), path);
  return BSVD_STATUS_SUCCESS;
}

} // namespace

template <class T> bsvd_status_t cuda_gehsvj(const Batch<T> &batch, const int *nplus,
                                             const Config &cfg, int threads, void *stream_ptr,
                                             int *path) {
  if (batch.count <= 0) return BSVD_STATUS_SUCCESS;
  if (!cuda_available()) {
    set_error("cuda backend: no CUDA device is visible");
    return BSVD_STATUS_BACKEND_UNAVAILABLE;
  }
  int arg = 0;
  const int loc = cuda_locate(batch, &arg);
  if (loc < 0) { // (the api layer refuses this before)
    set_error("internal error: argument %d is not in the memory space of A", arg);
    return BSVD_STATUS_INTERNAL_ERROR;
  }
  cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  const plan::Plan p = hsvd_plan(batch, cfg);
  return loc == 1 ? run_device(batch, p, nplus, stream, path)
                  : run_host(batch, p, nplus, cfg, threads, stream, path);
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template bsvd_status_t cuda_gehsvj<T>(const Batch<T> &, const int *, const Config &, int,        \
                                        void *, int *);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail
