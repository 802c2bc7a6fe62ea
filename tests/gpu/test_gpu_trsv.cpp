// Batched TRSV on the GPU (src/cuda/bidiag/trsv.cu) through the C API with
// device data, against the cpu backend (the same device function on one
// thread, trsv.cuh, whose GEMV updates form each entry in the same order
// for any team size): every uplo / op / diag, orders across the block of
// 32, increments of both signs, zero diagonals (info), the three forms, the
// _async forms on a stream and in a CUDA graph, and the memory rules.
#include "../unit/blas_api_helpers.hpp"
#include "blas_gpu_util.hpp"

#include <bsvd/bsvd.h>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <random>
#include <vector>

namespace {

using namespace blas_test;
using blas_gpu::Dev;

template <class T> class GpuTrsv : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(GpuTrsv, Types);

// A strided batch of triangles with a dominant diagonal (well conditioned:
// the two results agree to a few ulps of max |x|); zero_at >= 0 puts a zero
// on matrix 1's diagonal there.
template <class T> struct Problem {
  int n, lda;
  int64_t sA, sx;
  std::vector<T> A, x;
};
template <class T> Problem<T> make(int n, int inc, int batch, int zero_at, std::mt19937_64 &g) {
  Problem<T> p{n, n + 1, 0, 0, {}, {}};
  p.sA = int64_t(p.lda) * std::max(n, 1);
  p.sx = 1 + int64_t(std::max(n, 1)) * std::abs(inc);
  p.A.resize(size_t(p.sA) * batch);
  p.x.resize(size_t(p.sx) * batch);
  for (T &v : p.A) v = random_value<T>(g);
  for (T &v : p.x) v = random_value<T>(g);
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < n; ++j) {
      T &d = p.A[size_t(b * p.sA) + j + size_t(j) * p.lda];
      d = T(R_t<T>(n + 1)) + d;
      if (b == 1 && j == zero_at) d = T(0);
    }
  return p;
}

// |x_gpu - x_cpu| <= 16 n u max |x_cpu| entry by entry; the largest gap,
// in units of that bound, and whether all bits agree, are printed.
template <class T> void compare(const std::vector<T> &got, const std::vector<T> &want, int n,
                                double &worst, bool &bitwise, const char *what) {
  double xmax = 0;
  for (const T &v : want) xmax = std::max(xmax, double(std::abs(v)));
  const double bound = 16 * std::max(n, 1) * unit_roundoff<T>() * xmax + 1e-300;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = std::abs(got[i] - want[i]);
    worst = std::max(worst, d / bound);
    bitwise = bitwise && (got[i] == want[i]);
    ASSERT_LE(d, bound) << what << " i " << i;
  }
}

TYPED_TEST(GpuTrsv, StridedMatchesCpu) {
  SKIP_WITHOUT_GPU_BLAS();
  using T = TypeParam;
  std::mt19937_64 g(3);
  double worst = 0;
  bool bitwise = true;
  for (int n : {0, 1, 2, 17, 31, 32, 33, 64, 130, 300})
    for (bsvd_uplo_t u : {BSVD_UPLO_L, BSVD_UPLO_U})
      for (bsvd_op_t t : {BSVD_OP_N, BSVD_OP_T, BSVD_OP_C})
        for (bsvd_diag_t d : {BSVD_DIAG_N, BSVD_DIAG_U})
          for (int inc : {1, -3}) {
            const int batch = 19;
            Problem<T> p = make<T>(n, inc, batch, n > 5 ? 5 : -1, g);
            if (d == BSVD_DIAG_U) // (keep unit triangles well conditioned)
              for (T &v : p.A) v /= R_t<T>(std::max(n, 1));
            std::vector<T> xc = p.x;
            std::vector<int> ic(batch, -7);
            bsvd_options_t o = options(BSVD_BACKEND_CPU);
            ASSERT_EQ(Api<T>::trsv_strided(false, u, t, d, n, cp(p.A.data()), p.lda, p.sA,
                                           cp(xc.data()), inc, p.sx, ic.data(), batch, &o),
                      0);
            Dev<T> dA(p.A), dx(p.x);
            Dev<int> dinfo(std::vector<int>(batch, -7));
            o.backend = BSVD_BACKEND_AUTO; // device data: cuda
            ASSERT_EQ(Api<T>::trsv_strided(false, u, t, d, n, cp(dA.p), p.lda, p.sA, cp(dx.p), inc,
                                           p.sx, dinfo.p, batch, &o),
                      0)
                << bsvd_last_error();
            EXPECT_EQ(dinfo.host(), ic);
            if (n > 5 && d == BSVD_DIAG_N) {
              EXPECT_EQ(ic[1], 6);
            }
            compare(dx.host(), xc, n, worst, bitwise, "strided");
          }
  std::printf("[ trsv ] GPU vs cpu: largest gap %.3g of the bound, %s\n", worst,
              bitwise ? "bit for bit" : "not bit for bit");
}

