// The blocked GPU path (src/cuda/blocked*.{hpp,cuh,cu}) against its CPU twin
// (the blocked CPU solver with the same block width, inner sweeps and
// ordering) and the accuracy contract T1-T4 on the six families, the edge
// cases, tall and wide shapes and sizes up to 1024, for s, d, c, z (the
// mixed-size batches and the SuiteSparse matrices: test_gpu_blocked_mixed.cpp).
// Skips without a GPU.
#include "blocked_test_util.hpp"
#include "gpu_test_util.hpp"

#include "core/ordering.hpp"
#include "cuda/blocked/blocked.hpp"
#include "cuda/qr/qr.hpp"

#include <random>

namespace {

template <class T> class GpuBlocked : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(GpuBlocked, Types);

// (blocked_cfg, kPairSolvers, blocked_path_for: blocked_test_util.hpp)

// Matrix b of r (a blocked solve of A with block width kBlockedDefaultNb and
// `eig` inner sweeps) took `path` and matches its CPU twin -- the pair-SVD
// solver for SVD_SM, the Gram one for GRAM and EVD_SM (the same arithmetic,
// in global or shared memory), with the same two-level plan (wr, we:
// opts.wcycle_blocks / wcycle_sweeps): singular values within
// 8 sqrt(max(m, n)) u, the twin's info, sweeps within `slack`; and passes
// T1-T4.
template <class T> void expect_matches_twin(const Solved<T> &r, const std::vector<T> &A, int b,
                                            int eig, int path, int slack,
                                            int nb = kBlockedDefaultNb, int wr = 0, int we = 0) {
  const int m = r.m, n = r.n;
  EXPECT_EQ(r.path[b], path);
  Config cfg =
      blocked_cfg(nb, eig, path == BSVD_PATH_CUDA_PAIR_SVD ? BSVD_PAIR_SVD_SM : BSVD_PAIR_GRAM);
  cfg.wcycle_blocks = wr;
  cfg.wcycle_sweeps = we;
  const auto tw =
      cpu_twin<T>(m, n, A.data() + size_t(b) * m * n, true, BSVD_ORDERING_ROUND_ROBIN, cfg);
  const double gap = twin_gap(r, b, tw);
  EXPECT_LE(gap, 8.0 * std::sqrt(double(std::max(m, n))))
      << "singular values differ from the CPU twin by " << gap << " u";
  EXPECT_EQ(r.info[b], tw.info);
  EXPECT_LE(std::abs(r.sweeps[b] - tw.sweeps), slack)
      << "gpu " << r.sweeps[b] << " sweeps, cpu " << tw.sweeps;
  const auto q = ratios(r, A, b);
  EXPECT_TRUE(q.pass()) << ratio_text(q);
}

// GPU blocked vs CPU blocked on fresh random inputs: forced onto the
// blocked path even where the fused kernel would take the matrix, single
// block (n <= nb), two blocks, odd block counts, ragged last blocks, tall
// and wide; the inexact (1 inner sweep) and the full inner mode.
TYPED_TEST(GpuBlocked, MatchesCpuTwin) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  const std::vector<std::pair<int, int>> shapes = {
      {1, 1},     {5, 3},    {16, 16},  {17, 17},  {33, 33},  {48, 48}, {64, 64},
      {100, 100}, {130, 70}, {70, 130}, {500, 16}, {200, 40}, {3, 90}};
  uint64_t seed = 4321;
  for (bsvd_pair_solver_t pair : kPairSolvers)
    for (int eig : {1, 0}) {
      for (auto [m, n] : shapes) {
        if (eig == 0 && std::max(m, n) > 64) continue;
        const int batch = 2;
        const auto A = family_batch<T>(Family::Random, m, n, batch, seed += 13);
        const auto r = gpu_solve<T>(m, n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0,
                                    BSVD_VARIANT_BLOCKED, kBlockedDefaultNb, eig, 0, pair);
        ASSERT_EQ(r.status, 0) << bsvd_last_error();
        const int path = blocked_path_for<T>(m, n, pair);
        for (int b = 0; b < batch; ++b) {
          SCOPED_TRACE(testing::Message() << m << "x" << n << " b=" << b << " eig_sweeps=" << eig
                                          << " pair solver " << int(pair) << " path " << path);
          // The pair SVD run to inner convergence (eig_sweeps = 0) ends each
          // pair at rotations decided by rounding (its GPU inner products sum
          // in another order): c 33 x 33 took 6 sweeps against the twin's 4.
          const int slack = path == BSVD_PATH_CUDA_PAIR_SVD && eig == 0 ? 2 : 1;
          expect_matches_twin<T>(r, A, b, eig, path, slack);
        }
      }
    }
}

// The wide instance (K = 64: block widths 17 ... 32; s, d, c) against the
// CPU twin with the same width: its own Gram kernel, the 256-thread block
// eigensolver at k up to 64, the update with 64-column rows; single block
// (n <= nb), ragged and odd block counts, tall and wide, the three inner
// sweep modes; random and logrand. z has no wide instance: a width above 16
// routes its matrices to the CPU (blocked_nb), and they still solve.
TYPED_TEST(GpuBlocked, WideBlocksMatchCpuTwin) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  const bool wide = bsvd::detail::cuda::blocked_has_wide(prec<T>());
  struct Shape {
    int m, n, nb;
  };
  const std::vector<Shape> shapes = {{20, 20, 32},   {33, 33, 32},   {64, 64, 32},
                                     {100, 100, 32}, {130, 70, 32},  {70, 130, 32},
                                     {200, 40, 32},  {150, 150, 24}, {300, 256, 32}};
  uint64_t seed = 6061;
  for (int eig : {1, 0, int(BSVD_EIG_SWEEPS_AUTO)})
    for (const Shape &sh : shapes) {
      if (eig == 0 && std::max(sh.m, sh.n) > 150) continue;
      const int batch = 2;
      const Family fam = seed % 2 ? Family::Logrand : Family::Random;
      const auto A = family_batch<T>(fam, sh.m, sh.n, batch, seed += 11);
      const auto r = gpu_solve<T>(sh.m, sh.n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0,
                                  BSVD_VARIANT_BLOCKED, sh.nb, eig, 0, BSVD_PAIR_AUTO);
      ASSERT_EQ(r.status, 0) << bsvd_last_error();
      for (int b = 0; b < batch; ++b) {
        SCOPED_TRACE(testing::Message() << sh.m << "x" << sh.n << " nb " << sh.nb << " b=" << b
                                        << " eig_sweeps=" << eig);
        if (wide) {
          // (d: the tensor-core Gram plan, whose sums differ to rounding)
          expect_matches_twin<T>(r, A, b, eig, BSVD_PATH_CUDA_BLOCKED, prec<T>() == 'd' ? 2 : 1,
                                 sh.nb);
        } else {
          EXPECT_EQ(r.path[b], BSVD_PATH_CPU_BLOCKED);
          EXPECT_EQ(r.info[b], 0);
          const auto q = ratios(r, A, b);
          EXPECT_TRUE(q.pass()) << ratio_text(q);
        }
      }
    }
}

// The two-level (W-cycle) block ordering (opts.wcycle_blocks, wcycle_pair in
// ordering.hpp) against the CPU twin with the same plan, through each pair
// solver and the wide instance: outer blocks of 2 and 3 blocks, one and two
// sweeps one level down; block counts that fill the outer blocks, that
// leave the last one ragged, an odd number of outer blocks, a matrix of no
// more than r blocks (one level), tall and wide; random and logrand. Each
// matrix matches its twin (values, info, sweeps within 2) and passes T1-T4.
TYPED_TEST(GpuBlocked, WcycleMatchesCpuTwin) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  struct Shape {
    int m, n, nb;
  };
  std::vector<Shape> shapes = {{64, 64, 16},   {100, 100, 16}, {160, 96, 16}, {96, 160, 16},
                               {150, 150, 16}, {40, 40, 16},   {300, 80, 8}};
  if (bsvd::detail::cuda::blocked_has_wide(prec<T>())) shapes.push_back({130, 130, 24});
  uint64_t seed = 9091;
  for (bsvd_pair_solver_t pair : kPairSolvers)
    for (auto [wr, we] : {std::pair{2, 1}, std::pair{3, 2}})
      for (const Shape &sh : shapes) {
        if (sh.nb > kBlockedDefaultNb && pair != BSVD_PAIR_GRAM) continue;
        const int batch = 2;
        const Family fam = seed % 2 ? Family::Logrand : Family::Random;
        const auto A = family_batch<T>(fam, sh.m, sh.n, batch, seed += 7);
        const auto r = gpu_solve<T>(sh.m, sh.n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0,
                                    BSVD_VARIANT_BLOCKED, sh.nb, 1, 0, pair, -1, wr, we);
        ASSERT_EQ(r.status, 0) << bsvd_last_error();
        const int path = blocked_path_for<T>(sh.m, sh.n, pair, sh.nb);
        for (int b = 0; b < batch; ++b) {
          SCOPED_TRACE(testing::Message()
                       << sh.m << "x" << sh.n << " nb " << sh.nb << " b=" << b << " wcycle " << wr
                       << "x" << we << " pair solver " << int(pair));
          // sweep slack 2, that of expect_near_twin and the SuiteSparse
          // tests: the GPU's Gram sums differ from the twin's in the last
          // places, and a slow logrand matrix turns that into a sweep more or
          // less at its tail -- seen on the H100: d 160 x 96, 2 x 1, 21
          // sweeps against 19
          expect_matches_twin<T>(r, A, b, 1, path, 2, sh.nb, wr, we);
        }
      }
}

// A matrix of no more than r blocks stays at one level (wcycle_r): with
// r = 6 a 6-block matrix gives the one-level bits, whatever the sweeps one
// level down; with r = 2 it is another iteration (other bits).
TYPED_TEST(GpuBlocked, WcycleOfOneOuterBlockIsOneLevel) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  const int m = 120, n = 96, batch = 3; // 6 blocks of 16
  const auto A = family_batch<T>(Family::Random, m, n, batch, 515);
  const auto one = gpu_solve<T>(m, n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0,
                                BSVD_VARIANT_BLOCKED, 16, 1, 0, BSVD_PAIR_GRAM, -1, 0, 0);
  const auto six = gpu_solve<T>(m, n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0,
                                BSVD_VARIANT_BLOCKED, 16, 1, 0, BSVD_PAIR_GRAM, -1, 6, 3);
  const auto two = gpu_solve<T>(m, n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0,
                                BSVD_VARIANT_BLOCKED, 16, 1, 0, BSVD_PAIR_GRAM, -1, 2, 1);
  ASSERT_EQ(one.status, 0) << bsvd_last_error();
  ASSERT_EQ(six.status, 0) << bsvd_last_error();
  ASSERT_EQ(two.status, 0) << bsvd_last_error();
  expect_same_bits(one, six);
  // (and a real two-level plan is another iteration: not the same bits)
  EXPECT_NE(one.V, two.V);
}

// Inner sweeps per matrix (eig_sweeps = BSVD_EIG_SWEEPS_AUTO, the default;
// src/core/inner_sweeps.hpp) and two fixed inner sweeps (the register
// eigensolver's two-sweep replay for full pairs of s, d, c) against the CPU
// twin with the same setting, through each pair solver: logrand matrices
// stall under one inner sweep, so the rule switches them (the GPU counts
// the rotations the twin counts), and auto must take fewer outer sweeps
// than one inner sweep.
TYPED_TEST(GpuBlocked, AutoInnerSweepsMatchTwin) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  uint64_t seed = 4711;
  for (bsvd_pair_solver_t pair : kPairSolvers)
    for (auto [m, n] : std::vector<std::pair<int, int>>{{96, 96}, {120, 90}}) {
      const int batch = 2;
      const auto A = family_batch<T>(Family::Logrand, m, n, batch, seed += 3);
      std::vector<int> sweeps_one;
      for (int eig : {1, BSVD_EIG_SWEEPS_AUTO, 2}) {
        const auto r = gpu_solve<T>(m, n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0,
                                    BSVD_VARIANT_BLOCKED, kBlockedDefaultNb, eig, 0, pair);
        ASSERT_EQ(r.status, 0) << bsvd_last_error();
        const int path = blocked_path_for<T>(m, n, pair);
        for (int b = 0; b < batch; ++b) {
          SCOPED_TRACE(testing::Message() << m << "x" << n << " b=" << b << " eig_sweeps=" << eig
                                          << " pair solver " << int(pair) << " path " << path);
          expect_matches_twin<T>(r, A, b, eig, path, 1);
          EXPECT_EQ(r.info[b], 0);
          if (eig == 1) sweeps_one.push_back(r.sweeps[b]);
          if (eig == BSVD_EIG_SWEEPS_AUTO)
            EXPECT_LT(r.sweeps[b], sweeps_one[b]) << "auto did not save outer sweeps";
        }
      }
    }
}

// Small matrices through each pair solver against the matching CPU twin:
// cheap enough for compute-sanitizer racecheck (scripts/gpu-check.sh).
TYPED_TEST(GpuBlocked, PairSolversSmall) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  uint64_t seed = 77;
  for (bsvd_pair_solver_t pair : kPairSolvers)
    for (auto [m, n] : std::vector<std::pair<int, int>>{{40, 40}, {33, 20}, {20, 45}}) {
      const int batch = 2;
      const auto A = family_batch<T>(Family::Logrand, m, n, batch, seed += 7);
      const auto r = gpu_solve<T>(m, n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0,
                                  BSVD_VARIANT_BLOCKED, 8, 1, 0, pair);
      ASSERT_EQ(r.status, 0) << bsvd_last_error();
      for (int b = 0; b < batch; ++b) {
        SCOPED_TRACE(testing::Message() << m << "x" << n << " pair solver " << int(pair));
        EXPECT_EQ(r.path[b], blocked_path_for<T>(m, n, pair, 8));
        const auto tw =
            cpu_twin<T>(m, n, A.data() + size_t(b) * m * n, true, BSVD_ORDERING_ROUND_ROBIN,
                        blocked_cfg(8, 1, pair == BSVD_PAIR_SVD_SM ? pair : BSVD_PAIR_GRAM));
        EXPECT_LE(twin_gap(r, b, tw), 8.0 * std::sqrt(double(std::max(m, n))));
        EXPECT_LE(std::abs(r.sweeps[b] - tw.sweeps), 1) << "cpu twin " << tw.sweeps;
        const auto q = ratios(r, A, b);
        EXPECT_TRUE(q.pass()) << ratio_text(q);
      }
    }
}

// The Gram path's eigensolver plans (plan::evd_threads: a
// warp per Gram matrix -- G and Q in registers for full pairs of s, d, c,
// in shared memory otherwise -- or a block of 128 / 256 threads) apply the
// same operations to every entry in the same order: S, U, V and the sweep
// counts must agree bit for bit, and all pass T1-T4. Covers odd block
// counts (an empty round-robin slot), ragged last blocks, k < 32, tall and
// wide, the full inner mode, two inner sweeps (the register solver's
// two-sweep replay) and the automatic inner sweeps. In d the warp plan runs
// twice: with its lean kernel (full pairs, one inner sweep: the shapes with
// n a multiple of 16, at least 32, and eig_sweeps 1 or auto) and without
// it. 200 x 16 (one block: a pair of width 16) must not take the lean
// kernel, whose gate asks for two or more full blocks (full_pairs).
TYPED_TEST(GpuBlocked, EvdPlansGiveTheSameBits) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  struct Shape {
    int m, n, nb, eig;
  };
  const std::vector<Shape> shapes = {
      {100, 100, 16, 1}, {130, 70, 16, 1}, {70, 130, 16, 1}, {45, 45, 8, 1},    {200, 40, 16, 1},
      {48, 48, 16, 0},   {37, 29, 4, 0},   {96, 96, 16, 2},  {128, 96, 16, -1}, {64, 64, 16, 1},
      {160, 128, 16, 1}, {96, 160, 16, 1}, {200, 16, 16, 1}};
  ScopedOverride plan("BSVD_EVD_THREADS"), lean("BSVD_EVD_LEAN");
  constexpr bool kLean = std::is_same_v<T, double>;
  uint64_t seed = 991;
  for (const Shape &sh : shapes) {
    const int batch = 3;
    const auto A = family_batch<T>(Family::Logrand, sh.m, sh.n, batch, seed += 5);
    // (a single block of 16 is a pair of width 16, not a full pair: 200 x 16)
    const int w = std::min(sh.m, sh.n);
    const bool full = sh.nb == 16 && w % 16 == 0 && w >= 32 && sh.eig != 0 && sh.eig != 2;
    std::vector<Solved<T>> res;
    struct Plan {
      const char *threads, *lean;
    };
    for (const Plan pl : {Plan{"32", "1"}, Plan{"128", "1"}, Plan{"256", "1"}, Plan{"32", "0"}}) {
      plan.set(pl.threads);
      lean.set(pl.lean);
      res.push_back(gpu_solve<T>(sh.m, sh.n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0,
                                 BSVD_VARIANT_BLOCKED, sh.nb, sh.eig, 0, BSVD_PAIR_GRAM));
      const long ran = bsvd::detail::cuda::blocked_last_profile().evd_lean_steps;
      if (kLean && full && pl.threads[0] == '3' && pl.lean[0] == '1')
        EXPECT_GT(ran, 0) << sh.m << "x" << sh.n << ": the lean kernel did not run";
      else
        EXPECT_EQ(ran, 0) << sh.m << "x" << sh.n << " plan " << pl.threads << " lean " << pl.lean
                          << ": the lean kernel ran";
    }
    for (size_t p = 0; p < res.size(); ++p) {
      SCOPED_TRACE(testing::Message() << sh.m << "x" << sh.n << " nb " << sh.nb << " eig_sweeps "
                                      << sh.eig << " plan " << p);
      ASSERT_EQ(res[p].status, 0) << bsvd_last_error();
      for (int b = 0; b < batch; ++b) {
        EXPECT_EQ(res[p].path[b], BSVD_PATH_CUDA_BLOCKED);
        EXPECT_TRUE(ratios(res[p], A, b).pass()) << ratio_text(ratios(res[p], A, b));
      }
      if (p == 0) continue;
      EXPECT_EQ(res[p].sweeps, res[0].sweeps);
      EXPECT_EQ(res[p].info, res[0].info);
      EXPECT_TRUE(res[p].S == res[0].S) << "singular values differ from the warp plan's";
      EXPECT_TRUE(res[p].U == res[0].U) << "U differs from the warp plan's";
      EXPECT_TRUE(res[p].V == res[0].V) << "V differs from the warp plan's";
    }
  }
}

// The own Gram kernel's three plans (tile 2 / tile 4 threads' tiles, and
// tile 2 split into one block per 128-row segment; plan::gram_plan) sum every entry by the same segments in the same
// order: the same bits, on ragged pairs (k < 32), row counts that are not a
// multiple of the 32-row stage or the segment, wide input, and nb = 8.
TYPED_TEST(GpuBlocked, GramPlansGiveTheSameBits) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  struct Shape {
    int m, n, nb;
  };
  // Rows beyond kGramSegRows = 128 exercise the segments (the split plan
  // runs one block per segment; with one segment "s" runs tile 2 unsplit).
  const std::vector<Shape> shapes = {{100, 100, 16}, {130, 70, 16}, {70, 130, 16}, {45, 45, 8},
                                     {200, 40, 16},  {33, 33, 16},  {300, 48, 16}, {40, 390, 8}};
  ScopedOverride tile("BSVD_GRAM_TILE"), gram("BSVD_GRAM");
  gram.set("own");
  uint64_t seed = 4242;
  for (const Shape &sh : shapes) {
    const int batch = 3;
    const auto A = family_batch<T>(Family::Logrand, sh.m, sh.n, batch, seed += 7);
    const bool segs = std::max(sh.m, sh.n) > 128;
    std::vector<Solved<T>> res;
    for (const char *plan : {"2", "4", "s"}) {
      tile.set(plan);
      res.push_back(gpu_solve<T>(sh.m, sh.n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0,
                                 BSVD_VARIANT_BLOCKED, sh.nb, 1, 0, BSVD_PAIR_GRAM));
      const auto pr = bsvd::detail::cuda::blocked_last_profile();
      const int ran = plan[0] == '4' ? 1 : plan[0] == 's' && segs ? 2 : 0;
      for (int p = 0; p < 4; ++p)
        if (p == ran)
          EXPECT_GT(pr.gram_steps[p], 0) << "plan " << plan << " did not run";
        else
          EXPECT_EQ(pr.gram_steps[p], 0) << "plan " << plan << " was not forced";
    }
    SCOPED_TRACE(testing::Message() << sh.m << "x" << sh.n << " nb " << sh.nb);
    for (const auto &r : res) {
      ASSERT_EQ(r.status, 0) << bsvd_last_error();
      for (int b = 0; b < batch; ++b) {
        EXPECT_EQ(r.path[b], BSVD_PATH_CUDA_BLOCKED);
        EXPECT_TRUE(ratios(r, A, b).pass()) << ratio_text(ratios(r, A, b));
      }
    }
    for (size_t p = 1; p < res.size(); ++p) {
      EXPECT_EQ(res[p].sweeps, res[0].sweeps);
      EXPECT_EQ(res[p].info, res[0].info);
      EXPECT_TRUE(res[p].S == res[0].S) << "singular values differ between the Gram plans";
      EXPECT_TRUE(res[p].U == res[0].U) << "U differs between the Gram plans";
      EXPECT_TRUE(res[p].V == res[0].V) << "V differs between the Gram plans";
    }
  }
}

