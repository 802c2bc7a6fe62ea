// Batch-level behaviour of the CPU backend: non-finite input in a strided
// batch, edge-case matrices, values-only, the sweep limit, thread-count
// independence, variable-size batches and the workspace contract.
#include "test_cpu_helpers.hpp"

#include <cstring>

using namespace bsvd_cpu_test;
using bsvd::testing::Edge;
using bsvd::testing::Family;

namespace {

template <class T> class CpuBatch : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(CpuBatch, Types);

template <class T> bool is_nan(T x) {
  if constexpr (std::is_same_v<T, R_t<T>>)
    return std::isnan(x);
  else
    return std::isnan(x.real()) && std::isnan(x.imag());
}

// A strided batch with its storage.
template <class T> struct Strided {
  int m, n, k, lda, ldu, ldv, count;
  std::vector<T> A, U, V;
  std::vector<R_t<T>> S;
  std::vector<int> info, sweeps, path;
  Batch<T> b;
  Strided(int m_, int n_, int count_, bool vectors)
      : m(m_), n(n_), k(std::min(m_, n_)), lda(m_ + 1), ldu(m_ + 2), ldv(n_ + 1), count(count_) {
    A.assign(size_t(lda) * n * count, T(0));
    S.assign(size_t(k) * count, R_t<T>(-1));
    U.assign(size_t(ldu) * k * count, T(-5));
    V.assign(size_t(ldv) * k * count, T(-5));
    info.assign(count, -99);
    sweeps.assign(count, -99);
    path.assign(count, -99);
    b.vectors = vectors;
    b.count = count;
    b.dims.m = m;
    b.dims.n = n;
    b.A.base = A.data();
    b.A.ld = lda;
    b.A.stride = int64_t(lda) * n;
    b.S.base = S.data();
    b.S.stride = k;
    b.U.base = U.data();
    b.U.ld = ldu;
    b.U.stride = int64_t(ldu) * k;
    b.V.base = V.data();
    b.V.ld = ldv;
    b.V.stride = int64_t(ldv) * k;
    b.info = info.data();
    b.sweeps = sweeps.data();
  }
  T *Ab(int i) { return A.data() + size_t(i) * lda * n; }
  bsvd_status_t run(const Config &cfg, int threads) {
    const size_t bytes = bsvd::detail::cpu_workspace_bytes(b, cfg, threads);
    std::vector<unsigned char> ws(bytes);
    return bsvd::detail::cpu_gesvj(b, cfg, ws.data(), bytes, threads, path.data());
  }
  // Copy of matrix i's results as a Result (for measure()).
  Result<T> result(int i) const {
    Result<T> r;
    r.m = m;
    r.n = n;
    r.k = k;
    r.ldu = ldu;
    r.ldv = ldv;
    r.S.assign(S.begin() + size_t(i) * k, S.begin() + size_t(i + 1) * k);
    if (b.vectors) {
      r.U.assign(U.begin() + size_t(i) * ldu * k, U.begin() + size_t(i + 1) * ldu * k);
      r.V.assign(V.begin() + size_t(i) * ldv * k, V.begin() + size_t(i + 1) * ldv * k);
    }
    r.info = info[i];
    r.sweeps = sweeps[i];
    r.path = path[i];
    return r;
  }
};

TYPED_TEST(CpuBatch, NonFiniteMatrixIsolated) {
  using T = TypeParam;
  for (int threads : {1, 3}) {
    Strided<T> s(12, 9, 5, true);
    std::vector<std::vector<double>> sig(5);
    for (int i = 0; i < 5; ++i)
      bsvd::testing::generate<T>(Family::Geo, s.m, s.n, bsvd::testing::default_kappa<T>(), 40 + i,
                                 s.Ab(i), s.lda, &sig[i]);
    bsvd::testing::generate_edge<T>(Edge::Nan, s.m, s.n, 3, s.Ab(1), s.lda);
    bsvd::testing::generate_edge<T>(Edge::Inf, s.m, s.n, 4, s.Ab(3), s.lda);
    Config cfg = twin_config();
    ASSERT_EQ(s.run(cfg, threads), 0);
    for (int i = 0; i < 5; ++i) {
      if (i == 1 || i == 3) {
        EXPECT_EQ(s.info[i], BSVD_INFO_NONFINITE);
        EXPECT_EQ(s.sweeps[i], 0);
        EXPECT_EQ(s.path[i], BSVD_PATH_TRIVIAL);
        for (int j = 0; j < s.k; ++j) {
          EXPECT_TRUE(std::isnan(s.S[size_t(i) * s.k + j]));
          for (int r = 0; r < s.m; ++r)
            EXPECT_TRUE(is_nan(s.U[size_t(i) * s.ldu * s.k + r + size_t(j) * s.ldu]));
          for (int r = 0; r < s.n; ++r)
            EXPECT_TRUE(is_nan(s.V[size_t(i) * s.ldv * s.k + r + size_t(j) * s.ldv]));
          // padding untouched
          EXPECT_EQ(s.U[size_t(i) * s.ldu * s.k + s.m + size_t(j) * s.ldu], T(-5));
        }
      } else {
        EXPECT_EQ(s.info[i], 0);
        EXPECT_EQ(s.path[i], BSVD_PATH_CPU_UNBLOCKED);
        const Measures ms = measure(s.m, s.n, s.Ab(i), s.lda, s.result(i), sig[i]);
        EXPECT_LT(ms.worst(), kLimit) << ratios_str(ms);
      }
    }
  }
}

TYPED_TEST(CpuBatch, EdgeMatrices) {
  using T = TypeParam;
  for (auto [m, n] : std::vector<std::pair<int, int>>{{1, 1}, {6, 6}, {17, 9}, {9, 17}, {40, 40}})
    for (Edge e : {Edge::Zero, Edge::Identity, Edge::RankDeficient, Edge::Overflow, Edge::Underflow,
                   Edge::TinyColumns})
      for (bsvd_variant_t var : {BSVD_VARIANT_UNBLOCKED, BSVD_VARIANT_BLOCKED}) {
        const int lda = m;
        std::vector<T> A(size_t(lda) * n);
        bsvd::testing::generate_edge<T>(e, m, n, 77, A.data(), lda);
        Config cfg = twin_config();
        cfg.variant = var;
        cfg.block_size = 4;
        const Result<T> r = solve(m, n, A.data(), lda, cfg, true, 1, 1);
        ASSERT_EQ(r.status, 0);
        EXPECT_EQ(r.info, 0) << bsvd::testing::edge_name(e);
        const Measures ms = measure(m, n, A.data(), lda, r, {});
        EXPECT_LT(ms.worst(), kLimit)
            << bsvd::testing::edge_name(e) << " " << m << "x" << n << " " << ratios_str(ms);
        for (R_t<T> x : r.S) EXPECT_TRUE(std::isfinite(x));
        const int k = std::min(m, n);
        if (e == Edge::Zero) {
          for (int j = 0; j < k; ++j) {
            EXPECT_EQ(r.S[j], R_t<T>(0));
            for (int i = 0; i < m; ++i) EXPECT_EQ(r.U[i + size_t(j) * r.ldu], T(i == j ? 1 : 0));
            for (int i = 0; i < n; ++i) EXPECT_EQ(r.V[i + size_t(j) * r.ldv], T(i == j ? 1 : 0));
          }
        }
        if (e == Edge::Identity)
          for (int j = 0; j < k; ++j) EXPECT_EQ(r.S[j], R_t<T>(1));
        if (e == Edge::RankDeficient) {
          const int rank = std::max(1, k / 2);
          for (int j = rank; j < k; ++j)
            EXPECT_LT(double(r.S[j]), 30 * k * uroff<T>() * double(r.S[0]));
        }
      }
}

// Exactly rank-deficient: zero columns and repeated columns give exactly
// null Jacobi columns; U must still be orthonormal (completion).
TYPED_TEST(CpuBatch, ExactNullColumnsCompleteU) {
  using T = TypeParam;
  for (auto [m, n] : std::vector<std::pair<int, int>>{{8, 5}, {5, 8}, {6, 6}, {30, 12}}) {
    std::vector<T> A(size_t(m) * n, T(0));
    std::vector<double> dummy;
    bsvd::testing::generate<T>(Family::Random, m, n, 1, 5, A.data(), m, &dummy);
    // columns 1 and 3 zero, column 2 = column 0; (for m < n rows instead)
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        const bool row_mode = m < n;
        const int idx = row_mode ? i : j, other = row_mode ? j : i;
        (void)other;
        if (idx == 1 || idx == 3) A[i + size_t(j) * m] = T(0);
        if (idx == 2) A[i + size_t(j) * m] = row_mode ? A[0 + size_t(j) * m] : A[i];
      }
    for (bsvd_variant_t var : {BSVD_VARIANT_UNBLOCKED, BSVD_VARIANT_BLOCKED}) {
      Config cfg = twin_config();
      cfg.variant = var;
      cfg.block_size = 2;
      const Result<T> r = solve(m, n, A.data(), m, cfg);
      EXPECT_EQ(r.info, 0);
      const Measures ms = measure(m, n, A.data(), m, r, {});
      EXPECT_LT(ms.worst(), kLimit) << m << "x" << n << " " << ratios_str(ms);
      EXPECT_EQ(r.S[r.k - 1], R_t<T>(0));
    }
  }
}

