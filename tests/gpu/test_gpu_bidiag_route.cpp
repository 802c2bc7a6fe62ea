// The values-only bidiagonal route (Route::kBidiag, path cuda-bidiag;
// decision 0023), forced by BSVD_BIDIAG=1 while the tables keep it off:
// every family and shape it takes against its CPU twin (the device API's
// gebd2 -- or, beyond shared memory, gebrd_blocked with the GPU's panel
// count -- then bdsv, run here on the host) and against LAPACK's singular
// values (T3, T4); host and device data, uniform and variable-size calls;
// a matrix with NaN gets its own info and spoils nothing else.
#include "gpu_test_util.hpp"
#include "plan/bidiag.hpp"

#include <bsvd/device/bdsv.cuh>
#include <bsvd/device/labrd.cuh>

#include <cmath>
#include <cstring>
#include <limits>

namespace {

template <class T> class GpuBidiagRoute : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(GpuBidiagRoute, Types);

template <class T> struct dev_type { using type = T; };
template <class R> struct dev_type<std::complex<R>> { using type = bsvd::device::complex<R>; };

// The GPU's panel count for an m x n matrix (0: on chip from the start).
template <class T> int panels(int m, int n) {
  using namespace bsvd::detail;
  return plan::gebrd_panels(m, n, plan::kGebrdBlock, sizeof(T), 0, size_t(cuda::max_smem_optin()));
}

// The twin: the GPU's reduction (gebd2 on chip, or gebrd_blocked with the
// GPU's panels) then bdsv on one matrix (ld m), descending values.
template <class T> std::vector<R_t<T>> twin_values(int m, int n, const T *A) {
  using W = typename dev_type<T>::type;
  const int k = std::min(m, n), mx = std::max(m, n), nb = bsvd::detail::plan::kGebrdBlock;
  std::vector<W> a(size_t(m) * n), work(static_cast<size_t>(mx)), tq(static_cast<size_t>(k)),
      tp(static_cast<size_t>(k)), X(size_t(m) * nb), Y(size_t(n) * nb);
  std::memcpy(static_cast<void *>(a.data()), A, a.size() * sizeof(T));
  std::vector<R_t<T>> d(static_cast<size_t>(k)), e(static_cast<size_t>(std::max(k, 1))),
      S(static_cast<size_t>(k)), b(2 * static_cast<size_t>(k));
  EXPECT_EQ(bsvd::device::gebrd_blocked(m, n, a.data(), m, d.data(), e.data(), tq.data(), tp.data(),
                                        nb, panels<T>(m, n), X.data(), m, Y.data(), n, work.data()),
            0);
  bsvd::device::bdsv(k, d.data(), e.data(), S.data(), b.data());
  return S;
}

// Whether the route takes an m x n matrix (on chip or by panels).
template <class T> bool reaches(int m, int n) { return panels<T>(m, n) >= 0; }

// |S - S_twin| within 8 k u S_1 (not bit for bit: nvcc contracts to FMA).
template <class T> void expect_near_twin(int m, int n, const T *A, const R_t<T> *S) {
  const int k = std::min(m, n);
  const auto tw = twin_values<T>(m, n, A);
  const double tol = 8.0 * k * uroff<T>() * std::max(double(tw[0]), 1e-300);
  for (int j = 0; j < k; ++j) EXPECT_NEAR(double(S[j]), double(tw[size_t(j)]), tol) << j;
}

TYPED_TEST(GpuBidiagRoute, EveryFamilyAndShapeMatchesTheTwin) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  ScopedOverride on("BSVD_BIDIAG");
  on.set("1");
  const int batch = 7;
  for (auto [m, n] : std::vector<std::pair<int, int>>{{1, 1},
                                                      {2, 1},
                                                      {5, 3},
                                                      {3, 5},
                                                      {32, 32},
                                                      {64, 48},
                                                      {48, 64},
                                                      {100, 100},
                                                      {128, 128},
                                                      {192, 192},
                                                      {300, 140},
                                                      {140, 300}})
    for (Family f : bsvd::testing::all_families()) {
      SCOPED_TRACE(testing::Message() << m << "x" << n << " family " << int(f));
      const auto A = family_batch<T>(f, m, n, batch, 40 + m + 3 * n + int(f));
      bsvd_options_t o = cuda_options();
      const auto r = gpu_solve_with<T>(m, n, batch, A, false, o);
      ASSERT_EQ(r.status, 0) << bsvd_last_error();
      const bool taken = reaches<T>(m, n);
      for (int b = 0; b < batch; ++b) {
        EXPECT_EQ(r.path[b] == BSVD_PATH_CUDA_BIDIAG, taken) << b << " path " << r.path[b];
        EXPECT_EQ(r.info[b], 0) << b;
        const auto q = ratios(r, A, b);
        EXPECT_TRUE(q.pass()) << b << " " << ratio_text(q);
        if (!taken) continue;
        EXPECT_EQ(r.sweeps[b], 0) << b;
        expect_near_twin<T>(m, n, A.data() + size_t(b) * m * n, r.S.data() + size_t(b) * r.k);
      }
    }
}

