// The public API: argument validation (status = -position, a message naming
// the argument), trivial batches, the three batch forms agreeing, per-matrix
// path reporting, workspace handling and backend selection.
#include <bsvd/bsvd.h>
#include <bsvd/svd.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstddef>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

std::vector<double> random_matrix(int m, int n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<double> a(size_t(m) * n);
  for (auto &x : a) x = d(g);
  return a;
}

bsvd_options_t cpu_opts() {
  bsvd_options_t o;
  bsvd_options_init(&o);
  o.backend = BSVD_BACKEND_CPU;
  return o;
}

struct Call {
  int m = 5, n = 4, lda = 5, ldu = 5, ldv = 4, batch = 3;
  std::vector<double> A = random_matrix(5, 4 * 3, 1), S = std::vector<double>(12),
                      U = std::vector<double>(60), V = std::vector<double>(48);
  std::vector<int> info = std::vector<int>(3, 7), sweeps = std::vector<int>(3);
  bsvd_options_t o = cpu_opts();
  bsvd_job_t job = BSVD_JOB_VECTORS;
  int64_t strideA = 0; // 0: lda * n
  bsvd_status_t run() {
    return bsvd_dgesvj_strided_batched(
        job, m, n, A.data(), lda, strideA ? strideA : int64_t(lda) * n, S.data(), std::min(m, n),
        U.data(), ldu, int64_t(ldu) * std::min(m, n), V.data(), ldv, int64_t(ldv) * std::min(m, n),
        info.data(), sweeps.data(), batch, &o);
  }
};

TEST(Api, ValidCallSucceeds) {
  Call c;
  ASSERT_EQ(c.run(), 0) << bsvd_last_error();
  for (int i : c.info) EXPECT_EQ(i, 0);
  EXPECT_STREQ(bsvd_last_error(), "");
}

TEST(Api, BadArgumentsNameThemselves) {
  struct Case {
    const char *name;
    int expect;
    void (*mutate)(Call &);
  } cases[] = {
      {"job", -1, [](Call &c) { c.job = bsvd_job_t(7); }},
      {"m", -2, [](Call &c) { c.m = -1; }},
      {"n", -3, [](Call &c) { c.n = -2; }},
      {"A", -4,
       [](Call &c) {
         c.A.clear();
         c.A.shrink_to_fit();
       }},
      {"lda", -5, [](Call &c) { c.lda = 4; }},
      {"strideA", -6, [](Call &c) { c.strideA = 7; }},
      {"ldu", -10, [](Call &c) { c.ldu = 2; }},
      {"ldv", -13, [](Call &c) { c.ldv = 3; }},
      {"info", -15,
       [](Call &c) {
         c.info.clear();
         c.info.shrink_to_fit();
       }},
      {"batch", -17, [](Call &c) { c.batch = -1; }},
      {"opts->tol", -18, [](Call &c) { c.o.tol = NAN; }},
      {"opts->backend", -18, [](Call &c) { c.o.backend = bsvd_backend_t(9); }},
      {"opts->max_sweeps", -18, [](Call &c) { c.o.max_sweeps = -3; }},
      {"opts->pair_solver", -18, [](Call &c) { c.o.pair_solver = bsvd_pair_solver_t(9); }},
      {"opts->precondition", -18, [](Call &c) { c.o.precondition = 3; }},
      {"opts->ordering", -18, [](Call &c) { c.o.ordering = bsvd_ordering_t(BSVD_ORDERING_COUNT); }},
      {"opts->variant", -18, [](Call &c) { c.o.variant = bsvd_variant_t(-1); }},
      {"opts->struct_size", -18, [](Call &c) { c.o.struct_size = 8; }},
  };
  for (const auto &k : cases) {
    Call c;
    k.mutate(c);
    const bsvd_status_t st = c.run();
    EXPECT_EQ(st, k.expect) << k.name << ": " << bsvd_last_error();
    EXPECT_NE(std::string(bsvd_last_error()).find(k.name), std::string::npos)
        << k.name << " not named in: " << bsvd_last_error();
    EXPECT_STREQ(bsvd_status_string(st), "invalid argument");
  }
}

