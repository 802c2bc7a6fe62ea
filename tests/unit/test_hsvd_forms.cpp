// The hyperbolic SVD's pointer-array, variable-size and stream-ordered
// forms (bsvd.h, "Hyperbolic SVD") on the cpu backend: each matrix's
// results are those of a strided call of that matrix alone, bit for bit
// (the solver's result depends on the matrix and the options only); and
// the forms' own argument checks. Their GPU side: gpu/test_gpu_hsvd_forms.cpp.
#include "hsvd_problem.hpp"

#include <bsvd/bsvd.h>
#include <bsvd/svd.hpp>
#include <gtest/gtest.h>

namespace {

using namespace hsvd_test;

template <class T> class HsvdForms : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(HsvdForms, Types);

// Matrix i of a variable-size batch in its own buffers, with padded
// leading dimensions (lda = m + 3, ldu = m + 1, ldv = n + 2) filled with a
// sentinel that must survive the call.
template <class T> struct Padded {
  int m = 0, n = 0, nplus = 0, lda = 1, ldu = 1, ldv = 1;
  std::vector<T> A, U, V;
  std::vector<R_t<T>> S;
};

template <class T> Padded<T> padded(int m, int n, int nplus, uint64_t seed) {
  Padded<T> p;
  p.m = m;
  p.n = n;
  p.nplus = nplus;
  p.lda = m + 3;
  p.ldu = m + 1;
  p.ldv = n + 2;
  p.A.assign(size_t(p.lda) * std::max(n, 1), T(R_t<T>(99)));
  if (m > 0 && n > 0) {
    const Problem<T> P = make_problem<T>(m, n, nplus, 1e3, 1, seed);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) p.A[i + size_t(j) * p.lda] = P.G[i + size_t(j) * m];
  }
  p.S.assign(std::max(n, 1), R_t<T>(-7));
  p.U.assign(size_t(p.ldu) * std::max(n, 1), T(R_t<T>(-3)));
  p.V.assign(size_t(p.ldv) * std::max(n, 1), T(R_t<T>(-3)));
  return p;
}

// The matrix's results by the strided form alone, packed (ld = m, n).
template <class T> Out<T> alone(const Padded<T> &p) {
  std::vector<T> G(size_t(p.m) * p.n);
  for (int j = 0; j < p.n; ++j)
    for (int i = 0; i < p.m; ++i) G[i + size_t(j) * p.m] = p.A[i + size_t(j) * p.lda];
  return hsvd<T>(p.m, p.n, p.nplus, G);
}

// p's outputs compared with the packed ones of `ref`; the padding intact.
template <class T>
void expect_matches(const Padded<T> &p, const Out<T> &ref, int info, const char *what) {
  const int m = p.m, n = p.n;
  EXPECT_EQ(info, ref.info) << what;
  for (int j = 0; j < n; ++j) EXPECT_EQ(p.S[j], ref.S[j]) << what << ": S[" << j << "]";
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < m; ++i)
      ASSERT_EQ(p.U[i + size_t(j) * p.ldu], ref.U[i + size_t(j) * m]) << what << ": U";
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(p.V[i + size_t(j) * p.ldv], ref.V[i + size_t(j) * n]) << what << ": V";
    EXPECT_EQ(p.U[m + size_t(j) * p.ldu], T(R_t<T>(-3))) << what << ": U's padding";
    EXPECT_EQ(p.V[n + size_t(j) * p.ldv], T(R_t<T>(-3))) << what << ": V's padding";
  }
}

