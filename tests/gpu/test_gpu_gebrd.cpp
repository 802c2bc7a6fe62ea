// Batched GEBRD on the GPU (src/cuda/bidiag/gebrd.cu: on chip, one block
// per matrix with the matrix in shared memory; blocked panels beyond that)
// through the C API with device data: each matrix against LAPACK by the
// scaled ratios of the CPU tests (unit/gebrd_check.hpp), and against the
// cpu backend's gebd2 -- its d, e to rounding on chip (the same
// algorithm), the singular values of its bidiagonal for the blocked
// regime (another order of operations: d and e differ by more than
// rounding, the spectrum by the backward errors, as in
// unit/test_device_labrd.cpp); the variable-size and _async forms; the
// largest square matrix on chip and the smallest blocked one; and
// NOT_SUPPORTED, nothing written, for a matrix no panel brings on chip.
#include "../unit/blas_api_helpers.hpp"
#include "../unit/gebrd_check.hpp"
#include "blas_gpu_util.hpp"
#include "plan/bidiag.hpp"
#include "testing/generate.hpp"

#include <bsvd/bsvd.h>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <vector>

namespace {

using namespace blas_test;
using blas_gpu::Dev;
using gebrd_check::Bidiag;
using gebrd_check::Ratios;

template <class T> class GpuGebrd : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(GpuGebrd, Types);

int smem_optin() {
  int dev = 0, v = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
  return v;
}

// The largest n whose n x n matrix of T fits one block.
template <class T> int largest_square() {
  int n = 1;
  while (bsvd::detail::plan::gebrd_smem_bytes(n + 1, n + 1, sizeof(T)) <= size_t(smem_optin())) ++n;
  return n;
}

// One strided call of `batch` random m x n matrices on the GPU and on the
// cpu backend; every GPU matrix checked against LAPACK and the cpu's d, e
// (blocked: the singular values of the two bidiagonals).
template <class T> Ratios gpu_vs_cpu(int m, int n, int batch, bool async, bool blocked = false) {
  using R = R_t<T>;
  const int lda = std::max(m, 1) + 1, k = std::min(m, n), ke = std::max(k - 1, 0);
  std::vector<T> A0(size_t(lda) * n * batch, T(0));
  for (int b = 0; b < batch && k > 0; ++b)
    bsvd::testing::generate<T>(bsvd::testing::Family::Random, m, n, 1, 31 * b + m + n,
                               A0.data() + size_t(lda) * n * b, lda);
  std::vector<T> tq(size_t(k) * batch + 1, T(0)), A = A0;
  std::vector<R> d(size_t(k) * batch + 1, R(0)), e(size_t(ke) * batch + 1, R(0));
  std::vector<int> info(batch, 99);
  // cpu backend
  std::vector<T> cA = A0, ctq = tq, ctp = tq;
  std::vector<R> cd = d, ce = e;
  std::vector<int> cinfo = info;
  bsvd_options_t o = options(BSVD_BACKEND_CPU);
  EXPECT_EQ(Api<T>::gebrd_strided(false, m, n, cp(cA.data()), lda, int64_t(lda) * n, cd.data(), k,
                                  ce.data(), ke, cp(ctq.data()), k, cp(ctp.data()), k, cinfo.data(),
                                  batch, &o),
            0);
  // GPU
  Dev<T> dA(A0), dtq(tq), dtp(tq);
  Dev<R> dd(d), de(e);
  Dev<int> dinfo(info);
  o.backend = BSVD_BACKEND_AUTO;
  cudaStream_t s = nullptr;
  if (async) {
    EXPECT_EQ(cudaStreamCreate(&s), cudaSuccess);
    o.stream = s;
  }
  EXPECT_EQ(Api<T>::gebrd_strided(async, m, n, cp(dA.p), lda, int64_t(lda) * n, dd.p, k, de.p, ke,
                                  cp(dtq.p), k, cp(dtp.p), k, dinfo.p, batch, &o),
            0)
      << bsvd_last_error();
  if (async) {
    EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    cudaStreamDestroy(s);
  }
  const auto gA = dA.host(), gtq = dtq.host(), gtp = dtp.host();
  const auto gd = dd.host(), ge = de.host();
  const auto ginfo = dinfo.host();
  Ratios worst;
  const double u = unit_roundoff<T>();
  for (int b = 0; b < batch; ++b) {
    EXPECT_EQ(ginfo[b], 0);
    if (k == 0) continue;
    Bidiag<T> r;
    r.lda = lda, r.info = ginfo[b];
    r.A.assign(gA.begin() + size_t(lda) * n * b, gA.begin() + size_t(lda) * n * (b + 1));
    r.d.assign(gd.begin() + size_t(k) * b, gd.begin() + size_t(k) * (b + 1));
    r.e.assign(ge.begin() + size_t(ke) * b, ge.begin() + size_t(ke) * (b + 1));
    r.e.resize(size_t(k));
    r.tauq.assign(gtq.begin() + size_t(k) * b, gtq.begin() + size_t(k) * (b + 1));
    r.taup.assign(gtp.begin() + size_t(k) * b, gtp.begin() + size_t(k) * (b + 1));
    const Ratios q = gebrd_check::check(m, n, A0.data() + size_t(lda) * n * b, lda, r);
    EXPECT_TRUE(q.pass(30, !blocked)) << m << "x" << n << " b " << b << ": " << q;
    worst.max_with(q);
    if (blocked) {
      std::vector<double> sg(k), sc(k);
      std::vector<R> ce_b(ce.begin() + size_t(ke) * b, ce.begin() + size_t(ke) * b + ke);
      ce_b.resize(size_t(k));
      EXPECT_EQ(bidiag_test::reference_bidiagonal_values(k, r.d.data(), r.e.data(), sg.data()), 0);
      EXPECT_EQ(bidiag_test::reference_bidiagonal_values(k, cd.data() + size_t(k) * b, ce_b.data(),
                                                         sc.data()),
                0);
      const double scale =
          gebrd_check::norm1(m, n, A0.data() + size_t(lda) * n * b, lda) * std::max(m, n) * u;
      for (int i = 0; i < k; ++i)
        EXPECT_LE(std::abs(sg[i] - sc[i]) / scale, 30.0) << m << "x" << n << " sigma " << i;
      continue;
    }
    // The same algorithm on the host: d and e within a few k u ||A|| (the
    // block's norm reductions add in another order, nvcc contracts to FMA).
    double na = 0;
    for (int j = 0; j < n; ++j) {
      double c = 0;
      for (int i = 0; i < m; ++i) c += std::abs(A0[size_t(lda) * n * b + i + size_t(j) * lda]);
      na = std::max(na, c);
    }
    for (int i = 0; i < k; ++i) {
      EXPECT_LE(std::abs(double(gd[size_t(k) * b + i]) - cd[size_t(k) * b + i]),
                (4.0 + 10 * q.sens) * std::max(m, n) * u * na)
          << m << "x" << n << " d " << i;
    }
  }
  return worst;
}

TYPED_TEST(GpuGebrd, StridedAgainstLapackAndCpu) {
  SKIP_WITHOUT_GPU_BLAS();
  using T = TypeParam;
  const int big = largest_square<T>();
  Ratios worst;
  for (auto [m, n] : std::vector<std::pair<int, int>>{{0, 3},
                                                      {1, 1},
                                                      {1, 9},
                                                      {9, 1},
                                                      {5, 5},
                                                      {33, 17},
                                                      {17, 33},
                                                      {64, 64},
                                                      {100, 40},
                                                      {40, 100},
                                                      {big, big}})
    for (bool async : {false, true})
      worst.max_with(gpu_vs_cpu<T>(m, n, m * n > 4096 ? 4 : 23, async));
  std::printf("[ gebrd gpu ] %s (largest square %d): max %s\n", bidiag_test::prec_name<T>(), big,
              gebrd_check::str(worst).c_str());
}

// The blocked regime: one panel (the smallest square beyond chip), several
// panels, tall and wide matrices, a batch of several.
TYPED_TEST(GpuGebrd, BlockedAgainstLapackAndCpu) {
  SKIP_WITHOUT_GPU_BLAS();
  using T = TypeParam;
  const int big = largest_square<T>();
  Ratios worst;
  for (auto [m, n] : std::vector<std::pair<int, int>>{{big + 1, big + 1},
                                                      {2 * big + 5, 2 * big + 5},
                                                      {2 * big, big + 20},
                                                      {big + 20, 2 * big}})
    worst.max_with(gpu_vs_cpu<T>(m, n, 3, m > big + 1, true));
  std::printf("[ gebrd gpu blocked ] %s: max %s\n", bidiag_test::prec_name<T>(),
              gebrd_check::str(worst).c_str());
}

TYPED_TEST(GpuGebrd, VariableSizesAndTooLarge) {
  SKIP_WITHOUT_GPU_BLAS();
  using T = TypeParam;
  using R = R_t<T>;
  // (matrix 5: beyond shared memory, the blocked regime in a variable batch)
  const int big = largest_square<T>();
  const std::vector<int> mv = {7, 0, 40, 1, 25, big + 9}, nv = {3, 5, 40, 12, 60, big + 3};
  const int batch = int(mv.size());
  std::vector<Dev<T> *> dA, dtq, dtp;
  std::vector<Dev<R> *> dd, de;
  std::vector<T *> Ap, tqp, tpp;
  std::vector<R *> dp, ep;
  std::vector<std::vector<T>> A0(batch);
  std::vector<int> lda(batch);
  for (int b = 0; b < batch; ++b) {
    const int k = std::min(mv[b], nv[b]);
    lda[b] = std::max(mv[b], 1);
    A0[b].assign(size_t(lda[b]) * nv[b] + 1, T(1));
    if (k > 0)
      bsvd::testing::generate<T>(bsvd::testing::Family::Random, mv[b], nv[b], 1, 5 + b,
                                 A0[b].data(), lda[b]);
    dA.push_back(new Dev<T>(A0[b]));
    dtq.push_back(new Dev<T>(std::vector<T>(size_t(std::max(k, 1)))));
    dtp.push_back(new Dev<T>(std::vector<T>(size_t(std::max(k, 1)))));
    dd.push_back(new Dev<R>(std::vector<R>(size_t(std::max(k, 1)))));
    de.push_back(new Dev<R>(std::vector<R>(size_t(std::max(k, 1)))));
    Ap.push_back(dA[b]->p), tqp.push_back(dtq[b]->p), tpp.push_back(dtp[b]->p);
    dp.push_back(dd[b]->p), ep.push_back(de[b]->p);
  }
  Dev<int> dinfo(std::vector<int>(batch, 99));
  bsvd_options_t o = options(BSVD_BACKEND_AUTO);
  ASSERT_EQ(Api<T>::gebrd_vbatched(false, mv.data(), nv.data(), cpa(Ap.data()), lda.data(),
                                   dp.data(), ep.data(), cpa(tqp.data()), cpa(tpp.data()), dinfo.p,
                                   batch, &o),
            0)
      << bsvd_last_error();
  EXPECT_EQ(dinfo.host(), std::vector<int>(batch, 0));
  for (int b = 0; b < batch; ++b) {
    const int m = mv[b], n = nv[b], k = std::min(m, n);
    if (k > 0) {
      Bidiag<T> r;
      r.lda = lda[b], r.info = 0;
      r.A = dA[b]->host();
      r.A.pop_back();
      r.d = dd[b]->host(), r.e = de[b]->host();
      r.tauq = dtq[b]->host(), r.taup = dtp[b]->host();
      const Ratios q = gebrd_check::check(m, n, A0[b].data(), lda[b], r);
      EXPECT_TRUE(q.pass(30, k <= big)) << m << "x" << n << ": " << q;
    }
  }
  // One matrix that no panel count brings on chip (tall: after the one
  // panel its 40 columns allow, 8 columns of 20000 rows remain):
  // NOT_SUPPORTED, nothing written.
  std::vector<int> mb = mv, nb = nv, ldb = lda;
  mb[2] = ldb[2] = 20000;
  nb[2] = 40;
  std::vector<T> hbig(size_t(20000) * 40, T(1));
  Dev<T> dbig(hbig);
  Ap[2] = dbig.p;
  Dev<int> info2(std::vector<int>(batch, 99));
  EXPECT_EQ(Api<T>::gebrd_vbatched(false, mb.data(), nb.data(), cpa(Ap.data()), ldb.data(),
                                   dp.data(), ep.data(), cpa(tqp.data()), cpa(tpp.data()), info2.p,
                                   batch, &o),
            BSVD_STATUS_NOT_SUPPORTED);
  EXPECT_NE(std::string(bsvd_last_error()).find("too tall or wide"), std::string::npos);
  EXPECT_EQ(info2.host(), std::vector<int>(batch, 99));
  EXPECT_EQ(dbig.host(), hbig);
  for (int b = 0; b < batch; ++b)
    delete dA[b], delete dtq[b], delete dtp[b], delete dd[b], delete de[b];
}

} // namespace
