// The orderings of core/ordering.hpp, in particular HBJ's p-strategies
// closest to row- and column-cyclic (ROW_PARALLEL, COLUMN_PARALLEL): every
// pair of real indices met exactly once per sweep, the pairs of a step
// disjoint, and the CPU solve accurate (T1-T4) with them.
#include <bsvd/svd.hpp>

#include "test_cpu_helpers.hpp"

#include "core/ordering.hpp"

#include <set>
#include <utility>

using namespace bsvd_cpu_test;
using bsvd::detail::make_ordering;
using bsvd::detail::Ordering;
using bsvd::detail::packed_pair;
using bsvd::detail::packed_pair_table;
using bsvd::detail::round_robin_pair;
using bsvd::testing::Family;

namespace {

constexpr bsvd_ordering_t kAll[] = {BSVD_ORDERING_ROUND_ROBIN, BSVD_ORDERING_ODD_EVEN,
                                    BSVD_ORDERING_ROW_PARALLEL, BSVD_ORDERING_COLUMN_PARALLEL};
constexpr bsvd_ordering_t kNew[] = {BSVD_ORDERING_ROW_PARALLEL, BSVD_ORDERING_COLUMN_PARALLEL};

void check_table(bsvd_ordering_t kind, int n) {
  SCOPED_TRACE("ordering " + std::to_string(int(kind)) + " n " + std::to_string(n));
  const Ordering o = make_ordering(kind, n);
  ASSERT_EQ(o.n, n);
  ASSERT_GE(o.slots, n);
  ASSERT_EQ(o.slots % 2, 0);
  ASSERT_EQ(o.table.size(), size_t(o.steps) * o.slots);
  std::set<std::pair<int, int>> met;
  for (int s = 0; s < o.steps; ++s) {
    std::vector<int> used(size_t(o.slots) + 1, 0);
    for (int k = 0; k < o.pairs_per_step(); ++k) {
      int p, q;
      o.pair(s, k, p, q);
      ASSERT_GE(p, 0);
      if (p >= n || q >= n) continue; // a dummy pair
      ASSERT_LT(p, q);
      EXPECT_EQ(used[size_t(p)]++, 0) << "step " << s << " reuses " << p;
      EXPECT_EQ(used[size_t(q)]++, 0) << "step " << s << " reuses " << q;
      EXPECT_TRUE(met.insert({p, q}).second) << "pair (" << p << ", " << q << ") met twice";
    }
  }
  EXPECT_EQ(met.size(), size_t(n) * (n - 1) / 2) << "pairs missing";
}

TEST(CpuOrdering, EveryPairOncePerSweepDisjointSteps) {
  for (bsvd_ordering_t kind : kAll)
    for (int n = 1; n <= 70; ++n) check_table(kind, n);
  for (bsvd_ordering_t kind : kNew)
    for (int n : {100, 127, 200, 300, 513}) check_table(kind, n);
}

// The new orderings are p-strategies (slots - 1 steps, every slot busy in
// every step) and end with HBJ Lemma 3.2's step (0, 1), (2, 3), ...
TEST(CpuOrdering, ParallelCyclicShape) {
  for (bsvd_ordering_t kind : kNew)
    for (int n = 1; n <= 70; ++n) {
      const Ordering o = make_ordering(kind, n);
      EXPECT_EQ(o.slots, bsvd::detail::parallel_cyclic_slots(n));
      EXPECT_EQ(o.steps, o.slots - 1);
      for (int s = 0; s < o.steps; ++s) {
        std::vector<int> used(size_t(o.slots), 0);
        for (int k = 0; k < o.pairs_per_step(); ++k) {
          int p, q;
          o.pair(s, k, p, q);
          ASSERT_LT(q, o.slots);
          ++used[size_t(p)];
          ++used[size_t(q)];
        }
        for (int c : used) EXPECT_EQ(c, 1) << "n " << n << " step " << s;
      }
      std::set<std::pair<int, int>> last;
      for (int k = 0; k < o.pairs_per_step(); ++k) {
        int p, q;
        o.pair(o.steps - 1, k, p, q);
        last.insert({p, q});
      }
      for (int k = 0; k < o.slots / 2; ++k) EXPECT_TRUE(last.count({2 * k, 2 * k + 1})) << n;
    }
  // Exact orders (2^k * {2, 6, ..., 22}) are not padded.
  for (int n : {2, 6, 16, 22, 44, 64, 88, 96}) EXPECT_EQ(bsvd::detail::parallel_cyclic_slots(n), n);
  EXPECT_EQ(bsvd::detail::parallel_cyclic_slots(33), 36);
  EXPECT_EQ(bsvd::detail::parallel_cyclic_slots(100), 112);
}

// HBJ Fig. 3.1's order: R||_6 step by step (reversed here), 0-based.
TEST(CpuOrdering, RowParallelOrderSix) {
  const Ordering o = make_ordering(BSVD_ORDERING_ROW_PARALLEL, 6);
  const int want[5][6] = {{0, 5, 1, 2, 3, 4},
                          {0, 4, 1, 3, 2, 5},
                          {0, 3, 1, 5, 2, 4},
                          {0, 2, 1, 4, 3, 5},
                          {0, 1, 2, 3, 4, 5}};
  ASSERT_EQ(o.steps, 5);
  for (int s = 0; s < 5; ++s)
    for (int k = 0; k < 3; ++k) {
      int p, q;
      o.pair(s, k, p, q);
      EXPECT_EQ(p, want[s][2 * k]) << s << " " << k;
      EXPECT_EQ(q, want[s][2 * k + 1]) << s << " " << k;
    }
}

template <class T> class CpuOrderingSolve : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(CpuOrderingSolve, Types);

TYPED_TEST(CpuOrderingSolve, AccurateWithParallelCyclic) {
  using T = TypeParam;
  uint64_t seed = 300;
  for (bsvd_ordering_t ord : kNew)
    for (bsvd_variant_t var : {BSVD_VARIANT_UNBLOCKED, BSVD_VARIANT_BLOCKED}) {
      Config cfg = twin_config();
      cfg.ordering = ord;
      cfg.variant = var;
      // The sizes of test_cpu_solve.cpp: all families up to 80 x 50, geo
      // up to 100 x 100. (logrand 100 x 100 in double reaches the max-error
      // ratio t3max ~ 25 with round-robin already and up to 42 with
      // COLUMN_PARALLEL over 12 seeds:
      // docs/design/decisions/0014-no-2x2-sorting.md.)
      for (Family f : {Family::Random, Family::Logrand, Family::Geo})
        for (auto [m, n] : std::vector<std::pair<int, int>>{
                 {1, 1}, {3, 3}, {16, 16}, {33, 33}, {64, 40}, {80, 50}, {9, 50}})
          worst_of<T>().add(check_family<T>(f, m, n, cfg, ++seed));
      worst_of<T>().add(check_family<T>(Family::Geo, 100, 100, cfg, ++seed));
    }
}

TEST(CpuOrdering, ApiAcceptsNewOrderings) {
  const int m = 20, n = 13;
  std::vector<double> A(size_t(m) * n);
  bsvd::testing::generate<double>(Family::Geo, m, n, 1e8, 9, A.data(), m);
  for (bsvd_ordering_t ord : kNew) {
    bsvd_options_t o = bsvd::default_options();
    o.backend = BSVD_BACKEND_CPU;
    o.ordering = ord;
    bsvd::Result<double> r;
    EXPECT_EQ(bsvd::svd(bsvd::Job::Values, m, n, A.data(), 1, r, o), 0) << bsvd_last_error();
  }
  bsvd_options_t o = bsvd::default_options();
  o.backend = BSVD_BACKEND_CPU;
  o.ordering = bsvd_ordering_t(4);
  bsvd::Result<double> r;
  EXPECT_LT(bsvd::svd(bsvd::Job::Values, m, n, A.data(), 1, r, o), 0);
}

// The two-level (W-cycle) block ordering, make_wcycle_ordering / wcycle_pair:
// the pairs of a step disjoint; per sweep, every pair of blocks in
// different outer blocks met exactly E times, every pair inside one outer
// block E times per outer step its outer block takes part in (nbo - 1 of
// them: with an odd count each outer block sits out once); the table the
// closed form; r = 1, and r >= nblk, exactly the one-level round robin.
void check_wcycle(int nblk, int r, int E) {
  SCOPED_TRACE("nblk " + std::to_string(nblk) + " r " + std::to_string(r) + " E " +
               std::to_string(E));
  using bsvd::detail::wcycle_r;
  const Ordering o = bsvd::detail::make_wcycle_ordering(nblk, r, E);
  const int re = wcycle_r(nblk, r);
  if (re == 1) {
    const Ordering rr = make_ordering(BSVD_ORDERING_ROUND_ROBIN, nblk);
    // (one block: one step of a dummy pair, which the solver never reads)
    if (nblk >= 2) {
      ASSERT_EQ(o.steps, rr.steps);
      ASSERT_EQ(o.slots, rr.slots);
      for (int s = 0; s < o.steps; ++s)
        for (int k = 0; k < o.pairs_per_step(); ++k) {
          int p, q, p2, q2;
          o.pair(s, k, p, q);
          rr.pair(s, k, p2, q2);
          if (p2 >= nblk || q2 >= nblk)
            EXPECT_TRUE(p >= nblk || q >= nblk);
          else
            EXPECT_EQ(std::make_pair(p, q), std::make_pair(p2, q2));
        }
    }
    return;
  }
  const int nbo = (nblk + re - 1) / re;
  ASSERT_EQ(o.steps, (nbo + (nbo & 1) - 1) * E * (2 * re - 1));
  ASSERT_EQ(o.table.size(), size_t(o.steps) * o.slots);
  std::vector<int> met(size_t(nblk) * nblk, 0);
  for (int s = 0; s < o.steps; ++s) {
    std::vector<int> used(size_t(nblk), 0);
    for (int k = 0; k < o.pairs_per_step(); ++k) {
      int p, q;
      o.pair(s, k, p, q);
      if (p >= nblk || q >= nblk) continue;
      ASSERT_LT(p, q);
      EXPECT_EQ(used[size_t(p)]++, 0) << "step " << s << " reuses " << p;
      EXPECT_EQ(used[size_t(q)]++, 0) << "step " << s << " reuses " << q;
      ++met[size_t(p) * nblk + q];
    }
  }
  for (int p = 0; p < nblk; ++p)
    for (int q = p + 1; q < nblk; ++q)
      EXPECT_EQ(met[size_t(p) * nblk + q], p / re == q / re ? E * (nbo - 1) : E)
          << "pair (" << p << ", " << q << ")";
}

TEST(CpuOrdering, WcycleTwoLevels) {
  for (int nblk = 1; nblk <= 40; ++nblk)
    for (int r : {1, 2, 3, 4, 8})
      for (int E : {1, 2}) check_wcycle(nblk, r, E);
  check_wcycle(64, 16, 3);
}

// The two-level plan on the blocked CPU solver: T1-T4 on every family
// (ragged last blocks, an odd number of outer blocks, wide shapes), and the
// options checked.
TEST(CpuOrdering, WcycleSolvesAndChecksOptions) {
  uint64_t seed = 77;
  for (Family f : bsvd::testing::all_families())
    for (auto [r, E] : {std::pair{2, 1}, std::pair{3, 2}}) {
      Config cfg = twin_config();
      cfg.variant = BSVD_VARIANT_BLOCKED;
      cfg.block_size = 8;
      cfg.wcycle_blocks = r;
      cfg.wcycle_sweeps = E;
      worst_of<double>().add(check_family<double>(f, 90, 70, cfg, ++seed));
      worst_of<std::complex<float>>().add(
          check_family<std::complex<float>>(f, 40, 100, cfg, ++seed));
    }
  const int m = 30, n = 20;
  std::vector<double> A(size_t(m) * n);
  bsvd::testing::generate<double>(Family::Random, m, n, 1e3, 5, A.data(), m);
  struct Bad {
    int blocks, sweeps;
    bsvd_ordering_t ord;
  };
  for (Bad b : {Bad{-1, 0, BSVD_ORDERING_ROUND_ROBIN}, Bad{65, 0, BSVD_ORDERING_ROUND_ROBIN},
                Bad{2, 9, BSVD_ORDERING_ROUND_ROBIN}, Bad{2, -1, BSVD_ORDERING_ROUND_ROBIN},
                Bad{2, 1, BSVD_ORDERING_ODD_EVEN}}) {
    bsvd_options_t o = bsvd::default_options();
    o.backend = BSVD_BACKEND_CPU;
    o.wcycle_blocks = b.blocks;
    o.wcycle_sweeps = b.sweeps;
    o.ordering = b.ord;
    bsvd::Result<double> r;
    EXPECT_LT(bsvd::svd(bsvd::Job::Values, m, n, A.data(), 1, r, o), 0)
        << b.blocks << " " << b.sweeps;
    EXPECT_NE(std::string(bsvd_last_error()).find("wcycle"), std::string::npos)
        << bsvd_last_error();
  }
  bsvd_options_t o = bsvd::default_options();
  o.backend = BSVD_BACKEND_CPU;
  o.wcycle_blocks = 2;
  o.wcycle_sweeps = 2;
  bsvd::Result<double> r;
  EXPECT_EQ(bsvd::svd(bsvd::Job::Values, m, n, A.data(), 1, r, o), 0) << bsvd_last_error();
}

} // namespace

// round_robin_pair (no modulo, as the GPU kernels evaluate it) is the
// circle method: slot N - 1 with s, and i + j = 2s mod (N - 1).
TEST(Ordering, RoundRobinPairIsTheCircleMethod) {
  for (int N = 2; N <= 300; N += 2)
    for (int s = 0; s < N - 1; ++s)
      for (int k = 0; k < N / 2; ++k) {
        int p, q;
        round_robin_pair(N, s, k, p, q);
        const int M = N - 1;
        int a = k == 0 ? s : (s + k) % M, b = k == 0 ? N - 1 : (s - k + M) % M;
        if (a > b) std::swap(a, b);
        ASSERT_EQ(p, a) << N << " " << s << " " << k;
        ASSERT_EQ(q, b) << N << " " << s << " " << k;
      }
}

// The packed tables the GPU reads hold make_ordering's real pairs, step by
// step in its order, within ceil(n / 2) slots per step: every pair of the
// n items once per sweep, the pairs of a step disjoint.
TEST(Ordering, PackedTablesHoldEveryPairOnce) {
  for (bsvd_ordering_t kind : kAll)
    for (int n : {1, 2, 3, 7, 16, 33, 64, 100, 118}) {
      SCOPED_TRACE(testing::Message() << "ordering " << int(kind) << " n " << n);
      const Ordering o = make_ordering(kind, n);
      const std::vector<int> t = packed_pair_table(kind, n);
      const int half = (n + 1) / 2;
      ASSERT_EQ(t[0], o.steps);
      std::vector<int> seen(size_t(n) * n, 0);
      for (int s = 0; s < o.steps; ++s) {
        std::vector<int> real, used(size_t(n), 0);
        for (int x = 0; x < o.pairs_per_step(); ++x) {
          int p, q;
          o.pair(s, x, p, q);
          if (p < n && q < n) real.push_back(p | (q << 16));
        }
        ASSERT_LE(int(real.size()), half);
        for (int k = 0; k < half; ++k) {
          const int e = t[1 + size_t(s) * half + k];
          int p = -1, q = -1;
          if (k < int(real.size())) {
            ASSERT_EQ(e, real[size_t(k)]);
            ASSERT_TRUE(packed_pair(e, p, q));
            ASSERT_LT(p, q);
            ASSERT_LT(q, n);
            ASSERT_FALSE(used[size_t(p)] || used[size_t(q)]);
            used[size_t(p)] = used[size_t(q)] = 1;
            ++seen[size_t(p) * n + q];
          } else {
            ASSERT_EQ(e, -1);
            ASSERT_FALSE(packed_pair(e, p, q));
          }
        }
      }
      for (int p = 0; p < n; ++p)
        for (int q = p + 1; q < n; ++q) ASSERT_EQ(seen[size_t(p) * n + q], 1) << p << " " << q;
    }
}