// The sm_90 table takes the route by default for s and d at 64^2 (decision
// 0023), not for c and z; the settings that promise more than T1-T4 never
// take it.
TYPED_TEST(GpuBidiagRoute, ByTheTableAndNotWhereAskedForMore) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  const int m = 64, n = 64, batch = 4;
  const auto A = family_batch<T>(Family::Random, m, n, batch, 77);
  const auto r = gpu_solve_with<T>(m, n, batch, A, false, cuda_options());
  ASSERT_EQ(r.status, 0) << bsvd_last_error();
  const bool tabled = std::is_same_v<T, R_t<T>> && bsvd::detail::cuda::cc_major() == 9;
  for (int b = 0; b < batch; ++b) EXPECT_EQ(r.path[b] == BSVD_PATH_CUDA_BIDIAG, tabled) << b;
  ScopedOverride on("BSVD_BIDIAG");
  on.set("1");
  const auto plain = gpu_solve_with<T>(m, n, batch, A, false, plain_options());
  ASSERT_EQ(plain.status, 0) << bsvd_last_error();
  for (int b = 0; b < batch; ++b) EXPECT_NE(plain.path[b], BSVD_PATH_CUDA_BIDIAG);
  const auto vec = gpu_solve_with<T>(m, n, batch, A, true, cuda_options());
  ASSERT_EQ(vec.status, 0) << bsvd_last_error();
  for (int b = 0; b < batch; ++b) EXPECT_NE(vec.path[b], BSVD_PATH_CUDA_BIDIAG);
}

// A NaN in matrix 2 gives it info -1 and NaN values; the others are as
// without it (the same bits: each matrix is one block's own work).
TYPED_TEST(GpuBidiagRoute, NonFiniteMatrixSpoilsNothingElse) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  ScopedOverride on("BSVD_BIDIAG");
  on.set("1");
  const int m = 40, n = 24, batch = 5;
  auto A = family_batch<T>(Family::Geo, m, n, batch, 91);
  const auto clean = gpu_solve_with<T>(m, n, batch, A, false, cuda_options());
  A[size_t(2) * m * n + 17] = T(std::numeric_limits<R_t<T>>::quiet_NaN());
  const auto r = gpu_solve_with<T>(m, n, batch, A, false, cuda_options());
  ASSERT_EQ(r.status, 0) << bsvd_last_error();
  for (int b = 0; b < batch; ++b) {
    if (b == 2) {
      EXPECT_EQ(r.info[b], BSVD_INFO_NONFINITE);
      EXPECT_EQ(r.path[b], BSVD_PATH_TRIVIAL);
      for (int j = 0; j < r.k; ++j) EXPECT_TRUE(std::isnan(double(r.S[size_t(b) * r.k + j])));
      continue;
    }
    EXPECT_EQ(r.info[b], 0);
    EXPECT_EQ(r.path[b], BSVD_PATH_CUDA_BIDIAG);
    for (int j = 0; j < r.k; ++j)
      EXPECT_EQ(r.S[size_t(b) * r.k + j], clean.S[size_t(b) * r.k + j]) << b << " " << j;
  }
}

