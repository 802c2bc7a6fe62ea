// The bidiagonal route's device headers (gebrd.cuh, bdsv.cuh, blas.cuh)
// in kernels against their CPU twins: one matrix per thread (serial_team)
// and one matrix per thread block with the matrix in shared memory
// (block_team, the on-chip regime). The values of the route (gebd2, then
// bdsv) within 8 k u sigma_1 of the host's: not bit for bit, since nvcc
// contracts to FMA where the host compiler does not, and the block's norm
// reductions add in another order.
#include <bsvd/device/bdsv.cuh>
#include <bsvd/device/gebrd.cuh>

#include "device_api_test_util.cuh"

#include "testing/generate.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <vector>

namespace {

constexpr int kMaxDim = 32; // block kernel: A, work and b in shared memory

// One thread per matrix: gebd2 then bdsv, A (m x n, ld m) packed per matrix.
template <class T, class R> __global__ void route_thread(int count, int m, int n, T *A, R *d, R *e,
                                                         T *tq, T *tp, T *work, R *S, R *rwork,
                                                         int *info) {
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= count) return;
  const int k = m < n ? m : n, mx = m > n ? m : n;
  const size_t ok = size_t(b) * k;
  bsvd::device::gebd2(m, n, A + size_t(b) * m * n, m, d + ok, e + ok, tq + ok, tp + ok,
                      work + size_t(b) * mx);
  info[b] = bsvd::device::bdsv(k, d + ok, e + ok, S + ok, rwork + 2 * ok);
}

// One block per matrix, the matrix staged in shared memory (ld m + 1: odd
// for m even, against bank conflicts of the column-per-thread GEMV).
template <class T, class R>
__global__ void route_block(int m, int n, const T *A, R *d, R *e, R *S, int *info) {
  __shared__ T sA[(kMaxDim + 1) * kMaxDim];
  __shared__ T sw[kMaxDim], stq[kMaxDim], stp[kMaxDim];
  __shared__ R sd[kMaxDim], se[kMaxDim], sb[2 * kMaxDim], scratch[32];
  const bsvd::device::block_team<R> team{scratch};
  const int k = m < n ? m : n, lda = m + 1;
  const T *a = A + size_t(blockIdx.x) * m * n;
  for (int i = team.rank(); i < m * n; i += team.size()) sA[i % m + (i / m) * lda] = a[i];
  team.sync();
  bsvd::device::gebd2(m, n, sA, lda, sd, se, stq, stp, sw, team);
  const int inf = bsvd::device::bdsv(k, sd, se, S + size_t(blockIdx.x) * k, sb, team);
  for (int i = team.rank(); i < k; i += team.size()) {
    d[size_t(blockIdx.x) * k + i] = sd[i];
    e[size_t(blockIdx.x) * k + i] = i + 1 < k ? se[i] : R(0);
  }
  if (team.rank() == 0) info[blockIdx.x] = inf;
}

template <class X> X *to_device(const std::vector<X> &h) {
  X *p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, std::max<size_t>(h.size(), 1) * sizeof(X)), cudaSuccess);
  if (!h.empty()) cudaMemcpy(p, h.data(), h.size() * sizeof(X), cudaMemcpyHostToDevice);
  return p;
}
template <class X> std::vector<X> to_host(const X *p, size_t n) {
  std::vector<X> h(n);
  if (n) EXPECT_EQ(cudaMemcpy(h.data(), p, n * sizeof(X), cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

template <class T> class GpuBidiag : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(GpuBidiag, Types);

TYPED_TEST(GpuBidiag, KernelsMatchHostTwin) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  using D = typename dev_of<T>::type;
  using R = R_t<T>;
  const double u = std::is_same_v<R, float> ? 0x1p-24 : 0x1p-53;
  for (auto [m, n] : std::vector<std::pair<int, int>>{{1, 1}, {5, 3}, {3, 5}, {16, 16}, {32, 7}}) {
    const int count = 64, k = std::min(m, n), mx = std::max(m, n);
    std::vector<T> A(size_t(count) * m * n);
    for (int b = 0; b < count; ++b)
      bsvd::testing::generate<T>(bsvd::testing::all_families()[b % 6], m, n,
                                 bsvd::testing::default_kappa<T>(), 40 + b,
                                 A.data() + size_t(b) * m * n, m);
    // Host twin.
    std::vector<R> hd(size_t(count) * k), he(size_t(count) * k), hS(size_t(count) * k);
    for (int b = 0; b < count; ++b) {
      std::vector<T> a(A.begin() + size_t(b) * m * n, A.begin() + size_t(b + 1) * m * n), tq(k),
          tp(k), w(mx);
      std::vector<R> rw(2 * k);
      bsvd::device::gebd2(m, n, a.data(), m, &hd[b * k], &he[b * k], tq.data(), tp.data(),
                          w.data());
      bsvd::device::bdsv(k, &hd[b * k], &he[b * k], &hS[b * k], rw.data());
    }
    // One thread per matrix.
    std::vector<D> Ad(A.size());
    std::memcpy(Ad.data(), A.data(), A.size() * sizeof(T));
    D *dA = to_device(Ad), *dtq = to_device(std::vector<D>(size_t(count) * k)),
      *dtp = to_device(std::vector<D>(size_t(count) * k)),
      *dw = to_device(std::vector<D>(size_t(count) * mx));
    R *dd = to_device(std::vector<R>(size_t(count) * k)),
      *de = to_device(std::vector<R>(size_t(count) * k)),
      *dS = to_device(std::vector<R>(size_t(count) * k)),
      *drw = to_device(std::vector<R>(size_t(count) * 2 * k));
    int *dinfo = to_device(std::vector<int>(count, 99));
    route_thread<D, R>
        <<<(count + 63) / 64, 64>>>(count, m, n, dA, dd, de, dtq, dtp, dw, dS, drw, dinfo);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto S1 = to_host(dS, hS.size());
    for (int i : to_host(dinfo, count)) EXPECT_EQ(i, 0);
    for (size_t i = 0; i < hS.size(); ++i)
      EXPECT_LE(std::abs(double(S1[i]) - hS[i]), 8 * k * u * hS[i - i % k]) << m << "x" << n;
    // One block per matrix (fresh A: the thread kernel overwrote it).
    cudaMemcpy(dA, Ad.data(), Ad.size() * sizeof(D), cudaMemcpyHostToDevice);
    cudaMemset(dinfo, 0x7f, count * sizeof(int));
    route_block<D, R><<<count, 64>>>(m, n, dA, dd, de, dS, dinfo);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto S2 = to_host(dS, hS.size());
    for (int i : to_host(dinfo, count)) EXPECT_EQ(i, 0);
    for (size_t i = 0; i < hS.size(); ++i)
      EXPECT_LE(std::abs(double(S2[i]) - hS[i]), 8 * k * u * hS[i - i % k]) << m << "x" << n;
    for (void *p : {(void *)dA, (void *)dtq, (void *)dtp, (void *)dw, (void *)dd, (void *)de,
                    (void *)dS, (void *)drw, (void *)dinfo})
      cudaFree(p);
  }
}

} // namespace
