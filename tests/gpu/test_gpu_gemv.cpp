// Batched GEMV on the GPU (src/cuda/bidiag/gemv.cu) through the C API with
// device data, against the cpu backend (the same device function on one
// thread, blas.cuh): every op, increments of both signs, the scalars at
// BLAS's edges, the three forms, the _async forms on a stream and in a
// CUDA graph, and the memory rules of the building blocks (bsvd.h).
#include "../unit/blas_api_helpers.hpp"
#include "blas_gpu_util.hpp"

#include <bsvd/bsvd.h>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <vector>

namespace {

using namespace blas_test;
using blas_gpu::Dev;

template <class T> class GpuGemv : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(GpuGemv, Types);

// The kernel's y against the cpu backend's, entry by entry, within
// 4 (len(x) + 2) u (|alpha| sum |a| |x| + |beta| |y0|): the two run the same
// operations per entry (one output per thread), so they differ at most by
// where the compilers contract to FMA; the largest gap is printed.
template <class T> double gap_bound(int len, double scale) {
  return 4 * (len + 2) * unit_roundoff<T>() * scale + 1e-300;
}

TYPED_TEST(GpuGemv, StridedMatchesCpu) {
  SKIP_WITHOUT_GPU_BLAS();
  using T = TypeParam;
  std::mt19937_64 g(3);
  double worst = 0;
  for (auto [m, n] : std::vector<std::pair<int, int>>{
           {0, 5}, {1, 1}, {7, 3}, {3, 7}, {32, 32}, {33, 65}, {200, 17}, {17, 300}, {513, 64}})
    for (bsvd_op_t op : {BSVD_OP_N, BSVD_OP_T, BSVD_OP_C})
      for (auto [ix, iy] : std::vector<std::pair<int, int>>{{1, 1}, {-2, 3}})
        for (int sc = 0; sc < 3; ++sc) {
          const int batch = 37, lda = m + 1, lx = op == BSVD_OP_N ? n : m,
                    ly = op == BSVD_OP_N ? m : n;
          const int64_t sA = int64_t(lda) * n, sx = 1 + int64_t(std::max(lx, 1)) * 2,
                        sy = 1 + int64_t(std::max(ly, 1)) * 3;
          std::vector<T> A(size_t(std::max<int64_t>(sA, 1)) * batch), x(size_t(sx) * batch),
              y(size_t(sy) * batch);
          for (T &v : A) v = random_value<T>(g);
          for (T &v : x) v = random_value<T>(g);
          for (T &v : y) v = random_value<T>(g);
          const T alpha = sc == 2 ? T(0) : random_value<T>(g),
                  beta = sc == 1 ? T(0) : random_value<T>(g);
          std::vector<T> yc = y;
          bsvd_options_t o = options(BSVD_BACKEND_CPU);
          ASSERT_EQ(Api<T>::gemv_strided(false, op, m, n, cv(alpha), cp(A.data()), lda, sA,
                                         cp(x.data()), ix, sx, cv(beta), cp(yc.data()), iy, sy,
                                         batch, &o),
                    0);
          Dev<T> dA(A), dx(x), dy(y);
          o.backend = BSVD_BACKEND_AUTO; // device data: cuda
          ASSERT_EQ(Api<T>::gemv_strided(false, op, m, n, cv(alpha), cp(dA.p), lda, sA, cp(dx.p),
                                         ix, sx, cv(beta), cp(dy.p), iy, sy, batch, &o),
                    0)
              << bsvd_last_error();
          const std::vector<T> yg = dy.host();
          // Both backends form each entry in one order (op T / C: the
          // same plan::gemv_lanes partial sums and butterfly): same bits.
          EXPECT_EQ(std::memcmp(yg.data(), yc.data(), yg.size() * sizeof(T)), 0)
              << m << "x" << n << " op " << op << " sc " << sc << ": not the cpu's bits";
          for (size_t i = 0; i < y.size(); ++i) {
            const double scale = 2 * std::abs(alpha) * lx + std::abs(beta) * std::abs(y[i]);
            const double d = std::abs(yg[i] - yc[i]);
            worst = std::max(worst, d / gap_bound<T>(lx, scale + 1e-30));
            ASSERT_LE(d, gap_bound<T>(lx, scale))
                << m << "x" << n << " op " << op << " i " << i << " sc " << sc;
          }
        }
  std::printf("[ gemv ] GPU vs cpu: largest gap %.3g of the bound\n", worst);
}

TYPED_TEST(GpuGemv, FormsAndAsyncAgree) {
  SKIP_WITHOUT_GPU_BLAS();
  using T = TypeParam;
  std::mt19937_64 g(8);
  const std::vector<int> mv = {5, 0, 64, 1, 130, 33}, nv = {9, 4, 64, 70, 3, 33};
  const int batch = int(mv.size());
  std::vector<std::vector<T>> A(batch), x(batch), y(batch);
  std::vector<int> lda(batch), one(batch, 1);
  for (int b = 0; b < batch; ++b) {
    lda[b] = mv[b] + 3;
    A[b].resize(size_t(lda[b]) * nv[b] + 1);
    x[b].resize(size_t(std::max(mv[b], 1)));
    y[b].resize(size_t(std::max(nv[b], 1)));
    for (T &v : A[b]) v = random_value<T>(g);
    for (T &v : x[b]) v = random_value<T>(g);
    for (T &v : y[b]) v = random_value<T>(g);
  }
  const T alpha = random_value<T>(g), beta = random_value<T>(g);
  // The cpu backend, then the kernel: vbatched blocking, vbatched _async on
  // a stream, and the same captured in a graph and replayed.
  std::vector<std::vector<T>> want = y;
  {
    std::vector<const T *> Ap, xp;
    std::vector<T *> yp;
    for (int b = 0; b < batch; ++b)
      Ap.push_back(A[b].data()), xp.push_back(x[b].data()), yp.push_back(want[b].data());
    bsvd_options_t o = options(BSVD_BACKEND_CPU);
    ASSERT_EQ(Api<T>::gemv_vbatched(false, BSVD_OP_T, mv.data(), nv.data(), cv(alpha),
                                    cpa(Ap.data()), lda.data(), cpa(xp.data()), one.data(),
                                    cv(beta), cpa(yp.data()), one.data(), batch, &o),
              0);
  }
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  for (int mode = 0; mode < 3; ++mode) {
    std::vector<Dev<T> *> dA, dx, dy;
    std::vector<const T *> Ap, xp;
    std::vector<T *> yp;
    for (int b = 0; b < batch; ++b) {
      dA.push_back(new Dev<T>(A[b])), dx.push_back(new Dev<T>(x[b])),
          dy.push_back(new Dev<T>(y[b]));
      Ap.push_back(dA[b]->p), xp.push_back(dx[b]->p), yp.push_back(dy[b]->p);
    }
    bsvd_options_t o = options(BSVD_BACKEND_AUTO);
    o.stream = s;
    auto call = [&](bool async) {
      return Api<T>::gemv_vbatched(async, BSVD_OP_T, mv.data(), nv.data(), cv(alpha),
                                   cpa(Ap.data()), lda.data(), cpa(xp.data()), one.data(), cv(beta),
                                   cpa(yp.data()), one.data(), batch, &o);
    };
    if (mode == 0) ASSERT_EQ(call(false), 0) << bsvd_last_error();
    if (mode == 1) {
      ASSERT_EQ(call(true), 0) << bsvd_last_error();
      ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    }
    if (mode == 2) {
      cudaGraph_t graph;
      cudaGraphExec_t exec;
      ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
      ASSERT_EQ(call(true), 0) << bsvd_last_error();
      ASSERT_EQ(cudaStreamEndCapture(s, &graph), cudaSuccess);
      ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
      ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
      cudaGraphExecDestroy(exec);
      cudaGraphDestroy(graph);
    }
    for (int b = 0; b < batch; ++b) {
      const std::vector<T> got = dy[b]->host();
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_LE(
            std::abs(got[i] - want[b][i]),
            gap_bound<T>(mv[b], 2 * std::abs(alpha) * mv[b] + std::abs(beta) * std::abs(y[b][i])))
            << "mode " << mode << " b " << b << " i " << i;
      delete dA[b], delete dx[b], delete dy[b];
    }
  }
  cudaStreamDestroy(s);
}

TEST(GpuGemvArgs, MemoryRules) {
  SKIP_WITHOUT_GPU_BLAS();
  std::vector<double> A(12, 1.0), x(4, 1.0), y(4, 0.0);
  Dev<double> dA(A), dx(x), dy(y);
  bsvd_options_t o = options(BSVD_BACKEND_CPU);
  // cpu backend with device data: -position of y (the blamed operand).
  EXPECT_EQ(bsvd_dgemv_strided_batched(BSVD_OP_N, 4, 3, 1.0, dA.p, 4, 0, dx.p, 1, 0, 0.0, dy.p, 1,
                                       4, 1, &o),
            -12);
  // cuda backend with host data: not supported (not staged).
  o.backend = BSVD_BACKEND_CUDA;
  EXPECT_EQ(bsvd_dgemv_strided_batched(BSVD_OP_N, 4, 3, 1.0, A.data(), 4, 0, x.data(), 1, 0, 0.0,
                                       y.data(), 1, 4, 1, &o),
            BSVD_STATUS_NOT_SUPPORTED);
  // mixed: x on the host, A on the device.
  o.backend = BSVD_BACKEND_AUTO;
  EXPECT_EQ(bsvd_dgemv_strided_batched(BSVD_OP_N, 4, 3, 1.0, dA.p, 4, 0, x.data(), 1, 0, 0.0, dy.p,
                                       1, 4, 1, &o),
            -8);
  // _async with host data: -position.
  EXPECT_LT(bsvd_dgemv_strided_batched_async(BSVD_OP_N, 4, 3, 1.0, A.data(), 4, 0, x.data(), 1, 0,
                                             0.0, y.data(), 1, 4, 1, &o),
            0);
  // device data on the auto backend: 3 = 1 + 1 + 1.
  EXPECT_EQ(bsvd_dgemv_strided_batched(BSVD_OP_N, 4, 3, 1.0, dA.p, 4, 0, dx.p, 1, 0, 0.0, dy.p, 1,
                                       4, 1, &o),
            0);
  EXPECT_EQ(dy.host(), std::vector<double>(4, 3.0));
}

} // namespace
