// The CPU backend of backends.hpp: std::thread workers over the batch.
//
// Each worker owns one slice of the workspace, large enough for the solve of
// the largest matrix of the batch (64-byte aligned), and its own cache of
// ordering tables; it pulls matrix indices from a shared atomic counter, so
// the result of each matrix depends only on the matrix and the configuration
// (bitwise identical for any number of threads), and a worker that could not
// be started simply leaves its share to the others.
//
// Each matrix takes the LAPACK path or the Jacobi solver by the planner's
// rule (plan::cpu_lapack). While LAPACK matrices are solved by several
// workers, OpenBLAS's own threads are capped so that workers x BLAS threads
// stays within the call's thread budget (one BLAS thread each when the
// batch fills the workers; all of them for a single large matrix), and
// restored after the call.
#include "cpu_internal.hpp"
#include "lapack.hpp"

#include "../core/backends.hpp"
#include "../plan/plan.hpp"

#include <atomic>
#include <new>
#include <optional>
#include <thread>
#include <vector>

namespace bsvd::detail {

namespace {

constexpr size_t kAlign = 64;

int clamp_threads(int threads, int count) {
  if (threads < 1) threads = 1;
  if (count >= 1 && threads > count) threads = count;
  return threads;
}

// Whether matrix b takes the LAPACK path (force: the call's override).
template <class T> bool takes_lapack(const Batch<T> &batch, int b, const Config &cfg, Force force) {
  return plan::cpu_lapack(precision_of<T>(), batch.dims.rows(b), batch.dims.cols(b), batch.vectors,
                          cfg, force);
}

// Bytes of one worker's slice: the largest solve of the batch, rounded up
// to the alignment.
template <class T> size_t slice_bytes(const Batch<T> &batch, const Config &cfg, Force force) {
  size_t mx = 0;
  const int count = batch.dims.uniform() ? 1 : batch.count;
  for (int b = 0; b < count; ++b)
    mx = std::max(mx, cpu::solve_one_scratch_bytes<T>(batch.dims.rows(b), batch.dims.cols(b),
                                                      batch.vectors, cfg,
                                                      takes_lapack(batch, b, cfg, force)));
  return cpu::Arena::add_sat(mx, kAlign - 1) / kAlign * kAlign;
}

// Restores OpenBLAS's thread count when the call ends.
struct BlasThreads {
  int saved = -1;
  BlasThreads(int threads) { saved = cpu::blas_threads_set(threads); }
  ~BlasThreads() {
    if (saved > 0) cpu::blas_threads_set(saved);
  }
};

// The BLAS threads of each worker: the call's thread budget (num_threads,
// at most the cores) shared by the workers.
int blas_threads_per_worker(const Config &cfg, int workers) {
  const int hw = std::max(1, int(std::thread::hardware_concurrency()));
  const int budget = cfg.num_threads > 0 ? std::min(cfg.num_threads, hw) : hw;
  return std::max(1, budget / std::max(1, workers));
}

} // namespace

template <class T>
size_t cpu_workspace_bytes(const Batch<T> &batch, const Config &cfg, int threads) {
  if (batch.count <= 0) return 0;
  const int t = clamp_threads(threads, batch.count);
  const size_t slice = slice_bytes(batch, cfg, current_overrides().cpu_lapack);
  if (slice == 0) return 0;
  // + kAlign: room to align the caller's base pointer.
  return cpu::Arena::add_sat(cpu::Arena::mul_sat(size_t(t), slice), kAlign);
}

template <class T> bsvd_status_t cpu_gesvj(const Batch<T> &batch, const Config &cfg,
                                           void *workspace, size_t workspace_bytes, int threads,
                                           int *path) {
  if (batch.count <= 0) return BSVD_STATUS_SUCCESS;
  try {
    const int nthreads = clamp_threads(threads, batch.count);
    const Force force = current_overrides().cpu_lapack;
    const size_t slice = slice_bytes(batch, cfg, force);
    const size_t need = cpu_workspace_bytes(batch, cfg, nthreads);
    if (slice == SIZE_MAX || need == SIZE_MAX) return BSVD_STATUS_ALLOC_FAILED;
    std::vector<unsigned char> own; // only when the caller passed none
    unsigned char *ws = static_cast<unsigned char *>(workspace);
    if (need > 0) {
      if (!ws) {
        own.resize(need);
        ws = own.data();
        workspace_bytes = need;
      } else if (workspace_bytes < need) {
        set_error("cpu workspace of %zu bytes is less than the %zu bytes required", workspace_bytes,
                  need);
        return BSVD_STATUS_WORKSPACE_TOO_SMALL;
      }
      ws += (kAlign - reinterpret_cast<uintptr_t>(ws) % kAlign) % kAlign;
    }

    std::atomic<int> next{0};
    std::atomic<int> status{BSVD_STATUS_SUCCESS};
    auto worker = [&](int w) noexcept {
      T *scratch = slice > 0 ? reinterpret_cast<T *>(ws + size_t(w) * slice) : nullptr;
      cpu::OrderingCache *cache = nullptr;
      try {
        cache = new cpu::OrderingCache();
      } catch (...) {
        status.store(BSVD_STATUS_ALLOC_FAILED);
        return;
      }
      for (;;) {
        const int b = next.fetch_add(1);
        if (b >= batch.count) break;
        try {
          cache->trim();
          const int p = cpu::solve_one_impl(batch, b, cfg, scratch, *cache,
                                            takes_lapack(batch, b, cfg, force));
          if (path) path[b] = p;
        } catch (const std::bad_alloc &) {
          status.store(BSVD_STATUS_ALLOC_FAILED);
        } catch (...) {
          status.store(BSVD_STATUS_INTERNAL_ERROR);
        }
      }
      delete cache;
    };

    bool any_lapack = false;
    for (int b = 0; b < (batch.dims.uniform() ? 1 : batch.count) && !any_lapack; ++b)
      any_lapack = takes_lapack(batch, b, cfg, force);
    std::optional<BlasThreads> blas;
    if (any_lapack) blas.emplace(blas_threads_per_worker(cfg, nthreads));

    std::vector<std::thread> pool;
    try {
      pool.reserve(size_t(nthreads - 1));
      for (int w = 1; w < nthreads; ++w) pool.emplace_back(worker, w);
    } catch (...) {
      // Fewer threads than asked: the started workers share the batch.
    }
    worker(0);
    for (std::thread &t : pool) t.join();
    const int st = status.load();
    if (st == BSVD_STATUS_ALLOC_FAILED) set_error("cpu backend: host allocation failed");
    if (st == BSVD_STATUS_INTERNAL_ERROR) set_error("cpu backend: internal error");
    return st;
  } catch (const std::bad_alloc &) {
    set_error("cpu backend: host allocation failed");
    return BSVD_STATUS_ALLOC_FAILED;
  } catch (...) {
    set_error("cpu backend: internal error");
    return BSVD_STATUS_INTERNAL_ERROR;
  }
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template size_t cpu_workspace_bytes<T>(const Batch<T> &, const Config &, int);                   \
  template bsvd_status_t cpu_gesvj<T>(const Batch<T> &, const Config &, void *, size_t, int, int *);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail
