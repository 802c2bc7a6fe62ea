// The QR preprocessing path (src/cuda/qr*.{hpp,cuh,cu}): the factorization
// against its CPU twin (src/cpu/qr.cpp), and the whole path (QR, fused
// kernel on R, U = Q U_R) through the public API: T1-T4 on the six
// families, tall and wide, the edge cases, routing, host vs device data,
// values only.
#include "gpu_test_util.hpp"

#include "cpu/qr.hpp"
#include "cuda/fused/fused.hpp"
#include "cuda/qr/qr.hpp"

#include <cstring>

namespace {

// Whether two arrays hold the same bytes (NaNs included, which compare
// unequal as values).
template <class V> bool same_bits(const V &a, const V &b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0;
}

template <class R> R cj(R x) { return x; }
template <class R> std::complex<R> cj(std::complex<R> x) { return std::conj(x); }

template <class T> class GpuQr : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(GpuQr, Types);

// qr_factor on a uniform batch A of m x n matrices (piv: with column
// pivoting): B (nw x nw each: R, or R^H for wide or pivoted input), the
// prescaling exponents and (piv) the pivots. ok: every CUDA call succeeded.
template <class T> struct GpuFactor {
  std::vector<T> B, Y, tau;
  std::vector<int> escale, perm;
  bool ok = false;
};
// tsqr: the TSQR factorization (qr_tsqr_offsets; the shape must take it),
// else the one-matrix-per-block or cluster kernels.
template <class T> GpuFactor<T> gpu_factor(const std::vector<T> &A, int m, int n, int batch,
                                           bool piv, bool tsqr = false) {
  using namespace bsvd::detail;
  GpuFactor<T> f;
  const int mw = std::max(m, n), nw = std::min(m, n);
  T *dA = nullptr;
  unsigned char *ws = nullptr;
  std::vector<int> mv(batch, m), nv(batch, n);
  const bool take = tsqr && !piv && cuda::qr_tsqr_chunks(mw, nw, sizeof(T)) >= 2;
  const cuda::QrLayout L = cuda::qr_layout(mv, nv, false, sizeof(T), sizeof(R_t<T>), piv, take);
  if (cudaMalloc(&dA, A.size() * sizeof(T)) != cudaSuccess ||
      cudaMalloc(&ws, L.total) != cudaSuccess)
    return f;
  cudaMemcpy(dA, A.data(), A.size() * sizeof(T), cudaMemcpyHostToDevice);
  Batch<T> kb;
  kb.count = batch;
  kb.dims.m = m;
  kb.dims.n = n;
  kb.A.base = dA;
  kb.A.stride = int64_t(m) * n;
  kb.A.ld = m;
  std::vector<cuda::QrMat> mats(batch);
  for (int b = 0; b < batch; ++b) {
    mats[b] = {b, m, n, mw, nw, (long long)b * mw * nw, (long long)b * nw, (long long)b * nw * nw,
               0, 0, 0};
    mats[b].piv = piv ? 1 : 0;
  }
  if (tsqr) {
    if (!L.tsqr) return f;
    cuda::qr_tsqr_offsets(mats.data(), batch, sizeof(T));
  }
  cudaMemcpy(ws + L.mats, mats.data(), batch * sizeof(cuda::QrMat), cudaMemcpyHostToDevice);
  // the launch settings a call with the current overrides would take
  const plan::Tuning t = cuda::current_tuning();
  plan::QrPlan qp;
  qp.pivoted = piv;
  qp.cluster = t.qr.cluster;
  qp.wy = t.qr.wy;
  qp.apply = t.qr.apply;
  const cudaError_t e =
      cuda::qr_factor(kb, reinterpret_cast<const cuda::QrMat *>(ws + L.mats), batch, nw, ws, L,
                      nullptr, cuda::qr_launch(qp, t), mats.data());
  f.B.resize(size_t(batch) * nw * nw);
  f.escale.resize(batch);
  f.perm.resize(size_t(batch) * nw);
  cudaMemcpy(f.B.data(), ws + L.B, f.B.size() * sizeof(T), cudaMemcpyDeviceToHost);
  cudaMemcpy(f.escale.data(), ws + L.escale, batch * sizeof(int), cudaMemcpyDeviceToHost);
  if (piv)
    cudaMemcpy(f.perm.data(), ws + L.perm, f.perm.size() * sizeof(int), cudaMemcpyDeviceToHost);
  f.Y.resize(size_t(batch) * mw * nw);
  f.tau.resize(size_t(batch) * nw);
  cudaMemcpy(f.Y.data(), ws + L.Y, f.Y.size() * sizeof(T), cudaMemcpyDeviceToHost);
  cudaMemcpy(f.tau.data(), ws + L.tau, f.tau.size() * sizeof(T), cudaMemcpyDeviceToHost);
  f.ok = e == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess;
  cudaFree(ws);
  cudaFree(dA);
  return f;
}

// W = A (A^H when m < n; mw x nw) of one m x n matrix; returns ||A||_F^2.
template <class T> long double working_matrix(int m, int n, const T *A, std::vector<T> &W) {
  const int mw = std::max(m, n);
  W.assign(size_t(mw) * std::min(m, n), T(0));
  long double an = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      const T a = A[i + size_t(j) * m];
      an += std::norm(std::complex<long double>(std::real(a), std::imag(a)));
      if (m >= n)
        W[i + size_t(j) * mw] = a;
      else
        W[j + size_t(i) * mw] = cj(a);
    }
  return an;
}

