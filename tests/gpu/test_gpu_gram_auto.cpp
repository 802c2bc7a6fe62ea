// The Gram route chosen by the plan (precondition = 0; decisions/0022):
// the GPU's test on each group's Gram matrices against its CPU twin
// (core/gram_test.hpp on F^H F formed here), and the branch it takes
// giving the bits of the route it chose when that route is forced
// (precondition = 2, or -1 for the plain blocked path).
#include "core/gram_test.hpp"
#include "gpu_test_util.hpp"
#include "plan/tuning.hpp"

namespace {

namespace bd = bsvd::detail;

template <class T> class GpuGramAuto : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(GpuGramAuto, Types);

template <class T> T conj_of(T x) { return x; }
template <class R> std::complex<R> conj_of(std::complex<R> x) { return std::conj(x); }

// The twin of the GPU's decision for a uniform batch: W (A, or A^H when
// wide) scaled by 2^-e to max |w_ij| in [1/2, 1) and rounded to single
// precision (gram_pack_kernel), G = F^H F, the test per matrix, and the
// vote by work (gram_decide_kernel; one shape: by count).
template <class T> bool twin_preconditions(int m, int n, int batch, const std::vector<T> &A,
                                           const bd::plan::GramTuning &t) {
  using L = std::conditional_t<std::is_same_v<T, R_t<T>>, float, std::complex<float>>;
  using W = std::conditional_t<std::is_same_v<T, R_t<T>>, double, std::complex<double>>;
  const int mw = std::max(m, n), nw = std::min(m, n);
  int gain = 0;
  for (int b = 0; b < batch; ++b) {
    const T *Ab = A.data() + size_t(b) * m * n;
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
    gain += bd::gram_test_pays(bd::gram_test_sums(G.data(), nw), mw, t.min_cos, t.min_rank);
  }
  return 2 * gain >= batch;
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
}

} // namespace
