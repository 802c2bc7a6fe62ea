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
//   (--mtx with BSVD_MTX_RANDOM=1: the files' shapes, random entries;
//   =2: random values on the files' nonzero pattern)
//   bsvd-cuda-precond / -noprecond  --mtx: the batch with the other choice
//                             of it (opts.precondition 1 / -1)
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
#include "bench.hpp"
#include "bench_accuracy.hpp"

#include <chrono>

#include <bsvd/svd.hpp>

#include "cuda/blocked/blocked.hpp"
#include "cuda/fused/fused.hpp"
#include "cuda/qr/qr.hpp"
#include "cuda/facts.hpp"
#include "core/overrides.hpp"
#include "plan/tuning.hpp"
#include "testing/generate.hpp"
#include "testing/io.hpp"
#include "testing/lapack_ref.hpp"
#include "testing/metrics.hpp"

#include <cuComplex.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

namespace bsvd::cli {

namespace {

struct CudaFail {
  std::string what;
};
#define BENCH_CUDA(call)                                                                           \
  do {                                                                                             \
    const cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) throw CudaFail{std::string(#call) + ": " + cudaGetErrorString(e_)};     \
  } while (0)
#define BENCH_SOLVER(call)                                                                         \
  do {                                                                                             \
    const cusolverStatus_t s_ = (call);                                                            \
    if (s_ != CUSOLVER_STATUS_SUCCESS)                                                             \
      throw CudaFail{std::string(#call) + ": cusolver status " + std::to_string(int(s_))};         \
  } while (0)

template <class T> struct DevBuf {
  T *p = nullptr;
  size_t n = 0;
  explicit DevBuf(size_t count) : n(count) {
    if (count) BENCH_CUDA(cudaMalloc(&p, count * sizeof(T)));
  }
  ~DevBuf() {
    if (p) cudaFree(p);
  }
  DevBuf(const DevBuf &) = delete;
  DevBuf &operator=(const DevBuf &) = delete;
};

// ---- cuSOLVER by precision -------------------------------------------------
template <class T> struct Cu;
#define CU_TRAITS(T, CT, P)                                                                        \
  template <> struct Cu<T> {                                                                       \
    using C = CT;                                                                                  \
    using R = real_t<T>;                                                                           \
    static cusolverStatus_t jb_size(cusolverDnHandle_t h, int m, int n, const C *A, int lda,       \
                                    const R *S, const C *U, int ldu, const C *V, int ldv, int *lw, \
                                    gesvdjInfo_t p, int b) {                                       \
      return cusolverDn##P##gesvdjBatched_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR, m, n, A, lda, S, \
                                                     U, ldu, V, ldv, lw, p, b);                    \
    }                                                                                              \
    static cusolverStatus_t jb(cusolverDnHandle_t h, cusolverEigMode_t j, int m, int n, C *A,      \
                               int lda, R *S, C *U, int ldu, C *V, int ldv, C *w, int lw,          \
                               int *info, gesvdjInfo_t p, int b) {                                 \
      return cusolverDn##P##gesvdjBatched(h, j, m, n, A, lda, S, U, ldu, V, ldv, w, lw, info, p,   \
                                          b);                                                      \
    }                                                                                              \
    static cusolverStatus_t j_size(cusolverDnHandle_t h, cusolverEigMode_t j, int m, int n,        \
                                   const C *A, int lda, const R *S, const C *U, int ldu,           \
                                   const C *V, int ldv, int *lw, gesvdjInfo_t p) {                 \
      return cusolverDn##P##gesvdj_bufferSize(h, j, 1, m, n, A, lda, S, U, ldu, V, ldv, lw, p);    \
    }                                                                                              \
    static cusolverStatus_t j(cusolverDnHandle_t h, cusolverEigMode_t jz, int m, int n, C *A,      \
                              int lda, R *S, C *U, int ldu, C *V, int ldv, C *w, int lw,           \
                              int *info, gesvdjInfo_t p) {                                         \
      return cusolverDn##P##gesvdj(h, jz, 1, m, n, A, lda, S, U, ldu, V, ldv, w, lw, info, p);     \
    }                                                                                              \
    static cusolverStatus_t a_size(cusolverDnHandle_t h, cusolverEigMode_t jz, int r, int m,       \
                                   int n, const C *A, int lda, long long sA, const R *S,           \
                                   long long sS, const C *U, int ldu, long long sU, const C *V,    \
                                   int ldv, long long sV, int *lw, int b) {                        \
      return cusolverDn##P##gesvdaStridedBatched_bufferSize(h, jz, r, m, n, A, lda, sA, S, sS, U,  \
                                                            ldu, sU, V, ldv, sV, lw, b);           \
    }                                                                                              \
    static cusolverStatus_t a(cusolverDnHandle_t h, cusolverEigMode_t jz, int r, int m, int n,     \
                              const C *A, int lda, long long sA, R *S, long long sS, C *U,         \
                              int ldu, long long sU, C *V, int ldv, long long sV, C *w, int lw,    \
                              int *info, double *nrm, int b) {                                     \
      return cusolverDn##P##gesvdaStridedBatched(h, jz, r, m, n, A, lda, sA, S, sS, U, ldu, sU, V, \
                                                 ldv, sV, w, lw, info, nrm, b);                    \
    }                                                                                              \
    static cusolverStatus_t q_size(cusolverDnHandle_t h, int m, int n, int *lw) {                  \
      return cusolverDn##P##gesvd_bufferSize(h, m, n, lw);                                         \
    }                                                                                              \
    static cusolverStatus_t q(cusolverDnHandle_t h, signed char job, int m, int n, C *A, int lda,  \
                              R *S, C *U, int ldu, C *VT, int ldvt, C *w, int lw, R *rw,           \
                              int *info) {                                                         \
      return cusolverDn##P##gesvd(h, job, job, m, n, A, lda, S, U, ldu, VT, ldvt, w, lw, rw,       \
                                  info);                                                           \
    }                                                                                              \
  };
