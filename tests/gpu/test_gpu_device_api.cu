// bsvd::device::svd called from user-style kernels: the same header on the
// GPU and on the host (its twin) -- S within a few u, T1-T4 on the GPU's
// results -- and a batched Kabsch kernel (rotation from the SVD of the 3 x 3
// cross-covariance, reflection fixed) that must recover known rotations.
#include <bsvd/device/svd.cuh>
#include <bsvd/device/warp_svd.cuh>

#include "device_api_test_util.cuh"

#include "testing/generate.hpp"
#include "testing/metrics.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>
#include <vector>

namespace {

// One thread per matrix, run-time sizes below the bound 8 x 8: column-major
// A (ld m), U (ld m), V (ld n) packed per matrix.
template <class T> __global__ void svd_kernel(int count, int m, int n, const T *A,
                                              typename bsvd::device::detail::traits<T>::R *S, T *U,
                                              T *V, int *info) {
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= count) return;
  const int k = m < n ? m : n;
  info[b] = bsvd::device::svd<T, 8, 8>(m, n, A + size_t(b) * m * n, m, S + size_t(b) * k,
                                       U + size_t(b) * m * k, m, V + size_t(b) * n * k, n);
}

template <class T> class DeviceApi : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(DeviceApi, Types);

TYPED_TEST(DeviceApi, UserKernelMatchesHostRun) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  using D = typename dev_of<T>::type;
  using R = R_t<T>;
  const double u = std::is_same_v<R, float> ? 0x1p-24 : 0x1p-53;
  for (auto [m, n] : std::vector<std::pair<int, int>>{{2, 2}, {3, 3}, {8, 8}, {5, 3}, {3, 7}}) {
    const int count = 100, k = std::min(m, n);
    std::vector<T> A(size_t(count) * m * n);
    for (int b = 0; b < count; ++b)
      bsvd::testing::generate<T>(bsvd::testing::all_families()[b % 6], m, n,
                                 bsvd::testing::default_kappa<T>(), 40 + b,
                                 A.data() + size_t(b) * m * n, m);
    T *dA, *dU, *dV;
    R *dS;
    int *dI;
    ASSERT_EQ(cudaMalloc(&dA, A.size() * sizeof(T)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dU, size_t(count) * m * k * sizeof(T)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dV, size_t(count) * n * k * sizeof(T)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dS, size_t(count) * k * sizeof(R)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dI, count * sizeof(int)), cudaSuccess);
    cudaMemcpy(dA, A.data(), A.size() * sizeof(T), cudaMemcpyHostToDevice);
    svd_kernel<D><<<(count + 63) / 64, 64>>>(count, m, n, reinterpret_cast<const D *>(dA), dS,
                                             reinterpret_cast<D *>(dU), reinterpret_cast<D *>(dV),
                                             dI);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<T> U(size_t(count) * m * k), V(size_t(count) * n * k);
    std::vector<R> S(size_t(count) * k);
    std::vector<int> info(count);
    cudaMemcpy(U.data(), dU, U.size() * sizeof(T), cudaMemcpyDeviceToHost);
    cudaMemcpy(V.data(), dV, V.size() * sizeof(T), cudaMemcpyDeviceToHost);
    cudaMemcpy(S.data(), dS, S.size() * sizeof(R), cudaMemcpyDeviceToHost);
    cudaMemcpy(info.data(), dI, count * sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(dA), cudaFree(dU), cudaFree(dV), cudaFree(dS), cudaFree(dI);
    for (int b = 0; b < count; ++b) {
      SCOPED_TRACE(testing::Message() << m << "x" << n << " b=" << b);
      EXPECT_EQ(info[b], 0);
      std::vector<R> Sh(k);
      bsvd::device::svd<T, 8, 8>(m, n, A.data() + size_t(b) * m * n, m, Sh.data(), nullptr, 1,
                                 nullptr, 1);
      for (int j = 0; j < k; ++j)
        EXPECT_LE(std::abs(double(S[size_t(b) * k + j]) - double(Sh[j])),
                  8 * std::sqrt(double(std::max(m, n))) * u * Sh[0]);
      const auto q = bsvd::testing::accuracy<T, R>(
          m, n, A.data() + size_t(b) * m * n, m, S.data() + size_t(b) * k,
          U.data() + size_t(b) * m * k, m, V.data() + size_t(b) * n * k, n, nullptr);
      EXPECT_TRUE(q.pass()) << q.t1 << " " << q.t2u << " " << q.t2v << " " << q.t4;
    }
  }
}

// Kabsch: for point sets P, Q (3 x K, Q = R P + t + noise), the rotation
// R = V diag(1, 1, d) U^T from H = (P - p0)(Q - q0)^T = U S V^T, d = det(V U^T).
template <class R>
__global__ void kabsch_kernel(int count, int K, const R *P, const R *Q, R *Rot, int *info) {
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= count) return;
  const R *p = P + size_t(b) * 3 * K, *q = Q + size_t(b) * 3 * K;
  R pc[3] = {0, 0, 0}, qc[3] = {0, 0, 0};
  for (int j = 0; j < K; ++j)
    for (int i = 0; i < 3; ++i) pc[i] += p[3 * j + i] / K, qc[i] += q[3 * j + i] / K;
  R H[9] = {}; // column-major
  for (int j = 0; j < K; ++j)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) H[r + 3 * c] += (p[3 * j + r] - pc[r]) * (q[3 * j + c] - qc[c]);
  R S[3], U[9], V[9];
  info[b] = bsvd::device::svd<R, 3, 3>(3, 3, H, 3, S, U, 3, V, 3);
  // d = det(V U^T) = det(V) det(U)
  auto det = [](const R *M) {
    return M[0] * (M[4] * M[8] - M[7] * M[5]) - M[3] * (M[1] * M[8] - M[7] * M[2]) +
           M[6] * (M[1] * M[5] - M[4] * M[2]);
  };
  const R d = det(V) * det(U) < 0 ? R(-1) : R(1);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      Rot[size_t(b) * 9 + r + 3 * c] = V[r] * U[c] + V[r + 3] * U[c + 3] + d * V[r + 6] * U[c + 6];
}

template <class R> void kabsch_case(double tol) {
  const int count = 5000, K = 20;
  std::mt19937_64 g(3);
  std::normal_distribution<double> nd;
  std::vector<R> P(size_t(count) * 3 * K), Q(P.size());
  std::vector<double> Rt(size_t(count) * 9);
  for (int b = 0; b < count; ++b) {
    // a random rotation from a random unit quaternion
    double w = nd(g), x = nd(g), y = nd(g), z = nd(g);
    const double s = std::sqrt(w * w + x * x + y * y + z * z);
    w /= s, x /= s, y /= s, z /= s;
    const double Rm[9] = {
        1 - 2 * (y * y + z * z), 2 * (x * y + z * w),     2 * (x * z - y * w),
        2 * (x * y - z * w),     1 - 2 * (x * x + z * z), 2 * (y * z + x * w),
        2 * (x * z + y * w),     2 * (y * z - x * w),     1 - 2 * (x * x + y * y)};
    for (int i = 0; i < 9; ++i) Rt[size_t(b) * 9 + i] = Rm[i];
    for (int j = 0; j < K; ++j) {
      double p[3] = {nd(g), nd(g), nd(g)};
      for (int i = 0; i < 3; ++i) P[size_t(b) * 3 * K + 3 * j + i] = R(p[i]);
      for (int r = 0; r < 3; ++r) {
        double v = 1.5 * r; // translation
        for (int c = 0; c < 3; ++c) v += Rm[r + 3 * c] * double(R(p[c]));
        Q[size_t(b) * 3 * K + 3 * j + r] = R(v);
      }
    }
  }
  R *dP, *dQ, *dR;
  int *dI;
  ASSERT_EQ(cudaMalloc(&dP, P.size() * sizeof(R)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dQ, Q.size() * sizeof(R)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dR, size_t(count) * 9 * sizeof(R)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dI, count * sizeof(int)), cudaSuccess);
  cudaMemcpy(dP, P.data(), P.size() * sizeof(R), cudaMemcpyHostToDevice);
  cudaMemcpy(dQ, Q.data(), Q.size() * sizeof(R), cudaMemcpyHostToDevice);
  kabsch_kernel<R><<<(count + 127) / 128, 128>>>(count, K, dP, dQ, dR, dI);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<R> Rot(size_t(count) * 9);
  std::vector<int> info(count);
  cudaMemcpy(Rot.data(), dR, Rot.size() * sizeof(R), cudaMemcpyDeviceToHost);
  cudaMemcpy(info.data(), dI, count * sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(dP), cudaFree(dQ), cudaFree(dR), cudaFree(dI);
  double worst = 0;
  for (int b = 0; b < count; ++b) {
    EXPECT_EQ(info[b], 0);
    for (int i = 0; i < 9; ++i)
      worst = std::max(worst, std::abs(double(Rot[size_t(b) * 9 + i]) - Rt[size_t(b) * 9 + i]));
  }
  std::printf("[kabsch] %s: worst |R - R_true| entry %.3g\n", sizeof(R) == 4 ? "s" : "d", worst);
  EXPECT_LT(worst, tol);
}

TEST(DeviceApiKabsch, RecoversRotationsDouble) {
  SKIP_WITHOUT_GPU();
  kabsch_case<double>(1e-12);
}
TEST(DeviceApiKabsch, RecoversRotationsFloat) {
  SKIP_WITHOUT_GPU();
  kabsch_case<float>(1e-4);
}

} // namespace

// bsvd::device::warp_svd from a user kernel: eight lanes per matrix (four
// matrices per warp), against the same header run on the host.

namespace {

template <class T> __global__ void warp_svd_kernel(int count, int m, int n, const T *A,
                                                   typename bsvd::device::detail::traits<T>::R *S,
                                                   T *U, T *V, int *info) {
  const int g = (blockIdx.x * blockDim.x + threadIdx.x) / 8, lane = threadIdx.x % 8;
  if (g >= count) return; // the group leaves together
  const int k = m < n ? m : n;
  const int r =
      bsvd::device::warp_svd<T, 8, 8, 8>(lane, m, n, A + size_t(g) * m * n, m, S + size_t(g) * k,
                                         U + size_t(g) * m * k, m, V + size_t(g) * n * k, n);
  if (lane == 0) info[g] = r;
}

TYPED_TEST(DeviceApi, WarpSvdUserKernelMatchesHostRun) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  using D = typename dev_of<T>::type;
  using R = R_t<T>;
  const double u = std::is_same_v<R, float> ? 0x1p-24 : 0x1p-53;
  for (auto [m, n] : std::vector<std::pair<int, int>>{{8, 8}, {5, 5}, {7, 3}, {3, 8}, {1, 1}}) {
    const int count = 101, k = std::min(m, n);
    std::vector<T> A(size_t(count) * m * n);
    for (int b = 0; b < count; ++b)
      bsvd::testing::generate<T>(bsvd::testing::all_families()[b % 6], m, n,
                                 bsvd::testing::default_kappa<T>(), 70 + b,
                                 A.data() + size_t(b) * m * n, m);
    T *dA, *dU, *dV;
    R *dS;
    int *dI;
    ASSERT_EQ(cudaMalloc(&dA, A.size() * sizeof(T)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dU, size_t(count) * m * k * sizeof(T)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dV, size_t(count) * n * k * sizeof(T)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dS, size_t(count) * k * sizeof(R)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dI, count * sizeof(int)), cudaSuccess);
    cudaMemcpy(dA, A.data(), A.size() * sizeof(T), cudaMemcpyHostToDevice);
    warp_svd_kernel<D><<<(count * 8 + 127) / 128, 128>>>(
        count, m, n, reinterpret_cast<const D *>(dA), dS, reinterpret_cast<D *>(dU),
        reinterpret_cast<D *>(dV), dI);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<T> U(size_t(count) * m * k), V(size_t(count) * n * k);
    std::vector<R> S(size_t(count) * k);
    std::vector<int> info(count);
    cudaMemcpy(U.data(), dU, U.size() * sizeof(T), cudaMemcpyDeviceToHost);
    cudaMemcpy(V.data(), dV, V.size() * sizeof(T), cudaMemcpyDeviceToHost);
    cudaMemcpy(S.data(), dS, S.size() * sizeof(R), cudaMemcpyDeviceToHost);
    cudaMemcpy(info.data(), dI, count * sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(dA), cudaFree(dU), cudaFree(dV), cudaFree(dS), cudaFree(dI);
    for (int b = 0; b < count; ++b) {
      SCOPED_TRACE(testing::Message() << m << "x" << n << " b=" << b);
      EXPECT_EQ(info[b], 0);
      std::vector<R> Sh(k);
      bsvd::device::warp_svd<T, 8, 8, 8>(0, m, n, A.data() + size_t(b) * m * n, m, Sh.data(),
                                         nullptr, 1, nullptr, 1);
      for (int j = 0; j < k; ++j)
        EXPECT_LE(std::abs(double(S[size_t(b) * k + j]) - double(Sh[j])),
                  8 * std::sqrt(double(std::max(m, n))) * u * Sh[0]);
      const auto q = bsvd::testing::accuracy<T, R>(
          m, n, A.data() + size_t(b) * m * n, m, S.data() + size_t(b) * k,
          U.data() + size_t(b) * m * k, m, V.data() + size_t(b) * n * k, n, nullptr);
      EXPECT_TRUE(q.pass()) << q.t1 << " " << q.t2u << " " << q.t2v << " " << q.t4;
    }
  }
}

} // namespace
