// The stream-ordered forms (bsvd_<p>gesvj_<form>_async, bsvd.h): for every
// GPU path they give what the blocking call gives (the same bits where the
// path runs the same launches; the blocked path, whose sweep loop then runs
// on the device with one plan for all sweeps, the same info and T1-T4), they
// return while the stream is still busy, and a captured call replays with
// new data in the same buffers to the bits of an uncaptured call, without
// allocating when the workspace is given.
#include "gpu_test_util.hpp"

#include "cuda/blocked/blocked.hpp"
#include "cuda/common/graph_call.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>

namespace {

// Keeps the GPU busy for about `ns` nanoseconds (the asynchrony test).
__global__ void spin_kernel(long long ns) {
  const long long t0 = clock64();
  // clock64 counts SM cycles: ~1.5-2 GHz, so ns cycles last >= ns / 2 ns.
  while (clock64() - t0 < ns) {}
}

// One uniform batch in device memory, solved by the blocking or the _async
// strided form on `stream`.
template <class T> struct DeviceBatch {
  using R = R_t<T>;
  int m, n, k, batch;
  bool vectors;
  T *A = nullptr, *U = nullptr, *V = nullptr;
  R *S = nullptr;
  int *info = nullptr, *sweeps = nullptr;
  DeviceBatch(int m_, int n_, int batch_, bool vectors_)
      : m(m_), n(n_), k(std::min(m_, n_)), batch(batch_), vectors(vectors_) {
    EXPECT_EQ(cudaMalloc(&A, bytes_a()), cudaSuccess);
    EXPECT_EQ(cudaMalloc(&S, size_t(batch) * k * sizeof(R) + 8), cudaSuccess);
    EXPECT_EQ(cudaMalloc(&U, size_t(batch) * m * k * sizeof(T) + 8), cudaSuccess);
    EXPECT_EQ(cudaMalloc(&V, size_t(batch) * n * k * sizeof(T) + 8), cudaSuccess);
    EXPECT_EQ(cudaMalloc(&info, size_t(batch) * sizeof(int)), cudaSuccess);
    EXPECT_EQ(cudaMalloc(&sweeps, size_t(batch) * sizeof(int)), cudaSuccess);
  }
  ~DeviceBatch() {
    cudaFree(A);
    cudaFree(S);
    cudaFree(U);
    cudaFree(V);
    cudaFree(info);
    cudaFree(sweeps);
  }
  size_t bytes_a() const { return size_t(batch) * m * n * sizeof(T); }
  void put(const std::vector<T> &h, cudaStream_t s) {
    ASSERT_EQ(cudaMemcpyAsync(A, h.data(), bytes_a(), cudaMemcpyHostToDevice, s), cudaSuccess);
  }
  // Outputs preset to garbage, so that a call that writes nothing is seen.
  void poison(cudaStream_t s) {
    cudaMemsetAsync(S, 0xff, size_t(batch) * k * sizeof(R), s);
    cudaMemsetAsync(U, 0xff, size_t(batch) * m * k * sizeof(T), s);
    cudaMemsetAsync(V, 0xff, size_t(batch) * n * k * sizeof(T), s);
    cudaMemsetAsync(info, 0x7f, size_t(batch) * sizeof(int), s);
    cudaMemsetAsync(sweeps, 0x7f, size_t(batch) * sizeof(int), s);
  }
  bsvd_status_t call(bool async, bsvd_options_t o, cudaStream_t s, int *path) {
    o.stream = s;
    o.path = path;
    const auto job = vectors ? bsvd::Job::Vectors : bsvd::Job::Values;
    auto f = async ? &bsvd::gesvj_strided_batched_async<T> : &bsvd::gesvj_strided_batched<T>;
    return f(job, m, n, A, m, int64_t(m) * n, S, k, vectors ? U : nullptr, m, int64_t(m) * k,
             vectors ? V : nullptr, n, int64_t(n) * k, info, sweeps, batch, o);
  }
  Solved<T> get() const { // after the stream
    Solved<T> r;
    r.m = m;
    r.n = n;
    r.k = k;
    r.batch = batch;
    r.status = 0;
    r.S.resize(size_t(batch) * k);
    r.info.resize(batch);
    r.sweeps.resize(batch);
    cudaMemcpy(r.S.data(), S, r.S.size() * sizeof(R), cudaMemcpyDeviceToHost);
    cudaMemcpy(r.info.data(), info, batch * sizeof(int), cudaMemcpyDeviceToHost);
    cudaMemcpy(r.sweeps.data(), sweeps, batch * sizeof(int), cudaMemcpyDeviceToHost);
    if (vectors) {
      r.U.resize(size_t(batch) * m * k);
      r.V.resize(size_t(batch) * n * k);
      cudaMemcpy(r.U.data(), U, r.U.size() * sizeof(T), cudaMemcpyDeviceToHost);
      cudaMemcpy(r.V.data(), V, r.V.size() * sizeof(T), cudaMemcpyDeviceToHost);
    }
    return r;
  }
};

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { EXPECT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess); }
  ~Stream() { cudaStreamDestroy(s); }
};

// What one case runs: a path's options and the path every matrix must take.
struct Case {
  int m, n, batch;
  int path;
  int qr = 0, precondition = -1, block_size = 0;
  bsvd_pair_solver_t pair = BSVD_PAIR_AUTO;
  bool vectors = true;
  Family family = Family::Random;
  Family replay_family = Family::Random; // expect_capture_replays' second round
  bool blocked() const {
    return path == BSVD_PATH_CUDA_BLOCKED || path == BSVD_PATH_CUDA_PAIR_EVD ||
           path == BSVD_PATH_CUDA_PAIR_SVD || path == BSVD_PATH_CUDA_QRCP ||
           path == BSVD_PATH_CUDA_GRAM;
  }
};

bsvd_options_t case_options(const Case &c) {
  bsvd_options_t o = cuda_options();
  o.qr = c.qr;
  o.precondition = c.precondition;
  o.block_size = c.block_size;
  o.pair_solver = c.pair;
  return o;
}

// The blocking call and the _async call on the same batch: the planned path
// reported at enqueue is the path taken; info equal; the same bits on the
// paths that run the same launches; the blocked path's sweep loop on the
// device: sweeps within 1, values within 32 k u of the blocking call's,
// T1-T4 on a sample.
template <class T> void expect_async_matches_blocking(const Case &c, uint64_t seed) {
  SKIP_WITHOUT_GPU();
  const std::vector<T> A = family_batch<T>(c.family, c.m, c.n, c.batch, seed);
  Stream st;
  DeviceBatch<T> d(c.m, c.n, c.batch, c.vectors);
  const bsvd_options_t o = case_options(c);
  std::vector<int> pb(c.batch, -1), pa(c.batch, -1);
  d.put(A, st.s);
  d.poison(st.s);
  ASSERT_EQ(d.call(false, o, st.s, pb.data()), 0) << bsvd_last_error();
  const Solved<T> blocking = d.get();
  d.poison(st.s);
  ASSERT_EQ(d.call(true, o, st.s, pa.data()), 0) << bsvd_last_error();
  ASSERT_EQ(cudaStreamSynchronize(st.s), cudaSuccess);
  const Solved<T> async = d.get();
  for (int b = 0; b < c.batch; ++b) {
    ASSERT_EQ(pb[b], c.path) << "matrix " << b;
    ASSERT_EQ(pa[b], c.path) << "matrix " << b;
  }
  EXPECT_EQ(async.info, blocking.info);
  if (!c.blocked()) {
    expect_same_bits(async, blocking);
    return;
  }
  const double u = uroff<T>();
  for (int b = 0; b < c.batch; ++b)
    EXPECT_LE(std::abs(async.sweeps[b] - blocking.sweeps[b]), 1) << "matrix " << b;
  for (size_t j = 0; j < async.S.size(); ++j) {
    const size_t b = j / size_t(async.k);
    const double s1 = std::max(double(blocking.S[b * async.k]), 1e-300);
    EXPECT_LE(std::abs(double(async.S[j]) - double(blocking.S[j])) / s1, 32.0 * async.k * u)
        << "value " << j;
  }
  for (int b : {0, c.batch / 2, c.batch - 1}) {
    const auto q = ratios(async, A, b);
    EXPECT_TRUE(q.pass()) << "matrix " << b << ": " << ratio_text(q);
  }
}

