// Selected singular triplets through the C API (bsvd_<p>gesvdx_*, bsvd.h
// "Selected singular triplets") on the cpu backend: matrices of the
// testing families with known singular values, every range (all, index,
// value) and both jobs, by gesvdx_check.hpp's ratios; ns for a value
// interval between the prescribed values; the three forms agreeing;
// empty matrices in a variable-size batch; one NaN matrix spoiling
// nothing else; the argument checks.
#include "bidiag_helpers.hpp"
#include "blas_api_helpers.hpp"
#include "core/gesvdx_one.hpp"
#include "gesvdx_check.hpp"
#include "testing/generate.hpp"

#include <bsvd/bsvd.h>
#include <bsvd/device/gesvdx.cuh>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

namespace {

using namespace blas_test;
using bsvd::testing::Family;
using gesvdx_check::Ratios;

template <class T> class Gesvdx : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(Gesvdx, Types);

// A batch of m x n matrices of family f (leading dimension m + 1) and
// their prescribed values.
template <class T> struct Problem {
  int m, n, lda, batch;
  std::vector<T> A;
  std::vector<std::vector<double>> sigma;
  Problem(Family f, int m_, int n_, int batch_, uint64_t seed)
      : m(m_), n(n_), lda(m_ + 1), batch(batch_), A(size_t(m_ + 1) * n_ * batch_, T(0)),
        sigma(size_t(batch_)) {
    for (int b = 0; b < batch; ++b)
      bsvd::testing::generate<T>(f, m, n, bsvd::testing::default_kappa<T>(), seed + b,
                                 A.data() + size_t(b) * lda * n, lda, &sigma[size_t(b)]);
  }
  const T *a(int b) const { return A.data() + size_t(b) * lda * n; }
};

// One strided call; each matrix checked; returns the worst ratios and the
// ns of every matrix in ns_out.
template <class T> Ratios run_strided(const Problem<T> &P, bsvd_job_t job, bsvd_range_t range,
                                      double vl, double vu, int il, int iu,
                                      std::vector<int> &ns_out, const bsvd_options_t &o) {
  using R = R_t<T>;
  const int m = P.m, n = P.n, k = std::min(m, n), batch = P.batch;
  const int c = range == BSVD_RANGE_INDEX ? iu - il + 1 : k, ldu = m + 2, ldv = n + 3;
  std::vector<R> S(size_t(std::max(c, 1)) * batch, R(-7));
  std::vector<T> U(size_t(ldu) * std::max(c, 1) * batch, T(-7)),
      V(size_t(ldv) * std::max(c, 1) * batch, T(-7));
  std::vector<int> info(batch, 99);
  ns_out.assign(batch, -5);
  const bool vec = job == BSVD_JOB_VECTORS;
  EXPECT_EQ(Api<T>::gesvdx_strided(false, job, range, m, n, cp(P.A.data()), P.lda,
                                   int64_t(P.lda) * n, R(vl), R(vu), il, iu, ns_out.data(),
                                   S.data(), int64_t(std::max(c, 1)), cp(U.data()), ldu,
                                   int64_t(ldu) * std::max(c, 1), cp(V.data()), ldv,
                                   int64_t(ldv) * std::max(c, 1), info.data(), batch, &o),
            0)
      << bsvd_last_error();
  Ratios worst;
  for (int b = 0; b < batch; ++b) {
    EXPECT_EQ(info[b], 0);
    const int ns = ns_out[b];
    EXPECT_GE(ns, 0);
    EXPECT_LE(ns, c);
    int first = il;
    if (range == BSVD_RANGE_ALL) first = 0;
    if (range == BSVD_RANGE_VALUE) { // (the prescribed values in (vl, vu])
      first = 0;
      while (first < k && P.sigma[b][first] > vu) ++first;
    }
    const size_t so = size_t(b) * std::max(c, 1);
    worst.max_with(gesvdx_check::check(m, n, P.a(b), P.lda, P.sigma[b], first, ns, S.data() + so,
                                       vec ? U.data() + so * ldu : nullptr, ldu,
                                       vec ? V.data() + so * ldv : nullptr, ldv));
    for (int j = ns; j < c; ++j) EXPECT_EQ(S[so + j], R(-7)) << "beyond ns: not written";
  }
  return worst;
}

TYPED_TEST(Gesvdx, EveryRangeAndShapeByTheRatios) {
  using T = TypeParam;
  const bsvd_options_t o = options(BSVD_BACKEND_CPU);
  const int shapes[][2] = {{1, 1}, {5, 3}, {3, 5}, {17, 17}, {40, 25}, {25, 40}, {64, 64}};
  const Family fams[] = {Family::Arith, Family::Logrand, Family::Cluster1, Family::Geo};
  Ratios worst;
  uint64_t seed = 1000;
  for (const auto &s : shapes)
    for (Family f : fams) {
      const int m = s[0], n = s[1], k = std::min(m, n);
      Problem<T> P(f, m, n, 3, seed += 17);
      std::vector<int> ns;
      for (bsvd_job_t job : {BSVD_JOB_VECTORS, BSVD_JOB_VALUES}) {
        worst.max_with(run_strided(P, job, BSVD_RANGE_ALL, 0, 0, 0, 0, ns, o));
        for (int b = 0; b < P.batch; ++b) EXPECT_EQ(ns[b], k);
        const int il = k / 3, iu = std::min(k - 1, il + 2);
        worst.max_with(run_strided(P, job, BSVD_RANGE_INDEX, 0, 0, il, iu, ns, o));
        for (int b = 0; b < P.batch; ++b) EXPECT_EQ(ns[b], iu - il + 1);
      }
      EXPECT_TRUE(worst.pass()) << m << " x " << n << " " << bsvd::testing::family_name(f) << ": "
                                << worst;
    }
}

// Arith's values are evenly spaced: an interval with ends half-way between
// prescribed values holds a known number of them.
TYPED_TEST(Gesvdx, ValueIntervalCountsThePrescribedValues) {
  using T = TypeParam;
  const bsvd_options_t o = options(BSVD_BACKEND_CPU);
  for (int mn : {6, 30}) {
    for (int tall = 0; tall < 2; ++tall) {
      const int m = tall ? mn + 7 : mn, n = tall ? mn : mn + 7;
      Problem<T> P(Family::Arith, m, n, 2, 77 + mn + tall);
      const std::vector<double> &s = P.sigma[0];
      const int k = mn, a = k / 4, b = std::max(a + 1, 3 * k / 4); // (values a+1 ... b)
      const double vu = 0.5 * (s[a] + s[a + 1]), vl = 0.5 * (s[b] + s[b + 1 < k ? b + 1 : b]);
      std::vector<int> ns;
      for (bsvd_job_t job : {BSVD_JOB_VECTORS, BSVD_JOB_VALUES}) {
        const Ratios r =
            run_strided(P, job, BSVD_RANGE_VALUE, b + 1 < k ? vl : 0.0, vu, 0, 0, ns, o);
        EXPECT_TRUE(r.pass()) << m << " x " << n << ": " << r;
        EXPECT_EQ(ns[0], b + 1 < k ? b - a : k - a - 1) << m << " x " << n;
      }
      // everything, and nothing
      run_strided(P, BSVD_JOB_VALUES, BSVD_RANGE_VALUE, 0, std::numeric_limits<double>::infinity(),
                  0, 0, ns, o);
      EXPECT_EQ(ns[0], k);
      run_strided(P, BSVD_JOB_VECTORS, BSVD_RANGE_VALUE, 2 * s[0], 4 * s[0], 0, 0, ns, o);
      EXPECT_EQ(ns[0], 0);
    }
  }
}

// The pointer-array and variable-size forms give the strided form's bits;
// an empty matrix in the variable batch gets ns = 0.
TYPED_TEST(Gesvdx, FormsAgreeAndEmptyMatrices) {
  using T = TypeParam;
  using R = R_t<T>;
  const bsvd_options_t o = options(BSVD_BACKEND_CPU);
  const int sizes[][2] = {{9, 7}, {0, 4}, {7, 12}, {3, 0}, {16, 16}};
  const int batch = 5, il = 1, iu = 2, c = iu - il + 1;
  std::vector<std::vector<T>> A(batch), U(batch), V(batch);
  std::vector<std::vector<R>> S(batch);
  std::vector<int> m(batch), n(batch), lda(batch), ldu(batch), ldv(batch), ns(batch, -1),
      info(batch, 9);
  std::vector<const T *> Ap(batch);
  std::vector<R *> Sp(batch);
  std::vector<T *> Up(batch), Vp(batch);
  for (int b = 0; b < batch; ++b) {
    m[b] = sizes[b][0], n[b] = sizes[b][1], lda[b] = std::max(1, m[b]);
    ldu[b] = std::max(1, m[b]), ldv[b] = std::max(1, n[b]);
    A[b].assign(size_t(lda[b]) * std::max(1, n[b]), T(0));
    if (m[b] && n[b])
      bsvd::testing::generate<T>(Family::Logrand, m[b], n[b], 1e3, 40 + b, A[b].data(), lda[b]);
    S[b].assign(c, R(-7)), U[b].assign(size_t(ldu[b]) * c, T(-7)),
        V[b].assign(size_t(ldv[b]) * c, T(-7));
    Ap[b] = A[b].data(), Sp[b] = S[b].data(), Up[b] = U[b].data(), Vp[b] = V[b].data();
  }
  ASSERT_EQ(Api<T>::gesvdx_vbatched(false, BSVD_JOB_VECTORS, BSVD_RANGE_INDEX, m.data(), n.data(),
                                    cpa(Ap.data()), lda.data(), R(0), R(0), il, iu, ns.data(),
                                    Sp.data(), cpa(Up.data()), ldu.data(), cpa(Vp.data()),
                                    ldv.data(), info.data(), batch, &o),
            0)
      << bsvd_last_error();
  for (int b = 0; b < batch; ++b) {
    EXPECT_EQ(info[b], 0);
    EXPECT_EQ(ns[b], std::min(m[b], n[b]) ? c : 0) << b;
  }
  // matrix 4 (16 x 16) alone through the strided and pointer-array forms
  const int b = 4;
  std::vector<R> S2(c), S3(c);
  std::vector<T> U2(size_t(16) * c), V2(U2), U3(U2), V3(U2);
  int ns2 = -1, ns3 = -1, info2 = 9, info3 = 9;
  ASSERT_EQ(Api<T>::gesvdx_strided(false, BSVD_JOB_VECTORS, BSVD_RANGE_INDEX, 16, 16, cp(Ap[b]), 16,
                                   int64_t(256), R(0), R(0), il, iu, &ns2, S2.data(), int64_t(c),
                                   cp(U2.data()), 16, int64_t(16 * c), cp(V2.data()), 16,
                                   int64_t(16 * c), &info2, 1, &o),
            0);
  const T *a1[] = {Ap[b]};
  R *s1[] = {S3.data()};
  T *u1[] = {U3.data()}, *v1[] = {V3.data()};
  ASSERT_EQ(Api<T>::gesvdx_batched(false, BSVD_JOB_VECTORS, BSVD_RANGE_INDEX, 16, 16, cpa(a1), 16,
                                   R(0), R(0), il, iu, &ns3, s1, cpa(u1), 16, cpa(v1), 16, &info3,
                                   1, &o),
            0);
  EXPECT_EQ(ns2, c);
  EXPECT_EQ(ns3, c);
  EXPECT_EQ(S2, S[b]);
  EXPECT_EQ(S3, S[b]);
  EXPECT_EQ(U2, U[b]);
  EXPECT_EQ(U3, U[b]);
  EXPECT_EQ(V2, V[b]);
  EXPECT_EQ(V3, V[b]);
}

// A NaN in matrix 1 of 3: its info and outputs say so, the others are as
// when solved alone.
TYPED_TEST(Gesvdx, NonFiniteMatrixSpoilsNothingElse) {
  using T = TypeParam;
  using R = R_t<T>;
  const bsvd_options_t o = options(BSVD_BACKEND_CPU);
  Problem<T> P(Family::Geo, 12, 10, 3, 5);
  P.A[size_t(P.lda) * 10 + 3 + size_t(P.lda) * 4] = T(std::numeric_limits<R>::quiet_NaN());
  std::vector<int> ns;
  for (bsvd_range_t range : {BSVD_RANGE_INDEX, BSVD_RANGE_VALUE}) {
    const int c = range == BSVD_RANGE_INDEX ? 3 : 10;
    std::vector<R> S(size_t(c) * 3);
    std::vector<T> U(size_t(12) * c * 3), V(size_t(10) * c * 3);
    std::vector<int> info(3, 9);
    ns.assign(3, -1);
    ASSERT_EQ(Api<T>::gesvdx_strided(false, BSVD_JOB_VECTORS, range, 12, 10, cp(P.A.data()), P.lda,
                                     int64_t(P.lda) * 10, R(0.01), R(2), 0, 2, ns.data(), S.data(),
                                     int64_t(c), cp(U.data()), 12, int64_t(12) * c, cp(V.data()),
                                     10, int64_t(10) * c, info.data(), 3, &o),
              0);
    EXPECT_EQ(info[0], 0);
    EXPECT_EQ(info[1], BSVD_INFO_NONFINITE);
    EXPECT_EQ(info[2], 0);
    for (int b : {0, 2}) {
      const Ratios r =
          gesvdx_check::check(12, 10, P.a(b), P.lda, P.sigma[b], 0, ns[b], S.data() + size_t(b) * c,
                              U.data() + size_t(b) * 12 * c, 12, V.data() + size_t(b) * 10 * c, 10);
      EXPECT_TRUE(r.pass()) << r;
      EXPECT_GT(ns[b], 0);
    }
    if (range == BSVD_RANGE_INDEX) {
      EXPECT_EQ(ns[1], 3);
      for (int j = 0; j < 3; ++j) EXPECT_TRUE(std::isnan(double(S[size_t(c) + j])));
      for (int t = 0; t < 12 * 3; ++t) EXPECT_EQ(U[size_t(12) * c + t], T(0));
    } else {
      EXPECT_EQ(ns[1], 0);
    }
  }
}

// The device function the cuda kernel runs on a block (gesvdx_bidiag:
// bdsvx and the widening on the first member, the back-transformation and
// the values' bisection over the team, the barriers between) on host teams
// of 3 and 8 threads: the serial bits, upper and lower bidiagonals, with
// and without vectors.
TYPED_TEST(Gesvdx, DeviceFunctionOnATeamGivesTheSerialBits) {
  using T = TypeParam;
  using R = R_t<T>;
  for (auto [m, n] : std::vector<std::pair<int, int>>{{21, 13}, {13, 21}, {16, 16}}) {
    const int k = std::min(m, n), il = 2, iu = 6, c = iu - il + 1;
    std::vector<T> A(size_t(m) * n), work(size_t(std::max(m, n))), tq(k), tp(k);
    std::vector<R> d(k), e(k);
    bsvd::testing::generate<T>(Family::Logrand, m, n, 1e4, 91 + m, A.data(), m);
    bsvd::device::gebd2(m, n, A.data(), m, d.data(), e.data(), tq.data(), tp.data(), work.data());
    for (bool vec : {true, false}) {
      struct Out {
        std::vector<R> S, rw;
        std::vector<T> U, V, w;
        int info = 99;
      };
      auto make = [&] {
        Out o;
        o.S.assign(c, R(-7)), o.rw.assign(bsvd::device::gesvdx_rwork(k), R(0));
        o.U.assign(size_t(m) * c, T(-7)), o.V.assign(size_t(n) * c, T(-7));
        o.w.assign(bsvd::device::gesvdx_work(m, n, c), T(0));
        return o;
      };
      Out serial = make();
      serial.info = bsvd::device::gesvdx_bidiag(
          m, n, A.data(), m, d.data(), e.data(), tq.data(), tp.data(), il, iu, serial.S.data(),
          vec ? serial.U.data() : nullptr, m, vec ? serial.V.data() : nullptr, n, serial.rw.data(),
          serial.w.data());
      EXPECT_EQ(serial.info, 0);
      for (int nt : {3, 8}) {
        Out t = make();
        bidiag_test::run_team(nt, [&](const bidiag_test::HostTeam &team) {
          const int st = bsvd::device::gesvdx_bidiag(
              m, n, A.data(), m, d.data(), e.data(), tq.data(), tp.data(), il, iu, t.S.data(),
              vec ? t.U.data() : nullptr, m, vec ? t.V.data() : nullptr, n, t.rw.data(), t.w.data(),
              team);
          if (team.rank() == 0) t.info = st;
        });
        EXPECT_EQ(t.info, 0);
        EXPECT_EQ(t.S, serial.S) << m << " x " << n << " team " << nt;
        EXPECT_EQ(t.U, serial.U) << m << " x " << n << " team " << nt;
        EXPECT_EQ(t.V, serial.V) << m << " x " << n << " team " << nt;
      }
    }
    // A value interval through gesvdx_one (its first member counts, two
    // team reductions hand il and ns to the others): the serial ns and S.
    bsvd::detail::GesvdxBatch<T> b;
    b.range = BSVD_RANGE_VALUE, b.vl = R(1e-3), b.vu = R(0.5), b.count = 1;
    b.dims.m = m, b.dims.n = n;
    int ns1 = -1, info1 = 9, ns2 = -1, info2 = 9;
    std::vector<R> S1(k, R(-7)), S2(k, R(-7)), rw(bsvd::device::gesvdx_rwork(k));
    b.S.base = S1.data(), b.ns = &ns1, b.info = &info1;
    bsvd::detail::gesvdx_one(b, 0, A.data(), m, d.data(), e.data(), tq.data(), tp.data(), rw.data(),
                             work.data(), bsvd::device::serial_team{});
    b.S.base = S2.data(), b.ns = &ns2, b.info = &info2;
    std::vector<R> rw2(rw.size());
    bidiag_test::run_team(5, [&](const bidiag_test::HostTeam &team) {
      bsvd::detail::gesvdx_one(b, 0, A.data(), m, d.data(), e.data(), tq.data(), tp.data(),
                               rw2.data(), work.data(), team);
    });
    EXPECT_GT(ns1, 0);
    EXPECT_LT(ns1, k);
    EXPECT_EQ(ns2, ns1);
    EXPECT_EQ(info1, 0);
    EXPECT_EQ(info2, 0);
    EXPECT_EQ(S2, S1);
  }
}

TYPED_TEST(Gesvdx, BadArgumentsNameTheirPosition) {
  using T = TypeParam;
  using R = R_t<T>;
  const bsvd_options_t o = options(BSVD_BACKEND_CPU);
  std::vector<T> A(64, T(1)), U(64), V(64);
  std::vector<R> S(8);
  int ns[2], info[2];
  auto call = [&](bsvd_job_t job, int range, int m, int n, int lda, R vl, R vu, int il, int iu,
                  int ldu, int64_t sS, int *nsp) {
    return Api<T>::gesvdx_strided(false, job, bsvd_range_t(range), m, n, cp(A.data()), lda,
                                  int64_t(32), vl, vu, il, iu, nsp, S.data(), sS, cp(U.data()), ldu,
                                  int64_t(32), cp(V.data()), 4, int64_t(16), info, 2, &o);
  };
  const bsvd_job_t V_ = BSVD_JOB_VECTORS;
  EXPECT_EQ(call(bsvd_job_t(5), 0, 4, 4, 4, 0, 1, 0, 0, 4, 4, ns), -1);
  EXPECT_EQ(call(V_, 3, 4, 4, 4, 0, 1, 0, 0, 4, 4, ns), -2);
  EXPECT_EQ(call(V_, 0, -1, 4, 4, 0, 1, 0, 0, 4, 4, ns), -3);
  EXPECT_EQ(call(V_, 0, 4, 4, 3, 0, 1, 0, 0, 4, 4, ns), -6);
  EXPECT_EQ(call(V_, BSVD_RANGE_VALUE, 4, 4, 4, R(-1), 1, 0, 0, 4, 4, ns), -8);
  EXPECT_EQ(call(V_, BSVD_RANGE_VALUE, 4, 4, 4, 1, 1, 0, 0, 4, 4, ns), -9);
  EXPECT_EQ(
      call(V_, BSVD_RANGE_VALUE, 4, 4, 4, std::numeric_limits<R>::quiet_NaN(), 1, 0, 0, 4, 4, ns),
      -8);
  EXPECT_EQ(call(V_, BSVD_RANGE_INDEX, 4, 4, 4, 0, 0, -1, 0, 4, 4, ns), -10);
  EXPECT_EQ(call(V_, BSVD_RANGE_INDEX, 4, 4, 4, 0, 0, 2, 1, 4, 4, ns), -11);
  EXPECT_EQ(call(V_, BSVD_RANGE_INDEX, 4, 4, 4, 0, 0, 1, 4, 4, 4, ns), -11); // iu >= k
  EXPECT_EQ(call(V_, 0, 4, 4, 4, 0, 1, 0, 0, 4, 4, nullptr), -12);
  EXPECT_EQ(call(V_, 0, 4, 4, 4, 0, 1, 0, 0, 4, 3, ns), -14); // strideS < k
  EXPECT_EQ(call(V_, 0, 4, 4, 4, 0, 1, 0, 0, 3, 4, ns), -16);
  EXPECT_EQ(call(V_, BSVD_RANGE_INDEX, 4, 4, 4, 0, 0, 1, 2, 4, 2, ns), 0); // (room: iu - il + 1)
  EXPECT_EQ(call(BSVD_JOB_VALUES, 0, 4, 4, 4, 0, 1, 0, 0, 1, 4, ns), 0); // (ldu unread)
  // the index range of each matrix of a variable batch
  int m[2] = {4, 2}, n[2] = {4, 3}, ld[2] = {4, 4};
  const T *Ap[2] = {A.data(), A.data() + 32};
  R *Sp[2] = {S.data(), S.data() + 4};
  EXPECT_EQ(Api<T>::gesvdx_vbatched(false, BSVD_JOB_VALUES, BSVD_RANGE_INDEX, m, n, cpa(Ap), ld,
                                    R(0), R(0), 0, 2, ns, Sp, nullptr, nullptr, nullptr, nullptr,
                                    info, 2, &o),
            -10);
  EXPECT_NE(std::string(bsvd_last_error()).find("matrix 1"), std::string::npos)
      << bsvd_last_error();
}

} // namespace
