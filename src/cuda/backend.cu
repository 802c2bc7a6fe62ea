// The cuda backend (declared in src/core/backends.hpp): where the data live,
// the workspace, and the dispatcher that sends every matrix that fits in
// shared memory to the fused kernel, the larger ones to the blocked path
// (blocked.hpp), and what neither implements (an ordering other than
// round-robin on the blocked path, a block width over its limit) to the CPU
// solver, reporting the path of each matrix.
#include "../core/backends.hpp"
#include "../core/tsqr.hpp"
#include "blocked/blocked.hpp"
#include "fused/fused.hpp"
#include "qr/qr.hpp"
#include "common/side_stream.hpp"
#include "tuning.hpp"
#include "common/ws_layout.hpp"

#include <algorithm>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <cuda_runtime.h>

namespace bsvd::detail {

namespace {

// Every CUDA call is checked; a failure names the call.
#define BSVD_CUDA_TRY(call)                                                    \
  do {                                                                         \
    const cudaError_t bsvd_err_ = (call);                                      \
    if (bsvd_err_ != cudaSuccess) {                                            \
      set_error("%s failed: %s (%s)", #call, cudaGetErrorName(bsvd_err_),      \
                cudaGetErrorString(bsvd_err_));                                \
      return BSVD_STATUS_DEVICE_ERROR;                                         \
    }                                                                          \
  } while (0)

size_t align256(size_t x) { return cuda::ws_align(x); }

// Which matrices go where, and the device workspace that implies.
struct Plan {
  int loc = 0;                    // 0 host data, 1 device data
  std::vector<int> fused, blocked, qr, qrcp, cpu; // batch indices
  std::vector<int> gpu;           // fused, blocked, qr and qrcp, in batch order
  std::vector<int> bm, bn;        // sizes of the blocked matrices
  std::vector<int> bmode;         // their pair solvers (bsvd_pair_solver_t)
  std::vector<int> qm, qn;        // sizes of the qr matrices
  std::vector<int> pm, pn;        // sizes of the qrcp matrices (preconditioned)
  int nb = 0;                     // block width of the blocked path
  bool needs_arrays = false;      // device data: copy pointer/size arrays
  // workspace regions (byte offsets)
  size_t off_arrays = 0, bytes_arrays = 0;
  size_t off_map = 0, bytes_map = 0;
  size_t off_stage = 0, bytes_stage = 0;
  size_t off_blk = 0, bytes_blk = 0;
  size_t off_qr = 0, bytes_qr = 0;
  size_t off_qrcp = 0, bytes_qrcp = 0;
  size_t total = 0;
  bool uniform = true;
  int batch_count = 0;
  // The fused launch needs a slot -> matrix map unless it takes every
  // matrix of the batch it is given (the caller's, or the packed one), or
  // when a variable-size batch may be split into several launches
  // (fused_groups).
  bool fused_map() const {
    return (!uniform && fused.size() > 1) ||
           fused.size() != (loc == 1 ? batch_count : gpu.size());
  }
};

enum Route { kFused = 0, kBlocked = 1, kCpu = 2, kQr = 3, kQrcp = 4 };

// The reported path of a blocked matrix with pair solver mode.
int blocked_path(int mode) {
  return mode == BSVD_PAIR_SVD_SM   ? BSVD_PATH_CUDA_PAIR_SVD
         : mode == BSVD_PAIR_EVD_SM ? BSVD_PATH_CUDA_PAIR_EVD
                                    : BSVD_PATH_CUDA_BLOCKED;
}

// Where one matrix goes. Empty matrices: the fused kernel writes their
// info. variant = blocked sends every other matrix to the blocked path;
// unblocked sends those that fit to the fused kernel and keeps the others
// on the CPU's unblocked solver; auto sends those that fit and have at most
// fused_cols columns (the call's cap: fused_call_cols in tuning.hpp) to the
// fused kernel, the rest to the blocked path. The blocked path implements
// round-robin only. A matrix for the blocked path is preconditioned
// (kQrcp: QR with column pivoting, the blocked path on R^H) when qrcp
// (qrcp_route) says so for the call.
Route route(char prec, int m, int n, bool vectors, bool gpu, const Config &cfg, int nb,
            bool qrcp, int fused_cols) {
  if (m == 0 || n == 0) return kFused;
  if (!gpu) return kCpu;
  const bool blk_ok = nb > 0 && cfg.ordering == BSVD_ORDERING_ROUND_ROBIN;
  const Route blk = qrcp ? kQrcp : kBlocked;
  if (cfg.variant == BSVD_VARIANT_BLOCKED) return blk_ok ? blk : kCpu;
  if (cuda::qr_route(prec, m, n, vectors, cfg.qr)) return kQr;
  const bool fused_ok = cuda::fits(prec, m, n, vectors);
  if (cfg.variant == BSVD_VARIANT_UNBLOCKED) return fused_ok ? kFused : kCpu;
  // auto: the fused kernel up to the measured column count (tuning.hpp),
  // or when the blocked path cannot take the matrix (ordering).
  if (fused_ok && (!blk_ok || std::min(m, n) <= fused_cols)) return kFused;
  return blk_ok ? blk : kCpu;
}

template <class T>
bool batch_has_arrays(const Batch<T> &b) {
  return b.A.array || b.S.array || b.U.array || b.V.array || b.A.ldv ||
         b.U.ldv || b.V.ldv || b.dims.mv || b.dims.nv;
}

// Elements of the packed host-data staging for matrix (m, n).
struct PackSizes {
  size_t a, s, u, v;
};
PackSizes pack_sizes(int m, int n, bool vectors) {
  const size_t k = size_t(std::min(m, n));
  return {size_t(m) * n, k, vectors ? size_t(m) * k : 0, vectors ? size_t(n) * k : 0};
}

// The preconditioned matrices' B = R^H (nw x nw) on the blocked path: their
// pair solvers, and the workspace of run_qr with piv (the QR layout, then
// the blocked path's).
template <class T> std::vector<int> qrcp_modes(const std::vector<int> &nw, const Config &cfg, int nb) {
  std::vector<int> mode(nw.size());
  for (size_t i = 0; i < nw.size(); ++i)
    mode[i] = cuda::blocked_pair_mode(precision_of<T>(), nw[i], nw[i], cfg, nb);
  return mode;
}
std::vector<int> min_sizes(const std::vector<int> &m, const std::vector<int> &n) {
  std::vector<int> k(m.size());
  for (size_t i = 0; i < m.size(); ++i) k[i] = std::min(m[i], n[i]);
  return k;
}
template <class T>
size_t qrcp_workspace_bytes(const std::vector<int> &m, const std::vector<int> &n, bool vectors,
                            const Config &cfg, int nb) {
  using R = real_of_t<T>;
  const std::vector<int> nw = min_sizes(m, n);
  return align256(cuda::qr_layout(m, n, vectors, sizeof(T), sizeof(R), true).total) +
         cuda::blocked_workspace_bytes(nw, nw, qrcp_modes<T>(nw, cfg, nb), vectors, sizeof(T), nb,
                                       cfg.wcycle_blocks);
}

// The automatic preconditioning (opts.precondition = 0): the candidates
// are the matrices that the plain routing sends to the blocked path; all of
// them are preconditioned when each fits a cluster of the pivoted
// factorization and qrcp_auto_rule (tuning.hpp) predicts a small cost for
// their count (in units of the largest one's work, mw nw^2) and the
// largest one's columns. BSVD_QRCP_PLAN_TRACE=1 prints the decision.
template <class T>
bool auto_precondition(const Batch<T> &batch, const Config &cfg, int nb, int fused_cols) {
  double wsum = 0, wmax = 0;
  int nw_max = 0;
  // one shape, mult matrices of it; false: a candidate no cluster holds
  auto visit = [&](int m, int n, int mult) {
    if (route(precision_of<T>(), m, n, batch.vectors, true, cfg, nb, false, fused_cols) != kBlocked)
      return true;
    if (cuda::qrcp_cluster_fit<T>(m, n) == 0) return false;
    const double nw = std::min(m, n), w = double(std::max(m, n)) * nw * nw;
    wsum += w * mult;
    if (w > wmax) {
      wmax = w;
      nw_max = int(nw);
    }
    return true;
  };
  bool fit = true;
  if (batch.dims.uniform()) fit = visit(batch.dims.m, batch.dims.n, batch.count);
  else
    for (int b = 0; b < batch.count && fit; ++b) fit = visit(batch.dims.rows(b), batch.dims.cols(b), 1);
  const double count = wmax > 0 ? wsum / wmax : 0;
  const bool on = fit && wmax > 0 && cuda::qrcp_auto_rule(count, nw_max, precision_of<T>());
  if (const char *e = std::getenv("BSVD_QRCP_PLAN_TRACE"); e && e[0] == '1' && (wmax > 0 || !fit))
    std::fprintf(stderr, "bsvd qrcp auto: %s, count %.2f of %d columns, predicted cost %.3f -> %s\n",
                 fit ? "all fit a cluster" : "one fits no cluster", count, nw_max,
                 wmax > 0 ? cuda::qrcp_auto_cost(count, nw_max) : 0.0, on ? "on" : "off");
  return on;
}

// The automatic routing's column cap for the fused kernel in this call
// (fused_call_cols, tuning.hpp), from the counts of count_fused_beyond
// (fused.hpp) over the call's matrices.
template <class T> int auto_fused_cols(const Batch<T> &batch, const Config &cfg) {
  const char prec = precision_of<T>();
  long wide = 0, window = 0;
  auto visit = [&](int m, int n, long mult) {
    cuda::count_fused_beyond(prec, m, n, batch.vectors, cfg.qr, mult, wide, window);
  };
  if (cfg.variant == BSVD_VARIANT_AUTO) {
    if (batch.dims.uniform()) visit(batch.dims.m, batch.dims.n, batch.count);
    else
      for (int b = 0; b < batch.count; ++b) visit(batch.dims.rows(b), batch.dims.cols(b), 1);
  }
  return cuda::fused_call_cols(prec, wide, window, cuda::sm_count());
}

template <class T>
Plan make_plan(const Batch<T> &batch, const Config &cfg, int loc) {
  using R = real_of_t<T>;
  Plan p;
  p.loc = loc;
  p.nb = cuda::blocked_nb(cfg, precision_of<T>());
  const bool gpu = cuda_available();
  const bool uniform = batch.dims.uniform();
  p.uniform = uniform;
  p.batch_count = batch.count;
  const int fused_cols = gpu ? auto_fused_cols(batch, cfg) : cuda::kFusedMaxCols;
  const bool qrcp =
      cuda::qrcp_route(cfg.precondition) ||
      (cfg.precondition == 0 && gpu && auto_precondition(batch, cfg, p.nb, fused_cols));
  // One decision for a uniform batch (no per-matrix host work).
  const Route r0 = route(precision_of<T>(), batch.dims.m, batch.dims.n, batch.vectors, gpu, cfg,
                         p.nb, qrcp, fused_cols);
  for (int b = 0; b < batch.count; ++b) {
    const int m = batch.dims.rows(b), n = batch.dims.cols(b);
    const Route r = uniform ? r0
                            : route(precision_of<T>(), m, n, batch.vectors, gpu, cfg, p.nb, qrcp,
                                    fused_cols);
    if (r == kCpu) {
      p.cpu.push_back(b);
      continue;
    }
    p.gpu.push_back(b);
    if (r == kFused) {
      p.fused.push_back(b);
    } else if (r == kQr) {
      p.qr.push_back(b);
      p.qm.push_back(m);
      p.qn.push_back(n);
    } else if (r == kQrcp) {
      p.qrcp.push_back(b);
      p.pm.push_back(m);
      p.pn.push_back(n);
    } else {
      p.blocked.push_back(b);
      p.bm.push_back(m);
      p.bn.push_back(n);
      p.bmode.push_back(cuda::blocked_pair_mode(precision_of<T>(), m, n, cfg, p.nb));
    }
  }
  size_t o = 0;
  if (loc == 1) {
    p.needs_arrays = batch_has_arrays(batch);
    if (p.needs_arrays) {
      // A, S, U, V pointer arrays; lda, ldu, ldv, m, n int arrays
      p.off_arrays = o;
      p.bytes_arrays = align256(size_t(batch.count) * (4 * sizeof(void *) + 5 * sizeof(int)));
      o += p.bytes_arrays;
    }
  } else {
    // Packed staging for the GPU's matrices: pointer arrays, sizes, info,
    // sweeps, then A, S, U, V element regions.
    const size_t nf = p.gpu.size();
    p.off_arrays = o;
    p.bytes_arrays = align256(nf * (4 * sizeof(void *) + 6 * sizeof(int)));
    o += p.bytes_arrays;
    size_t ea = 0, es = 0, eu = 0, ev = 0;
    if (batch.dims.uniform()) {
      const PackSizes s = pack_sizes(batch.dims.m, batch.dims.n, batch.vectors);
      ea = s.a * nf; es = s.s * nf; eu = s.u * nf; ev = s.v * nf;
    } else {
      for (int b : p.gpu) {
        const PackSizes s = pack_sizes(batch.dims.rows(b), batch.dims.cols(b), batch.vectors);
        ea += s.a; es += s.s; eu += s.u; ev += s.v;
      }
    }
    p.off_stage = o;
    p.bytes_stage = align256(ea * sizeof(T)) + align256(es * sizeof(R)) +
                    align256(eu * sizeof(T)) + align256(ev * sizeof(T));
    o += p.bytes_stage;
  }
  if (p.fused_map()) {
    p.off_map = o;
    p.bytes_map = align256(p.fused.size() * sizeof(int));
    o += p.bytes_map;
  }
  if (!p.blocked.empty()) {
    p.off_blk = o;
    p.bytes_blk =
        cuda::blocked_workspace_bytes(p.bm, p.bn, p.bmode, batch.vectors, sizeof(T), p.nb,
                                      cfg.wcycle_blocks);
    o += p.bytes_blk;
  }
  if (!p.qr.empty()) {
    p.off_qr = o;
    p.bytes_qr = cuda::qr_layout(p.qm, p.qn, batch.vectors, sizeof(T), sizeof(R)).total;
    o += p.bytes_qr;
  }
  if (!p.qrcp.empty()) {
    p.off_qrcp = o;
    p.bytes_qrcp = qrcp_workspace_bytes<T>(p.pm, p.pn, batch.vectors, cfg, p.nb);
    o += p.bytes_qrcp;
  }
  p.total = o;
  return p;
}

// RAII for memory the call allocates itself.
struct DeviceBuffer {
  void *ptr = nullptr;
  cudaStream_t stream = nullptr;
  ~DeviceBuffer() {
    if (ptr) cudaFreeAsync(ptr, stream);
  }
};
struct EventGuard {
  cudaEvent_t ev = nullptr;
  ~EventGuard() {
    if (ev) cudaEventDestroy(ev);
  }
};

int cpu_threads(const Config &cfg) {
  if (cfg.num_threads > 0) return cfg.num_threads;
  const unsigned h = std::thread::hardware_concurrency();
  return h ? int(h) : 1;
}

// Solves the host batch hb (pointers in host memory) on the CPU.
template <class T>
bsvd_status_t solve_on_cpu(const Batch<T> &hb, const Config &cfg, int *path) {
  const int threads = cpu_threads(cfg);
  std::vector<unsigned char> ws(cpu_workspace_bytes(hb, cfg, threads));
  return cpu_gesvj(hb, cfg, ws.data(), ws.size(), threads, path);
}

// A host sub-batch (pointer-array form) of the given matrices of `batch`,
// whose pointers are host pointers. info/sweeps receive compact arrays.
template <class T> struct HostSubBatch {
  using R = real_of_t<T>;
  std::vector<const T *> A;
  std::vector<R *> S;
  std::vector<T *> U, V;
  std::vector<int> lda, ldu, ldv, m, n, info, sweeps, path;
  Batch<T> batch;
};

template <class T>
void describe_sub(HostSubBatch<T> &h, bool vectors) {
  Batch<T> &b = h.batch;
  b = Batch<T>{};
  b.vectors = vectors;
  b.count = int(h.A.size());
  b.dims.mv = h.m.data();
  b.dims.nv = h.n.data();
  b.A.array = h.A.data();
  b.A.ldv = h.lda.data();
  b.S.array = h.S.data();
  b.U.array = h.U.data();
  b.U.ldv = h.ldu.data();
  b.V.array = h.V.data();
  b.V.ldv = h.ldv.data();
  h.info.assign(b.count, 0);
  h.sweeps.assign(b.count, 0);
  h.path.assign(b.count, BSVD_PATH_CPU_UNBLOCKED);
  b.info = h.info.data();
  b.sweeps = h.sweeps.data();
}

template <class T>
void fill_kernel_params(cuda::FusedParams<T> &P, const Batch<T> &kb, const Batch<T> &user,
                        const std::vector<int> &fused, const Config &cfg) {
  P.batch = kb;
  P.mw_max = 0;
  P.nw_max = 0;
  if (user.dims.uniform()) {
    P.mw_max = std::max(user.dims.m, user.dims.n);
    P.nw_max = std::min(user.dims.m, user.dims.n);
  } else {
    for (int b : fused) {
      const int m = user.dims.rows(b), n = user.dims.cols(b);
      P.mw_max = std::max(P.mw_max, std::max(m, n));
      P.nw_max = std::max(P.nw_max, std::min(m, n));
    }
  }
  P.count = int(fused.size());
  P.ordering = int(cfg.ordering);
  P.max_sweeps = cfg.max_sweeps > 0 ? cfg.max_sweeps : kDefaultMaxSweeps;
  P.tol = cfg.tol;
}

#define BSVD_TRY_STATUS(call)                                                  \
  do {                                                                         \
    const bsvd_status_t bsvd_st_ = (call);                                     \
    if (bsvd_st_ != BSVD_STATUS_SUCCESS) return bsvd_st_;                      \
  } while (0)

// The path reported for a matrix the GPU solved: trivial when it was empty
// or had a NaN / Inf (nothing was iterated), else the solver's.
template <class T> int gpu_path(const Batch<T> &batch, int b, int info, int solver) {
  const bool empty = batch.dims.rows(b) == 0 || batch.dims.cols(b) == 0;
  return (empty || info == BSVD_INFO_NONFINITE) ? BSVD_PATH_TRIVIAL : solver;
}

// The fused kernel sizes its shared memory for the largest working
// dimensions of a launch (mw_max x nw_max), so a variable-size batch whose
// matrices each fit may not fit together (e.g. 1000 x 17 with 150 x 150).
// Such a batch is split: matrices ordered by (nw, mw), cut greedily into
// launches whose joint envelope fits. A uniform batch is one launch.
template <class T>
std::vector<std::vector<int>> fused_groups(const Batch<T> &user, const std::vector<int> &fused) {
  if (user.dims.uniform() || fused.size() <= 1) return {fused};
  std::vector<int> order = fused;
  auto mw = [&](int b) { return std::max(user.dims.rows(b), user.dims.cols(b)); };
  auto nw = [&](int b) { return std::min(user.dims.rows(b), user.dims.cols(b)); };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return nw(a) != nw(b) ? nw(a) < nw(b) : mw(a) < mw(b);
  });
  std::vector<std::vector<int>> groups;
  int gm = 0, gn = 0;
  for (int b : order) {
    const int m2 = std::max(gm, mw(b)), n2 = std::max(gn, nw(b));
    if (groups.empty() || !cuda::fits(precision_of<T>(), m2, n2, user.vectors)) {
      groups.emplace_back();
      gm = mw(b);
      gn = nw(b);
    } else {
      gm = m2;
      gn = n2;
    }
    groups.back().push_back(b);
  }
  return groups;
}