TEST(Api, BadArgumentWritesNothing) {
  Call c;
  c.ldv = 1;
  c.S.assign(c.S.size(), -5.0);
  EXPECT_LT(c.run(), 0);
  for (double s : c.S) EXPECT_EQ(s, -5.0);
  for (int i : c.info) EXPECT_EQ(i, 7);
}

TEST(Api, ValuesOnlyIgnoresVectorArguments) {
  Call c;
  c.job = BSVD_JOB_VALUES;
  c.ldu = 0;
  c.ldv = 0;
  const bsvd_status_t st =
      bsvd_dgesvj_strided_batched(c.job, c.m, c.n, c.A.data(), c.lda, 20, c.S.data(), 4, nullptr, 0,
                                  0, nullptr, 0, 0, c.info.data(), nullptr, c.batch, &c.o);
  EXPECT_EQ(st, 0) << bsvd_last_error();
  Call v;
  ASSERT_EQ(v.run(), 0);
  for (size_t i = 0; i < c.S.size(); ++i) EXPECT_NEAR(c.S[i], v.S[i], 1e-14 * v.S[0]);
}

TEST(Api, EmptyBatchesAndZeroSizesReturnAtOnce) {
  bsvd_options_t o = cpu_opts();
  EXPECT_EQ(bsvd_dgesvj_strided_batched(BSVD_JOB_VECTORS, 3, 3, nullptr, 3, 9, nullptr, 3, nullptr,
                                        3, 9, nullptr, 3, 9, nullptr, nullptr, 0, &o),
            0);
  std::vector<int> info(4, 9), sweeps(4, 9);
  EXPECT_EQ(bsvd_dgesvj_strided_batched(BSVD_JOB_VECTORS, 0, 5, nullptr, 1, 0, nullptr, 0, nullptr,
                                        1, 0, nullptr, 5, 0, info.data(), sweeps.data(), 4, &o),
            0)
      << bsvd_last_error();
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(info[i], 0);
    EXPECT_EQ(sweeps[i], 0);
  }
}

TEST(Api, NullOptionsMeanDefaults) {
  Call c;
  const bsvd_status_t st = bsvd_dgesvj_strided_batched(
      c.job, c.m, c.n, c.A.data(), c.lda, 20, c.S.data(), 4, c.U.data(), c.ldu, 20, c.V.data(),
      c.ldv, 16, c.info.data(), nullptr, c.batch, nullptr);
  EXPECT_EQ(st, 0) << bsvd_last_error();
}

TEST(Api, ThreeFormsAgree) {
  const int m = 9, n = 6, batch = 4, k = 6;
  auto A = random_matrix(m, n * batch, 3);
  bsvd_options_t o = cpu_opts();
  std::vector<double> S1(batch * k), S2(batch * k), S3(batch * k), U(batch * m * k),
      V(batch * n * k);
  std::vector<int> info(batch), path(batch, -1);
  o.path = path.data();
  ASSERT_EQ(bsvd_dgesvj_strided_batched(BSVD_JOB_VECTORS, m, n, A.data(), m, m * n, S1.data(), k,
                                        U.data(), m, m * k, V.data(), n, n * k, info.data(),
                                        nullptr, batch, &o),
            0);
  for (int p : path) EXPECT_EQ(p, BSVD_PATH_CPU_UNBLOCKED);
  std::vector<const double *> pA(batch);
  std::vector<double *> pS(batch), pU(batch), pV(batch);
  for (int b = 0; b < batch; ++b) {
    pA[b] = A.data() + b * m * n;
    pS[b] = S2.data() + b * k;
    pU[b] = U.data() + b * m * k;
    pV[b] = V.data() + b * n * k;
  }
  o.path = nullptr;
  ASSERT_EQ(bsvd_dgesvj_batched(BSVD_JOB_VECTORS, m, n, pA.data(), m, pS.data(), pU.data(), m,
                                pV.data(), n, info.data(), nullptr, batch, &o),
            0);
  std::vector<int> ms(batch, m), ns(batch, n), ldas(batch, m), ldus(batch, m), ldvs(batch, n);
  for (int b = 0; b < batch; ++b) pS[b] = S3.data() + b * k;
  ASSERT_EQ(bsvd_dgesvj_vbatched(BSVD_JOB_VECTORS, ms.data(), ns.data(), pA.data(), ldas.data(),
                                 pS.data(), pU.data(), ldus.data(), pV.data(), ldvs.data(),
                                 info.data(), nullptr, batch, &o),
            0);
  EXPECT_EQ(S1, S2);
  EXPECT_EQ(S1, S3);
}

