// The CPU backend of backends.hpp: std::thread workers over the batch.
//
// Each worker owns one slice of the workspace, large enough for the solve of
// the largest matrix of the batch (64-byte aligned), and its own cache of
// ordering tables; it pulls matrix indices from a shared atomic counter, so
// the result of each matrix depends only on the matrix and the configuration
// (bitwise identical for any number of threads), and a worker that could not
// be started simply leaves its share to the others.
//
// The backend executes the call's plan (plan::cpu_plan): its groups say
// which matrices take the LAPACK path and which the Jacobi solver. While
// LAPACK matrices are solved by several workers, OpenBLAS's own threads
// are capped so that workers x BLAS threads stays within the call's
// thread budget (one BLAS thread each when the batch fills the workers;
// all of them for a single large matrix), and restored after the call.
#include "cpu_internal.hpp"
#include "lapack.hpp"

#include "../core/backends.hpp"
#include "../plan/plan.hpp"

#include <algorithm>
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

// Bytes of one worker's slice: the largest solve of the plan, rounded up to
// the alignment (a uniform group is one size).
template <class T> size_t slice_bytes(const plan::Plan &p, const Config &cfg) {
  size_t mx = 0;
  for (const plan::Group &g : p.groups)
    for (size_t i = 0; i < (g.whole >= 0 ? std::min<size_t>(g.size(), 1) : g.size()); ++i)
      mx = std::max(
          mx, cpu::solve_one_scratch_bytes<T>(g.rows(i), g.cols(i), p.vectors, cfg, g.lapack));
  return cpu::Arena::add_sat(mx, kAlign - 1) / kAlign * kAlign;
}

// The workspace of the plan's workers (+ kAlign: room to align the
// caller's base pointer); SIZE_MAX when it overflows.
template <class T> size_t plan_workspace(const plan::Plan &p, const Config &cfg, int threads) {
  const size_t slice = slice_bytes<T>(p, cfg);
  if (slice == 0) return 0;
  return cpu::Arena::add_sat(cpu::Arena::mul_sat(size_t(threads), slice), kAlign);
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
  return plan_workspace<T>(plan::cpu_plan(plan::shapes_of(batch), cfg), cfg,
                           clamp_threads(threads, batch.count));
}

template <class T> bsvd_status_t cpu_gesvj(const Batch<T> &batch, const Config &cfg,
                                           void *workspace, size_t workspace_bytes, int threads,
                                           int *path) {
  if (batch.count <= 0) return BSVD_STATUS_SUCCESS;
  try {
    const plan::Plan p = plan::cpu_plan(plan::shapes_of(batch), cfg);
    const int nthreads = clamp_threads(threads, batch.count);
    const size_t slice = slice_bytes<T>(p, cfg);
    const size_t need = plan_workspace<T>(p, cfg, nthreads);
    if (slice == SIZE_MAX || need == SIZE_MAX) return BSVD_STATUS_ALLOC_FAILED;
    std::vector<unsigned char> own; // only when the caller passed none
    unsigned char *ws = static_cast<unsigned char *>(workspace);
    if (need > 0) {
      if (!ws) {
        own.resize(need);
        ws = own.data();
        workspace_bytes = need;
      } else if (workspace_bytes < need) {
        set_error("opts->workspace_bytes = %zu is below the %zu bytes this call needs",
                  workspace_bytes, need);
        return BSVD_STATUS_WORKSPACE_TOO_SMALL;
      }
      ws += (kAlign - reinterpret_cast<uintptr_t>(ws) % kAlign) % kAlign;
    }

    // The plan's matrices as one sequence the workers pull from: position k
    // of group g is item first[g] + k.
    std::vector<size_t> first(p.groups.size() + 1, 0);
    for (size_t g = 0; g < p.groups.size(); ++g) first[g + 1] = first[g] + p.groups[g].size();
    const size_t items = first.back();
    std::atomic<size_t> next{0};
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
      size_t g = 0;
      for (;;) {
        const size_t k = next.fetch_add(1);
        if (k >= items) break;
        while (k >= first[g + 1]) ++g;
        const plan::Group &grp = p.groups[g];
        const int b = grp.at(k - first[g]);
        try {
          cache->trim();
          const int path_b = cpu::solve_one_impl(batch, b, cfg, scratch, *cache, grp.lapack);
          if (path) path[b] = path_b;
        } catch (const std::bad_alloc &) {
          status.store(BSVD_STATUS_ALLOC_FAILED);
        } catch (...) {
          status.store(BSVD_STATUS_INTERNAL_ERROR);
        }
      }
      delete cache;
    };

    const bool any_lapack = std::any_of(p.groups.begin(), p.groups.end(),
                                        [](const plan::Group &g) { return g.lapack; });
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
