// Selected singular triplets on the GPU (src/cuda/bidiag/gesvdx.cu)
// through the C API with device data: each matrix by the ratios of the
// cpu tests (unit/gesvdx_check.hpp) and against the cpu backend, which
// runs the same steps on the host (the CPU twin: the same ns, the values
// to the ratios' bound -- the GPU's GEBRD orders its sums otherwise);
// every range and both jobs, the on-chip and the blocked GEBRD regimes,
// the variable-size form with empty matrices, the _async form, and one
// NaN matrix spoiling nothing else.
#include "../unit/blas_api_helpers.hpp"
#include "../unit/gesvdx_check.hpp"
#include "blas_gpu_util.hpp"
#include "testing/generate.hpp"

#include <bsvd/bsvd.h>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

namespace {

using namespace blas_test;
using blas_gpu::Dev;
using bsvd::testing::Family;
using gesvdx_check::Ratios;

template <class T> class GpuGesvdx : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(GpuGesvdx, Types);

struct Out {
  std::vector<int> ns, info;
};

// `batch` matrices of family f, m x n, one strided call on `backend`
// (device data for cuda); the outputs checked by the ratios. Returns the
// worst ratios; ns and info in out.
template <class T> Ratios run(bsvd_backend_t backend, Family f, int m, int n, int batch,
                              bsvd_job_t job, bsvd_range_t range, double vl, double vu, int il,
                              int iu, bool async, Out &out, uint64_t seed = 11) {
  using R = R_t<T>;
  const int lda = m + 1, k = std::min(m, n), ldu = m, ldv = n;
  const int c = std::max(1, range == BSVD_RANGE_INDEX ? iu - il + 1 : k);
  std::vector<T> A(size_t(lda) * n * batch, T(0));
  std::vector<std::vector<double>> sigma(batch);
  for (int b = 0; b < batch; ++b)
    bsvd::testing::generate<T>(f, m, n, bsvd::testing::default_kappa<T>(), seed + b,
                               A.data() + size_t(b) * lda * n, lda, &sigma[b]);
  std::vector<R> S(size_t(c) * batch, R(-7));
  std::vector<T> U(size_t(ldu) * c * batch, T(-7)), V(size_t(ldv) * c * batch, T(-7));
  out.ns.assign(batch, -5), out.info.assign(batch, 99);
  const bsvd_options_t o = options(backend);
  bsvd_status_t st;
  if (backend == BSVD_BACKEND_CPU) {
    st = Api<T>::gesvdx_strided(false, job, range, m, n, cp(A.data()), lda, int64_t(lda) * n, R(vl),
                                R(vu), il, iu, out.ns.data(), S.data(), int64_t(c), cp(U.data()),
                                ldu, int64_t(ldu) * c, cp(V.data()), ldv, int64_t(ldv) * c,
                                out.info.data(), batch, &o);
  } else {
    Dev<T> dA(A), dU(U), dV(V);
    Dev<R> dS(S);
    Dev<int> dns(out.ns), dinfo(out.info);
    st = Api<T>::gesvdx_strided(async, job, range, m, n, cp(dA.p), lda, int64_t(lda) * n, R(vl),
                                R(vu), il, iu, dns.p, dS.p, int64_t(c), cp(dU.p), ldu,
                                int64_t(ldu) * c, cp(dV.p), ldv, int64_t(ldv) * c, dinfo.p, batch,
                                &o);
    if (async) EXPECT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
    S = dS.host(), U = dU.host(), V = dV.host(), out.ns = dns.host(), out.info = dinfo.host();
  }
  EXPECT_EQ(st, 0) << bsvd_last_error();
  Ratios worst;
  const bool vec = job == BSVD_JOB_VECTORS;
  for (int b = 0; b < batch; ++b) {
    int first = range == BSVD_RANGE_INDEX ? il : 0;
    if (range == BSVD_RANGE_VALUE)
      while (first < k && sigma[b][first] > vu) ++first;
    const size_t so = size_t(b) * c;
    worst.max_with(gesvdx_check::check(
        m, n, A.data() + size_t(b) * lda * n, lda, sigma[b], first, out.ns[b], S.data() + so,
        vec ? U.data() + so * ldu : nullptr, ldu, vec ? V.data() + so * ldv : nullptr, ldv));
  }
  return worst;
}

TYPED_TEST(GpuGesvdx, RangesShapesAndRegimesAgainstTheCpu) {
  SKIP_WITHOUT_GPU_BLAS();
  using T = TypeParam;
  // on chip, and (d, z: beyond shared memory) the blocked regime
  const int shapes[][2] = {{1, 1},   {7, 5},     {5, 7},     {33, 33},  {64, 40},
                           {40, 64}, {150, 150}, {300, 140}, {140, 300}};
  int seed = 100;
  for (const auto &s : shapes) {
    const int m = s[0], n = s[1], k = std::min(m, n);
    for (Family f : {Family::Arith, Family::Logrand}) {
      for (bsvd_job_t job : {BSVD_JOB_VECTORS, BSVD_JOB_VALUES}) {
        const int il = k / 2, iu = std::min(k - 1, il + 3);
        const double vu = 0.9, vl = 0.05;
        const struct {
          bsvd_range_t r;
          int il, iu;
        } ranges[] = {{BSVD_RANGE_INDEX, il, iu}, {BSVD_RANGE_VALUE, 0, 0}, {BSVD_RANGE_ALL, 0, 0}};
        for (const auto &rg : ranges) {
          if (rg.r == BSVD_RANGE_ALL && job == BSVD_JOB_VECTORS && k > 64) continue; // (slow form)
          Out g, c;
          const Ratios rg_ = run<T>(BSVD_BACKEND_CUDA, f, m, n, 2, job, rg.r, vl, vu, rg.il, rg.iu,
                                    false, g, seed);
          const Ratios rc =
              run<T>(BSVD_BACKEND_CPU, f, m, n, 2, job, rg.r, vl, vu, rg.il, rg.iu, false, c, seed);
          EXPECT_TRUE(rg_.pass()) << m << " x " << n << " range " << rg.r << " gpu: " << rg_;
          EXPECT_TRUE(rc.pass()) << m << " x " << n << " range " << rg.r << " cpu: " << rc;
          EXPECT_EQ(g.ns, c.ns) << m << " x " << n << " range " << rg.r;
          EXPECT_EQ(g.info, c.info);
        }
        ++seed;
      }
    }
  }
}

TYPED_TEST(GpuGesvdx, AsyncFormAndVariableSizes) {
  SKIP_WITHOUT_GPU_BLAS();
  using T = TypeParam;
  using R = R_t<T>;
  Out g;
  EXPECT_TRUE((run<T>(BSVD_BACKEND_CUDA, Family::Geo, 20, 12, 5, BSVD_JOB_VECTORS, BSVD_RANGE_INDEX,
                      0, 0, 0, 2, true, g)
                   .pass()));
  EXPECT_EQ(g.ns, std::vector<int>(5, 3));
  EXPECT_EQ(g.info, std::vector<int>(5, 0));
  // variable sizes with empty matrices, the largest 2 of each
  const int sizes[][2] = {{9, 7}, {0, 4}, {70, 12}, {3, 0}, {16, 16}};
  const int batch = 5, c = 2;
  std::vector<std::vector<T>> A(batch);
  std::vector<std::vector<double>> sig(batch);
  std::vector<int> m(batch), n(batch), lda(batch);
  std::vector<Dev<T> *> dA, dU, dV;
  std::vector<Dev<R> *> dS;
  std::vector<const T *> Ap;
  std::vector<R *> Sp;
  std::vector<T *> Up, Vp;
  for (int b = 0; b < batch; ++b) {
    m[b] = sizes[b][0], n[b] = sizes[b][1], lda[b] = std::max(1, m[b]);
    A[b].assign(size_t(lda[b]) * std::max(1, n[b]), T(0));
    if (m[b] && n[b])
      bsvd::testing::generate<T>(Family::Arith, m[b], n[b], 1e2, 5 + b, A[b].data(), lda[b],
                                 &sig[b]);
    dA.push_back(new Dev<T>(A[b]));
    dS.push_back(new Dev<R>(std::vector<R>(c, R(-7))));
    dU.push_back(new Dev<T>(std::vector<T>(size_t(lda[b]) * c, T(-7))));
    dV.push_back(new Dev<T>(std::vector<T>(size_t(std::max(1, n[b])) * c, T(-7))));
    Ap.push_back(dA[b]->p), Sp.push_back(dS[b]->p), Up.push_back(dU[b]->p), Vp.push_back(dV[b]->p);
  }
  std::vector<int> ldv(batch);
  for (int b = 0; b < batch; ++b) ldv[b] = std::max(1, n[b]);
  Dev<int> dns(std::vector<int>(batch, -1)), dinfo(std::vector<int>(batch, 9));
  const bsvd_options_t o = options(BSVD_BACKEND_AUTO);
  ASSERT_EQ(Api<T>::gesvdx_vbatched(false, BSVD_JOB_VECTORS, BSVD_RANGE_INDEX, m.data(), n.data(),
                                    cpa(Ap.data()), lda.data(), R(0), R(0), 0, 1, dns.p, Sp.data(),
                                    cpa(Up.data()), lda.data(), cpa(Vp.data()), ldv.data(), dinfo.p,
                                    batch, &o),
            0)
      << bsvd_last_error();
  const std::vector<int> ns = dns.host(), info = dinfo.host();
  for (int b = 0; b < batch; ++b) {
    const int k = std::min(m[b], n[b]);
    EXPECT_EQ(info[b], 0);
    EXPECT_EQ(ns[b], k ? c : 0);
    if (!k) continue;
    const std::vector<R> S = dS[b]->host();
    const std::vector<T> U = dU[b]->host(), V = dV[b]->host();
    const Ratios r = gesvdx_check::check(m[b], n[b], A[b].data(), lda[b], sig[b], 0, c, S.data(),
                                         U.data(), lda[b], V.data(), ldv[b]);
    EXPECT_TRUE(r.pass()) << m[b] << " x " << n[b] << ": " << r;
  }
  for (int b = 0; b < batch; ++b) delete dA[b], delete dS[b], delete dU[b], delete dV[b];
}

TYPED_TEST(GpuGesvdx, NonFiniteMatrixSpoilsNothingElse) {
  SKIP_WITHOUT_GPU_BLAS();
  using T = TypeParam;
  using R = R_t<T>;
  const int m = 30, n = 20, lda = 30, batch = 3, c = 4;
  std::vector<T> A(size_t(lda) * n * batch);
  std::vector<std::vector<double>> sig(batch);
  for (int b = 0; b < batch; ++b)
    bsvd::testing::generate<T>(Family::Geo, m, n, 1e3, 70 + b, A.data() + size_t(b) * lda * n, lda,
                               &sig[b]);
  A[size_t(lda) * n + 5 + lda * 7] = T(std::numeric_limits<R>::infinity());
  Dev<T> dA(A), dU(std::vector<T>(size_t(m) * c * batch)),
      dV(std::vector<T>(size_t(n) * c * batch));
  Dev<R> dS(std::vector<R>(size_t(c) * batch));
  Dev<int> dns(std::vector<int>(batch, -1)), dinfo(std::vector<int>(batch, 9));
  const bsvd_options_t o = options(BSVD_BACKEND_CUDA);
  ASSERT_EQ(Api<T>::gesvdx_strided(false, BSVD_JOB_VECTORS, BSVD_RANGE_INDEX, m, n, cp(dA.p), lda,
                                   int64_t(lda) * n, R(0), R(0), 1, 4, dns.p, dS.p, int64_t(c),
                                   cp(dU.p), m, int64_t(m) * c, cp(dV.p), n, int64_t(n) * c,
                                   dinfo.p, batch, &o),
            0)
      << bsvd_last_error();
  const std::vector<int> ns = dns.host(), info = dinfo.host();
  const std::vector<R> S = dS.host();
  const std::vector<T> U = dU.host(), V = dV.host();
  EXPECT_EQ(info[1], BSVD_INFO_NONFINITE);
  EXPECT_EQ(ns[1], c);
  for (int j = 0; j < c; ++j) EXPECT_TRUE(std::isnan(double(S[size_t(c) + j])));
  for (int t = 0; t < m * c; ++t) EXPECT_EQ(U[size_t(m) * c + t], T(0));
  for (int b : {0, 2}) {
    EXPECT_EQ(info[b], 0);
    const Ratios r = gesvdx_check::check(m, n, A.data() + size_t(b) * lda * n, lda, sig[b], 1, c,
                                         S.data() + size_t(b) * c, U.data() + size_t(b) * m * c, m,
                                         V.data() + size_t(b) * n * c, n);
    EXPECT_TRUE(r.pass()) << r;
  }
}

} // namespace
