// The hyperbolic SVD through the cuda backend's executor (backend.cu,
// host_data.cu; docs/hsvd.md): the variable-size form on device data with
// every path the plan gives (the fused kernel, the QR front end, the
// blocked path or the CPU beyond them), host data streamed in chunks, the
// stream-ordered form and its capture in a CUDA graph, several GPUs. Each
// judged by the ratios of hsvd_problem.hpp against the problem's exact
// values, or against the same call made another way.
#include "gpu_test_util.hpp"

#include "../unit/hsvd_problem.hpp"

#include <array>
#include <memory>

namespace {

namespace ht = hsvd_test;

template <class T> class GpuHsvdForms : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(GpuHsvdForms, Types);

template <class E> struct Dev {
  E *p = nullptr;
  explicit Dev(size_t n) { EXPECT_EQ(cudaMalloc(&p, std::max<size_t>(n, 1) * sizeof(E)), 0); }
  Dev(const Dev &) = delete;
  ~Dev() { cudaFree(p); }
  void put(const std::vector<E> &h) {
    ASSERT_EQ(cudaMemcpy(p, h.data(), h.size() * sizeof(E), cudaMemcpyHostToDevice), 0);
  }
  std::vector<E> get(size_t n) const {
    std::vector<E> h(n);
    EXPECT_EQ(cudaMemcpy(h.data(), p, n * sizeof(E), cudaMemcpyDeviceToHost), 0);
    return h;
  }
};

// A packed batch of constructed problems (ld = m), matrix b with signature
// nplus[b], condition kappa and seed seed0 + b.
template <class T> std::vector<T> problem_batch(int m, int n, const std::vector<int> &nplus,
                                                double kappa, uint64_t seed0) {
  std::vector<T> G;
  G.reserve(size_t(m) * n * nplus.size());
  for (size_t b = 0; b < nplus.size(); ++b) {
    const ht::Problem<T> P = ht::make_problem<T>(m, n, nplus[b], kappa, 1, seed0 + b);
    G.insert(G.end(), P.G.begin(), P.G.end());
  }
  return G;
}

// Every path of the plan in one variable-size call on device data: small
// (the fused kernel), tall (the QR front end where the plan takes it),
// beyond the fused kernel (the blocked path), an empty matrix. Each matrix's ratios against its
// exact values, and the path reported.
TYPED_TEST(GpuHsvdForms, DeviceVariableSizesOnEveryPath) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  using R = R_t<T>;
  int big = 8;
  while (cu::fits(prec<T>(), big, big, true)) big += 8;
  const std::vector<std::array<int, 3>> shapes{{20, 12, 5},         {48, 48, 20}, {600, 24, 10},
                                               {big, big, big / 3}, {0, 0, 0},    {33, 17, 17}};
  const int batch = int(shapes.size());
  std::vector<ht::Problem<T>> P;
  std::vector<std::unique_ptr<Dev<T>>> dA, dU, dV;
  std::vector<std::unique_ptr<Dev<R>>> dS;
  std::vector<int> m, n, nplus, ld_m, ld_n;
  std::vector<const T *> A;
  std::vector<R *> S;
  std::vector<T *> U, V;
  for (int i = 0; i < batch; ++i) {
    const auto [mi, ni, pi] = shapes[i];
    P.push_back(ni > 0 ? ht::make_problem<T>(mi, ni, pi, 1e3, 1, 900 + i) : ht::Problem<T>{});
    m.push_back(mi);
    n.push_back(ni);
    nplus.push_back(pi);
    ld_m.push_back(std::max(mi, 1));
    ld_n.push_back(std::max(ni, 1));
    dA.push_back(std::make_unique<Dev<T>>(size_t(mi) * ni));
    dU.push_back(std::make_unique<Dev<T>>(size_t(mi) * ni));
    dV.push_back(std::make_unique<Dev<T>>(size_t(ni) * ni));
    dS.push_back(std::make_unique<Dev<R>>(size_t(ni)));
    if (ni > 0) dA.back()->put(P.back().G);
    A.push_back(dA.back()->p);
    S.push_back(dS.back()->p);
    U.push_back(dU.back()->p);
    V.push_back(dV.back()->p);
  }
  Dev<int> info(batch), sweeps(batch);
  std::vector<int> path(batch, -1);
  bsvd_options_t o = bsvd::default_options();
  o.path = path.data();
  ASSERT_EQ(bsvd::gehsvj_vbatched<T>(bsvd::Job::Vectors, m.data(), n.data(), nplus.data(), A.data(),
                                     ld_m.data(), S.data(), U.data(), ld_m.data(), V.data(),
                                     ld_n.data(), info.p, sweeps.p, batch, o),
            0)
      << bsvd_last_error();
  const std::vector<int> hinfo = info.get(batch);
  EXPECT_EQ(path[0], BSVD_PATH_CUDA_FUSED);
  EXPECT_EQ(path[1], BSVD_PATH_CUDA_FUSED);
  EXPECT_TRUE(path[2] == BSVD_PATH_CUDA_QR || path[2] == BSVD_PATH_CUDA_FUSED) << path[2];
  EXPECT_EQ(path[3], BSVD_PATH_CUDA_PAIR_SVD);
  EXPECT_EQ(path[4], BSVD_PATH_TRIVIAL);
  EXPECT_EQ(hinfo[4], 0);
  for (int i = 0; i < batch; ++i) {
    if (n[i] == 0) continue;
    SCOPED_TRACE(testing::Message() << "matrix " << i << ", " << m[i] << " x " << n[i]);
    ASSERT_EQ(hinfo[i], 0);
    ht::Out<T> r;
    r.S = dS[i]->get(n[i]);
    r.U = dU[i]->get(size_t(m[i]) * n[i]);
    r.V = dV[i]->get(size_t(n[i]) * n[i]);
    ht::expect_ratios(ht::measure(P[i], r), "device vbatched");
  }
}

// A strided host batch streamed through the GPU in chunks of 64 KiB: info
// and paths as the batch copied at once, the values to rounding (the
// chunks' launches may take other lanes per column pair).
TEST(GpuHsvdForms, HostDataInChunks) {
  SKIP_WITHOUT_GPU();
  using T = double;
  const int m = 24, n = 16, batch = 600;
  const size_t mn = size_t(m) * n;
  std::vector<int> nplus(batch);
  for (int b = 0; b < batch; ++b) nplus[b] = b % (n + 1);
  const std::vector<T> G = problem_batch<T>(m, n, nplus, 1e3, 1000);
  struct Run {
    std::vector<T> S, U, V;
    std::vector<int> info, path;
  };
  auto solve = [&](long chunk) {
    bsvd::detail::Overrides ov = bsvd::detail::current_overrides();
    ov.host_chunk = chunk;
    bsvd::detail::ScopedOverrides scope(ov);
    Run r;
    r.S.assign(size_t(n) * batch, -7);
    r.U.assign(mn * batch, -3);
    r.V.assign(size_t(n) * n * batch, -3);
    r.info.assign(batch, -99);
    r.path.assign(batch, -1);
    bsvd_options_t o = bsvd::default_options();
    o.path = r.path.data();
    EXPECT_EQ(bsvd::gehsvj_strided_batched<T>(bsvd::Job::Vectors, m, n, nplus.data(), G.data(), m,
                                              int64_t(mn), r.S.data(), n, r.U.data(), m,
                                              int64_t(mn), r.V.data(), n, int64_t(n) * n,
                                              r.info.data(), nullptr, batch, o),
              0)
        << bsvd_last_error();
    return r;
  };
  const Run once = solve(0), chunks = solve(64 << 10);
  EXPECT_EQ(chunks.info, once.info);
  EXPECT_EQ(chunks.path, once.path);
  for (int b = 0; b < batch; ++b) {
    ASSERT_EQ(once.info[b], 0) << "matrix " << b;
    for (int j = 0; j < n; ++j) {
      const size_t k = size_t(b) * n + j;
      ASSERT_LE(std::abs(chunks.S[k] - once.S[k]), 64 * n * ht::uroff<T>() * once.S[size_t(b) * n])
          << "matrix " << b << ", S[" << j << "]";
    }
  }
  for (int b : {0, 7, 16, 599}) {
    const ht::Problem<T> P = ht::make_problem<T>(m, n, nplus[b], 1e3, 1, 1000 + b);
    ht::Out<T> r;
    r.S.assign(chunks.S.begin() + long(b) * n, chunks.S.begin() + long(b + 1) * n);
    r.U.assign(chunks.U.begin() + long(b * mn), chunks.U.begin() + long((b + 1) * mn));
    r.V.assign(chunks.V.begin() + long(b) * n * n, chunks.V.begin() + long(b + 1) * n * n);
    ht::expect_ratios(ht::measure(P, r), "streamed");
  }
}

// The stream-ordered form on device data, in a workspace of
// bsvd_workspace_size_hsvd bytes: the blocking call's bits, also when
// captured in a CUDA graph and launched (twice, the outputs cleared in
// between).
void expect_async_gives_the_blocking_bits(int m, int n, int batch) {
  using T = std::complex<float>;
  using R = float;
  const size_t mn = size_t(m) * n, nn = size_t(n) * n;
  std::vector<int> nplus(batch);
  for (int b = 0; b < batch; ++b) nplus[b] = (5 * b) % (n + 1);
  const std::vector<T> G = problem_batch<T>(m, n, nplus, 1e2, 1200);
  Dev<T> dA(mn * batch), dU(mn * batch), dV(nn * batch);
  Dev<R> dS(size_t(n) * batch);
  Dev<int> info(batch);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), 0);
  bsvd_options_t o = bsvd::default_options();
  o.stream = s;
  size_t ws_bytes = 0;
  ASSERT_EQ(bsvd_workspace_size_hsvd('c', BSVD_JOB_VECTORS, m, n, batch, &o, &ws_bytes), 0);
  ASSERT_GT(ws_bytes, 0u);
  Dev<unsigned char> ws(ws_bytes);
  o.workspace = ws.p;
  o.workspace_bytes = ws_bytes;
  auto call = [&](bool async) {
    dA.put(G);
    return async ? bsvd::gehsvj_strided_batched_async<T>(
                       bsvd::Job::Vectors, m, n, nplus.data(), dA.p, m, int64_t(mn), dS.p, n, dU.p,
                       m, int64_t(mn), dV.p, n, int64_t(nn), info.p, nullptr, batch, o)
                 : bsvd::gehsvj_strided_batched<T>(bsvd::Job::Vectors, m, n, nplus.data(), dA.p, m,
                                                   int64_t(mn), dS.p, n, dU.p, m, int64_t(mn), dV.p,
                                                   n, int64_t(nn), info.p, nullptr, batch, o);
  };
  auto clear = [&]() {
    ASSERT_EQ(cudaMemset(dS.p, 0, size_t(n) * batch * sizeof(R)), 0);
    ASSERT_EQ(cudaMemset(dU.p, 0, mn * batch * sizeof(T)), 0);
    ASSERT_EQ(cudaMemset(info.p, 0xff, batch * sizeof(int)), 0);
  };
  ASSERT_EQ(call(false), 0) << bsvd_last_error();
  const std::vector<R> S0 = dS.get(size_t(n) * batch);
  const std::vector<T> U0 = dU.get(mn * batch);
  const std::vector<int> i0 = info.get(batch);
  for (int b = 0; b < batch; ++b) ASSERT_EQ(i0[b], 0) << "matrix " << b;
  clear();
  ASSERT_EQ(call(true), 0) << bsvd_last_error();
  ASSERT_EQ(cudaStreamSynchronize(s), 0);
  EXPECT_TRUE(dS.get(size_t(n) * batch) == S0) << "_async: S";
  EXPECT_TRUE(dU.get(mn * batch) == U0) << "_async: U";
  EXPECT_TRUE(info.get(batch) == i0) << "_async: info";

  dA.put(G);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), 0);
  const bsvd_status_t st = bsvd::gehsvj_strided_batched_async<T>(
      bsvd::Job::Vectors, m, n, nplus.data(), dA.p, m, int64_t(mn), dS.p, n, dU.p, m, int64_t(mn),
      dV.p, n, int64_t(nn), info.p, nullptr, batch, o);
  ASSERT_EQ(cudaStreamEndCapture(s, &graph), 0);
  ASSERT_EQ(st, 0) << bsvd_last_error();
  std::fill(nplus.begin(), nplus.end(), 0); // the graph keeps the signatures it captured
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), 0);
  for (int rep = 0; rep < 2; ++rep) {
    clear();
    dA.put(G);
    ASSERT_EQ(cudaGraphLaunch(exec, s), 0);
    ASSERT_EQ(cudaStreamSynchronize(s), 0);
    EXPECT_TRUE(dS.get(size_t(n) * batch) == S0) << "graph launch " << rep << ": S";
    EXPECT_TRUE(dU.get(mn * batch) == U0) << "graph launch " << rep << ": U";
    EXPECT_TRUE(info.get(batch) == i0) << "graph launch " << rep << ": info";
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
}

TEST(GpuHsvdForms, AsyncAndCapturedFused) {
  SKIP_WITHOUT_GPU();
  expect_async_gives_the_blocking_bits(40, 24, 50);
}

// Beyond the fused kernel: the blocked path's device loop (a graph node),
// its breakdown rule and early finishes on the device.
TEST(GpuHsvdForms, AsyncAndCapturedBlocked) {
  SKIP_WITHOUT_GPU();
  int n = 8;
  while (cu::fits('c', n, n, true)) n += 8;
  expect_async_gives_the_blocking_bits(n + 16, n, 4);
}

// The unpivoted QR front end (opts.qr = 1) on tall matrices: the fused
// kernel's hyperbolic instances on R with G's signature, U = Q U_R; the
// ratios pass and the values agree with the one-kernel solver's on G.
TYPED_TEST(GpuHsvdForms, QrFrontEnd) {
  SKIP_WITHOUT_GPU();
  using T = TypeParam;
  using R = R_t<T>;
  const int m = 300, n = 20, batch = 3;
  const size_t mn = size_t(m) * n, nn = size_t(n) * n;
  std::vector<ht::Problem<T>> P;
  std::vector<T> G;
  std::vector<int> nplus{0, 7, 20};
  for (int b = 0; b < batch; ++b) {
    P.push_back(ht::make_problem<T>(m, n, nplus[b], 1e3, 1, 1300 + b));
    G.insert(G.end(), P.back().G.begin(), P.back().G.end());
  }
  auto solve = [&](int qr, std::vector<int> &path) {
    std::vector<R> S(size_t(n) * batch);
    std::vector<T> U(mn * batch), V(nn * batch);
    std::vector<int> info(batch, -99);
    path.assign(batch, -1);
    bsvd_options_t o = bsvd::default_options();
    o.qr = qr;
    o.path = path.data();
    EXPECT_EQ(bsvd::gehsvj_strided_batched<T>(bsvd::Job::Vectors, m, n, nplus.data(), G.data(), m,
                                              int64_t(mn), S.data(), n, U.data(), m, int64_t(mn),
                                              V.data(), n, int64_t(nn), info.data(), nullptr, batch,
                                              o),
              0)
        << bsvd_last_error();
    std::vector<ht::Out<T>> out(batch);
    for (int b = 0; b < batch; ++b) {
      out[b].S.assign(S.begin() + long(b) * n, S.begin() + long(b + 1) * n);
      out[b].U.assign(U.begin() + long(b * mn), U.begin() + long((b + 1) * mn));
      out[b].V.assign(V.begin() + long(b * nn), V.begin() + long((b + 1) * nn));
      out[b].info = info[b];
    }
    return out;
  };
  std::vector<int> pq, pf;
  const auto q = solve(1, pq), f = solve(-1, pf);
  for (int b = 0; b < batch; ++b) {
    SCOPED_TRACE(testing::Message() << "matrix " << b << ", nplus " << nplus[b]);
    EXPECT_EQ(pq[b], BSVD_PATH_CUDA_QR);
    EXPECT_NE(pf[b], BSVD_PATH_CUDA_QR);
    ASSERT_EQ(q[b].info, 0);
    ASSERT_EQ(f[b].info, 0);
    const ht::Ratios rq = ht::measure(P[b], q[b]);
    ht::expect_ratios(rq, "QR front end");
    for (int j = 0; j < n; ++j)
      EXPECT_LE(std::abs(q[b].S[j] - f[b].S[j]), 30 * n * ht::uroff<T>() * rq.kappaV * f[b].S[0]);
  }
}

// Host data over every visible GPU (opts.device_count): the values of the
// one-GPU call to rounding, the same info.
TEST(GpuHsvdForms, SeveralDevices) {
  SKIP_WITHOUT_GPU();
  using T = double;
  const int m = 30, n = 20, batch = 64;
  const size_t mn = size_t(m) * n;
  std::vector<int> nplus(batch);
  for (int b = 0; b < batch; ++b) nplus[b] = b % (n + 1);
  const std::vector<T> G = problem_batch<T>(m, n, nplus, 1e3, 1400);
  auto solve = [&](int devices, std::vector<int> &info) {
    std::vector<T> S(size_t(n) * batch, -7);
    info.assign(batch, -99);
    bsvd_options_t o = bsvd::default_options();
    o.device_count = devices;
    EXPECT_EQ(bsvd::gehsvj_strided_batched<T>(bsvd::Job::Values, m, n, nplus.data(), G.data(), m,
                                              int64_t(mn), S.data(), n, nullptr, 1, 0, nullptr, 1,
                                              0, info.data(), nullptr, batch, o),
              0)
        << bsvd_last_error();
    return S;
  };
  std::vector<int> i1, ia;
  const std::vector<T> s1 = solve(0, i1), sa = solve(BSVD_DEVICES_ALL, ia);
  EXPECT_EQ(ia, i1);
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < n; ++j)
      ASSERT_LE(std::abs(sa[size_t(b) * n + j] - s1[size_t(b) * n + j]),
                64 * n * ht::uroff<T>() * s1[size_t(b) * n])
          << "matrix " << b;
}

} // namespace
