// The hyperbolic SVD of one matrix, and the batch driver (backends.hpp,
// cpu_gehsvj). The steps of solve_one.cpp, minus what the HSVD does not
// have yet (m < n, which the API refuses; the QR preconditioning, whose
// column pivoting would permute J; the LAPACK path):
//   (a) NaN / Inf -> info = BSVD_INFO_NONFINITE, S, U, V = NaN;
//   (b) all-zero G -> S = 0, U and V the identity columns;
//   (c) exact power-of-two scaling of badly scaled input (solve_one's
//       window: no rotation can make a column longer than ||G||_F -- the
//       trigonometric ones keep alpha + beta, the hyperbolic ones shrink
//       both -- so the same bounds hold);
//   (d) the hyperbolic iteration on W = G, V = I: unblocked, or blocked
//       for variant = blocked (jacobi_hyperbolic_blocked.cpp);
//   (e) sigma_j = ||w_j||, u_j = w_j / sigma_j, numerically null columns
//       of U completed, each side of nplus sorted descending on its own,
//       and V written as J V_acc J (see below).
//
// Which V. The iteration accumulates V_acc with G V_acc = W = U Sigma and
// V_acc^H J V_acc = J, hence V_acc^-1 = J V_acc^H J and
//   G = U Sigma V_acc^-1 = U Sigma (J V_acc J)^H        (Sigma and J commute).
// The output V = J V_acc J = V_acc^-H is J-unitary too, and G = U Sigma V^H
// is the form of HBJ eq. 2.10 and of the ordinary SVD's outputs: the same
// reconstruction serves both, and for J = +-I both V's coincide. The
// transformation itself is J V J (its off-diagonal blocks negated).
#include "cpu_internal.hpp"

#include "../core/backends.hpp"

#include <algorithm>
#include <atomic>
#include <new>
#include <thread>
#include <vector>

namespace bsvd::detail {
namespace cpu {

namespace {

// One worker's scratch, grown to the largest matrix it meets.
template <class T> struct HsvdScratch {
  using R = real_of_t<T>;
  std::vector<T> W, V, cand;
  std::vector<R> norms, anchor, mant;
  std::vector<int> expo, perm;
  std::vector<char> null;
};

template <class T> int solve_one_hsvd(const Batch<T> &batch, int b, int nplus, const Config &cfg,
                                      HsvdScratch<T> &ws, OrderingCache &cache) {
  using R = real_of_t<T>;
  const int m = batch.dims.rows(b), n = batch.dims.cols(b);
  const T *A = batch.A.ptr(b);
  const int lda = batch.A.ldm(b);
  const bool vec = batch.vectors;
  auto set_result = [&](int info, int sweeps) {
    batch.info[b] = info;
    if (batch.sweeps) batch.sweeps[b] = sweeps;
  };
  if (m <= 0 || n <= 0) {
    set_result(0, 0);
    return BSVD_PATH_TRIVIAL;
  }
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      if (!finite_(A[i + int64_t(j) * lda])) {
        fill_nonfinite(batch, b, m, n);
        set_result(BSVD_INFO_NONFINITE, 0);
        return BSVD_PATH_TRIVIAL;
      }

  ws.W.resize(size_t(m) * n);
  T *W = ws.W.data();
  R amax = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      W[i + int64_t(j) * m] = A[i + int64_t(j) * lda];
      amax = std::max(amax, maxpart_(W[i + int64_t(j) * m]));
    }
  R *S = batch.S.ptr(b);
  T *U = vec ? batch.U.ptr(b) : nullptr;
  T *V = vec ? batch.V.ptr(b) : nullptr;
  const int ldu = vec ? batch.U.ldm(b) : 0, ldv = vec ? batch.V.ldm(b) : 0;
  if (amax == R(0)) {
    fill_zero(batch, b, m, n);
    set_result(0, 0);
    return BSVD_PATH_CPU_UNBLOCKED;
  }
  const int escale = prescale_exponent(amax, m, n);
  if (escale != 0)
    for (size_t i = 0; i < size_t(m) * n; ++i) W[i] = ldexp_(W[i], escale);

  T *Vw = nullptr;
  if (vec) {
    ws.V.assign(size_t(n) * n, T(0));
    Vw = ws.V.data();
    for (int j = 0; j < n; ++j) Vw[j + int64_t(j) * n] = T(1);
  }
  ws.norms.resize(n);
  ws.anchor.resize(n);
  const R tol = resolve_tol<R>(cfg.tol, m);
  const int max_sweeps = cfg.max_sweeps > 0 ? cfg.max_sweeps : kDefaultMaxSweeps;
  const bool blocked = cfg.variant == BSVD_VARIANT_BLOCKED;
  const HyperbolicStats st =
      blocked
          ? hyperbolic_blocked_impl(m, n, nplus, W, m, Vw, n, plan::block_width(cfg.block_size),
                                    cfg.ordering, double(tol), max_sweeps, cfg.eig_sweeps, cache)
          : hyperbolic_impl(m, n, nplus, W, m, Vw, n, cache.get(cfg.ordering, n), tol, max_sweeps,
                            ws.norms.data(), ws.anchor.data());

  // Finish, as solve_one.cpp (f): a column below u sigma_max is numerically
  // null and its U column is completed to keep U orthonormal.
  ws.mant.resize(n);
  ws.expo.resize(n);
  ws.perm.resize(n);
  R *mant = ws.mant.data();
  int *expo = ws.expo.data();
  for (int j = 0; j < n; ++j) {
    T *wj = W + int64_t(j) * m;
    scaled_norm(m, wj, mant[j], expo[j], vec ? wj : nullptr);
  }
  if (vec) {
    int jmax = 0;
    for (int j = 1; j < n; ++j)
      if (mant[j] != R(0) && (mant[jmax] == R(0) || expo[j] > expo[jmax] ||
                              (expo[j] == expo[jmax] && mant[j] > mant[jmax])))
        jmax = j;
    ws.null.assign(n, 0);
    bool any_null = false;
    for (int j = 0; j < n; ++j) {
      const R ratio =
          mant[j] == R(0) ? R(0) : std::ldexp(mant[j] / mant[jmax], expo[j] - expo[jmax]);
      ws.null[j] = ratio < unit_roundoff<R>();
      any_null = any_null || ws.null[j];
    }
    if (any_null) {
      ws.cand.resize(completion_work(m, n, 1));
      complete_basis(m, n, W, ws.null.data(), 1, ws.cand.data());
    }
  }
  // Descending within each side of nplus: the +1 values first, then the -1.
  int *perm = ws.perm.data();
  for (int j = 0; j < n; ++j) perm[j] = j;
  auto desc = [mant, expo](int a, int c) {
    if (mant[a] == R(0) || mant[c] == R(0)) return mant[a] > mant[c];
    if (expo[a] != expo[c]) return expo[a] > expo[c];
    return mant[a] > mant[c];
  };
  std::stable_sort(perm, perm + nplus, desc);
  std::stable_sort(perm + nplus, perm + n, desc);
  for (int j = 0; j < n; ++j) S[j] = std::ldexp(mant[perm[j]], expo[perm[j]] - escale);
  if (vec)
    for (int j = 0; j < n; ++j) {
      const int pj = perm[j];
      for (int i = 0; i < m; ++i) U[i + int64_t(j) * ldu] = W[i + int64_t(pj) * m];
      // V = J V_acc J: entry (i, pj) negated where i and pj lie on
      // different sides of nplus (the sort keeps pj on j's side).
      for (int i = 0; i < n; ++i) {
        const T x = Vw[i + int64_t(pj) * n];
        V[i + int64_t(j) * ldv] = (i < nplus) == (pj < nplus) ? x : -x;
      }
    }
  set_result(st.breakdown ? BSVD_INFO_HYPERBOLIC_BREAKDOWN : st.converged ? 0 : 1, st.sweeps);
  return blocked ? BSVD_PATH_CPU_BLOCKED : BSVD_PATH_CPU_UNBLOCKED;
}

} // namespace
} // namespace cpu

template <class T>
bsvd_status_t cpu_gehsvj(const Batch<T> &batch, const Config &cfg, int threads, int *path) {
  if (batch.count <= 0) return BSVD_STATUS_SUCCESS;
  std::atomic<int> next{0};
  std::atomic<int> status{BSVD_STATUS_SUCCESS};
  // Each matrix's result depends only on the matrix and cfg: bitwise the
  // same for any number of workers.
  auto worker = [&]() noexcept {
    try {
      cpu::HsvdScratch<T> ws;
      cpu::OrderingCache cache;
      for (;;) {
        const int b = next.fetch_add(1);
        if (b >= batch.count) break;
        cache.trim();
        const int p = cpu::solve_one_hsvd(batch, b, batch.nplus[b], cfg, ws, cache);
        if (path) path[b] = p;
      }
    } catch (const std::bad_alloc &) {
      status.store(BSVD_STATUS_ALLOC_FAILED);
    } catch (...) {
      status.store(BSVD_STATUS_INTERNAL_ERROR);
    }
  };
  const int nthreads = std::max(1, std::min(threads, batch.count));
  std::vector<std::thread> pool;
  try {
    for (int w = 1; w < nthreads; ++w) pool.emplace_back(worker);
  } catch (...) {
    // Fewer threads than asked: the started workers share the batch.
  }
  worker();
  for (std::thread &t : pool) t.join();
  const int st = status.load();
  if (st == BSVD_STATUS_ALLOC_FAILED) set_error("cpu backend: host allocation failed");
  if (st == BSVD_STATUS_INTERNAL_ERROR) set_error("cpu backend: internal error");
  return st;
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template bsvd_status_t cpu_gehsvj<T>(const Batch<T> &, const Config &, int, int *);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail
