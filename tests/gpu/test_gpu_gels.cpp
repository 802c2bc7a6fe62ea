// Batched GELS on the GPU (src/cuda/bidiag/gels.cu) through the C API with
// device data, against the cpu backend (the same device function on one
// thread, gels.cuh): the four problems over shapes across the TRSV block
// of 32 and the block's thread counts, a rank-deficient and a NaN matrix
// in the batch (info; B left as it came), variable sizes with empty
// matrices, the _async form on a stream and in a CUDA graph, and the
// memory rules. The results agree to roundoff, not bits: the reflectors'
// norms are team sums, added in another order by a block of threads.
#include "../unit/blas_api_helpers.hpp"
#include "blas_gpu_util.hpp"

#include <bsvd/bsvd.h>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <tuple>
#include <vector>

namespace {

using namespace blas_test;
using blas_gpu::Dev;

template <class T> class GpuGels : public ::testing::Test {};

// Whether two arrays hold the same bits (NaN included).
template <class T> bool same_bits(const std::vector<T> &a, const std::vector<T> &b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(GpuGels, Types);

// count systems m x n with a raised diagonal (condition below 3), lda = m + 1.
template <class T> std::vector<T> systems(int count, int m, int n, int lda, std::mt19937_64 &g) {
  std::vector<T> A(size_t(lda) * std::max(n, 1) * count);
  for (T &v : A) v = random_value<T>(g);
  for (int b = 0; b < count; ++b)
    for (int i = 0; i < std::min(m, n); ++i)
      A[size_t(b) * lda * std::max(n, 1) + i + size_t(i) * lda] += T(R_t<T>(std::max(m, n)));
  return A;
}

// |gpu - cpu| <= 64 max(m, n) u max |cpu|, NaN where the cpu has NaN.
template <class T> void compare(const std::vector<T> &got, const std::vector<T> &want, int len,
                                double &worst, const char *what) {
  double xmax = 0;
  for (const T &v : want)
    if (std::isfinite(std::abs(v))) xmax = std::max(xmax, double(std::abs(v)));
  const double bound = 64 * std::max(len, 1) * unit_roundoff<T>() * xmax + 1e-300;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(std::abs(want[i]))) {
      EXPECT_FALSE(std::isfinite(std::abs(got[i]))) << what << " i " << i;
      continue;
    }
    const double d = std::abs(got[i] - want[i]);
    worst = std::max(worst, d / bound);
    ASSERT_LE(d, bound) << what << " i " << i;
  }
}

TYPED_TEST(GpuGels, StridedMatchesCpu) {
  SKIP_WITHOUT_GPU_BLAS();
  using T = TypeParam;
  const bool real = std::is_same_v<T, R_t<T>>;
  std::mt19937_64 g(5);
  double worst = 0;
  struct Shape {
    int m, n, k;
  };
  const Shape shapes[] = {{1, 1, 1},   {7, 3, 2},    {33, 33, 1},   {64, 31, 3},
                          {31, 64, 2}, {256, 32, 8}, {300, 140, 1}, {140, 300, 2}};
  for (const Shape s : shapes)
    for (bsvd_op_t t : {BSVD_OP_N, real ? BSVD_OP_T : BSVD_OP_C}) {
      const int batch = 9, lda = s.m + 1, ldb = std::max(s.m, s.n) + 1;
      const int64_t sA = int64_t(lda) * s.n, sB = int64_t(ldb) * s.k;
      std::vector<T> A = systems<T>(batch, s.m, s.n, lda, g), B(size_t(sB) * batch);
      for (T &v : B) v = random_value<T>(g);
      if (std::min(s.m, s.n) > 2) {
        // Matrix 1: a zero column or row 2 (info 3); matrix 4: a NaN.
        T *A1 = A.data() + sA;
        for (int e = 0; e < std::max(s.m, s.n); ++e)
          (s.m >= s.n ? A1[e + 2 * size_t(lda)] : A1[2 + size_t(e) * lda]) = T(0);
        A[size_t(4 * sA) + 1] = T(std::numeric_limits<R_t<T>>::quiet_NaN());
      }
      std::vector<T> Ac = A, Bc = B;
      std::vector<int> ic(batch, -7);
      bsvd_options_t o = options(BSVD_BACKEND_CPU);
      ASSERT_EQ(Api<T>::gels_strided(false, t, s.m, s.n, s.k, cp(Ac.data()), lda, sA, cp(Bc.data()),
                                     ldb, sB, ic.data(), batch, &o),
                0);
      Dev<T> dA(A), dB(B);
      Dev<int> dinfo(std::vector<int>(batch, -7));
      o.backend = BSVD_BACKEND_AUTO; // device data: cuda
      ASSERT_EQ(Api<T>::gels_strided(false, t, s.m, s.n, s.k, cp(dA.p), lda, sA, cp(dB.p), ldb, sB,
                                     dinfo.p, batch, &o),
                0)
          << bsvd_last_error();
      EXPECT_EQ(dinfo.host(), ic);
      if (std::min(s.m, s.n) > 2) {
        EXPECT_EQ(ic[1], 3);
        EXPECT_EQ(ic[4], BSVD_INFO_NONFINITE);
      }
      compare(dB.host(), Bc, std::max(s.m, s.n), worst, "B");
      compare(dA.host(), Ac, std::max(s.m, s.n), worst, "factored A");
    }
  std::printf("[ gels ] GPU vs cpu: largest gap %.3g of the bound\n", worst);
}