// ||R_gpu - R_cpu||_F / ||A||_F: R_cpu in the upper triangle of Y (mw x nw,
// householder_qr's), the GPU's B = R or (flip) R^H, prescaled by 2^escale.
template <class T> double r_gap(int mw, int nw, const std::vector<T> &Y, const T *B, bool flip,
                                int escale, long double an) {
  long double dn = 0;
  for (int c = 0; c < nw; ++c)
    for (int r = 0; r < nw; ++r) {
      const T ref = r <= c ? Y[r + size_t(c) * mw] : T(0);
      T got = flip ? cj(B[c + size_t(r) * nw]) : B[r + size_t(c) * nw];
      got = got * R_t<T>(std::ldexp(1.0, -escale)); // the kernel's prescaling
      dn += std::norm(std::complex<long double>(std::real(got) - std::real(ref),
                                                std::imag(got) - std::imag(ref)));
    }
  return double(std::sqrt(dn / an));
}

// R of the GPU factorization (qr_factor writes B = R, or R^H for wide
// input) against householder_qr on the same W, in norm relative to ||A||.
TYPED_TEST(GpuQr, FactorMatchesCpuTwin) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  for (auto [m, n] : std::vector<std::pair<int, int>>{
           {200, 7}, {2000, 16}, {37, 37}, {50, 300}, {1, 1}, {90, 33}}) {
    SCOPED_TRACE(testing::Message() << m << "x" << n);
    const int batch = 3, mw = std::max(m, n), nw = std::min(m, n);
    const auto A = family_batch<T>(Family::Logrand, m, n, batch, 70 + m);
    const GpuFactor<T> f = gpu_factor(A, m, n, batch, false);
    ASSERT_TRUE(f.ok);
    for (int b = 0; b < batch; ++b) {
      std::vector<T> W, tau(nw);
      const long double an = working_matrix(m, n, A.data() + size_t(b) * m * n, W);
      bsvd::detail::householder_qr(mw, nw, W.data(), mw, tau.data());
      EXPECT_LE(r_gap(mw, nw, W, f.B.data() + size_t(b) * nw * nw, m < n, f.escale[b], an),
                10.0 * mw * uroff<T>())
          << "matrix " << b;
    }
  }
}

// The whole path (qr = 1) on the six families, tall and wide: T1-T4.
TYPED_TEST(GpuQr, FamiliesPassT1toT4) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  for (auto [m, n] :
       std::vector<std::pair<int, int>>{{2000, 16}, {16, 2000}, {1500, 40}, {700, 5}}) {
    for (Family f : bsvd::testing::all_families()) {
      SCOPED_TRACE(testing::Message() << m << "x" << n << " " << bsvd::testing::family_name(f));
      const int batch = 4;
      const auto A = family_batch<T>(f, m, n, batch, 300 + m + n);
      const auto r = gpu_solve<T>(m, n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0,
                                  BSVD_VARIANT_AUTO, 0, 1, /*qr=*/1);
      ASSERT_EQ(r.status, 0) << bsvd_last_error();
      for (int b = 0; b < batch; ++b) {
        EXPECT_EQ(r.info[b], 0);
        EXPECT_EQ(r.path[b], BSVD_PATH_CUDA_QR);
        const auto q = ratios(r, A, b);
        EXPECT_TRUE(q.pass()) << ratio_text(q);
      }
    }
  }
}

// qr = 1 forces the path whenever R fits (also square); qr = -1 never.
TYPED_TEST(GpuQr, OptionForcesOrAvoids) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  const int batch = 3;
  for (auto [m, n] : std::vector<std::pair<int, int>>{{120, 20}, {24, 24}, {9, 64}}) {
    SCOPED_TRACE(testing::Message() << m << "x" << n);
    const auto A = family_batch<T>(Family::Geo, m, n, batch, 11 + m);
    const auto r = gpu_solve<T>(m, n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0,
                                BSVD_VARIANT_AUTO, 0, 1, /*qr=*/1);
    ASSERT_EQ(r.status, 0) << bsvd_last_error();
    for (int b = 0; b < batch; ++b) {
      EXPECT_EQ(r.path[b], BSVD_PATH_CUDA_QR);
      EXPECT_EQ(r.info[b], 0);
      const auto q = ratios(r, A, b);
      EXPECT_TRUE(q.pass()) << ratio_text(q);
    }
  }
  const auto A = family_batch<T>(Family::Random, 2000, 16, 2, 5);
  const auto r = gpu_solve<T>(2000, 16, 2, A, true, BSVD_ORDERING_ROUND_ROBIN, 0, BSVD_VARIANT_AUTO,
                              0, 1, /*qr=*/-1);
  ASSERT_EQ(r.status, 0);
  const bool fits = bsvd::detail::cuda::fits(prec<T>(), 2000, 16, true);
  for (int b = 0; b < 2; ++b)
    EXPECT_EQ(r.path[b], fits ? BSVD_PATH_CUDA_FUSED : BSVD_PATH_CUDA_BLOCKED);
}

