// Host side of the QR preprocessing (qr.hpp): the routing rule, the
// switches, the thread counts, TSQR's chunking and the workspace layout.
#include "../fused/fused.hpp"
#include "qr.hpp"
#include "../common/ws_layout.hpp"

#include "../../core/tsqr.hpp"

#include <algorithm>
#include <cstdlib>

namespace bsvd::detail::cuda {

bool qr_route(char precision, int m, int n, bool vectors, int qr) {
  const int mw = std::max(m, n), nw = std::min(m, n);
  if (qr < 0 || nw < 1 || !fits(precision, nw, nw, vectors)) return false;
  if (qr > 0) return true;
  if (mw < kQrAutoRatio * nw || mw < kQrAutoMinRows) return false;
  if (fits(precision, m, n, vectors)) return true;
  const size_t eb = precision_elem_bytes(precision);
  if (qr_wy_enabled())
    return nw <= kQrAutoMaxCols &&
           (size_t(mw) * nw * eb <= kQrAutoMaxBytes || (qr_tsqr_enabled() && qr_tsqr_chunks(mw, nw, eb) >= 2));
  return nw <= kQrAutoMaxColsGrid && qr_apply_cols(size_t(mw) * eb) >= kQrAutoApplyCols;
}

bool qr_wy_enabled() {
  const char *e = std::getenv("BSVD_QR_WY");
  return !(e && e[0] == '0');
}

int qr_apply_cols(size_t col) {
  if (col == 0) return 0;
  const size_t smax = size_t(max_smem_optin());
  size_t cb = std::max<size_t>(1, std::min<size_t>(2 * kQApplyThreads / 32, kQApplyBudget / col));
  while (cb > 1 && (cb + kQApplyChunk) * col > smax) --cb;
  return (cb + kQApplyChunk) * col <= smax ? int(cb) : 0;
}

int qr_threads(bool pivoted) {
  if (const char *e = std::getenv("BSVD_QR_THREADS")) {
    const int v = std::atoi(e);
    if (v == 256 || v == 512 || v == 1024) return v;
  }
  return pivoted ? kQrcpThreads : 256;
}

bool qrcp_route(int precondition) { return precondition > 0; }

bool qr_tsqr_enabled() {
  const char *e = std::getenv("BSVD_QR_TSQR");
  return !(e && e[0] == '0') && qr_wy_enabled(); // (its Q is applied in WY form)
}

int qr_tsqr_chunks(int mw, int nw, size_t eb) {
  const int nc = tsqr_chunks(mw, nw);
  return size_t(nc) * nw * nw * eb <= kTsqrMaxStackBytes ? nc : 0;
}

bool qr_tsqr_call(const std::vector<int> &m, const std::vector<int> &n, bool piv, size_t eb) {
  if (piv || m.empty() || !qr_tsqr_enabled()) return false;
  for (size_t i = 0; i < m.size(); ++i)
    if (qr_tsqr_chunks(std::max(m[i], n[i]), std::min(m[i], n[i]), eb) < 2) return false;
  return true;
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

QrLayout qr_layout(const std::vector<int> &m, const std::vector<int> &n, bool vectors,
                   size_t eb, size_t rb, bool piv) {
  QrLayout L;
  const size_t cnt = m.size();
  size_t ey = 0, et = 0, e2 = 0, ec = 0, ez = 0;
  L.tsqr = qr_tsqr_call(m, n, piv, eb);
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