// The fused kernel on matrices `list` of kb (user: the same batch with
// host-visible sizes); dmap: device room for list.size() ints, or null when
// the list is the whole batch in order and one launch takes it.
template <class T>
bsvd_status_t launch_fused_set(const Batch<T> &kb, const Batch<T> &user,
                               const std::vector<int> &list, int *dmap, const Config &cfg,
                               cudaStream_t stream) {
  const std::vector<std::vector<int>> groups = fused_groups<T>(user, list);
  if (dmap) {
    std::vector<int> order;
    order.reserve(list.size());
    for (const auto &g : groups) order.insert(order.end(), g.begin(), g.end());
    BSVD_CUDA_TRY(cudaMemcpyAsync(dmap, order.data(), order.size() * sizeof(int),
                                  cudaMemcpyHostToDevice, stream));
  }
  size_t start = 0;
  for (const auto &g : groups) {
    cuda::FusedParams<T> P;
    fill_kernel_params(P, kb, user, g, cfg);
    if (dmap) P.map = dmap + start;
    start += g.size();
    const cuda::FusedShape shape = cuda::plan_fused(P, user.vectors);
    BSVD_CUDA_TRY(cuda::launch_fused(P, shape, stream));
  }
  return BSVD_STATUS_SUCCESS;
}

// The QR path (qr.hpp) on matrices idx of kb (sizes m[i] x n[i]); ws:
// qr_layout(m, n, ...).total bytes. No host synchronization. piv: the
// preconditioning instead (path cuda-qrcp): pivoted QR, B = R^H solved by
// the blocked path (block width nb; ws: qrcp_workspace_bytes bytes), which
// synchronizes with the host once per sweep.
template <class T>
bsvd_status_t run_qr(const Batch<T> &kb, const std::vector<int> &idx, const std::vector<int> &m,
                     const std::vector<int> &n, const Config &cfg, cudaStream_t stream,
                     unsigned char *ws, bool piv = false, int nb = 0) {
  using R = real_of_t<T>;
  const int cnt = int(idx.size());
  if (cnt == 0) return BSVD_STATUS_SUCCESS;
  const cuda::QrLayout L = cuda::qr_layout(m, n, kb.vectors, sizeof(T), sizeof(R), piv);
  std::vector<cuda::QrMat> mats(cnt);
  std::vector<const T *> pA(cnt);
  std::vector<R *> pS(cnt);
  std::vector<T *> pU(cnt), pV(cnt);
  std::vector<int> nwv(cnt);
  long long oy = 0, ot = 0, ob = 0, os = 0, ou = 0;
  int nw_max = 0;
  T *Bw = reinterpret_cast<T *>(ws + L.B);
  R *Sw = reinterpret_cast<R *>(ws + L.S);
  T *Uw = reinterpret_cast<T *>(ws + L.U), *Vw = reinterpret_cast<T *>(ws + L.V);
  for (int i = 0; i < cnt; ++i) {
    cuda::QrMat &q = mats[i];
    q.b = idx[i];
    q.m = m[i];
    q.n = n[i];
    q.mw = std::max(m[i], n[i]);
    q.nw = std::min(m[i], n[i]);
    q.y = oy;
    q.tau = ot;
    q.B = ob;
    q.S = os;
    q.U = q.V = ou;
    q.piv = piv ? 1 : 0;
    pA[i] = Bw + ob;
    pS[i] = Sw + os;
    pU[i] = kb.vectors ? Uw + ou : nullptr;
    pV[i] = kb.vectors ? Vw + ou : nullptr;
    nwv[i] = q.nw;
    nw_max = std::max(nw_max, q.nw);
    oy += (long long)q.mw * q.nw;
    ot += q.nw;
    ob += (long long)q.nw * q.nw;
    os += q.nw;
    if (kb.vectors) ou += (long long)q.nw * q.nw;
  }
  if (L.tsqr) cuda::qr_tsqr_offsets(mats.data(), cnt, sizeof(T));
  auto up = [&](size_t off, const void *src, size_t bytes) {
    return cudaMemcpyAsync(ws + off, src, bytes, cudaMemcpyHostToDevice, stream);
  };
  const size_t pb = size_t(cnt) * sizeof(void *);
  BSVD_CUDA_TRY(up(L.mats, mats.data(), cnt * sizeof(cuda::QrMat)));
  BSVD_CUDA_TRY(up(L.parr, pA.data(), pb));
  BSVD_CUDA_TRY(up(L.parr + pb, pS.data(), pb));
  BSVD_CUDA_TRY(up(L.parr + 2 * pb, pU.data(), pb));
  BSVD_CUDA_TRY(up(L.parr + 3 * pb, pV.data(), pb));
  BSVD_CUDA_TRY(up(L.iarr, nwv.data(), cnt * sizeof(int)));
  const auto *dmats = reinterpret_cast<const cuda::QrMat *>(ws + L.mats);
  const int nt = cuda::qr_threads(piv);
  BSVD_CUDA_TRY(cuda::qr_factor(kb, dmats, cnt, nw_max, ws, L, stream, nt, mats.data()));

  // The fused kernel (the blocked path when piv) on B = R (R^H): a
  // variable-size batch in the workspace.
  const int *dnw = reinterpret_cast<const int *>(ws + L.iarr);
  Batch<T> qb;
  qb.vectors = kb.vectors;
  qb.count = cnt;
  qb.dims.mv = qb.dims.nv = dnw;
  qb.A.array = reinterpret_cast<const T *const *>(ws + L.parr);
  qb.A.ldv = dnw;
  qb.S.array = reinterpret_cast<R *const *>(ws + L.parr + pb);
  qb.U.array = reinterpret_cast<T *const *>(ws + L.parr + 2 * pb);
  qb.U.ldv = dnw;
  qb.V.array = reinterpret_cast<T *const *>(ws + L.parr + 3 * pb);
  qb.V.ldv = dnw;
  qb.info = reinterpret_cast<int *>(ws + L.info);
  qb.sweeps = reinterpret_cast<int *>(ws + L.sweeps);
  Batch<T> qh = qb; // host-visible sizes for the launch planning
  qh.dims.mv = qh.dims.nv = nwv.data();
  std::vector<int> all(cnt);
  for (int i = 0; i < cnt; ++i) all[i] = i;
  if (piv)
    BSVD_CUDA_TRY(cuda::run_blocked(qb, all, nwv, nwv, qrcp_modes<T>(nwv, cfg, nb), cfg, nb, stream,
                                    ws + align256(L.total)));
  else
    BSVD_TRY_STATUS(launch_fused_set(qb, qh, all, reinterpret_cast<int *>(ws + L.map), cfg,
                                     stream));
  BSVD_CUDA_TRY(cuda::qr_finish(kb, dmats, cnt, nw_max, ws, L, stream, nt, mats.data()));
  return BSVD_STATUS_SUCCESS;
}

