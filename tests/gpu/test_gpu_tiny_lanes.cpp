// The register tier's lanes variant (src/cuda/tiny/lanes.cuh) through the
// public API, forced on for every size (BSVD_TINY_MAX_DIM=32,
// BSVD_TINY_LANES_FROM=2): its CPU twin is bsvd::device::warp_svd run on
// the host (the same header, all lanes in lock step), so the GPU must give
// the twin's S within a few u and meet T1-T4 on the six families and the
// edge cases, for s, d, c, z, staged and unstaged. Skips without a GPU.
#include "gpu_test_util.hpp"

#include "plan/tuning.hpp"

#include <bsvd/device/warp_svd.cuh>

namespace {

template <class T> class GpuTinyLanes : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(GpuTinyLanes, Types);

struct LanesOn {
  ScopedOverride cap{"BSVD_TINY_MAX_DIM"}, from{"BSVD_TINY_LANES_FROM"};
  LanesOn() {
    cap.set("32");
    from.set("2");
  }
};

// The twin of the instance the launch takes (lanes.cuh launch_lanes_impl:
// L = 8 up to 8, 16 up to 16, 32 beyond).
// The tier's reach for T (z: 16).
template <class T> int reach() {
  return bsvd::detail::plan::kTinyInstanceMax[bsvd::detail::plan::prec_index(prec<T>())];
}

template <class T> std::vector<R_t<T>> host_twin(int m, int n, const T *A) {
  std::vector<R_t<T>> S(std::min(m, n));
  const int d = std::max(m, n);
  if (d <= 8)
    bsvd::device::warp_svd<T, 8, 8, 8>(0, m, n, A, m, S.data(), nullptr, 1, nullptr, 1);
  else if (d <= 16)
    bsvd::device::warp_svd<T, 16, 16, 16>(0, m, n, A, m, S.data(), nullptr, 1, nullptr, 1);
  else
    bsvd::device::warp_svd<T, 32, 32, 32>(0, m, n, A, m, S.data(), nullptr, 1, nullptr, 1);
  return S;
}

template <class T> void check_batch(const Solved<T> &r, const std::vector<T> &A, int m, int n,
                                    int &same_bits, int &total) {
  ASSERT_EQ(r.status, 0) << bsvd_last_error();
  for (int b = 0; b < r.batch; ++b) {
    SCOPED_TRACE(testing::Message() << m << "x" << n << " b=" << b);
    EXPECT_EQ(r.path[b], BSVD_PATH_CUDA_TINY);
    EXPECT_EQ(r.info[b], 0);
    const auto tw = host_twin<T>(m, n, A.data() + size_t(b) * m * n);
    const double s1 = std::max(double(tw[0]), 1e-300);
    double gap = 0;
    bool same = true;
    for (int j = 0; j < r.k; ++j) {
      gap = std::max(gap, std::abs(double(r.S[size_t(b) * r.k + j]) - double(tw[j])) / s1);
      same = same && r.S[size_t(b) * r.k + j] == tw[j];
    }
    same_bits += same;
    ++total;
    // Instances with L = 2, 4 lanes take the pairs in another order than
    // the L = 8 twin, and nvcc contracts to fma: rounding-level gaps.
    EXPECT_LE(gap / uroff<T>(), 8.0 * std::sqrt(double(std::max(m, n))))
        << "S differs from the host twin";
    const auto q = ratios(r, A, b);
    EXPECT_TRUE(q.pass()) << ratio_text(q);
  }
}

// 37 matrices of family f on device data against the host twin; for the
// random family also host data (the same bits) and values only (the same S).
template <class T> void check_family(Family f, int m, int n, uint64_t seed, int &same, int &total) {
  const int batch = 37;
  const auto A = family_batch<T>(f, m, n, batch, seed);
  const auto d = gpu_solve_device<T>(m, n, batch, A);
  check_batch(d, A, m, n, same, total);
  if (f != Family::Random) return;
  const auto h = gpu_solve<T>(m, n, batch, A);
  check_batch(h, A, m, n, same, total);
  expect_same_bits(h, d);
  const auto s = gpu_solve<T>(m, n, batch, A, false);
  EXPECT_EQ(s.S, d.S);
}

// Every shape up to 8 x 8 (a third of them for the non-random families),
// staged and unstaged; 37 matrices: two full blocks of 16 (L = 8) and a
// partial one.
TYPED_TEST(GpuTinyLanes, FamiliesMatchTheHostTwin) {
  SKIP_WITHOUT_GPU();
  LanesOn on;
  using T = TypeParam;
  int same = 0, total = 0;
  uint64_t seed = 7;
  for (int m = 1; m <= 8; ++m)
    for (int n = 1; n <= 8; ++n)
      for (Family f : bsvd::testing::all_families())
        if (f == Family::Random || (m + n) % 3 == 0)
          check_family<T>(f, m, n, seed += 101, same, total);
  std::printf("[lanes twin] %s: %d of %d matrices with S bit for bit as the host twin\n",
              typeid(T).name(), same, total);
}

// 9 ... 32: the L = 16 and L = 32 instances, where the partner's column is
// held (s; d and c up to 16) or fetched twice (d and c beyond 16), all
// families on a few shapes; 37 matrices (several blocks and a partial one).
TYPED_TEST(GpuTinyLanes, LargerSizesMatchTheHostTwin) {
  SKIP_WITHOUT_GPU();
  LanesOn on;
  using T = TypeParam;
  int same = 0, total = 0;
  uint64_t seed = 11;
  for (auto [m, n] : std::vector<std::pair<int, int>>{
           {9, 9}, {16, 16}, {12, 16}, {16, 5}, {17, 17}, {32, 32}, {32, 19}, {24, 32}}) {
    if (std::max(m, n) > reach<T>()) continue;
    for (Family f : bsvd::testing::all_families())
      if (f == Family::Random || (m + n + int(f)) % 2 == 0)
        check_family<T>(f, m, n, seed += 101, same, total);
  }
  std::printf("[lanes twin 9-32] %s: %d of %d matrices with S bit for bit as the host twin\n",
              typeid(T).name(), same, total);
}

TYPED_TEST(GpuTinyLanes, EdgeCasesInOneBatch) {
  SKIP_WITHOUT_GPU();
  LanesOn on;
  using T = TypeParam;
  for (auto [m, n] : std::vector<std::pair<int, int>>{{2, 2},
                                                      {3, 3},
                                                      {3, 2},
                                                      {2, 5},
                                                      {8, 8},
                                                      {6, 7},
                                                      {16, 16},
                                                      {11, 14},
                                                      {32, 32},
                                                      {20, 27}}) {
    if (std::max(m, n) > reach<T>()) continue;
    const auto edges = bsvd::testing::all_edges();
    const int batch = int(edges.size()) * 2;
    std::vector<T> A = family_batch<T>(Family::Random, m, n, batch, 99);
    for (size_t e = 0; e < edges.size(); ++e)
      bsvd::testing::generate_edge<T>(edges[e], m, n, 7, A.data() + 2 * e * m * n, m);
    const auto r = gpu_solve_device<T>(m, n, batch, A);
    ASSERT_EQ(r.status, 0) << bsvd_last_error();
    for (int b = 0; b < batch; ++b) {
      const Edge e = edges[size_t(b / 2)];
      SCOPED_TRACE(testing::Message() << m << "x" << n << " b=" << b << " "
                                      << (b % 2 ? "random" : bsvd::testing::edge_name(e)));
      if (b % 2 == 0 && (e == Edge::Nan || e == Edge::Inf)) {
        EXPECT_EQ(r.info[b], BSVD_INFO_NONFINITE);
        EXPECT_TRUE(std::isnan(double(r.S[size_t(b) * r.k])));
        continue;
      }
      EXPECT_EQ(r.info[b], 0);
      EXPECT_EQ(r.path[b], BSVD_PATH_CUDA_TINY);
      const auto q = ratios(r, A, b, !(b % 2 == 0 && e == Edge::Overflow));
      EXPECT_TRUE(q.pass()) << ratio_text(q);
    }
  }
}

// Variable sizes (pointer arrays, padded leading dimensions): unstaged.
TYPED_TEST(GpuTinyLanes, VariableSizes) {
  SKIP_WITHOUT_GPU();
  LanesOn on;
  using T = TypeParam;
  std::vector<std::pair<int, int>> dims;
  for (int i = 0; i < 50; ++i) dims.push_back({1 + i % 7, 1 + (i * 5) % 8});
  // Beyond 8 the group runs the largest size's instance (L = 32; z: 16).
  const int big = reach<T>() - 8;
  for (int i = 0; big > 0 && i < 12; ++i) dims.push_back({9 + (i * 7) % big, 9 + (i * 5) % big});
  const auto r = vbatched_solve<T>(
      dims, 2,
      [](int b, int m, int n, T *A, int lda) {
        bsvd::testing::generate<T>(Family::Geo, m, n, bsvd::testing::default_kappa<T>(), 300 + b, A,
                                   lda);
      },
      plain_options());
  ASSERT_EQ(r.status, 0) << bsvd_last_error();
  for (size_t b = 0; b < dims.size(); ++b) {
    const auto [m, n] = dims[b];
    EXPECT_EQ(r.path[b], BSVD_PATH_CUDA_TINY);
    EXPECT_EQ(r.info[b], 0);
    const auto q = bsvd::testing::accuracy<T, R_t<T>>(m, n, r.A[b].data(), r.lda[b], r.S[b].data(),
                                                      r.U[b].data(), r.ldu[b], r.V[b].data(),
                                                      r.ldv[b], nullptr);
    EXPECT_TRUE(q.pass()) << m << "x" << n << " " << ratio_text(q);
    EXPECT_EQ(r.U[b][size_t(m)], T(-1)); // padding rows of U untouched
  }
}

// A large batch of 8 x 8 (many blocks, a partial last one): every matrix
// converges, a sample meets T1-T4.
TYPED_TEST(GpuTinyLanes, LargeBatchSample) {
  SKIP_WITHOUT_GPU();
  LanesOn on;
  using T = TypeParam;
  const int batch = 100003, m = 8, n = 8;
  const auto A = family_batch<T>(Family::Random, m, n, batch, 1);
  const auto r = gpu_solve_device<T>(m, n, batch, A);
  ASSERT_EQ(r.status, 0);
  int bad = 0;
  for (int b = 0; b < batch; ++b) bad += r.info[b] != 0;
  EXPECT_EQ(bad, 0);
  for (int b = 0; b < batch; b += 4999) {
    const auto q = ratios(r, A, b);
    EXPECT_TRUE(q.pass()) << b << " " << ratio_text(q);
  }
  const auto q = ratios(r, A, batch - 1);
  EXPECT_TRUE(q.pass()) << ratio_text(q);
}

} // namespace