TYPED_TEST(HsvdForms, VariableSizesMatchStridedCalls) {
  using T = TypeParam;
  using R = R_t<T>;
  // (m, n, nplus): square and tall, nplus 0, n and between, an empty one.
  const int shapes[][3] = {{12, 8, 3}, {7, 7, 7}, {20, 5, 0}, {0, 0, 0}, {9, 3, 1}, {16, 16, 9}};
  const int batch = int(std::size(shapes));
  std::vector<Padded<T>> mats;
  for (int i = 0; i < batch; ++i)
    mats.push_back(padded<T>(shapes[i][0], shapes[i][1], shapes[i][2], 100 + i));
  std::vector<int> m, n, nplus, lda, ldu, ldv, info(batch, -99), sweeps(batch, -1);
  std::vector<const T *> A;
  std::vector<R *> S;
  std::vector<T *> U, V;
  for (Padded<T> &p : mats) {
    m.push_back(p.m);
    n.push_back(p.n);
    nplus.push_back(p.nplus);
    lda.push_back(p.lda);
    ldu.push_back(p.ldu);
    ldv.push_back(p.ldv);
    A.push_back(p.A.data());
    S.push_back(p.S.data());
    U.push_back(p.U.data());
    V.push_back(p.V.data());
  }
  ASSERT_EQ(bsvd::gehsvj_vbatched<T>(bsvd::Job::Vectors, m.data(), n.data(), nplus.data(), A.data(),
                                     lda.data(), S.data(), U.data(), ldu.data(), V.data(),
                                     ldv.data(), info.data(), sweeps.data(), batch, cpu_opts()),
            0)
      << bsvd_last_error();
  for (int i = 0; i < batch; ++i) {
    if (mats[i].n == 0) { // (a strided call of it alone would need lda >= 1)
      EXPECT_EQ(info[i], 0);
      EXPECT_EQ(sweeps[i], 0);
      continue;
    }
    const Out<T> ref = alone(mats[i]);
    ASSERT_EQ(ref.status, 0);
    expect_matches(mats[i], ref, info[i], "vbatched");
    EXPECT_EQ(sweeps[i], ref.sweeps);
    const Problem<T> P = make_problem<T>(mats[i].m, mats[i].n, mats[i].nplus, 1e3, 1, 100 + i);
    expect_ratios(measure(P, ref), "vbatched, matrix alone");
  }
}

TYPED_TEST(HsvdForms, PointerArraysMatchStridedCalls) {
  using T = TypeParam;
  using R = R_t<T>;
  const int m = 11, n = 6, batch = 4;
  std::vector<Padded<T>> mats;
  std::vector<int> nplus{0, 2, 6, 3}, info(batch, -99), sweeps(batch, -1);
  std::vector<const T *> A;
  std::vector<R *> S;
  std::vector<T *> U, V;
  for (int i = 0; i < batch; ++i) {
    mats.push_back(padded<T>(m, n, nplus[i], 200 + i));
    A.push_back(mats.back().A.data());
    S.push_back(mats.back().S.data());
    U.push_back(mats.back().U.data());
    V.push_back(mats.back().V.data());
  }
  const Padded<T> &p0 = mats[0];
  ASSERT_EQ(bsvd::gehsvj_batched<T>(bsvd::Job::Vectors, m, n, nplus.data(), A.data(), p0.lda,
                                    S.data(), U.data(), p0.ldu, V.data(), p0.ldv, info.data(),
                                    sweeps.data(), batch, cpu_opts()),
            0)
      << bsvd_last_error();
  for (int i = 0; i < batch; ++i) {
    const Out<T> ref = alone(mats[i]);
    expect_matches(mats[i], ref, info[i], "batched");
    EXPECT_EQ(sweeps[i], ref.sweeps);
  }
  // Values only, by the C entry point: the same S.
  std::vector<R> S2(size_t(batch) * n, R(-7));
  std::vector<R *> pS2;
  for (int i = 0; i < batch; ++i) pS2.push_back(S2.data() + size_t(i) * n);
  const bsvd_options_t o = cpu_opts();
  bsvd_status_t st = -99;
  if constexpr (std::is_same_v<T, double>)
    st = bsvd_dgehsvj_batched(BSVD_JOB_VALUES, m, n, nplus.data(), A.data(), p0.lda, pS2.data(),
                              nullptr, 1, nullptr, 1, info.data(), nullptr, batch, &o);
  else
    st =
        bsvd::gehsvj_batched<T>(bsvd::Job::Values, m, n, nplus.data(), A.data(), p0.lda, pS2.data(),
                                nullptr, 1, nullptr, 1, info.data(), nullptr, batch, o);
  ASSERT_EQ(st, 0) << bsvd_last_error();
  for (int i = 0; i < batch; ++i)
    for (int j = 0; j < n; ++j) EXPECT_EQ(S2[size_t(i) * n + j], mats[i].S[j]);
}

