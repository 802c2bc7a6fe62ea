// One large matrix across devices (core/distributed.hpp) and its CPU twin:
// the layout and the outer ordering, then the twin's solves (threads as
// devices) checked by T1-T4 against the reference singular values.
#include "core/distributed.hpp"
#include "testing/generate.hpp"
#include "testing/lapack_ref.hpp"
#include "testing/metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <set>
#include <vector>

using namespace bsvd::detail;
namespace bt = bsvd::testing;

namespace {

// Every block appears once a step; over a sweep every pair of blocks meets
// exactly once; a move takes a block from its place to its next place.
TEST(Distributed, OrderingMeetsEveryPairOnce) {
  for (int g : {1, 2, 3, 4, 8})
    for (int k : {1, 2, 5}) {
      dist::Layout L;
      L.mw = L.nw = 2 * g * k * 3;
      L.devices = g;
      L.pairs = k;
      L.width = 3;
      const int B = L.blocks(), steps = dist::steps_per_sweep(L);
      ASSERT_EQ(steps, B - 1);
      std::set<std::pair<int, int>> met;
      for (int s = 0; s < steps; ++s) {
        std::set<std::pair<int, int>> places; // (device, col) in use
        std::vector<std::vector<int>> at(size_t(g), std::vector<int>(size_t(L.device_cols()), -1));
        for (int b = 0; b < B; ++b) {
          const dist::Place p = dist::place_of(L, s, b);
          ASSERT_GE(p.device, 0);
          ASSERT_LT(p.device, g);
          ASSERT_EQ(p.col % L.width, 0);
          ASSERT_TRUE(places.insert({p.device, p.col}).second) << "two blocks in one place";
          at[size_t(p.device)][size_t(p.col)] = b;
        }
        for (int d = 0; d < g; ++d)
          for (int q = 0; q < k; ++q) {
            const int a = at[size_t(d)][size_t(q * L.pair_cols())];
            const int c = at[size_t(d)][size_t(q * L.pair_cols() + L.width)];
            ASSERT_TRUE(met.insert({std::min(a, c), std::max(a, c)}).second)
                << "g " << g << " k " << k << ": pair met twice";
          }
        const std::vector<dist::Move> mv = dist::moves_between(L, s);
        ASSERT_EQ(int(mv.size()), B);
        for (int b = 0; b < B; ++b) {
          const dist::Place f = dist::place_of(L, s, b), t = dist::place_of(L, (s + 1) % steps, b);
          EXPECT_TRUE(mv[size_t(b)].from.device == f.device && mv[size_t(b)].from.col == f.col);
          EXPECT_TRUE(mv[size_t(b)].to.device == t.device && mv[size_t(b)].to.col == t.col);
        }
      }
      EXPECT_EQ(int(met.size()), B * (B - 1) / 2);
    }
}

// With the pairs of a device consecutive, at most two blocks leave a device
// per step (the ends of its range; HBJ §5: few exchanges between GPUs).
TEST(Distributed, FewBlocksChangeDevices) {
  dist::Layout L = dist::make_layout(4096, 4096, 4, 256);
  EXPECT_EQ(L.pairs, 4);
  EXPECT_EQ(L.width, 128);
  for (int s = 0; s < dist::steps_per_sweep(L); ++s) {
    std::vector<int> out(4, 0);
    for (const dist::Move &m : dist::moves_between(L, s))
      if (m.from.device != m.to.device) ++out[size_t(m.from.device)];
    for (int d = 0; d < 4; ++d) EXPECT_LE(out[size_t(d)], 2) << "step " << s << " device " << d;
  }
}

TEST(Distributed, LayoutCoversTheColumns) {
  for (int nw : {7, 64, 100, 1000, 4097})
    for (int g : {1, 2, 3, 4})
      for (int pc : {8, 64, 512}) {
        const dist::Layout L = dist::make_layout(nw, nw, g, pc);
        EXPECT_GE(L.padded(), nw);
        EXPECT_LT(L.padded() - nw, L.blocks()) << "a whole padding block";
        EXPECT_GE(L.pairs, 1);
      }
}

// Q = I for a pair that did not rotate; a near-permutation V̂ is put back
// in column order; a genuine rotation is kept as it is.
TEST(Distributed, PairRotation) {
  const std::vector<double> P = {0, 1, 0, 0, 0, 1, -1, 0, 0}; // columns e2, e3, -e1
  std::vector<double> Q(9);
  std::vector<int> to(3);
  dist::pair_rotation(3, 0, P.data(), Q.data(), to.data());
  EXPECT_EQ(Q, (std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(to, (std::vector<int>{0, 1, 2}));
  dist::pair_rotation(3, 1, P.data(), Q.data(), to.data());
  EXPECT_EQ(Q, (std::vector<double>{-1, 0, 0, 0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(to, (std::vector<int>{1, 2, 0}));
  const double c = std::sqrt(0.5);
  const std::vector<double> G = {c, c, 0, c, c, 0, 0, 0, 1}; // two columns peak in row 0
  dist::pair_rotation(3, 1, G.data(), Q.data(), to.data());
  EXPECT_EQ(Q, G);
  EXPECT_EQ(to, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(dist::pair_rotated(0, 1), 0);
  EXPECT_EQ(dist::pair_rotated(0, 2), 1);
  EXPECT_EQ(dist::pair_rotated(1, 1), 1);
}

template <class T> struct Solved {
  std::vector<real_of_t<T>> S;
  std::vector<T> U, V;
  int info = -1, sweeps = -1;
};

template <class T> Solved<T> solve(int m, int n, const std::vector<T> &A, bool vectors,
                                   const dist::Settings &s, Config cfg = Config()) {
  Solved<T> r;
  const int k = std::min(m, n);
  r.S.assign(size_t(k), real_of_t<T>(-1));
  if (vectors) {
    r.U.assign(size_t(m) * k, T(0));
    r.V.assign(size_t(n) * k, T(0));
  }
  Batch<T> b = strided_batch<T>(vectors ? BSVD_JOB_VECTORS : BSVD_JOB_VALUES, m, n, A.data(), m, 0,
                                r.S.data(), 0, vectors ? r.U.data() : nullptr, m, 0,
                                vectors ? r.V.data() : nullptr, n, 0, &r.info, &r.sweeps, 1);
  EXPECT_EQ(dist::cpu_gesvj_distributed(b, cfg, s), BSVD_STATUS_SUCCESS);
  return r;
}

template <class T> void check_family(bt::Family f, int m, int n, const dist::Settings &s) {
  std::vector<T> A(size_t(m) * n);
  bt::generate<T>(f, m, n, bt::default_kappa<T>(), 1234 + m + 7 * n, A.data(), m);
  std::vector<double> ref(size_t(std::min(m, n)));
  ASSERT_EQ(bt::reference_singular_values(m, n, A.data(), m, ref.data()), 0);
  for (bool vectors : {true, false}) {
    const Solved<T> r = solve(m, n, A, vectors, s);
    EXPECT_EQ(r.info, 0) << bt::family_name(f) << " " << m << "x" << n;
    EXPECT_GT(r.sweeps, 0);
    const bt::Ratios q = bt::accuracy(m, n, A.data(), m, r.S.data(), vectors ? r.U.data() : nullptr,
                                      m, vectors ? r.V.data() : nullptr, n, ref.data());
    EXPECT_TRUE(q.pass()) << bt::family_name(f) << " " << m << "x" << n << " g " << s.devices
                          << " pw " << s.pair_cols << " vectors " << vectors << ": t1 " << q.t1
                          << " t2u " << q.t2u << " t2v " << q.t2v << " t3 " << q.t3;
  }
}

template <class T> class DistributedTwin : public ::testing::Test {};
using Precisions = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(DistributedTwin, Precisions);

// Every family, tall, square and wide, n a multiple of the blocks or not.
TYPED_TEST(DistributedTwin, FamiliesPassT1ToT4) {
  for (bt::Family f : bt::all_families())
    for (auto [m, n, g, pc] : std::vector<std::array<int, 4>>{
             {48, 48, 2, 8}, {90, 37, 3, 6}, {30, 61, 2, 10}, {64, 64, 4, 4}})
      check_family<TypeParam>(f, m, n, dist::Settings{g, pc, 1});
}

// The inner solve's sweep count: one (the block-oriented variant), two, or
// until converged; all reach the same accuracy.
TYPED_TEST(DistributedTwin, InnerSweepsAllConverge) {
  for (int inner : {0, 2})
    check_family<TypeParam>(bt::Family::Logrand, 72, 56, dist::Settings{2, 8, inner});
}

// A call that asks for preconditioning: a capped pair solve runs without
// it (with QRCP the capped solve's U Σ and V̂ disagree and the twin
// stopped on a wrong result), a solve to convergence with QRCP but never
// with the Gram preconditioning (which kept the iteration from stopping).
TEST(DistributedTwin, PreconditionedCall) {
  const int m = 120, n = 96;
  std::vector<double> A(size_t(m) * n);
  bt::generate<double>(bt::Family::Random, m, n, 1e3, 31, A.data(), m);
  std::vector<double> ref(static_cast<size_t>(n));
  ASSERT_EQ(bt::reference_singular_values(m, n, A.data(), m, ref.data()), 0);
  for (int pre : {1, 2})
    for (int inner : {1, 0}) {
      Config cfg;
      cfg.precondition = pre;
      const Solved<double> r = solve(m, n, A, true, dist::Settings{2, 16, inner}, cfg);
      EXPECT_EQ(r.info, 0) << "precondition " << pre << " inner " << inner;
      const bt::Ratios q =
          bt::accuracy(m, n, A.data(), m, r.S.data(), r.U.data(), m, r.V.data(), n, ref.data());
      EXPECT_TRUE(q.pass()) << "precondition " << pre << " inner " << inner << ": " << q.t1 << " "
                            << q.t2u << " " << q.t2v << " " << q.t3;
    }
  EXPECT_EQ(dist::inner_config(Config(), dist::Settings{2, 16, 1}).precondition, -1);
  EXPECT_EQ(dist::inner_config(Config(), dist::Settings{2, 16, 0}).precondition, 0);
  Config gram;
  gram.precondition = 2;
  EXPECT_EQ(dist::inner_config(gram, dist::Settings{2, 16, 0}).precondition, -1);
}

// The twin's result does not depend on the threads' schedule (the same bits
// twice), and one device is the plain blocked method.
TEST(DistributedTwin, RepeatableBits) {
  const int m = 70, n = 50;
  std::vector<double> A(size_t(m) * n);
  bt::generate<double>(bt::Family::Random, m, n, 1e4, 99, A.data(), m);
  for (int g : {1, 3}) {
    const Solved<double> a = solve(m, n, A, true, dist::Settings{g, 8, 1});
    const Solved<double> b = solve(m, n, A, true, dist::Settings{g, 8, 1});
    EXPECT_EQ(a.S, b.S);
    EXPECT_EQ(a.U, b.U);
    EXPECT_EQ(a.V, b.V);
    EXPECT_EQ(a.sweeps, b.sweeps);
  }
}

// Rank-deficient input (zero and repeated columns): U stays orthonormal
// (completed), S has the zeros; NaN and zero matrices take the one-matrix
// solver's answers.
TEST(DistributedTwin, EdgeMatrices) {
  const int m = 40, n = 33;
  std::vector<double> A(size_t(m) * n);
  bt::generate<double>(bt::Family::Random, m, n, 1e3, 5, A.data(), m);
  for (int i = 0; i < m; ++i) {
    A[i + 3 * m] = 0;
    A[i + 20 * m] = A[i + 7 * m];
  }
  std::vector<double> ref(static_cast<size_t>(n));
  ASSERT_EQ(bt::reference_singular_values(m, n, A.data(), m, ref.data()), 0);
  const Solved<double> r = solve(m, n, A, true, dist::Settings{3, 4, 1});
  EXPECT_EQ(r.info, 0);
  const bt::Ratios q =
      bt::accuracy(m, n, A.data(), m, r.S.data(), r.U.data(), m, r.V.data(), n, ref.data());
  EXPECT_TRUE(q.pass()) << q.t1 << " " << q.t2u << " " << q.t2v << " " << q.t3;

  std::vector<double> Z(size_t(m) * n, 0.0);
  const Solved<double> z = solve(m, n, Z, true, dist::Settings{2, 4, 1});
  EXPECT_EQ(z.info, 0);
  EXPECT_EQ(z.sweeps, 0);
  for (double s : z.S) EXPECT_EQ(s, 0.0);
  Z[5] = std::numeric_limits<double>::quiet_NaN();
  const Solved<double> nan = solve(m, n, Z, true, dist::Settings{2, 4, 1});
  EXPECT_EQ(nan.info, BSVD_INFO_NONFINITE);
  EXPECT_TRUE(std::isnan(nan.S[0]));
}

// Badly scaled input goes through the exact power-of-two scaling.
TEST(DistributedTwin, ScaledInput) {
  const int m = 36, n = 30;
  std::vector<double> A(size_t(m) * n);
  bt::generate<double>(bt::Family::Random, m, n, 1e2, 8, A.data(), m);
  for (double &x : A) x *= 1e-300;
  std::vector<double> ref(static_cast<size_t>(n));
  ASSERT_EQ(bt::reference_singular_values(m, n, A.data(), m, ref.data()), 0);
  const Solved<double> r = solve(m, n, A, true, dist::Settings{2, 6, 1});
  const bt::Ratios q =
      bt::accuracy(m, n, A.data(), m, r.S.data(), r.U.data(), m, r.V.data(), n, ref.data());
  EXPECT_TRUE(q.pass()) << q.t1 << " " << q.t2u << " " << q.t2v << " " << q.t3;
}

} // namespace