TYPED_TEST(GpuTrsv, FormsAndAsyncAgree) {
  SKIP_WITHOUT_GPU_BLAS();
  using T = TypeParam;
  std::mt19937_64 g(8);
  const std::vector<int> nv = {5, 0, 64, 1, 130, 33}, inc = {1, 1, -2, 3, 1, -1};
  const int batch = int(nv.size());
  std::vector<Problem<T>> ps;
  std::vector<int> lda;
  for (int b = 0; b < batch; ++b) {
    ps.push_back(make<T>(nv[b], inc[b], 1, -1, g));
    lda.push_back(ps.back().lda);
  }
  ps[4].A[7 + size_t(7) * lda[4]] = T(0); // info 8 for matrix 4
  std::vector<std::vector<T>> want;
  std::vector<int> want_info(batch, -7);
  {
    std::vector<const T *> Ap;
    std::vector<T *> xp;
    for (int b = 0; b < batch; ++b) {
      want.push_back(ps[b].x);
      Ap.push_back(ps[b].A.data());
    }
    for (int b = 0; b < batch; ++b) xp.push_back(want[b].data());
    bsvd_options_t o = options(BSVD_BACKEND_CPU);
    ASSERT_EQ(Api<T>::trsv_vbatched(false, BSVD_UPLO_L, BSVD_OP_C, BSVD_DIAG_N, nv.data(),
                                    cpa(Ap.data()), lda.data(), cpa(xp.data()), inc.data(),
                                    want_info.data(), batch, &o),
              0);
    EXPECT_EQ(want_info[4], 8);
  }
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  double worst = 0;
  bool bitwise = true;
  // The kernel: vbatched blocking, vbatched _async on a stream, the same
  // captured in a graph and replayed, and batched (uniform n = 33).
  for (int mode = 0; mode < 3; ++mode) {
    std::vector<Dev<T> *> dA, dx;
    std::vector<const T *> Ap;
    std::vector<T *> xp;
    for (int b = 0; b < batch; ++b) {
      dA.push_back(new Dev<T>(ps[b].A)), dx.push_back(new Dev<T>(ps[b].x));
      Ap.push_back(dA[b]->p), xp.push_back(dx[b]->p);
    }
    Dev<int> dinfo(std::vector<int>(batch, -7));
    bsvd_options_t o = options(BSVD_BACKEND_AUTO);
    o.stream = s;
    auto call = [&](bool async) {
      return Api<T>::trsv_vbatched(async, BSVD_UPLO_L, BSVD_OP_C, BSVD_DIAG_N, nv.data(),
                                   cpa(Ap.data()), lda.data(), cpa(xp.data()), inc.data(), dinfo.p,
                                   batch, &o);
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
    EXPECT_EQ(dinfo.host(), want_info) << "mode " << mode;
    for (int b = 0; b < batch; ++b) {
      compare(dx[b]->host(), want[b], nv[b], worst, bitwise, "vbatched");
      delete dA[b], delete dx[b];
    }
  }
  // batched: the uniform form of matrix 5 (n = 33) twice.
  {
    Dev<T> dA(ps[5].A), dx1(ps[5].x), dx2(ps[5].x);
    const T *Ap[2] = {dA.p, dA.p};
    T *xp[2] = {dx1.p, dx2.p};
    Dev<int> dinfo(std::vector<int>(2, -7));
    bsvd_options_t o = options(BSVD_BACKEND_AUTO);
    ASSERT_EQ(Api<T>::trsv_batched(false, BSVD_UPLO_L, BSVD_OP_C, BSVD_DIAG_N, nv[5], cpa(Ap),
                                   lda[5], cpa(xp), inc[5], dinfo.p, 2, &o),
              0)
        << bsvd_last_error();
    EXPECT_EQ(dinfo.host(), std::vector<int>(2, 0));
    compare(dx1.host(), want[5], nv[5], worst, bitwise, "batched 0");
    compare(dx2.host(), want[5], nv[5], worst, bitwise, "batched 1");
  }
  cudaStreamDestroy(s);
  std::printf("[ trsv ] forms: largest gap %.3g of the bound, %s\n", worst,
              bitwise ? "bit for bit" : "not bit for bit");
}

TEST(GpuTrsvArgs, MemoryRules) {
  SKIP_WITHOUT_GPU_BLAS();
  std::vector<double> A(16, 1.0), x(4, 1.0);
  Dev<double> dA(A), dx(x);
  Dev<int> dinfo(std::vector<int>(1, -7));
  int info = -7;
  const bsvd_uplo_t L = BSVD_UPLO_L;
  const bsvd_op_t N = BSVD_OP_N;
  const bsvd_diag_t D = BSVD_DIAG_N;
  bsvd_options_t o = options(BSVD_BACKEND_CPU);
  // cpu backend with device data: -position of x (the blamed operand).
  EXPECT_EQ(bsvd_dtrsv_strided_batched(L, N, D, 4, dA.p, 4, 0, dx.p, 1, 4, dinfo.p, 1, &o), -8);
  // cuda backend with host data: not supported (not staged).
  o.backend = BSVD_BACKEND_CUDA;
  EXPECT_EQ(bsvd_dtrsv_strided_batched(L, N, D, 4, A.data(), 4, 0, x.data(), 1, 4, &info, 1, &o),
            BSVD_STATUS_NOT_SUPPORTED);
  // mixed: info on the host, A and x on the device.
  o.backend = BSVD_BACKEND_AUTO;
  EXPECT_EQ(bsvd_dtrsv_strided_batched(L, N, D, 4, dA.p, 4, 0, dx.p, 1, 4, &info, 1, &o), -11);
  EXPECT_EQ(info, -7);
  // _async with host data: -position.
  EXPECT_LT(
      bsvd_dtrsv_strided_batched_async(L, N, D, 4, A.data(), 4, 0, x.data(), 1, 4, &info, 1, &o),
      0);
  // device data on the auto backend: lower ones, x = ones -> (1, 0, 0, 0).
  EXPECT_EQ(bsvd_dtrsv_strided_batched(L, N, D, 4, dA.p, 4, 0, dx.p, 1, 4, dinfo.p, 1, &o), 0);
  EXPECT_EQ(dx.host(), (std::vector<double>{1.0, 0.0, 0.0, 0.0}));
  EXPECT_EQ(dinfo.host(), std::vector<int>(1, 0));
}

} // namespace
