// The blocked path's workspace layout (host code): where the per-matrix
// records, W, V, the completion scratch, the Gram and rotation buffers,
// the split plan's partial tiles and the cuBLAS pointer arrays lie in the
// caller's workspace. blocked_workspace_bytes (host.cu) sizes the
// workspace by it, the driver (driver.cuh) cuts it by it.
#pragma once

#include "../../core/inner_sweeps.hpp"
#include "../../core/ordering.hpp"
#include "../common/ws_layout.hpp"
#include "blocked.hpp"
#include "params.cuh"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace bsvd::detail::cuda {

// Matrices whose pairs take the Gram path (BSVD_PAIR_GRAM): the ones that
// need G and Q buffers.
inline size_t blocked_gram_count(const std::vector<int> &mode) {
  size_t c = 0;
  for (int x : mode) c += x == BSVD_PAIR_GRAM;
  return c;
}

// The split Gram plan's partial tiles (K x K per pair slot and row segment)
// in the workspace, at most: the plan takes the split plan only for steps
// that fit (plan::gram_plan's max_tiles).
constexpr long kGramSplitMaxTiles = 4096;

// Byte offsets of the workspace's arrays (BlkParams names them), its total,
// and half: the most block pairs a step has in any matrix of the batch (the
// slots per active matrix of every per-pair buffer).
struct BlkLayout {
  size_t mats = 0, state = 0, rot = 0, esw = 0, act = 0, nullf = 0, W = 0, V = 0, X = 0, G = 0,
         Q = 0, pflag = 0, Gp = 0;
  long long gp_tiles = 0; // the split Gram plan's partial tiles (kGramSplitMaxTiles at most)
  size_t gptr = 0, gbase = 0, fin = 0;
  // the sweep loop on the device (loop.cuh): per matrix its flag, sweeps
  // and inner sweep rule, and the loop's sweep counter
  size_t alive = 0, msweeps = 0, rules = 0, counter = 0;
  // the HSVD's breakdown rule, per matrix: a substituted step in this sweep
  // (BlkParams::subst), and the sweeps in a row with one (the device loop's)
  size_t subst = 0, subrun = 0;
  long long gcap = 0; // GEMMs the pointer arrays hold (3 per Gram slot)
  size_t total = 0;
  int half = 1;
};

// ngram: matrices whose pairs take the Gram path (G and Q buffers, K x K
// each: the instance's Gram order, blocked_k_of(nb)). hyperbolic: the
// HSVD's blocks (hsvd_blocks: up to one more than ceil(nw / nb), whatever
// the signature, so that the size needs no signature) and its breakdown
// words.
inline BlkLayout blk_layout(const std::vector<int> &m, const std::vector<int> &n, bool vectors,
                            size_t elem, int nb, size_t ngram, int K, int wr,
                            bool hyperbolic = false) {
  BlkLayout L;
  const size_t cnt = m.size();
  size_t ew = 0, ev = 0, ex = 0, mw_max = 0;
  for (size_t i = 0; i < cnt; ++i) {
    const size_t mw = size_t(std::max(m[i], n[i])), nw = size_t(std::min(m[i], n[i]));
    mw_max = std::max(mw_max, mw);
    ew += mw * nw;
    if (vectors) {
      ev += nw * nw;
      ex += 2 * mw + nw; // completion: x, coef, residuals
    }
    L.half = std::max(L.half, wcycle_pairs(int((nw + nb - 1) / nb) + hyperbolic, wr));
  }
  WsCursor w;
  L.mats = w.take(cnt * sizeof(BlkMat));
  L.state = w.take(cnt * kBsWords * sizeof(int));
  L.rot = w.take(cnt * sizeof(int));
  L.esw = w.take(cnt * sizeof(int));
  L.act = w.take(cnt * sizeof(int));
  L.nullf = w.take(cnt * sizeof(double));
  L.W = w.take(ew * elem);
  L.V = w.take(ev * elem);
  L.X = w.take(ex * elem);
  const size_t slots = ngram * size_t(L.half);
  L.G = w.take(slots * K * K * elem);
  L.Q = w.take(slots * K * K * elem);
  L.pflag = w.take(slots * sizeof(int));
  const long long segs = (long long)((mw_max + kGramSegRows - 1) / kGramSegRows);
  // (the split plan is the narrow instance's only)
  L.gp_tiles = segs >= 2 && K == kBlockedKmax
                   ? std::min<long long>(kGramSplitMaxTiles, (long long)slots * segs)
                   : 0;
  L.Gp = w.take(size_t(L.gp_tiles) * K * K * elem);
  L.gcap = 3 * (long long)slots;
  L.gptr = w.take(3 * size_t(L.gcap) * sizeof(void *));
  L.gbase = w.take(cnt * sizeof(int));
  L.fin = w.take(3 * cnt * sizeof(int));
  L.alive = w.take(cnt * sizeof(int));
  L.msweeps = w.take(cnt * sizeof(int));
  L.rules = w.take(cnt * sizeof(InnerSweepRule));
  L.counter = w.take(2 * sizeof(int));
  L.subst = w.take(hyperbolic ? cnt * sizeof(int) : 0);
  L.subrun = w.take(hyperbolic ? cnt * sizeof(int) : 0);
  L.total = w.used;
  return L;
}

} // namespace bsvd::detail::cuda