TYPED_TEST(GpuGels, VariableSizesAsyncAndGraph) {
  SKIP_WITHOUT_GPU_BLAS();
  using T = TypeParam;
  std::mt19937_64 g(6);
  const std::vector<int> m = {40, 0, 9, 70, 3, 128}, n = {12, 5, 30, 70, 0, 64},
                         k = {2, 1, 3, 1, 2, 0};
  const int batch = int(m.size());
  std::vector<int> lda(batch), ldb(batch);
  std::vector<std::vector<T>> A(batch), B(batch);
  for (int b = 0; b < batch; ++b) {
    lda[b] = std::max(1, m[b]), ldb[b] = std::max({1, m[b], n[b]});
    A[b] = systems<T>(1, m[b], n[b], lda[b], g);
    B[b].resize(size_t(ldb[b]) * std::max(k[b], 1));
    for (T &v : B[b]) v = random_value<T>(g);
  }
  std::vector<std::vector<T>> Ac = A, Bc = B;
  std::vector<int> ic(batch, -7);
  {
    std::vector<T *> pa, pb;
    for (int b = 0; b < batch; ++b) pa.push_back(Ac[b].data()), pb.push_back(Bc[b].data());
    bsvd_options_t o = options(BSVD_BACKEND_CPU);
    ASSERT_EQ(Api<T>::gels_vbatched(false, BSVD_OP_N, m.data(), n.data(), k.data(), cpa(pa.data()),
                                    lda.data(), cpa(pb.data()), ldb.data(), ic.data(), batch, &o),
              0);
  }
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  double worst = 0;
  for (int mode = 0; mode < 3; ++mode) { // blocking, _async, _async in a graph
    std::vector<std::unique_ptr<Dev<T>>> dA, dB;
    std::vector<T *> pa, pb;
    for (int b = 0; b < batch; ++b) {
      dA.emplace_back(new Dev<T>(A[b])), dB.emplace_back(new Dev<T>(B[b]));
      pa.push_back(dA.back()->p), pb.push_back(dB.back()->p);
    }
    Dev<int> dinfo(std::vector<int>(batch, -7));
    bsvd_options_t o = options(BSVD_BACKEND_AUTO);
    o.stream = s;
    auto call = [&](bool async) {
      return Api<T>::gels_vbatched(async, BSVD_OP_N, m.data(), n.data(), k.data(), cpa(pa.data()),
                                   lda.data(), cpa(pb.data()), ldb.data(), dinfo.p, batch, &o);
    };
    if (mode < 2) {
      ASSERT_EQ(call(mode == 1), 0) << bsvd_last_error();
    } else {
      cudaGraph_t graph;
      cudaGraphExec_t exec;
      ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
      ASSERT_EQ(call(true), 0) << bsvd_last_error();
      ASSERT_EQ(cudaStreamEndCapture(s, &graph), cudaSuccess);
      ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
      ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
      cudaGraphExecDestroy(exec);
      cudaGraphDestroy(graph);
    }
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    EXPECT_EQ(dinfo.host(), ic) << "mode " << mode;
    for (int b = 0; b < batch; ++b)
      compare(dB[b]->host(), Bc[b], std::max(m[b], n[b]), worst, "vbatched B");
  }
  cudaStreamDestroy(s);
  std::printf("[ gels ] vbatched GPU vs cpu: largest gap %.3g of the bound\n", worst);
}