// Zero, identity, rank-deficient, overflow, underflow, NaN, Inf in one
// batch, tall and wide; the bad ones must not spoil the others.
TYPED_TEST(GpuQr, EdgeCases) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  const std::vector<Edge> edges = {Edge::Zero,     Edge::Identity,   Edge::RankDeficient,
                                   Edge::Overflow, Edge::Underflow,  Edge::Nan,
                                   Edge::Inf,      Edge::TinyColumns};
  for (auto [m, n] : std::vector<std::pair<int, int>>{{400, 12}, {12, 400}}) {
    const int batch = int(edges.size()) + 1;
    std::vector<T> A(size_t(batch) * m * n);
    bsvd::testing::generate<T>(Family::Random, m, n, 1, 5, A.data(), m);
    for (size_t e = 0; e < edges.size(); ++e)
      bsvd::testing::generate_edge<T>(edges[e], m, n, 40 + e, A.data() + (e + 1) * m * n, m);
    const auto r = gpu_solve<T>(m, n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0,
                                BSVD_VARIANT_AUTO, 0, 1, /*qr=*/1);
    ASSERT_EQ(r.status, 0) << bsvd_last_error();
    for (int b = 0; b < batch; ++b) {
      const bool bad = b >= 1 && (edges[b - 1] == Edge::Nan || edges[b - 1] == Edge::Inf);
      SCOPED_TRACE(testing::Message() << m << "x" << n << " matrix " << b);
      if (bad) {
        EXPECT_EQ(r.info[b], BSVD_INFO_NONFINITE);
        EXPECT_EQ(r.path[b], BSVD_PATH_TRIVIAL);
        for (int j = 0; j < r.k; ++j) EXPECT_TRUE(std::isnan(double(r.S[size_t(b) * r.k + j])));
        EXPECT_TRUE(std::isnan(std::abs(r.U[size_t(b) * m * r.k + m * r.k - 1])));
        EXPECT_TRUE(std::isnan(std::abs(r.V[size_t(b) * n * r.k + n * r.k - 1])));
        continue;
      }
      EXPECT_EQ(r.path[b], BSVD_PATH_CUDA_QR);
      EXPECT_EQ(r.info[b], 0);
      const auto q = ratios(r, A, b);
      EXPECT_TRUE(q.pass()) << ratio_text(q);
    }
  }
}

// Host and device operands give the same bits; values only gives the same S
// and sweeps.
TYPED_TEST(GpuQr, DeviceHostAndValuesOnlyAgree) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  for (auto [m, n] : std::vector<std::pair<int, int>>{{1200, 24}, {24, 1200}}) {
    const int batch = 5;
    const auto A = family_batch<T>(Family::Logrand, m, n, batch, 77 + m);
    SCOPED_TRACE(testing::Message() << m << "x" << n);
    expect_host_device_values_agree<T>(m, n, batch, A, BSVD_VARIANT_AUTO, /*qr=*/1,
                                       BSVD_PATH_CUDA_QR);
  }
}

// The automatic choice (qr_route) in double on the H100's shared memory,
// at the shapes it was fitted on
// (docs/design/decisions/0007-qr-preprocessing-rule.md): QR where it was
// measured faster, the blocked path where it was not (2000 x 32: QR by
// TSQR; blocked without TSQR); with the WY form off (BSVD_QR_WY=0), the
// rule for Q applied by a grid (at most 16 columns).
TEST(GpuQrRoute, DoubleShapesAsMeasured) {
  SKIP_WITHOUT_GPU();
  using bsvd::detail::cuda::qr_route;
  if (bsvd::detail::cuda::max_smem_optin() < 227 * 1024) GTEST_SKIP() << "fitted on the H100";
  for (auto [m, n] : std::vector<std::pair<int, int>>{{1000, 16},
                                                      {1500, 16},
                                                      {2000, 16},
                                                      {16, 2000},
                                                      {3000, 16},
                                                      {2000, 24},
                                                      {1024, 32},
                                                      {4000, 8},
                                                      {2000, 32}})
    EXPECT_TRUE(qr_route('d', m, n, true, 0)) << m << "x" << n;
  for (auto [m, n] :
       std::vector<std::pair<int, int>>{{900, 16}, {2000, 63}, {1000, 33}, {2000, 40}})
    EXPECT_FALSE(qr_route('d', m, n, true, 0)) << m << "x" << n;
  {
    ScopedOverride tsqr("BSVD_QR_TSQR");
    tsqr.set("0");
    EXPECT_FALSE(qr_route('d', 2000, 32, true, 0)) << "2000x32 without TSQR";
  }
  EXPECT_TRUE(qr_route('d', 3000, 16, true, 1)); // forced: R fits
  EXPECT_FALSE(qr_route('d', 1000, 16, true, -1)); // never
  ScopedOverride wy("BSVD_QR_WY");
  wy.set("0");
  for (auto [m, n] : std::vector<std::pair<int, int>>{{1000, 16}, {2000, 16}, {16, 2000}})
    EXPECT_TRUE(qr_route('d', m, n, true, 0)) << m << "x" << n << " (grid)";
  for (auto [m, n] : std::vector<std::pair<int, int>>{{3000, 16}, {2000, 24}, {1024, 32}})
    EXPECT_FALSE(qr_route('d', m, n, true, 0)) << m << "x" << n << " (grid)";
}

// A variable-size batch mixing QR matrices of different widths with fused
// and blocked ones.
TYPED_TEST(GpuQr, MixedWithOtherPaths) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  // {1100, 4} fits the fused kernel in every precision, so the automatic
  // choice takes QR for it (qr_route); the others depend on the precision.
  const std::vector<std::pair<int, int>> dims = {{1500, 10}, {30, 30}, {300, 300}, {12, 900},
                                                 {2000, 16}, {0, 4},   {1100, 4}};
  const auto r = vbatched_solve<T>(
      dims, 0,
      [](int b, int m, int n, T *A, int lda) {
        bsvd::testing::generate<T>(Family::Arith, m, n, bsvd::testing::default_kappa<T>(), 9 + b, A,
                                   lda);
      },
      cuda_options());
  ASSERT_EQ(r.status, 0) << bsvd_last_error();
  int via_qr = 0;
  for (int b = 0; b < int(dims.size()); ++b) {
    const auto [m, n] = dims[b];
    SCOPED_TRACE(testing::Message() << "matrix " << b << " " << m << "x" << n);
    EXPECT_EQ(r.info[b], 0);
    if (m == 0 || n == 0) continue;
    const bool qr = bsvd::detail::cuda::qr_route(prec<T>(), m, n, true, 0);
    via_qr += qr;
    if (qr)
      EXPECT_EQ(r.path[b], BSVD_PATH_CUDA_QR);
    else
      EXPECT_NE(r.path[b], BSVD_PATH_CUDA_QR);
    const auto q = r.ratios(b);
    EXPECT_TRUE(q.pass()) << ratio_text(q);
  }
  EXPECT_GE(via_qr, 1); // the batch must exercise the QR path beside the others
}

} // namespace

namespace {

// ---- QR preconditioning (opts.precondition; path cuda-qrcp) ---------------

template <class T> class GpuQrcp : public ::testing::Test {};
TYPED_TEST_SUITE(GpuQrcp, Types);

// The pivoted factorization (qr_factor with piv: B = R^H, perm): perm is
// a permutation, R is the CPU's R of W P (householder_qr on the columns in
// the GPU's order) to rounding, relative to ||A||, and the pivoting held:
// |R_jj| >= ||R(j:k, k)|| for k > j up to rounding. (The pivots themselves
// may differ from householder_qr_pivoted's at near-ties: seen in single
// precision, where the partial norms are summed in another order.)
TYPED_TEST(GpuQrcp, PivotedFactorMatchesCpuTwin) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  for (auto [m, n] :
       std::vector<std::pair<int, int>>{{90, 90}, {300, 70}, {70, 300}, {1, 1}, {40, 3}}) {
    SCOPED_TRACE(testing::Message() << m << "x" << n);
    const int batch = 3, mw = std::max(m, n), nw = std::min(m, n);
    const auto A = family_batch<T>(Family::Logrand, m, n, batch, 170 + m);
    const GpuFactor<T> f = gpu_factor(A, m, n, batch, true);
    ASSERT_TRUE(f.ok);
    for (int b = 0; b < batch; ++b) {
      std::vector<T> W, tau(nw);
      const long double an = working_matrix(m, n, A.data() + size_t(b) * m * n, W);
      const int *pb = f.perm.data() + size_t(b) * nw;
      const T *Bb = f.B.data() + size_t(b) * nw * nw;
      std::vector<int> seen(nw, 0);
      for (int j = 0; j < nw; ++j) {
        ASSERT_TRUE(pb[j] >= 0 && pb[j] < nw) << "pivot " << j;
        ++seen[pb[j]];
      }
      for (int j = 0; j < nw; ++j) ASSERT_EQ(seen[j], 1) << "perm is not a permutation";
      std::vector<T> WP(W.size());
      for (int j = 0; j < nw; ++j)
        for (int i = 0; i < mw; ++i) WP[i + size_t(j) * mw] = W[i + size_t(pb[j]) * mw];
      bsvd::detail::householder_qr(mw, nw, WP.data(), mw, tau.data());
      // the pivoting held: |R_jj| >= ||R(j:k, k)|| up to rounding (B = R^H)
      const double slack = 1 - 100 * std::sqrt(uroff<T>());
      for (int j = 0; j < nw; ++j)
        for (int k = j + 1; k < nw; ++k) {
          long double sk = 0;
          for (int i = j; i <= k; ++i)
            sk += std::norm(std::complex<long double>(std::real(Bb[k + size_t(i) * nw]),
                                                      std::imag(Bb[k + size_t(i) * nw])));
          ASSERT_GE(double(std::abs(Bb[j + size_t(j) * nw])), slack * double(std::sqrt(sk)))
              << "column " << k << " had the larger partial norm at step " << j;
        }
      EXPECT_LE(r_gap(mw, nw, WP, Bb, true, f.escale[b], an), 10.0 * mw * uroff<T>())
          << "matrix " << b;
    }
  }
}

// The cluster factorization (qrcp_cluster_kernel: the matrix in the shared
// memory of 1-16 blocks) gives the bits of the one-block kernel at its
// thread count (BSVD_QR_CLUSTER=0; BSVD_QR_THREADS=1024 for both runs):
// B, Y, tau, perm and escale, pivoted and not, on shapes that take clusters
// of 1, 2, 4, 8 and 16 blocks, a matrix whose columns tie in norm (0/1
// entries: the pivot order rests on the tie rule), one with zero and
// repeated columns (identity steps, tiny columns) and a NaN matrix.
// Both plans (qrcp_throughput_rule): the latency plan's 1024-thread blocks
// against the one-block kernel at 1024 threads, the throughput plan's
// 256-thread blocks (more columns per block: 140^2 and 90^2 on one block,
// 512^2 on 8) against it at 256.
TYPED_TEST(GpuQrcp, ClusterFactorGivesTheSameBits) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  ScopedOverride threads("BSVD_QR_THREADS"), plan("BSVD_QRCP_PLAN");
  for (const char *pl : {"latency", "throughput"})
    for (const bool piv : {true, false})
      for (auto [m, n] : std::vector<std::pair<int, int>>{{512, 512},
                                                          {300, 260},
                                                          {140, 140},
                                                          {90, 90},
                                                          {70, 300},
                                                          {2000, 16},
                                                          {40, 3},
                                                          {1, 1}}) {
        SCOPED_TRACE(testing::Message()
                     << m << "x" << n << (piv ? " pivoted " : " unpivoted ") << pl);
        threads.set(pl[0] == 'l' ? "1024" : "256");
        plan.set(pl);
        const int batch = 4, nw = std::min(m, n);
        auto A = family_batch<T>(Family::Logrand, m, n, batch, 510 + m);
        T *A1 = A.data() + size_t(m) * n, *A2 = A1 + size_t(m) * n, *A3 = A2 + size_t(m) * n;
        for (int j = 0; j < n; ++j) // 0/1 entries, two per column: ties everywhere
          for (int i = 0; i < m; ++i) A1[i + size_t(j) * m] = T((i * 7 + j * 3) % 5 < 2 ? 1 : 0);
        for (int j = 0; j < n; ++j) // zero and repeated columns
          for (int i = 0; i < m; ++i)
            A2[i + size_t(j) * m] = j % 3 == 0 ? T(0) : A2[i + size_t(j % 7) * m];
        if (m * n > 1) A3[m * n / 2] = T(R_t<T>(NAN));
        ScopedOverride env("BSVD_QR_CLUSTER");
        env.set("0");
        const GpuFactor<T> ref = gpu_factor(A, m, n, batch, piv);
        env.unset();
        const GpuFactor<T> got = gpu_factor(A, m, n, batch, piv);
        ASSERT_TRUE(ref.ok && got.ok);
        if (piv) EXPECT_EQ(got.perm, ref.perm);
        EXPECT_EQ(got.escale, ref.escale);
        EXPECT_TRUE(same_bits(got.B, ref.B)) << "B";
        // Y and tau of the finite matrices (a NaN matrix's Y is its load only)
        const size_t ny = got.Y.size() / batch, nt = size_t(nw);
        EXPECT_TRUE(std::memcmp(got.Y.data(), ref.Y.data(), 3 * ny * sizeof(T)) == 0) << "Y";
        EXPECT_TRUE(std::memcmp(got.tau.data(), ref.tau.data(), 3 * nt * sizeof(T)) == 0) << "tau";
      }
}

// Q applied by a grid of blocks per matrix (qr_apply_q_kernel) gives the
// bits of the one-block finish (BSVD_QR_APPLY=0): S, U and V of the
// preconditioned path (square, tall, wide) and of the tall QR path (with
// its WY form turned off: BSVD_QR_WY=0).
TYPED_TEST(GpuQrcp, QApplyGivesTheSameBits) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  struct Case {
    int m, n, qr, pre;
  };
  // 4000 x 8: in d, c and z X's columns are too tall for the grid's shared
  // memory (a column and eight staged reflectors), so the finish forms X
  // itself in both runs; s takes the grid
  for (const Case c : std::vector<Case>{{130, 130, 0, 1},
                                        {260, 90, 0, 1},
                                        {90, 260, 0, 1},
                                        {2000, 16, 1, 0},
                                        {24, 1500, 1, 0},
                                        {4000, 8, 1, 0}}) {
    SCOPED_TRACE(testing::Message() << c.m << "x" << c.n);
    const int batch = 3;
    auto A = family_batch<T>(Family::Logrand, c.m, c.n, batch, 77 + c.m);
    A[size_t(c.m) * c.n + 5] = T(R_t<T>(NAN)); // matrix 1: non-finite
    ScopedOverride wy("BSVD_QR_WY"); // the tall path's default, the WY form: off here
    wy.set("0");
    ScopedOverride env("BSVD_QR_APPLY");
    env.set("0");
    const auto ref =
        gpu_solve<T>(c.m, c.n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0, BSVD_VARIANT_AUTO, 0,
                     BSVD_EIG_SWEEPS_AUTO, c.qr, BSVD_PAIR_AUTO, c.pre);
    env.unset();
    const auto got =
        gpu_solve<T>(c.m, c.n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0, BSVD_VARIANT_AUTO, 0,
                     BSVD_EIG_SWEEPS_AUTO, c.qr, BSVD_PAIR_AUTO, c.pre);
    ASSERT_EQ(ref.status, 0) << bsvd_last_error();
    ASSERT_EQ(got.status, 0) << bsvd_last_error();
    EXPECT_EQ(got.path, ref.path);
    EXPECT_EQ(got.path[0], c.pre ? BSVD_PATH_CUDA_QRCP : BSVD_PATH_CUDA_QR);
    EXPECT_EQ(got.info, ref.info);
    // matrix 1's NaNs compare unequal as values; its bits are the same
    EXPECT_TRUE(same_bits(got.S, ref.S));
    EXPECT_TRUE(same_bits(got.U, ref.U));
    EXPECT_TRUE(same_bits(got.V, ref.V));
    EXPECT_EQ(got.info[1], BSVD_INFO_NONFINITE);
  }
}

// The tall / wide QR path's Q in compact WY form (qr_wy_m_kernel and
// qr_wy_apply_kernel, the default) against the reflector-by-reflector
// grid (BSVD_QR_WY=0) on the same factorization: S, sweeps, info and the
// side without Q the same bits; the side with Q within 4 (mw + nw) u of it
// (the same Q on the same Z, summed in another order), NaN for the
// non-finite matrix; T1-T4. The CPU twin of the WY kernels is
// apply_householder_q_wy (CpuQr.WyApplicationMatchesReflectors).
TYPED_TEST(GpuQr, WyApplicationMatchesGrid) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  ScopedOverride tsqr("BSVD_QR_TSQR"); // the one-level factorization on both sides
  tsqr.set("0");
  for (auto [m, n] :
       std::vector<std::pair<int, int>>{{2000, 16}, {1100, 4}, {24, 1500}, {4000, 8}, {600, 30}}) {
    SCOPED_TRACE(testing::Message() << m << "x" << n);
    const int batch = 3, mw = std::max(m, n), nw = std::min(m, n);
    auto A = family_batch<T>(Family::Logrand, m, n, batch, 310 + m);
    A[size_t(m) * n + 5] = T(R_t<T>(NAN)); // matrix 1: non-finite
    auto solve = [&] {
      return gpu_solve<T>(m, n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0, BSVD_VARIANT_AUTO, 0,
                          BSVD_EIG_SWEEPS_AUTO, 1);
    };
    const auto got = solve();
    ScopedOverride wy("BSVD_QR_WY");
    wy.set("0");
    const auto ref = solve();
    wy.unset();
    ASSERT_EQ(got.status, 0) << bsvd_last_error();
    ASSERT_EQ(ref.status, 0) << bsvd_last_error();
    EXPECT_EQ(got.path[0], BSVD_PATH_CUDA_QR);
    EXPECT_EQ(got.info, ref.info);
    EXPECT_EQ(got.info[1], BSVD_INFO_NONFINITE);
    EXPECT_EQ(got.sweeps, ref.sweeps);
    const bool wide = m < n;
    const auto &gq = wide ? got.V : got.U, &rq = wide ? ref.V : ref.U;
    const auto &go = wide ? got.U : got.V, &ro = wide ? ref.U : ref.V;
    EXPECT_TRUE(std::memcmp(go.data(), ro.data(), go.size() * sizeof(T)) == 0)
        << "the side without Q";
    double worst = 0;
    for (int b = 0; b < batch; ++b) {
      const size_t off = size_t(b) * mw * nw;
      for (size_t e = 0; e < size_t(mw) * nw; ++e) {
        if (b == 1) {
          EXPECT_TRUE(std::isnan(std::real(gq[off + e])));
          continue;
        }
        worst = std::max(worst, double(std::abs(gq[off + e] - rq[off + e])));
      }
      if (b == 1) continue;
      const auto q = ratios(got, A, b);
      EXPECT_TRUE(q.pass()) << "matrix " << b << " " << ratio_text(q);
    }
    EXPECT_LE(worst, 4.0 * (mw + nw) * uroff<T>());
  }
}