TEST(Api, VariableSizesAndPerMatrixErrors) {
  std::vector<int> m = {3, 0, 7, 1, 12}, n = {5, 4, 2, 1, 12};
  const int batch = 5;
  std::vector<std::vector<double>> A(batch), S(batch), U(batch), V(batch);
  std::vector<const double *> pA(batch);
  std::vector<double *> pS(batch), pU(batch), pV(batch);
  std::vector<int> lda(batch), ldu(batch), ldv(batch), info(batch, 5), sweeps(batch);
  for (int b = 0; b < batch; ++b) {
    const int k = std::min(m[b], n[b]);
    A[b] = random_matrix(m[b], n[b], 10 + b);
    S[b].resize(k);
    U[b].resize(m[b] * k);
    V[b].resize(n[b] * k);
    pA[b] = A[b].data();
    pS[b] = S[b].data();
    pU[b] = U[b].data();
    pV[b] = V[b].data();
    lda[b] = ldu[b] = std::max(1, m[b]);
    ldv[b] = std::max(1, n[b]);
  }
  bsvd_options_t o = cpu_opts();
  ASSERT_EQ(bsvd_dgesvj_vbatched(BSVD_JOB_VECTORS, m.data(), n.data(), pA.data(), lda.data(),
                                 pS.data(), pU.data(), ldu.data(), pV.data(), ldv.data(),
                                 info.data(), sweeps.data(), batch, &o),
            0)
      << bsvd_last_error();
  for (int b = 0; b < batch; ++b) EXPECT_EQ(info[b], 0) << b;
  // A too-small leading dimension of one matrix names that matrix.
  lda[2] = 3;
  EXPECT_EQ(bsvd_dgesvj_vbatched(BSVD_JOB_VECTORS, m.data(), n.data(), pA.data(), lda.data(),
                                 pS.data(), pU.data(), ldu.data(), pV.data(), ldv.data(),
                                 info.data(), sweeps.data(), batch, &o),
            -5);
  EXPECT_NE(std::string(bsvd_last_error()).find("lda[2]"), std::string::npos) << bsvd_last_error();
  lda[2] = 7;
  m[4] = -1;
  EXPECT_EQ(bsvd_dgesvj_vbatched(BSVD_JOB_VECTORS, m.data(), n.data(), pA.data(), lda.data(),
                                 pS.data(), pU.data(), ldu.data(), pV.data(), ldv.data(),
                                 info.data(), sweeps.data(), batch, &o),
            -2);
  EXPECT_NE(std::string(bsvd_last_error()).find("m[4]"), std::string::npos) << bsvd_last_error();
  m[4] = 12;
  pA[3] = nullptr;
  EXPECT_EQ(bsvd_dgesvj_vbatched(BSVD_JOB_VECTORS, m.data(), n.data(), pA.data(), lda.data(),
                                 pS.data(), pU.data(), ldu.data(), pV.data(), ldv.data(),
                                 info.data(), sweeps.data(), batch, &o),
            -4);
}

TEST(Api, ComplexThroughTheCApi) {
  const int m = 6, n = 4, k = 4;
  std::mt19937 g(5);
  std::normal_distribution<double> d;
  std::vector<bsvd_cdouble> A(m * n);
  for (auto &x : A) x = {d(g), d(g)};
  std::vector<double> S(k);
  std::vector<bsvd_cdouble> U(m * k), V(n * k);
  int info = -7, sweeps = 0;
  bsvd_options_t o = cpu_opts();
  ASSERT_EQ(bsvd_zgesvj_strided_batched(BSVD_JOB_VECTORS, m, n, A.data(), m, m * n, S.data(), k,
                                        U.data(), m, m * k, V.data(), n, n * k, &info, &sweeps, 1,
                                        &o),
            0);
  EXPECT_EQ(info, 0);
  EXPECT_EQ(sweeps, 0); // the LAPACK path (complex: every size) runs no sweep
  // Reconstruct A(0,0) from the factors as a smoke check of the layout.
  std::complex<double> a00 = 0;
  for (int j = 0; j < k; ++j)
    a00 += std::complex<double>(U[j * m].re, U[j * m].im) * S[j] *
           std::conj(std::complex<double>(V[j * n].re, V[j * n].im));
  EXPECT_NEAR(a00.real(), A[0].re, 1e-12);
  EXPECT_NEAR(a00.imag(), A[0].im, 1e-12);
}