// The tensor-core Gram plan (double; BSVD_GRAM_TILE=m, and the rule's choice
// where tile 4 would run): the narrow (nb <= 16) and the wide (nb 17 ... 32)
// instance, ragged pairs, row counts that are not a multiple of the 32-row
// stage, wide input, a single block. The hardware sums each four products
// in its own order, so against the CPU twin to rounding: singular values
// within 8 sqrt(max(m, n)) u, sweeps within 2, T1-T4; and the profile shows
// the plan ran.
TEST(GpuBlockedMma, GramByTensorCoresMatchesTwin) {
  SKIP_WITHOUT_GPU();
  using T = double;
  struct Shape {
    int m, n, nb;
  };
  const std::vector<Shape> shapes = {{100, 100, 16}, {130, 70, 16},  {70, 130, 16}, {45, 45, 8},
                                     {200, 40, 16},  {33, 33, 16},   {300, 48, 16}, {20, 20, 16},
                                     {150, 150, 32}, {257, 100, 24}, {64, 64, 32}};
  ScopedOverride tile("BSVD_GRAM_TILE"), gram("BSVD_GRAM");
  gram.set("own");
  tile.set("m");
  uint64_t seed = 515;
  for (const Shape &sh : shapes)
    for (Family fam : {Family::Random, Family::Logrand}) {
      const int batch = 3;
      const auto A = family_batch<T>(fam, sh.m, sh.n, batch, seed += 9);
      const auto r = gpu_solve<T>(sh.m, sh.n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0,
                                  BSVD_VARIANT_BLOCKED, sh.nb, 1, 0, BSVD_PAIR_GRAM);
      ASSERT_EQ(r.status, 0) << bsvd_last_error();
      EXPECT_GT(bsvd::detail::cuda::blocked_last_profile().gram_steps[3], 0)
          << "the tensor-core plan did not run";
      for (int b = 0; b < batch; ++b) {
        SCOPED_TRACE(testing::Message() << sh.m << "x" << sh.n << " nb " << sh.nb << " b=" << b
                                        << " family " << int(fam));
        expect_matches_twin<T>(r, A, b, 1, BSVD_PATH_CUDA_BLOCKED, 2, sh.nb);
      }
    }
}

// Routing of matrices that fit the fused kernel (plan::fused_call_cols,
// max_cols = 64): auto takes the fused kernel up to max_cols columns and the blocked path beyond, except in calls with
// few matrices beyond 64 columns: up to fused_wide_cols (d 72, c 76) with at
// most 2 SMs' worth of them, up to fused_window_cols (d, c 88, z 80, s 72)
// with 3/4 to 1 SM's worth. unblocked keeps every fitting matrix fused.
// The shapes straddle 64 and the caps, the counts the SM count.
TYPED_TEST(GpuBlocked, FittingMatricesRoutedByColumns) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  namespace cu = bsvd::detail::cuda;
  ScopedOverride cols("BSVD_FUSED_MAX_COLS");
  cols.unset(); // the rule, not an override from the environment
  const int sms = cu::sm_count();
  constexpr bool d = std::is_same_v<T, double>, s = std::is_same_v<T, float>;
  constexpr bool c = std::is_same_v<T, std::complex<float>>;
  const pl::Tuning t = cu::current_tuning();
  const int wide = pl::fused_wide_cols(t, prec<T>()), window = pl::fused_window_cols(t, prec<T>());
  EXPECT_EQ(wide, (d ? 72 : c ? 76 : 64));
  EXPECT_EQ(window, (d || c ? 88 : s ? 72 : 80));
  struct Case {
    int m, n, batch;
  };
  const std::vector<Case> cases = {{64, 64, 2},
                                   {96, 96, 2},
                                   {200, 64, 2},
                                   {70, 90, 2},
                                   {80, 80, 3},
                                   {80, 80, sms},
                                   {80, 80, sms + 1},
                                   {72, 72, 2 * sms},
                                   {72, 72, 2 * sms + 1},
                                   {72, 72, (3 * sms + 3) / 4},
                                   {72, 72, (3 * sms + 3) / 4 - 1}};
  for (const Case &cs : cases) {
    const int m = cs.m, n = cs.n, batch = cs.batch;
    SCOPED_TRACE(testing::Message() << batch << " x " << m << "x" << n);
    const bool fits = cu::fits(prec<T>(), m, n, true);
    const int k = std::min(m, n);
    // the expected route, from the rule's statement
    const bool in_window = 4 * batch >= 3 * sms && batch <= sms && k <= window;
    const bool in_wide = batch <= 2 * sms && k <= wide;
    const bool fused = fits && (k <= t.fused.max_cols || in_window || in_wide);
    const auto A = family_batch<T>(Family::Logrand, m, n, batch, 77 + m + n);
    const auto a = gpu_solve<T>(m, n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0,
                                BSVD_VARIANT_AUTO, 0, 1, /*qr=*/-1);
    const auto u = gpu_solve<T>(m, n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0,
                                BSVD_VARIANT_UNBLOCKED, 0, 1, /*qr=*/-1);
    ASSERT_EQ(a.status, 0) << bsvd_last_error();
    ASSERT_EQ(u.status, 0) << bsvd_last_error();
    for (int b = 0; b < batch; b += std::max(1, batch / 4)) {
      SCOPED_TRACE(b);
      EXPECT_EQ(a.path[b], fused ? BSVD_PATH_CUDA_FUSED : BSVD_PATH_CUDA_BLOCKED);
      EXPECT_EQ(u.path[b], fits ? BSVD_PATH_CUDA_FUSED : BSVD_PATH_CPU_UNBLOCKED);
      EXPECT_TRUE(ratios(a, A, b).pass()) << ratio_text(ratios(a, A, b));
      EXPECT_TRUE(ratios(u, A, b).pass()) << ratio_text(ratios(u, A, b));
    }
    // The override: every fitting matrix fused, as before the measurement.
    if (batch > 3) continue;
    cols.set("100000");
    const auto o = gpu_solve<T>(m, n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0,
                                BSVD_VARIANT_AUTO, 0, 1, /*qr=*/-1);
    cols.unset();
    ASSERT_EQ(o.status, 0) << bsvd_last_error();
    for (int b = 0; b < batch; ++b)
      EXPECT_EQ(o.path[b], fits ? BSVD_PATH_CUDA_FUSED : BSVD_PATH_CUDA_BLOCKED);
  }
  // A variable-size batch: the counts are of the call's matrices beyond 64
  // columns (those of at most 64 do not count, nor those too wide to fit).
  if (cu::fits(prec<T>(), 80, 80, true) && window >= 80) {
    std::vector<std::pair<int, int>> dims(sms, {80, 80});
    EXPECT_EQ(call_fused_cols<T>(dims), window);
    dims.push_back({20, 20});
    dims.push_back({300, 300});
    EXPECT_EQ(call_fused_cols<T>(dims), window);
    dims.push_back({70, 70});
    EXPECT_EQ(call_fused_cols<T>(dims), wide); // sms + 1 beyond 64: the wide cap
  }
}

// The Gram path's matrices in two groups on two streams (BSVD_BLK_GROUPS=2)
// against one group: each matrix sees the same kernels in the same order,
// so the results are the same bits. A variable-size batch with a
// rank-deficient matrix (early finish on the other side stream) and, in the
// second pass, cuBLAS Gram matrices (only in the second group).
TYPED_TEST(GpuBlocked, StreamGroupsGiveTheSameBits) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  const std::vector<std::pair<int, int>> dims = {{300, 300}, {150, 150}, {64, 200}, {140, 140},
                                                 {96, 96},   {200, 64},  {120, 90}};
  ScopedOverride groups("BSVD_BLK_GROUPS"), gram("BSVD_GRAM");
  for (const char *g : {"own", "cublas"}) {
    gram.set(g);
    std::vector<VSolved<T>> res;
    for (const char *ng : {"1", "2"}) {
      groups.set(ng);
      bsvd_options_t o = cuda_options();
      o.variant = BSVD_VARIANT_BLOCKED;
      o.pair_solver = BSVD_PAIR_GRAM;
      o.precondition = -1;
      res.push_back(vbatched_solve<T>(
          dims, 3,
          [&](int b, int m, int n, T *A, int lda) {
            bsvd::testing::generate<T>(b % 2 ? Family::Logrand : Family::Random, m, n,
                                       bsvd::testing::default_kappa<T>(), 930 + b, A, lda);
            if (b == 6) // columns 45.. repeat 0..: rank 45
              for (int j = 45; j < n; ++j)
                for (int i = 0; i < m; ++i) A[i + size_t(j) * lda] = A[i + size_t(j - 45) * lda];
          },
          o));
      ASSERT_EQ(res.back().status, 0) << bsvd_last_error();
      const auto pr = bsvd::detail::cuda::blocked_last_profile();
      if (ng[0] == '2')
        EXPECT_GT(pr.split_sweeps, 0) << "two groups were asked for";
      else
        EXPECT_EQ(pr.split_sweeps, 0);
    }
    SCOPED_TRACE(testing::Message() << "Gram " << g);
    for (int b = 0; b < int(dims.size()); ++b) {
      SCOPED_TRACE(testing::Message() << "matrix " << b);
      EXPECT_EQ(res[1].path[b], BSVD_PATH_CUDA_BLOCKED);
      EXPECT_EQ(res[1].info[b], 0);
      EXPECT_EQ(res[1].sweeps[b], res[0].sweeps[b]);
      EXPECT_TRUE(res[1].S[b] == res[0].S[b]) << "singular values differ between the groupings";
      EXPECT_TRUE(res[1].U[b] == res[0].U[b]) << "U differs between the groupings";
      EXPECT_TRUE(res[1].V[b] == res[0].V[b]) << "V differs between the groupings";
      const auto q = res[1].ratios(b);
      EXPECT_TRUE(q.pass()) << ratio_text(q);
    }
  }
}