// TSQR's factorization (qr_tsqr_factor_kernel, two levels) against its CPU
// twin tsqr_factor on the same W: R in norm relative to ||A||, tall and
// wide, several chunks, a short last chunk, 32 columns, one column.
TYPED_TEST(GpuQr, TsqrFactorMatchesCpuTwin) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  for (auto [m, n] : std::vector<std::pair<int, int>>{
           {2000, 16}, {300, 7}, {16, 2000}, {1000, 32}, {513, 20}, {257, 1}}) {
    SCOPED_TRACE(testing::Message() << m << "x" << n);
    const int batch = 3, mw = std::max(m, n), nw = std::min(m, n);
    const int nc = bsvd::detail::cuda::qr_tsqr_chunks(mw, nw, sizeof(T));
    if (nc < 2) { // (z, 32 columns: the stacked R factors exceed kTsqrMaxStackBytes)
      EXPECT_TRUE(sizeof(T) == 16 && nw == 32) << "TSQR should take this shape";
      continue;
    }
    const auto A = family_batch<T>(Family::Logrand, m, n, batch, 90 + m);
    const GpuFactor<T> f = gpu_factor(A, m, n, batch, false, true);
    ASSERT_TRUE(f.ok);
    for (int b = 0; b < batch; ++b) {
      std::vector<T> W, tau1(size_t(nc) * nw), Z(size_t(nc) * nw * nw), tau2(nw);
      const long double an = working_matrix(m, n, A.data() + size_t(b) * m * n, W);
      bsvd::detail::tsqr_factor(mw, nw, nc, W.data(), mw, tau1.data(), Z.data(), tau2.data());
      std::vector<T> Yr(size_t(mw) * nw, T(0)); // R in the upper triangle, as r_gap reads it
      for (int c = 0; c < nw; ++c)
        for (int r = 0; r <= c; ++r) Yr[r + size_t(c) * mw] = Z[r + size_t(c) * nc * nw];
      EXPECT_LE(r_gap(mw, nw, Yr, f.B.data() + size_t(b) * nw * nw, m < n, f.escale[b], an),
                10.0 * mw * uroff<T>())
          << "matrix " << b;
    }
  }
}

// The whole QR path with TSQR (the default where it applies) against the
// one-level factorization (BSVD_QR_TSQR=0) on the same batch: singular
// values within 10 mw u sigma_max, sweeps within 2, info alike (a NaN
// matrix: NaN on the side with Q), T1-T4; values only gives the same S.
TYPED_TEST(GpuQr, TsqrMatchesOneLevel) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  for (auto [m, n] : std::vector<std::pair<int, int>>{
           {2000, 16}, {1100, 4}, {24, 1500}, {4000, 8}, {600, 30}, {3000, 16}}) {
    SCOPED_TRACE(testing::Message() << m << "x" << n);
    const int batch = 3, mw = std::max(m, n), nw = std::min(m, n);
    auto A = family_batch<T>(Family::Logrand, m, n, batch, 410 + m);
    A[size_t(m) * n + 7] = T(R_t<T>(NAN)); // matrix 1: non-finite
    auto solve = [&](bool vec) {
      return gpu_solve<T>(m, n, batch, A, vec, BSVD_ORDERING_ROUND_ROBIN, 0, BSVD_VARIANT_AUTO, 0,
                          BSVD_EIG_SWEEPS_AUTO, 1);
    };
    const auto got = solve(true), vals = solve(false);
    ScopedOverride tsqr("BSVD_QR_TSQR");
    tsqr.set("0");
    const auto ref = solve(true);
    tsqr.unset();
    ASSERT_EQ(got.status, 0) << bsvd_last_error();
    ASSERT_EQ(vals.status, 0) << bsvd_last_error();
    ASSERT_EQ(ref.status, 0) << bsvd_last_error();
    EXPECT_EQ(got.path[0], BSVD_PATH_CUDA_QR);
    EXPECT_EQ(got.info, ref.info);
    EXPECT_EQ(got.info[1], BSVD_INFO_NONFINITE);
    EXPECT_TRUE(same_bits(got.S, vals.S)) << "values only";
    const bool wide = m < n;
    const auto &gq = wide ? got.V : got.U;
    for (int b = 0; b < batch; ++b) {
      if (b == 1) {
        for (size_t e = 0; e < size_t(mw) * nw; ++e)
          EXPECT_TRUE(std::isnan(std::real(gq[size_t(b) * mw * nw + e])));
        continue;
      }
      EXPECT_LE(std::abs(got.sweeps[b] - ref.sweeps[b]), 2);
      const R_t<T> smax = ref.S[size_t(b) * nw];
      for (int j = 0; j < nw; ++j)
        EXPECT_LE(std::abs(got.S[size_t(b) * nw + j] - ref.S[size_t(b) * nw + j]),
                  10.0 * mw * uroff<T>() * smax)
            << "sigma_" << j;
      const auto q = ratios(got, A, b);
      EXPECT_TRUE(q.pass()) << "matrix " << b << " " << ratio_text(q);
    }
  }
}