// Device data (strided), and a variable-size host call with a matrix beyond
// shared memory (the whole group then takes the blocked launches, the small
// matrices with no panel) and an empty one: each passes T1-T4.
TYPED_TEST(GpuBidiagRoute, DeviceDataAndVariableSizes) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  using R = R_t<T>;
  ScopedOverride on("BSVD_BIDIAG");
  on.set("1");
  const int m = 50, n = 50, batch = 9;
  const auto A = family_batch<T>(Family::Logrand, m, n, batch, 123);
  const auto host = gpu_solve_with<T>(m, n, batch, A, false, cuda_options());
  ASSERT_EQ(host.status, 0) << bsvd_last_error();
  T *dA = nullptr;
  R *dS = nullptr;
  int *dinfo = nullptr;
  ASSERT_EQ(cudaMalloc(&dA, A.size() * sizeof(T)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dS, size_t(batch) * n * sizeof(R)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dinfo, batch * sizeof(int)), cudaSuccess);
  cudaMemcpy(dA, A.data(), A.size() * sizeof(T), cudaMemcpyHostToDevice);
  std::vector<int> path(batch, -1);
  bsvd_options_t o = cuda_options();
  o.path = path.data();
  const bsvd_status_t st =
      bsvd::gesvj_strided_batched<T>(bsvd::Job::Values, m, n, dA, m, int64_t(m) * n, dS, n, nullptr,
                                     m, 0, nullptr, n, 0, dinfo, nullptr, batch, o);
  ASSERT_EQ(st, 0) << bsvd_last_error();
  std::vector<R> S(size_t(batch) * n);
  std::vector<int> info(batch);
  cudaMemcpy(S.data(), dS, S.size() * sizeof(R), cudaMemcpyDeviceToHost);
  cudaMemcpy(info.data(), dinfo, batch * sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(dA);
  cudaFree(dS);
  cudaFree(dinfo);
  EXPECT_EQ(S, host.S);
  for (int b = 0; b < batch; ++b) {
    EXPECT_EQ(info[b], 0);
    EXPECT_EQ(path[b], BSVD_PATH_CUDA_BIDIAG);
  }

  // Variable sizes: 30 x 20, 400 x 300 (beyond shared memory), 0 x 4, 20 x 30.
  const std::vector<std::pair<int, int>> dims{{30, 20}, {400, 300}, {0, 4}, {20, 30}};
  const int nb = int(dims.size());
  std::vector<std::vector<T>> As(nb);
  std::vector<std::vector<R>> Ss(nb);
  std::vector<int> mv, nv, lda, vinfo(nb, 99), vpath(nb, -1);
  std::vector<const T *> pA;
  std::vector<R *> pS;
  for (int b = 0; b < nb; ++b) {
    const auto [mb, nbb] = dims[b];
    mv.push_back(mb);
    nv.push_back(nbb);
    lda.push_back(std::max(mb, 1) + 3);
    As[b] = family_batch<T>(Family::Random, std::max(mb, 1) + 3, std::max(nbb, 1), 1, 300 + b);
    Ss[b].assign(std::max(std::min(mb, nbb), 1), R(-1));
    pA.push_back(As[b].data());
    pS.push_back(Ss[b].data());
  }
  bsvd_options_t ov = cuda_options();
  ov.path = vpath.data();
  const bsvd_status_t vst = bsvd::gesvj_vbatched<T>(
      bsvd::Job::Values, mv.data(), nv.data(), pA.data(), lda.data(), pS.data(), nullptr, nullptr,
      nullptr, nullptr, vinfo.data(), nullptr, nb, ov);
  ASSERT_EQ(vst, 0) << bsvd_last_error();
  for (int b = 0; b < nb; ++b) {
    const auto [mb, nbb] = dims[b];
    SCOPED_TRACE(testing::Message() << mb << "x" << nbb);
    EXPECT_EQ(vinfo[b], 0);
    if (mb == 0) continue;
    EXPECT_EQ(vpath[b] == BSVD_PATH_CUDA_BIDIAG, reaches<T>(mb, nbb));
    std::vector<double> ref(size_t(std::min(mb, nbb)));
    ASSERT_EQ(
        bsvd::testing::reference_singular_values<T>(mb, nbb, As[b].data(), lda[b], ref.data()), 0);
    const auto q = bsvd::testing::accuracy<T, R>(mb, nbb, As[b].data(), lda[b], Ss[b].data(),
                                                 nullptr, 1, nullptr, 1, ref.data());
    EXPECT_TRUE(q.pass()) << ratio_text(q);
  }
}

} // namespace