// The eigensolver plans on small matrices against the CPU twin, one
// rank-deficient (the finish's pivoted completion of U on the blocked
// path), one of full pairs (k = 32: the warp plan's register solver for
// s, d, c), once more with two inner sweeps (its two-sweep replay): cheap
// enough for compute-sanitizer racecheck (scripts/gpu-check.sh).
TYPED_TEST(GpuBlocked, EvdPlansSmall) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  ScopedOverride plan("BSVD_EVD_THREADS");
  uint64_t seed = 313;
  struct Shape {
    int m, n, nb, eig;
  };
  for (const char *nt : {"32", "128", "256"})
    for (auto [m, n, nb, eig] :
         std::vector<Shape>{{40, 40, 8, 1}, {33, 21, 8, 1}, {48, 48, 16, 1}, {48, 48, 16, 2}}) {
      plan.set(nt);
      auto A = family_batch<T>(Family::Logrand, m, n, 2, seed += 3);
      if (n == 21) // columns 11.. repeat 0..: rank 11, the finish completes 10 U columns
        for (int b = 0; b < 2; ++b)
          for (int j = 11; j < n; ++j)
            for (int i = 0; i < m; ++i)
              A[size_t(b) * m * n + i + size_t(j) * m] =
                  A[size_t(b) * m * n + i + size_t(j - 11) * m];
      const auto r = gpu_solve<T>(m, n, 2, A, true, BSVD_ORDERING_ROUND_ROBIN, 0,
                                  BSVD_VARIANT_BLOCKED, nb, eig, 0, BSVD_PAIR_GRAM);
      ASSERT_EQ(r.status, 0) << bsvd_last_error();
      for (int b = 0; b < 2; ++b) {
        SCOPED_TRACE(testing::Message()
                     << m << "x" << n << " nb " << nb << " eig_sweeps " << eig << " plan " << nt);
        const auto tw =
            cpu_twin<T>(m, n, A.data() + size_t(b) * m * n, true, BSVD_ORDERING_ROUND_ROBIN,
                        blocked_cfg(nb, eig, BSVD_PAIR_GRAM));
        EXPECT_LE(twin_gap(r, b, tw), 8.0 * std::sqrt(double(std::max(m, n))));
        // Rank-deficient: the last sweeps rotate columns at the noise floor,
        // where rounding decides (the SuiteSparse tests' slack of 2); so do
        // full pairs (k = 32) in single precision, whose threshold k u is
        // near the rounding of the Gram form (seen: s 48^2 logrand, 2).
        EXPECT_LE(std::abs(r.sweeps[b] - tw.sweeps), n == 21 || nb == 16 ? 2 : 1)
            << "cpu twin " << tw.sweeps;
        EXPECT_TRUE(ratios(r, A, b).pass()) << ratio_text(ratios(r, A, b));
      }
    }
}

// Many numerically null columns (the finish's completion in rounds,
// complete_rounds / complete_basis): low rank tall and wide (rank 20 of
// 300 x 200: 180 columns to complete in rounds of 16), and a 0/1 pattern
// whose rows come in equal pairs and whose columns repeat (like the
// SuiteSparse graph matrices): the two rows of a pair project onto the same
// direction, so a round that takes both must reject the second. Against
// the CPU twin (the same rounds) and T1-T4.
TYPED_TEST(GpuBlocked, NullColumnsInRounds) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  using R = R_t<T>;
  std::mt19937_64 g(2024);
  std::normal_distribution<double> nd(0.0, 1.0);
  std::bernoulli_distribution bit(0.3);
  auto gauss = [&]() {
    if constexpr (std::is_same_v<T, R>)
      return T(R(nd(g)));
    else
      return T(R(nd(g)), R(nd(g)));
  };
  struct Shape {
    int m, n, rank;
  }; // rank 0: the pattern matrix
  for (auto [m, n, rank] : std::vector<Shape>{{300, 200, 20}, {200, 300, 5}, {160, 160, 0}}) {
    const int batch = 2;
    std::vector<T> A(size_t(batch) * m * n, T(0));
    for (int b = 0; b < batch; ++b) {
      T *Ab = A.data() + size_t(b) * m * n;
      if (rank > 0) {
        for (int r = 0; r < rank; ++r) {
          std::vector<T> x(m), y(n);
          for (auto &v : x) v = gauss();
          for (auto &v : y) v = gauss();
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i) Ab[i + size_t(j) * m] += x[i] * y[j];
        }
      } else {
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < m; ++i)
            Ab[i + size_t(j) * m] = j % 3 == 2   ? Ab[i + size_t(j - 1) * m] // repeated column
                                    : i % 2 == 1 ? Ab[i - 1 + size_t(j) * m] // equal row pair
                                                 : T(R(bit(g)));
      }
    }
    const auto r =
        gpu_solve<T>(m, n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0, BSVD_VARIANT_BLOCKED,
                     kBlockedDefaultNb, BSVD_EIG_SWEEPS_AUTO, 0, BSVD_PAIR_GRAM);
    ASSERT_EQ(r.status, 0) << bsvd_last_error();
    const int path = blocked_path_for<T>(m, n, BSVD_PAIR_GRAM);
    for (int b = 0; b < batch; ++b) {
      SCOPED_TRACE(testing::Message() << m << "x" << n << " rank " << rank << " b=" << b);
      // Rank-deficient: the last sweeps rotate at the noise floor (the
      // SuiteSparse tests' slack).
      expect_matches_twin<T>(r, A, b, BSVD_EIG_SWEEPS_AUTO, path, 3);
    }
  }
}

