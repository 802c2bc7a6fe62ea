// BidiagOp (op.hpp): GEBRD then bisection. Matrices that fit take one
// kernel (each matrix in one thread block, on chip from start to end); a
// group with a matrix beyond that takes the batched GEBRD's launches
// (gebrd.cu: blocked panels, then on chip) on a copy of A in the
// workspace, then a bisection kernel.
#include "../../plan/bidiag.hpp"
#include "../common/device_info.hpp"
#include "../common/upload.hpp"
#include "../common/ws_layout.hpp"
#include "../fused/fused.hpp" // precision_elem_bytes, precision_real_bytes
#include "blocked.hpp"
#include "common.cuh"
#include "op.hpp"

#include <bsvd/device/bdsv.cuh>

#include <algorithm>
#include <complex>

namespace bsvd::detail::cuda {

namespace {

template <class T> size_t values_smem(int m, int n) {
  return plan::bidiag_values_smem_bytes(m, n, sizeof(T), sizeof(real_of_t<T>));
}

// Shared memory, in order: the team's 256 bytes of reduction slots, A
// (leading dimension m rounded up to odd, plan::gebrd_smem_ld), gebd2's
// work vector (max(m, n)), tauq and taup (k each), then the reals d, e (k
// each) and bisection's 2k scaled entries -- plan::bidiag_values_smem_bytes.
template <class T, class W = bidiag_t<T>> __global__ void __launch_bounds__(plan::kBidiagMaxThreads)
    bidiag_values_kernel(Batch<T> kb, const int *map, int count) {
  using R = real_of_t<T>;
  extern __shared__ __align__(16) unsigned char bidiag_smem[];
  const bsvd::device::block_team<R> team{reinterpret_cast<R *>(bidiag_smem)};
  W *sA = reinterpret_cast<W *>(bidiag_smem + 256);
  for (int slot = blockIdx.x; slot < count; slot += gridDim.x) {
    const int i = map ? map[slot] : slot;
    const int m = kb.dims.rows(i), n = kb.dims.cols(i), k = m < n ? m : n, mx = m < n ? n : m;
    const int lds = m | 1, lda = kb.A.ldm(i);
    const W *A = reinterpret_cast<const W *>(kb.A.ptr(i));
    W *work = sA + size_t(lds) * n, *tauq = work + mx, *taup = tauq + k;
    R *d = reinterpret_cast<R *>(taup + k), *e = d + k, *b = e + k;
    for (int t = team.rank(); t < m * n; t += team.size())
      sA[t % m + size_t(t / m) * lds] = A[t % m + size_t(t / m) * lda];
    team.sync();
    bsvd::device::gebd2(m, n, sA, lds, d, e, tauq, taup, work, team);
    team.sync(); // (gebd2's single writer of d and e is rank 0)
    const int st = bsvd::device::bdsv(k, d, e, kb.S.ptr(i), b, team);
    if (team.rank() == 0) {
      kb.info[i] = st;
      if (kb.sweeps) kb.sweeps[i] = 0;
    }
    team.sync(); // (the next matrix overwrites the shared memory)
  }
}

// The blocked regime's copy of each slot's A into the workspace (leading
// dimension ldc): A is the caller's, read only.
template <class T> __global__ void copy_in_kernel(Batch<T> kb, const int *map, int count, T *C,
                                                  int ldc, int64_t stride) {
  for (int s = blockIdx.y; s < count; s += gridDim.y) {
    const int i = map[s], m = kb.dims.rows(i), n = kb.dims.cols(i), lda = kb.A.ldm(i);
    const T *A = kb.A.ptr(i);
    T *c = C + s * stride;
    for (long t = blockIdx.x * long(blockDim.x) + threadIdx.x; t < long(m) * n;
         t += long(gridDim.x) * blockDim.x)
      c[t % m + (t / m) * ldc] = A[t % m + (t / m) * lda];
  }
}

// Its bisection: slot s's bidiagonal (d, e at s * kstride) to S, with
// bisection's 2k scaled entries in shared memory after the team's slots.
template <class T> __global__ void __launch_bounds__(plan::kBidiagMaxThreads)
    bdsv_kernel(Batch<T> kb, const int *map, int count, const real_of_t<T> *d,
                const real_of_t<T> *e, int64_t kstride) {
  using R = real_of_t<T>;
  extern __shared__ __align__(16) unsigned char bdsv_smem[];
  const bsvd::device::block_team<R> team{reinterpret_cast<R *>(bdsv_smem)};
  R *b = reinterpret_cast<R *>(bdsv_smem + 256);
  for (int s = blockIdx.x; s < count; s += gridDim.x) {
    const int i = map[s], k = min(kb.dims.rows(i), kb.dims.cols(i));
    const int st = bsvd::device::bdsv(k, d + s * kstride, e + s * kstride, kb.S.ptr(i), b, team);
    if (team.rank() == 0) {
      kb.info[i] = st;
      if (kb.sweeps) kb.sweeps[i] = 0;
    }
    team.sync();
  }
}

// The blocked regime's workspace, in order: the slot map and each slot's
// m, n and panels (ints), A's copies (mmax x nmax each), X and Y, tauq and
// taup (kmax each), d and e (kmax reals each).
struct BlockedLayout {
  size_t ints, acopy, xy, tau, de, total;
  int mmax = 1, nmax = 1, kmax = 1;
};

BlockedLayout blocked_layout(const plan::Plan &p, const plan::Group &g) {
  BlockedLayout L;
  const int count = int(g.size());
  for (size_t i = 0; i < g.m.size(); ++i)
    L.mmax = std::max(L.mmax, g.m[i]), L.nmax = std::max(L.nmax, g.n[i]),
    L.kmax = std::max(L.kmax, std::min(g.m[i], g.n[i]));
  const size_t elem = precision_elem_bytes(p.precision), relem = precision_real_bytes(p.precision);
  WsCursor c;
  L.ints = c.take(4 * size_t(count) * sizeof(int));
  L.acopy = c.take(size_t(count) * L.mmax * L.nmax * elem);
  L.xy = c.take(gebrd_xy_bytes(count, L.mmax, L.nmax, elem));
  L.tau = c.take(2 * size_t(count) * L.kmax * elem);
  L.de = c.take(2 * size_t(count) * L.kmax * relem);
  L.total = c.used;
  return L;
}

bool group_fits_on_chip(const plan::Plan &p, const plan::Group &g) {
  const size_t limit = size_t(max_smem_optin());
  for (size_t i = 0; i < g.m.size(); ++i)
    if (!bidiag_values_fit(p.precision, g.m[i], g.n[i], limit)) return false;
  return true;
}

template <class T> bsvd_status_t run_blocked(const GroupArgs<T> &a) {
  using R = real_of_t<T>;
  const plan::Group &g = a.group;
  const int count = int(g.size());
  const BlockedLayout L = blocked_layout(a.plan, g);
  std::vector<int> panels;
  GebrdShape shape;
  int which = -1;
  if (!gebrd_shape(g.m, g.n, sizeof(T), panels, shape, which)) {
    set_error("bidiag route: matrix %d (%d x %d) does not reach shared memory by panels",
              a.kidx[which], g.m[which], g.n[which]);
    return BSVD_STATUS_INTERNAL_ERROR; // (can_run checked it)
  }
  std::vector<int> ints(a.kidx.begin(), a.kidx.end());
  ints.insert(ints.end(), g.m.begin(), g.m.end());
  ints.insert(ints.end(), g.n.begin(), g.n.end());
  ints.insert(ints.end(), panels.begin(), panels.end());
  int *dints = reinterpret_cast<int *>(a.ws + L.ints);
  BSVD_CUDA_TRY(upload(dints, ints, a.stream));
  const int64_t astride = int64_t(L.mmax) * L.nmax;
  T *acopy = reinterpret_cast<T *>(a.ws + L.acopy);
  const int ymax = std::min(count, 65535);
  copy_in_kernel<T>
      <<<dim3(std::max(1, std::min(64, (L.mmax * L.nmax + 255) / 256)), ymax), 256, 0, a.stream>>>(
          a.kb, dints, count, acopy, L.mmax, astride);
  BSVD_CUDA_TRY(cudaGetLastError());

  GebrdRun<T> run;
  GebrdBatch<T> &b = run.b;
  b.count = count;
  b.dims.mv = dints + count;
  b.dims.nv = dints + 2 * count;
  b.A.base = acopy, b.A.stride = astride, b.A.ld = L.mmax;
  T *tau = reinterpret_cast<T *>(a.ws + L.tau);
  b.tauq.base = tau, b.tauq.stride = L.kmax;
  b.taup.base = tau + int64_t(count) * L.kmax, b.taup.stride = L.kmax;
  R *de = reinterpret_cast<R *>(a.ws + L.de);
  b.d.base = de, b.d.stride = L.kmax;
  b.e.base = de + int64_t(count) * L.kmax, b.e.stride = L.kmax;
  run.panels = dints + 3 * count;
  run.X = reinterpret_cast<T *>(a.ws + L.xy);
  run.ldx = L.mmax, run.ldy = L.nmax;
  run.xstride = int64_t(L.mmax) * plan::kGebrdBlock;
  run.ystride = int64_t(L.nmax) * plan::kGebrdBlock;
  run.Y = run.X + int64_t(count) * run.xstride;
  BSVD_CUDA_TRY(enqueue_gebrd(run, shape, a.stream));

  const size_t smem = 256 + 2 * size_t(L.kmax) * sizeof(R);
  if (smem > 48 * 1024)
    BSVD_CUDA_TRY(cudaFuncSetAttribute(bdsv_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       int(smem)));
  bdsv_kernel<T><<<std::min(count, 1 << 20), plan::bidiag_threads(L.kmax), smem, a.stream>>>(
      a.kb, dints, count, b.d.base, b.e.base, L.kmax);
  BSVD_CUDA_TRY(cudaGetLastError());
  return BSVD_STATUS_SUCCESS;
}

} // namespace

bool bidiag_values_fit(char prec, int m, int n, size_t smem) {
  return plan::bidiag_values_smem_bytes(m, n, precision_elem_bytes(prec),
                                        precision_real_bytes(prec)) <= smem;
}

bool bidiag_values_reach(char prec, int m, int n, size_t smem) {
  return bidiag_values_fit(prec, m, n, smem) ||
         plan::gebrd_panels(m, n, plan::kGebrdBlock, precision_elem_bytes(prec), 0, smem) >= 0;
}

bool BidiagOp::can_run(const plan::Plan &p, const plan::Group &g) {
  if (p.vectors || p.hyperbolic || g.size() == 0) return false;
  const size_t limit = size_t(max_smem_optin());
  for (size_t i = 0; i < g.m.size(); ++i)
    if (g.m[i] < 1 || g.n[i] < 1 || !bidiag_values_reach(p.precision, g.m[i], g.n[i], limit))
      return false;
  return true;
}

size_t BidiagOp::workspace_bytes(const plan::Plan &p, const plan::Group &g, int kcount) {
  if (!group_fits_on_chip(p, g)) return blocked_layout(p, g).total;
  return needs_slot_map(p, g, kcount) ? ws_align(g.size() * sizeof(int)) : 0;
}

template <class T> bsvd_status_t BidiagOp::run(const GroupArgs<T> &a) {
  const plan::Group &g = a.group;
  if (!group_fits_on_chip(a.plan, g)) return run_blocked(a);
  size_t smem = 256;
  int len = 1;
  for (size_t i = 0; i < g.m.size(); ++i) {
    smem = std::max(smem, values_smem<T>(g.m[i], g.n[i]));
    len = std::max({len, g.m[i], g.n[i]});
  }
  const int *map = nullptr;
  if (needs_slot_map(a.plan, g, a.kb.count)) {
    int *dmap = reinterpret_cast<int *>(a.ws);
    BSVD_CUDA_TRY(upload(dmap, a.kidx, a.stream));
    map = dmap;
  }
  if (smem > 48 * 1024)
    BSVD_CUDA_TRY(cudaFuncSetAttribute(bidiag_values_kernel<T>,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  const int count = int(g.size());
  const int grid = std::min(count, 1 << 20); // (the kernel strides over the rest)
  bidiag_values_kernel<T><<<grid, plan::bidiag_threads(len), smem, a.stream>>>(a.kb, map, count);
  BSVD_CUDA_TRY(cudaGetLastError());
  return BSVD_STATUS_SUCCESS;
}

#define BSVD_INSTANTIATE(T) template bsvd_status_t BidiagOp::run<T>(const GroupArgs<T> &);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail::cuda