TYPED_TEST(HsvdForms, Arguments) {
  using T = TypeParam;
  using R = R_t<T>;
  const int batch = 2;
  Padded<T> a = padded<T>(6, 4, 2, 300), b = padded<T>(5, 5, 1, 301);
  std::vector<int> m{6, 5}, n{4, 5}, nplus{2, 1}, lda{a.lda, b.lda}, ldu{a.ldu, b.ldu},
      ldv{a.ldv, b.ldv}, info(batch);
  std::vector<const T *> A{a.A.data(), b.A.data()};
  std::vector<R *> S{a.S.data(), b.S.data()};
  std::vector<T *> U{a.U.data(), b.U.data()}, V{a.V.data(), b.V.data()};
  const bsvd::Job job = bsvd::Job::Vectors;
  auto vb = [&](bsvd_options_t o, bool async = false) {
    if (!async)
      return bsvd::gehsvj_vbatched<T>(job, m.data(), n.data(), nplus.data(), A.data(), lda.data(),
                                      S.data(), U.data(), ldu.data(), V.data(), ldv.data(),
                                      info.data(), nullptr, batch, o);
    if constexpr (std::is_same_v<T, float>)
      return bsvd_sgehsvj_vbatched_async(BSVD_JOB_VECTORS, m.data(), n.data(), nplus.data(),
                                         A.data(), lda.data(), S.data(), U.data(), ldu.data(),
                                         V.data(), ldv.data(), info.data(), nullptr, batch, &o);
    return bsvd_status_t(0);
  };
  EXPECT_EQ(vb(cpu_opts()), 0) << bsvd_last_error();
  m[1] = 4; // m[1] < n[1]
  EXPECT_EQ(vb(cpu_opts()), -3);
  EXPECT_NE(std::string(bsvd_last_error()).find("[1] = 5 exceeds m[1] = 4"), std::string::npos)
      << bsvd_last_error();
  m[1] = 5;
  nplus[1] = 6; // beyond n[1]
  EXPECT_EQ(vb(cpu_opts()), -4);
  EXPECT_NE(std::string(bsvd_last_error()).find("nplus"), std::string::npos);
  nplus[1] = 1;
  EXPECT_EQ(bsvd::gehsvj_vbatched<T>(job, m.data(), n.data(), nullptr, A.data(), lda.data(),
                                     S.data(), U.data(), ldu.data(), V.data(), ldv.data(),
                                     info.data(), nullptr, batch, cpu_opts()),
            -4);
  EXPECT_EQ(bsvd::gehsvj_batched<T>(job, 5, 4, nplus.data(), nullptr, 6, S.data(), U.data(), 6,
                                    V.data(), 5, info.data(), nullptr, batch, cpu_opts()),
            -5)
      << "A_array is argument 5";
  EXPECT_EQ(bsvd::gehsvj_batched<T>(job, 5, 4, nplus.data(), A.data(), 6, S.data(), U.data(), 6,
                                    V.data(), 5, nullptr, nullptr, batch, cpu_opts()),
            -12)
      << "info is argument 12";
  bsvd_options_t o = cpu_opts();
  o.precondition = 1;
  EXPECT_EQ(vb(o), BSVD_STATUS_NOT_SUPPORTED);
  size_t bytes = 1;
  const char p = bsvd::detail::precision_of<T>();
  EXPECT_EQ(bsvd_workspace_size_hsvd_v(p, BSVD_JOB_VECTORS, m.data(), n.data(), batch, &o, &bytes),
            0);
  EXPECT_EQ(bytes, 0u) << "the cpu's HSVD allocates its own scratch";
  EXPECT_EQ(bsvd_workspace_size_hsvd(p, BSVD_JOB_VECTORS, 6, 4, 2, nullptr, nullptr), -7);
  if constexpr (std::is_same_v<T, float>) { // the _async forms take device data on cuda
    EXPECT_EQ(vb(cpu_opts(), true), -15) << "opts->backend = cpu";
    o = cpu_opts();
    o.backend = BSVD_BACKEND_AUTO;
    EXPECT_EQ(vb(o, true), bsvd_cuda_available() ? -5 : BSVD_STATUS_BACKEND_UNAVAILABLE)
        << bsvd_last_error();
  }
}

} // namespace
