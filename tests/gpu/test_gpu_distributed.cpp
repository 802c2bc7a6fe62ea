// One large matrix across GPUs (core/distributed.hpp, src/cuda/distributed.cu):
// the GPU engine on a list of devices that may repeat one (so one GPU runs
// it too), checked by T1-T4; its bits do not depend on which devices hold
// the blocks; through the public API (device_count) on two or more GPUs.
#include "gpu_test_util.hpp"

#include "core/overrides.hpp"
#include "testing/lapack_ref.hpp"

#include <cmath>

namespace {

namespace dist = bsvd::detail::dist;

template <class T> struct One {
  std::vector<R_t<T>> S;
  std::vector<T> U, V;
  int info = 99, sweeps = -1, path = -1;
  bsvd_status_t status = -99;
};

template <class T> One<T> solve_on(const std::vector<int> &devs, int m, int n,
                                   const std::vector<T> &A, bool vectors, int pair_cols,
                                   int inner) {
  One<T> r;
  const int k = std::min(m, n);
  r.S.assign(size_t(k), R_t<T>(-7));
  if (vectors) {
    r.U.assign(size_t(m) * k, T(-3));
    r.V.assign(size_t(n) * k, T(-3));
  }
  const auto b =
      bsvd::detail::strided_batch<T>(vectors ? BSVD_JOB_VECTORS : BSVD_JOB_VALUES, m, n, A.data(),
                                     m, 0, r.S.data(), 0, vectors ? r.U.data() : nullptr, m, 0,
                                     vectors ? r.V.data() : nullptr, n, 0, &r.info, &r.sweeps, 1);
  dist::Settings s;
  s.devices = int(devs.size());
  s.pair_cols = pair_cols;
  s.inner_sweeps = inner;
  bsvd::detail::Config cfg;
  r.status = bsvd::detail::cuda_gesvj_distributed(devs, b, cfg, s, &r.path);
  return r;
}

// Two "devices" on GPU 0, or GPUs 0 and 1 when there are two.
std::vector<int> two_devices() {
  int count = 0;
  cudaGetDeviceCount(&count);
  return count >= 2 ? std::vector<int>{0, 1} : std::vector<int>{0, 0};
}

template <class T>
void check(Family f, int m, int n, const std::vector<int> &devs, int pc, int inner) {
  const auto A = family_batch<T>(f, m, n, 1, 4242 + m + n);
  std::vector<double> ref(size_t(std::min(m, n)));
  ASSERT_EQ(bsvd::testing::reference_singular_values(m, n, A.data(), m, ref.data()), 0);
  for (bool vectors : {true, false}) {
    const One<T> r = solve_on<T>(devs, m, n, A, vectors, pc, inner);
    ASSERT_EQ(r.status, 0) << bsvd_last_error();
    EXPECT_EQ(r.info, 0) << bsvd::testing::family_name(f);
    EXPECT_EQ(r.path, BSVD_PATH_CUDA_DEVICES);
    const auto q =
        bsvd::testing::accuracy(m, n, A.data(), m, r.S.data(), vectors ? r.U.data() : nullptr, m,
                                vectors ? r.V.data() : nullptr, n, ref.data());
    EXPECT_TRUE(q.pass()) << prec<T>() << " " << bsvd::testing::family_name(f) << " " << m << "x"
                          << n << " on " << devs.size() << " devices, pw " << pc << ", vectors "
                          << vectors << ": " << ratio_text(q);
  }
}

TEST(GpuDistributed, FamiliesOnTwoDevices) {
  SKIP_WITHOUT_GPU();
  const auto devs = two_devices();
  for (Family f : bsvd::testing::all_families()) {
    check<double>(f, 300, 256, devs, 64, 1);
    check<float>(f, 256, 200, devs, 50, 1);
  }
  check<std::complex<double>>(Family::Logrand, 200, 160, devs, 40, 1);
  check<std::complex<float>>(Family::Random, 160, 200, devs, 40, 0); // wide, inner to convergence
}

// Four devices (repeated when fewer), n not a multiple of the blocks, the
// inner solve until converged.
TEST(GpuDistributed, FourDevicesAndPadding) {
  SKIP_WITHOUT_GPU();
  int count = 0;
  cudaGetDeviceCount(&count);
  std::vector<int> devs;
  for (int i = 0; i < 4; ++i) devs.push_back(i % count);
  check<double>(Family::Geo, 333, 301, devs, 36, 0);
  check<double>(Family::Cluster0, 333, 301, devs, 36, 1);
}

// The blocks' places, not the devices that hold them, set the bits: one
// GPU twice, or two GPUs, give the same S, U, V; so do two devices with
// two pairs each and four with one (the same layout of pairs).
TEST(GpuDistributed, BitsDoNotDependOnTheDevices) {
  SKIP_WITHOUT_GPU();
  const int m = 260, n = 256;
  const auto A = family_batch<double>(Family::Random, m, n, 1, 77);
  const One<double> a = solve_on<double>({0, 0}, m, n, A, true, 64, 1);
  const One<double> b = solve_on<double>(two_devices(), m, n, A, true, 64, 1);
  const One<double> c = solve_on<double>({0, 0, 0, 0}, m, n, A, true, 64, 1);
  ASSERT_EQ(a.status, 0) << bsvd_last_error();
  ASSERT_EQ(b.status, 0) << bsvd_last_error();
  ASSERT_EQ(c.status, 0) << bsvd_last_error();
  EXPECT_EQ(a.S, b.S);
  EXPECT_EQ(a.U, b.U);
  EXPECT_EQ(a.V, b.V);
  EXPECT_EQ(a.sweeps, b.sweeps);
  EXPECT_EQ(a.S, c.S);
  EXPECT_EQ(a.U, c.U);
  EXPECT_EQ(a.sweeps, c.sweeps);
}

// NaN and zero matrices get the one-device answers.
TEST(GpuDistributed, NonfiniteAndZero) {
  SKIP_WITHOUT_GPU();
  const int m = 100, n = 90;
  std::vector<double> Z(size_t(m) * n, 0.0);
  const One<double> z = solve_on<double>({0, 0}, m, n, Z, true, 32, 1);
  ASSERT_EQ(z.status, 0) << bsvd_last_error();
  EXPECT_EQ(z.info, 0);
  for (double s : z.S) EXPECT_EQ(s, 0.0);
  Z[17] = NAN;
  const One<double> x = solve_on<double>({0, 0}, m, n, Z, true, 32, 1);
  ASSERT_EQ(x.status, 0) << bsvd_last_error();
  EXPECT_EQ(x.info, BSVD_INFO_NONFINITE);
  EXPECT_EQ(x.path, BSVD_PATH_TRIVIAL);
}

// The public route: one matrix over two or more GPUs takes the distributed
// solve from DistTuning::min_cols (lowered here), T1-T4 hold; a batch of
// two is split as before.
TEST(GpuDistributed, PublicRouteOnSeveralGpus) {
  SKIP_WITHOUT_GPU();
  int count = 0;
  cudaGetDeviceCount(&count);
  if (count < 2) GTEST_SKIP() << "needs two or more GPUs (" << count << " visible)";
  bsvd::detail::Overrides ov = bsvd::detail::current_overrides();
  ov.dist_min_cols = 200;
  ov.dist_pair_cols = 64;
  bsvd::detail::ScopedOverrides scope(ov);
  const int m = 400, n = 300;
  const auto A = family_batch<double>(Family::Arith, m, n, 2, 5);
  bsvd_options_t o = plain_options();
  o.device_count = BSVD_DEVICES_ALL;
  const std::vector<double> A1(A.begin(), A.begin() + int64_t(m) * n);
  const auto one = gpu_solve_with<double>(m, n, 1, A1, true, o);
  ASSERT_EQ(one.status, 0) << bsvd_last_error();
  EXPECT_EQ(one.path[0], BSVD_PATH_CUDA_DEVICES);
  EXPECT_EQ(one.info[0], 0);
  const auto q = ratios(one, A1, 0);
  EXPECT_TRUE(q.pass()) << ratio_text(q);
  const auto both = gpu_solve_with<double>(m, n, 2, A, true, o);
  ASSERT_EQ(both.status, 0) << bsvd_last_error();
  EXPECT_NE(both.path[0], BSVD_PATH_CUDA_DEVICES);
}

} // namespace