Config qrcp_twin_cfg() {
  Config c;
  c.variant = BSVD_VARIANT_BLOCKED;
  c.eig_sweeps = BSVD_EIG_SWEEPS_AUTO;
  c.precondition = 1;
  return c;
}

// The whole path forced (precondition = 1) on square, tall and wide
// matrices of three families: path cuda-qrcp, T1-T4, the singular values
// of the CPU twin (solve_one preconditioned, blocked) to rounding and its
// sweeps within 3 (the summation orders differ); values only gives the
// same S and sweeps.
TYPED_TEST(GpuQrcp, MatchesCpuTwin) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  for (auto [m, n] :
       std::vector<std::pair<int, int>>{{100, 100}, {260, 90}, {90, 260}, {130, 130}}) {
    for (Family f : {Family::Logrand, Family::Random, Family::Geo}) {
      SCOPED_TRACE(testing::Message() << m << "x" << n << " " << bsvd::testing::family_name(f));
      const int batch = 3;
      const auto A = family_batch<T>(f, m, n, batch, 900 + m + n);
      const int eig = BSVD_EIG_SWEEPS_AUTO;
      const auto r = gpu_solve<T>(m, n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0,
                                  BSVD_VARIANT_AUTO, 0, eig, 0, BSVD_PAIR_AUTO, 1);
      const auto s = gpu_solve<T>(m, n, batch, A, false, BSVD_ORDERING_ROUND_ROBIN, 0,
                                  BSVD_VARIANT_AUTO, 0, eig, 0, BSVD_PAIR_AUTO, 1);
      ASSERT_EQ(r.status, 0) << bsvd_last_error();
      ASSERT_EQ(s.status, 0) << bsvd_last_error();
      EXPECT_EQ(r.S, s.S);
      EXPECT_EQ(r.sweeps, s.sweeps);
      for (int b = 0; b < batch; ++b) {
        SCOPED_TRACE(testing::Message() << "matrix " << b);
        EXPECT_EQ(r.path[b], BSVD_PATH_CUDA_QRCP);
        EXPECT_EQ(r.info[b], 0);
        const auto q = ratios(r, A, b);
        EXPECT_TRUE(q.pass()) << ratio_text(q);
        const auto tw = cpu_twin<T>(m, n, A.data() + size_t(b) * m * n, false,
                                    BSVD_ORDERING_ROUND_ROBIN, qrcp_twin_cfg());
        EXPECT_LE(twin_gap(r, b, tw), 8.0 * std::sqrt(double(std::max(m, n))));
        EXPECT_LE(std::abs(r.sweeps[b] - tw.sweeps), 3) << "cpu twin " << tw.sweeps;
      }
    }
  }
}

// A variable-size batch with precondition = 1: its blocked matrices are
// preconditioned, the small ones stay on the fused kernel and the tall
// thin one on the QR path; a NaN matrix, a zero matrix and a rank-deficient
// one among the preconditioned ones spoil nothing. The automatic choice
// does not precondition (qrcp_route).
TYPED_TEST(GpuQrcp, MixedBatch) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  const std::vector<std::pair<int, int>> dims = {{300, 300}, {20, 20},  {150, 100},
                                                 {90, 260},  {0, 5},    {120, 120},
                                                 {140, 140}, {1100, 4}, {200, 200}};
  const int nan_b = 5, zero_b = 6, lowrank_b = 8;
  bsvd_options_t on = cuda_options();
  on.precondition = 1;
  const auto r = vbatched_solve<T>(
      dims, 3,
      [&](int b, int m, int n, T *A, int lda) {
        if (b == zero_b) return;
        bsvd::testing::generate<T>(b % 2 ? Family::Logrand : Family::Cluster1, m, n,
                                   bsvd::testing::default_kappa<T>(), 40 + b, A, lda);
        if (b == nan_b) A[11] = T(R_t<T>(NAN));
        if (b == lowrank_b) // columns 50.. repeat 0..: rank 50
          for (int j = 50; j < n; ++j)
            for (int i = 0; i < m; ++i) A[i + size_t(j) * lda] = A[i + size_t(j - 50) * lda];
      },
      on);
  ASSERT_EQ(r.status, 0) << bsvd_last_error();
  int pre = 0;
  for (int b = 0; b < int(dims.size()); ++b) {
    const auto [m, n] = dims[b];
    SCOPED_TRACE(testing::Message() << "matrix " << b << " " << m << "x" << n);
    if (b == nan_b) {
      EXPECT_EQ(r.info[b], BSVD_INFO_NONFINITE);
      EXPECT_EQ(r.path[b], BSVD_PATH_TRIVIAL);
      EXPECT_TRUE(std::isnan(double(r.S[b][0])));
      continue;
    }
    EXPECT_EQ(r.info[b], 0);
    if (m == 0 || n == 0) continue;
    const bool qr = bsvd::detail::cuda::qr_route(prec<T>(), m, n, true, 0);
    const int want = qr                                                    ? BSVD_PATH_CUDA_QR
                     : auto_tiny<T>(m, n, dims.size())                     ? BSVD_PATH_CUDA_TINY
                     : auto_fused<T>(m, n, true, call_fused_cols<T>(dims)) ? BSVD_PATH_CUDA_FUSED
                                                                           : BSVD_PATH_CUDA_QRCP;
    EXPECT_EQ(r.path[b], want);
    pre += want == BSVD_PATH_CUDA_QRCP;
    const auto q = r.ratios(b);
    EXPECT_TRUE(q.pass()) << ratio_text(q);
  }
  EXPECT_GE(pre, 5);
  // -1: the plain blocked path
  bsvd_options_t o = cuda_options();
  o.precondition = -1;
  const auto p = vbatched_solve<T>(
      {{150, 100}}, 0,
      [&](int, int m, int n, T *A, int lda) {
        bsvd::testing::generate<T>(Family::Logrand, m, n, bsvd::testing::default_kappa<T>(), 3, A,
                                   lda);
      },
      o);
  ASSERT_EQ(p.status, 0) << bsvd_last_error();
  EXPECT_NE(p.path[0], BSVD_PATH_CUDA_QRCP);
}

// The automatic choice (precondition = 0; plan::qrcp_auto):
// - a few matrices that clusters hold are preconditioned in d, c and z,
//   with the bits of precondition = 1 (S, U, V, sweeps), and meet T1-T4;
//   in s they are not (the rule never preconditions s), with the bits of
//   precondition = -1;
// - a batch of many small ones is not, with the bits of precondition = -1;
// - a batch with one matrix that no cluster holds (1024^2) is not, in
//   every precision.
TYPED_TEST(GpuQrcp, AutomaticChoice) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  // The automatic preconditioning needs thread-block clusters (compute
  // capability 9.0; not on an A100, nor under BSVD_DEVICE_AS=sm_80).
  if (qrcp_cluster_fit<T>(200, 200) == 0) GTEST_SKIP() << "no thread-block clusters";
  const int eig = BSVD_EIG_SWEEPS_AUTO;
  const bool single = prec<T>() == 's';
  auto solve = [&](int m, int n, int batch, const std::vector<T> &A, int pre) {
    return gpu_solve<T>(m, n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0, BSVD_VARIANT_AUTO, 0,
                        eig, 0, BSVD_PAIR_AUTO, pre);
  };
  {
    // 2 x 200 x 160: the rule's count 2, 160 columns
    const int m = 200, n = 160, batch = 2;
    ASSERT_GT(qrcp_cluster_fit<T>(m, n), 0);
    ASSERT_EQ(qrcp_auto_rule(batch, n, prec<T>()), !single);
    const auto A = family_batch<T>(Family::Logrand, m, n, batch, 510);
    const auto a = solve(m, n, batch, A, 0), on = solve(m, n, batch, A, single ? -1 : 1);
    ASSERT_EQ(a.status, 0) << bsvd_last_error();
    ASSERT_EQ(on.status, 0) << bsvd_last_error();
    for (int b = 0; b < batch; ++b) {
      if (single)
        EXPECT_NE(a.path[b], BSVD_PATH_CUDA_QRCP);
      else
        EXPECT_EQ(a.path[b], BSVD_PATH_CUDA_QRCP);
      EXPECT_EQ(a.info[b], 0);
      const auto q = ratios(a, A, b);
      EXPECT_TRUE(q.pass()) << ratio_text(q);
    }
    EXPECT_EQ(a.S, on.S);
    EXPECT_EQ(a.U, on.U);
    EXPECT_EQ(a.V, on.V);
    EXPECT_EQ(a.sweeps, on.sweeps);
  }
  {
    // 200 x 128^2: count 200 at 128 columns, predicted cost 0.25
    const int m = 128, n = 128, batch = 200;
    ASSERT_FALSE(qrcp_auto_rule(batch, n, prec<T>()));
    const auto A = family_batch<T>(Family::Random, m, n, batch, 520);
    const auto a = solve(m, n, batch, A, 0), off = solve(m, n, batch, A, -1);
    ASSERT_EQ(a.status, 0) << bsvd_last_error();
    ASSERT_EQ(off.status, 0) << bsvd_last_error();
    for (int b = 0; b < batch; ++b) EXPECT_EQ(a.path[b], off.path[b]);
    EXPECT_NE(a.path[0], BSVD_PATH_CUDA_QRCP);
    EXPECT_EQ(a.S, off.S);
    EXPECT_EQ(a.sweeps, off.sweeps);
    const auto q = ratios(a, A, 7);
    EXPECT_TRUE(q.pass()) << ratio_text(q);
  }
  {
    // {1024^2, 200^2}: 1024 columns fit no cluster in any precision, so
    // neither matrix is preconditioned (200^2 alone would be, but in s)
    ASSERT_EQ(qrcp_cluster_fit<T>(1024, 1024), 0);
    ASSERT_GT(qrcp_cluster_fit<T>(200, 200), 0);
    ASSERT_EQ(qrcp_auto_rule(1, 200, prec<T>()), !single);
    const auto r = vbatched_solve<T>(
        {{1024, 1024}, {200, 200}}, 0,
        [&](int b, int m, int n, T *A, int lda) {
          bsvd::testing::generate<T>(Family::Random, m, n, bsvd::testing::default_kappa<T>(),
                                     530 + b, A, lda);
        },
        cuda_options());
    ASSERT_EQ(r.status, 0) << bsvd_last_error();
    EXPECT_NE(r.path[0], BSVD_PATH_CUDA_QRCP);
    EXPECT_NE(r.path[1], BSVD_PATH_CUDA_QRCP);
    EXPECT_NE(r.path[1], BSVD_PATH_CUDA_FUSED);
    EXPECT_EQ(r.info[1], 0);
    const auto q = r.ratios(1);
    EXPECT_TRUE(q.pass()) << ratio_text(q);
  }
}

} // namespace
