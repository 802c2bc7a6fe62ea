// What the GPU parts of `bsvd bench` share (bench_cuda.cu, bench_mtx.cu,
// bench_tune.cu): CUDA and cuSOLVER error handling, device buffers, the
// cuSOLVER calls by precision, the timing by CUDA events, the accuracy
// record, the plan switches and the cuSOLVER one-matrix-at-a-time rows.
#pragma once

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
#include <cublas_v2.h>
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

namespace bsvd::cli::gpu_bench {

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
#define BENCH_BLAS(call)                                                                           \
  do {                                                                                             \
    const cublasStatus_t s_ = (call);                                                              \
    if (s_ != CUBLAS_STATUS_SUCCESS)                                                               \
      throw CudaFail{std::string(#call) + ": cublas status " + std::to_string(int(s_))};           \
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
inline double warmup_ms() {
  if (const char *e = std::getenv("BSVD_BENCH_WARMUP_MS")) return std::max(0.0, std::atof(e));
  return 25.0;
}
inline double time_events(int reps, const std::function<void()> &setup,
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
// cuSOLVER's gesvdaStridedBatched of rank `rank` (m >= n) on the device
// batch dA, into dS, dU, dV (strides rank, m rank, n rank), timed: sets
// row.ms, or row.note when cuSOLVER refuses. Returns whether it ran. The
// residual norms are optional (NULL: neither computed nor timed); should
// this cuSOLVER insist on the array, it gets one.
template <class T> bool time_gesvda(const BenchCase &c, const T *dA, cusolverDnHandle_t h, int rank,
                                    real_t<T> *dS, T *dU, T *dV, BenchRow &row) {
  using C = typename Cu<T>::C;
  const int m = c.m, n = c.n, batch = c.batch;
  const cusolverEigMode_t jz = c.vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  int lw = 0;
  const cusolverStatus_t qs =
      Cu<T>::a_size(h, jz, rank, m, n, (const C *)dA, m, (long long)m * n, dS, rank, (const C *)dU,
                    m, (long long)m * rank, (const C *)dV, n, (long long)n * rank, &lw, batch);
  if (qs != CUSOLVER_STATUS_SUCCESS) {
    row.note += "refused: cusolver status " + std::to_string(int(qs));
    return false;
  }
  DevBuf<T> work(size_t(std::max(lw, 1)));
  DevBuf<int> dinfo(batch);
  std::vector<double> resid(batch);
  double *nrm = nullptr;
  cusolverStatus_t rs = CUSOLVER_STATUS_SUCCESS;
  auto body = [&] {
    rs = Cu<T>::a(h, jz, rank, m, n, (const C *)dA, m, (long long)m * n, dS, rank, (C *)dU, m,
                  (long long)m * rank, (C *)dV, n, (long long)n * rank, (C *)work.p, lw, dinfo.p,
                  nrm, batch);
  };
  body();
  if (rs != CUSOLVER_STATUS_SUCCESS) {
    nrm = resid.data();
    row.note += "residual array required; ";
  }
  row.ms = time_events(c.reps, nullptr, body);
  if (rs != CUSOLVER_STATUS_SUCCESS) {
    row.ms = 0;
    row.note += "refused: cusolver status " + std::to_string(int(rs));
    return false;
  }
  return true;
}

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

inline bool is_blocked_path(int p) {
  return p == BSVD_PATH_CUDA_BLOCKED || p == BSVD_PATH_CUDA_PAIR_EVD ||
         p == BSVD_PATH_CUDA_PAIR_SVD || p == BSVD_PATH_CUDA_QRCP || p == BSVD_PATH_CUDA_GRAM;
}
inline const char *path_label(int p) {
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
inline std::string stage_text(const detail::cuda::BlockedProfile &pr) {
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
inline std::string wcycle_row_name(std::pair<int, int> wc) {
  return "bsvd-cuda-wc" + std::to_string(wc.first) + "x" + std::to_string(wc.second);
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
} // namespace bsvd::cli::gpu_bench