CU_TRAITS(float, float, S)
CU_TRAITS(double, double, D)
CU_TRAITS(std::complex<float>, cuComplex, C)
CU_TRAITS(std::complex<double>, cuDoubleComplex, Z)
#undef CU_TRAITS

// Median of reps timings (ms) of body() bracketed by CUDA events; setup()
// runs before each, untimed. Warm-up first: body() again until the warm-up
// calls add up to warmup_ms() of device time (at least one call, at most
// 64), as triton's do_bench warms up by time: a case of a few ms is not
// timed right after the host work before it (data generation, accuracy
// checks) with a single call in between. With a single warm-up call a few
// short rows took up to twice their own profiled run, for a cause not found
// (docs/perf/README.md, "How the bench times"). BSVD_BENCH_WARMUP_MS=0: one
// call.
double warmup_ms() {
  if (const char *e = std::getenv("BSVD_BENCH_WARMUP_MS")) return std::max(0.0, std::atof(e));
  return 25.0;
}
double time_events(int reps, const std::function<void()> &setup,
                   const std::function<void()> &body) {
  cudaEvent_t e0, e1;
  BENCH_CUDA(cudaEventCreate(&e0));
  BENCH_CUDA(cudaEventCreate(&e1));
  auto once = [&] {
    if (setup) setup();
    BENCH_CUDA(cudaDeviceSynchronize());
    BENCH_CUDA(cudaEventRecord(e0));
    body();
    BENCH_CUDA(cudaEventRecord(e1));
    BENCH_CUDA(cudaEventSynchronize(e1));
    float ms = 0;
    BENCH_CUDA(cudaEventElapsedTime(&ms, e0, e1));
    return double(ms);
  };
  const double warm = warmup_ms();
  double warmed = 0;
  for (int w = 0; w < 64 && (w == 0 || warmed < warm); ++w) warmed += once();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) t.push_back(once());
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  std::sort(t.begin(), t.end());
  return t.empty() ? 0 : t[t.size() / 2];
}

// Worst accuracy ratios over the first `sample` matrices; U, V hold
// per-matrix blocks of stride sU / sV with leading dimensions ldu / ldv.
template <class T> void check(BenchRow &row, const BenchCase &c, const T *A,
                              const std::vector<real_t<T>> &S, size_t sS, const std::vector<T> &U,
                              size_t sU, int ldu, const std::vector<T> &V, size_t sV, int ldv,
                              int sample) {
  record_accuracy<T>(row, c.m, c.n, A, sample, S.data(), sS, U.empty() ? nullptr : U.data(), ldu,
                     sU, V.empty() ? nullptr : V.data(), ldv, sV);
}

// Copies S (k per matrix) and, with vectors, U and V (blocks of sU / sV
// elements, leading dimensions ldu / ldv) back and records the accuracy of
// the first `sample` matrices.
template <class T> void fetch_and_check(BenchRow &row, const BenchCase &c, const T *hA,
                                        const DevBuf<real_t<T>> &dS, const DevBuf<T> &dU, size_t sU,
                                        int ldu, const DevBuf<T> &dV, size_t sV, int ldv,
                                        int sample) {
  using R = real_t<T>;
  std::vector<R> S(dS.n);
  std::vector<T> U(c.vectors ? dU.n : 0), V(c.vectors ? dV.n : 0);
  BENCH_CUDA(cudaMemcpy(S.data(), dS.p, S.size() * sizeof(R), cudaMemcpyDeviceToHost));
  if (c.vectors) {
    BENCH_CUDA(cudaMemcpy(U.data(), dU.p, U.size() * sizeof(T), cudaMemcpyDeviceToHost));
    BENCH_CUDA(cudaMemcpy(V.data(), dV.p, V.size() * sizeof(T), cudaMemcpyDeviceToHost));
  }
  check<T>(row, c, hA, S, size_t(std::min(c.m, c.n)), U, sU, ldu, V, sV, ldv, sample);
}