TEST(Api, WorkspaceQueryAndCallerWorkspace) {
  bsvd_options_t o = cpu_opts();
  o.num_threads = 2;
  size_t bytes = 0;
  ASSERT_EQ(bsvd_workspace_size('d', BSVD_JOB_VECTORS, 5, 4, 3, &o, &bytes), 0);
  EXPECT_GT(bytes, 0u);
  EXPECT_EQ(bsvd_workspace_size('q', BSVD_JOB_VECTORS, 5, 4, 3, &o, &bytes), -1);
  // Positions: precision, job, m, n, batch, opts, bytes.
  EXPECT_EQ(bsvd_workspace_size('d', bsvd_job_t(2), 5, 4, 3, &o, &bytes), -2);
  EXPECT_EQ(bsvd_workspace_size('d', BSVD_JOB_VECTORS, -5, 4, 3, &o, &bytes), -3);
  EXPECT_EQ(bsvd_workspace_size('d', BSVD_JOB_VECTORS, 5, 4, -3, &o, &bytes), -5);
  o.max_sweeps = -1;
  EXPECT_EQ(bsvd_workspace_size('d', BSVD_JOB_VECTORS, 5, 4, 3, &o, &bytes), -6);
  o.max_sweeps = 0;
  EXPECT_EQ(bsvd_workspace_size('d', BSVD_JOB_VECTORS, 5, 4, 3, &o, nullptr), -7);
  const int mv[2] = {5, 6}, nv[2] = {4, 4};
  EXPECT_EQ(bsvd_workspace_size_v('d', BSVD_JOB_VECTORS, mv, nv, 2, &o, nullptr), -7);
  EXPECT_EQ(bsvd_workspace_size_v('d', BSVD_JOB_VECTORS, mv, nv, 0, &o, nullptr), -7);
  EXPECT_EQ(bsvd_workspace_size_v('d', BSVD_JOB_VECTORS, nullptr, nv, 2, &o, &bytes), -3);
  EXPECT_NE(std::string(bsvd_last_error()).find("argument 3 (m)"), std::string::npos);
  Call c;
  c.o.num_threads = 2;
  std::vector<unsigned char> ws(bytes);
  c.o.workspace = ws.data();
  c.o.workspace_bytes = bytes;
  EXPECT_EQ(c.run(), 0) << bsvd_last_error();
  c.o.workspace_bytes = bytes / 2;
  EXPECT_EQ(c.run(), BSVD_STATUS_WORKSPACE_TOO_SMALL);
  c.o.workspace = nullptr;
  EXPECT_EQ(c.run(), -18); // bytes without a pointer
}

// ---- bsvd_options_t::struct_size --------------------------------------------

constexpr size_t kThisVersion = offsetof(bsvd_options_t, struct_size) + sizeof(size_t);

TEST(Api, OptionsInitSetsStructSize) {
  bsvd_options_t o;
  std::memset(&o, 0xab, sizeof o);
  bsvd_options_init(&o);
  EXPECT_EQ(o.struct_size, sizeof(bsvd_options_t));
  // The fields added after struct_size: device_count and devices.
  EXPECT_EQ(offsetof(bsvd_options_t, device_count), kThisVersion);
  EXPECT_EQ(o.device_count, 0);
  EXPECT_EQ(o.devices, nullptr);
}

