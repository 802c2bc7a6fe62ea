// bsvd bench: bsvd side by side with the incumbents, on the same data, in
// one process. CPU: bsvd's cpu backend vs LAPACK gesvd, gesdd and gesvj looped
// over the batch with the same number of threads (each LAPACK call
// single-threaded). GPU (bench_cuda.cu): bsvd's cuda backend vs cuSOLVER.
#include "bench.hpp"
#include "bench_accuracy.hpp"
#include "common.hpp"
#include "files.hpp"
#include "core/batch.hpp"
#include "core/overrides.hpp"

#include "testing/generate.hpp"
#include "testing/io.hpp"
#include "testing/lapack_ref.hpp"
#include "testing/metrics.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <dlfcn.h>
#include <exception>
#include <fstream>
#include <functional>
#include <mutex>
#include <thread>

namespace bsvd::cli {

double jacobi_flops(char precision, int m, int n, bool vectors, double sweeps, long batch) {
  if (m < n) std::swap(m, n);
  // Real flops per column pair and sweep: one inner product (2m) and the
  // rotation of two columns of A (6m) and of V (6n); complex arithmetic
  // costs four times as much. Plus the refresh of n norms per sweep (2mn).
  const double pairs = 0.5 * double(n) * (n - 1);
  const double per_pair = 2.0 * m + 6.0 * m + (vectors ? 6.0 * n : 0.0);
  const double cx = (precision == 'c' || precision == 'z') ? 4.0 : 1.0;
  return cx * sweeps * (pairs * per_pair + 2.0 * m * n) * double(batch);
}

double blocked_flops(char precision, int m, int n, int nb, bool vectors, double sweeps,
                     long batch) {
  if (m < n) std::swap(m, n);
  const int nblk = (n + nb - 1) / nb;
  const double k = nblk <= 1 ? double(n) : 2.0 * nb;
  const double pairs = nblk <= 1 ? 1.0 : 0.5 * double(nblk) * (nblk - 1);
  const double gram = double(m) * k * (k + 1);
  const double evd = (k - 1) * (k / 2) * 3 * 6 * k + 4 * k * k * k;
  const double update = 2.0 * (m + (vectors ? n : 0)) * k * k;
  const double cx = (precision == 'c' || precision == 'z') ? 4.0 : 1.0;
  return cx * sweeps * pairs * (gram + evd + update) * double(batch);
}

double gram_pre_flops(char precision, int m, int n, bool vectors, long batch) {
  if (m < n) std::swap(m, n);
  const double mn2 = double(m) * n * n, n3 = double(n) * n * n;
  // F^H F, the eigensolver, two Newton-Schulz steps and the check, W V0,
  // V0 V_J
  const double flops = 2 * mn2 + 4 * n3 + 10 * n3 + 2 * mn2 + (vectors ? 2 * n3 : 0);
  const double cx = (precision == 'c' || precision == 'z') ? 4.0 : 1.0;
  return cx * flops * double(batch);
}

namespace {

struct BenchArgs {
  std::string precisions = "d";
  std::string cases = "200x16x16,100x32x32,20x64x64,4x128x128";
  std::string family = "random";
  std::string backend = bsvd_backend_string(BSVD_BACKEND_CPU); // cpu, cuda or all
  int reps = 3;
  int threads = 0;
  int check_sample = 16;
  bool values_only = false;
  bool async = false;
  bool hsvd = false;
  bool blas = false;
  int rank = 0; // > 0: the top-rank triplet rows (bench_subset.cuh)
  double grade = 0;
  std::string devices;
  bool quiet = false;
  std::string json;
  std::string pair_solver = bsvd_pair_solver_string(BSVD_PAIR_AUTO); // a pair solver, or all
  std::string mtx; // directory of Matrix Market files
  std::string evd_threads = "auto"; // auto, 32, 128, 256, all
  std::string gram = "auto"; // auto, own, cublas, all
  std::string block_sizes; // comma list: one more bsvd row per block width
  std::string wcycle; // comma list of R or RxE: one more bsvd row per two-level plan
  int tune_tlp = 0; // > 0: measure the TLP threshold at this n
  int eig_sweeps = BSVD_EIG_SWEEPS_AUTO; // blocked: inner eigensolver sweeps of the bsvd rows
};

// --pair-solver: a bsvd_pair_solver_t, or -1 for "all" (-2: unknown).
int parse_pair_solver(const std::string &s) {
  if (s == "all") return -1;
  int v = 0;
  return bsvd_pair_solver_from_string(s.c_str(), &v) == 0 ? v : -2;
}

// OpenBLAS threads would fight the threads over the batch: one each.
void single_threaded_blas() {
  using setter = void (*)(int);
  if (auto f = reinterpret_cast<setter>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) f(1);
}

template <class F> double median_ms(int reps, F &&f) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const double t0 = now_seconds();
    f();
    t.push_back(1e3 * (now_seconds() - t0));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Runs body(b) for b in [0, batch) on `threads` threads.
template <class F> void parallel_for(int batch, int threads, F &&body) {
  std::atomic<int> next{0};
  auto worker = [&] {
    for (int b; (b = next++) < batch;) body(b);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto &th : pool) th.join();
}

template <class T> void bench_cpu(const BenchCase &c, const std::vector<T> &A, int threads,
                                  std::vector<BenchRow> &rows) {
  using R = real_t<T>;
  const int m = c.m, n = c.n, k = std::min(m, n), batch = c.batch;
  const bool vec = c.vectors;
  const std::string dev = "cpu (" + std::to_string(threads) + " threads)";
  const int sample = std::min(c.check_sample, batch);

  { // bsvd, cpu backend
    std::vector<R> S(size_t(batch) * k);
    std::vector<T> U(vec ? size_t(batch) * m * k : 0), V(vec ? size_t(batch) * n * k : 0);
    std::vector<int> info(batch), sweeps(batch);
    bsvd_options_t o;
    bsvd_options_init(&o);
    o.backend = BSVD_BACKEND_CPU;
    o.num_threads = threads;
    o.eig_sweeps = c.eig_sweeps;
    bsvd_status_t st = 0;
    BenchRow row;
    row.solver = "bsvd-cpu";
    row.device = dev;
    row.c = c;
    row.ms = median_ms(c.reps, [&] {
      st = gesvj_strided_batched<T>(vec ? Job::Vectors : Job::Values, m, n, A.data(), m,
                                    int64_t(m) * n, S.data(), k, vec ? U.data() : nullptr, m,
                                    int64_t(m) * k, vec ? V.data() : nullptr, n, int64_t(n) * k,
                                    info.data(), sweeps.data(), batch, o);
    });
    if (st != 0) {
      row.note = std::string("failed: ") + bsvd_last_error();
    } else {
      record_accuracy<T>(row, m, n, A.data(), sample, S.data(), size_t(k), vec ? U.data() : nullptr,
                         m, size_t(m) * k, vec ? V.data() : nullptr, n, size_t(n) * k);
      row.max_sweeps = *std::max_element(sweeps.begin(), sweeps.end());
      double mean = 0;
      for (int s : sweeps) mean += s;
      mean /= batch;
      row.gflops = jacobi_flops(precision_of<T>(), m, n, vec, mean, batch) / (row.ms * 1e6);
      int bad = 0;
      for (int i : info) bad += i != 0;
      if (bad) row.note = std::to_string(bad) + " matrices with info != 0";
    }
    rows.push_back(row);
  }
  // LAPACK gesvd and gesdd, one call per matrix.
  for (const bool dd : {false, true}) {
    std::vector<R> S(size_t(batch) * k);
    std::vector<T> U(vec ? size_t(batch) * m * k : 0), VT(vec ? size_t(batch) * k * n : 0);
    std::vector<T> work(size_t(batch) * m * n);
    std::vector<int> info(batch);
    BenchRow row;
    row.solver = dd ? "lapack-gesdd" : "lapack-gesvd";
    row.device = dev;
    row.c = c;
    const auto driver = dd ? testing::lapack_gesdd<T, R> : testing::lapack_gesvd<T, R>;
    row.ms = median_ms(c.reps, [&] {
      work = A;
      parallel_for(batch, threads, [&](int b) {
        info[b] = driver(vec, m, n, work.data() + size_t(b) * m * n, m, S.data() + size_t(b) * k,
                         vec ? U.data() + size_t(b) * m * k : nullptr, m,
                         vec ? VT.data() + size_t(b) * k * n : nullptr, std::max(1, k));
      });
    });
    std::vector<T> V;
    if (vec) { // V = (V^T)^H for the checks
      V.resize(size_t(batch) * n * k);
      for (int b = 0; b < sample; ++b)
        for (int i = 0; i < n; ++i)
          for (int j = 0; j < k; ++j) {
            const T x = VT[size_t(b) * k * n + j + size_t(i) * k];
            if constexpr (is_complex<T>::value)
              V[size_t(b) * n * k + i + size_t(j) * n] = std::conj(x);
            else
              V[size_t(b) * n * k + i + size_t(j) * n] = x;
          }
    }
    record_accuracy<T>(row, m, n, A.data(), sample, S.data(), size_t(k), vec ? U.data() : nullptr,
                       m, size_t(m) * k, vec ? V.data() : nullptr, n, size_t(n) * k);
    int bad = 0;
    for (int i : info) bad += i != 0;
    if (bad) row.note = std::to_string(bad) + " matrices with info != 0";
    rows.push_back(row);
  }
  if (m >= n) { // LAPACK gesvj (one-sided Jacobi), one call per matrix
    std::vector<R> S(size_t(batch) * k);
    std::vector<T> V(vec ? size_t(batch) * n * n : 0);
    std::vector<T> work(size_t(batch) * m * n);
    std::vector<int> info(batch);
    BenchRow row;
    row.solver = "lapack-gesvj";
    row.device = dev;
    row.c = c;
    row.ms = median_ms(c.reps, [&] {
      work = A;
      parallel_for(batch, threads, [&](int b) {
        info[b] = testing::lapack_gesvj<T, R>(vec, m, n, work.data() + size_t(b) * m * n, m,
                                              S.data() + size_t(b) * k,
                                              vec ? V.data() + size_t(b) * n * n : nullptr, n);
      });
    });
    record_accuracy<T>(row, m, n, A.data(), sample, S.data(), size_t(k),
                       vec ? work.data() : nullptr, m, size_t(m) * n, vec ? V.data() : nullptr, n,
                       size_t(n) * n);
    int bad = 0;
    for (int i : info) bad += i != 0;
    if (bad) row.note = std::to_string(bad) + " matrices with info != 0";
    rows.push_back(row);
  }
}

bool parse_case(const std::string &s, BenchCase &c) {
  const auto parts = split(s, 'x');
  if (parts.size() != 3) return false;
  try {
    size_t used[3];
    c.batch = std::stoi(parts[0], &used[0]);
    c.m = std::stoi(parts[1], &used[1]);
    c.n = std::stoi(parts[2], &used[2]);
    for (int i = 0; i < 3; ++i)
      if (used[i] != parts[i].size()) return false; // "1e9" is not 1
  } catch (...) {
    return false;
  }
  return c.batch > 0 && c.m > 0 && c.n > 0;
}

// --precision x --cases: one case each, with the call-wide settings.
bool parse_cases(const BenchArgs &a, std::vector<BenchCase> &cases) {
  for (const auto &p : split(a.precisions, ',')) {
    if (p.size() != 1 || std::string("sdcz").find(p[0]) == std::string::npos) {
      std::fprintf(stderr, "bsvd bench: unknown precision '%s'\n", p.c_str());
      return false;
    }
    for (const auto &s : split(a.cases, ',')) {
      BenchCase c;
      if (!parse_case(s, c)) {
        std::fprintf(stderr, "bsvd bench: case '%s' is not BATCHxMxN\n", s.c_str());
        return false;
      }
      c.precision = p[0];
      c.family = a.family;
      c.vectors = !a.values_only;
      c.async_rows = a.async;
      c.hsvd = a.hsvd;
      c.blas = a.blas;
      c.rank = a.rank;
      c.hsvd_grade = a.grade;
      std::string err;
      if (!parse_devices(a.devices, c.device_count, c.devices, err)) {
        std::fprintf(stderr, "bsvd bench: %s\n", err.c_str());
        return false;
      }
      c.reps = std::max(1, a.reps);
      c.check_sample = std::max(1, a.check_sample);
      cases.push_back(c);
    }
  }
  return true;
}

// The blocked path's fixed choices of the bsvd rows (--pair-solver,
// --evd-threads, --gram, --block-sizes, --wcycle): into every case, and the
// fixed plans as overrides of the tuning's rules.
struct PlanChoices {
  int pair_solver = -1;
  std::vector<std::pair<int, int>> wcycles;
};
bool parse_plan_choices(const BenchArgs &a, std::vector<BenchCase> &cases, PlanChoices &pc) {
  pc.pair_solver = parse_pair_solver(a.pair_solver);
  if (pc.pair_solver == -2) {
    std::fprintf(stderr, "bsvd bench: --pair-solver must be %s or all\n",
                 kPairSolverNames.list(", ").c_str());
    return false;
  }
  const std::string &et = a.evd_threads;
  if (et != "auto" && et != "32" && et != "128" && et != "256" && et != "all") {
    std::fprintf(stderr, "bsvd bench: --evd-threads must be auto, 32, 128, 256 or all\n");
    return false;
  }
  // A fixed plan for every bsvd row (an override of the tuning's rule).
  detail::Overrides ov = detail::current_overrides();
  if (et != "auto" && et != "all") ov.evd_threads = std::atoi(et.c_str());
  const std::string &gm = a.gram;
  if (gm != "auto" && gm != "own" && gm != "cublas" && gm != "all") {
    std::fprintf(stderr, "bsvd bench: --gram must be auto, own, cublas or all\n");
    return false;
  }
  // A fixed Gram stage for every bsvd row (plan::gram_cublas overridden).
  if (gm == "own" || gm == "cublas")
    ov.gram_cublas = gm == "cublas" ? detail::Force::kOn : detail::Force::kOff;
  detail::set_overrides(ov);
  std::vector<int> nbs;
  for (const auto &v : split(a.block_sizes, ',')) {
    const int nb = std::atoi(v.c_str());
    if (nb < 1 || nb > 32) {
      std::fprintf(stderr, "bsvd bench: --block-sizes takes widths 1 ... 32 (z: 1 ... 16)\n");
      return false;
    }
    nbs.push_back(nb);
  }
  for (const auto &v : split(a.wcycle, ',')) {
    const size_t x = v.find('x');
    const int r = std::atoi(v.substr(0, x).c_str());
    const int e = x == std::string::npos ? 1 : std::atoi(v.substr(x + 1).c_str());
    if (r < 2 || r > detail::kWcycleMaxBlocks || e < 1 || e > detail::kWcycleMaxSweeps) {
      std::fprintf(stderr,
                   "bsvd bench: --wcycle takes R or RxE, R 2 ... %d blocks per outer "
                   "block, E 1 ... %d sweeps one level down\n",
                   detail::kWcycleMaxBlocks, detail::kWcycleMaxSweeps);
      return false;
    }
    pc.wcycles.emplace_back(r, e);
  }
  for (auto &c : cases) {
    c.pair_solver = pc.pair_solver;
    c.eig_sweeps = a.eig_sweeps;
    c.evd_plans = et == "all";
    c.gram_plans = gm == "all";
    c.block_sizes = nbs;
    c.wcycles = pc.wcycles;
  }
  return true;
}

// The backends asked for, and what they need, checked before any work: a
// missing GPU or an unwritable --json would otherwise show only after the
// CPU rows ran.
bool check_backends(const BenchArgs &a, const std::vector<BenchCase> &cases, bool &want_cpu,
                    bool &want_gpu) {
  const std::string cpu = bsvd_backend_string(BSVD_BACKEND_CPU);
  const std::string cuda = bsvd_backend_string(BSVD_BACKEND_CUDA);
  want_cpu = a.backend == cpu || a.backend == "all";
  want_gpu = a.backend == cuda || a.backend == "all";
  if (!want_cpu && !want_gpu) {
    std::fprintf(stderr, "bsvd bench: --backend must be %s, %s or all\n", cpu.c_str(),
                 cuda.c_str());
    return false;
  }
  if ((a.hsvd || a.grade > 0) && (want_cpu || !a.mtx.empty() || !a.hsvd)) {
    std::fprintf(stderr, "bsvd bench: --hsvd runs with --backend cuda and --cases only (--grade "
                         "with --hsvd)\n");
    return false;
  }
  if (a.blas && (want_cpu || !a.mtx.empty() || a.hsvd)) {
    std::fprintf(stderr, "bsvd bench: --blas runs with --backend cuda and --cases only\n");
    return false;
  }
#if !defined(BSVD_WITH_CUDA)
  if (want_gpu) {
    std::fprintf(stderr, "bsvd bench: this build has no CUDA backend\n");
    return false;
  }
#endif
  const bool needs_gpu = want_gpu || !a.mtx.empty() || a.tune_tlp > 0;
  if (needs_gpu && !bsvd_cuda_available()) {
    std::fprintf(stderr, "bsvd bench: %s needs a CUDA GPU, and none is visible%s\n",
                 !a.mtx.empty()   ? "--mtx"
                 : a.tune_tlp > 0 ? "--tune-tlp"
                                  : "--backend cuda",
#if defined(BSVD_WITH_CUDA)
                 " (no device, or the driver is missing; see nvidia-smi)"
#else
                 " (this build has no CUDA backend)"
#endif
    );
    return false;
  }
  std::string err;
  if (!a.json.empty() && !check_output_file(a.json, "--json", err)) {
    std::fprintf(stderr, "bsvd bench: %s\n", err.c_str());
    return false;
  }
  double largest = 0;
  for (const auto &c : cases)
    largest = std::max(largest, 4.0 * c.batch * double(c.m) * c.n * (c.precision == 'z' ? 16 : 8));
  if (!fits_in_memory(largest, "--cases " + a.cases, err)) {
    std::fprintf(stderr, "bsvd bench: %s\n", err.c_str());
    return false;
  }
  return true;
}

// --tune-tlp and --mtx: rows of their own instead of the cases. 0, or the
// exit status.
int run_special(const BenchArgs &a, const PlanChoices &pc, std::vector<BenchCase> &cases,
                std::vector<BenchRow> &rows) {
  if (a.tune_tlp > 0) {
#if defined(BSVD_WITH_CUDA)
    for (const auto &p : split(a.precisions, ','))
      if (!bench_tune_tlp(p[0], a.tune_tlp, rows)) return 1;
    cases.clear();
#else
    std::fprintf(stderr, "bsvd bench: --tune-tlp needs the CUDA backend\n");
    return 2;
#endif
  }
  if (!a.mtx.empty()) {
#if defined(BSVD_WITH_CUDA)
    const auto files = testing::list_matrix_market(a.mtx);
    if (files.empty()) {
      std::fprintf(stderr, "bsvd bench: no .mtx files in '%s'\n", a.mtx.c_str());
      return 2;
    }
    for (const auto &p : split(a.precisions, ','))
      if (!bench_gpu_mtx(files, p[0], std::max(1, a.reps), pc.pair_solver, a.evd_threads == "all",
                         a.eig_sweeps, pc.wcycles, rows)) {
        std::fprintf(stderr, "bsvd bench: --mtx %s: the GPU run failed\n", a.mtx.c_str());
        return 1;
      }
    cases.clear();
#else
    (void)pc;
    std::fprintf(stderr, "bsvd bench: --mtx needs the CUDA backend\n");
    return 2;
#endif
  }
  return 0;
}

// f(b) for b = 0 .. count - 1 on up to `threads` threads; the first
// exception is rethrown after all have stopped.
void parallel_for(int count, int threads, const std::function<void(int)> &f) {
  std::atomic<int> next{0};
  std::exception_ptr error;
  std::mutex error_lock;
  std::vector<std::thread> pool;
  for (int t = 0; t < std::min(threads, count); ++t)
    pool.emplace_back([&] {
      try {
        for (int b; (b = next++) < count;) f(b);
      } catch (...) {
        const std::lock_guard<std::mutex> hold(error_lock);
        if (!error) error = std::current_exception();
        next = count;
      }
    });
  for (std::thread &th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

// Every case's matrices (the family, seeds 1000 + b) on the backends. The
// matrices are generated in parallel (each from its own seed, so the batch
// is the same for any thread count): the Haar factors of the non-random
// families cost O(n^3) each, and 1000 of 256^2 took over 25 s on one core.
void run_cases(const BenchArgs &a, testing::Family fam, const std::vector<BenchCase> &cases,
               bool want_cpu, bool want_gpu, std::vector<BenchRow> &rows) {
  const int threads =
      a.threads > 0 ? a.threads : std::max(1, int(std::thread::hardware_concurrency()));
  Progress prog(int(cases.size()) * (int(want_cpu) + int(want_gpu)), !a.quiet);
  for (const auto &c : cases) {
    with_precision(c.precision, [&](auto tag) {
      using T = decltype(tag);
      std::vector<T> A(size_t(c.batch) * c.m * c.n);
      parallel_for(c.batch, threads, [&](int b) {
        testing::generate<T>(fam, c.m, c.n, testing::default_kappa<T>(), 1000u + unsigned(b),
                             A.data() + size_t(b) * c.m * c.n, c.m);
      });
      char label[96];
      std::snprintf(label, sizeof label, "%c %dx%dx%d", c.precision, c.batch, c.m, c.n);
      if (want_cpu) {
        prog.step(std::string("cpu ") + label);
        bench_cpu<T>(c, A, threads, rows);
      }
#if defined(BSVD_WITH_CUDA)
      if (want_gpu) {
        prog.step(std::string("gpu ") + label);
        if (c.hsvd)
          bench_gpu_hsvd(c, A.data(), rows);
        else if (c.blas)
          bench_gpu_blas(c, A.data(), rows);
        else
          bench_gpu(c, A.data(), rows);
      }
#else
      (void)want_gpu;
#endif
    });
  }
  prog.finish();
}

void print_rows(const std::vector<BenchRow> &rows, int check_sample) {
  std::printf("%-24s %-20s %4s %16s %10s %8s %8s %8s %8s %5s %6s %8s  %s\n", "solver", "device",
              "prec", "batch x m x n", "time ms", "vs bsvd", "T1/u", "T2/u", "T3/u", "pass",
              "sweeps", "GFLOP/s", "note");
  double bsvd_ms = 0;
  for (const auto &r : rows) {
    // The reference of "vs bsvd": the plain bsvd row of the case (the
    // bsvd-* variants after it are compared with it too).
    if (r.solver == "bsvd-cuda" || r.solver == "bsvd-cpu") bsvd_ms = r.ms;
    char shape[48];
    std::snprintf(shape, sizeof shape, "%dx%dx%d", r.c.batch, r.c.m, r.c.n);
    char ratio[16] = "-";
    if (bsvd_ms > 0 && r.ms > 0 && r.solver != "bsvd-cuda" && r.solver != "bsvd-cpu")
      std::snprintf(ratio, sizeof ratio, "%.2fx", r.ms / bsvd_ms);
    std::printf("%-24s %-20s %4c %16s %10.3f %8s %8.3g %8.3g %8.3g %5s %6d %8.2f  %s\n",
                r.solver.c_str(), r.device.substr(0, 20).c_str(), r.c.precision, shape, r.ms, ratio,
                r.t1, r.t2, r.t3, r.pass ? "yes" : "NO", r.max_sweeps, r.gflops, r.note.c_str());
  }
  std::printf("(vs bsvd: the solver's time over bsvd's on the same case; > 1 means bsvd is faster. "
              "Accuracy on the first %d matrices of each case, in units of u.)\n",
              check_sample);
}

bool write_rows_json(const std::vector<BenchRow> &rows, const std::string &path) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto &r : rows)
    j.push_back({{"solver", r.solver},
                 {"device", r.device},
                 {"precision", std::string(1, r.c.precision)},
                 {"batch", r.c.batch},
                 {"m", r.c.m},
                 {"n", r.c.n},
                 {"family", r.c.family},
                 {"vectors", r.c.vectors},
                 {"reps", r.c.reps},
                 {"ms", r.ms},
                 {"t1", r.t1},
                 {"t2", r.t2},
                 {"t3", r.t3},
                 {"sorted", r.sorted},
                 {"pass", r.pass},
                 {"max_sweeps", r.max_sweeps},
                 {"gflops", r.gflops},
                 {"note", r.note}});
  std::string err;
  if (!write_text_file(path, j.dump(1) + "\n", err)) {
    std::fprintf(stderr, "bsvd bench: --json: %s\n", err.c_str());
    return false;
  }
  return true;
}

int bench(const BenchArgs &a) {
  testing::Family fam;
  if (!testing::parse_family(a.family, fam)) {
    std::fprintf(stderr, "bsvd bench: unknown family '%s'\n", a.family.c_str());
    return 2;
  }
  std::vector<BenchCase> cases;
  PlanChoices pc;
  bool want_cpu = false, want_gpu = false;
  if (!parse_cases(a, cases) || !parse_plan_choices(a, cases, pc) ||
      !check_backends(a, cases, want_cpu, want_gpu))
    return 2;
  single_threaded_blas();
  std::vector<BenchRow> rows;
  if (const int st = run_special(a, pc, cases, rows)) return st;
  run_cases(a, fam, cases, want_cpu, want_gpu, rows);
  print_rows(rows, a.check_sample);
  if (!a.json.empty() && !write_rows_json(rows, a.json)) return 1;
  return 0;
}

} // namespace

void add_bench_options(CLI::App &app, int &rc) {
  auto a = std::make_shared<BenchArgs>();
  CLI::App *sub = &app;
  sub->add_option("--precision", a->precisions, "comma list of s, d, c, z")->capture_default_str();
  sub->add_option("--cases", a->cases, "comma list of BATCHxMxN")->capture_default_str();
  sub->add_option("--family", a->family, "singular-value family of the test matrices")
      ->capture_default_str();
  sub->add_option("--backend", a->backend,
                  std::string(bsvd_backend_string(BSVD_BACKEND_CPU)) + " (vs LAPACK), " +
                      bsvd_backend_string(BSVD_BACKEND_CUDA) + " (vs cuSOLVER) or all")
      ->capture_default_str();
  sub->add_option("--reps", a->reps, "timed repetitions; the median is reported")
      ->capture_default_str();
  sub->add_option("--rank", a->rank,
                  "cuda: also the top R triplets of every matrix by bsvd's gesvdx and by "
                  "cuSOLVER's gesvdaStridedBatched (rank R), checked by their own ratios")
      ->check(CLI::Range(0, 1 << 20))
      ->option_text("R");
  sub->add_option("--threads", a->threads, "CPU threads (0 = all cores)")->capture_default_str();
  sub->add_option("--check-sample", a->check_sample, "matrices per case checked for accuracy")
      ->capture_default_str();
  sub->add_flag("--values-only", a->values_only, "singular values only");
  sub->add_flag("--async", a->async,
                "cuda: one more row per case, bsvd-cuda-async: the stream-ordered _async form "
                "(device time as the other rows; its note gives the host time of one call)");
  sub->add_flag("--hsvd", a->hsvd,
                "cuda: the hyperbolic SVD (J = diag(I, -I), n/2 plus signs) against the SVD of "
                "the same matrices and cuSOLVER's eigensolvers on H = G J G^H (docs/hsvd.md)");
  sub->add_flag("--blas", a->blas,
                "cuda, s and d: the batched GEMV, TRSV and GEBRD and the values route (gebrd + "
                "bidiagonal bisection) against cuBLAS and cuSOLVER, instead of the SVD rows");
  sub->add_option("--grade", a->grade,
                  "with --hsvd: scale the columns of every matrix over this many decades (the "
                  "note gives each row's largest relative eigenvalue error; s, c)");
  sub->add_option("--devices", a->devices,
                  "cuda: two more rows per case, the blocking call on host data (copies "
                  "included) on the current GPU (bsvd-cuda-host) and over these GPUs "
                  "(bsvd-cuda-host-devices): all, or a comma list of device ordinals");
  sub->add_option("--json", a->json, "write the rows as JSON to this file");
  sub->add_option("--pair-solver", a->pair_solver,
                  "cuda blocked path: " + kPairSolverNames.list(", ") +
                      " (bsvd_pair_solver_t), or all (" + bsvd_pair_solver_string(BSVD_PAIR_AUTO) +
                      " plus a row per fixed choice)")
      ->capture_default_str();
  sub->add_option("--eig-sweeps", a->eig_sweeps,
                  "blocked path: inner eigensolver sweeps of the bsvd rows (-1 = auto, the "
                  "library's default; 0 = until converged; k > 0 = k)")
      ->capture_default_str();
  sub->add_option("--mtx", a->mtx,
                  "cuda: one mixed-size batch of the Matrix Market files of this directory "
                  "(instead of --cases), against cuSOLVER per matrix");
  sub->add_option("--evd-threads", a->evd_threads,
                  "cuda blocked path, eigensolver plan: threads per Gram matrix (32, 128, 256), "
                  "auto (the TLP model of the tuning table), or all (auto plus a row per plan)")
      ->capture_default_str();
  sub->add_option("--gram", a->gram,
                  "cuda blocked path, Gram stage: auto (the tuning table's rule), own (bsvd's "
                  "kernel), cublas (batched GEMM where eligible), or all (auto plus a row each)")
      ->capture_default_str();
  sub->add_option(
      "--block-sizes", a->block_sizes,
      "cuda blocked path: comma list of block widths nb (1 ... 32; z 1 ... 16), one more bsvd row "
      "each (the default: plan::block_width)");
  sub->add_option("--wcycle", a->wcycle,
                  "cuda blocked path: comma list of two-level plans R or RxE (outer blocks of R "
                  "blocks, E sweeps one level down per outer pair; E = 1 if omitted), one more "
                  "bsvd row each (bsvd-cuda-wcRxE; the W-cycle's plans beside the one-level one; "
                  "with --cases or --mtx)");
  sub->add_option("--tune-tlp", a->tune_tlp,
                  "cuda: measure the eigensolver plans' two TLP thresholds on batches of N x N "
                  "random matrices of growing count (instead of --cases); N = this value")
      ->capture_default_str();
  sub->add_flag("-q,--quiet", a->quiet, "no progress on stderr");
  sub->callback([a, &rc] { rc = bench(*a); });
}

} // namespace bsvd::cli
