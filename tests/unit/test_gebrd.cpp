// Batched GEBRD through the C API (bsvd_<p>gebrd_*, bsvd.h "Batched BLAS
// and LAPACK") on the cpu backend: every matrix of a batch against LAPACK
// by the scaled ratios of the device header's tests (gebrd_check.hpp:
// ||A - Q B P^H||, the orthogonality of Q and P built by xORGBR / xUNGBR
// from the output, d and e against xGEBRD's), shapes from empty to 70 x 70
// both ways; the three forms agreeing bit for bit with the device header on
// one thread (gebd2); per-matrix info; the argument checks.
#include "blas_api_helpers.hpp"
#include "gebrd_check.hpp"
#include "testing/generate.hpp"

#include <bsvd/bsvd.h>
#include <bsvd/device/gebrd.cuh>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

namespace {

using namespace blas_test;
using gebrd_check::Bidiag;
using gebrd_check::Ratios;

template <class T> class Gebrd : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(Gebrd, Types);

// A strided batch of `batch` random m x n matrices (leading dimension
// m + pad) and the outputs of one call.
template <class T> struct Run {
  int m, n, lda, k, batch;
  std::vector<T> A0, A, tauq, taup;
  std::vector<R_t<T>> d, e;
  std::vector<int> info;
  Run(int m_, int n_, int pad, int batch_, unsigned seed)
      : m(m_), n(n_), lda(std::max(m_, 1) + pad), k(std::min(m_, n_)), batch(batch_) {
    A0.assign(size_t(lda) * n * batch + 1, T(1));
    for (int b = 0; b < batch && k > 0; ++b)
      bsvd::testing::generate<T>(bsvd::testing::Family::Random, m, n, 1, seed + b,
                                 A0.data() + size_t(b) * lda * n, lda);
    A = A0;
    tauq.assign(size_t(k) * batch + 1, T(-9));
    taup = tauq;
    d.assign(size_t(k) * batch + 1, R_t<T>(-9));
    e = d;
    info.assign(batch, 99);
  }
  bsvd_status_t call(const bsvd_options_t &o) {
    const int64_t sA = int64_t(lda) * n, sk = k, se = std::max(k - 1, 0);
    return Api<T>::gebrd_strided(false, m, n, cp(A.data()), lda, sA, d.data(), sk, e.data(), se,
                                 cp(tauq.data()), sk, cp(taup.data()), sk, info.data(), batch, &o);
  }
  // Matrix b's outputs as the header test's Bidiag (e at stride k - 1).
  Bidiag<T> out(int b) const {
    Bidiag<T> r;
    r.lda = lda;
    r.info = info[size_t(b)];
    r.A.assign(A.begin() + size_t(b) * lda * n, A.begin() + size_t(b + 1) * lda * n);
    const size_t o = size_t(b) * k, oe = size_t(b) * std::max(k - 1, 0);
    r.d.assign(d.begin() + o, d.begin() + o + k);
    r.e.assign(e.begin() + oe, e.begin() + oe + std::max(k - 1, 0));
    r.e.resize(std::max(k, 1));
    r.tauq.assign(tauq.begin() + o, tauq.begin() + o + k);
    r.taup.assign(taup.begin() + o, taup.begin() + o + k);
    return r;
  }
};

TYPED_TEST(Gebrd, AgainstLapack) {
  using T = TypeParam;
  Ratios worst;
  for (auto [m, n] : std::vector<std::pair<int, int>>{{0, 0},
                                                      {0, 4},
                                                      {4, 0},
                                                      {1, 1},
                                                      {1, 7},
                                                      {7, 1},
                                                      {2, 2},
                                                      {6, 4},
                                                      {4, 6},
                                                      {16, 16},
                                                      {33, 20},
                                                      {20, 33},
                                                      {70, 70},
                                                      {64, 9},
                                                      {9, 64}})
    for (int pad : {0, 3}) {
      Run<T> r(m, n, pad, 3, 100 * m + n + pad);
      ASSERT_EQ(r.call(options(BSVD_BACKEND_CPU)), 0) << bsvd_last_error();
      for (int b = 0; b < r.batch; ++b) {
        EXPECT_EQ(r.info[b], 0);
        if (r.k == 0) continue;
        const Ratios q =
            gebrd_check::check(m, n, r.A0.data() + size_t(b) * r.lda * n, r.lda, r.out(b));
        EXPECT_TRUE(q.pass()) << m << "x" << n << " lda " << r.lda << " b " << b << ": " << q;
        worst.max_with(q);
      }
      if (r.k == 0) EXPECT_EQ(r.A, r.A0); // nothing to reduce
    }
  std::printf("[ gebrd api ] %s: max %s\n", bidiag_test::prec_name<T>(),
              gebrd_check::str(worst).c_str());
}

// The forms (strided, batched, vbatched with each matrix its own size) and
// the device header on one thread: the same bits.
TYPED_TEST(Gebrd, FormsMatchTheDeviceHeader) {
  using T = TypeParam;
  using R = R_t<T>;
  const std::vector<int> mv = {5, 12, 0, 30, 1, 8}, nv = {5, 7, 3, 31, 9, 1};
  const int batch = int(mv.size());
  std::vector<std::vector<T>> A(batch), tq(batch), tp(batch), W(batch);
  std::vector<std::vector<R>> d(batch), e(batch);
  std::vector<int> lda(batch), info(batch, 99);
  for (int b = 0; b < batch; ++b) {
    const int k = std::min(mv[b], nv[b]);
    lda[b] = mv[b] + 2;
    A[b].assign(size_t(lda[b]) * nv[b] + 1, T(0));
    bsvd::testing::generate<T>(bsvd::testing::Family::Random, mv[b], nv[b], 1, 7 + b, A[b].data(),
                               lda[b]);
    tq[b].assign(size_t(std::max(k, 1)), T(0));
    tp[b] = tq[b];
    d[b].assign(size_t(std::max(k, 1)), R(0));
    e[b] = d[b];
  }
  // The header, matrix by matrix.
  auto hA = A, htq = tq, htp = tp;
  auto hd = d, he = e;
  for (int b = 0; b < batch; ++b) {
    std::vector<T> work(size_t(std::max({mv[b], nv[b], 1})));
    bsvd::device::gebd2(mv[b], nv[b], hA[b].data(), lda[b], hd[b].data(), he[b].data(),
                        htq[b].data(), htp[b].data(), work.data());
  }
  std::vector<T *> Ap, tqp, tpp;
  std::vector<R *> dp, ep;
  for (int b = 0; b < batch; ++b) {
    Ap.push_back(A[b].data()), tqp.push_back(tq[b].data()), tpp.push_back(tp[b].data());
    dp.push_back(d[b].data()), ep.push_back(e[b].data());
  }
  bsvd_options_t o = options(BSVD_BACKEND_CPU);
  ASSERT_EQ(Api<T>::gebrd_vbatched(false, mv.data(), nv.data(), cpa(Ap.data()), lda.data(),
                                   dp.data(), ep.data(), cpa(tqp.data()), cpa(tpp.data()),
                                   info.data(), batch, &o),
            0)
      << bsvd_last_error();
  EXPECT_EQ(A, hA);
  EXPECT_EQ(d, hd);
  EXPECT_EQ(e, he);
  EXPECT_EQ(tq, htq);
  EXPECT_EQ(tp, htp);
  for (int i : info) EXPECT_EQ(i, 0);
  // The uniform forms on the first matrix's size, two threads.
  Run<T> s(12, 7, 2, 5, 3), p(12, 7, 2, 5, 3);
  o.num_threads = 2;
  ASSERT_EQ(s.call(o), 0);
  std::vector<T *> pA, ptq, ptp;
  std::vector<R *> pd, pe;
  for (int b = 0; b < 5; ++b) {
    pA.push_back(p.A.data() + size_t(b) * p.lda * p.n);
    ptq.push_back(p.tauq.data() + size_t(b) * p.k), ptp.push_back(p.taup.data() + size_t(b) * p.k);
    pd.push_back(p.d.data() + size_t(b) * p.k), pe.push_back(p.e.data() + size_t(b) * (p.k - 1));
  }
  ASSERT_EQ(Api<T>::gebrd_batched(false, 12, 7, cpa(pA.data()), p.lda, pd.data(), pe.data(),
                                  cpa(ptq.data()), cpa(ptp.data()), p.info.data(), 5, &o),
            0);
  EXPECT_EQ(s.A, p.A);
  EXPECT_EQ(s.d, p.d);
  EXPECT_EQ(s.e, p.e);
  EXPECT_EQ(s.tauq, p.tauq);
}

// NaN in one matrix: its info is BSVD_INFO_NONFINITE, the others' 0.
TYPED_TEST(Gebrd, NonFiniteInfo) {
  using T = TypeParam;
  Run<T> r(6, 5, 0, 3, 1);
  r.A[size_t(r.lda) * r.n + 4] = T(std::numeric_limits<R_t<T>>::quiet_NaN()); // matrix 1
  ASSERT_EQ(r.call(options(BSVD_BACKEND_CPU)), 0);
  EXPECT_EQ(r.info, (std::vector<int>{0, BSVD_INFO_NONFINITE, 0}));
}

TEST(GebrdArgs, NamesTheArgument) {
  struct Call {
    int m = 5, n = 4, lda = 5, batch = 2;
    int64_t sA = 20, sd = 4, se = 3, stq = 4, stp = 4;
    std::vector<double> A = std::vector<double>(40, 1.0), d = std::vector<double>(8, 0.0),
                        e = std::vector<double>(8, 0.0), tq = std::vector<double>(8, 0.0),
                        tp = std::vector<double>(8, 0.0);
    std::vector<int> info = std::vector<int>(2, 7);
    bool nA = false, nd = false, ne = false, ninfo = false;
    bsvd_options_t o = options(BSVD_BACKEND_CPU);
    bsvd_status_t run() {
      return bsvd_dgebrd_strided_batched(m, n, nA ? nullptr : A.data(), lda, sA,
                                         nd ? nullptr : d.data(), sd, ne ? nullptr : e.data(), se,
                                         tq.data(), stq, tp.data(), stp,
                                         ninfo ? nullptr : info.data(), batch, &o);
    }
  };
  struct Bad {
    const char *what;
    int status;
    void (*set)(Call &);
  };
  const Bad cases[] = {
      {"m", -1, [](Call &c) { c.m = -1; }},
      {"n", -2, [](Call &c) { c.n = -2; }},
      {"A", -3, [](Call &c) { c.nA = true; }},
      {"lda", -4, [](Call &c) { c.lda = 4; }},
      {"strideA", -5, [](Call &c) { c.sA = 19; }},
      {"d", -6, [](Call &c) { c.nd = true; }},
      {"strided", -7, [](Call &c) { c.sd = 3; }},
      {"e", -8, [](Call &c) { c.ne = true; }},
      {"stridee", -9, [](Call &c) { c.se = 2; }},
      {"stridetauq", -11, [](Call &c) { c.stq = 3; }},
      {"stridetaup", -13, [](Call &c) { c.stp = 0; }},
      {"info", -14, [](Call &c) { c.ninfo = true; }},
      {"batch", -15, [](Call &c) { c.batch = -1; }},
      {"opts->struct_size", -16, [](Call &c) { c.o.struct_size = 1; }},
  };
  for (const Bad &b : cases) {
    Call c;
    b.set(c);
    EXPECT_EQ(c.run(), b.status) << b.what;
    EXPECT_NE(std::string(bsvd_last_error()).find(b.what), std::string::npos)
        << b.what << ": " << bsvd_last_error();
    EXPECT_EQ(c.A, std::vector<double>(40, 1.0)) << b.what << ": A written";
    EXPECT_EQ(c.info, std::vector<int>(2, 7)) << b.what << ": info written";
  }
  Call ok;
  EXPECT_EQ(ok.run(), 0) << bsvd_last_error();
  // e may be NULL when min(m, n) = 1; every pointer but info when it is 0.
  Call one;
  one.n = 1, one.sA = 5, one.se = 0, one.ne = true;
  EXPECT_EQ(one.run(), 0) << bsvd_last_error();
  Call none;
  none.n = 0, none.nA = none.nd = none.ne = true;
  EXPECT_EQ(none.run(), 0) << bsvd_last_error();
  EXPECT_EQ(none.info, std::vector<int>(2, 0));
  // Pointer-array forms: the arrays, and a NULL entry named by its matrix.
  double a[20] = {1}, dd[4], ee[3], t1[4], t2[4];
  double *Ap[2] = {a, nullptr}, *dp[2] = {dd, dd}, *ep[2] = {ee, ee}, *qp[2] = {t1, t1},
         *pp[2] = {t2, t2};
  int info[2];
  bsvd_options_t o = options(BSVD_BACKEND_CPU);
  EXPECT_EQ(bsvd_dgebrd_batched(5, 4, Ap, 5, dp, ep, qp, pp, info, 2, &o), -3);
  EXPECT_NE(std::string(bsvd_last_error()).find("matrix 1"), std::string::npos);
  EXPECT_EQ(bsvd_dgebrd_batched(5, 4, Ap, 5, nullptr, ep, qp, pp, info, 2, &o), -5);
  EXPECT_EQ(bsvd_dgebrd_batched(5, 4, Ap, 5, dp, ep, qp, nullptr, info, 2, &o), -8);
  const int mv[2] = {5, 0}, nv[2] = {4, 3}, ldv[2] = {5, 0};
  EXPECT_EQ(bsvd_dgebrd_vbatched(mv, nv, Ap, ldv, dp, ep, qp, pp, info, 2, &o), -4);
  EXPECT_NE(std::string(bsvd_last_error()).find("lda[1]"), std::string::npos) << bsvd_last_error();
  const int ldv2[2] = {5, 1};
  EXPECT_EQ(bsvd_dgebrd_vbatched(mv, nv, Ap, ldv2, dp, ep, qp, pp, info, 2, &o), 0)
      << bsvd_last_error(); // (matrix 1 is empty: its NULL A is not read)
  EXPECT_EQ(bsvd_dgebrd_vbatched(nullptr, nv, Ap, ldv2, dp, ep, qp, pp, info, 2, &o), -1);
  o.backend = BSVD_BACKEND_CUDA;
  EXPECT_EQ(bsvd_dgebrd_vbatched(mv, nv, Ap, ldv2, dp, ep, qp, pp, info, 2, &o),
            bsvd_cuda_available() ? int(BSVD_STATUS_NOT_SUPPORTED)
                                  : int(BSVD_STATUS_BACKEND_UNAVAILABLE));
}

} // namespace