// A caller built before device_count (struct_size ends before it) gets its
// default, whatever the bytes after its struct hold.
TEST(Api, OlderStructSizeGetsTheDeviceDefaults) {
  Call c;
  c.o.struct_size = kThisVersion;
  c.o.device_count = -7; // beyond the caller's struct: not read
  c.o.backend = BSVD_BACKEND_CPU;
  ASSERT_EQ(c.run(), 0) << bsvd_last_error();
  c.o.struct_size = sizeof(bsvd_options_t); // now read, and refused
  EXPECT_EQ(c.run(), -18);
  EXPECT_NE(std::string(bsvd_last_error()).find("opts->device_count"), std::string::npos);
}

TEST(Api, StructSizeOfThisVersionIsRead) {
  Call c;
  c.o.struct_size = kThisVersion;
  ASSERT_EQ(c.run(), 0) << bsvd_last_error();
  // Its fields are read: a bad one is still rejected.
  c.o.max_sweeps = -1;
  EXPECT_EQ(c.run(), -18);
  EXPECT_NE(std::string(bsvd_last_error()).find("opts->max_sweeps"), std::string::npos);
}

TEST(Api, StructSizeZeroReadsTheFieldsAsGiven) {
  // A caller that fills the struct itself (here: value-initialized, then
  // fields set), as before struct_size existed.
  Call c;
  bsvd_options_t o{};
  o.backend = BSVD_BACKEND_CPU;
  o.eig_sweeps = BSVD_EIG_SWEEPS_AUTO;
  ASSERT_EQ(o.struct_size, 0u);
  c.o = o;
  ASSERT_EQ(c.run(), 0) << bsvd_last_error();
  std::vector<int> path(c.batch, -1);
  c.o.path = path.data();
  c.o.variant = BSVD_VARIANT_BLOCKED; // read: the path says so
  c.o.block_size = 2;
  ASSERT_EQ(c.run(), 0) << bsvd_last_error();
  for (int p : path) EXPECT_EQ(p, BSVD_PATH_CPU_BLOCKED);
  c.o.num_threads = -2; // read: rejected
  EXPECT_EQ(c.run(), -18);
}

TEST(Api, StructSizeTooSmallIsRejectedWithItsPosition) {
  for (size_t bad :
       {size_t(1), size_t(8), offsetof(bsvd_options_t, struct_size), kThisVersion - 1}) {
    Call c;
    c.o.struct_size = bad;
    EXPECT_EQ(c.run(), -18) << bad;
    EXPECT_NE(std::string(bsvd_last_error()).find("opts->struct_size"), std::string::npos)
        << bsvd_last_error();
    // The pointer-array form: opts is argument 14.
    std::vector<const double *> pA = {c.A.data()};
    std::vector<double *> pS = {c.S.data()}, pU = {c.U.data()}, pV = {c.V.data()};
    EXPECT_EQ(bsvd_dgesvj_batched(BSVD_JOB_VECTORS, c.m, c.n, pA.data(), c.lda, pS.data(),
                                  pU.data(), c.ldu, pV.data(), c.ldv, c.info.data(), nullptr, 1,
                                  &c.o),
              -14);
    // The workspace query: opts is argument 6.
    size_t bytes = 0;
    EXPECT_EQ(bsvd_workspace_size('d', BSVD_JOB_VECTORS, 5, 4, 3, &c.o, &bytes), -6);
  }
}

TEST(Api, StructSizeOfALaterVersionReadsTheKnownFields) {
  // A caller built against a later header passes a larger struct; the fields
  // this version knows are read, the rest ignored.
  struct Later {
    bsvd_options_t o;
    int later_field;
  } later;
  bsvd_options_init(&later.o);
  later.o.backend = BSVD_BACKEND_CPU;
  later.o.struct_size = sizeof later;
  later.later_field = 12345;
  Call c;
  c.o = later.o;
  std::vector<int> path(c.batch, -1);
  later.o.path = path.data();
  later.o.variant = BSVD_VARIANT_BLOCKED;
  later.o.block_size = 2;
  const bsvd_status_t st = bsvd_dgesvj_strided_batched(
      c.job, c.m, c.n, c.A.data(), c.lda, 20, c.S.data(), 4, c.U.data(), c.ldu, 20, c.V.data(),
      c.ldv, 16, c.info.data(), nullptr, c.batch, &later.o);
  ASSERT_EQ(st, 0) << bsvd_last_error();
  for (int p : path) EXPECT_EQ(p, BSVD_PATH_CPU_BLOCKED);
}

