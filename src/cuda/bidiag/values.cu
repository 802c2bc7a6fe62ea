// BidiagOp (op.hpp): GEBRD then bisection, per matrix in one thread block.
#include "../../plan/bidiag.hpp"
#include "../common/device_info.hpp"
#include "../common/upload.hpp"
#include "../common/ws_layout.hpp"
#include "../fused/fused.hpp" // precision_elem_bytes, precision_real_bytes
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

} // namespace

bool bidiag_values_fit(char prec, int m, int n, size_t smem) {
  return plan::bidiag_values_smem_bytes(m, n, precision_elem_bytes(prec),
                                        precision_real_bytes(prec)) <= smem;
}

bool BidiagOp::can_run(const plan::Plan &p, const plan::Group &g) {
  if (p.vectors || p.hyperbolic || g.size() == 0) return false;
  const size_t limit = size_t(max_smem_optin());
  for (size_t i = 0; i < g.m.size(); ++i)
    if (g.m[i] < 1 || g.n[i] < 1 || !bidiag_values_fit(p.precision, g.m[i], g.n[i], limit))
      return false;
  return true;
}

size_t BidiagOp::workspace_bytes(const plan::Plan &p, const plan::Group &g, int kcount) {
  return needs_slot_map(p, g, kcount) ? ws_align(g.size() * sizeof(int)) : 0;
}

template <class T> bsvd_status_t BidiagOp::run(const GroupArgs<T> &a) {
  const plan::Group &g = a.group;
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