// Geometric spectrum scaled near the ends of the exponent range.
TYPED_TEST(CpuBatch, BadlyScaled) {
  using T = TypeParam;
  using R = R_t<T>;
  const bool dbl = sizeof(R) == 8;
  for (double scale : dbl ? std::vector<double>{1e300, 1e-300} : std::vector<double>{1e35, 1e-35})
    for (auto [m, n] : std::vector<std::pair<int, int>>{{7, 7}, {30, 20}, {20, 30}}) {
      std::vector<std::complex<double>> tmp;
      std::vector<double> sigma;
      // Generate in double precision, scale, round to T.
      using D = std::conditional_t<std::is_same_v<T, R>, double, std::complex<double>>;
      std::vector<D> Ad(size_t(m) * n);
      const double kappa = dbl ? 1e10 : 1e5;
      bsvd::testing::generate<D>(Family::Geo, m, n, kappa, 99, Ad.data(), m, &sigma);
      std::vector<T> A(Ad.size());
      for (size_t i = 0; i < Ad.size(); ++i) {
        if constexpr (std::is_same_v<T, R>)
          A[i] = T(Ad[i] * scale);
        else
          A[i] = T(R(Ad[i].real() * scale), R(Ad[i].imag() * scale));
      }
      for (double &s : sigma) s *= scale;
      for (bsvd_variant_t var : {BSVD_VARIANT_UNBLOCKED, BSVD_VARIANT_BLOCKED}) {
        Config cfg = twin_config();
        cfg.variant = var;
        const Result<T> r = solve(m, n, A.data(), m, cfg);
        EXPECT_EQ(r.info, 0);
        const Measures ms = measure(m, n, A.data(), m, r, sigma);
        EXPECT_LT(ms.worst(), kLimit) << scale << " " << m << "x" << n << " " << ratios_str(ms);
      }
    }
}

TYPED_TEST(CpuBatch, ValuesOnlyMatchesVectors) {
  using T = TypeParam;
  for (bsvd_variant_t var : {BSVD_VARIANT_UNBLOCKED, BSVD_VARIANT_BLOCKED})
    for (auto [m, n] : std::vector<std::pair<int, int>>{{1, 1}, {33, 20}, {20, 33}, {64, 64}}) {
      std::vector<T> A(size_t(m) * n);
      std::vector<double> sigma;
      bsvd::testing::generate<T>(Family::Logrand, m, n, bsvd::testing::default_kappa<T>(), 3,
                                 A.data(), m, &sigma);
      Config cfg = twin_config();
      cfg.variant = var;
      const Result<T> rv = solve(m, n, A.data(), m, cfg, true);
      const Result<T> rs = solve(m, n, A.data(), m, cfg, false);
      EXPECT_EQ(rs.info, 0);
      EXPECT_EQ(rs.sweeps, rv.sweeps);
      for (int j = 0; j < rv.k; ++j)
        EXPECT_LE(std::fabs(double(rs.S[j]) - double(rv.S[j])), 2 * uroff<T>() * double(rv.S[0]));
      const Measures ms = measure(m, n, A.data(), m, rs, sigma);
      EXPECT_LT(ms.worst(), kLimit) << ratios_str(ms);
    }
}

TYPED_TEST(CpuBatch, SweepLimitReportsNotConverged) {
  using T = TypeParam;
  const int m = 60, n = 60;
  std::vector<T> A(size_t(m) * n);
  bsvd::testing::generate<T>(Family::Geo, m, n, bsvd::testing::default_kappa<T>(), 8, A.data(), m);
  for (bsvd_variant_t var : {BSVD_VARIANT_UNBLOCKED, BSVD_VARIANT_BLOCKED}) {
    Config cfg = twin_config();
    cfg.variant = var;
    cfg.max_sweeps = 1;
    const Result<T> r = solve(m, n, A.data(), m, cfg);
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.info, 1);
    EXPECT_EQ(r.sweeps, 1);
    for (int j = 0; j + 1 < r.k; ++j) EXPECT_GE(r.S[j], r.S[j + 1]); // still sorted
  }
}

TYPED_TEST(CpuBatch, ThreadsBitwiseIdentical) {
  using T = TypeParam;
  for (bsvd_variant_t var : {BSVD_VARIANT_UNBLOCKED, BSVD_VARIANT_BLOCKED}) {
    Strided<T> s1(23, 17, 7, true), s2(23, 17, 7, true);
    for (int i = 0; i < 7; ++i) {
      bsvd::testing::generate<T>(Family::Logrand, s1.m, s1.n, bsvd::testing::default_kappa<T>(),
                                 200 + i, s1.Ab(i), s1.lda);
      std::memcpy(s2.Ab(i), s1.Ab(i), sizeof(T) * s1.lda * s1.n);
    }
    Config cfg = twin_config();
    cfg.variant = var;
    cfg.block_size = 4;
    ASSERT_EQ(s1.run(cfg, 1), 0);
    ASSERT_EQ(s2.run(cfg, 2), 0);
    EXPECT_EQ(0, std::memcmp(s1.S.data(), s2.S.data(), sizeof(R_t<T>) * s1.S.size()));
    EXPECT_EQ(0, std::memcmp(s1.U.data(), s2.U.data(), sizeof(T) * s1.U.size()));
    EXPECT_EQ(0, std::memcmp(s1.V.data(), s2.V.data(), sizeof(T) * s1.V.size()));
    EXPECT_EQ(s1.info, s2.info);
    EXPECT_EQ(s1.sweeps, s2.sweeps);
    EXPECT_EQ(s1.path, s2.path);
  }
}

// Variable sizes through pointer arrays, including empty matrices.
TYPED_TEST(CpuBatch, VariableSizePointerArrays) {
  using T = TypeParam;
  const std::vector<int> ms = {5, 0, 40, 3, 1, 17, 8}, ns = {5, 4, 9, 30, 1, 0, 8};
  const int count = int(ms.size());
  std::vector<std::vector<T>> A(count), U(count), V(count);
  std::vector<std::vector<R_t<T>>> S(count);
  std::vector<std::vector<double>> sig(count);
  std::vector<const T *> Ap(count);
  std::vector<R_t<T> *> Sp(count);
  std::vector<T *> Up(count), Vp(count);
  std::vector<int> lda(count), ldu(count), ldv(count), info(count, -99), sweeps(count, -99),
      path(count, -99);
  for (int b = 0; b < count; ++b) {
    const int m = ms[b], n = ns[b], k = std::min(m, n);
    lda[b] = std::max(1, m) + b % 2;
    ldu[b] = std::max(1, m) + 1;
    ldv[b] = std::max(1, n);
    A[b].assign(size_t(lda[b]) * std::max(n, 1), T(0));
    if (m > 0 && n > 0)
      bsvd::testing::generate<T>(Family::Geo, m, n, bsvd::testing::default_kappa<T>(), 300 + b,
                                 A[b].data(), lda[b], &sig[b]);
    S[b].assign(std::max(k, 1), R_t<T>(-1));
    U[b].assign(size_t(ldu[b]) * std::max(k, 1), T(0));
    V[b].assign(size_t(ldv[b]) * std::max(k, 1), T(0));
    Ap[b] = A[b].data();
    Sp[b] = S[b].data();
    Up[b] = U[b].data();
    Vp[b] = V[b].data();
  }
  Batch<T> bt;
  bt.vectors = true;
  bt.count = count;
  bt.dims.mv = ms.data();
  bt.dims.nv = ns.data();
  bt.A.array = Ap.data();
  bt.A.ldv = lda.data();
  bt.S.array = Sp.data();
  bt.U.array = Up.data();
  bt.U.ldv = ldu.data();
  bt.V.array = Vp.data();
  bt.V.ldv = ldv.data();
  bt.info = info.data();
  bt.sweeps = sweeps.data();
  Config cfg = twin_config();
  const size_t bytes = bsvd::detail::cpu_workspace_bytes(bt, cfg, 3);
  std::vector<unsigned char> ws(bytes);
  ASSERT_EQ(bsvd::detail::cpu_gesvj(bt, cfg, ws.data(), bytes, 3, path.data()), 0);
  for (int b = 0; b < count; ++b) {
    const int m = ms[b], n = ns[b];
    EXPECT_EQ(info[b], 0);
    if (m == 0 || n == 0) {
      EXPECT_EQ(path[b], BSVD_PATH_TRIVIAL);
      EXPECT_EQ(sweeps[b], 0);
      EXPECT_EQ(S[b][0], R_t<T>(-1)); // nothing written
      continue;
    }
    EXPECT_EQ(path[b], BSVD_PATH_CPU_UNBLOCKED);
    Result<T> r;
    r.m = m;
    r.n = n;
    r.k = std::min(m, n);
    r.ldu = ldu[b];
    r.ldv = ldv[b];
    r.S = S[b];
    r.U = U[b];
    r.V = V[b];
    const Measures mm = measure(m, n, A[b].data(), lda[b], r, sig[b]);
    EXPECT_LT(mm.worst(), kLimit) << m << "x" << n << " " << ratios_str(mm);
  }
}

