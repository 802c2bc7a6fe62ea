// `bsvd bench --backend cuda`: bsvd's cuda backend against cuSOLVER on the
// same data, in one process (bench.hpp):
//   bsvd-cuda                 device-resident data, preallocated workspace
//   cusolver-gesvdjBatched    m, n <= 32 (what PyTorch/JAX/CuPy call there)
//   cusolver-gesvdaStrided    rank = n, m >= n only (approximate: Gram EVD)
//   cusolver-gesvdj-loop      one gesvdj call per matrix (what the
//                             frameworks do above 32); for large batches a
//                             subset is timed and scaled (said in `note`)
//   cusolver-gesvd-loop       one QR-iteration gesvd per matrix (m >= n),
//                             subset timed and scaled likewise
//   bsvd-gesvdx-topR / cusolver-gesvdaStrided-topR   --rank R: only the R
//                             largest triplets (bench_subset.cuh)
//   bsvd-cuda-blocked / -fused  cases that fit the fused kernel (more than
//                             32 columns): the other routing (variant
//                             blocked / unblocked)
//   bsvd-cuda-groups1 / -groups2  blocked cases and --mtx: the other grouping
//                             of the Gram path's matrices (one stream or two;
//                             plan::stream_groups)
//   bsvd-cuda-serial          --mtx: the fused kernel before the blocked path
//                             on one stream (BSVD_BESIDE=0), not beside it
//   bsvd-cuda-fusedall        --mtx: every matrix that fits on the fused
//                             kernel (BSVD_FUSED_MAX_COLS=100000), not only
//                             those up to the fused column cap (plan::fused_call_cols)
//   bsvd-cuda-noqr / -qr      tall and wide cases: the other choice of the
//                             QR preprocessing (qr = -1 / 1, qr.hpp)
//   bsvd-cuda-precond         blocked cases: QR with column pivoting first
//                             (opts.precondition = 1, path cuda-qrcp)
//   bsvd-cuda-gramev          blocked cases: the Gram matrix's eigenvectors
//                             first (opts.precondition = 2, path cuda-gram)
//   (--mtx with BSVD_MTX_RANDOM=1: the files' shapes, random entries;
//   =2: random values on the files' nonzero pattern)
//   bsvd-cuda-precond / -noprecond  --mtx: the batch with the other choice
//                             of it (opts.precondition 1 / -1)
//   bsvd-cuda-gramev          --mtx: the batch with opts.precondition = 2
//   bsvd-cuda-stages          matrices on the blocked path: one more call
//                             with stage timing (load, Gram, eigensolver,
//                             update, the shared-memory pair kernels, finish;
//                             CUDA events, which serialize the launches, so
//                             the sum exceeds the plain time)
//   bsvd-cuda-gram / -evdsm / -svdsm   --pair-solver all: the blocked path
//                             with each fixed pair solver (bsvd_pair_solver_t)
//                             next to the automatic choice (bsvd-cuda)
// CUDA-event timing after a warm-up, median of c.reps; accuracy (T1,
// max(T2u, T2v), T3 against LAPACK, T4) on the first c.check_sample matrices.
// BSVD_BENCH_ONLY=1 skips the cuSOLVER rows.
// BSVD_BENCH_TUNE=1 adds rows for every lanes-per-pair value G (the alpha
// sweep that refits the lanes table, src/plan/tuning_sm90.cpp) and for the gcd rule.
#include "bench_gpu.cuh"
#include "bench_subset.cuh"

namespace bsvd::cli {

namespace {

using namespace gpu_bench;

// Returns the path the first matrix took (-1 on failure).

template <class T> int run_bsvd(const BenchCase &c, const T *hA, const T *dA,
                                const std::string &dev, const std::string &name,
                                std::vector<BenchRow> &rows, int qr = 0, int pair_solver = 0,
                                int block_size = 0, bsvd_variant_t variant = BSVD_VARIANT_AUTO,
                                int precondition = 0, std::pair<int, int> wcycle = {0, 0}) {
  using R = real_t<T>;
  const int m = c.m, n = c.n, k = std::min(m, n), batch = c.batch;
  const bool vec = c.vectors;
  BenchRow row;
  row.solver = name;
  row.device = dev;
  row.c = c;
  DevBuf<R> dS(size_t(batch) * k);
  DevBuf<T> dU(vec ? size_t(batch) * m * k : 0), dV(vec ? size_t(batch) * n * k : 0);
  DevBuf<int> dinfo(batch), dsweeps(batch);
  bsvd_options_t o;
  bsvd_options_init(&o);
  o.backend = BSVD_BACKEND_CUDA;
  o.qr = qr;
  o.pair_solver = bsvd_pair_solver_t(pair_solver);
  o.eig_sweeps = c.eig_sweeps;
  o.block_size = block_size;
  o.variant = variant;
  o.precondition = precondition;
  o.wcycle_blocks = wcycle.first;
  o.wcycle_sweeps = wcycle.second;
  const Job job = vec ? Job::Vectors : Job::Values;
  size_t ws = 0;
  bsvd_workspace_size(detail::precision_of<T>(), vec ? BSVD_JOB_VECTORS : BSVD_JOB_VALUES, m, n,
                      batch, &o, &ws);
  // _async: room to move the workspace by 256 bytes per host-time call
  // below, so that each of those is a new call (no replay of a kept graph).
  const int host_reps = std::max(c.reps, 3);
  DevBuf<unsigned char> dws(ws + (c.async ? size_t(host_reps) * 256 : 0));
  o.workspace = dws.p;
  o.workspace_bytes = ws;
  bsvd_status_t st = 0;
  auto form = c.async ? &gesvj_strided_batched_async<T> : &gesvj_strided_batched<T>;
  auto call = [&] {
    st = form(job, m, n, dA, m, int64_t(m) * n, dS.p, k, dU.p, m, int64_t(m) * k, dV.p, n,
              int64_t(n) * k, dinfo.p, dsweeps.p, batch, o);
  };
  row.ms = time_events(c.reps, nullptr, call);
  // _async: the host's time in the call (median), the device idle before
  // it: repeating the timed calls (the same buffers: a kept graph launched
  // again where the path has one, GraphCall::replay), and as new calls (the
  // workspace moved each time: planned and captured afresh).
  double host_ms = 0, host_new_ms = 0;
  if (c.async && st == 0) {
    const auto host_median = [&](bool fresh) {
      std::vector<double> h;
      for (int r = 0; r < host_reps; ++r) {
        o.workspace = dws.p + (fresh ? size_t(r + 1) * 256 : 0);
        BENCH_CUDA(cudaDeviceSynchronize());
        const auto t0 = std::chrono::steady_clock::now();
        call();
        h.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                        .count());
      }
      BENCH_CUDA(cudaDeviceSynchronize());
      o.workspace = dws.p;
      std::sort(h.begin(), h.end());
      return h[h.size() / 2];
    };
    host_ms = host_median(false);
    host_new_ms = host_median(true);
  }
  if (st != 0) {
    row.note = std::string("failed: ") + bsvd_last_error();
    rows.push_back(row);
    return -1;
  }
  fetch_and_check<T>(row, c, hA, dS, dU, size_t(m) * k, m, dV, size_t(n) * k, n,
                     std::min(c.check_sample, batch));
  std::vector<int> info(batch), sweeps(batch);
  BENCH_CUDA(cudaMemcpy(info.data(), dinfo.p, batch * sizeof(int), cudaMemcpyDeviceToHost));
  BENCH_CUDA(cudaMemcpy(sweeps.data(), dsweeps.p, batch * sizeof(int), cudaMemcpyDeviceToHost));
  double mean = 0;
  int bad = 0;
  for (int b = 0; b < batch; ++b) {
    row.max_sweeps = std::max(row.max_sweeps, sweeps[b]);
    mean += sweeps[b];
    bad += info[b] != 0;
  }
  mean /= std::max(batch, 1);
  // Which path: one more (untimed) call reporting it, with stage timing.
  std::vector<int> path(batch, -1);
  o.path = path.data();
  profiled([&] { call(); });
  o.path = nullptr;
  const bool blocked = st == 0 && is_blocked_path(path[0]);
  const int nb = block_size > 0 ? block_size : detail::plan::kDefaultBlockWidth;
  row.gflops = (blocked ? blocked_flops(c.precision, m, n, nb, vec, mean, batch)
                        : jacobi_flops(c.precision, m, n, vec, mean, batch)) /
               (row.ms * 1e6);
  if (st == 0 && path[0] == BSVD_PATH_CUDA_GRAM)
    row.gflops += gram_pre_flops(c.precision, m, n, vec, batch) / (row.ms * 1e6);
  char note[96];
  std::snprintf(note, sizeof note, "%s, mean sweeps %.2f", path_label(path[0]), mean);
  row.note = note;
  if (c.async) {
    std::snprintf(note, sizeof note, ", host %.3f ms (new buffers %.3f ms)", host_ms, host_new_ms);
    row.note += note;
  }
  if (bad) row.note += ", " + std::to_string(bad) + " matrices with info != 0";
  rows.push_back(row);
  if (blocked) {
    const detail::cuda::BlockedProfile pr = detail::cuda::blocked_last_profile();
    BenchRow sr;
    sr.solver = name + "-stages";
    sr.device = dev;
    sr.c = c;
    sr.ms = pr.load + pr.gram + pr.evd + pr.update + pr.pair_evd + pr.pair_svd + pr.finish;
    sr.max_sweeps = pr.sweeps;
    sr.note = stage_text(pr);
    rows.push_back(sr);
  }
  return path[0];
}

template <class T> void run_gesvdj_batched(const BenchCase &c, const T *hA, const T *dA,
                                           cusolverDnHandle_t h, const std::string &dev,
                                           std::vector<BenchRow> &rows) {
  using C = typename Cu<T>::C;
  using R = real_t<T>;
  const int m = c.m, n = c.n, k = std::min(m, n), batch = c.batch;
  BenchRow row;
  row.solver = "cusolver-gesvdjBatched";
  row.device = dev;
  row.c = c;
  if (m > 32 || n > 32) {
    row.note = "skipped: gesvdjBatched needs m, n <= 32";
    rows.push_back(row);
    return;
  }
  const cusolverEigMode_t jz = c.vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  gesvdjInfo_t params;
  BENCH_SOLVER(cusolverDnCreateGesvdjInfo(&params));
  DevBuf<T> dW(size_t(batch) * m * n), dU(size_t(batch) * m * m), dV(size_t(batch) * n * n);
  DevBuf<R> dS(size_t(batch) * k);
  DevBuf<int> dinfo(batch);
  int lw = 0;
  BENCH_SOLVER(Cu<T>::jb_size(h, m, n, (const C *)dW.p, m, dS.p, (const C *)dU.p, m,
                              (const C *)dV.p, n, &lw, params, batch));
  DevBuf<T> work(size_t(std::max(lw, 1)));
  auto setup = [&] {
    BENCH_CUDA(cudaMemcpy(dW.p, dA, dW.n * sizeof(T), cudaMemcpyDeviceToDevice));
  };
  auto body = [&] {
    BENCH_SOLVER(Cu<T>::jb(h, jz, m, n, (C *)dW.p, m, dS.p, (C *)dU.p, m, (C *)dV.p, n, (C *)work.p,
                           lw, dinfo.p, params, batch));
  };
  row.ms = time_events(c.reps, setup, body);
  fetch_and_check<T>(row, c, hA, dS, dU, size_t(m) * m, m, dV, size_t(n) * n, n,
                     std::min(c.check_sample, batch));
  cusolverDnDestroyGesvdjInfo(params);
  rows.push_back(row);
}

template <class T> void run_gesvda(const BenchCase &c, const T *hA, const T *dA,
                                   cusolverDnHandle_t h, const std::string &dev,
                                   std::vector<BenchRow> &rows) {
  using R = real_t<T>;
  const int m = c.m, n = c.n, k = std::min(m, n), batch = c.batch;
  BenchRow row;
  row.solver = "cusolver-gesvdaStrided";
  row.device = dev;
  row.c = c;
  if (m < n) {
    row.note = "skipped: gesvda needs m >= n";
    rows.push_back(row);
    return;
  }
  DevBuf<T> dU(size_t(batch) * m * k), dV(size_t(batch) * n * k);
  DevBuf<R> dS(size_t(batch) * k);
  if (time_gesvda<T>(c, dA, h, k, dS.p, dU.p, dV.p, row))
    fetch_and_check<T>(row, c, hA, dS, dU, size_t(m) * k, m, dV, size_t(n) * k, n,
                       std::min(c.check_sample, batch));
  rows.push_back(row);
}

template <class T> bool bench_gpu_t(const BenchCase &c, const T *hA, std::vector<BenchRow> &rows) {
  std::string dev = "none";
  auto fail_row = [&](const std::string &why) {
    BenchRow r;
    r.solver = "bsvd-cuda";
    r.device = dev;
    r.c = c;
    r.note = why;
    rows.push_back(r);
    return false;
  };
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    cudaGetLastError();
    return fail_row("no CUDA GPU visible");
  }
  try {
    cudaDeviceProp prop{};
    BENCH_CUDA(cudaGetDeviceProperties(&prop, 0));
    dev = prop.name;
    if (c.device_count != 0 && bench_large_one(c)) {
      bench_host_rows<T>(c, hA, dev, rows);
      return true;
    }
    const size_t count = size_t(c.batch) * c.m * c.n;
    DevBuf<T> dA(count);
    BENCH_CUDA(cudaMemcpy(dA.p, hA, count * sizeof(T), cudaMemcpyHostToDevice));
    const int path0 =
        run_bsvd<T>(c, hA, dA.p, dev, "bsvd-cuda", rows, 0, c.pair_solver > 0 ? c.pair_solver : 0);
    if (c.device_count != 0) bench_host_rows<T>(c, hA, dev, rows);
    if (c.async_rows) {
      BenchCase ca = c;
      ca.async = true;
      run_bsvd<T>(ca, hA, dA.p, dev, "bsvd-cuda-async", rows, 0,
                  c.pair_solver > 0 ? c.pair_solver : 0);
    }
    // --pair-solver all: every fixed pair solver on the blocked path (the
    // plan comparison of WCYCLE Table V); one that does not fit shared
    // memory falls back to the Gram path (its row says so).
    if (c.pair_solver < 0 && is_blocked_path(path0)) {
      const std::pair<int, const char *> plans[] = {{BSVD_PAIR_GRAM, "bsvd-cuda-gram"},
                                                    {BSVD_PAIR_EVD_SM, "bsvd-cuda-evdsm"},
                                                    {BSVD_PAIR_SVD_SM, "bsvd-cuda-svdsm"}};
      for (auto [ps, nm] : plans) run_bsvd<T>(c, hA, dA.p, dev, nm, rows, 0, ps);
    }
    // --evd-threads all: the Gram path's eigensolver plans (same bits,
    // same sweeps; only the eigensolver stage differs).
    if (c.evd_plans && is_blocked_path(path0))
      for_each_evd_plan([&](const std::string &nt) {
        run_bsvd<T>(c, hA, dA.p, dev, "bsvd-cuda-evd" + nt, rows, 0,
                    c.pair_solver > 0 ? c.pair_solver : 0);
      });
    // --gram all: the Gram stage by bsvd's kernel and by cuBLAS (the
    // rule plan::gram_cublas); --block-sizes: other block widths.
    if (c.gram_plans && is_blocked_path(path0))
      for_each_gram_plan([&](const std::string &g) {
        run_bsvd<T>(c, hA, dA.p, dev, "bsvd-cuda-gram-" + g, rows, 0,
                    c.pair_solver > 0 ? c.pair_solver : 0);
      });
    if (c.gram_plans && is_blocked_path(path0) && c.precision == 'd')
      for_each_gram_tile([&](const std::string &g) {
        run_bsvd<T>(c, hA, dA.p, dev, std::string("bsvd-cuda-gram-") + (g == "m" ? "mma" : "tile4"),
                    rows, 0, c.pair_solver > 0 ? c.pair_solver : 0);
      });
    if (is_blocked_path(path0))
      for (int nb : c.block_sizes) {
        // (a width the precision has no GPU instance for would time the cpu backend)
        if (detail::cuda::blocked_k_of(nb) != detail::cuda::kBlockedKmax &&
            !detail::cuda::blocked_has_wide(c.precision))
          continue;
        run_bsvd<T>(c, hA, dA.p, dev, "bsvd-cuda-nb" + std::to_string(nb), rows, 0,
                    c.pair_solver > 0 ? c.pair_solver : 0, nb);
      }
    // --wcycle: two-level plans (WCYCLE Algorithm 2, one level down).
    if (is_blocked_path(path0))
      for (auto wc : c.wcycles)
        run_bsvd<T>(c, hA, dA.p, dev, wcycle_row_name(wc), rows, 0,
                    c.pair_solver > 0 ? c.pair_solver : 0, 0, BSVD_VARIANT_AUTO, 0, wc);
    // The blocked path after QR with column pivoting (or without it, when
    // the automatic choice took it).
    if (is_blocked_path(path0)) {
      const bool pre = path0 == BSVD_PATH_CUDA_QRCP;
      run_bsvd<T>(c, hA, dA.p, dev, pre ? "bsvd-cuda-noprecond" : "bsvd-cuda-precond", rows, 0,
                  c.pair_solver > 0 ? c.pair_solver : 0, 0, BSVD_VARIANT_AUTO, pre ? -1 : 1);
      run_bsvd<T>(c, hA, dA.p, dev, "bsvd-cuda-gramev", rows, 0,
                  c.pair_solver > 0 ? c.pair_solver : 0, 0, BSVD_VARIANT_AUTO, 2);
    }
    // The blocked path with the other grouping of its Gram-path matrices.
    if (is_blocked_path(path0)) {
      const int other = other_groups(); // before the override changes it
      for_each_override(
          {std::to_string(other)},
          [&](detail::Overrides &o, const std::string &) { o.stream_groups = other; },
          [&](const std::string &g) {
            run_bsvd<T>(c, hA, dA.p, dev, "bsvd-cuda-groups" + g, rows, 0,
                        c.pair_solver > 0 ? c.pair_solver : 0);
          });
    }
    // Matrices that fit the fused kernel and have more than 32 columns: the
    // other routing in the same run (blocked when the automatic choice took
    // the fused kernel, fused when it took the blocked path), the
    // measurement behind the fused kernel's column cap (plan::fused_call_cols).
    if (path0 >= 0 && std::min(c.m, c.n) > 32 &&
        detail::cuda::fits(detail::precision_of<T>(), c.m, c.n, c.vectors)) {
      if (is_blocked_path(path0))
        run_bsvd<T>(c, hA, dA.p, dev, "bsvd-cuda-fused", rows, 0, 0, 0, BSVD_VARIANT_UNBLOCKED);
      else if (path0 == BSVD_PATH_CUDA_FUSED)
        run_bsvd<T>(c, hA, dA.p, dev, "bsvd-cuda-blocked", rows, 0, 0, 0, BSVD_VARIANT_BLOCKED);
    }
    // Tall / wide cases whose R fits the fused kernel: the other choice of
    // the QR preprocessing in the same run (qr = -1 when the automatic
    // choice took it, qr = 1 when it did not).
    if (detail::cuda::qr_route(detail::precision_of<T>(), c.m, c.n, c.vectors, 1) &&
        std::max(c.m, c.n) >= 4 * std::min(c.m, c.n)) {
      const bool autoqr = detail::cuda::qr_route(detail::precision_of<T>(), c.m, c.n, c.vectors, 0);
      run_bsvd<T>(c, hA, dA.p, dev, autoqr ? "bsvd-cuda-noqr" : "bsvd-cuda-qr", rows,
                  autoqr ? -1 : 1);
    }
    if (const char *tune = std::getenv("BSVD_BENCH_TUNE"); tune && tune[0] == '1') {
      for_each_override(
          {"4", "8", "16", "32"},
          [](detail::Overrides &o, const std::string &g) { o.fused_lanes = std::stoi(g); },
          [&](const std::string &g) {
            run_bsvd<T>(c, hA, dA.p, dev, std::string("bsvd-cuda-G") + g, rows);
          });
      for_each_override(
          {"gcd"}, [](detail::Overrides &o, const std::string &) { o.fused_gcd_rule = true; },
          [&](const std::string &) { run_bsvd<T>(c, hA, dA.p, dev, "bsvd-cuda-gcdrule", rows); });
    }
    // BSVD_BENCH_ONLY=1: bsvd rows only (timing iterations on the device).
    if (const char *only = std::getenv("BSVD_BENCH_ONLY"); only && only[0] == '1') return true;
    cusolverDnHandle_t h;
    BENCH_SOLVER(cusolverDnCreate(&h));
    try {
      if (c.m <= 32 && c.n <= 32) run_gesvdj_batched<T>(c, hA, dA.p, h, dev, rows);
      run_gesvda<T>(c, hA, dA.p, h, dev, rows);
      if (c.m > 32 || c.n > 32) run_gesvdj_loop<T>(c, hA, dA.p, h, dev, rows);
      if (c.m > 32 || c.n > 32) run_gesvd_loop<T>(c, hA, dA.p, h, dev, rows);
      if (c.rank > 0) run_subset_rows<T>(c, hA, dA.p, h, dev, rows);
    } catch (const CudaFail &f) {
      BenchRow r;
      r.solver = "cusolver";
      r.device = dev;
      r.c = c;
      r.note = "failed: " + f.what;
      rows.push_back(r);
    }
    cusolverDnDestroy(h);
  } catch (const CudaFail &f) {
    return fail_row("failed: " + f.what);
  }
  return true;
}

} // namespace

bool bench_gpu(const BenchCase &c, const void *A, std::vector<BenchRow> &rows) {
  switch (c.precision) {
  case 's': return bench_gpu_t<float>(c, static_cast<const float *>(A), rows);
  case 'd': return bench_gpu_t<double>(c, static_cast<const double *>(A), rows);
  case 'c':
    return bench_gpu_t<std::complex<float>>(c, static_cast<const std::complex<float> *>(A), rows);
  default:
    return bench_gpu_t<std::complex<double>>(c, static_cast<const std::complex<double> *>(A), rows);
  }
}

} // namespace bsvd::cli