// Launches the GPU's share of a call on kb (device-visible pointers and
// sizes): the fused kernel on matrices `fused`, the QR path on `qr` and the
// blocked path on `blocked` (indices into kb; user describes the same
// matrices with host-visible sizes). Everything is ordered before what the
// caller enqueues on stream next.
template <class T>
bsvd_status_t launch_gpu(const Batch<T> &kb, const Batch<T> &user, const Plan &plan,
                         const std::vector<int> &fused, const std::vector<int> &blocked,
                         const std::vector<int> &qr, const std::vector<int> &qrcp,
                         const Config &cfg, cudaStream_t stream, unsigned char *ws) {
  // With matrices on the blocked path, the fused kernel and the QR path run
  // beside it on a side stream: the blocked path synchronizes with the host
  // once per sweep and its last sweeps (a few large matrices) leave most of
  // the GPU idle, while the fused kernel's largest matrices take one thread
  // block each for milliseconds. They touch disjoint matrices and disjoint
  // parts of the workspace. The main stream joins the side stream before
  // this returns (also on an error: SideStream's destructor).
  cuda::SideStream side(stream);
  cudaStream_t beside = stream;
  // The preconditioned matrices (qrcp) take the blocked path too, on the
  // main stream: a call has either those or plain blocked ones (qrcp_route
  // decides for the whole call).
  const bool iterates = !blocked.empty() || !qrcp.empty();
  if (iterates && (!fused.empty() || !qr.empty()) && cuda::fused_beside_blocked()) {
    BSVD_CUDA_TRY(side.fork());
    beside = side.get();
  }
  if (!fused.empty())
    BSVD_TRY_STATUS(launch_fused_set(
        kb, user, fused, plan.fused_map() ? reinterpret_cast<int *>(ws + plan.off_map) : nullptr,
        cfg, beside));
  if (!qr.empty())
    BSVD_TRY_STATUS(run_qr(kb, qr, plan.qm, plan.qn, cfg, beside, ws + plan.off_qr));
  if (!blocked.empty())
    BSVD_CUDA_TRY(cuda::run_blocked(kb, blocked, plan.bm, plan.bn, plan.bmode, cfg, plan.nb,
                                    stream, ws + plan.off_blk));
  if (!qrcp.empty())
    BSVD_TRY_STATUS(run_qr(kb, qrcp, plan.pm, plan.pn, cfg, stream, ws + plan.off_qrcp, true,
                           plan.nb));
  BSVD_CUDA_TRY(side.join());
  return BSVD_STATUS_SUCCESS;
}

// ---- device-resident data --------------------------------------------------
template <class T>
bsvd_status_t run_device_data(const Batch<T> &batch, const Config &cfg,
                              cudaStream_t stream, unsigned char *ws,
                              const Plan &plan, int *path) {
  using R = real_of_t<T>;
  // 1. Matrices for the CPU: copy their A to the host first (ahead of the
  //    kernel in the stream, so the CPU works while the GPU does).
  HostSubBatch<T> h;
  std::vector<std::vector<T>> hA, hU, hV;
  std::vector<std::vector<R>> hS;
  EventGuard copied;
  if (!plan.cpu.empty()) {
    const size_t nc = plan.cpu.size();
    hA.resize(nc); hS.resize(nc); hU.resize(nc); hV.resize(nc);
    for (size_t c = 0; c < nc; ++c) {
      const int b = plan.cpu[c];
      const int m = batch.dims.rows(b), n = batch.dims.cols(b), k = std::min(m, n);
      hA[c].resize(size_t(m) * n);
      hS[c].resize(k);
      if (batch.vectors) {
        hU[c].resize(size_t(m) * k);
        hV[c].resize(size_t(n) * k);
      }
      BSVD_CUDA_TRY(cudaMemcpy2DAsync(hA[c].data(), size_t(m) * sizeof(T), batch.A.ptr(b),
                                      size_t(batch.A.ldm(b)) * sizeof(T), size_t(m) * sizeof(T),
                                      n, cudaMemcpyDeviceToHost, stream));
      h.A.push_back(hA[c].data());
      h.S.push_back(hS[c].data());
      h.U.push_back(batch.vectors ? hU[c].data() : nullptr);
      h.V.push_back(batch.vectors ? hV[c].data() : nullptr);
      h.m.push_back(m);
      h.n.push_back(n);
      h.lda.push_back(std::max(m, 1));
      h.ldu.push_back(std::max(m, 1));
      h.ldv.push_back(std::max(n, 1));
    }
    describe_sub(h, batch.vectors);
    BSVD_CUDA_TRY(cudaEventCreateWithFlags(&copied.ev, cudaEventDisableTiming));
    BSVD_CUDA_TRY(cudaEventRecord(copied.ev, stream));
  }

  // 2. The fused kernel and the blocked path on the rest.
  if (!plan.gpu.empty()) {
    Batch<T> kb = batch;
    if (plan.needs_arrays) {
      const int cnt = batch.count;
      std::vector<unsigned char> hostArr(plan.bytes_arrays, 0);
      unsigned char *d = ws + plan.off_arrays;
      size_t o = 0;
      auto put_ptrs = [&](auto const &op, auto &dst_array) {
        using P = std::remove_const_t<std::remove_pointer_t<std::decay_t<decltype(dst_array)>>>;
        P *hp = reinterpret_cast<P *>(hostArr.data() + o);
        for (int b = 0; b < cnt; ++b) hp[b] = op.ptr(b);
        dst_array = reinterpret_cast<P *>(d + o);
        o += size_t(cnt) * sizeof(void *);
      };
      put_ptrs(batch.A, kb.A.array);
      put_ptrs(batch.S, kb.S.array);
      if (batch.vectors) {
        put_ptrs(batch.U, kb.U.array);
        put_ptrs(batch.V, kb.V.array);
      } else {
        o += 2 * size_t(cnt) * sizeof(void *);
      }
      auto put_ints = [&](const int *src, const int *&dst) {
        if (src) {
          std::memcpy(hostArr.data() + o, src, size_t(cnt) * sizeof(int));
          dst = reinterpret_cast<const int *>(d + o);
        }
        o += size_t(cnt) * sizeof(int);
      };
      put_ints(batch.A.ldv, kb.A.ldv);
      put_ints(batch.U.ldv, kb.U.ldv);
      put_ints(batch.V.ldv, kb.V.ldv);
      put_ints(batch.dims.mv, kb.dims.mv);
      put_ints(batch.dims.nv, kb.dims.nv);
      BSVD_CUDA_TRY(cudaMemcpyAsync(d, hostArr.data(), o, cudaMemcpyHostToDevice, stream));
    }
    BSVD_TRY_STATUS(
        launch_gpu(kb, batch, plan, plan.fused, plan.blocked, plan.qr, plan.qrcp, cfg, stream, ws));
  }

  // 3. The CPU part, then its results back to the device.
  if (!plan.cpu.empty()) {
    BSVD_CUDA_TRY(cudaEventSynchronize(copied.ev));
    const bsvd_status_t st = solve_on_cpu(h.batch, cfg, h.path.data());
    if (st != BSVD_STATUS_SUCCESS) {
      cudaStreamSynchronize(stream);
      return st;
    }
    for (size_t c = 0; c < plan.cpu.size(); ++c) {
      const int b = plan.cpu[c];
      const int m = h.m[c], n = h.n[c], k = std::min(m, n);
      BSVD_CUDA_TRY(cudaMemcpyAsync(batch.S.ptr(b), hS[c].data(), size_t(k) * sizeof(R),
                                    cudaMemcpyHostToDevice, stream));
      if (batch.vectors && k > 0) {
        BSVD_CUDA_TRY(cudaMemcpy2DAsync(batch.U.ptr(b), size_t(batch.U.ldm(b)) * sizeof(T),
                                        hU[c].data(), size_t(m) * sizeof(T), size_t(m) * sizeof(T),
                                        k, cudaMemcpyHostToDevice, stream));
        BSVD_CUDA_TRY(cudaMemcpy2DAsync(batch.V.ptr(b), size_t(batch.V.ldm(b)) * sizeof(T),
                                        hV[c].data(), size_t(n) * sizeof(T), size_t(n) * sizeof(T),
                                        k, cudaMemcpyHostToDevice, stream));
      }
      BSVD_CUDA_TRY(cudaMemcpyAsync(batch.info + b, &h.info[c], sizeof(int),
                                    cudaMemcpyHostToDevice, stream));
      if (batch.sweeps)
        BSVD_CUDA_TRY(cudaMemcpyAsync(batch.sweeps + b, &h.sweeps[c], sizeof(int),
                                      cudaMemcpyHostToDevice, stream));
    }
  }
  BSVD_CUDA_TRY(cudaStreamSynchronize(stream));

  if (path) {
    std::vector<int> info;
    if (!plan.gpu.empty()) {
      info.resize(batch.count);
      BSVD_CUDA_TRY(cudaMemcpy(info.data(), batch.info, size_t(batch.count) * sizeof(int),
                               cudaMemcpyDeviceToHost));
    }
    for (int b : plan.fused) path[b] = gpu_path(batch, b, info[b], BSVD_PATH_CUDA_FUSED);
    for (size_t j = 0; j < plan.blocked.size(); ++j) {
      const int b = plan.blocked[j];
      path[b] = gpu_path(batch, b, info[b], blocked_path(plan.bmode[j]));
    }
    for (int b : plan.qr) path[b] = gpu_path(batch, b, info[b], BSVD_PATH_CUDA_QR);
    for (int b : plan.qrcp) path[b] = gpu_path(batch, b, info[b], BSVD_PATH_CUDA_QRCP);
    for (size_t c = 0; c < plan.cpu.size(); ++c) path[plan.cpu[c]] = h.path[c];
  }
  return BSVD_STATUS_SUCCESS;
}

// ---- host-resident data: pack, copy in, solve, copy out --------------------
template <class T>
bsvd_status_t run_host_data(const Batch<T> &batch, const Config &cfg,
                            cudaStream_t stream, unsigned char *ws,
                            const Plan &plan, int *path) {
  using R = real_of_t<T>;
  const size_t nf = plan.gpu.size();
  std::vector<int> fm(nf), fn(nf);
  // Positions in the packed batch of the fused and the blocked matrices.
  std::vector<int> fpos, bpos, qpos, ppos;
  std::vector<int> solver(nf, BSVD_PATH_CUDA_FUSED);
  size_t ea = 0, es = 0, eu = 0, ev = 0;
  for (size_t i = 0, jb = 0, jq = 0, jp = 0; i < nf; ++i) {
    const int b = plan.gpu[i];
    fm[i] = batch.dims.rows(b);
    fn[i] = batch.dims.cols(b);
    if (jb < plan.blocked.size() && plan.blocked[jb] == b) {
      solver[i] = blocked_path(plan.bmode[jb]);
      bpos.push_back(int(i));
      ++jb;
    } else if (jq < plan.qr.size() && plan.qr[jq] == b) {
      solver[i] = BSVD_PATH_CUDA_QR;
      qpos.push_back(int(i));
      ++jq;
    } else if (jp < plan.qrcp.size() && plan.qrcp[jp] == b) {
      solver[i] = BSVD_PATH_CUDA_QRCP;
      ppos.push_back(int(i));
      ++jp;
    } else {
      fpos.push_back(int(i));
    }
    const PackSizes s = pack_sizes(fm[i], fn[i], batch.vectors);
    ea += s.a; es += s.s; eu += s.u; ev += s.v;
  }
  unsigned char *stage = ws + plan.off_stage;
  T *dA = reinterpret_cast<T *>(stage);
  R *dS = reinterpret_cast<R *>(stage + align256(ea * sizeof(T)));
  T *dU = reinterpret_cast<T *>(reinterpret_cast<unsigned char *>(dS) + align256(es * sizeof(R)));
  T *dV = reinterpret_cast<T *>(reinterpret_cast<unsigned char *>(dU) + align256(eu * sizeof(T)));
  // info and sweeps of the packed batch live in the array region.
  unsigned char *arr = ws + plan.off_arrays;

  std::vector<T> hostA(ea), hostU(eu), hostV(ev);
  std::vector<R> hostS(es);
  std::vector<int> hostInfo(nf), hostSweeps(nf);

  if (nf > 0) {
    // Pointer arrays (device addresses) and sizes of the packed batch.
    std::vector<unsigned char> hostArr(plan.bytes_arrays, 0);
    const T **pA = reinterpret_cast<const T **>(hostArr.data());
    R **pS = reinterpret_cast<R **>(hostArr.data() + nf * sizeof(void *));
    T **pU = reinterpret_cast<T **>(hostArr.data() + 2 * nf * sizeof(void *));
    T **pV = reinterpret_cast<T **>(hostArr.data() + 3 * nf * sizeof(void *));
    int *im = reinterpret_cast<int *>(hostArr.data() + 4 * nf * sizeof(void *));
    int *in = im + nf;
    size_t oa = 0, os = 0, ou = 0, ov = 0;
    for (size_t i = 0; i < nf; ++i) {
      const int b = plan.gpu[i];
      const int m = fm[i], n = fn[i];
      const PackSizes s = pack_sizes(m, n, batch.vectors);
      const T *src = batch.A.ptr(b);
      const int lda = batch.A.ldm(b);
      for (int j = 0; j < n; ++j)
        std::memcpy(&hostA[oa + size_t(j) * m], src + size_t(j) * lda, size_t(m) * sizeof(T));
      pA[i] = dA + oa;
      pS[i] = dS + os;
      pU[i] = dU + ou;
      pV[i] = dV + ov;
      im[i] = std::max(m, 1);
      in[i] = std::max(n, 1);
      oa += s.a; os += s.s; ou += s.u; ov += s.v;
    }
    BSVD_CUDA_TRY(cudaMemcpyAsync(arr, hostArr.data(), plan.bytes_arrays,
                                  cudaMemcpyHostToDevice, stream));
    if (ea) BSVD_CUDA_TRY(cudaMemcpyAsync(dA, hostA.data(), ea * sizeof(T),
                                          cudaMemcpyHostToDevice, stream));
    // The packed batch: ld = rows (A, U) or n (V); the size arrays double as
    // leading-dimension arrays. Packed sizes: real m, n (ld >= 1 above).
    std::vector<int> realm(fm), realn(fn);
    int *dm = reinterpret_cast<int *>(arr + 4 * nf * sizeof(void *));
    int *dn = dm + nf;
    int *dinfo = dn + nf;
    int *dsweeps = dinfo + nf;
    // Real sizes go after the ld arrays (ld arrays hold max(., 1)).
    Batch<T> kb;
    kb.vectors = batch.vectors;
    kb.count = int(nf);
    kb.A.array = reinterpret_cast<const T *const *>(arr);
    kb.A.ldv = dm;
    kb.S.array = reinterpret_cast<R *const *>(arr + nf * sizeof(void *));
    kb.U.array = reinterpret_cast<T *const *>(arr + 2 * nf * sizeof(void *));
    kb.U.ldv = dm;
    kb.V.array = reinterpret_cast<T *const *>(arr + 3 * nf * sizeof(void *));
    kb.V.ldv = dn;
    kb.info = dinfo;
    kb.sweeps = dsweeps;
    // Sizes: uniform batches pass scalars (no per-matrix loads).
    if (batch.dims.uniform()) {
      kb.dims.m = batch.dims.m;
      kb.dims.n = batch.dims.n;
    } else {
      // dims equal the ld arrays except for zero sizes, which the kernel
      // treats through m*n == 0 anyway: an ld of 1 with 0 columns or rows
      // would read as 1 row. Keep exact sizes in a separate upload.
      int *dsz = dsweeps + nf;
      std::vector<int> sz(2 * nf);
      std::copy(realm.begin(), realm.end(), sz.begin());
      std::copy(realn.begin(), realn.end(), sz.begin() + nf);
      BSVD_CUDA_TRY(cudaMemcpyAsync(dsz, sz.data(), 2 * nf * sizeof(int),
                                    cudaMemcpyHostToDevice, stream));
      kb.dims.mv = dsz;
      kb.dims.nv = dsz + nf;
    }
    // The packed batch with host-visible sizes (for the launch planning).
    Batch<T> hb = kb;
    if (!batch.dims.uniform()) {
      hb.dims.mv = fm.data();
      hb.dims.nv = fn.data();
    }
    BSVD_TRY_STATUS(launch_gpu(kb, hb, plan, fpos, bpos, qpos, ppos, cfg, stream, ws));
    if (es) BSVD_CUDA_TRY(cudaMemcpyAsync(hostS.data(), dS, es * sizeof(R),
                                          cudaMemcpyDeviceToHost, stream));
    if (eu) BSVD_CUDA_TRY(cudaMemcpyAsync(hostU.data(), dU, eu * sizeof(T),
                                          cudaMemcpyDeviceToHost, stream));
    if (ev) BSVD_CUDA_TRY(cudaMemcpyAsync(hostV.data(), dV, ev * sizeof(T),
                                          cudaMemcpyDeviceToHost, stream));
    BSVD_CUDA_TRY(cudaMemcpyAsync(hostInfo.data(), dinfo, nf * sizeof(int),
                                  cudaMemcpyDeviceToHost, stream));
    BSVD_CUDA_TRY(cudaMemcpyAsync(hostSweeps.data(), dsweeps, nf * sizeof(int),
                                  cudaMemcpyDeviceToHost, stream));
  }

  // The CPU part works directly on the caller's host memory meanwhile.
  HostSubBatch<T> h;
  if (!plan.cpu.empty()) {
    for (int b : plan.cpu) {
      h.A.push_back(batch.A.ptr(b));
      h.S.push_back(batch.S.ptr(b));
      h.U.push_back(batch.vectors ? batch.U.ptr(b) : nullptr);
      h.V.push_back(batch.vectors ? batch.V.ptr(b) : nullptr);
      h.m.push_back(batch.dims.rows(b));
      h.n.push_back(batch.dims.cols(b));
      h.lda.push_back(batch.A.ldm(b));
      h.ldu.push_back(batch.vectors ? batch.U.ldm(b) : 1);
      h.ldv.push_back(batch.vectors ? batch.V.ldm(b) : 1);
    }
    describe_sub(h, batch.vectors);
    const bsvd_status_t st = solve_on_cpu(h.batch, cfg, h.path.data());
    if (st != BSVD_STATUS_SUCCESS) {
      cudaStreamSynchronize(stream);
      return st;
    }
    for (size_t c = 0; c < plan.cpu.size(); ++c) {
      const int b = plan.cpu[c];
      batch.info[b] = h.info[c];
      if (batch.sweeps) batch.sweeps[b] = h.sweeps[c];
      if (path) path[b] = h.path[c];
    }
  }
  BSVD_CUDA_TRY(cudaStreamSynchronize(stream));

  // Unpack the GPU's results into the caller's arrays.
  size_t os = 0, ou = 0, ov = 0;
  for (size_t i = 0; i < nf; ++i) {
    const int b = plan.gpu[i];
    const int m = fm[i], n = fn[i], k = std::min(m, n);
    const PackSizes s = pack_sizes(m, n, batch.vectors);
    if (k > 0) std::memcpy(batch.S.ptr(b), &hostS[os], size_t(k) * sizeof(R));
    if (batch.vectors && k > 0) {
      T *U = batch.U.ptr(b);
      T *V = batch.V.ptr(b);
      const int ldu = batch.U.ldm(b), ldv = batch.V.ldm(b);
      for (int j = 0; j < k; ++j) {
        std::memcpy(U + size_t(j) * ldu, &hostU[ou + size_t(j) * m], size_t(m) * sizeof(T));
        std::memcpy(V + size_t(j) * ldv, &hostV[ov + size_t(j) * n], size_t(n) * sizeof(T));
      }
    }
    batch.info[b] = hostInfo[i];
    if (batch.sweeps) batch.sweeps[b] = hostSweeps[i];
    if (path)
      path[b] = gpu_path(batch, b, hostInfo[i], solver[i]);
    os += s.s; ou += s.u; ov += s.v;
  }
  return BSVD_STATUS_SUCCESS;
}

} // namespace

bool cuda_available() {
  static const bool available = [] {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      cudaGetLastError(); // clear
      return false;
    }
    return n > 0;
  }();
  return available;
}

template <class T> int cuda_locate(const Batch<T> &batch, int *arg) {
  if (arg) *arg = 0;
  if (batch.count <= 0 || !cuda_available()) return 0;
  // 1: device (or managed) memory, 0: host (pageable or pinned), -2: null.
  auto where = [](const void *p) -> int {
    if (!p) return -2;
    cudaPointerAttributes a{};
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return (a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged) ? 1 : 0;
  };
  const bool arrays = batch.A.array != nullptr;
  const void *pA = arrays ? static_cast<const void *>(batch.A.array[0]) : batch.A.base;
  const void *pS = batch.S.array ? static_cast<const void *>(batch.S.array[0]) : batch.S.base;
  const void *pU = batch.U.array ? static_cast<const void *>(batch.U.array[0]) : batch.U.base;
  const void *pV = batch.V.array ? static_cast<const void *>(batch.V.array[0]) : batch.V.base;
  // Argument positions (1-based) in the C prototypes: strided form vs the
  // pointer-array forms (batched and vbatched share them).
  const int posS = arrays ? 6 : 7, posU = arrays ? 7 : 9, posV = arrays ? 9 : 12,
            posInfo = arrays ? 11 : 15, posSweeps = arrays ? 12 : 16;
  const int loc = where(pA);
  const int base = loc == -2 ? 0 : loc;
  struct Item { const void *p; int pos; };
  const Item items[] = {{pS, posS},
                        {batch.vectors ? pU : nullptr, posU},
                        {batch.vectors ? pV : nullptr, posV},
                        {batch.info, posInfo},
                        {batch.sweeps, posSweeps}};
  for (const Item &it : items) {
    const int w = where(it.p);
    if (w == -2) continue;
    if (w != base) {
      if (arg) *arg = it.pos;
      return -1;
    }
  }
  return base;
}

template <class T>
size_t cuda_workspace_bytes(const Batch<T> &batch, const Config &cfg) {
  if (batch.count <= 0) return 0;
  int arg = 0;
  int loc = cuda_locate(batch, &arg);
  if (loc < 0) loc = 0;
  return make_plan(batch, cfg, loc).total;
}

template <class T>
bsvd_status_t cuda_gesvj(const Batch<T> &batch, const Config &cfg, void *stream_ptr,
                         void *workspace, size_t workspace_bytes, int *path) {
  if (batch.count <= 0) return BSVD_STATUS_SUCCESS;
  if (!cuda_available()) {
    set_error("cuda backend: no CUDA device is visible");
    return BSVD_STATUS_BACKEND_UNAVAILABLE;
  }
  int arg = 0;
  const int loc = cuda_locate(batch, &arg);
  if (loc < 0) {
    set_error("argument %d is not in the same memory space (host or device) as A", arg);
    return -arg;
  }
  cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  const Plan plan = make_plan(batch, cfg, loc);
  DeviceBuffer own;
  own.stream = stream;
  unsigned char *ws = static_cast<unsigned char *>(workspace);
  if (plan.total > 0) {
    if (!ws) {
      BSVD_CUDA_TRY(cudaMallocAsync(&own.ptr, plan.total, stream));
      ws = static_cast<unsigned char *>(own.ptr);
    } else if (workspace_bytes < plan.total) {
      set_error("workspace of %zu bytes is smaller than the %zu bytes the cuda backend needs",
                workspace_bytes, plan.total);
      return BSVD_STATUS_WORKSPACE_TOO_SMALL;
    }
  }
  return loc == 1 ? run_device_data(batch, cfg, stream, ws, plan, path)
                  : run_host_data(batch, cfg, stream, ws, plan, path);
}

#define BSVD_INSTANTIATE(T)                                                    \
  template int cuda_locate<T>(const Batch<T> &, int *);                        \
  template size_t cuda_workspace_bytes<T>(const Batch<T> &, const Config &);   \
  template bsvd_status_t cuda_gesvj<T>(const Batch<T> &, const Config &,       \
                                       void *, void *, size_t, int *);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail
