// The Gram route chosen by the plan (precondition = 0; decisions/0022):
// the GPU's test on each group's Gram matrices against its CPU twin
// (core/gram_test.hpp on F^H F formed here), and the branch it takes
// giving the bits of the route it chose when that route is forced
// (precondition = 2, or -1 for the plain blocked path).
#include "core/gram_test.hpp"
#include "gpu_test_util.hpp"
#include "plan/tuning.hpp"
#include "testing/scalar_impl.hpp"

#include <random>

namespace {

namespace bd = bsvd::detail;

template <class T> class GpuGramAuto : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(GpuGramAuto, Types);

template <class T> T conj_of(T x) { return x; }
template <class R> std::complex<R> conj_of(std::complex<R> x) { return std::conj(x); }

// The twin of the GPU's decision for a uniform batch: W (A, or A^H when
// wide) scaled by 2^-e to max |w_ij| in [1/2, 1) and rounded to single
// precision (gram_pack_kernel), G = F^H F, the test on each matrix of the
// sample (gram_sample), and the vote by work (gram_decide_kernel; one
// shape: by count).
template <class T> bool twin_preconditions(int m, int n, int batch, const std::vector<T> &A,
                                           const bd::plan::GramTuning &t) {
  using L = std::conditional_t<std::is_same_v<T, R_t<T>>, float, std::complex<float>>;
  using W = std::conditional_t<std::is_same_v<T, R_t<T>>, double, std::complex<double>>;
  const int mw = std::max(m, n), nw = std::min(m, n);
  const bd::GramSample tested = bd::gram_sample(batch, t.sample);
  int gain = 0;
  for (int i = 0; i < tested.count; ++i) {
    const T *Ab = A.data() + size_t(i) * tested.step * m * n;
    auto w = [&](int i, int j) {
      return m >= n ? Ab[i + size_t(j) * m] : conj_of(Ab[j + size_t(i) * m]);
    };
    double amax = 0;
    for (int j = 0; j < nw; ++j)
      for (int i = 0; i < mw; ++i) {
        const T x = w(i, j);
        amax = std::max({amax, std::abs(double(std::real(x))), std::abs(double(std::imag(x)))});
      }
    const int e2 = amax > 0 ? std::ilogb(amax) + 1 : 0;
    std::vector<L> F(size_t(mw) * nw);
    for (int j = 0; j < nw; ++j)
      for (int i = 0; i < mw; ++i) F[i + size_t(j) * mw] = L(W(w(i, j)) * std::ldexp(1.0, -e2));
    std::vector<L> G(size_t(nw) * nw);
    for (int j = 0; j < nw; ++j)
      for (int i = 0; i < nw; ++i) {
        W acc = 0;
        for (int r = 0; r < mw; ++r)
          acc += W(conj_of(F[r + size_t(i) * mw])) * W(F[r + size_t(j) * mw]);
        G[i + size_t(j) * nw] = L(acc);
      }
    gain +=
        bd::gram_test_pays(bd::gram_test_sums(G.data(), nw), t.min_cos, t.min_srank, t.min_rank);
  }
  return 2 * gain >= tested.count;
}

// Orthogonal matrices changed two ways: by noise of relative size delta in
// every entry (the plain iteration takes ~9 sweeps at any delta, the
// preconditioned one 3-5: the CPU twin, 128^2, delta 1e-1 ... 1e-5), and in
// one direction, Q (I - v v^H / 2) for a random unit v (cluster1's
// structure: its cosines are of rank one; 3 sweeps).
template <class T>
std::vector<T> orthogonal_batch(int n, int batch, double delta, bool one_dir, uint64_t seed) {
  using D = bsvd::testing::detail::wide_t<T>;
  std::vector<T> A(size_t(batch) * n * n);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z;
  auto noise = [&](double s) {
    if constexpr (std::is_same_v<D, double>)
      return D(s * z(rng));
    else
      return D(s * z(rng), s * z(rng));
  };
  std::vector<D> Q(size_t(n) * n), v(static_cast<size_t>(n)), Qv(static_cast<size_t>(n));
  for (int b = 0; b < batch; ++b) {
    bsvd::testing::haar_orthonormal<D>(n, n, seed + 17 * b, Q.data(), n);
    double nv = 0;
    for (D &x : v) {
      x = noise(1);
      nv += std::norm(x);
    }
    for (D &x : v) x /= std::sqrt(nv);
    for (int i = 0; i < n; ++i) {
      Qv[size_t(i)] = 0;
      for (int k = 0; k < n; ++k) Qv[size_t(i)] += Q[i + size_t(k) * n] * v[size_t(k)];
    }
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        D q = Q[i + size_t(j) * n];
        if (one_dir) q -= 0.5 * Qv[size_t(i)] * conj_of(v[size_t(j)]);
        A[size_t(b) * n * n + i + size_t(j) * n] = T(q + noise(delta));
      }
  }
  return A;
}

