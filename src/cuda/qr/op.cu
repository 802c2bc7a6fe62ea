// QrOp (op.hpp): factor, solve the R factors by the fused kernel (kQr) or
// R^H by the blocked path (kQrcp), finish.
#include "op.hpp"

#include "../blocked/blocked.hpp"
#include "../common/upload.hpp"
#include "../common/ws_layout.hpp"
#include "../fused/fused.hpp"
#include "../fused/op.hpp"
#include "qr.hpp"

#include <algorithm>
#include <complex>

namespace bsvd::detail::cuda {

namespace {

std::vector<int> min_sizes(const std::vector<int> &m, const std::vector<int> &n) {
  std::vector<int> k(m.size());
  for (size_t i = 0; i < m.size(); ++i) k[i] = std::min(m[i], n[i]);
  return k;
}

QrLayout layout_of(const plan::Plan &p, const plan::Group &g) {
  return qr_layout(g.m, g.n, p.vectors, precision_elem_bytes(p.precision),
                   precision_real_bytes(p.precision), g.qr.pivoted, g.qr.tsqr);
}

} // namespace

bool QrOp::can_run(const plan::Plan &p, const plan::Group &g) {
  if (g.route == plan::Route::kQrcp) // (its pivots would permute an HSVD's J)
    return g.qr.pivoted && g.blocked.nb > 0 && !p.hyperbolic;
  if (g.route != plan::Route::kQr || g.qr.pivoted) return false;
  for (size_t i = 0; i < g.m.size(); ++i) {
    const int nw = std::min(g.m[i], g.n[i]);
    if (nw < 1 || !fused_fits(p.precision, nw, nw, p.vectors, size_t(p.device.smem_optin)))
      return false;
  }
  return true;
}

// The unpivoted path's workspace after the QR layout: the fused kernel's
// ordering tables (at its aligned end), then the HSVD's signatures of the
// R factors (at nplus from there; total bytes of both).
struct FusedTail {
  size_t nplus = 0, total = 0;
};
FusedTail fused_tail(const plan::Plan &p, const plan::Group &g) {
  FusedTail f;
  const size_t tables = fused_order_bytes(p.cfg.ordering, g.fused, min_sizes(g.m, g.n));
  f.nplus = ws_align(tables);
  f.total = f.nplus + (p.hyperbolic ? ws_align(g.index.size() * sizeof(int)) : 0);
  return f;
}

size_t QrOp::workspace_bytes(const plan::Plan &p, const plan::Group &g) {
  const size_t qr = layout_of(p, g).total;
  if (!g.qr.pivoted) {
    const size_t tail = fused_tail(p, g).total;
    return tail ? ws_align(qr) + tail : qr;
  }
  const std::vector<int> nw = min_sizes(g.m, g.n);
  return ws_align(qr) + blocked_workspace_bytes(nw, nw, g.blocked.mode, p.vectors,
                                                precision_elem_bytes(p.precision), g.blocked.nb,
                                                g.blocked.wr);
}

// The factorization writes B = R (R^H when pivoted) of each matrix into
// the workspace as a variable-size batch with pointer arrays, which the
// fused kernel (the blocked path when pivoted) solves; the finish forms U,
// S, V of the caller's matrices from it.
template <class T> bsvd_status_t QrOp::run(const GroupArgs<T> &a) {
  using R = real_of_t<T>;
  const plan::Group &g = a.group;
  const Batch<T> &kb = a.kb;
  const bool piv = g.qr.pivoted;
  const int cnt = int(g.index.size());
  if (cnt == 0) return BSVD_STATUS_SUCCESS;
  unsigned char *ws = a.ws;
  const QrLayout L = layout_of(a.plan, g);
  std::vector<QrMat> mats(cnt);
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
    QrMat &q = mats[i];
    q.b = a.kidx[size_t(i)];
    q.m = g.m[size_t(i)];
    q.n = g.n[size_t(i)];
    q.mw = std::max(q.m, q.n);
    q.nw = std::min(q.m, q.n);
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
  if (L.tsqr) qr_tsqr_offsets(mats.data(), cnt, sizeof(T));
  cudaStream_t stream = a.stream;
  auto up = [&](size_t off, const void *src, size_t bytes) {
    return upload_bytes(ws + off, src, bytes, stream);
  };
  const size_t pb = size_t(cnt) * sizeof(void *);
  BSVD_CUDA_TRY(up(L.mats, mats.data(), cnt * sizeof(QrMat)));
  BSVD_CUDA_TRY(up(L.parr, pA.data(), pb));
  BSVD_CUDA_TRY(up(L.parr + pb, pS.data(), pb));
  BSVD_CUDA_TRY(up(L.parr + 2 * pb, pU.data(), pb));
  BSVD_CUDA_TRY(up(L.parr + 3 * pb, pV.data(), pb));
  BSVD_CUDA_TRY(up(L.iarr, nwv.data(), cnt * sizeof(int)));
  const auto *dmats = reinterpret_cast<const QrMat *>(ws + L.mats);
  const QrLaunch launch = qr_launch(g.qr, a.plan.tuning);
  BSVD_CUDA_TRY(qr_factor(kb, dmats, cnt, nw_max, ws, L, stream, launch, mats.data()));

  // B as a variable-size batch in the workspace.
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
  std::vector<int> all(cnt);
  for (int i = 0; i < cnt; ++i) all[i] = i;
  if (piv) {
    BSVD_CUDA_TRY(
        run_blocked(qb, all, nwv, nwv, g.blocked, a.plan, stream, ws + ws_align(L.total)));
  } else {
    // The HSVD of G = Q R is R's with G's signature (R keeps G's columns).
    unsigned char *tail = ws + ws_align(L.total);
    if (kb.nplus) {
      std::vector<int> np(cnt);
      for (int i = 0; i < cnt; ++i) np[i] = a.hb.nplus[mats[i].b];
      int *dnp = reinterpret_cast<int *>(tail + fused_tail(a.plan, g).nplus);
      BSVD_CUDA_TRY(upload(dnp, np, stream));
      qb.nplus = dnp;
    }
    BSVD_TRY_STATUS(launch_fused_sets(qb, g.fused, all, nwv, reinterpret_cast<int *>(ws + L.map),
                                      reinterpret_cast<int *>(tail), a.plan.cfg, stream));
  }
  BSVD_CUDA_TRY(qr_finish(kb, dmats, cnt, nw_max, ws, L, stream, launch, mats.data()));
  return BSVD_STATUS_SUCCESS;
}

template bsvd_status_t QrOp::run<float>(const GroupArgs<float> &);
template bsvd_status_t QrOp::run<double>(const GroupArgs<double> &);
template bsvd_status_t QrOp::run<std::complex<float>>(const GroupArgs<std::complex<float>> &);
template bsvd_status_t QrOp::run<std::complex<double>>(const GroupArgs<std::complex<double>> &);

} // namespace bsvd::detail::cuda