TYPED_TEST(GpuGels, MemoryRules) {
  SKIP_WITHOUT_GPU_BLAS();
  using T = TypeParam;
  std::vector<T> A(16, T(1)), B(8, T(1));
  Dev<T> dA(A), dB(B);
  Dev<int> dinfo(std::vector<int>(1, 0));
  bsvd_options_t o = options(BSVD_BACKEND_AUTO);
  // Device A with host B: the memory spaces disagree, B is blamed.
  EXPECT_EQ(Api<T>::gels_strided(false, BSVD_OP_N, 4, 2, 1, cp(dA.p), 4, 8, cp(B.data()), 4, 4,
                                 dinfo.p, 1, &o),
            -8)
      << bsvd_last_error();
  // cuda backend with host data: not supported (host data runs on the cpu).
  o.backend = BSVD_BACKEND_CUDA;
  int info = 0;
  EXPECT_EQ(Api<T>::gels_strided(false, BSVD_OP_N, 4, 2, 1, cp(A.data()), 4, 8, cp(B.data()), 4, 4,
                                 &info, 1, &o),
            BSVD_STATUS_NOT_SUPPORTED);
}

// gelsd with device data (the SVD on the cuda backend, then the solve
// kernel), blocking and _async, against the cpu backend: the ranks, info,
// and X and S to the SVDs' accuracy; a NaN matrix gets NaN X and rank 0.
TYPED_TEST(GpuGels, GelsdMatchesCpu) {
  SKIP_WITHOUT_GPU_BLAS();
  using T = TypeParam;
  using R = R_t<T>;
  std::mt19937_64 g(7);
  for (const auto &[m, n, k] :
       {std::tuple{40, 12, 2}, std::tuple{12, 40, 1}, std::tuple{64, 64, 3}})
    for (bool async : {false, true}) {
      const int batch = 5, lda = m, ldb = std::max(m, n), kk = std::min(m, n);
      std::vector<T> A = systems<T>(batch, m, n, lda, g), B(size_t(ldb) * k * batch);
      for (T &v : B) v = random_value<T>(g);
      // Matrix 1 of rank kk - 1: column 3 = column 0 (tall), row 3 = row 0 (wide).
      T *A1 = A.data() + size_t(lda) * n;
      if (m >= n)
        for (int i = 0; i < m; ++i) A1[i + 3 * size_t(lda)] = A1[i];
      else
        for (int j = 0; j < n; ++j) A1[3 + size_t(j) * lda] = A1[size_t(j) * lda];
      A[size_t(4) * lda * n + 2] = T(std::numeric_limits<R>::quiet_NaN());
      std::vector<T> Bc = B;
      std::vector<R> Sc(size_t(kk) * batch);
      std::vector<int> rc(batch), ic(batch);
      const R rcond = R(-1);
      bsvd_options_t o = options(BSVD_BACKEND_CPU);
      ASSERT_EQ(Api<T>::gelsd_strided(false, m, n, k, cp(A.data()), lda, int64_t(lda) * n,
                                      cp(Bc.data()), ldb, int64_t(ldb) * k, Sc.data(), kk, rcond,
                                      rc.data(), ic.data(), batch, &o),
                0);
      Dev<T> dA(A), dB(B);
      Dev<R> dS(std::vector<R>(Sc.size()));
      Dev<int> dr(std::vector<int>(batch, -7)), di(std::vector<int>(batch, -7));
      o.backend = BSVD_BACKEND_AUTO;
      ASSERT_EQ(Api<T>::gelsd_strided(async, m, n, k, cp(dA.p), lda, int64_t(lda) * n, cp(dB.p),
                                      ldb, int64_t(ldb) * k, dS.p, kk, rcond, dr.p, di.p, batch,
                                      &o),
                0)
          << bsvd_last_error();
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      EXPECT_EQ(dr.host(), rc);
      EXPECT_EQ(di.host(), ic);
      EXPECT_EQ(rc[1], kk - 1);
      EXPECT_EQ(ic[4], BSVD_INFO_NONFINITE);
      EXPECT_TRUE(same_bits(dA.host(), A)) << "A is only read";
      double worst = 0;
      // (the two SVDs agree to their accuracy, not bits: a looser bound)
      const std::vector<T> Bg = dB.host();
      for (int b = 0; b < batch; ++b) {
        std::vector<T> got(Bg.begin() + size_t(b) * ldb * k, Bg.begin() + size_t(b + 1) * ldb * k),
            want(Bc.begin() + size_t(b) * ldb * k, Bc.begin() + size_t(b + 1) * ldb * k);
        for (int j = 0; j < k; ++j) // rows n .. ldb - 1 are not X's
          for (int i = n; i < ldb; ++i) got[i + size_t(j) * ldb] = want[i + size_t(j) * ldb];
        compare(got, want, 16 * ldb, worst, "gelsd X");
      }
      std::printf("[ gelsd ] %dx%d async %d: GPU vs cpu largest gap %.3g of the bound\n", m, n,
                  int(async), worst);
    }
}

} // namespace