// bsvd_cuda_status is empty exactly when the cuda backend can run, else the
// reason, which a cuda call repeats in bsvd_last_error.
TEST(Api, CudaStatusSaysWhy) {
  const std::string status = bsvd_cuda_status();
  if (bsvd_cuda_available()) {
    EXPECT_EQ(status, "");
    return;
  }
  EXPECT_FALSE(status.empty());
#if !defined(BSVD_WITH_CUDA)
  EXPECT_EQ(status, "this library was built without CUDA");
#endif
  Call c;
  c.o.backend = BSVD_BACKEND_CUDA;
  EXPECT_EQ(c.run(), BSVD_STATUS_BACKEND_UNAVAILABLE);
  EXPECT_NE(std::string(bsvd_last_error()).find(status), std::string::npos) << bsvd_last_error();
}

TEST(Api, CudaBackendWithoutGpuSaysSo) {
  if (bsvd_cuda_available()) GTEST_SKIP() << "a GPU is visible";
  Call c;
  c.o.backend = BSVD_BACKEND_CUDA;
  EXPECT_EQ(c.run(), BSVD_STATUS_BACKEND_UNAVAILABLE);
  EXPECT_NE(std::string(bsvd_last_error()).find("cuda"), std::string::npos);
  c.o.backend = BSVD_BACKEND_AUTO; // falls back to the cpu
  EXPECT_EQ(c.run(), 0);
}

// The _async forms run on the GPU alone: without one they say so, and with
// one, host memory is refused by position; nothing is written either way.
TEST(Api, AsyncFormsNeedTheGpuAndDeviceMemory) {
  Call c;
  const auto call = [&](const bsvd_options_t &o) {
    return bsvd_dgesvj_strided_batched_async(c.job, c.m, c.n, c.A.data(), c.lda, 20, c.S.data(), 4,
                                             c.U.data(), c.ldu, 20, c.V.data(), c.ldv, 16,
                                             c.info.data(), nullptr, c.batch, &o);
  };
  const std::vector<double> S0 = c.S;
  bsvd_options_t gpu = c.o;
  gpu.backend = BSVD_BACKEND_AUTO;
  if (bsvd_cuda_available()) {
    EXPECT_EQ(call(gpu), -4);
    EXPECT_NE(std::string(bsvd_last_error()).find("device memory"), std::string::npos);
  } else {
    EXPECT_EQ(call(gpu), BSVD_STATUS_BACKEND_UNAVAILABLE);
    EXPECT_NE(std::string(bsvd_last_error()).find("_async"), std::string::npos);
  }
  bsvd_options_t cpu = c.o;
  cpu.backend = BSVD_BACKEND_CPU;
  EXPECT_EQ(call(cpu), -18);
  EXPECT_EQ(c.S, S0);
  bsvd_options_t bad = c.o;
  bad.max_sweeps = -1; // the shared checks come first
  EXPECT_EQ(call(bad), -18);
  EXPECT_EQ(bsvd_sgesvj_batched_async(BSVD_JOB_VALUES, 2, 2, nullptr, 2, nullptr, nullptr, 2,
                                      nullptr, 2, nullptr, nullptr, 1, nullptr),
            -11); // info is NULL
  size_t bytes = 1;
  EXPECT_EQ(bsvd_workspace_size_async('d', BSVD_JOB_VECTORS, 4, 4, 2, nullptr, nullptr), -7);
  EXPECT_EQ(bsvd_workspace_size_async('d', BSVD_JOB_VECTORS, 4, 4, 0, nullptr, &bytes), 0);
  EXPECT_EQ(bytes, 0u);
  EXPECT_EQ(
      bsvd_workspace_size_async_v('d', BSVD_JOB_VECTORS, nullptr, nullptr, 1, nullptr, &bytes), -3);
}

