// A host batch over several GPUs (opts->device_count): each device solves a
// range as a call of its own, so the results have the bits of one device
// wherever the ranges plan as the whole batch does. Skips below two GPUs.
#include "gpu_test_util.hpp"

#include <cmath>

namespace {

#define SKIP_BELOW_TWO_GPUS()                                                                      \
  do {                                                                                             \
    SKIP_WITHOUT_GPU();                                                                            \
    int count_ = 0;                                                                                \
    cudaGetDeviceCount(&count_);                                                                   \
    if (count_ < 2) GTEST_SKIP() << "needs two or more GPUs (" << count_ << " visible)";           \
  } while (0)

// d 64^2: the fused kernel's plan does not depend on the count here (the
// lanes table gives 8 for 64 rows at any batch), so every device's range
// gives the bits of the whole batch on one device.
TEST(GpuDevices, SplitGivesTheBitsOfOneDevice) {
  SKIP_BELOW_TWO_GPUS();
  using T = double;
  const int m = 64, n = 64, batch = 6000;
  const auto A = family_batch<T>(Family::Random, m, n, batch, 61);
  const auto one = gpu_solve_with<T>(m, n, batch, A, true, plain_options());
  bsvd_options_t o = plain_options();
  o.device_count = BSVD_DEVICES_ALL;
  const auto all = gpu_solve_with<T>(m, n, batch, A, true, o);
  ASSERT_EQ(one.status, 0) << bsvd_last_error();
  ASSERT_EQ(all.status, 0) << bsvd_last_error();
  expect_same_bits(all, one);
  EXPECT_EQ(all.info, one.info);
  EXPECT_EQ(all.path, one.path);
  for (int b : {0, batch / 2 - 1, batch / 2, batch - 1}) {
    const auto q = ratios(all, A, b);
    EXPECT_TRUE(q.pass()) << "matrix " << b << ": " << ratio_text(q);
  }
}

// Variable sizes over the devices in reverse order, a NaN matrix among them:
// info and path as on one device, T1-T4 on a sample; then the refusals.
TEST(GpuDevices, VariableSizesAndRefusals) {
  SKIP_BELOW_TWO_GPUS();
  using T = std::complex<double>;
  std::vector<std::pair<int, int>> dims;
  for (int b = 0; b < 300; ++b) dims.push_back({20 + (b * 7) % 150, 10 + (b * 13) % 140});
  const int nan_b = 151;
  const auto fill = [&](int b, int m, int n, T *A, int lda) {
    bsvd::testing::generate<T>(Family::Random, m, n, bsvd::testing::default_kappa<T>(), 900 + b, A,
                               lda);
    if (b == nan_b) A[3] = T(NAN);
  };
  const auto one = vbatched_solve<T>(dims, 2, fill, plain_options());
  bsvd_options_t o = plain_options();
  const int devices[] = {1, 0};
  o.device_count = 2;
  o.devices = devices;
  const auto two = vbatched_solve<T>(dims, 2, fill, o);
  ASSERT_EQ(one.status, 0) << bsvd_last_error();
  ASSERT_EQ(two.status, 0) << bsvd_last_error();
  EXPECT_EQ(two.info, one.info);
  EXPECT_EQ(two.path, one.path);
  EXPECT_EQ(two.info[nan_b], BSVD_INFO_NONFINITE);
  for (int b : {0, 1, 149, 150, 152, 299}) {
    const auto q = two.ratios(b);
    EXPECT_TRUE(q.pass()) << "matrix " << b << ": " << ratio_text(q);
  }
  // A device that is not there, and a workspace, are refused by position.
  int visible = 0;
  cudaGetDeviceCount(&visible);
  const int missing[] = {0, visible};
  o.devices = missing;
  EXPECT_EQ(vbatched_solve<T>(dims, 2, fill, o).status, -14);
  EXPECT_NE(std::string(bsvd_last_error()).find("not a visible CUDA device"), std::string::npos);
  o.devices = devices;
  void *ws = nullptr;
  ASSERT_EQ(cudaMalloc(&ws, 1 << 20), cudaSuccess);
  o.workspace = ws;
  o.workspace_bytes = 1 << 20;
  EXPECT_EQ(vbatched_solve<T>(dims, 2, fill, o).status, -14);
  cudaFree(ws);
}

// Device data stays on its device whatever device_count says: the values
// of the host call on one device.
TEST(GpuDevices, DeviceDataIsSolvedWhereItLives) {
  SKIP_BELOW_TWO_GPUS();
  using T = float;
  const int m = 40, n = 30, batch = 200, k = n;
  const auto A = family_batch<T>(Family::Random, m, n, batch, 77);
  const auto host = gpu_solve<T>(m, n, batch, A, false, BSVD_ORDERING_ROUND_ROBIN, 0,
                                 BSVD_VARIANT_AUTO, 0, BSVD_EIG_SWEEPS_AUTO, 0, BSVD_PAIR_AUTO, -1);
  ASSERT_EQ(host.status, 0) << bsvd_last_error();
  T *dA = nullptr, *dS = nullptr;
  int *dinfo = nullptr;
  ASSERT_EQ(cudaMalloc(&dA, A.size() * sizeof(T)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dS, size_t(batch) * k * sizeof(T)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dinfo, batch * sizeof(int)), cudaSuccess);
  cudaMemcpy(dA, A.data(), A.size() * sizeof(T), cudaMemcpyHostToDevice);
  bsvd_options_t o = plain_options();
  o.device_count = BSVD_DEVICES_ALL;
  ASSERT_EQ(bsvd_sgesvj_strided_batched(BSVD_JOB_VALUES, m, n, dA, m, int64_t(m) * n, dS, k,
                                        nullptr, 1, 0, nullptr, 1, 0, dinfo, nullptr, batch, &o),
            0)
      << bsvd_last_error();
  std::vector<T> S(size_t(batch) * k);
  std::vector<int> info(batch);
  cudaMemcpy(S.data(), dS, S.size() * sizeof(T), cudaMemcpyDeviceToHost);
  cudaMemcpy(info.data(), dinfo, info.size() * sizeof(int), cudaMemcpyDeviceToHost);
  EXPECT_EQ(S, host.S);
  EXPECT_EQ(info, host.info);
  cudaFree(dA);
  cudaFree(dS);
  cudaFree(dinfo);
}

} // namespace
