// Host-resident batches larger than two chunks (backend.cu, "host-resident
// data in chunks"): streamed through the GPU chunk by chunk, each chunk a
// call of its own. The results are the device-data call's to rounding (a
// chunk plans for its own count, so its route may differ from the whole
// batch's), pass T1-T4, and keep info and path per matrix.
#include "gpu_test_util.hpp"

#include "core/overrides.hpp"

#include <cmath>

namespace {

// Matrices of a chunked call worth checking: the ends of the batch and a
// matrix in each ~64 MB chunk.
std::vector<int> sample(int batch, int per_chunk) {
  std::vector<int> s{0, batch - 1};
  for (int b = per_chunk - 1; b < batch; b += per_chunk) s.push_back(b);
  for (int b = per_chunk; b < batch; b += per_chunk) s.push_back(b);
  return s;
}

TEST(GpuHostStream, UniformBatchMatchesDeviceData) {
  SKIP_WITHOUT_GPU();
  using T = double;
  const int m = 16, n = 16, batch = 80000; // 164 MB of A: three chunks
  const auto A = family_batch<T>(Family::Random, m, n, batch, 4242);
  const auto h = gpu_solve<T>(m, n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0, BSVD_VARIANT_AUTO,
                              0, BSVD_EIG_SWEEPS_AUTO);
  ASSERT_EQ(h.status, 0) << bsvd_last_error();
  const auto d = gpu_solve_device<T>(m, n, batch, A);
  ASSERT_EQ(d.status, 0) << bsvd_last_error();
  const auto v = gpu_solve<T>(m, n, batch, A, false, BSVD_ORDERING_ROUND_ROBIN, 0,
                              BSVD_VARIANT_AUTO, 0, BSVD_EIG_SWEEPS_AUTO);
  ASSERT_EQ(v.status, 0) << bsvd_last_error();
  for (int b = 0; b < batch; ++b) {
    ASSERT_EQ(h.info[b], 0) << "matrix " << b;
    ASSERT_EQ(v.info[b], 0) << "matrix " << b;
    ASSERT_GE(h.path[b], 0) << "matrix " << b << ": no path reported";
    ASSERT_GT(h.sweeps[b], 0) << "matrix " << b;
  }
  const double u = uroff<T>();
  for (size_t i = 0; i < h.S.size(); ++i) {
    const size_t b = i / size_t(h.k);
    const double s1 = d.S[b * h.k];
    ASSERT_LE(std::abs(h.S[i] - d.S[i]), 64 * m * u * s1) << "value " << i;
    ASSERT_LE(std::abs(v.S[i] - d.S[i]), 64 * m * u * s1) << "value " << i << " (values only)";
  }
  for (int b : sample(batch, int((size_t(64) << 20) / (m * n * sizeof(T))))) {
    const auto q = ratios(h, A, b);
    EXPECT_TRUE(q.pass()) << "matrix " << b << ": " << ratio_text(q);
  }
}

// Variable sizes with padded leading dimensions (the column-by-column
// packing), an empty matrix and one with a NaN among them, in chunks of
// 1 MiB: info and path as the call copied at once (BSVD_HOST_CHUNK = 0),
// values to rounding.
TEST(GpuHostStream, VariableSizesKeepInfoAndPath) {
  SKIP_WITHOUT_GPU();
  using T = std::complex<float>;
  std::vector<std::pair<int, int>> dims;
  for (int b = 0; b < 420; ++b) // ~18 MB of A
    dims.push_back(b % 3 == 0   ? std::pair{70, 60}
                   : b % 3 == 1 ? std::pair{40, 90}
                                : std::pair{90, 90});
  const int empty_b = 170, nan_b = 290;
  dims[empty_b] = {0, 7};
  const auto fill = [&](int b, int m, int n, T *A, int lda) {
    bsvd::testing::generate<T>(Family::Random, m, n, bsvd::testing::default_kappa<T>(), 500 + b, A,
                               lda);
    if (b == nan_b) A[5] = T(std::nanf(""));
  };
  bsvd::detail::Overrides o = bsvd::detail::current_overrides();
  o.host_chunk = 0;
  VSolved<T> once;
  {
    bsvd::detail::ScopedOverrides scope(o);
    once = vbatched_solve<T>(dims, 3, fill, plain_options());
  }
  o.host_chunk = 1 << 20;
  bsvd::detail::ScopedOverrides scope(o);
  const auto r = vbatched_solve<T>(dims, 3, fill, plain_options());
  ASSERT_EQ(once.status, 0) << bsvd_last_error();
  ASSERT_EQ(r.status, 0) << bsvd_last_error();
  EXPECT_EQ(r.info, once.info);
  EXPECT_EQ(r.path, once.path);
  EXPECT_EQ(r.info[nan_b], BSVD_INFO_NONFINITE);
  EXPECT_EQ(r.path[nan_b], BSVD_PATH_TRIVIAL);
  EXPECT_EQ(r.path[empty_b], BSVD_PATH_TRIVIAL);
  for (int b = 0; b < int(dims.size()); ++b) {
    SCOPED_TRACE(testing::Message() << "matrix " << b);
    if (b == nan_b) continue;
    ASSERT_EQ(r.info[b], 0);
    ASSERT_GE(r.path[b], 0);
    for (size_t j = 0; j + 1 < r.S[b].size() && b != empty_b; ++j)
      ASSERT_LE(std::abs(r.S[b][j] - once.S[b][j]), 64 * 90 * uroff<T>() * once.S[b][0]);
  }
  for (int b : {0, 1, 2, 100, 101, 169, 171, 289, 291, 419}) {
    const auto q = r.ratios(b);
    EXPECT_TRUE(q.pass()) << "matrix " << b << ": " << ratio_text(q);
  }
}

// A strided batch with a padded lda (packed column by column), with and
// without vectors, in chunks of 64 KiB: the values of the call copied at
// once to rounding, T1-T4 on both ends.
TEST(GpuHostStream, PaddedStridedBatch) {
  SKIP_WITHOUT_GPU();
  using T = float;
  const int m = 30, n = 20, lda = 33, batch = 500, k = n;
  std::vector<T> A(size_t(lda) * n * batch, T(0)), packed(size_t(m) * n * batch);
  for (int b = 0; b < batch; ++b)
    bsvd::testing::generate<T>(Family::Random, m, n, bsvd::testing::default_kappa<T>(), 700 + b,
                               A.data() + size_t(b) * lda * n, lda);
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i)
        packed[(size_t(b) * n + j) * m + i] = A[(size_t(b) * n + j) * lda + i];
  auto solve = [&](long chunk, bool vectors) {
    bsvd::detail::Overrides o = bsvd::detail::current_overrides();
    o.host_chunk = chunk;
    bsvd::detail::ScopedOverrides scope(o);
    Solved<T> r;
    r.m = m;
    r.n = n;
    r.k = k;
    r.batch = batch;
    r.S.assign(size_t(batch) * k, -7.f);
    if (vectors) {
      r.U.assign(size_t(batch) * m * k, -3.f);
      r.V.assign(size_t(batch) * n * k, -3.f);
    }
    r.info.assign(batch, 99);
    r.sweeps.assign(batch, -1);
    r.path.assign(batch, -1);
    bsvd_options_t opt = plain_options();
    opt.path = r.path.data();
    r.status = bsvd::gesvj_strided_batched<T>(vectors ? bsvd::Job::Vectors : bsvd::Job::Values, m,
                                              n, A.data(), lda, int64_t(lda) * n, r.S.data(), k,
                                              vectors ? r.U.data() : nullptr, m, int64_t(m) * k,
                                              vectors ? r.V.data() : nullptr, n, int64_t(n) * k,
                                              r.info.data(), r.sweeps.data(), batch, opt);
    return r;
  };
  for (bool vectors : {true, false}) {
    SCOPED_TRACE(vectors ? "vectors" : "values");
    const auto once = solve(0, vectors);
    const auto r = solve(64 << 10, vectors);
    ASSERT_EQ(once.status, 0) << bsvd_last_error();
    ASSERT_EQ(r.status, 0) << bsvd_last_error();
    EXPECT_EQ(r.info, once.info);
    EXPECT_EQ(r.path, once.path);
    for (size_t i = 0; i < r.S.size(); ++i)
      ASSERT_LE(std::abs(r.S[i] - once.S[i]), 64 * m * uroff<T>() * once.S[i / k * k]) << i;
    if (vectors)
      for (int b : {0, batch / 2, batch - 1}) {
        const auto q = ratios(r, packed, b);
        EXPECT_TRUE(q.pass()) << "matrix " << b << ": " << ratio_text(q);
      }
  }
}

} // namespace