// The looped cuSOLVER drivers time one call per matrix on a subset of the
// batch (at least 20 matrices, or the accuracy sample) and scale it.
inline int loop_subset(const BenchCase &c) {
  return std::min(c.batch, std::max(std::max(c.check_sample, 1), 20));
}
inline void time_loop_subset(BenchRow &row, const BenchCase &c, int sub,
                             const std::function<void()> &setup,
                             const std::function<void()> &body) {
  row.ms = time_events(std::min(c.reps, 3), setup, body) * double(c.batch) / sub;
  if (sub < c.batch)
    row.note = "timed " + std::to_string(sub) + " of " + std::to_string(c.batch) + ", scaled";
}

bool is_blocked_path(int p) {
  return p == BSVD_PATH_CUDA_BLOCKED || p == BSVD_PATH_CUDA_PAIR_EVD ||
         p == BSVD_PATH_CUDA_PAIR_SVD || p == BSVD_PATH_CUDA_QRCP;
}
const char *path_label(int p) {
  switch (p) {
  case BSVD_PATH_CUDA_BLOCKED: return "blocked (gram)";
  case BSVD_PATH_CUDA_PAIR_EVD: return "blocked (evd-sm)";
  case BSVD_PATH_CUDA_PAIR_SVD: return "blocked (svd-sm)";
  case BSVD_PATH_CUDA_QR: return "qr + fused on R";
  case BSVD_PATH_CUDA_QRCP: return "qrcp + blocked on R^H";
  case BSVD_PATH_CUDA_FUSED: return "fused";
  case BSVD_PATH_CUDA_TINY: return "tiny (register tier)";
  default: return bsvd_path_string(p);
  }
}
std::string stage_text(const detail::cuda::BlockedProfile &pr) {
  char sn[448];
  std::snprintf(sn, sizeof sn,
                "load %.2f gram %.2f evd %.2f update %.2f pair-evd %.2f pair-svd %.2f finish %.2f "
                "ms; %ld launches; evd plan steps 32/128/256 threads: %ld/%ld/%ld (lean %ld); "
                "cuBLAS Gram calls %ld; Gram plan steps tile 2/4/split/mma: %ld/%ld/%ld/%ld",
                pr.load, pr.gram, pr.evd, pr.update, pr.pair_evd, pr.pair_svd, pr.finish,
                pr.launches, pr.evd_steps[0], pr.evd_steps[1], pr.evd_steps[2], pr.evd_lean_steps,
                pr.gram_cublas, pr.gram_steps[0], pr.gram_steps[1], pr.gram_steps[2],
                pr.gram_steps[3]);
  return sn;
}

// Calls f(v) with the library's overrides changed by set(o, v) for each v
// of values (Overrides, the typed switches of the benchmarks and tests);
// restores them.
template <class Set, class F>
void for_each_override(const std::vector<std::string> &values, Set set, F f) {
  const detail::Overrides saved = detail::current_overrides();
  for (const std::string &v : values) {
    detail::Overrides o = saved;
    set(o, v);
    detail::set_overrides(o);
    f(v);
  }
  detail::set_overrides(saved);
}
// The blocked eigensolver forced to each plan (nt threads per Gram matrix),
// and the Gram stage to each choice (own kernel, cuBLAS).
template <class F> void for_each_evd_plan(F f) {
  std::vector<std::string> plans;
  for (int plan : detail::plan::kEvdPlans) plans.push_back(std::to_string(plan));
  for_each_override(
      plans, [](detail::Overrides &o, const std::string &v) { o.evd_threads = std::stoi(v); }, f);
}
template <class F> void for_each_gram_plan(F f) {
  for_each_override(
      {"own", "cublas"},
      [](detail::Overrides &o, const std::string &v) {
        o.gram_cublas = v == "cublas" ? detail::Force::kOn : detail::Force::kOff;
      },
      f);
}
// The own Gram kernel's throughput plans: the scalar tile 4 and the
// tensor-core plan (d).
template <class F> void for_each_gram_tile(F f) {
  for_each_override(
      {"4", "m"},
      [](detail::Overrides &o, const std::string &v) {
        o.gram_plan = v == "m" ? detail::GramPlan::kMma : detail::GramPlan::kTile4;
      },
      f);
}
// Runs f with the blocked path's stage timers on (its profile:
// blocked_last_profile).
template <class F> void profiled(F f) {
  for_each_override(
      {"1"}, [](detail::Overrides &o, const std::string &) { o.profile = true; },
      [&](const std::string &) { f(); });
}

// The other grouping of the blocked path's Gram matrices (the tuning's
// stream groups): 2 when the default is one group, else 1.
inline int other_groups() {
  return detail::plan::stream_groups(detail::cuda::current_tuning()) == 2 ? 1 : 2;
}

