// Batched GEBRD on the GPU (backends.hpp cuda_gebrd; bsvd.h, "Batched BLAS
// and LAPACK"; blocked.hpp). Two regimes in one sequence of launches:
//   - on chip: one thread block per matrix, the matrix and gebd2's work
//     vector in shared memory, the device API's gebd2 (gebrd.cuh) on
//     block_team; every matrix that fits takes only this (the tail kernel
//     with no panels);
//   - blocked, for matrices beyond shared memory (MAGMA-BLAS Algorithm 1;
//     labrd.cuh): per panel of nb columns, one block per matrix runs
//     xLABRD on global memory (X and Y in a workspace), then a tiled
//     kernel applies the rank-2nb update to the trailing matrix -- until
//     the trailing matrix fits, when the tail kernel reduces it on chip.
// A matrix that no panel count brings within shared memory (very tall or
// wide: the last panel's trailing matrix is still too large) is
// NOT_SUPPORTED before anything is enqueued.
#include "../../core/backends.hpp"
#include "../../plan/bidiag.hpp"
#include "../common/device_info.hpp"
#include "../operation.hpp"
#include "blocked.hpp"
#include "common.cuh"
#include "tables.hpp"

#include <bsvd/device/labrd.cuh>

#include <algorithm>
#include <complex>

#include <cuda_runtime.h>

namespace bsvd::detail {

namespace cuda {
namespace {

constexpr int kNb = plan::kGebrdBlock;
constexpr int kTile = 32; // the update kernel's tile of C: 32 x 32 entries, 256 threads

template <class T, class W = bidiag_t<T>> struct Mat {
  using R = real_of_t<T>;
  int m, n, lda;
  W *A, *tauq, *taup;
  R *d, *e;
  __device__ Mat(const GebrdBatch<T> &b, int i)
      : m(b.dims.rows(i)), n(b.dims.cols(i)), lda(b.A.ldm(i)), A(reinterpret_cast<W *>(b.A.ptr(i))),
        tauq(reinterpret_cast<W *>(b.tauq.ptr(i))), taup(reinterpret_cast<W *>(b.taup.ptr(i))),
        d(b.d.ptr(i)), e(b.e.ptr(i)) {}
};

// Panel p of every matrix that has it: the previous panel's bidiagonal
// back into A (xGEBRD's copy-back, after its update has read the unit
// entries), then xLABRD on A(j:m, j:n), j = p nb.
template <class T, class W = bidiag_t<T>> __global__ void __launch_bounds__(plan::kBidiagMaxThreads)
    gebrd_panel_kernel(GebrdRun<T> r, int p) {
  using R = real_of_t<T>;
  __shared__ R scratch[32];
  const bsvd::device::block_team<R> team{scratch};
  for (int i = blockIdx.x; i < r.b.count; i += gridDim.x) {
    if (p >= r.panels[i]) continue;
    const Mat<T> a(r.b, i);
    const int j = p * kNb;
    if (p > 0)
      bsvd::device::detail::restore_panel(a.m, a.n, j - kNb, kNb, a.A, a.lda, a.d, a.e, team);
    bsvd::device::labrd(a.m - j, a.n - j, kNb, a.A + j + long(j) * a.lda, a.lda, a.d + j, a.e + j,
                        a.tauq + j, a.taup + j, reinterpret_cast<W *>(r.X + i * r.xstride), r.ldx,
                        reinterpret_cast<W *>(r.Y + i * r.ystride), r.ldy, team);
    team.sync(); // (the next matrix's restore does not wait on this one's last writes otherwise)
  }
}

// Panel p's update of the trailing matrix, C -= V Y^H + X U: a 32 x 32
// tile of C per block (lane = row: V and X coalesced, Y and U broadcast
// within a warp), each entry summed as labrd.cuh's update_entry sums it.
template <class T, class W = bidiag_t<T>> __global__ void __launch_bounds__(256)
    gebrd_update_kernel(GebrdRun<T> r, int p) {
  const int j = p * kNb, r0 = j + kNb;
  const int row = blockIdx.x * kTile + (threadIdx.x & 31);
  const int c_first = blockIdx.y * kTile + (threadIdx.x >> 5);
  for (int i = blockIdx.z; i < r.b.count; i += gridDim.z) {
    if (p >= r.panels[i]) continue;
    const Mat<T> a(r.b, i);
    const int rows = a.m - r0, cols = a.n - r0;
    if (row >= rows) continue;
    const W *V = a.A + r0 + long(j) * a.lda, *U = a.A + j + long(r0) * a.lda;
    const W *X = reinterpret_cast<const W *>(r.X + i * r.xstride) + kNb;
    const W *Y = reinterpret_cast<const W *>(r.Y + i * r.ystride) + kNb;
    W *C = a.A + r0 + long(r0) * a.lda;
    const int c_end = min(cols, int(blockIdx.y + 1) * kTile);
    for (int c = c_first; c < c_end; c += 8) {
      W &o = C[row + long(c) * a.lda];
      o = bsvd::device::detail::update_entry(o, kNb, V + row, a.lda, Y + c, r.ldy, X + row, r.ldx,
                                             U + long(c) * a.lda);
    }
  }
}

// The rest of each matrix on chip: the last panel's copy-back, then gebd2
// on the trailing (m - j) x (n - j) matrix in shared memory (256 bytes of
// the team's reduction slots, then A with leading dimension rounded up to
// odd -- plan::gebrd_smem_ld: the op C GEMV's column per thread hits
// distinct banks -- then the work vector); info from the whole of d and e.
template <class T, class W = bidiag_t<T>> __global__ void __launch_bounds__(plan::kBidiagMaxThreads)
    gebrd_tail_kernel(GebrdRun<T> r) {
  using R = real_of_t<T>;
  extern __shared__ __align__(16) unsigned char gebrd_smem[];
  const bsvd::device::block_team<R> team{reinterpret_cast<R *>(gebrd_smem)};
  W *sA = reinterpret_cast<W *>(gebrd_smem + 256);
  for (int i = blockIdx.x; i < r.b.count; i += gridDim.x) {
    const Mat<T> a(r.b, i);
    const int k = min(a.m, a.n);
    if (k == 0) {
      if (team.rank() == 0 && r.b.info) r.b.info[i] = 0;
      continue;
    }
    const int P = r.panels ? r.panels[i] : 0, j = P * kNb;
    if (P > 0)
      bsvd::device::detail::restore_panel(a.m, a.n, j - kNb, kNb, a.A, a.lda, a.d, a.e, team);
    const int mt = a.m - j, nt = a.n - j, lds = mt | 1;
    W *A = a.A + j + long(j) * a.lda, *work = sA + size_t(lds) * nt;
    for (int t = team.rank(); t < mt * nt; t += team.size())
      sA[t % mt + size_t(t / mt) * lds] = A[t % mt + size_t(t / mt) * a.lda];
    team.sync();
    bsvd::device::gebd2(mt, nt, sA, lds, a.d + j, a.e + j, a.tauq + j, a.taup + j, work, team);
    for (int t = team.rank(); t < mt * nt; t += team.size())
      A[t % mt + size_t(t / mt) * a.lda] = sA[t % mt + size_t(t / mt) * lds];
    if (team.rank() == 0 && r.b.info) {
      // (gebd2's single writer of d and e is rank 0: it reads them back.)
      bool finite = true;
      for (int q = 0; q < k; ++q)
        finite = finite && bsvd::device::detail::finite(a.d[q]) &&
                 (q + 1 >= k || bsvd::device::detail::finite(a.e[q]));
      r.b.info[i] = finite ? 0 : BSVD_INFO_NONFINITE;
    }
    team.sync(); // (the next matrix overwrites sA)
  }
}

} // namespace

bool gebrd_shape(const std::vector<int> &m, const std::vector<int> &n, size_t elem,
                 std::vector<int> &panels, GebrdShape &shape, int &which) {
  const size_t limit = size_t(max_smem_optin());
  panels.assign(m.size(), 0);
  shape = GebrdShape{};
  which = -1;
  for (size_t i = 0; i < m.size(); ++i) {
    if (std::min(m[i], n[i]) == 0) continue;
    const int p = plan::gebrd_panels(m[i], n[i], kNb, elem, 0, limit);
    if (p < 0) {
      which = int(i);
      return false;
    }
    panels[i] = p;
    const int mt = m[i] - p * kNb, nt = n[i] - p * kNb;
    shape.pmax = std::max(shape.pmax, p);
    if (p > 0) shape.mmax = std::max(shape.mmax, m[i]), shape.nmax = std::max(shape.nmax, n[i]);
    shape.tail_len = std::max({shape.tail_len, mt, nt});
    shape.tail_smem = std::max(shape.tail_smem, plan::gebrd_smem_bytes(mt, nt, elem));
  }
  return true;
}

size_t gebrd_xy_bytes(int count, int mmax, int nmax, size_t elem) {
  return size_t(count) * size_t(mmax + nmax) * kNb * elem;
}

template <class T>
cudaError_t enqueue_gebrd(const GebrdRun<T> &run, const GebrdShape &shape, cudaStream_t s) {
  const int count = run.b.count, grid = std::min(count, 1 << 20);
  if (count == 0) return cudaSuccess;
  for (int p = 0; p < shape.pmax; ++p) {
    gebrd_panel_kernel<T><<<grid, plan::kBidiagMaxThreads, 0, s>>>(run, p);
    const int rows = shape.mmax - (p + 1) * kNb, cols = shape.nmax - (p + 1) * kNb;
    const dim3 tiles((rows + kTile - 1) / kTile, (cols + kTile - 1) / kTile,
                     std::min(count, 65535));
    gebrd_update_kernel<T><<<tiles, 256, 0, s>>>(run, p);
  }
  if (cudaError_t e = cudaGetLastError()) return e;
  if (shape.tail_smem > 48 * 1024)
    if (cudaError_t e =
            cudaFuncSetAttribute(gebrd_tail_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 int(shape.tail_smem)))
      return e;
  gebrd_tail_kernel<T><<<grid, plan::bidiag_threads(shape.tail_len), shape.tail_smem, s>>>(run);
  return cudaGetLastError();
}

} // namespace cuda

template <class T>
bsvd_status_t cuda_gebrd(const GebrdBatch<T> &batch, void *stream_ptr, Exec exec) {
  using namespace cuda;
  cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  std::vector<int> m(batch.count), n(batch.count), panels;
  for (int i = 0; i < batch.count; ++i) m[i] = batch.dims.rows(i), n[i] = batch.dims.cols(i);
  GebrdShape shape;
  int which = -1;
  if (!gebrd_shape(m, n, sizeof(T), panels, shape, which)) {
    set_error("gebrd: matrix %d (%d x %d) is too tall or wide for the cuda backend's GEBRD: after "
              "its last panel of %d columns the trailing matrix still exceeds this GPU's %d bytes "
              "of shared memory per block (reduce it by a QR factorization first, or use host "
              "data: the cpu backend takes every size)",
              which, m[which], n[which], kNb, max_smem_optin());
    return BSVD_STATUS_NOT_SUPPORTED;
  }
  GebrdRun<T> run;
  run.b = batch;
  const int *pan = shape.pmax > 0 ? panels.data() : nullptr;
  DeviceTables tables;
  tables.add(run.b.A.array, run.b.count);
  tables.add(run.b.d.array, run.b.count);
  tables.add(run.b.e.array, run.b.count);
  tables.add(run.b.tauq.array, run.b.count);
  tables.add(run.b.taup.array, run.b.count);
  tables.add(run.b.A.ldv, run.b.count);
  tables.add(run.b.dims.mv, run.b.count);
  tables.add(run.b.dims.nv, run.b.count);
  tables.add(pan, run.b.count);
  BSVD_CUDA_TRY(tables.upload(stream));
  run.panels = pan;
  void *xy = nullptr;
  if (shape.pmax > 0) {
    BSVD_CUDA_TRY(cudaMallocAsync(
        &xy, gebrd_xy_bytes(batch.count, shape.mmax, shape.nmax, sizeof(T)), stream));
    run.ldx = shape.mmax, run.ldy = shape.nmax;
    run.xstride = int64_t(shape.mmax) * kNb, run.ystride = int64_t(shape.nmax) * kNb;
    run.X = static_cast<T *>(xy);
    run.Y = run.X + int64_t(batch.count) * run.xstride;
  }
  const cudaError_t e = enqueue_gebrd(run, shape, stream);
  if (xy) BSVD_CUDA_TRY(cudaFreeAsync(xy, stream));
  BSVD_CUDA_TRY(e);
  if (exec == Exec::kBlocking) BSVD_CUDA_TRY(cudaStreamSynchronize(stream));
  return BSVD_STATUS_SUCCESS;
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template bsvd_status_t cuda_gebrd<T>(const GebrdBatch<T> &, void *, Exec);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

namespace cuda {
#define BSVD_INSTANTIATE(T)                                                                        \
  template cudaError_t enqueue_gebrd<T>(const GebrdRun<T> &, const GebrdShape &, cudaStream_t);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE
} // namespace cuda

} // namespace bsvd::detail
