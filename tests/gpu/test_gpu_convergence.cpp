// The stopping rule (include/bsvd/device/threshold.cuh) on every GPU path:
// no matrix may end at the sweep cap (info = 1).
//   - 10^6 random matrices of each of 2 x 2, 3 x 3 and 4 x 4 per precision
//     (the batches of `bsvd gen --family random --seed 7`; the CPU twin in
//     test_cpu_convergence.cpp) on the register tier (one thread per
//     matrix), its lanes variant and the fused kernel with the tier off;
//   - every SuiteSparse matrix of data/matrices through each route: the
//     automatic plan (the `bsvd bench --mtx` batch: the tier's lanes variant
//     takes d 9 ... 16, where nine rank-deficient matrices ran to the cap),
//     the tier forced up to its reach, the fused kernel, the QR front end,
//     the blocked path, QR with column pivoting and the Gram
//     preconditioning: info = 0 and T1-T4 for each.
// Skips without a GPU.
#include "gpu_test_util.hpp"

#include "plan/tuning.hpp"

namespace {

template <class T> class GpuConvergence : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(GpuConvergence, Types);

// ---- 10^6 random tiny matrices ---------------------------------------------

// Matrix b of `bsvd gen --family random --seed 7`: seed 7 * 1000003 + b.
template <class T> std::vector<T> random_batch(int m, int n, long count) {
  std::vector<T> A(size_t(count) * m * n);
  for (long b = 0; b < count; ++b)
    bsvd::testing::generate<T>(Family::Random, m, n, bsvd::testing::default_kappa<T>(),
                               7 * 1000003ull + uint64_t(b), A.data() + size_t(b) * m * n, m);
  return A;
}

// A GPU path for tiny matrices, forced by the tier's overrides.
struct TinyRoute {
  const char *name;
  const char *tier_cap; // BSVD_TINY_MAX_DIM
  const char *lanes_from; // BSVD_TINY_LANES_FROM (null: the table's)
  bool unblocked; // variant unblocked (the fused kernel)
  int path;
};
constexpr TinyRoute kTinyRoutes[] = {
    {"tier, one thread per matrix", "8", "9", false, BSVD_PATH_CUDA_TINY},
    {"tier, lanes variant", "8", "2", false, BSVD_PATH_CUDA_TINY},
    {"fused kernel, tier off", "0", nullptr, true, BSVD_PATH_CUDA_FUSED},
};

template <class T> void million_random(int m, int n) {
  constexpr long kCount = 1000000;
  const auto A = random_batch<T>(m, n, kCount);
  for (const TinyRoute &r : kTinyRoutes) {
    SCOPED_TRACE(testing::Message() << prec<T>() << " " << m << "x" << n << ", " << r.name);
    ScopedOverride cap("BSVD_TINY_MAX_DIM"), from("BSVD_TINY_LANES_FROM");
    cap.set(r.tier_cap);
    if (r.lanes_from) from.set(r.lanes_from);
    bsvd_options_t o = plain_options();
    o.qr = -1;
    if (r.unblocked) o.variant = BSVD_VARIANT_UNBLOCKED;
    const auto s = gpu_solve_with<T>(m, n, int(kCount), A, false, o);
    ASSERT_EQ(s.status, 0) << bsvd_last_error();
    long bad = 0, other_path = 0;
    int worst = 0;
    double total = 0;
    for (long b = 0; b < kCount; ++b) {
      if (s.info[b] != 0 && bad++ == 0)
        ADD_FAILURE() << "matrix " << b << ": info " << s.info[b] << ", " << s.sweeps[b]
                      << " sweeps";
      other_path += s.path[b] != r.path;
      worst = std::max(worst, s.sweeps[b]);
      total += s.sweeps[b];
    }
    EXPECT_EQ(bad, 0);
    EXPECT_EQ(other_path, 0);
    EXPECT_LE(worst, m == 2 ? 4 : 8);
    std::printf("[convergence %c %dx%d] %s: %ld of %ld not converged, sweeps mean %.2f max %d\n",
                prec<T>(), m, n, r.name, bad, kCount, total / kCount, worst);
  }
}

TYPED_TEST(GpuConvergence, MillionRandom2x2) {
  SKIP_WITHOUT_GPU();
  million_random<TypeParam>(2, 2);
}
TYPED_TEST(GpuConvergence, MillionRandom3x3) {
  SKIP_WITHOUT_GPU();
  million_random<TypeParam>(3, 3);
}
TYPED_TEST(GpuConvergence, MillionRandom4x4) {
  SKIP_WITHOUT_GPU();
  million_random<TypeParam>(4, 4);
}

// ---- every SuiteSparse matrix, every route ----------------------------------

struct Mtx {
  bsvd::testing::DenseMatrix dm;
  std::vector<double> ref; // LAPACK's singular values, per precision
};

// A route of the cuda backend: its options and overrides, which matrices
// it takes, and the path they must report (-1: the plan's own choice).
struct MtxRoute {
  const char *name;
  bsvd_variant_t variant;
  int qr, precondition;
  const char *tier_cap; // BSVD_TINY_MAX_DIM (null: the table's)
  int path;
};
constexpr MtxRoute kMtxRoutes[] = {
    {"automatic plan", BSVD_VARIANT_AUTO, 0, 0, nullptr, -1},
    {"tier (forced up to its reach)", BSVD_VARIANT_AUTO, -1, -1, "32", BSVD_PATH_CUDA_TINY},
    {"fused kernel", BSVD_VARIANT_UNBLOCKED, -1, -1, "0", BSVD_PATH_CUDA_FUSED},
    {"QR front end", BSVD_VARIANT_UNBLOCKED, 1, -1, "0", BSVD_PATH_CUDA_QR},
    {"blocked", BSVD_VARIANT_BLOCKED, -1, -1, nullptr, BSVD_PATH_CUDA_BLOCKED},
    {"QR with column pivoting", BSVD_VARIANT_BLOCKED, -1, 1, nullptr, BSVD_PATH_CUDA_QRCP},
    {"Gram preconditioning", BSVD_VARIANT_BLOCKED, -1, 2, nullptr, BSVD_PATH_CUDA_GRAM},
};

// Whether route r takes an m x n matrix of T (and reports r.path for it).
template <class T> bool route_takes(const MtxRoute &r, int m, int n) {
  const int mw = std::max(m, n), nw = std::min(m, n);
  switch (r.path) {
  case BSVD_PATH_CUDA_TINY:
    return mw <= bsvd::detail::plan::kTinyInstanceMax[bsvd::detail::plan::prec_index(prec<T>())];
  case BSVD_PATH_CUDA_FUSED: return bsvd::detail::cuda::fits(prec<T>(), m, n, true);
  case BSVD_PATH_CUDA_QR: return bsvd::detail::cuda::fits(prec<T>(), nw, nw, true);
  default: return true;
  }
}

TYPED_TEST(GpuConvergence, SuiteSparseEveryRoute) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  std::vector<Mtx> mats;
  for (const auto &path : bsvd::testing::list_matrix_market(bsvd::testing::default_matrix_dir())) {
    Mtx x;
    std::string err;
    ASSERT_TRUE(bsvd::testing::read_matrix_market(path, x.dm, err)) << err;
    const auto A = bsvd::testing::dense_as<T>(x.dm);
    x.ref.resize(std::min(x.dm.m, x.dm.n));
    ASSERT_EQ(
        bsvd::testing::reference_singular_values<T>(x.dm.m, x.dm.n, A.data(), x.dm.m, x.ref.data()),
        0);
    mats.push_back(std::move(x));
  }
  ASSERT_EQ(mats.size(), 141u);
  for (const MtxRoute &r : kMtxRoutes) {
    SCOPED_TRACE(testing::Message() << prec<T>() << ", " << r.name);
    ScopedOverride cap("BSVD_TINY_MAX_DIM");
    if (r.tier_cap) cap.set(r.tier_cap);
    std::vector<const Mtx *> sel;
    std::vector<std::pair<int, int>> dims;
    for (const Mtx &x : mats)
      if (route_takes<T>(r, x.dm.m, x.dm.n)) {
        sel.push_back(&x);
        dims.emplace_back(x.dm.m, x.dm.n);
      }
    bsvd_options_t o = cuda_options();
    o.variant = r.variant;
    o.qr = r.qr;
    o.precondition = r.precondition;
    const auto s = vbatched_solve<T>(
        dims, 0,
        [&](int b, int m, int n, T *A, int lda) {
          const auto a = bsvd::testing::dense_as<T>(sel[b]->dm);
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i) A[i + size_t(j) * lda] = a[i + size_t(j) * m];
        },
        o);
    ASSERT_EQ(s.status, 0) << bsvd_last_error();
    int worst = 0, bad = 0;
    for (size_t b = 0; b < sel.size(); ++b) {
      const auto &dm = sel[b]->dm;
      SCOPED_TRACE(testing::Message() << dm.name << " " << dm.m << "x" << dm.n);
      if (r.path == BSVD_PATH_CUDA_BLOCKED) // its pairs by the Gram or a shared-memory solver
        EXPECT_TRUE(s.path[b] == BSVD_PATH_CUDA_BLOCKED || s.path[b] == BSVD_PATH_CUDA_PAIR_EVD ||
                    s.path[b] == BSVD_PATH_CUDA_PAIR_SVD)
            << "path " << s.path[b];
      else if (r.path >= 0)
        EXPECT_EQ(s.path[b], r.path);
      EXPECT_EQ(s.info[b], 0) << s.sweeps[b] << " sweeps, path " << s.path[b];
      bad += s.info[b] != 0;
      worst = std::max(worst, s.sweeps[b]);
      const auto q = bsvd::testing::accuracy<T, R_t<T>>(
          dm.m, dm.n, s.A[b].data(), s.lda[b], s.S[b].data(), s.U[b].data(), s.ldu[b],
          s.V[b].data(), s.ldv[b], sel[b]->ref.data());
      EXPECT_TRUE(q.pass()) << ratio_text(q);
    }
    std::printf("[convergence %c] data/matrices, %s: %zu matrices, %d not converged, max sweeps "
                "%d\n",
                prec<T>(), r.name, sel.size(), bad, worst);
  }
}

} // namespace
