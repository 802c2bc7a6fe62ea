// GramOp (op.hpp): W and its single-precision copy packed (gram_pack),
// G = F^H F and its eigenvectors (cuBLAS, cuSOLVER, per shape), V0 in the
// working precision made orthonormal by two Newton-Schulz steps
// X <- X (3/2 I - X^H X / 2) and checked, W V0 solved by the blocked path,
// V0 V_J, the results stored (gram_store).
#include "op.hpp"

#include "../blocked/blocked.hpp"
#include "../blocked/op.hpp"
#include "../common/gemm.hpp"
#include "../common/device_loop.hpp"
#include "../common/handles.hpp"
#include "../common/upload.hpp"
#include "../common/ws_layout.hpp"
#include "../fused/fused.hpp" // precision_elem_bytes
#include "kernels.cuh"

#include <cublas_v2.h>
#include <cusolverDn.h>

#include <algorithm>
#include <complex>
#include <cstdio>
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
  size_t test; // the test's work and gain per matrix, and the decision (plan.gram_auto)
  size_t probe; // the test's power iteration: 5 nw doubles per matrix
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
  L.test = c.take((2 * cnt + 3) * sizeof(double));
  L.probe = c.take(5 * size_t(L.n) * sizeof(double));
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

// The plan's choice (plan.gram_auto) may run the plain blocked path on the
// caller's matrices instead, from the workspace's start.
size_t GramOp::workspace_bytes(const plan::Plan &p, const plan::Group &g) {
  if (g.index.empty()) return 0;
  const size_t gram = gram_layout(p, g, shapes_of(g)).total;
  if (!p.gram_auto) return gram;
  plan::Group b = g;
  b.route = plan::Route::kBlocked;
  return std::max(gram, BlockedOp::workspace_bytes(p, b));
}

namespace {

// One call of the operation: its workspace's pointers, the matrices in
// storage order (shape by shape: contiguous runs for the strided products)
// and the steps. mats[] is in that order, the blocked path's batch in the
// group's.
template <class T> class GramRun {
public:
  using R = real_of_t<T>;
  using L = std::conditional_t<std::is_same_v<T, R>, float, std::complex<float>>;
  using DT = dev_t<T>;
  using DL = low_t<DT>;

  explicit GramRun(const GroupArgs<T> &a)
      : a_(a), g_(a.group), cnt_(int(a.group.index.size())), prec_(a.plan.precision),
        shapes_(shapes_of(a.group)), Ly_(gram_layout(a.plan, a.group, shapes_)) {}

  bsvd_status_t init(); // handles, the matrices' records
  // W and F (gram_pack_kernel), then G = F^H F: of every matrix, or of the
  // test's sample (gram_sample).
  bsvd_status_t pack(cudaStream_t s, bool sample);
  bsvd_status_t gram_matrices(cudaStream_t s, bool sample);
  // After the sample's pack and product: those of every matrix, unless the
  // sample was every matrix already.
  bsvd_status_t complete_sample(cudaStream_t s);
  bsvd_status_t test(cudaStream_t s, const DeviceIf *then_if, const DeviceIf *else_if);
  bsvd_status_t eigenvectors(cudaStream_t s); // G's eigenvectors
  bsvd_status_t finish(cudaStream_t s); // V0, W V0, the blocked path, V0 V_J, the results
  bsvd_status_t plain(cudaStream_t s); // the blocked path on the caller's matrices
  // The test's decision and the work predicted to gain / in all (blocking
  // calls: waits for the stream).
  bsvd_status_t read_decision(double d[3]);
  int tested() const { return tested_; }

private:
  struct Run {
    int mw, nw, first, count; // mats[first .. first + count)
    long long omn, onn, on;
    GramSample tested; // the test's matrices: mats[first + i tested.step]
  };
  unsigned char *at(size_t off) const { return a_.ws + off; }
  template <class E> E *ptr(size_t off) const { return reinterpret_cast<E *>(at(off)); }
  DT *dv(size_t off) const { return ptr<DT>(off); }
  const GramMat *dmats() const { return ptr<const GramMat>(Ly_.mats); }
  bsvd_status_t set_stream(cudaStream_t s);
  bool product(const Run &r, const char *what, cudaDataType t, bool conj_a, int m, int n, int k,
               const void *alpha, const void *A, int lda, long long sa, const void *B, int ldb,
               long long sb, const void *beta, void *C, int ldc, long long sc);

  const GroupArgs<T> &a_;
  const plan::Group &g_;
  const int cnt_;
  const char prec_;
  const Shapes shapes_;
  const GramLayout Ly_;
  cublasHandle_t bh_ = nullptr;
  cusolverDnHandle_t sh_ = nullptr;
  std::vector<Run> runs_;
  std::vector<int> mwv_, nwv_;
  int tested_ = 0; // matrices in the test's sample
};

template <class T> bsvd_status_t GramRun<T>::init() {
  if (const cublasStatus_t st = cublas_handle(&bh_)) {
    set_error("the Gram preconditioning needs a cuBLAS handle, and cublasCreate returned %s (%d)",
              cublas_status_name(st), int(st));
    return BSVD_STATUS_DEVICE_ERROR;
  }
  if (const cusolverStatus_t st = cusolver_handle(&sh_)) {
    set_error("the Gram preconditioning needs a cuSOLVER handle, and cusolverDnCreate returned "
              "%s (%d)",
              cusolver_status_name(st), int(st));
    return BSVD_STATUS_DEVICE_ERROR;
  }
  T *P = ptr<T>(Ly_.P), *Wq = ptr<T>(Ly_.Wq), *Vd = ptr<T>(Ly_.Vd);
  R *S = ptr<R>(Ly_.S);
  std::vector<GramMat> mats;
  mats.reserve(size_t(cnt_));
  mwv_.assign(size_t(cnt_), 0);
  nwv_.assign(size_t(cnt_), 0);
  std::vector<int> dimv(2 * size_t(cnt_));
  std::vector<const T *> pA(cnt_);
  std::vector<R *> pS(cnt_);
  std::vector<T *> pU(cnt_), pV(cnt_);
  long long omn = 0, onn = 0, on = 0;
  for (const auto &sh : shapes_) {
    const int mw = sh.first.first, nw = sh.first.second;
    const int count = int(sh.second.size());
    const GramSample tested = gram_sample(count, a_.plan.tuning.gram.sample);
    runs_.push_back({mw, nw, int(mats.size()), count, omn, onn, on, tested});
    tested_ += tested.count;
    for (int i : sh.second) {
      const size_t u = size_t(i);
      mats.push_back({i, a_.kidx[u], g_.m[u], g_.n[u], mw, nw, omn, onn, on});
      mwv_[u] = dimv[u] = mw;
      nwv_[u] = dimv[size_t(cnt_) + u] = nw;
      pA[u] = Wq + omn;
      pS[u] = S + on;
      pU[u] = a_.kb.vectors ? P + omn : nullptr; // W is dead once W V0 is formed
      pV[u] = a_.kb.vectors ? Vd + onn : nullptr;
      omn += (long long)mw * nw;
      onn += (long long)nw * nw;
      on += nw;
    }
  }
  const size_t pb = size_t(cnt_) * sizeof(void *);
  const cudaStream_t stream = a_.stream;
  BSVD_CUDA_TRY(upload_bytes(at(Ly_.mats), mats.data(), cnt_ * sizeof(GramMat), stream));
  BSVD_CUDA_TRY(upload_bytes(at(Ly_.dims), dimv.data(), dimv.size() * sizeof(int), stream));
  BSVD_CUDA_TRY(upload_bytes(at(Ly_.parr), pA.data(), pb, stream));
  BSVD_CUDA_TRY(upload_bytes(at(Ly_.parr) + pb, pS.data(), pb, stream));
  BSVD_CUDA_TRY(upload_bytes(at(Ly_.parr) + 2 * pb, pU.data(), pb, stream));
  BSVD_CUDA_TRY(upload_bytes(at(Ly_.parr) + 3 * pb, pV.data(), pb, stream));
  return BSVD_STATUS_SUCCESS;
}

template <class T> bsvd_status_t GramRun<T>::pack(cudaStream_t s, bool sample) {
  if (!sample) {
    gram_pack_kernel<T><<<cnt_, kGramThreads, 0, s>>>(a_.kb, dmats(), 1, dv(Ly_.P), ptr<DL>(Ly_.F));
    BSVD_CUDA_TRY(cudaGetLastError());
    return BSVD_STATUS_SUCCESS;
  }
  for (const Run &r : runs_) {
    gram_pack_kernel<T><<<r.tested.count, kGramThreads, 0, s>>>(
        a_.kb, dmats() + r.first, r.tested.step, dv(Ly_.P), ptr<DL>(Ly_.F));
    BSVD_CUDA_TRY(cudaGetLastError());
  }
  return BSVD_STATUS_SUCCESS;
}

template <class T> bsvd_status_t GramRun<T>::set_stream(cudaStream_t s) {
  if (const cublasStatus_t st = cublasSetStream(bh_, s)) {
    set_error("cublasSetStream returned %s (%d) in the Gram preconditioning",
              cublas_status_name(st), int(st));
    return BSVD_STATUS_DEVICE_ERROR;
  }
  if (const cusolverStatus_t st = cusolverDnSetStream(sh_, s)) {
    set_error("cusolverDnSetStream returned %s (%d) in the Gram preconditioning",
              cusolver_status_name(st), int(st));
    return BSVD_STATUS_DEVICE_ERROR;
  }
  return BSVD_STATUS_SUCCESS;
}

// Every product of the preconditioning, per run: C = alpha op(A) B + beta C.
template <class T> bool GramRun<T>::product(const Run &r, const char *what, cudaDataType t,
                                            bool conj_a, int m, int n, int k, const void *alpha,
                                            const void *A, int lda, long long sa, const void *B,
                                            int ldb, long long sb, const void *beta, void *C,
                                            int ldc, long long sc) {
  const cublasStatus_t st = gemm_strided(bh_, t, conj_a, m, n, k, alpha, A, lda, sa, B, ldb, sb,
                                         beta, C, ldc, sc, r.count);
  if (st == CUBLAS_STATUS_SUCCESS) return true;
  set_error("cuBLAS's batched product (%s) returned %s (%d) in the Gram preconditioning", what,
            cublas_status_name(st), int(st));
  return false;
}

template <class T> bsvd_status_t GramRun<T>::complete_sample(cudaStream_t s) {
  if (tested_ == cnt_) return BSVD_STATUS_SUCCESS;
  BSVD_TRY_STATUS(pack(s, false));
  return gram_matrices(s, false);
}

template <class T> bsvd_status_t GramRun<T>::gram_matrices(cudaStream_t s, bool sample) {
  BSVD_TRY_STATUS(set_stream(s));
  const L lone(1), lzero(0);
  L *F = ptr<L>(Ly_.F), *G = ptr<L>(Ly_.G);
  for (Run r : runs_) {
    const long long step = sample ? r.tested.step : 1;
    const long long smn = step * r.mw * r.nw, snn = step * r.nw * r.nw;
    if (sample) r.count = r.tested.count;
    if (!product(r, "F^H F", low_type_of(prec_), true, r.nw, r.nw, r.mw, &lone, F + r.omn, r.mw,
                 smn, F + r.omn, r.mw, smn, &lzero, G + r.onn, r.nw, snn))
      return BSVD_STATUS_DEVICE_ERROR;
  }
  return BSVD_STATUS_SUCCESS;
}

template <class T>
bsvd_status_t GramRun<T>::test(cudaStream_t s, const DeviceIf *then_if, const DeviceIf *else_if) {
  const plan::GramTuning &t = a_.plan.tuning.gram;
  double *work = ptr<double>(Ly_.test), *gain = work + cnt_, *decision = gain + cnt_;
  int o = 0;
  for (const Run &r : runs_) {
    const double weight = double(r.count) / r.tested.count;
    gram_test_kernel<DL><<<r.tested.count, kGramThreads, 0, s>>>(
        dmats() + r.first, r.tested.step, weight, ptr<const DL>(Ly_.G), ptr<double>(Ly_.probe),
        t.min_cos, t.min_srank, t.min_rank, work + o, gain + o);
    BSVD_CUDA_TRY(cudaGetLastError());
    o += r.tested.count;
  }
  const bool cond = then_if && else_if;
  gram_decide_kernel<<<1, kGramThreads, 0, s>>>(tested_, work, gain, decision,
                                                cond ? then_if->handle() : 0,
                                                cond ? else_if->handle() : 0, int(cond));
  BSVD_CUDA_TRY(cudaGetLastError());
  return BSVD_STATUS_SUCCESS;
}

template <class T> bsvd_status_t GramRun<T>::read_decision(double d[3]) {
  BSVD_CUDA_TRY(cudaMemcpyAsync(d, ptr<double>(Ly_.test) + 2 * size_t(cnt_), 3 * sizeof(double),
                                cudaMemcpyDeviceToHost, a_.stream));
  BSVD_CUDA_TRY(cudaStreamSynchronize(a_.stream));
  return BSVD_STATUS_SUCCESS;
}

template <class T> bsvd_status_t GramRun<T>::eigenvectors(cudaStream_t s) {
  BSVD_TRY_STATUS(set_stream(s));
  cusolverDnParams_t par = nullptr;
  if (cusolverDnCreateParams(&par) != CUSOLVER_STATUS_SUCCESS) {
    set_error("cusolverDnCreateParams failed in the Gram preconditioning");
    return BSVD_STATUS_DEVICE_ERROR;
  }
  L *G = ptr<L>(Ly_.G);
  float *ev = ptr<float>(Ly_.ev);
  int *sinfo = ptr<int>(Ly_.sinfo);
  const cudaDataType tl = low_type_of(prec_);
  std::vector<unsigned char> host_ws;
  bool ok = true;
  for (const Run &r : runs_) {
    const long long snn = (long long)r.nw * r.nw;
    const SyevChunk ch = syev_chunk(prec_, r.nw, r.count);
    if (ch.chunk == 0 || ch.dev > Ly_.syev_bytes) {
      set_error("cusolverDnXsyevBatched_bufferSize failed in the Gram preconditioning");
      ok = false;
      break;
    }
    if (ch.host > 0 && stream_capturing(s)) {
      // (a host buffer would not outlive the captured graph)
      set_error("cusolverDnXsyevBatched asks for %zu bytes of host workspace, which a captured "
                "call cannot keep: use a blocking call, or opts->precondition = -1",
                ch.host);
      ok = false;
      break;
    }
    host_ws.resize(std::max<size_t>(ch.host, 1));
    for (int c0 = 0; c0 < r.count && ok; c0 += ch.chunk) {
      const int k = std::min(ch.chunk, r.count - c0);
      const cusolverStatus_t st = cusolverDnXsyevBatched(
          sh_, par, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, r.nw, tl,
          G + r.onn + c0 * snn, r.nw, CUDA_R_32F, ev + r.on + (long long)c0 * r.nw, tl,
          at(Ly_.syev), ch.dev, host_ws.data(), ch.host, sinfo + r.first + c0, k);
      if (st != CUSOLVER_STATUS_SUCCESS) {
        set_error("cusolverDnXsyevBatched returned %s (%d) in the Gram preconditioning",
                  cusolver_status_name(st), int(st));
        ok = false;
      }
    }
    if (!ok) break;
  }
  cusolverDnDestroyParams(par);
  return ok ? BSVD_STATUS_SUCCESS : BSVD_STATUS_DEVICE_ERROR;
}

// V0 in the working precision; X <- X (3/2 I - X^H X / 2) twice (from
// single precision's ~1e-7 to rounding); checked; W V0; the blocked path on
// it (tall, mw x nw: its left vectors into P, V_J into Vd, S, info and
// sweeps into the workspace); V = V0 V_J into B2; the caller's U, S, V,
// info, sweeps.
template <class T> bsvd_status_t GramRun<T>::finish(cudaStream_t s) {
  BSVD_TRY_STATUS(set_stream(s));
  const cudaDataType tw = data_type(prec_);
  const T one(1), zero(0), mhalf(-0.5);
  T *P = ptr<T>(Ly_.P), *Wq = ptr<T>(Ly_.Wq), *Vd = ptr<T>(Ly_.Vd), *V0 = ptr<T>(Ly_.V0);
  T *B1 = ptr<T>(Ly_.B1), *B2 = ptr<T>(Ly_.B2);
  auto d = [](T *x) { return reinterpret_cast<DT *>(x); };
  gram_v0_kernel<T><<<cnt_, kGramThreads, 0, s>>>(dmats(), ptr<const DL>(Ly_.G),
                                                  ptr<const int>(Ly_.sinfo), d(V0), d(B1));
  BSVD_CUDA_TRY(cudaGetLastError());
  for (int step = 0; step < 2; ++step) {
    T *X = step == 0 ? V0 : B2, *Y = step == 0 ? B2 : V0;
    if (step == 1) {
      gram_fill_kernel<T><<<cnt_, kGramThreads, 0, s>>>(dmats(), d(B1));
      BSVD_CUDA_TRY(cudaGetLastError());
    }
    for (const Run &r : runs_) {
      const long long snn = (long long)r.nw * r.nw;
      if (!product(r, "3/2 I - X^H X / 2", tw, true, r.nw, r.nw, r.nw, &mhalf, X + r.onn, r.nw, snn,
                   X + r.onn, r.nw, snn, &one, B1 + r.onn, r.nw, snn) ||
          !product(r, "X (3/2 I - X^H X / 2)", tw, false, r.nw, r.nw, r.nw, &one, X + r.onn, r.nw,
                   snn, B1 + r.onn, r.nw, snn, &zero, Y + r.onn, r.nw, snn))
        return BSVD_STATUS_DEVICE_ERROR;
    }
  }
  for (const Run &r : runs_) {
    const long long snn = (long long)r.nw * r.nw;
    if (!product(r, "V0^H V0", tw, true, r.nw, r.nw, r.nw, &one, V0 + r.onn, r.nw, snn, V0 + r.onn,
                 r.nw, snn, &zero, B1 + r.onn, r.nw, snn))
      return BSVD_STATUS_DEVICE_ERROR;
  }
  gram_check_kernel<T><<<cnt_, kGramThreads, 0, s>>>(dmats(), d(B1), d(V0), gram_orth_tol<R>());
  BSVD_CUDA_TRY(cudaGetLastError());
  for (const Run &r : runs_) {
    const long long snn = (long long)r.nw * r.nw, smn = (long long)r.mw * r.nw;
    if (!product(r, "W V0", tw, false, r.mw, r.nw, r.nw, &one, P + r.omn, r.mw, smn, V0 + r.onn,
                 r.nw, snn, &zero, Wq + r.omn, r.mw, smn))
      return BSVD_STATUS_DEVICE_ERROR;
  }

  Batch<T> qb;
  qb.vectors = a_.kb.vectors;
  qb.count = cnt_;
  const size_t pb = size_t(cnt_) * sizeof(void *);
  const int *ddims = ptr<const int>(Ly_.dims);
  qb.dims.mv = ddims;
  qb.dims.nv = ddims + cnt_;
  qb.A.array = reinterpret_cast<const T *const *>(at(Ly_.parr));
  qb.A.ldv = ddims;
  qb.S.array = reinterpret_cast<R *const *>(at(Ly_.parr) + pb);
  qb.U.array = reinterpret_cast<T *const *>(at(Ly_.parr) + 2 * pb);
  qb.U.ldv = ddims;
  qb.V.array = reinterpret_cast<T *const *>(at(Ly_.parr) + 3 * pb);
  qb.V.ldv = ddims + cnt_;
  qb.info = ptr<int>(Ly_.info);
  qb.sweeps = ptr<int>(Ly_.sweeps);
  std::vector<int> all(cnt_);
  for (int i = 0; i < cnt_; ++i) all[size_t(i)] = i;
  BSVD_CUDA_TRY(run_blocked(qb, all, mwv_, nwv_, g_.blocked, a_.plan, s, at(Ly_.blk)));

  if (a_.kb.vectors) {
    BSVD_TRY_STATUS(set_stream(s)); // (the blocked path's cuBLAS stage sets its own)
    for (const Run &r : runs_) {
      const long long snn = (long long)r.nw * r.nw;
      if (!product(r, "V0 V_J", tw, false, r.nw, r.nw, r.nw, &one, V0 + r.onn, r.nw, snn,
                   Vd + r.onn, r.nw, snn, &zero, B2 + r.onn, r.nw, snn))
        return BSVD_STATUS_DEVICE_ERROR;
    }
  }
  gram_store_kernel<T><<<cnt_, kGramThreads, 0, s>>>(
      a_.kb, dmats(), reinterpret_cast<const dreal_t<DT> *>(at(Ly_.S)), ptr<const int>(Ly_.info),
      ptr<const int>(Ly_.sweeps), d(P), d(B2));
  BSVD_CUDA_TRY(cudaGetLastError());
  return BSVD_STATUS_SUCCESS;
}

template <class T> bsvd_status_t GramRun<T>::plain(cudaStream_t s) {
  BSVD_CUDA_TRY(run_blocked(a_.kb, a_.kidx, g_.m, g_.n, g_.blocked, a_.plan, s, a_.ws, nullptr));
  return BSVD_STATUS_SUCCESS;
}

// The plan's choice (plan.gram_auto): the test, then the preconditioned
// steps or the plain blocked path -- a branch on the host in a blocking
// call (it waits for the test), two if nodes (taken and not taken) in a
// captured one.
template <class T> bsvd_status_t run_auto(GramRun<T> &r, const GroupArgs<T> &a) {
  const cudaStream_t stream = a.stream;
  BSVD_TRY_STATUS(r.pack(stream, true));
  BSVD_TRY_STATUS(r.gram_matrices(stream, true));
  if (!stream_capturing(stream)) {
    BSVD_TRY_STATUS(r.test(stream, nullptr, nullptr));
    double d[3];
    BSVD_TRY_STATUS(r.read_decision(d));
    if (a.plan.tuning.gram.trace)
      std::fprintf(
          stderr, "bsvd gram: %zu matrices, %d tested, %.3g of %.3g work predicted to gain: %s\n",
          a.group.index.size(), r.tested(), d[1], d[2], d[0] != 0 ? "preconditioned" : "plain");
    if (d[0] == 0) return r.plain(stream);
    BSVD_TRY_STATUS(r.complete_sample(stream));
    BSVD_TRY_STATUS(r.eigenvectors(stream));
    return r.finish(stream);
  }
  DeviceIf pre, plain;
  BSVD_CUDA_TRY(pre.create(stream));
  BSVD_CUDA_TRY(plain.create(stream));
  BSVD_TRY_STATUS(r.test(stream, &pre, &plain));
  bsvd_status_t st = BSVD_STATUS_SUCCESS; // a body's failure (its message set)
  auto body = [&st](bsvd_status_t s) {
    if (s != BSVD_STATUS_SUCCESS && st == BSVD_STATUS_SUCCESS) st = s;
    return s == BSVD_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
  };
  cudaError_t e = pre.add(stream, [&](cudaStream_t s) {
    bsvd_status_t e1 = r.complete_sample(s);
    if (e1 == BSVD_STATUS_SUCCESS) e1 = r.eigenvectors(s);
    return body(e1 != BSVD_STATUS_SUCCESS ? e1 : r.finish(s));
  });
  if (e == cudaSuccess) e = plain.add(stream, [&](cudaStream_t s) { return body(r.plain(s)); });
  if (st != BSVD_STATUS_SUCCESS) return st;
  BSVD_CUDA_TRY(e);
  return BSVD_STATUS_SUCCESS;
}

} // namespace

template <class T> bsvd_status_t GramOp::run(const GroupArgs<T> &a) {
  if (a.group.index.empty()) return BSVD_STATUS_SUCCESS;
  GramRun<T> r(a);
  BSVD_TRY_STATUS(r.init());
  if (a.plan.gram_auto) return run_auto(r, a);
  BSVD_TRY_STATUS(r.pack(a.stream, false));
  BSVD_TRY_STATUS(r.gram_matrices(a.stream, false));
  BSVD_TRY_STATUS(r.eigenvectors(a.stream));
  return r.finish(a.stream);
}

template bsvd_status_t GramOp::run<float>(const GroupArgs<float> &);
template bsvd_status_t GramOp::run<double>(const GroupArgs<double> &);
template bsvd_status_t GramOp::run<std::complex<float>>(const GroupArgs<std::complex<float>> &);
template bsvd_status_t GramOp::run<std::complex<double>>(const GroupArgs<std::complex<double>> &);

} // namespace bsvd::detail::cuda
