// Host side of the QR preprocessing (qr.hpp): the launch settings, TSQR's
// chunking and the workspace layout.
#include "qr.hpp"

#include "../common/ws_layout.hpp"

#include "../../core/tsqr.hpp"

#include <algorithm>

namespace bsvd::detail::cuda {

int qr_apply_cols(size_t col, size_t smax) {
  if (col == 0) return 0;
  size_t cb = std::max<size_t>(1, std::min<size_t>(2 * kQApplyThreads / 32, kQApplyBudget / col));
  while (cb > 1 && (cb + kQApplyChunk) * col > smax) --cb;
  return (cb + kQApplyChunk) * col <= smax ? int(cb) : 0;
}

QrLaunch qr_launch(const plan::QrPlan &q, const plan::Tuning &t) {
  QrLaunch l;
  l.threads = plan::qr_threads(t, q.pivoted, kQrcpThreads);
  l.cluster = q.cluster;
  l.wy = q.wy;
  l.apply = q.apply;
  l.tuning = &t;
  return l;
}

int qr_tsqr_chunks(int mw, int nw, size_t eb) {
  const int nc = tsqr_chunks(mw, nw);
  return size_t(nc) * nw * nw * eb <= kTsqrMaxStackBytes ? nc : 0;
}

void qr_tsqr_offsets(QrMat *mats, int count, size_t eb) {
  long long oc = 0, oz = 0;
  for (int i = 0; i < count; ++i) {
    QrMat &q = mats[i];
    q.nc = qr_tsqr_chunks(q.mw, q.nw, eb);
    q.hc = tsqr_chunk_height(q.mw, q.nc);
    q.t1 = oc;
    q.zs = oz;
    oc += (long long)q.nc * q.nw;
    oz += (long long)q.nc * q.nw * q.nw;
  }
}

QrLayout qr_layout(const std::vector<int> &m, const std::vector<int> &n, bool vectors, size_t eb,
                   size_t rb, bool piv, bool tsqr) {
  QrLayout L;
  const size_t cnt = m.size();
  size_t ey = 0, et = 0, e2 = 0, ec = 0, ez = 0;
  L.tsqr = tsqr && !piv && !m.empty();
  for (size_t i = 0; i < cnt; ++i) {
    const size_t mw = size_t(std::max(m[i], n[i])), nw = size_t(std::min(m[i], n[i]));
    ey += mw * nw;
    et += nw;
    e2 += nw * nw;
    if (L.tsqr) {
      const size_t nc = size_t(qr_tsqr_chunks(int(mw), int(nw), eb));
      L.chunks += (long long)nc;
      ec += nc * nw;
      ez += nc * nw * nw;
    }
  }
  WsCursor w;
  L.mats = w.take(cnt * sizeof(QrMat));
  L.escale = w.take(cnt * sizeof(int));
  L.info = w.take(cnt * sizeof(int));
  L.sweeps = w.take(cnt * sizeof(int));
  L.Y = w.take(ey * eb);
  L.tau = w.take(et * eb);
  L.B = w.take(e2 * eb);
  L.S = w.take(et * rb);
  L.U = w.take(vectors ? e2 * eb : 0);
  L.V = w.take(vectors ? e2 * eb : 0);
  L.vn = w.take(2 * et * rb);
  L.perm = w.take(et * sizeof(int));
  L.sel = w.take(cnt * sizeof(int));
  L.nf = w.take(cnt * sizeof(int));
  L.parr = w.take(4 * cnt * sizeof(void *));
  L.iarr = w.take(cnt * sizeof(int));
  L.map = w.take(cnt * sizeof(int));
  L.tau1 = w.take(ec * eb);
  L.Zs = w.take(ez * eb);
  L.X2 = w.take((vectors ? ez : 0) * eb);
  L.M1 = w.take((vectors ? ez : 0) * eb);
  L.tjobs = w.take(size_t(L.chunks) * 2 * sizeof(int));
  L.total = w.used;
  return L;
}

} // namespace bsvd::detail::cuda