// Every family at the work limit (200 matrices of 128^2, and 128 x 160:
// wide, W = A^H): every matrix reports cuda-gram; the twin predicts the
// branch (a gain for random, arith and the graded families; none for
// cluster0, where single precision resolves one direction, and cluster1,
// whose columns are nearly orthogonal); the call gives the bits of the
// forced route of that branch, and passes T1-T4.
TYPED_TEST(GpuGramAuto, BranchMatchesTheTwinAndTheForcedRoute) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  const bd::plan::GramTuning &t = bd::plan::tuning_table(9, 0).gram;
  const int batch = 200;
  for (auto [m, n] : std::vector<std::pair<int, int>>{{128, 128}, {128, 160}})
    for (Family f : bsvd::testing::all_families()) {
      SCOPED_TRACE(testing::Message() << m << "x" << n << " family " << int(f));
      const auto A = family_batch<T>(f, m, n, batch, 500 + n + int(f));
      auto solve = [&](int precondition) {
        return gpu_solve<T>(m, n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0, BSVD_VARIANT_AUTO,
                            0, BSVD_EIG_SWEEPS_AUTO, 0, BSVD_PAIR_AUTO, precondition);
      };
      const auto r = solve(0);
      ASSERT_EQ(r.status, 0) << bsvd_last_error();
      for (int b = 0; b < batch; ++b) ASSERT_EQ(r.path[b], BSVD_PATH_CUDA_GRAM) << b;
      const bool pre = twin_preconditions(m, n, batch, A, t);
      EXPECT_EQ(pre, f != Family::Cluster0 && f != Family::Cluster1);
      const auto forced = solve(pre ? 2 : -1);
      ASSERT_EQ(forced.status, 0) << bsvd_last_error();
      expect_same_bits(r, forced);
      EXPECT_EQ(r.sweeps, forced.sweeps);
      for (int b : {0, batch - 1}) {
        EXPECT_EQ(r.info[b], 0);
        const auto q = ratios(r, A, b);
        EXPECT_TRUE(q.pass()) << ratio_text(q);
      }
    }
}

// The noisy orthogonal matrices take the preconditioned branch, those
// changed in one direction the plain one: each gives the forced route's bits.
TYPED_TEST(GpuGramAuto, NearlyOrthogonalMatrices) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  const bd::plan::GramTuning &t = bd::plan::tuning_table(9, 0).gram;
  const int n = 128, batch = 200;
  for (auto [delta, one_dir] : std::vector<std::pair<double, bool>>{{1e-3, false}, {0, true}}) {
    SCOPED_TRACE(testing::Message() << "delta " << delta << " one direction " << one_dir);
    const auto A = orthogonal_batch<T>(n, batch, delta, one_dir, 900 + int(one_dir));
    auto solve = [&](int precondition) {
      return gpu_solve<T>(n, n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0, BSVD_VARIANT_AUTO, 0,
                          BSVD_EIG_SWEEPS_AUTO, 0, BSVD_PAIR_AUTO, precondition);
    };
    const bool pre = twin_preconditions(n, n, batch, A, t);
    EXPECT_EQ(pre, !one_dir);
    const auto r = solve(0), forced = solve(pre ? 2 : -1);
    ASSERT_EQ(r.status, 0) << bsvd_last_error();
    ASSERT_EQ(forced.status, 0) << bsvd_last_error();
    expect_same_bits(r, forced);
    for (int b : {0, batch - 1}) EXPECT_TRUE(ratios(r, A, b).pass()) << ratio_text(ratios(r, A, b));
  }
}

// The test looks at a sample of each shape (gram_sample: 32 of 200, every
// sixth) and counts each sampled matrix for count / 32 of its shape. A
// uniform batch whose sampled matrices are random and the rest cluster1
// is preconditioned, the swap is not; with two shapes, 210 random matrices
// of 128^2 (32 tested, standing for 210) outweigh 25 cluster1 matrices of
// 256^2 (210 against 200 units of 128^3; unweighted the 32 would lose).
// Each call gives the bits of the forced route the decision names.
TYPED_TEST(GpuGramAuto, TheSampleDecides) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  const bd::plan::GramTuning &t = bd::plan::tuning_table(9, 0).gram;
  const int n = 128, batch = 200;
  const bd::GramSample tested = bd::gram_sample(batch, t.sample);
  ASSERT_EQ(tested.count, 32);
  ASSERT_EQ(tested.step, 6);
  for (bool sampled_random : {true, false}) {
    SCOPED_TRACE(testing::Message() << "sampled matrices random: " << sampled_random);
    std::vector<T> A(size_t(batch) * n * n);
    for (int b = 0; b < batch; ++b) {
      const bool sampled = b % tested.step == 0 && b / tested.step < tested.count;
      const Family f = sampled == sampled_random ? Family::Random : Family::Cluster1;
      bsvd::testing::generate<T>(f, n, n, bsvd::testing::default_kappa<T>(), 700 + b,
                                 A.data() + size_t(b) * n * n, n);
    }
    EXPECT_EQ(twin_preconditions(n, n, batch, A, t), sampled_random);
    auto solve = [&](int precondition) {
      return gpu_solve<T>(n, n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0, BSVD_VARIANT_AUTO, 0,
                          BSVD_EIG_SWEEPS_AUTO, 0, BSVD_PAIR_AUTO, precondition);
    };
    const auto r = solve(0), forced = solve(sampled_random ? 2 : -1);
    ASSERT_EQ(r.status, 0) << bsvd_last_error();
    ASSERT_EQ(forced.status, 0) << bsvd_last_error();
    expect_same_bits(r, forced);
  }

  std::vector<std::pair<int, int>> dims;
  for (int b = 0; b < 235; ++b)
    dims.push_back(b % 9 == 4 && b < 225 ? std::pair{256, 256} : std::pair{n, n});
  auto fill = [&](int b, int m, int nn, T *Ab, int lda) {
    const Family f = m == 256 ? Family::Cluster1 : Family::Random;
    bsvd::testing::generate<T>(f, m, nn, bsvd::testing::default_kappa<T>(), 800 + b, Ab, lda);
  };
  auto vsolve = [&](int precondition) {
    bsvd_options_t o = cuda_options();
    o.precondition = precondition;
    return vbatched_solve<T>(dims, 1, fill, o);
  };
  const auto r = vsolve(0), forced = vsolve(2);
  ASSERT_EQ(r.status, 0) << bsvd_last_error();
  ASSERT_EQ(forced.status, 0) << bsvd_last_error();
  int big = 0;
  for (size_t b = 0; b < dims.size(); ++b) {
    big += dims[b].first == 256;
    EXPECT_EQ(r.path[b], BSVD_PATH_CUDA_GRAM) << b;
    EXPECT_TRUE(r.S[b] == forced.S[b] && r.U[b] == forced.U[b] && r.V[b] == forced.V[b]) << b;
  }
  EXPECT_EQ(big, 25);
  for (int b : {0, 4}) EXPECT_TRUE(r.ratios(b).pass()) << ratio_text(r.ratios(b));
}

// The test on the twin's sums of the families' Gram matrices at the
// limits of the table (no GPU needed; the kernel's own sums are compared
// through the branch above).
TEST(GramTest, SeparatesTheFamiliesThatLost) {
  const bd::plan::GramTuning &t = bd::plan::tuning_table(9, 0).gram;
  for (Family f : bsvd::testing::all_families()) {
    const int n = 128;
    const auto A = family_batch<double>(f, n, n, 1, 40 + int(f));
    EXPECT_EQ(twin_preconditions(n, n, 1, A, t), f != Family::Cluster0 && f != Family::Cluster1)
        << int(f);
  }
  std::vector<double> Z(64 * 64, 0.0); // a zero matrix predicts nothing
  EXPECT_FALSE(twin_preconditions(64, 64, 1, Z, t));
  // orthogonal: nothing to gain; with noise of 1e-2 ... 1e-4: a gain (the
  // plain iteration's 9 sweeps); changed in one direction: none
  const int n = 128;
  EXPECT_FALSE(twin_preconditions(n, n, 1, orthogonal_batch<double>(n, 1, 0, false, 3), t));
  for (double delta : {1e-2, 1e-3, 1e-4})
    EXPECT_TRUE(twin_preconditions(n, n, 1, orthogonal_batch<double>(n, 1, delta, false, 4), t))
        << delta;
  EXPECT_FALSE(twin_preconditions(n, n, 1, orthogonal_batch<double>(n, 1, 0, true, 5), t));
  EXPECT_TRUE(
      twin_preconditions(n, n, 1, orthogonal_batch<std::complex<float>>(n, 1, 1e-3, false, 6), t));
  EXPECT_FALSE(
      twin_preconditions(n, n, 1, orthogonal_batch<std::complex<float>>(n, 1, 0, true, 7), t));
}

// The sample: at most GramTuning::sample matrices, spread over the shape,
// the last inside it.
TEST(GramTest, SampleSpreadsOverTheShape) {
  EXPECT_EQ(bd::gram_sample(200, 32).count, 32);
  EXPECT_EQ(bd::gram_sample(200, 32).step, 6);
  EXPECT_EQ(bd::gram_sample(10, 32).count, 10);
  EXPECT_EQ(bd::gram_sample(10, 32).step, 1);
  EXPECT_EQ(bd::gram_sample(0, 32).count, 0);
  EXPECT_EQ(bd::gram_sample(5, 0).count, 1); // a table without a sample tests one
  for (int n = 1; n <= 1000; ++n) {
    const bd::GramSample g = bd::gram_sample(n, 32);
    EXPECT_EQ(g.count, std::min(n, 32)) << n;
    EXPECT_LT((g.count - 1) * g.step, n) << n;
    EXPECT_GE(g.count * g.step, n - g.count + 1) << n; // spread: the gap after the last < step
  }
}

} // namespace