// Captured with the workspace given: the graph allocates nothing; replays
// with new data in the same A give the bits of an uncaptured _async call on
// that data.
template <class T> void expect_capture_replays(const Case &c, uint64_t seed) {
  SKIP_WITHOUT_GPU();
  Stream st;
  DeviceBatch<T> d(c.m, c.n, c.batch, c.vectors);
  bsvd_options_t o = case_options(c);
  size_t bytes = 0, blocking_bytes = 0;
  const bsvd_job_t job = c.vectors ? BSVD_JOB_VECTORS : BSVD_JOB_VALUES;
  ASSERT_EQ(bsvd_workspace_size_async(prec<T>(), job, c.m, c.n, c.batch, &o, &bytes), 0)
      << bsvd_last_error();
  ASSERT_EQ(bsvd_workspace_size(prec<T>(), job, c.m, c.n, c.batch, &o, &blocking_bytes), 0);
  EXPECT_LE(bytes, blocking_bytes); // (no staging of host data)
  void *ws = nullptr;
  ASSERT_EQ(cudaMalloc(&ws, std::max<size_t>(bytes, 1)), cudaSuccess);
  o.workspace = bytes ? ws : nullptr;
  o.workspace_bytes = bytes;

  const std::vector<T> A0 = family_batch<T>(c.family, c.m, c.n, c.batch, seed);
  d.put(A0, st.s);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(st.s, cudaStreamCaptureModeGlobal), cudaSuccess);
  const bsvd_status_t status = d.call(true, o, st.s, nullptr);
  const std::string err = bsvd_last_error();
  ASSERT_EQ(cudaStreamEndCapture(st.s, &graph), cudaSuccess);
  ASSERT_EQ(status, 0) << err;
  size_t nodes = 0;
  ASSERT_EQ(cudaGraphGetNodes(graph, nullptr, &nodes), cudaSuccess);
  std::vector<cudaGraphNode_t> all(nodes);
  ASSERT_EQ(cudaGraphGetNodes(graph, all.data(), &nodes), cudaSuccess);
  for (cudaGraphNode_t x : all) {
    cudaGraphNodeType t;
    ASSERT_EQ(cudaGraphNodeGetType(x, &t), cudaSuccess);
    EXPECT_NE(t, cudaGraphNodeTypeMemAlloc);
    EXPECT_NE(t, cudaGraphNodeTypeMemFree);
    EXPECT_NE(t, cudaGraphNodeTypeHost);
  }
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  for (int round = 1; round <= 2; ++round) {
    const std::vector<T> A = family_batch<T>(round == 1 ? c.family : c.replay_family, c.m, c.n,
                                             c.batch, seed + 1000 * round);
    d.put(A, st.s);
    d.poison(st.s);
    ASSERT_EQ(d.call(true, o, st.s, nullptr), 0) << bsvd_last_error();
    ASSERT_EQ(cudaStreamSynchronize(st.s), cudaSuccess);
    const Solved<T> eager = d.get();
    d.poison(st.s);
    ASSERT_EQ(cudaGraphLaunch(exec, st.s), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(st.s), cudaSuccess);
    const Solved<T> replay = d.get();
    expect_same_bits(replay, eager);
    EXPECT_EQ(replay.info, eager.info);
    for (int b : {0, c.batch - 1}) {
      const auto q = ratios(replay, A, b);
      EXPECT_TRUE(q.pass()) << "round " << round << " matrix " << b << ": " << ratio_text(q);
    }
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaFree(ws);
}

// An uncaptured call that repeats an earlier one (the same buffers, sizes
// and options) launches that call's graph again (GraphCall::replay): on
// new data in the same A it gives the bits of a call that planned and
// captured afresh (another workspace address, so another key) and reports
// the planned path; a changed option or workspace is a new call (max_sweeps
// 1 leaves matrices unconverged, which a replay of the default would not).
template <class T> void expect_repeat_replays(const Case &c, uint64_t seed) {
  SKIP_WITHOUT_GPU();
  Stream st;
  DeviceBatch<T> d(c.m, c.n, c.batch, c.vectors);
  bsvd_options_t o = case_options(c);
  size_t bytes = 0;
  const bsvd_job_t job = c.vectors ? BSVD_JOB_VECTORS : BSVD_JOB_VALUES;
  ASSERT_EQ(bsvd_workspace_size_async(prec<T>(), job, c.m, c.n, c.batch, &o, &bytes), 0)
      << bsvd_last_error();
  void *ws[2] = {nullptr, nullptr};
  for (void *&w : ws) ASSERT_EQ(cudaMalloc(&w, std::max<size_t>(bytes, 1)), cudaSuccess);
  const auto with_ws = [&](bsvd_options_t x, int i) {
    x.workspace = ws[i];
    x.workspace_bytes = bytes;
    return x;
  };
  const auto solve = [&](const bsvd_options_t &x, std::vector<int> *path) {
    std::fill(path->begin(), path->end(), -1);
    d.poison(st.s);
    EXPECT_EQ(d.call(true, x, st.s, path->data()), 0) << bsvd_last_error();
    EXPECT_EQ(cudaStreamSynchronize(st.s), cudaSuccess);
    return d.get();
  };
  std::vector<int> path(c.batch);
  d.put(family_batch<T>(Family::Random, c.m, c.n, c.batch, seed), st.s);
  solve(with_ws(o, 0), &path); // planned and captured: kept under its key
  // Two workspaces in turn, as a framework's allocator gives them: after
  // the first call of each, every call replays its own graph.
  const size_t replays = cu::GraphCall::replay_count();
  for (int round = 1; round <= 2; ++round) {
    const std::vector<T> A =
        family_batch<T>(Family::Random, c.m, c.n, c.batch, seed + 1000 * round);
    d.put(A, st.s);
    const Solved<T> fresh = solve(with_ws(o, 1), &path);
    d.put(A, st.s);
    const Solved<T> again = solve(with_ws(o, 0), &path); // the key of the first call
    for (int b = 0; b < c.batch; ++b) ASSERT_EQ(path[b], c.path) << "matrix " << b;
    expect_same_bits(again, fresh);
    EXPECT_EQ(again.info, fresh.info);
    for (int b : {0, c.batch - 1}) {
      const auto q = ratios(again, A, b);
      EXPECT_TRUE(q.pass()) << "round " << round << " matrix " << b << ": " << ratio_text(q);
    }
  }
  EXPECT_EQ(cu::GraphCall::replay_count() - replays, 3u) << "alternating calls did not replay";
  bsvd_options_t one = o;
  one.max_sweeps = 1;
  const Solved<T> capped = solve(with_ws(one, 0), &path);
  EXPECT_GT(std::count_if(capped.info.begin(), capped.info.end(), [](int i) { return i > 0; }), 0)
      << "max_sweeps = 1 ran as the replay of the default call";
  for (void *w : ws) cudaFree(w);
}

// The call returns while the stream is still busy with earlier work: it
// enqueued and did not wait.
template <class T> void expect_returns_before_device(const Case &c) {
  SKIP_WITHOUT_GPU();
  Stream st;
  DeviceBatch<T> d(c.m, c.n, c.batch, c.vectors);
  d.put(family_batch<T>(Family::Random, c.m, c.n, c.batch, 7), st.s);
  ASSERT_EQ(cudaStreamSynchronize(st.s), cudaSuccess);
  const bsvd_options_t o = case_options(c);
  // warm: the first call of a path pays its one-time setup
  ASSERT_EQ(d.call(true, o, st.s, nullptr), 0) << bsvd_last_error();
  ASSERT_EQ(cudaStreamSynchronize(st.s), cudaSuccess);
  spin_kernel<<<1, 1, 0, st.s>>>(400'000'000LL); // >= 0.2 s
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(d.call(true, o, st.s, nullptr), 0) << bsvd_last_error();
  const double host_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(cudaStreamQuery(st.s), cudaErrorNotReady) << "the call waited for the device";
  EXPECT_LT(host_ms, 100.0);
  ASSERT_EQ(cudaStreamSynchronize(st.s), cudaSuccess);
  const Solved<T> r = d.get();
  for (int b = 0; b < c.batch; ++b) EXPECT_EQ(r.info[b], 0) << "matrix " << b;
}

// The paths, each at a size the plan routes there.
const Case kTiny{3, 3, 1000, BSVD_PATH_CUDA_TINY};
const Case kFused{40, 24, 300, BSVD_PATH_CUDA_FUSED};
const Case kBlocked{160, 150, 12, BSVD_PATH_CUDA_BLOCKED};
const Case kQr{2000, 16, 40, BSVD_PATH_CUDA_QR};

TEST(GpuAsync, TinyMatchesBlocking) {
  expect_async_matches_blocking<double>(kTiny, 11);
  expect_async_matches_blocking<std::complex<float>>(kTiny, 12);
}
TEST(GpuAsync, FusedMatchesBlocking) {
  expect_async_matches_blocking<float>(kFused, 21);
  expect_async_matches_blocking<std::complex<double>>(kFused, 22);
}
TEST(GpuAsync, BlockedMatchesBlocking) {
  expect_async_matches_blocking<double>(kBlocked, 31);
  expect_async_matches_blocking<float>(kBlocked, 32);
  expect_async_matches_blocking<std::complex<float>>(kBlocked, 33);
  expect_async_matches_blocking<std::complex<double>>(kBlocked, 34);
  Case values = kBlocked;
  values.vectors = false;
  expect_async_matches_blocking<double>(values, 35);
}
// d 128^2 in a batch large enough for the lean warp eigensolver: the
// device loop launches it and the warp kernel each step, and the one the
// live matrices' inner sweeps do not call for returns at once.
TEST(GpuAsync, BlockedLargeBatchMatchesBlocking) {
  SKIP_WITHOUT_GPU();
  const Case c{128, 128, 1000, BSVD_PATH_CUDA_BLOCKED};
  expect_async_matches_blocking<double>(c, 36);
  EXPECT_GT(cu::blocked_last_profile().evd_lean_steps, 0) << "no step planned the lean kernel";
  expect_capture_replays<double>(c, 37);
}

TEST(GpuAsync, BlockedWideMatchesBlocking) {
  Case c = kBlocked;
  c.block_size = 32; // the wide instance (d)
  expect_async_matches_blocking<double>(c, 41);
}
TEST(GpuAsync, PairSolversMatchBlocking) {
  Case c = kBlocked;
  c.pair = BSVD_PAIR_SVD_SM;
  c.path = BSVD_PATH_CUDA_PAIR_SVD;
  expect_async_matches_blocking<double>(c, 51);
  c.pair = BSVD_PAIR_EVD_SM;
  c.path = BSVD_PATH_CUDA_PAIR_EVD;
  expect_async_matches_blocking<float>(c, 52);
}
TEST(GpuAsync, QrMatchesBlocking) {
  expect_async_matches_blocking<double>(kQr, 61);
  Case c{150, 150, 6, BSVD_PATH_CUDA_QRCP};
  c.precondition = 1;
  expect_async_matches_blocking<double>(c, 62);
}

// The Gram preconditioning (precondition = 2): cuSOLVER's eigensolver and
// cuBLAS's products in the call's graph.
TEST(GpuAsync, GramMatchesBlockingAndReplays) {
  Case c{150, 150, 6, BSVD_PATH_CUDA_GRAM};
  c.precondition = 2;
  expect_async_matches_blocking<double>(c, 63);
  expect_async_matches_blocking<std::complex<float>>(c, 64);
  expect_capture_replays<double>(c, 77);
  expect_repeat_replays<double>(c, 84);
}

// The Gram route chosen by the plan (precondition = 0; 200 x 128^2 is the
// work limit): its test branches on the host in a blocking call and on the
// device in the call's graph (if nodes around the eigensolver and the
// preconditioned iteration, and around the plain blocked path); both take the
// same branch -- preconditioned for random matrices, plain for cluster1's,
// whose columns are nearly orthogonal already -- and a captured graph's
// replays decide afresh on new data (random, then cluster1).
TEST(GpuAsync, GramAutoBranchesAsBlocking) {
  Case c{128, 128, 200, BSVD_PATH_CUDA_GRAM};
  c.precondition = 0;
  expect_async_matches_blocking<double>(c, 65);
  c.family = Family::Cluster1;
  expect_async_matches_blocking<double>(c, 66);
  expect_async_matches_blocking<std::complex<float>>(c, 67);
  c.family = Family::Random;
  c.replay_family = Family::Cluster1;
  expect_capture_replays<double>(c, 78);
}

// The first call of a thread (whose cuBLAS and cuSOLVER handles do not
// exist yet) on the Gram route: an uncaptured _async call, which the
// library captures into a graph of its own, and a call inside the caller's
// capture. Each runs on a fresh thread (the handles are per thread); the
// blocking call on the same data is the reference. Python's first call on
// a CUDA tensor was the first case, and failed when the handles were made
// inside the capture.
template <class T> void expect_first_gram_call(bool captured, uint64_t seed) {
  SKIP_WITHOUT_GPU();
  Case c{150, 150, 4, BSVD_PATH_CUDA_GRAM};
  c.precondition = 2;
  const std::vector<T> A = family_batch<T>(Family::Random, c.m, c.n, c.batch, seed);
  const bsvd_options_t o = case_options(c);
  bsvd_status_t status = -1;
  std::string err;
  std::vector<int> path(c.batch, -1);
  DeviceBatch<T> d(c.m, c.n, c.batch, c.vectors);
  std::thread([&] {
    Stream st;
    d.put(A, st.s);
    d.poison(st.s);
    if (!captured) {
      status = d.call(true, o, st.s, path.data());
      err = bsvd_last_error();
      cudaStreamSynchronize(st.s);
      return;
    }
    size_t bytes = 0;
    bsvd_workspace_size_async(prec<T>(), BSVD_JOB_VECTORS, c.m, c.n, c.batch, &o, &bytes);
    void *ws = nullptr;
    cudaMalloc(&ws, std::max<size_t>(bytes, 1));
    bsvd_options_t x = o;
    x.workspace = ws;
    x.workspace_bytes = bytes;
    cudaGraph_t g = nullptr;
    cudaGraphExec_t exec = nullptr;
    if (cudaStreamBeginCapture(st.s, cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
      status = d.call(true, x, st.s, path.data());
      err = bsvd_last_error();
      if (cudaStreamEndCapture(st.s, &g) != cudaSuccess && status == 0) {
        status = BSVD_STATUS_DEVICE_ERROR;
        err = "the capture was invalidated";
      }
    }
    if (status == 0 && cudaGraphInstantiate(&exec, g, 0) == cudaSuccess)
      cudaGraphLaunch(exec, st.s);
    cudaStreamSynchronize(st.s);
    if (exec) cudaGraphExecDestroy(exec);
    if (g) cudaGraphDestroy(g);
    cudaFree(ws);
  }).join();
  ASSERT_EQ(status, 0) << err;
  const Solved<T> first = d.get();
  for (int b = 0; b < c.batch; ++b) ASSERT_EQ(path[b], c.path) << "matrix " << b;
  Stream st;
  d.poison(st.s);
  ASSERT_EQ(d.call(false, o, st.s, nullptr), 0) << bsvd_last_error();
  const Solved<T> blocking = d.get();
  EXPECT_EQ(first.info, blocking.info);
  for (int b = 0; b < c.batch; ++b) {
    const auto q = ratios(first, A, b);
    EXPECT_TRUE(q.pass()) << "matrix " << b << ": " << ratio_text(q);
  }
}

TEST(GpuAsync, GramFirstCallOfAThread) {
  expect_first_gram_call<double>(false, 91);
  expect_first_gram_call<std::complex<float>>(false, 92);
}
TEST(GpuAsync, GramFirstCallInsideACapture) { expect_first_gram_call<double>(true, 93); }

// A caller's workspace below what the plan needs: a clear status naming
// opts->workspace_bytes, and nothing written.
TEST(GpuAsync, WorkspaceTooSmall) {
  SKIP_WITHOUT_GPU();
  const Case c = kBlocked;
  Stream st;
  DeviceBatch<double> d(c.m, c.n, c.batch, c.vectors);
  d.put(family_batch<double>(Family::Random, c.m, c.n, c.batch, 95), st.s);
  bsvd_options_t o = case_options(c);
  size_t bytes = 0;
  ASSERT_EQ(bsvd_workspace_size_async('d', BSVD_JOB_VECTORS, c.m, c.n, c.batch, &o, &bytes), 0);
  ASSERT_GT(bytes, 256u);
  void *ws = nullptr;
  ASSERT_EQ(cudaMalloc(&ws, bytes), cudaSuccess);
  o.workspace = ws;
  o.workspace_bytes = bytes - 256;
  for (bool async : {true, false}) {
    d.poison(st.s);
    EXPECT_EQ(d.call(async, o, st.s, nullptr), BSVD_STATUS_WORKSPACE_TOO_SMALL);
    EXPECT_NE(std::string(bsvd_last_error()).find("opts->workspace_bytes"), std::string::npos)
        << bsvd_last_error();
    ASSERT_EQ(cudaStreamSynchronize(st.s), cudaSuccess);
    int info = 0;
    cudaMemcpy(&info, d.info, sizeof(int), cudaMemcpyDeviceToHost);
    EXPECT_EQ(info, 0x7f7f7f7f) << "a refused call wrote its output";
  }
  cudaFree(ws);
}

TEST(GpuAsync, CaptureReplaysTiny) { expect_capture_replays<double>(kTiny, 71); }
TEST(GpuAsync, CaptureReplaysFused) { expect_capture_replays<std::complex<float>>(kFused, 72); }
TEST(GpuAsync, CaptureReplaysBlocked) {
  expect_capture_replays<double>(kBlocked, 73);
  expect_capture_replays<std::complex<double>>(kBlocked, 74);
}
TEST(GpuAsync, CaptureReplaysQr) {
  expect_capture_replays<float>(kQr, 75);
  Case c{150, 150, 6, BSVD_PATH_CUDA_QRCP};
  c.precondition = 1;
  expect_capture_replays<double>(c, 76);
}

TEST(GpuAsync, RepeatedCallReplays) {
  expect_repeat_replays<double>(kBlocked, 81);
  expect_repeat_replays<std::complex<float>>(kBlocked, 82);
  Case c{150, 150, 6, BSVD_PATH_CUDA_QRCP};
  c.precondition = 1;
  expect_repeat_replays<double>(c, 83);
}

TEST(GpuAsync, ReturnsBeforeTheDevice) {
  expect_returns_before_device<double>(kFused);
  expect_returns_before_device<double>(kBlocked);
  expect_returns_before_device<double>(kQr);
}

// A variable-size batch over every path: the vbatched _async form gives the
// blocking form's info and T1-T4, and replays from a graph.
TEST(GpuAsync, VariableSizes) {
  SKIP_WITHOUT_GPU();
  using T = double;
  const std::vector<std::pair<int, int>> dims = {{3, 3},   {160, 150}, {30, 20}, {2000, 16},
                                                 {20, 30}, {4, 2},     {0, 5},   {150, 160}};
  const int nb = int(dims.size());
  std::vector<int> m(nb), n(nb), ld(nb), ldv(nb);
  std::vector<T *> dA(nb), dU(nb), dV(nb);
  std::vector<double *> dS(nb);
  std::vector<std::vector<T>> hA(nb);
  for (int b = 0; b < nb; ++b) {
    m[b] = dims[b].first;
    n[b] = dims[b].second;
    ld[b] = std::max(m[b], 1);
    ldv[b] = std::max(n[b], 1);
    const int k = std::min(m[b], n[b]);
    hA[b] = family_batch<T>(Family::Random, m[b], n[b], 1, 90 + b);
    ASSERT_EQ(cudaMalloc(&dA[b], std::max<size_t>(hA[b].size(), 1) * sizeof(T)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dS[b], std::max(k, 1) * sizeof(double)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dU[b], std::max<size_t>(size_t(m[b]) * k, 1) * sizeof(T)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dV[b], std::max<size_t>(size_t(n[b]) * k, 1) * sizeof(T)), cudaSuccess);
    cudaMemcpy(dA[b], hA[b].data(), hA[b].size() * sizeof(T), cudaMemcpyHostToDevice);
  }
  int *dinfo = nullptr;
  ASSERT_EQ(cudaMalloc(&dinfo, nb * sizeof(int)), cudaSuccess);
  Stream st;
  bsvd_options_t o = plain_options();
  o.stream = st.s;
  auto read_s = [&](int b) {
    std::vector<double> s(std::min(m[b], n[b]));
    cudaMemcpy(s.data(), dS[b], s.size() * sizeof(double), cudaMemcpyDeviceToHost);
    return s;
  };
  ASSERT_EQ(bsvd_dgesvj_vbatched(BSVD_JOB_VECTORS, m.data(), n.data(), dA.data(), ld.data(),
                                 dS.data(), dU.data(), ld.data(), dV.data(), ldv.data(), dinfo,
                                 nullptr, nb, &o),
            0)
      << bsvd_last_error();
  std::vector<std::vector<double>> blocking(nb);
  for (int b = 0; b < nb; ++b) blocking[b] = read_s(b);
  std::vector<int> info(nb, 99);
  for (int pass = 0; pass < 2; ++pass) { // eager, then captured and replayed
    for (int b = 0; b < nb; ++b) cudaMemset(dS[b], 0xff, std::max(1, std::min(m[b], n[b])) * 8);
    cudaMemset(dinfo, 0x7f, nb * sizeof(int));
    cudaGraph_t g = nullptr;
    if (pass == 1)
      ASSERT_EQ(cudaStreamBeginCapture(st.s, cudaStreamCaptureModeGlobal), cudaSuccess);
    const bsvd_status_t s = bsvd_dgesvj_vbatched_async(
        BSVD_JOB_VECTORS, m.data(), n.data(), dA.data(), ld.data(), dS.data(), dU.data(), ld.data(),
        dV.data(), ldv.data(), dinfo, nullptr, nb, &o);
    const std::string err = bsvd_last_error();
    if (pass == 1) {
      ASSERT_EQ(cudaStreamEndCapture(st.s, &g), cudaSuccess);
      ASSERT_EQ(s, 0) << err;
      cudaGraphExec_t x = nullptr;
      ASSERT_EQ(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
      ASSERT_EQ(cudaGraphLaunch(x, st.s), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(st.s), cudaSuccess);
      cudaGraphExecDestroy(x);
      cudaGraphDestroy(g);
    }
    ASSERT_EQ(s, 0) << err;
    ASSERT_EQ(cudaStreamSynchronize(st.s), cudaSuccess);
    cudaMemcpy(info.data(), dinfo, nb * sizeof(int), cudaMemcpyDeviceToHost);
    for (int b = 0; b < nb; ++b) {
      EXPECT_EQ(info[b], 0) << "pass " << pass << " matrix " << b;
      const std::vector<double> sv = read_s(b);
      for (size_t j = 0; j < sv.size(); ++j)
        EXPECT_LE(std::abs(sv[j] - blocking[b][j]), 64 * 160 * uroff<T>() * blocking[b][0])
            << "pass " << pass << " matrix " << b << " value " << j;
    }
  }
  for (int b = 0; b < nb; ++b) {
    cudaFree(dA[b]);
    cudaFree(dS[b]);
    cudaFree(dU[b]);
    cudaFree(dV[b]);
  }
  cudaFree(dinfo);
}

// What the _async forms refuse, with nothing enqueued: host memory, the cpu
// backend, a plan that would solve a matrix on the host.
TEST(GpuAsync, Refusals) {
  SKIP_WITHOUT_GPU();
  const int m = 400, n = 400, k = 400; // beyond the fused kernel
  std::vector<double> hA(size_t(m) * n, 1.0), hS(k);
  std::vector<int> hinfo(1);
  bsvd_options_t o = cuda_options();
  EXPECT_EQ(bsvd_dgesvj_strided_batched_async(BSVD_JOB_VALUES, m, n, hA.data(), m, m * n, hS.data(),
                                              k, nullptr, m, 0, nullptr, n, 0, hinfo.data(),
                                              nullptr, 1, &o),
            -4);
  EXPECT_NE(std::string(bsvd_last_error()).find("device memory"), std::string::npos);
  DeviceBatch<double> d(m, n, 1, false);
  bsvd_options_t cpu = o;
  cpu.backend = BSVD_BACKEND_CPU;
  EXPECT_EQ(d.call(true, cpu, nullptr, nullptr), -18);
  bsvd_options_t ord = o;
  ord.ordering = BSVD_ORDERING_ODD_EVEN; // the blocked path's matrices: on the host
  d.poison(nullptr);
  EXPECT_EQ(d.call(true, ord, nullptr, nullptr), BSVD_STATUS_NOT_SUPPORTED);
  EXPECT_NE(std::string(bsvd_last_error()).find("host"), std::string::npos);
  int info = 0;
  cudaMemcpy(&info, d.info, sizeof(int), cudaMemcpyDeviceToHost);
  EXPECT_EQ(info, 0x7f7f7f7f) << "a refused call wrote its output";
}

} // namespace
