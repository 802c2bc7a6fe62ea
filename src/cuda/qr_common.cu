// Host side of the QR preprocessing: routing rule and workspace layout.
#include "fused.hpp"
#include "qr.hpp"

#include <algorithm>

namespace bsvd::detail::cuda {

bool qr_route(char precision, int m, int n, bool vectors, int qr) {
  const int mw = std::max(m, n), nw = std::min(m, n);
  if (qr < 0 || nw < 1 || !fits(precision, nw, nw, vectors)) return false;
  if (qr > 0) return true;
  return mw >= kQrAutoRatio * nw && mw >= kQrAutoMinRows && fits(precision, m, n, vectors);
}

QrLayout qr_layout(const std::vector<int> &m, const std::vector<int> &n, bool vectors,
                   size_t eb, size_t rb) {
  QrLayout L;
  const size_t cnt = m.size();
  size_t ey = 0, et = 0, e2 = 0;
  for (size_t i = 0; i < cnt; ++i) {
    const size_t mw = size_t(std::max(m[i], n[i])), nw = size_t(std::min(m[i], n[i]));
    ey += mw * nw;
    et += nw;
    e2 += nw * nw;
  }
  size_t o = 0;
  auto take = [&](size_t bytes) {
    const size_t at = o;
    o += (bytes + 255) & ~size_t(255);
    return at;
  };
  L.mats = take(cnt * sizeof(QrMat));
  L.escale = take(cnt * sizeof(int));
  L.info = take(cnt * sizeof(int));
  L.sweeps = take(cnt * sizeof(int));
  L.Y = take(ey * eb);
  L.tau = take(et * eb);
  L.B = take(e2 * eb);
  L.S = take(et * rb);
  L.U = take(vectors ? e2 * eb : 0);
  L.V = take(vectors ? e2 * eb : 0);
  L.parr = take(4 * cnt * sizeof(void *));
  L.iarr = take(cnt * sizeof(int));
  L.map = take(cnt * sizeof(int));
  L.total = o;
  return L;
}

} // namespace bsvd::detail::cuda
