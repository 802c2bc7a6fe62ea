// Convergence of the stopping rule (include/bsvd/device/threshold.cuh):
// no matrix may end at the sweep cap (info = 1) because the threshold lies
// below the rounding noise of a computed inner product, or because a
// column's squared norm underflowed. On the cpu backend's Jacobi solvers,
// the GPU kernels' twins:
//   - 10^6 random d matrices of each of 2 x 2, 3 x 3 and 4 x 4 (the batches
//     of `bsvd gen --family random --seed 7`: with the previous default
//     sqrt(m) u, 1222, 226 and 47 of them ran to the cap), and 10^5 of each
//     (and of 3 x 2 and 2 x 4) in s, c and z;
//   - the SuiteSparse matrices of data/matrices up to 128 rows and columns
//     (82 of the 141), in d, on every CPU route: unblocked, blocked, QR with
//     column pivoting first (both variants) and the Gram preconditioning.
//     The whole set on every route takes minutes: tests/cli/converge_mtx.sh.
// All values only (the iteration does not depend on whether V is formed).
#include <bsvd/svd.hpp>

#include "testing/generate.hpp"
#include "testing/io.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <string>
#include <utility>
#include <vector>

namespace {

using bsvd::testing::Family;

struct Tally {
  long count = 0, not_converged = 0;
  int worst = 0; // sweeps
  double total = 0;
  std::string first_bad;
};

// `count` random m x n matrices of `bsvd gen --family random --seed seed`
// (matrix b from seed * 1000003 + b), solved in chunks.
template <class T> Tally random_batch(int m, int n, long count, uint64_t seed) {
  using R = bsvd::real_t<T>;
  constexpr long kChunk = 100000;
  const int k = std::min(m, n);
  bsvd_options_t o = bsvd::default_options();
  o.backend = BSVD_BACKEND_CPU;
  o.variant = BSVD_VARIANT_UNBLOCKED;
  std::vector<T> A(size_t(kChunk) * m * n);
  std::vector<R> S(size_t(kChunk) * k);
  std::vector<int> info(kChunk), sweeps(kChunk);
  Tally t;
  for (long b0 = 0; b0 < count; b0 += kChunk) {
    const int cnt = int(std::min(kChunk, count - b0));
    for (int b = 0; b < cnt; ++b)
      bsvd::testing::generate<T>(Family::Random, m, n, bsvd::testing::default_kappa<T>(),
                                 seed * 1000003ull + uint64_t(b0 + b), A.data() + size_t(b) * m * n,
                                 m);
    const bsvd_status_t st = bsvd::gesvj_strided_batched<T>(
        bsvd::Job::Values, m, n, A.data(), m, int64_t(m) * n, S.data(), k, nullptr, 1, 0, nullptr,
        1, 0, info.data(), sweeps.data(), cnt, o);
    EXPECT_EQ(st, 0) << bsvd_last_error();
    if (st != 0) return t;
    for (int b = 0; b < cnt; ++b) {
      ++t.count;
      t.total += sweeps[b];
      t.worst = std::max(t.worst, sweeps[b]);
      if (info[b] != 0 && t.not_converged++ == 0) t.first_bad = std::to_string(b0 + b);
    }
  }
  return t;
}

template <class T> void expect_converged(int m, int n, long count, int max_sweeps) {
  SCOPED_TRACE(testing::Message() << m << " x " << n << ", " << count << " matrices");
  const Tally t = random_batch<T>(m, n, count, 7);
  EXPECT_EQ(t.count, count);
  EXPECT_EQ(t.not_converged, 0) << "first: matrix " << t.first_bad;
  EXPECT_LE(t.worst, max_sweeps);
  std::printf("[convergence] %dx%d: %ld matrices, %ld not converged, sweeps mean %.2f max %d\n", m,
              n, t.count, t.not_converged, t.total / std::max(1L, t.count), t.worst);
}

TEST(CpuConvergence, MillionRandomTinyDouble) {
  expect_converged<double>(2, 2, 1000000, 3);
  expect_converged<double>(3, 3, 1000000, 6);
  expect_converged<double>(4, 4, 1000000, 7);
}

template <class T> class CpuConvergenceTiny : public ::testing::Test {};
using OtherTypes = ::testing::Types<float, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(CpuConvergenceTiny, OtherTypes);

TYPED_TEST(CpuConvergenceTiny, RandomTiny) {
  using T = TypeParam;
  expect_converged<T>(2, 2, 100000, 3);
  expect_converged<T>(3, 3, 100000, 6);
  expect_converged<T>(4, 4, 100000, 7);
  expect_converged<T>(3, 2, 100000, 4); // tall, and wide (solved as A^H)
  expect_converged<T>(2, 4, 100000, 4);
}

// The matrices of data/matrices up to kMaxDim in one variable-size call
// per route.
TEST(CpuConvergence, SuiteSparseEveryRoute) {
  constexpr int kMaxDim = 128;
  const auto files = bsvd::testing::list_matrix_market(bsvd::testing::default_matrix_dir());
  ASSERT_GE(files.size(), 141u);
  std::vector<bsvd::testing::DenseMatrix> mats;
  for (const auto &f : files) {
    bsvd::testing::DenseMatrix dm;
    std::string err;
    ASSERT_TRUE(bsvd::testing::read_matrix_market(f, dm, err)) << err;
    if (std::max(dm.m, dm.n) <= kMaxDim) mats.push_back(std::move(dm));
  }
  ASSERT_EQ(mats.size(), 82u);
  const int count = int(mats.size());
  std::vector<int> m(count), n(count), lda(count), ldu(count, 1), ldv(count, 1);
  std::vector<const double *> A(count);
  std::vector<std::vector<double>> S(count);
  std::vector<double *> Sp(count);
  std::vector<double *> none(count, nullptr);
  for (int i = 0; i < count; ++i) {
    m[i] = mats[i].m;
    n[i] = mats[i].n;
    lda[i] = std::max(1, m[i]);
    A[i] = mats[i].a.data();
    S[i].resize(std::max(1, std::min(m[i], n[i])));
    Sp[i] = S[i].data();
  }
  struct Route {
    const char *name;
    bsvd_variant_t variant;
    int precondition;
  };
  const Route routes[] = {{"unblocked", BSVD_VARIANT_UNBLOCKED, -1},
                          {"blocked", BSVD_VARIANT_BLOCKED, -1},
                          {"unblocked, qrcp", BSVD_VARIANT_UNBLOCKED, 1},
                          {"blocked, qrcp", BSVD_VARIANT_BLOCKED, 1},
                          {"gram", BSVD_VARIANT_UNBLOCKED, 2}};
  for (const Route &r : routes) {
    SCOPED_TRACE(r.name);
    bsvd_options_t o = bsvd::default_options();
    o.backend = BSVD_BACKEND_CPU;
    o.variant = r.variant;
    o.precondition = r.precondition;
    std::vector<int> info(count, 99), sweeps(count, -1);
    ASSERT_EQ(bsvd::gesvj_vbatched<double>(bsvd::Job::Values, m.data(), n.data(), A.data(),
                                           lda.data(), Sp.data(), none.data(), ldu.data(),
                                           none.data(), ldv.data(), info.data(), sweeps.data(),
                                           count, o),
              0)
        << bsvd_last_error();
    int worst = 0;
    for (int i = 0; i < count; ++i) {
      EXPECT_EQ(info[i], 0) << mats[i].name << " " << m[i] << "x" << n[i] << ", " << sweeps[i]
                            << " sweeps";
      worst = std::max(worst, sweeps[i]);
    }
    std::printf("[convergence] data/matrices, %s: max sweeps %d\n", r.name, worst);
  }
}

} // namespace