TYPED_TEST(CpuBatch, WorkspaceContract) {
  using T = TypeParam;
  Strided<T> s(10, 6, 4, true);
  for (int i = 0; i < 4; ++i)
    bsvd::testing::generate<T>(Family::Random, s.m, s.n, 1, i, s.Ab(i), s.lda);
  Config cfg = twin_config();
  cfg.variant = BSVD_VARIANT_BLOCKED;
  const size_t bytes = bsvd::detail::cpu_workspace_bytes(s.b, cfg, 2);
  EXPECT_GT(bytes, 0u);
  // threads are clamped to the batch size
  EXPECT_EQ(bsvd::detail::cpu_workspace_bytes(s.b, cfg, 64),
            bsvd::detail::cpu_workspace_bytes(s.b, cfg, 4));
  std::vector<unsigned char> ws(bytes);
  EXPECT_EQ(bsvd::detail::cpu_gesvj(s.b, cfg, ws.data(), bytes - 1, 2, nullptr),
            BSVD_STATUS_WORKSPACE_TOO_SMALL);
  EXPECT_EQ(bsvd::detail::cpu_gesvj(s.b, cfg, ws.data(), bytes, 2, nullptr), 0);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(s.info[i], 0);
  // Empty batch.
  Strided<T> e(3, 3, 0, true);
  EXPECT_EQ(bsvd::detail::cpu_workspace_bytes(e.b, cfg, 2), 0u);
  EXPECT_EQ(bsvd::detail::cpu_gesvj(e.b, cfg, nullptr, 0, 2, nullptr), 0);
}

// solve_one on its own with the documented scratch size, for any config
// (both preconditionings included; an overrun shows under ASan).
TYPED_TEST(CpuBatch, SolveOneScratchSuffices) {
  using T = TypeParam;
  for (auto [m, n] : std::vector<std::pair<int, int>>{{9, 9}, {40, 13}, {13, 40}})
    for (int nb : {0, 3, 64})
      for (bsvd_variant_t var : {BSVD_VARIANT_UNBLOCKED, BSVD_VARIANT_BLOCKED})
        for (int pre : {-1, 1, 2}) {
          Strided<T> s(m, n, 1, true);
          std::vector<double> sig;
          bsvd::testing::generate<T>(Family::Arith, m, n, bsvd::testing::default_kappa<T>(), 1,
                                     s.Ab(0), s.lda, &sig);
          Config cfg = twin_config();
          cfg.variant = var;
          cfg.block_size = nb;
          cfg.precondition = pre;
          std::vector<T> scratch(bsvd::detail::solve_one_scratch(m, n, true));
          const int p = bsvd::detail::solve_one(s.b, 0, cfg, scratch.data());
          EXPECT_EQ(p,
                    var == BSVD_VARIANT_BLOCKED ? BSVD_PATH_CPU_BLOCKED : BSVD_PATH_CPU_UNBLOCKED);
          const Measures mm = measure(m, n, s.Ab(0), s.lda, s.result(0), sig);
          EXPECT_LT(mm.worst(), kLimit) << ratios_str(mm);
        }
}

} // namespace