// The six families at sizes beyond the fused kernel (the automatic choice
// sends them to the blocked path).
TYPED_TEST(GpuBlocked, FamiliesPassT1toT4) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  uint64_t seed = 99;
  for (bsvd_pair_solver_t pair :
       {BSVD_PAIR_AUTO, BSVD_PAIR_GRAM, BSVD_PAIR_EVD_SM, BSVD_PAIR_SVD_SM})
    for (Family f : bsvd::testing::all_families())
      for (auto [m, n] :
           std::vector<std::pair<int, int>>{{200, 200}, {256, 256}, {400, 150}, {150, 400}}) {
        const int batch = 2;
        const auto A = family_batch<T>(f, m, n, batch, seed += 31);
        const auto r = gpu_solve<T>(m, n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0,
                                    BSVD_VARIANT_AUTO, 0, BSVD_EIG_SWEEPS_AUTO, 0, pair);
        ASSERT_EQ(r.status, 0) << bsvd_last_error();
        for (int b = 0; b < batch; ++b) {
          SCOPED_TRACE(testing::Message() << bsvd::testing::family_name(f) << " " << m << "x" << n
                                          << " pair solver " << int(pair));
          EXPECT_EQ(r.path[b], blocked_path_for<T>(m, n, pair));
          EXPECT_EQ(r.info[b], 0) << r.sweeps[b] << " sweeps";
          const auto q = ratios(r, A, b);
          EXPECT_TRUE(q.pass()) << ratio_text(q);
        }
      }
}

// Large matrices (one of each: the parallelism is the pairs of one matrix).
TYPED_TEST(GpuBlocked, LargeMatrices) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  const bool real8 = std::is_same_v<T, double>;
  std::vector<std::pair<int, int>> shapes = {{512, 512}, {2000, 16}, {16, 2000}, {1000, 40}};
  if (real8 || std::is_same_v<T, float>) shapes.push_back({1024, 1024});
  for (auto [m, n] : shapes) {
    const Family f = m == n ? Family::Geo : Family::Random;
    const auto A = family_batch<T>(f, m, n, 1, 7000 + m + n);
    // qr = -1: tall and wide shapes stay on the blocked path (test_gpu_qr.cpp
    // covers the QR preprocessing the automatic choice would take).
    const auto r = gpu_solve<T>(m, n, 1, A, true, BSVD_ORDERING_ROUND_ROBIN, 0, BSVD_VARIANT_AUTO,
                                0, 1, /*qr=*/-1);
    ASSERT_EQ(r.status, 0) << bsvd_last_error();
    SCOPED_TRACE(testing::Message() << m << "x" << n);
    EXPECT_EQ(r.path[0], auto_fused<T>(m, n) ? BSVD_PATH_CUDA_FUSED
                                             : blocked_path_for<T>(m, n, BSVD_PAIR_AUTO));
    EXPECT_EQ(r.info[0], 0) << r.sweeps[0] << " sweeps";
    const auto q = ratios(r, A, 0);
    EXPECT_TRUE(q.pass()) << ratio_text(q);
  }
}

// Edge cases on the blocked path; a NaN / Inf matrix in the middle of a
// batch gets its info code and NaN outputs, the others still pass.
TYPED_TEST(GpuBlocked, EdgeCases) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  const std::vector<Edge> edges = {Edge::Zero,     Edge::Identity,   Edge::RankDeficient,
                                   Edge::Overflow, Edge::Underflow,  Edge::Nan,
                                   Edge::Inf,      Edge::TinyColumns};
  for (bsvd_pair_solver_t pair : kPairSolvers)
    for (auto [m, n] :
         std::vector<std::pair<int, int>>{{40, 40}, {60, 25}, {25, 60}, {1, 5}, {180, 180}}) {
      const int batch = int(edges.size()) + 2;
      std::vector<T> A(size_t(batch) * m * n);
      bsvd::testing::generate<T>(Family::Random, m, n, 1, 5, A.data(), m);
      for (size_t e = 0; e < edges.size(); ++e)
        bsvd::testing::generate_edge<T>(edges[e], m, n, 40 + e, A.data() + (e + 1) * m * n, m);
      bsvd::testing::generate<T>(Family::Geo, m, n, bsvd::testing::default_kappa<T>(), 6,
                                 A.data() + size_t(batch - 1) * m * n, m);
      const auto r = gpu_solve<T>(m, n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0,
                                  BSVD_VARIANT_BLOCKED, 0, 1, 0, pair);
      ASSERT_EQ(r.status, 0) << bsvd_last_error();
      for (int b = 0; b < batch; ++b) {
        const bool bad = b >= 1 && b <= int(edges.size()) &&
                         (edges[b - 1] == Edge::Nan || edges[b - 1] == Edge::Inf);
        SCOPED_TRACE(testing::Message()
                     << m << "x" << n << " matrix " << b << " pair solver " << int(pair));
        if (bad) {
          EXPECT_EQ(r.info[b], BSVD_INFO_NONFINITE);
          EXPECT_EQ(r.path[b], BSVD_PATH_TRIVIAL);
          for (int j = 0; j < r.k; ++j) EXPECT_TRUE(std::isnan(double(r.S[size_t(b) * r.k + j])));
          EXPECT_TRUE(std::isnan(std::abs(r.U[size_t(b) * m * r.k])));
          continue;
        }
        EXPECT_EQ(r.path[b], blocked_path_for<T>(m, n, pair));
        EXPECT_EQ(r.info[b], 0);
        const auto q = ratios(r, A, b);
        EXPECT_TRUE(q.pass()) << ratio_text(q);
      }
    }
}

} // namespace