TEST(Api, CppSimpleEntryPoint) {
  const int m = 7, n = 10, batch = 3;
  std::vector<std::complex<float>> A(m * n * batch);
  std::mt19937 g(9);
  std::normal_distribution<float> d;
  for (auto &x : A) x = {d(g), d(g)};
  bsvd::Result<std::complex<float>> r;
  bsvd_options_t o = cpu_opts();
  ASSERT_EQ(bsvd::svd(bsvd::Job::Vectors, m, n, A.data(), batch, r, o), 0) << bsvd_last_error();
  EXPECT_EQ(r.k, 7);
  EXPECT_EQ(r.S.size(), size_t(21));
  EXPECT_EQ(r.U.size(), size_t(batch * m * 7));
  EXPECT_EQ(r.V.size(), size_t(batch * n * 7));
  for (int b = 0; b < batch; ++b) {
    EXPECT_EQ(r.info[b], 0);
    EXPECT_EQ(r.path[b], BSVD_PATH_CPU_LAPACK);
    for (int i = 1; i < 7; ++i) EXPECT_GE(r.S[b * 7 + i - 1], r.S[b * 7 + i]);
  }
}

} // namespace

// bsvd_explain: the plan of a call as text, the size query, truncation, and
// the arguments checked like the workspace query's (buf is argument 7).
TEST(Api, ExplainPrintsThePlan) {
  bsvd_options_t o;
  bsvd_options_init(&o);
  o.backend = BSVD_BACKEND_CPU;
  size_t need = 0;
  ASSERT_EQ(bsvd_explain('d', BSVD_JOB_VECTORS, 64, 32, 10, &o, nullptr, 0, &need), 0)
      << bsvd_last_error();
  ASSERT_GT(need, 20u);
  std::string text(need, '\0');
  ASSERT_EQ(bsvd_explain('d', BSVD_JOB_VECTORS, 64, 32, 10, &o, text.data(), text.size(), nullptr),
            0);
  EXPECT_EQ(std::strlen(text.c_str()), need - 1);
  EXPECT_NE(text.find("plan: 10 matrices"), std::string::npos) << text;
  EXPECT_NE(text.find("cpu-lapack"), std::string::npos) << text;
  EXPECT_NE(text.find("64 x 32"), std::string::npos) << text;
  // truncated to len - 1 characters and a NUL
  char small[8];
  std::memset(small, 'x', sizeof small);
  ASSERT_EQ(bsvd_explain('d', BSVD_JOB_VECTORS, 64, 32, 10, &o, small, sizeof small, nullptr), 0);
  EXPECT_EQ(std::string(small), text.substr(0, 7));
  // variable sizes and the blocked variant
  const int m[3] = {8, 100, 0}, n[3] = {8, 50, 3};
  o.variant = BSVD_VARIANT_BLOCKED;
  need = 0;
  ASSERT_EQ(bsvd_explain_v('s', BSVD_JOB_VALUES, m, n, 3, &o, nullptr, 0, &need), 0);
  text.assign(need, '\0');
  ASSERT_EQ(bsvd_explain_v('s', BSVD_JOB_VALUES, m, n, 3, &o, text.data(), text.size(), nullptr),
            0);
  EXPECT_NE(text.find("cpu-blocked"), std::string::npos) << text;
  EXPECT_NE(text.find("0..100 x 3..50"), std::string::npos) << text;
  EXPECT_NE(text.find("S only"), std::string::npos) << text;
  // bad arguments
  EXPECT_EQ(bsvd_explain('q', BSVD_JOB_VECTORS, 4, 4, 1, &o, nullptr, 0, &need), -1);
  EXPECT_EQ(bsvd_explain('d', bsvd_job_t(7), 4, 4, 1, &o, nullptr, 0, &need), -2);
  EXPECT_EQ(bsvd_explain('d', BSVD_JOB_VECTORS, -1, 4, 1, &o, nullptr, 0, &need), -3);
  EXPECT_EQ(bsvd_explain('d', BSVD_JOB_VECTORS, 4, 4, -1, &o, nullptr, 0, &need), -5);
  EXPECT_EQ(bsvd_explain('d', BSVD_JOB_VECTORS, 4, 4, 1, &o, nullptr, 5, &need), -7);
  EXPECT_NE(std::string(bsvd_last_error()).find("buf"), std::string::npos);
  EXPECT_EQ(bsvd_explain_v('d', BSVD_JOB_VECTORS, nullptr, n, 3, &o, nullptr, 0, &need), -3);
}
