// The cpu backend's LAPACK path (BSVD_PATH_CPU_LAPACK, src/cpu/lapack.cpp)
// and the planner's rule that picks it (plan::cpu_lapack): T1-T4 on the six
// families and the edge matrices, non-finite input isolated per matrix,
// wide and variable-size batches, the options that keep the Jacobi solver,
// and the thread cap of the public API.
#include "test_cpu_helpers.hpp"

#include "core/api_common.hpp" // make_config
#include "core/overrides.hpp"
#include "plan/plan.hpp"

#include <bsvd/bsvd.h>

#include <algorithm>
#include <thread>

using namespace bsvd_cpu_test;
using bsvd::detail::Force;
using bsvd::detail::Overrides;
using bsvd::detail::ScopedOverrides;
using bsvd::testing::Edge;
using bsvd::testing::Family;

namespace {

template <class T> class CpuLapack : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(CpuLapack, Types);

// Every matrix of the default configuration (variant auto) that may take
// the LAPACK path takes it, whatever its size.
Overrides lapack_on() {
  Overrides o = bsvd::detail::current_overrides();
  o.cpu_lapack = Force::kOn;
  return o;
}

// Solves A with the default configuration and checks T1-T4 (limit 30 u),
// info 0, sweeps 0 and the path. sigma may be empty (no value check).
template <class T> void check_lapack(int m, int n, const T *A, int lda,
                                     const std::vector<double> &sigma, const std::string &what,
                                     bool vectors = true) {
  const Result<T> r = solve(m, n, A, lda, Config(), vectors, 1, 2);
  ASSERT_EQ(r.status, 0) << what;
  EXPECT_EQ(r.path, BSVD_PATH_CPU_LAPACK) << what;
  EXPECT_EQ(r.info, 0) << what;
  EXPECT_EQ(r.sweeps, 0) << what;
  const Measures ms = measure(m, n, A, lda, r, sigma);
  EXPECT_LT(ms.worst(), kLimit) << type_name<T>() << " " << what << ": " << ratios_str(ms);
  for (int j = 0; j < r.k && vectors; ++j) { // padding rows untouched
    for (int i = m; i < r.ldu; ++i) EXPECT_EQ(r.U[i + size_t(j) * r.ldu], T(-3)) << what;
    for (int i = n; i < r.ldv; ++i) EXPECT_EQ(r.V[i + size_t(j) * r.ldv], T(-3)) << what;
  }
}

TYPED_TEST(CpuLapack, FamiliesPassTheAccuracyChecks) {
  using T = TypeParam;
  ScopedOverrides force(lapack_on());
  const std::vector<std::pair<int, int>> shapes{{1, 1},   {2, 2},   {8, 8},   {33, 33},
                                                {64, 64}, {40, 13}, {13, 40}, {3, 17}};
  uint64_t seed = 700;
  for (Family f : {Family::Random, Family::Arith, Family::Cluster0, Family::Cluster1,
                   Family::Logrand, Family::Geo})
    for (auto [m, n] : shapes) {
      const int lda = m + 1;
      std::vector<T> A(size_t(lda) * n, T(0));
      std::vector<double> sigma;
      bsvd::testing::generate<T>(f, m, n, bsvd::testing::default_kappa<T>(), ++seed, A.data(), lda,
                                 &sigma);
      const std::string what = std::string(bsvd::testing::family_name(f)) + " " +
                               std::to_string(m) + "x" + std::to_string(n);
      check_lapack<T>(m, n, A.data(), lda, sigma, what);
      check_lapack<T>(m, n, A.data(), lda, sigma, what + " values", false);
    }
}

TYPED_TEST(CpuLapack, EdgeMatrices) {
  using T = TypeParam;
  ScopedOverrides force(lapack_on());
  for (Edge e : {Edge::Zero, Edge::Identity, Edge::RankDeficient, Edge::Overflow, Edge::Underflow,
                 Edge::TinyColumns})
    for (auto [m, n] : std::vector<std::pair<int, int>>{{12, 12}, {30, 7}, {7, 30}}) {
      const int lda = m;
      std::vector<T> A(size_t(lda) * n);
      bsvd::testing::generate_edge<T>(e, m, n, 11, A.data(), lda);
      const std::string what = std::string(bsvd::testing::edge_name(e)) + " " + std::to_string(m) +
                               "x" + std::to_string(n);
      check_lapack<T>(m, n, A.data(), lda, {}, what);
      if (e == Edge::Zero) {
        const Result<T> r = solve(m, n, A.data(), lda, Config(), true);
        for (int j = 0; j < r.k; ++j) {
          EXPECT_EQ(r.S[j], R_t<T>(0));
          EXPECT_EQ(r.U[j + size_t(j) * r.ldu], T(1));
          EXPECT_EQ(r.V[j + size_t(j) * r.ldv], T(1));
        }
      }
    }
}

// NaN or Inf in one matrix: that matrix gets info BSVD_INFO_NONFINITE and
// NaN outputs; its neighbours are solved by LAPACK as if it were absent.
TYPED_TEST(CpuLapack, NonFiniteMatrixIsolated) {
  using T = TypeParam;
  const int m = 20, n = 14, count = 5, k = n;
  std::vector<T> A(size_t(m) * n * count);
  std::vector<std::vector<double>> sig(count);
  for (int b = 0; b < count; ++b)
    bsvd::testing::generate<T>(Family::Arith, m, n, bsvd::testing::default_kappa<T>(), 90 + b,
                               A.data() + size_t(b) * m * n, m, &sig[b]);
  bsvd::testing::generate_edge<T>(Edge::Nan, m, n, 3, A.data() + size_t(1) * m * n, m);
  bsvd::testing::generate_edge<T>(Edge::Inf, m, n, 4, A.data() + size_t(3) * m * n, m);
  std::vector<R_t<T>> S(size_t(k) * count);
  std::vector<T> U(size_t(m) * k * count), V(size_t(n) * k * count);
  std::vector<int> info(count, -99), sweeps(count, -99), path(count, -99);
  Batch<T> bt;
  bt.vectors = true;
  bt.count = count;
  bt.dims.m = m;
  bt.dims.n = n;
  bt.A.base = A.data();
  bt.A.ld = m;
  bt.A.stride = int64_t(m) * n;
  bt.S.base = S.data();
  bt.S.stride = k;
  bt.U.base = U.data();
  bt.U.ld = m;
  bt.U.stride = int64_t(m) * k;
  bt.V.base = V.data();
  bt.V.ld = n;
  bt.V.stride = int64_t(n) * k;
  bt.info = info.data();
  bt.sweeps = sweeps.data();
  const Config cfg;
  const size_t bytes = bsvd::detail::cpu_workspace_bytes(bt, cfg, 2);
  std::vector<unsigned char> ws(bytes);
  ASSERT_EQ(bsvd::detail::cpu_gesvj(bt, cfg, ws.data(), bytes, 2, path.data()), 0);
  for (int b = 0; b < count; ++b) {
    if (b == 1 || b == 3) {
      EXPECT_EQ(info[b], BSVD_INFO_NONFINITE);
      EXPECT_EQ(path[b], BSVD_PATH_TRIVIAL);
      for (int j = 0; j < k; ++j) EXPECT_TRUE(std::isnan(double(S[size_t(b) * k + j])));
      continue;
    }
    EXPECT_EQ(info[b], 0);
    EXPECT_EQ(path[b], BSVD_PATH_CPU_LAPACK);
    Result<T> r;
    r.m = m, r.n = n, r.k = k, r.ldu = m, r.ldv = n;
    r.S.assign(S.begin() + size_t(b) * k, S.begin() + size_t(b + 1) * k);
    r.U.assign(U.begin() + size_t(b) * m * k, U.begin() + size_t(b + 1) * m * k);
    r.V.assign(V.begin() + size_t(b) * n * k, V.begin() + size_t(b + 1) * n * k);
    const Measures ms = measure(m, n, A.data() + size_t(b) * m * n, m, r, sig[b]);
    EXPECT_LT(ms.worst(), kLimit) << ratios_str(ms);
  }
}

// A variable-size batch (pointer arrays, per-matrix leading dimensions):
// the rule picks per matrix (Jacobi at 8 columns and below in s and d,
// LAPACK above); every matrix passes the checks.
TYPED_TEST(CpuLapack, VariableSizesPickPerMatrix) {
  using T = TypeParam;
  const std::vector<int> ms{5, 40, 9, 16, 64, 3, 0};
  const std::vector<int> ns{5, 12, 30, 16, 20, 9, 4};
  const int count = int(ms.size());
  std::vector<std::vector<T>> A(count), U(count), V(count);
  std::vector<std::vector<R_t<T>>> S(count);
  std::vector<std::vector<double>> sig(count);
  std::vector<const T *> pA(count);
  std::vector<R_t<T> *> pS(count);
  std::vector<T *> pU(count), pV(count);
  std::vector<int> lda(count), ldu(count), ldv(count), info(count, -99), sweeps(count, -99),
      path(count, -99);
  for (int b = 0; b < count; ++b) {
    const int m = ms[b], n = ns[b], k = std::min(m, n);
    lda[b] = m + 1, ldu[b] = m + 2, ldv[b] = n + 1;
    A[b].assign(size_t(lda[b]) * n + 1, T(0));
    if (k > 0)
      bsvd::testing::generate<T>(Family::Logrand, m, n, bsvd::testing::default_kappa<T>(), 50 + b,
                                 A[b].data(), lda[b], &sig[b]);
    S[b].assign(size_t(k) + 1, R_t<T>(-1));
    U[b].assign(size_t(ldu[b]) * k + 1, T(-3));
    V[b].assign(size_t(ldv[b]) * k + 1, T(-3));
    pA[b] = A[b].data(), pS[b] = S[b].data(), pU[b] = U[b].data(), pV[b] = V[b].data();
  }
  Batch<T> bt;
  bt.vectors = true;
  bt.count = count;
  bt.dims.mv = ms.data();
  bt.dims.nv = ns.data();
  bt.A.array = pA.data();
  bt.A.ldv = lda.data();
  bt.S.array = pS.data();
  bt.U.array = pU.data();
  bt.U.ldv = ldu.data();
  bt.V.array = pV.data();
  bt.V.ldv = ldv.data();
  bt.info = info.data();
  bt.sweeps = sweeps.data();
  const Config cfg;
  const size_t bytes = bsvd::detail::cpu_workspace_bytes(bt, cfg, 3);
  std::vector<unsigned char> ws(bytes);
  ASSERT_EQ(bsvd::detail::cpu_gesvj(bt, cfg, ws.data(), bytes, 3, path.data()), 0);
  for (int b = 0; b < count; ++b) {
    const int m = ms[b], n = ns[b], k = std::min(m, n);
    EXPECT_EQ(info[b], 0) << b;
    if (k == 0) {
      EXPECT_EQ(path[b], BSVD_PATH_TRIVIAL);
      continue;
    }
    const bool lapack =
        bsvd::detail::plan::cpu_lapack(bsvd::detail::precision_of<T>(), m, n, true, cfg);
    constexpr bool complex = !std::is_same_v<T, R_t<T>>;
    EXPECT_EQ(lapack, complex || k > 8) << m << "x" << n;
    EXPECT_EQ(path[b], lapack ? BSVD_PATH_CPU_LAPACK : BSVD_PATH_CPU_UNBLOCKED) << b;
    EXPECT_EQ(sweeps[b] == 0, lapack) << b;
    Result<T> r;
    r.m = m, r.n = n, r.k = k, r.ldu = ldu[b], r.ldv = ldv[b];
    r.S.assign(S[b].begin(), S[b].begin() + k);
    r.U.assign(U[b].begin(), U[b].begin() + size_t(ldu[b]) * k);
    r.V.assign(V[b].begin(), V[b].begin() + size_t(ldv[b]) * k);
    const Measures mm = measure(m, n, A[b].data(), lda[b], r, sig[b]);
    EXPECT_LT(mm.worst(), kLimit) << m << "x" << n << ": " << ratios_str(mm);
    EXPECT_EQ(S[b][k], R_t<T>(-1)); // nothing written past the k values
  }
}

// The options only the Jacobi solver has keep it: the variant named, a
// tolerance, a sweep limit, an ordering, the preconditioning; and the
// BSVD_CPU_LAPACK=0 override.
TEST(CpuLapackRule, JacobiOptionsKeepTheJacobiSolver) {
  using bsvd::detail::Config;
  using bsvd::detail::plan::cpu_lapack;
  EXPECT_TRUE(cpu_lapack('d', 64, 64, true, Config()));
  EXPECT_TRUE(cpu_lapack('z', 2, 2, true, Config()));
  EXPECT_FALSE(cpu_lapack('d', 8, 8, true, Config()));
  EXPECT_TRUE(cpu_lapack('d', 8, 8, true, Config(), Force::kOn));
  EXPECT_FALSE(cpu_lapack('d', 64, 64, true, Config(), Force::kOff));
  std::vector<Config> jacobi(6);
  jacobi[0].variant = BSVD_VARIANT_UNBLOCKED;
  jacobi[1].variant = BSVD_VARIANT_BLOCKED;
  jacobi[2].tol = 1e-10;
  jacobi[3].max_sweeps = 5;
  jacobi[4].ordering = BSVD_ORDERING_ODD_EVEN;
  jacobi[5].precondition = 1;
  for (const Config &c : jacobi)
    for (char p : {'s', 'd', 'c', 'z'}) {
      EXPECT_FALSE(cpu_lapack(p, 64, 64, true, c));
      EXPECT_FALSE(cpu_lapack(p, 64, 64, true, c, Force::kOn));
    }
}

// Through the public API: a sweep limit gives the Jacobi path and its sweep
// counts; the defaults give the LAPACK path, info 0, sweeps 0.
TEST(CpuLapackRule, PublicApiReportsThePath) {
  const int m = 30, n = 20, batch = 3, k = n;
  std::vector<double> A(size_t(m) * n * batch);
  bsvd::testing::generate<double>(Family::Random, m, n * batch, 0, 5, A.data(), m);
  std::vector<double> S(size_t(k) * batch), U(size_t(m) * k * batch), V(size_t(n) * k * batch);
  std::vector<int> info(batch, -9), sweeps(batch, -9), path(batch, -9);
  bsvd_options_t o;
  bsvd_options_init(&o);
  o.backend = BSVD_BACKEND_CPU;
  o.path = path.data();
  auto run = [&] {
    return bsvd_dgesvj_strided_batched(BSVD_JOB_VECTORS, m, n, A.data(), m, int64_t(m) * n,
                                       S.data(), k, U.data(), m, int64_t(m) * k, V.data(), n,
                                       int64_t(n) * k, info.data(), sweeps.data(), batch, &o);
  };
  ASSERT_EQ(run(), 0) << bsvd_last_error();
  for (int b = 0; b < batch; ++b) {
    EXPECT_EQ(path[b], BSVD_PATH_CPU_LAPACK);
    EXPECT_EQ(info[b], 0);
    EXPECT_EQ(sweeps[b], 0);
  }
  o.max_sweeps = 40;
  ASSERT_EQ(run(), 0) << bsvd_last_error();
  for (int b = 0; b < batch; ++b) {
    EXPECT_EQ(path[b], BSVD_PATH_CPU_UNBLOCKED);
    EXPECT_EQ(info[b], 0);
    EXPECT_GT(sweeps[b], 0);
  }
}

// The backend executes its plan (plan::cpu_plan) as given: on a mixed
// variable-size batch every matrix reports the path of the group the plan
// put it in, and a uniform batch is one group without per-matrix lists.
TEST(CpuLapackRule, BackendRunsThePlan) {
  const std::vector<int> mv{3, 64, 2, 40, 9, 8}, nv{3, 64, 5, 30, 9, 1};
  const int batch = int(mv.size());
  bsvd_options_t o;
  bsvd_options_init(&o);
  o.backend = BSVD_BACKEND_CPU;
  const bsvd::detail::Config cfg = bsvd::detail::make_config(o);
  bsvd::detail::plan::Shapes s;
  s.precision = 'd';
  s.vectors = true;
  s.count = batch;
  s.dims.mv = mv.data();
  s.dims.nv = nv.data();
  const bsvd::detail::plan::Plan p = bsvd::detail::plan::cpu_plan(s, cfg);
  std::vector<int> planned(batch, -1);
  for (const auto &g : p.groups)
    for (size_t i = 0; i < g.size(); ++i)
      planned[size_t(g.at(i))] = g.lapack ? BSVD_PATH_CPU_LAPACK : BSVD_PATH_CPU_UNBLOCKED;
  ASSERT_EQ(std::count(planned.begin(), planned.end(), -1), 0);
#if defined(BSVD_WITH_LAPACK)
  // both groups: the size rule sends the small matrices to the Jacobi solver
  ASSERT_EQ(p.groups.size(), 2u);
#endif
  std::vector<std::vector<double>> A(batch), S(batch), U(batch), V(batch);
  std::vector<double *> pA(batch), pS(batch), pU(batch), pV(batch);
  for (int b = 0; b < batch; ++b) {
    const int m = mv[size_t(b)], n = nv[size_t(b)], k = std::min(m, n);
    A[size_t(b)].resize(size_t(m) * n);
    bsvd::testing::generate<double>(Family::Random, m, n, 0, 90 + b, A[size_t(b)].data(), m);
    S[size_t(b)].resize(size_t(k));
    U[size_t(b)].resize(size_t(m) * k);
    V[size_t(b)].resize(size_t(n) * k);
    pA[size_t(b)] = A[size_t(b)].data();
    pS[size_t(b)] = S[size_t(b)].data();
    pU[size_t(b)] = U[size_t(b)].data();
    pV[size_t(b)] = V[size_t(b)].data();
  }
  std::vector<int> info(batch, -9), path(batch, -9);
  o.path = path.data();
  ASSERT_EQ(bsvd_dgesvj_vbatched(BSVD_JOB_VECTORS, mv.data(), nv.data(), pA.data(), mv.data(),
                                 pS.data(), pU.data(), mv.data(), pV.data(), nv.data(), info.data(),
                                 nullptr, batch, &o),
            0)
      << bsvd_last_error();
  for (int b = 0; b < batch; ++b) {
    EXPECT_EQ(path[b], planned[size_t(b)]) << "matrix " << b;
    EXPECT_EQ(info[b], 0) << "matrix " << b;
  }
  s.dims = {};
  s.dims.m = 16;
  s.dims.n = 12;
  s.count = 1000;
  const bsvd::detail::plan::Plan u = bsvd::detail::plan::cpu_plan(s, cfg);
  ASSERT_EQ(u.groups.size(), 1u);
  EXPECT_EQ(u.groups[0].whole, 1000);
  EXPECT_TRUE(u.groups[0].index.empty());
}

// num_threads beyond the cores counts as all cores: the same workspace and
// the same worker count in the plan as num_threads = 0.
TEST(CpuLapackRule, ThreadsCappedAtTheCores) {
  const int hw = std::max(1, int(std::thread::hardware_concurrency()));
  bsvd_options_t o;
  bsvd_options_init(&o);
  o.backend = BSVD_BACKEND_CPU;
  size_t all = 0, many = 0;
  ASSERT_EQ(bsvd_workspace_size('d', BSVD_JOB_VECTORS, 32, 32, 100000, &o, &all), 0);
  o.num_threads = 10000;
  ASSERT_EQ(bsvd_workspace_size('d', BSVD_JOB_VECTORS, 32, 32, 100000, &o, &many), 0);
  EXPECT_EQ(many, all);
  size_t need = 0;
  ASSERT_EQ(bsvd_explain('d', BSVD_JOB_VECTORS, 32, 32, 100000, &o, nullptr, 0, &need), 0);
  std::string text(need, '\0');
  ASSERT_EQ(bsvd_explain('d', BSVD_JOB_VECTORS, 32, 32, 100000, &o, text.data(), need, nullptr), 0);
  EXPECT_NE(text.find("backend cpu, " + std::to_string(hw) + " threads"), std::string::npos)
      << text;
  o.num_threads = 1;
  size_t one = 0;
  ASSERT_EQ(bsvd_workspace_size('d', BSVD_JOB_VECTORS, 32, 32, 100000, &o, &one), 0);
  if (hw > 1) EXPECT_LT(one, all);
}

} // namespace
