// Selected singular triplets on the GPU (backends.hpp cuda_gesvdx; bsvd.h,
// "Selected singular triplets"): A is copied into a workspace allocated in
// stream order, reduced there by the batched GEBRD's launches (gebrd.cu:
// blocked panels while the matrix exceeds shared memory, then on chip),
// and one thread block per matrix then finds its triplets from the
// reduction (gesvdx_one.hpp: the range, the device API's bdsvx on the
// block's first thread, the back-transformation by the reflectors split
// over the block). Every step reads the reduction from global memory; the
// first form, for few triplets of many matrices.
#include "../../core/backends.hpp"
#include "../../core/gesvdx_one.hpp"
#include "../../plan/bidiag.hpp"
#include "../common/device_info.hpp"
#include "../operation.hpp"
#include "blocked.hpp"
#include "common.cuh"
#include "tables.hpp"

#include <algorithm>
#include <complex>

#include <cuda_runtime.h>

namespace bsvd::detail {

namespace cuda {
namespace {

// Where each matrix's part of the workspace is: slot i's copy of A (lda =
// mmax), d and e (kmax each), tauq and taup (kmax each), gesvdx's rwork
// and work.
template <class T> struct GesvdxRun {
  using R = real_of_t<T>;
  GesvdxBatch<T> b; // device-visible arrays
  T *acopy = nullptr, *tau = nullptr, *work = nullptr;
  R *de = nullptr, *rwork = nullptr;
  int mmax = 1, kmax = 1;
  int64_t astride = 0, rstride = 0, wstride = 0;
};

template <class T> __global__ void gesvdx_copy_kernel(GesvdxRun<T> r) {
  for (int i = blockIdx.y; i < r.b.count; i += gridDim.y) {
    const int m = r.b.dims.rows(i), n = r.b.dims.cols(i), lda = r.b.A.ldm(i);
    if (m == 0 || n == 0) continue;
    const T *A = r.b.A.ptr(i);
    T *c = r.acopy + i * r.astride;
    for (long t = blockIdx.x * long(blockDim.x) + threadIdx.x; t < long(m) * n;
         t += long(gridDim.x) * blockDim.x)
      c[t % m + (t / m) * r.mmax] = A[t % m + (t / m) * lda];
  }
}

template <class T, class W = bidiag_t<T>> __global__ void __launch_bounds__(256)
    gesvdx_kernel(GesvdxRun<T> r) {
  using R = real_of_t<T>;
  __shared__ R scratch[32];
  const bsvd::device::block_team<R> team{scratch};
  for (int i = blockIdx.x; i < r.b.count; i += gridDim.x) {
    const int k = min(r.b.dims.rows(i), r.b.dims.cols(i));
    if (k == 0) {
      if (team.rank() == 0) r.b.ns[i] = 0, r.b.info[i] = 0;
      continue;
    }
    const R *d = r.de + i * int64_t(r.kmax), *e = d + int64_t(r.b.count) * r.kmax;
    const W *tauq = reinterpret_cast<const W *>(r.tau + i * int64_t(r.kmax));
    const W *taup = tauq + int64_t(r.b.count) * r.kmax;
    gesvdx_one(r.b, i, reinterpret_cast<const W *>(r.acopy + i * r.astride), r.mmax, d, e, tauq,
               taup, r.rwork + i * r.rstride,
               r.work ? reinterpret_cast<W *>(r.work + i * r.wstride) : nullptr, team);
    team.sync(); // (the next matrix's first member reuses the slots)
  }
}

} // namespace
} // namespace cuda

template <class T>
bsvd_status_t cuda_gesvdx(const GesvdxBatch<T> &batch, void *stream_ptr, Exec exec) {
  using namespace cuda;
  using R = real_of_t<T>;
  cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  const int count = batch.count;
  std::vector<int> m(count), n(count), panels;
  int mmax = 1, nmax = 1, kmax = 1, cmax = 1;
  for (int i = 0; i < count; ++i) {
    m[i] = batch.dims.rows(i), n[i] = batch.dims.cols(i);
    const int k = std::min(m[i], n[i]);
    mmax = std::max(mmax, m[i]), nmax = std::max(nmax, n[i]), kmax = std::max(kmax, k);
    cmax = std::max(cmax, gesvdx_room(batch, k));
  }
  GebrdShape shape;
  int which = -1;
  if (!gebrd_shape(m, n, sizeof(T), panels, shape, which)) {
    set_error("gesvdx: matrix %d (%d x %d) is too tall or wide for the cuda backend's GEBRD: after "
              "its last panel of %d columns the trailing matrix still exceeds this GPU's %d bytes "
              "of shared memory per block (reduce it by a QR factorization first, or use host "
              "data: the cpu backend takes every size)",
              which, m[which], n[which], plan::kGebrdBlock, max_smem_optin());
    return BSVD_STATUS_NOT_SUPPORTED;
  }
  GesvdxRun<T> r;
  r.b = batch;
  r.mmax = mmax, r.kmax = kmax;
  r.astride = int64_t(mmax) * nmax;
  r.rstride = bsvd::device::gesvdx_rwork(kmax);
  r.wstride = batch.vectors ? bsvd::device::gesvdx_work(mmax, nmax, cmax) : 0;
  const int *pan = shape.pmax > 0 ? panels.data() : nullptr;
  DeviceTables tables;
  tables.add(r.b.A.array, count);
  tables.add(r.b.S.array, count);
  tables.add(r.b.U.array, count);
  tables.add(r.b.V.array, count);
  tables.add(r.b.A.ldv, count);
  tables.add(r.b.U.ldv, count);
  tables.add(r.b.V.ldv, count);
  tables.add(r.b.dims.mv, count);
  tables.add(r.b.dims.nv, count);
  tables.add(pan, count);
  BSVD_CUDA_TRY(tables.upload(stream));

  // One allocation: A's copies, tauq and taup, work (T); then d and e,
  // rwork (R); then X and Y of the panels.
  const size_t c = size_t(count);
  auto al = [](size_t b) { return (b + 255) / 256 * 256; };
  const size_t bytes_a = al(c * size_t(r.astride) * sizeof(T)),
               bytes_tau = al(2 * c * size_t(kmax) * sizeof(T)),
               bytes_w = al(c * size_t(r.wstride) * sizeof(T)),
               bytes_de = al(2 * c * size_t(kmax) * sizeof(R)),
               bytes_rw = al(c * size_t(r.rstride) * sizeof(R)),
               bytes_xy =
                   shape.pmax > 0 ? gebrd_xy_bytes(count, shape.mmax, shape.nmax, sizeof(T)) : 0;
  void *ws = nullptr;
  BSVD_CUDA_TRY(
      cudaMallocAsync(&ws, bytes_a + bytes_tau + bytes_w + bytes_de + bytes_rw + bytes_xy, stream));
  unsigned char *p = static_cast<unsigned char *>(ws);
  r.acopy = reinterpret_cast<T *>(p), p += bytes_a;
  r.tau = reinterpret_cast<T *>(p), p += bytes_tau;
  r.work = bytes_w ? reinterpret_cast<T *>(p) : nullptr, p += bytes_w;
  r.de = reinterpret_cast<R *>(p), p += bytes_de;
  r.rwork = reinterpret_cast<R *>(p), p += bytes_rw;

  GebrdRun<T> g;
  GebrdBatch<T> &gb = g.b;
  gb.count = count;
  gb.dims = r.b.dims;
  gb.A.base = r.acopy, gb.A.stride = r.astride, gb.A.ld = mmax;
  gb.d.base = r.de, gb.d.stride = kmax;
  gb.e.base = r.de + int64_t(count) * kmax, gb.e.stride = kmax;
  gb.tauq.base = r.tau, gb.tauq.stride = kmax;
  gb.taup.base = r.tau + int64_t(count) * kmax, gb.taup.stride = kmax;
  g.panels = pan;
  if (shape.pmax > 0) {
    g.ldx = shape.mmax, g.ldy = shape.nmax;
    g.xstride = int64_t(shape.mmax) * plan::kGebrdBlock;
    g.ystride = int64_t(shape.nmax) * plan::kGebrdBlock;
    g.X = reinterpret_cast<T *>(p);
    g.Y = g.X + int64_t(count) * g.xstride;
  }
  const int ymax = std::min(count, 65535), grid = std::min(count, 1 << 20);
  gesvdx_copy_kernel<T>
      <<<dim3(std::max(1, std::min(64, int((r.astride + 255) / 256))), ymax), 256, 0, stream>>>(r);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = enqueue_gebrd(g, shape, stream);
  if (e == cudaSuccess) {
    gesvdx_kernel<T><<<grid, 256, 0, stream>>>(r);
    e = cudaGetLastError();
  }
  const cudaError_t f = cudaFreeAsync(ws, stream);
  BSVD_CUDA_TRY(e);
  BSVD_CUDA_TRY(f);
  if (exec == Exec::kBlocking) BSVD_CUDA_TRY(cudaStreamSynchronize(stream));
  return BSVD_STATUS_SUCCESS;
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template bsvd_status_t cuda_gesvdx<T>(const GesvdxBatch<T> &, void *, Exec);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail
