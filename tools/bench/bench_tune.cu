// `bsvd bench --tune-tlp`: the blocked eigensolver plan's two TLP
// thresholds measured on batches of growing count (bench.hpp,
// bench_tune_tlp).
#include "bench_gpu.cuh"

namespace bsvd::cli {

namespace {

using namespace gpu_bench;

template <class T> bool bench_tune_tlp_t(char precision, int n, std::vector<BenchRow> &rows) {
  using R = real_t<T>;
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    cudaGetLastError();
    BenchRow r;
    r.solver = "tune-tlp";
    r.note = "no CUDA GPU visible";
    rows.push_back(r);
    return false;
  }
  cudaDeviceProp prop{};
  BENCH_CUDA(cudaGetDeviceProperties(&prop, 0));
  const std::string dev = prop.name;
  const int nb = detail::plan::kDefaultBlockWidth;
  const int nblk = (n + nb - 1) / nb, pairs_per = nblk <= 1 ? 1 : (nblk + 1) / 2;
  const int kmax_batch = 1024;
  std::vector<T> hA(size_t(kmax_batch) * n * n);
  for (int b = 0; b < kmax_batch; ++b)
    testing::generate<T>(testing::Family::Random, n, n, testing::default_kappa<T>(), 7000u + b,
                         hA.data() + size_t(b) * n * n, n);
  DevBuf<T> dA(hA.size()), dU(hA.size()), dV(hA.size());
  DevBuf<R> dS(size_t(kmax_batch) * n);
  DevBuf<int> dinfo(kmax_batch);
  BENCH_CUDA(cudaMemcpy(dA.p, hA.data(), hA.size() * sizeof(T), cudaMemcpyHostToDevice));
  std::printf(
      "tune-tlp (%s, %c, %dx%d, nb %d, %d pairs per matrix per step): eigensolver stage ms\n"
      "  batch  pairs  TLP(32)      32     128     256\n",
      dev.c_str(), precision, n, n, nb, pairs_per);
  std::vector<std::array<double, 3>> times; // per batch: eigensolver ms of plans 32, 128, 256
  std::vector<long> npairs;
  for (int batch = 1; batch <= kmax_batch; batch *= 2) {
    bsvd_options_t o;
    bsvd_options_init(&o);
    o.backend = BSVD_BACKEND_CUDA;
    o.pair_solver = BSVD_PAIR_GRAM;
    size_t ws = 0;
    bsvd_workspace_size(detail::precision_of<T>(), BSVD_JOB_VECTORS, n, n, batch, &o, &ws);
    DevBuf<unsigned char> dws(ws);
    o.workspace = dws.p;
    o.workspace_bytes = ws;
    double evd[3] = {0, 0, 0};
    bool failed = false;
    for_each_evd_plan([&](const std::string &nt) {
      auto call = [&] {
        return gesvj_strided_batched<T>(Job::Vectors, n, n, dA.p, n, int64_t(n) * n, dS.p, n, dU.p,
                                        n, int64_t(n) * n, dV.p, n, int64_t(n) * n, dinfo.p,
                                        nullptr, batch, o);
      };
      failed = failed || call() != 0; // warm-up
      double best = 1e300;
      for (int r = 0; r < 2; ++r) { // profiled runs: the eigensolver stage, best of two
        profiled([&] { failed = failed || call() != 0; });
        best = std::min(best, detail::cuda::blocked_last_profile().evd);
      }
      evd[detail::plan::evd_plan_index(std::stoi(nt))] = best;
      BenchRow row;
      row.solver = "tune-evd" + nt;
      row.device = dev;
      row.c.precision = precision;
      row.c.family = "random";
      row.c.m = row.c.n = n;
      row.c.batch = batch;
      row.ms = best;
      row.pass = !failed;
      row.note =
          "eigensolver stage only; TLP(32) = " + std::to_string(long(batch) * pairs_per * 32);
      rows.push_back(row);
    });
    if (failed) return false;
    const long tlp = long(batch) * pairs_per * 32;
    std::printf("  %5d %6ld %8ld %7.2f %7.2f %7.2f\n", batch, long(batch) * pairs_per, tlp, evd[0],
                evd[1], evd[2]);
    times.push_back({evd[0], evd[1], evd[2]});
    npairs.push_back(long(batch) * pairs_per);
  }
  // The pair of thresholds (tau_warp, tau_block) whose rule
  // (evd_threads_rule) comes closest to the best plan of every batch: least
  // sum of time / best time, over thresholds a quarter octave apart. The
  // measured batches only bound each crossover (every tau between two
  // measured TLPs picks the same plans), so of the run of equally good
  // values of each threshold the middle one (geometric) is taken: powers of
  // two alone put tau on a measured point, and a batch just below it (d 200
  // x 128^2: 800 pairs between the measured 512 and 1024) took the slower
  // plan. A run that reaches the grid's top (the warp plan never won) has
  // no middle: its lowest value one quarter octave up is taken, and the
  // output says so.
  constexpr int kGrid = 73; // 256 ... 2^26
  auto grid = [](int j) { return std::lround(256.0 * std::pow(2.0, j / 4.0)); };
  auto loss_of = [&](long tw, long tb) {
    double loss = 0;
    for (size_t i = 0; i < times.size(); ++i) {
      const int nt = detail::plan::evd_threads_rule(npairs[i], tw, tb);
      loss += times[i][detail::plan::evd_plan_index(nt)] /
              std::min({times[i][0], times[i][1], times[i][2]});
    }
    return loss;
  };
  double best_loss = 1e300;
  for (int jw = 0; jw < kGrid; ++jw)
    for (int jb = 0; jb < kGrid; ++jb) best_loss = std::min(best_loss, loss_of(grid(jw), grid(jb)));
  int w0 = kGrid, w1 = -1, b0 = kGrid, b1 = -1;
  for (int jw = 0; jw < kGrid; ++jw)
    for (int jb = 0; jb < kGrid; ++jb)
      if (loss_of(grid(jw), grid(jb)) <= best_loss + 1e-9) {
        w0 = std::min(w0, jw);
        w1 = std::max(w1, jw);
        b0 = std::min(b0, jb);
        b1 = std::max(b1, jb);
      }
  auto pick = [&](int lo, int hi) {
    return hi == kGrid - 1 ? std::min(lo + 1, hi) : (lo + hi) / 2;
  };
  const long tw = grid(pick(w0, w1)), tb = grid(pick(b0, b1));
  const char prec = detail::precision_of<T>();
  const bool full = detail::plan::full_pairs(n, nb); // the table's threshold for these steps
  std::printf("measured TLP thresholds: tau_warp %ld (equally good %ld .. %ld%s), tau_block %ld "
              "(%ld .. %ld%s); mean time / best plan %.3f; the tuning table has tau_warp %ld, "
              "tau_block %ld for this precision and %s steps\n",
              tw, grid(w0), grid(w1), w1 == kGrid - 1 ? ", open above" : "", tb, grid(b0), grid(b1),
              b1 == kGrid - 1 ? ", open above" : "",
              best_loss / double(std::max<size_t>(times.size(), 1)),
              detail::plan::tlp_warp(detail::cuda::current_tuning(), prec, full),
              detail::plan::tlp_block(detail::cuda::current_tuning()), full ? "full" : "ragged");
  return true;
}

} // namespace

bool bench_tune_tlp(char precision, int n, std::vector<BenchRow> &rows) {
  try {
    switch (precision) {
    case 's': return bench_tune_tlp_t<float>(precision, n, rows);
    case 'd': return bench_tune_tlp_t<double>(precision, n, rows);
    case 'c': return bench_tune_tlp_t<std::complex<float>>(precision, n, rows);
    default: return bench_tune_tlp_t<std::complex<double>>(precision, n, rows);
    }
  } catch (const CudaFail &f) {
    BenchRow r;
    r.solver = "tune-tlp";
    r.note = "failed: " + f.what;
    rows.push_back(r);
    return false;
  }
}

} // namespace bsvd::cli