// The row name of two-level plan (R, E): bsvd-cuda-wcRxE.
std::string wcycle_row_name(std::pair<int, int> wc) {
  return "bsvd-cuda-wc" + std::to_string(wc.first) + "x" + std::to_string(wc.second);
}

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
  using C = typename Cu<T>::C;
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
  const cusolverEigMode_t jz = c.vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  DevBuf<T> dU(size_t(batch) * m * k), dV(size_t(batch) * n * k);
  DevBuf<R> dS(size_t(batch) * k);
  DevBuf<int> dinfo(batch);
  int lw = 0;
  const cusolverStatus_t qs =
      Cu<T>::a_size(h, jz, k, m, n, (const C *)dA, m, (long long)m * n, dS.p, k, (const C *)dU.p, m,
                    (long long)m * k, (const C *)dV.p, n, (long long)n * k, &lw, batch);
  if (qs != CUSOLVER_STATUS_SUCCESS) {
    row.note = "refused: cusolver status " + std::to_string(int(qs));
    rows.push_back(row);
    return;
  }
  DevBuf<T> work(size_t(std::max(lw, 1)));
  cusolverStatus_t rs = CUSOLVER_STATUS_SUCCESS;
  // The residual norms are optional (NULL: not computed); should this
  // cuSOLVER insist on the array, give it one.
  std::vector<double> resid(batch);
  double *nrm = nullptr;
  auto body = [&] {
    rs = Cu<T>::a(h, jz, k, m, n, (const C *)dA, m, (long long)m * n, dS.p, k, (C *)dU.p, m,
                  (long long)m * k, (C *)dV.p, n, (long long)n * k, (C *)work.p, lw, dinfo.p, nrm,
                  batch);
  };
  body();
  if (rs != CUSOLVER_STATUS_SUCCESS) {
    nrm = resid.data();
    row.note = "residual array required; ";
  }
  row.ms = time_events(c.reps, nullptr, body);
  if (rs != CUSOLVER_STATUS_SUCCESS) {
    row.ms = 0;
    row.note += "refused: cusolver status " + std::to_string(int(rs));
    rows.push_back(row);
    return;
  }
  fetch_and_check<T>(row, c, hA, dS, dU, size_t(m) * k, m, dV, size_t(n) * k, n,
                     std::min(c.check_sample, batch));
  rows.push_back(row);
}

template <class T> void run_gesvdj_loop(const BenchCase &c, const T *hA, const T *dA,
                                        cusolverDnHandle_t h, const std::string &dev,
                                        std::vector<BenchRow> &rows) {
  using C = typename Cu<T>::C;
  using R = real_t<T>;
  const int m = c.m, n = c.n, k = std::min(m, n);
  BenchRow row;
  row.solver = "cusolver-gesvdj-loop";
  row.device = dev;
  row.c = c;
  const cusolverEigMode_t jz = c.vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  gesvdjInfo_t params;
  BENCH_SOLVER(cusolverDnCreateGesvdjInfo(&params));
  const int sub = loop_subset(c);
  DevBuf<T> dW(size_t(sub) * m * n), dU(size_t(sub) * m * k), dV(size_t(sub) * n * k);
  DevBuf<R> dS(size_t(sub) * k);
  DevBuf<int> dinfo(sub);
  int lw = 0;
  BENCH_SOLVER(Cu<T>::j_size(h, jz, m, n, (const C *)dW.p, m, dS.p, (const C *)dU.p, m,
                             (const C *)dV.p, n, &lw, params));
  DevBuf<T> work(size_t(std::max(lw, 1)));
  auto setup = [&] {
    BENCH_CUDA(cudaMemcpy(dW.p, dA, dW.n * sizeof(T), cudaMemcpyDeviceToDevice));
  };
  auto body = [&] {
    for (int b = 0; b < sub; ++b)
      BENCH_SOLVER(Cu<T>::j(h, jz, m, n, (C *)dW.p + size_t(b) * m * n, m, dS.p + size_t(b) * k,
                            (C *)dU.p + size_t(b) * m * k, m, (C *)dV.p + size_t(b) * n * k, n,
                            (C *)work.p, lw, dinfo.p + b, params));
  };
  time_loop_subset(row, c, sub, setup, body);
  fetch_and_check<T>(row, c, hA, dS, dU, size_t(m) * k, m, dV, size_t(n) * k, n,
                     std::min(c.check_sample, sub));
  cusolverDnDestroyGesvdjInfo(params);
  rows.push_back(row);
}

// One QR-iteration gesvd (cusolverDn<t>gesvd) per matrix, m >= n.
template <class T> void run_gesvd_loop(const BenchCase &c, const T *hA, const T *dA,
                                       cusolverDnHandle_t h, const std::string &dev,
                                       std::vector<BenchRow> &rows) {
  using C = typename Cu<T>::C;
  using R = real_t<T>;
  const int m = c.m, n = c.n, k = std::min(m, n);
  BenchRow row;
  row.solver = "cusolver-gesvd-loop";
  row.device = dev;
  row.c = c;
  if (m < n) {
    row.note = "skipped: gesvd needs m >= n";
    rows.push_back(row);
    return;
  }
  const int sub = loop_subset(c);
  DevBuf<T> dW(size_t(sub) * m * n), dU(size_t(sub) * m * k), dVT(size_t(sub) * k * n);
  DevBuf<R> dS(size_t(sub) * k), rwork(size_t(std::max(k - 1, 1)));
  DevBuf<int> dinfo(sub);
  int lw = 0;
  BENCH_SOLVER(Cu<T>::q_size(h, m, n, &lw));
  DevBuf<T> work(size_t(std::max(lw, 1)));
  const signed char job = c.vectors ? 'S' : 'N';
  auto setup = [&] {
    BENCH_CUDA(cudaMemcpy(dW.p, dA, dW.n * sizeof(T), cudaMemcpyDeviceToDevice));
  };
  auto body = [&] {
    for (int b = 0; b < sub; ++b)
      BENCH_SOLVER(Cu<T>::q(h, job, m, n, (C *)dW.p + size_t(b) * m * n, m, dS.p + size_t(b) * k,
                            (C *)dU.p + size_t(b) * m * k, m, (C *)dVT.p + size_t(b) * k * n, k,
                            (C *)work.p, lw, rwork.p, dinfo.p + b));
  };
  time_loop_subset(row, c, sub, setup, body);
  std::vector<R> S(dS.n);
  BENCH_CUDA(cudaMemcpy(S.data(), dS.p, S.size() * sizeof(R), cudaMemcpyDeviceToHost));
  std::vector<T> U, V;
  if (c.vectors) {
    U.resize(dU.n);
    std::vector<T> VT(dVT.n);
    BENCH_CUDA(cudaMemcpy(U.data(), dU.p, U.size() * sizeof(T), cudaMemcpyDeviceToHost));
    BENCH_CUDA(cudaMemcpy(VT.data(), dVT.p, VT.size() * sizeof(T), cudaMemcpyDeviceToHost));
    V.resize(VT.size()); // V = VT^H, n x k per matrix
    for (int b = 0; b < sub; ++b)
      for (int j = 0; j < k; ++j)
        for (int i = 0; i < n; ++i) {
          const T x = VT[size_t(b) * k * n + j + size_t(i) * k];
          if constexpr (std::is_same_v<T, std::complex<R>>)
            V[size_t(b) * n * k + i + size_t(j) * n] = std::conj(x);
          else
            V[size_t(b) * n * k + i + size_t(j) * n] = x;
        }
  }
  check<T>(row, c, hA, S, k, U, size_t(m) * k, m, V, size_t(n) * k, n,
           std::min(c.check_sample, sub));
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

// ---- the mixed-size batch of Matrix Market files -----------------------------
template <class T>
bool bench_gpu_mtx_t(const std::vector<testing::DenseMatrix> &mats, char precision, int reps,
                     int pair_solver, bool evd_plans, int eig_sweeps,
                     const std::vector<std::pair<int, int>> &wcycles, std::vector<BenchRow> &rows) {
  using R = real_t<T>;
  const int batch = int(mats.size());
  BenchCase c0;
  c0.precision = precision;
  c0.family = "mtx";
  c0.batch = batch;
  c0.reps = reps;
  c0.eig_sweeps = eig_sweeps;
  std::string dev = "none";
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    cudaGetLastError();
    BenchRow r;
    r.solver = "bsvd-cuda";
    r.c = c0;
    r.note = "no CUDA GPU visible";
    rows.push_back(r);
    return false;
  }
  cudaDeviceProp prop{};
  BENCH_CUDA(cudaGetDeviceProperties(&prop, 0));
  dev = prop.name;
  // Host and device copies, one allocation per matrix (packed, ld = m).
  std::vector<std::vector<T>> hA(batch);
  std::vector<int> mv(batch), nv(batch), kv(batch);
  size_t ea = 0, es = 0, eu = 0, ev = 0;
  for (int b = 0; b < batch; ++b) {
    mv[b] = mats[b].m;
    nv[b] = mats[b].n;
    kv[b] = std::min(mv[b], nv[b]);
    hA[b].resize(mats[b].a.size());
    for (size_t i = 0; i < hA[b].size(); ++i) hA[b][i] = T(R(mats[b].a[i]));
    ea += hA[b].size();
    es += kv[b];
    eu += size_t(mv[b]) * kv[b];
    ev += size_t(nv[b]) * kv[b];
  }
  DevBuf<T> dA(ea), dU(eu), dV(ev);
  DevBuf<R> dS(es);
  DevBuf<int> dinfo(batch), dsweeps(batch);
  std::vector<const T *> pA(batch);
  std::vector<R *> pS(batch);
  std::vector<T *> pU(batch), pV(batch);
  {
    size_t oa = 0, os = 0, ou = 0, ov = 0;
    for (int b = 0; b < batch; ++b) {
      BENCH_CUDA(
          cudaMemcpy(dA.p + oa, hA[b].data(), hA[b].size() * sizeof(T), cudaMemcpyHostToDevice));
      pA[b] = dA.p + oa;
      pS[b] = dS.p + os;
      pU[b] = dU.p + ou;
      pV[b] = dV.p + ov;
      oa += hA[b].size();
      os += kv[b];
      ou += size_t(mv[b]) * kv[b];
      ov += size_t(nv[b]) * kv[b];
    }
  }
  bsvd_options_t o;
  bsvd_options_init(&o);
  o.backend = BSVD_BACKEND_CUDA;
  o.pair_solver = bsvd_pair_solver_t(pair_solver > 0 ? pair_solver : 0);
  o.eig_sweeps = eig_sweeps;
  size_t ws = 0;
  bsvd_workspace_size_v(precision, BSVD_JOB_VECTORS, mv.data(), nv.data(), batch, &o, &ws);
  DevBuf<unsigned char> dws(ws);
  o.workspace = dws.p;
  o.workspace_bytes = ws;
  bsvd_status_t st = 0;
  std::vector<int> path(batch, -1);
  auto call = [&] {
    st =
        gesvj_vbatched<T>(Job::Vectors, mv.data(), nv.data(), pA.data(), mv.data(), pS.data(),
                          pU.data(), mv.data(), pV.data(), nv.data(), dinfo.p, dsweeps.p, batch, o);
  };
  BenchRow row;
  row.solver = "bsvd-cuda";
  row.device = dev;
  row.c = c0;
  row.ms = time_events(reps, nullptr, call);
  if (st != 0) {
    row.note = std::string("failed: ") + bsvd_last_error();
    rows.push_back(row);
    return true;
  }
  o.path = path.data();
  profiled([&] { call(); });
  o.path = nullptr;
  const detail::cuda::BlockedProfile prof = detail::cuda::blocked_last_profile();
  // Results back; T1-T4 on every matrix: r's worst ratios, pass, max
  // sweeps and note; acc and sweeps per matrix.
  std::vector<R> S(es);
  std::vector<T> U(eu), V(ev);
  std::vector<int> info(batch), sweeps(batch);
  std::vector<BenchRow> acc(batch);
  auto check_all = [&](BenchRow &r, std::vector<BenchRow> &acc_out, std::vector<int> &sw_out) {
    BENCH_CUDA(cudaMemcpy(S.data(), dS.p, es * sizeof(R), cudaMemcpyDeviceToHost));
    BENCH_CUDA(cudaMemcpy(U.data(), dU.p, eu * sizeof(T), cudaMemcpyDeviceToHost));
    BENCH_CUDA(cudaMemcpy(V.data(), dV.p, ev * sizeof(T), cudaMemcpyDeviceToHost));
    BENCH_CUDA(cudaMemcpy(info.data(), dinfo.p, batch * sizeof(int), cudaMemcpyDeviceToHost));
    BENCH_CUDA(cudaMemcpy(sw_out.data(), dsweeps.p, batch * sizeof(int), cudaMemcpyDeviceToHost));
    size_t os = 0, ou = 0, ov = 0;
    int bad = 0, fail = 0;
    r.t1 = r.t2 = r.t3 = 0;
    r.max_sweeps = 0;
    for (int b = 0; b < batch; ++b) {
      acc_out[b] = BenchRow{};
      acc_out[b].c = c0;
      record_accuracy<T>(acc_out[b], mv[b], nv[b], hA[b].data(), 1, S.data() + os, 0, U.data() + ou,
                         mv[b], 0, V.data() + ov, nv[b], 0);
      r.t1 = std::max(r.t1, acc_out[b].t1);
      r.t2 = std::max(r.t2, acc_out[b].t2);
      r.t3 = std::max(r.t3, acc_out[b].t3);
      fail += !acc_out[b].pass;
      bad += info[b] != 0;
      r.max_sweeps = std::max(r.max_sweeps, sw_out[b]);
      os += kv[b];
      ou += size_t(mv[b]) * kv[b];
      ov += size_t(nv[b]) * kv[b];
    }
    r.pass = fail == 0;
    char note[160];
    std::snprintf(note, sizeof note, "%d matrices, one call; %d fail T1-T4, %d info != 0", batch,
                  fail, bad);
    r.note = note;
  };
  auto sweeps_text = [&](const std::vector<int> &sw) {
    long total = 0;
    for (int b = 0; b < batch; ++b) total += sw[b];
    return "; sweeps summed over the batch " + std::to_string(total);
  };
  // The batch with other options (set(o)) and their own workspace: body()
  // runs with them; o is restored after.
  auto with_options = [&](auto set, auto body) {
    const bsvd_options_t keep = o;
    set(o);
    size_t ws2 = 0;
    bsvd_workspace_size_v(precision, BSVD_JOB_VECTORS, mv.data(), nv.data(), batch, &o, &ws2);
    DevBuf<unsigned char> dws2(ws2);
    o.workspace = dws2.p;
    o.workspace_bytes = ws2;
    body();
    o = keep;
  };
  check_all(row, acc, sweeps);
  if (!wcycles.empty()) row.note += sweeps_text(sweeps);
  rows.push_back(row);
  // --wcycle: the whole batch again with each two-level plan (its own
  // workspace; T1-T4 on every matrix; acc and sweeps stay the default
  // plan's, for the per-matrix table below).
  for (const auto &wc : wcycles)
    with_options(
        [&](bsvd_options_t &x) {
          x.wcycle_blocks = wc.first;
          x.wcycle_sweeps = wc.second;
        },
        [&] {
          BenchRow wr = row;
          wr.solver = wcycle_row_name(wc);
          wr.ms = time_events(reps, nullptr, call);
          if (st != 0) {
            wr.note = std::string("failed: ") + bsvd_last_error();
          } else {
            std::vector<BenchRow> wacc(batch);
            std::vector<int> wsweeps(batch);
            check_all(wr, wacc, wsweeps);
            wr.note += sweeps_text(wsweeps);
          }
          rows.push_back(wr);
        });
  BenchRow sr = row;
  sr.solver = "bsvd-cuda-stages";
  sr.ms =
      prof.load + prof.gram + prof.evd + prof.update + prof.pair_evd + prof.pair_svd + prof.finish;
  sr.max_sweeps = prof.sweeps;
  sr.note = "blocked matrices: " + stage_text(prof);
  rows.push_back(sr);
  // The same batch with the other grouping of the blocked path's Gram-path
  // matrices, and with the fused kernel before the blocked path on one
  // stream instead of beside it.
  auto variant_row = [&](const std::string &name, const std::string &what, auto set) {
    BenchRow vr = row;
    vr.solver = name;
    for_each_override(
        {what}, [&](detail::Overrides &o, const std::string &) { set(o); },
        [&](const std::string &) { vr.ms = time_events(reps, nullptr, call); });
    vr.note = "the whole batch, " + what + "; timing only (accuracy columns: the bsvd-cuda row's)";
    rows.push_back(vr);
  };
  const int other = other_groups();
  variant_row("bsvd-cuda-groups" + std::to_string(other), std::to_string(other) + " stream groups",
              [&](detail::Overrides &o) { o.stream_groups = other; });
  // The other choice of the QR preconditioning: its own workspace, its
  // sweeps.
  const bool took_qrcp = std::count(path.begin(), path.end(), int(BSVD_PATH_CUDA_QRCP)) > 0;
  std::vector<int> sw2(batch); // the sweeps with the other choice
  with_options(
      [&](bsvd_options_t &x) { x.precondition = took_qrcp ? -1 : 1; },
      [&] {
        BenchRow vr = row;
        vr.solver = took_qrcp ? "bsvd-cuda-noprecond" : "bsvd-cuda-precond";
        vr.ms = time_events(reps, nullptr, call);
        BENCH_CUDA(cudaMemcpy(sw2.data(), dsweeps.p, batch * sizeof(int), cudaMemcpyDeviceToHost));
        vr.max_sweeps = *std::max_element(sw2.begin(), sw2.end());
        profiled([&] { call(); });
        vr.note = std::string("the whole batch, precondition = ") + (took_qrcp ? "-1" : "1") +
                  "; timing and sweeps only (accuracy: the bsvd-cuda row's); blocked matrices: " +
                  stage_text(detail::cuda::blocked_last_profile());
        rows.push_back(vr);
      });
  variant_row("bsvd-cuda-serial", "the fused kernel before the blocked path",
              [](detail::Overrides &o) { o.fused_beside = detail::Force::kOff; });
  variant_row("bsvd-cuda-fusedall", "every fitting matrix on the fused kernel",
              [](detail::Overrides &o) { o.fused_max_cols = 100000; });
  // --evd-threads all: the whole batch again with each eigensolver plan.
  if (evd_plans)
    for_each_evd_plan([&](const std::string &nt) {
      BenchRow pr = row;
      pr.solver = "bsvd-cuda-evd" + nt;
      pr.ms = time_events(reps, nullptr, call);
      profiled([&] { call(); });
      pr.note = "blocked matrices: " + stage_text(detail::cuda::blocked_last_profile());
      rows.push_back(pr);
    });
  // The CPU solver with the same options (its sweeps are the reference).
  std::vector<int> cinfo(batch), csweeps(batch);
  {
    std::vector<std::vector<R>> cS(batch);
    std::vector<const T *> hp(batch);
    std::vector<R *> pcS(batch);
    for (int b = 0; b < batch; ++b) {
      cS[b].resize(kv[b]);
      pcS[b] = cS[b].data();
      hp[b] = hA[b].data();
    }
    bsvd_options_t co = o;
    co.backend = BSVD_BACKEND_CPU;
    co.workspace = nullptr;
    co.workspace_bytes = 0;
    co.variant = BSVD_VARIANT_BLOCKED; // the blocked twin for every matrix
    // preconditioned (cpu: every matrix) when the GPU preconditioned its
    // blocked matrices
    co.precondition = took_qrcp ? 1 : -1;
    gesvj_vbatched<T>(Job::Values, mv.data(), nv.data(), hp.data(), mv.data(), pcS.data(), nullptr,
                      mv.data(), nullptr, nv.data(), cinfo.data(), csweeps.data(), batch, co);
  }
  // cuSOLVER one matrix at a time: gesvdj, gesvd (m >= n), the better one.
  cusolverDnHandle_t h;
  BENCH_SOLVER(cusolverDnCreate(&h));
  double tj = 0, tq = 0, tbest = 0;
  int jfail = 0, qfail = 0, bfail = 0;
  std::printf("per matrix (%s, %c): name m n path bsvd-sweeps cpu-blocked-sweeps "
              "gesvdj-ms gesvd-ms T-pass(bsvd) sweeps-%s\n",
              dev.c_str(), precision, took_qrcp ? "noprecond" : "precond");
  for (int b = 0; b < batch; ++b) {
    BenchCase c = c0;
    c.m = mv[b];
    c.n = nv[b];
    c.batch = 1;
    c.check_sample = 1;
    c.reps = std::min(reps, 3);
    std::vector<BenchRow> one;
    const T *dAb = pA[b];
    run_gesvdj_loop<T>(c, hA[b].data(), dAb, h, dev, one);
    double best = one.back().ms;
    bool best_pass = one.back().pass;
    tj += one.back().ms;
    jfail += !one.back().pass;
    double q = 0;
    if (c.m >= c.n) {
      run_gesvd_loop<T>(c, hA[b].data(), dAb, h, dev, one);
      q = one.back().ms;
      tq += q;
      qfail += !one.back().pass;
      if (q < best) {
        best = q;
        best_pass = one.back().pass;
      }
    } else {
      tq += one.front().ms; // gesvd needs m >= n: counted with gesvdj's time
    }
    tbest += best;
    bfail += !best_pass;
    std::printf("  %-16s %5d %5d %-17s %3d %3d %9.3f %9.3f %s %3d\n", mats[b].name.c_str(), mv[b],
                nv[b], path_label(path[b]), sweeps[b], csweeps[b], one.front().ms, q,
                acc[b].pass ? "yes" : "NO", sw2[b]);
  }
  cusolverDnDestroy(h);
  auto total = [&](const char *name, double ms, int fails, const char *what) {
    BenchRow r;
    r.solver = name;
    r.device = dev;
    r.c = c0;
    r.ms = ms;
    r.pass = fails == 0;
    char note[160];
    std::snprintf(note, sizeof note, "%s; %d of %d matrices fail T1-T4", what, fails, batch);
    r.note = note;
    rows.push_back(r);
  };
  total("cusolver-gesvdj-each", tj, jfail, "gesvdj per matrix, summed");
  total("cusolver-gesvd-each", tq, qfail, "gesvd per matrix (gesvdj where m < n), summed");
  total("cusolver-best-each", tbest, bfail, "the faster of gesvdj / gesvd per matrix, summed");
  return true;
}

} // namespace

bool bench_gpu_mtx(const std::vector<std::string> &files, char precision, int reps, int pair_solver,
                   bool evd_plans, int eig_sweeps, const std::vector<std::pair<int, int>> &wcycles,
                   std::vector<BenchRow> &rows) {
  std::vector<testing::DenseMatrix> mats;
  for (const auto &f : files) {
    testing::DenseMatrix dm;
    std::string err;
    if (!testing::read_matrix_market(f, dm, err)) {
      std::fprintf(stderr, "bsvd bench: %s: %s\n", f.c_str(), err.c_str());
      return false;
    }
    // The timed batch is real (its precision's real or complex type built
    // from the real parts), so a complex or non-finite file is refused.
    if (dm.is_complex || !dm.finite()) {
      std::fprintf(stderr, "bsvd bench: %s: %s entries (--mtx takes real, finite matrices)\n",
                   f.c_str(), dm.is_complex ? "complex" : "NaN or Inf");
      return false;
    }
    if (dm.m > 0 && dm.n > 0) mats.push_back(std::move(dm));
  }
  // BSVD_MTX_RANDOM=1: the same shapes with random entries (a mixed-size
  // batch of random matrices, to compare with the real ones); =2: random
  // values on the files' nonzero pattern only (sparse, but not structured:
  // what a sparsity rule for the preconditioning would also see).
  if (const char *r = std::getenv("BSVD_MTX_RANDOM"); r && (r[0] == '1' || r[0] == '2')) {
    const bool keep_pattern = r[0] == '2';
    for (size_t b = 0; b < mats.size(); ++b) {
      auto &dm = mats[b];
      std::vector<double> g(dm.a.size());
      testing::generate<double>(testing::Family::Random, dm.m, dm.n, 1.0, 9100u + b, g.data(),
                                dm.m);
      for (size_t e = 0; e < g.size(); ++e)
        if (!keep_pattern || dm.a[e] != 0.0) dm.a[e] = g[e];
      dm.name += keep_pattern ? "~randpattern" : "~rand";
    }
  }
  try {
    switch (precision) {
    case 's':
      return bench_gpu_mtx_t<float>(mats, precision, reps, pair_solver, evd_plans, eig_sweeps,
                                    wcycles, rows);
    case 'd':
      return bench_gpu_mtx_t<double>(mats, precision, reps, pair_solver, evd_plans, eig_sweeps,
                                     wcycles, rows);
    case 'c':
      return bench_gpu_mtx_t<std::complex<float>>(mats, precision, reps, pair_solver, evd_plans,
                                                  eig_sweeps, wcycles, rows);
    default:
      return bench_gpu_mtx_t<std::complex<double>>(mats, precision, reps, pair_solver, evd_plans,
                                                   eig_sweeps, wcycles, rows);
    }
  } catch (const CudaFail &f) {
    BenchRow r;
    r.solver = "bsvd-cuda";
    r.note = "failed: " + f.what;
    rows.push_back(r);
    return false;
  }
}

namespace {
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
