// GramOp (op.hpp): W and its single-precision copy packed (gram_pack),
// G = F^H F and its eigenvectors (cuBLAS, cuSOLVER, per shape), V0 in the
// working precision made orthonormal by two Newton-Schulz steps
// X <- X (3/2 I - X^H X / 2) and checked, W V0 solved by the blocked path,
// V0 V_J, the results stored (gram_store).
#include "op.hpp"

#include "../blocked/blocked.hpp"
#include "../blocked/op.hpp"
#include "../common/gemm.hpp"
#include "../common/handles.hpp"
#include "../common/upload.hpp"
#include "../common/ws_layout.hpp"
#include "../fused/fused.hpp" // precision_elem_bytes
#include "kernels.cuh"

#include <cublas_v2.h>
#include <cusolverDn.h>

#include <algorithm>
#include <complex>
#include <map>
#include <utility>
#include <vector>

namespace bsvd::detail::cuda {

namespace {

// The eigensolver's device workspace of one call is kept under this: a
// shape's matrices go in chunks of halved size until it fits (d 256^2: 1.8
// MB per matrix in single precision).
constexpr size_t kSyevBytes = size_t(512) << 20;

// The group's matrices by working shape (mw, nw): positions in the group.
using Shapes = std::map<std::pair<int, int>, std::vector<int>>;
Shapes shapes_of(const plan::Group &g) {
  Shapes s;
  for (size_t i = 0; i < g.index.size(); ++i)
    s[{std::max(g.m[i], g.n[i]), std::min(g.m[i], g.n[i])}].push_back(int(i));
  return s;
}

bool complex_prec(char p) { return p == 'c' || p == 'z'; }
cudaDataType low_type_of(char p) { return complex_prec(p) ? CUDA_C_32F : CUDA_R_32F; }

// The eigensolver's workspace for `count` matrices of order n, and the
// chunk (matrices per call) that keeps it under kSyevBytes.
struct SyevChunk {
  int chunk = 0;
  size_t dev = 0, host = 0;
};
bool syev_size(char p, int n, int count, size_t &dev, size_t &host) {
  cusolverDnHandle_t h = nullptr;
  cusolverDnParams_t par = nullptr;
  if (cusolver_handle(&h) != CUSOLVER_STATUS_SUCCESS ||
      cusolverDnCreateParams(&par) != CUSOLVER_STATUS_SUCCESS)
    return false;
  const cudaDataType t = low_type_of(p), tr = CUDA_R_32F;
  const cusolverStatus_t st =
      cusolverDnXsyevBatched_bufferSize(h, par, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n,
                                        t, nullptr, n, tr, nullptr, t, &dev, &host, count);
  cusolverDnDestroyParams(par);
  return st == CUSOLVER_STATUS_SUCCESS;
}
SyevChunk syev_chunk(char p, int n, int count) {
  SyevChunk c;
  c.chunk = count;
  while (true) {
    if (!syev_size(p, n, c.chunk, c.dev, c.host)) return SyevChunk{};
    if (c.chunk == 1 || c.dev <= kSyevBytes) return c;
    c.chunk = (c.chunk + 1) / 2;
  }
}

// The workspace regions (byte offsets) and the per-matrix element totals.
struct GramLayout {
  long long mn = 0, nn = 0, n = 0; // sums of mw nw, nw^2, nw
  size_t mats, P, Wq, Vd, V0, B1, B2, F, G, ev, S, info, sweeps, sinfo, dims, parr, syev, blk;
  size_t syev_bytes = 0, total = 0;
};
GramLayout gram_layout(const plan::Plan &p, const plan::Group &g, const Shapes &shapes) {
  GramLayout L;
  const size_t cnt = g.index.size(), eb = precision_elem_bytes(p.precision);
  const size_t rb = precision_real_bytes(p.precision);
  for (const auto &s : shapes) {
    const long long k = (long long)s.second.size();
    L.mn += k * s.first.first * s.first.second;
    L.nn += k * s.first.second * s.first.second;
    L.n += k * s.first.second;
    L.syev_bytes = std::max(L.syev_bytes, syev_chunk(p.precision, s.first.second, int(k)).dev);
  }
  std::vector<int> mw(cnt), nw(cnt);
  for (size_t i = 0; i < cnt; ++i) {
    mw[i] = std::max(g.m[i], g.n[i]);
    nw[i] = std::min(g.m[i], g.n[i]);
  }
  WsCursor c;
  L.mats = c.take(cnt * sizeof(GramMat));
  L.P = c.take(L.mn * eb); // W, then the blocked path's left vectors
  L.Wq = c.take(L.mn * eb); // W V0
  L.Vd = c.take(L.nn * eb);
  L.V0 = c.take(L.nn * eb);
  L.B1 = c.take(L.nn * eb);
  L.B2 = c.take(L.nn * eb);
  // F lives in W V0's space and G in B2's (the single-precision type is
  // never wider than T): both are dead before those are first written (W V0
  // after V0 is checked; B2 by the first Newton-Schulz step, after
  // gram_v0_kernel has read G).
  L.F = L.Wq;
  L.G = L.B2;
  L.ev = c.take(L.n * 4);
  L.S = c.take(L.n * rb);
  L.info = c.take(cnt * sizeof(int));
  L.sweeps = c.take(cnt * sizeof(int));
  L.sinfo = c.take(cnt * sizeof(int));
  L.dims = c.take(2 * cnt * sizeof(int)); // mw, nw
  L.parr = c.take(4 * cnt * sizeof(void *)); // A, S, U, V of the blocked path's batch
  L.syev = c.take(L.syev_bytes);
  L.blk = c.take(
      blocked_workspace_bytes(mw, nw, g.blocked.mode, p.vectors, eb, g.blocked.nb, g.blocked.wr));
  L.total = c.used;
  return L;
}

// The largest |V0^H V0 - I| entry accepted after the two Newton-Schulz
// steps (rounding leaves a few u; a failed eigensolve leaves far more):
// above it V0 = I.
template <class R> R gram_orth_tol() { return R(1024) * unit_roundoff<R>(); }

} // namespace

bool GramOp::can_run(const plan::Plan &p, const plan::Group &g) {
  if (g.route != plan::Route::kGram) return false;
  plan::Group b = g;
  b.route = plan::Route::kBlocked;
  return BlockedOp::can_run(p, b);
}

size_t GramOp::workspace_bytes(const plan::Plan &p, const plan::Group &g) {
  if (g.index.empty()) return 0;
  return gram_layout(p, g, shapes_of(g)).total;
}

template <class T> bsvd_status_t GramOp::run(const GroupArgs<T> &a) {
  using R = real_of_t<T>;
  using L = std::conditional_t<std::is_same_v<T, R>, float, std::complex<float>>;
  const plan::Group &g = a.group;
  const int cnt = int(g.index.size());
  if (cnt == 0) return BSVD_STATUS_SUCCESS;
  const char prec = a.plan.precision;
  cublasHandle_t bh = nullptr;
  cusolverDnHandle_t sh = nullptr;
  if (const cublasStatus_t st = cublas_handle(&bh)) {
    set_error("the Gram preconditioning (opts->precondition = 2) needs a cuBLAS handle, and "
              "cublasCreate returned %s (%d)",
              cublas_status_name(st), int(st));
    return BSVD_STATUS_DEVICE_ERROR;
  }
  if (const cusolverStatus_t st = cusolver_handle(&sh)) {
    set_error("the Gram preconditioning (opts->precondition = 2) needs a cuSOLVER handle, and "
              "cusolverDnCreate returned %s (%d)",
              cusolver_status_name(st), int(st));
    return BSVD_STATUS_DEVICE_ERROR;
  }
  const Shapes shapes = shapes_of(g);
  const GramLayout Ly = gram_layout(a.plan, g, shapes);
  unsigned char *ws = a.ws;
  cudaStream_t stream = a.stream;
  auto at = [ws](size_t off) { return ws + off; };
  T *P = reinterpret_cast<T *>(at(Ly.P)), *Wq = reinterpret_cast<T *>(at(Ly.Wq));
  T *Vd = reinterpret_cast<T *>(at(Ly.Vd)), *V0 = reinterpret_cast<T *>(at(Ly.V0));
  T *B1 = reinterpret_cast<T *>(at(Ly.B1)), *B2 = reinterpret_cast<T *>(at(Ly.B2));
  L *F = reinterpret_cast<L *>(at(Ly.F)), *G = reinterpret_cast<L *>(at(Ly.G));
  float *ev = reinterpret_cast<float *>(at(Ly.ev));
  R *S = reinterpret_cast<R *>(at(Ly.S));
  int *info = reinterpret_cast<int *>(at(Ly.info)),
      *sweeps = reinterpret_cast<int *>(at(Ly.sweeps));
  int *sinfo = reinterpret_cast<int *>(at(Ly.sinfo));

  // Matrices stored shape by shape (contiguous runs for the strided calls);
  // mats[] in that order, the blocked path's batch in the group's order.
  std::vector<GramMat> mats;
  mats.reserve(size_t(cnt));
  std::vector<int> mwv(cnt), nwv(cnt), dimv(2 * size_t(cnt));
  std::vector<const T *> pA(cnt);
  std::vector<R *> pS(cnt);
  std::vector<T *> pU(cnt), pV(cnt);
  struct Run {
    int mw, nw, first, count; // mats[first .. first + count)
    long long omn, onn, on;
  };
  std::vector<Run> runs;
  {
    long long omn = 0, onn = 0, on = 0;
    for (const auto &sh_ : shapes) {
      const int mw = sh_.first.first, nw = sh_.first.second;
      runs.push_back({mw, nw, int(mats.size()), int(sh_.second.size()), omn, onn, on});
      for (int i : sh_.second) {
        const size_t u = size_t(i);
        mats.push_back({i, a.kidx[u], g.m[u], g.n[u], mw, nw, omn, onn, on});
        mwv[u] = dimv[u] = mw;
        nwv[u] = dimv[size_t(cnt) + u] = nw;
        pA[u] = Wq + omn;
        pS[u] = S + on;
        pU[u] = a.kb.vectors ? P + omn : nullptr; // W is dead once W V0 is formed
        pV[u] = a.kb.vectors ? Vd + onn : nullptr;
        omn += (long long)mw * nw;
        onn += (long long)nw * nw;
        on += nw;
      }
    }
  }
  const size_t pb = size_t(cnt) * sizeof(void *);
  BSVD_CUDA_TRY(upload_bytes(at(Ly.mats), mats.data(), cnt * sizeof(GramMat), stream));
  BSVD_CUDA_TRY(upload_bytes(at(Ly.dims), dimv.data(), dimv.size() * sizeof(int), stream));
  BSVD_CUDA_TRY(upload_bytes(at(Ly.parr), pA.data(), pb, stream));
  BSVD_CUDA_TRY(upload_bytes(at(Ly.parr) + pb, pS.data(), pb, stream));
  BSVD_CUDA_TRY(upload_bytes(at(Ly.parr) + 2 * pb, pU.data(), pb, stream));
  BSVD_CUDA_TRY(upload_bytes(at(Ly.parr) + 3 * pb, pV.data(), pb, stream));
  const auto *dmats = reinterpret_cast<const GramMat *>(at(Ly.mats));
  using DT = dev_t<T>;
  using DL = low_t<DT>;
  auto dv = [](T *x) { return reinterpret_cast<DT *>(x); };

  gram_pack_kernel<T>
      <<<cnt, kGramThreads, 0, stream>>>(a.kb, dmats, dv(P), reinterpret_cast<DL *>(F));
  BSVD_CUDA_TRY(cudaGetLastError());

  if (const cublasStatus_t st = cublasSetStream(bh, stream)) {
    set_error("cublasSetStream returned %s (%d) in the Gram preconditioning",
              cublas_status_name(st), int(st));
    return BSVD_STATUS_DEVICE_ERROR;
  }
  if (const cusolverStatus_t st = cusolverDnSetStream(sh, stream)) {
    set_error("cusolverDnSetStream returned %s (%d) in the Gram preconditioning",
              cusolver_status_name(st), int(st));
    return BSVD_STATUS_DEVICE_ERROR;
  }
  const cudaDataType tl = low_type_of(prec), tw = data_type(prec);
  const L lone(1), lzero(0);
  const T one(1), zero(0), mhalf(-0.5);
  // Every product of the preconditioning, per run: C = alpha op(A) B + beta C.
  auto product = [&](const Run &r, const char *what, cudaDataType t, bool conj_a, int m, int n,
                     int k, const void *alpha, const void *A, int lda, long long sa, const void *B,
                     int ldb, long long sb, const void *beta, void *C, int ldc, long long sc) {
    const cublasStatus_t st = gemm_strided(bh, t, conj_a, m, n, k, alpha, A, lda, sa, B, ldb, sb,
                                           beta, C, ldc, sc, r.count);
    if (st == CUBLAS_STATUS_SUCCESS) return true;
    set_error("cuBLAS's batched product (%s) returned %s (%d) in the Gram preconditioning", what,
              cublas_status_name(st), int(st));
    return false;
  };

  // G = F^H F and its eigenvectors, shape by shape.
  {
    cusolverDnParams_t par = nullptr;
    if (cusolverDnCreateParams(&par) != CUSOLVER_STATUS_SUCCESS) {
      set_error("cusolverDnCreateParams failed in the Gram preconditioning");
      return BSVD_STATUS_DEVICE_ERROR;
    }
    std::vector<unsigned char> host_ws;
    bool ok = true;
    for (const Run &r : runs) {
      const long long smn = (long long)r.mw * r.nw, snn = (long long)r.nw * r.nw;
      L *Fr = F + r.omn, *Gr = G + r.onn;
      ok = product(r, "F^H F", tl, true, r.nw, r.nw, r.mw, &lone, Fr, r.mw, smn, Fr, r.mw, smn,
                   &lzero, Gr, r.nw, snn);
      if (!ok) break;
      const SyevChunk ch = syev_chunk(prec, r.nw, r.count);
      if (ch.chunk == 0 || ch.dev > Ly.syev_bytes) {
        set_error("cusolverDnXsyevBatched_bufferSize failed in the Gram preconditioning");
        ok = false;
        break;
      }
      if (ch.host > 0 && stream_capturing(stream)) {
        // (a host buffer would not outlive the captured graph)
        set_error("cusolverDnXsyevBatched asks for %zu bytes of host workspace, which a "
                  "captured call cannot keep: use a blocking call for opts->precondition = 2",
                  ch.host);
        ok = false;
        break;
      }
      host_ws.resize(std::max<size_t>(ch.host, 1));
      for (int c0 = 0; c0 < r.count && ok; c0 += ch.chunk) {
        const int k = std::min(ch.chunk, r.count - c0);
        const cusolverStatus_t st = cusolverDnXsyevBatched(
            sh, par, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, r.nw, tl, Gr + c0 * snn,
            r.nw, CUDA_R_32F, ev + r.on + (long long)c0 * r.nw, tl, at(Ly.syev), ch.dev,
            host_ws.data(), ch.host, sinfo + r.first + c0, k);
        if (st != CUSOLVER_STATUS_SUCCESS) {
          set_error("cusolverDnXsyevBatched returned %s (%d) in the Gram preconditioning",
                    cusolver_status_name(st), int(st));
          ok = false;
        }
      }
      if (!ok) break;
    }
    cusolverDnDestroyParams(par);
    if (!ok) return BSVD_STATUS_DEVICE_ERROR;
  }

  // V0 in the working precision; X <- X (3/2 I - X^H X / 2) twice (from
  // single precision's ~1e-7 to rounding); checked; W V0.
  gram_v0_kernel<T><<<cnt, kGramThreads, 0, stream>>>(dmats, reinterpret_cast<const DL *>(G), sinfo,
                                                      dv(V0), dv(B1));
  BSVD_CUDA_TRY(cudaGetLastError());
  for (int step = 0; step < 2; ++step) {
    T *X = step == 0 ? V0 : B2, *Y = step == 0 ? B2 : V0;
    if (step == 1) {
      gram_fill_kernel<T><<<cnt, kGramThreads, 0, stream>>>(dmats, dv(B1));
      BSVD_CUDA_TRY(cudaGetLastError());
    }
    for (const Run &r : runs) {
      const long long snn = (long long)r.nw * r.nw;
      if (!product(r, "3/2 I - X^H X / 2", tw, true, r.nw, r.nw, r.nw, &mhalf, X + r.onn, r.nw, snn,
                   X + r.onn, r.nw, snn, &one, B1 + r.onn, r.nw, snn) ||
          !product(r, "X (3/2 I - X^H X / 2)", tw, false, r.nw, r.nw, r.nw, &one, X + r.onn, r.nw,
                   snn, B1 + r.onn, r.nw, snn, &zero, Y + r.onn, r.nw, snn))
        return BSVD_STATUS_DEVICE_ERROR;
    }
  }
  for (const Run &r : runs) {
    const long long snn = (long long)r.nw * r.nw;
    if (!product(r, "V0^H V0", tw, true, r.nw, r.nw, r.nw, &one, V0 + r.onn, r.nw, snn, V0 + r.onn,
                 r.nw, snn, &zero, B1 + r.onn, r.nw, snn))
      return BSVD_STATUS_DEVICE_ERROR;
  }
  gram_check_kernel<T><<<cnt, kGramThreads, 0, stream>>>(dmats, dv(B1), dv(V0), gram_orth_tol<R>());
  BSVD_CUDA_TRY(cudaGetLastError());
  for (const Run &r : runs) {
    const long long snn = (long long)r.nw * r.nw, smn = (long long)r.mw * r.nw;
    if (!product(r, "W V0", tw, false, r.mw, r.nw, r.nw, &one, P + r.omn, r.mw, smn, V0 + r.onn,
                 r.nw, snn, &zero, Wq + r.omn, r.mw, smn))
      return BSVD_STATUS_DEVICE_ERROR;
  }

  // The blocked path on W V0 (tall, mw x nw): its left vectors into P, its
  // V_J into Vd, S, info and sweeps into the workspace.
  Batch<T> qb;
  qb.vectors = a.kb.vectors;
  qb.count = cnt;
  const int *ddims = reinterpret_cast<const int *>(at(Ly.dims));
  qb.dims.mv = ddims;
  qb.dims.nv = ddims + cnt;
  qb.A.array = reinterpret_cast<const T *const *>(at(Ly.parr));
  qb.A.ldv = ddims;
  qb.S.array = reinterpret_cast<R *const *>(at(Ly.parr) + pb);
  qb.U.array = reinterpret_cast<T *const *>(at(Ly.parr) + 2 * pb);
  qb.U.ldv = ddims;
  qb.V.array = reinterpret_cast<T *const *>(at(Ly.parr) + 3 * pb);
  qb.V.ldv = ddims + cnt;
  qb.info = info;
  qb.sweeps = sweeps;
  std::vector<int> all(cnt);
  for (int i = 0; i < cnt; ++i) all[size_t(i)] = i;
  BSVD_CUDA_TRY(run_blocked(qb, all, mwv, nwv, g.blocked, a.plan, stream, at(Ly.blk)));

  // V = V0 V_J into B2; the caller's U, S, V, info, sweeps.
  if (a.kb.vectors)
    for (const Run &r : runs) {
      const long long snn = (long long)r.nw * r.nw;
      if (!product(r, "V0 V_J", tw, false, r.nw, r.nw, r.nw, &one, V0 + r.onn, r.nw, snn,
                   Vd + r.onn, r.nw, snn, &zero, B2 + r.onn, r.nw, snn))
        return BSVD_STATUS_DEVICE_ERROR;
    }
  gram_store_kernel<T><<<cnt, kGramThreads, 0, stream>>>(
      a.kb, dmats, reinterpret_cast<const dreal_t<DT> *>(S), info, sweeps, dv(P), dv(B2));
  BSVD_CUDA_TRY(cudaGetLastError());
  return BSVD_STATUS_SUCCESS;
}

template bsvd_status_t GramOp::run<float>(const GroupArgs<float> &);
template bsvd_status_t GramOp::run<double>(const GroupArgs<double> &);
template bsvd_status_t GramOp::run<std::complex<float>>(const GroupArgs<std::complex<float>> &);
template bsvd_status_t GramOp::run<std::complex<double>>(const GroupArgs<std::complex<double>> &);

} // namespace bsvd::detail::cuda
