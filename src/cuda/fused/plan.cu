// Host side of the fused kernel (fused.hpp): shared-memory layout, launch
// geometry and the fits() rule.
#include "fused.hpp"

#include <algorithm>
#include <complex>

namespace bsvd::detail::cuda {

namespace {

size_t align16(size_t x) { return (x + 15) & ~size_t(15); }

struct Layout {
  size_t v, nrm, anc, expo, rank, flag, x, coef, rpq, rmode, rg, rc, state, total;
};

// margin: two ints per column slot more than a launch needs, which fits()
// counts (see fused_fits).
Layout layout(int mw, int nw, int ldw, int ldvw, bool vectors, size_t eb, size_t rb, bool margin) {
  const int slots = std::max(2, nw + (nw & 1));
  Layout L{};
  size_t o = align16(size_t(ldw) * nw * eb);
  L.v = o;
  if (vectors) o = align16(o + size_t(ldvw) * nw * eb);
  L.nrm = o;
  o = align16(o + size_t(nw) * rb);
  L.anc = o;
  o = align16(o + size_t(nw) * rb);
  L.expo = o;
  o = align16(o + size_t(nw) * sizeof(int));
  if (margin) o = align16(o + 2 * size_t(slots) * sizeof(int));
  L.rank = o;
  o = align16(o + size_t(nw) * sizeof(int));
  L.flag = o;
  if (vectors) o = align16(o + size_t(nw) * sizeof(int));
  L.x = o;
  if (vectors) o = align16(o + size_t(mw) * eb);
  L.coef = o;
  if (vectors) o = align16(o + size_t(nw) * eb);
  const size_t half = size_t(slots) / 2;
  L.rpq = o;
  o = align16(o + half * sizeof(int));
  L.rmode = o;
  o = align16(o + half * sizeof(int));
  L.rg = o;
  o = align16(o + half * eb);
  L.rc = o;
  o = align16(o + half * rb);
  L.state = o; // 8 ints, the amax word, tol
  o = align16(o + 8 * sizeof(int) + 2 * sizeof(unsigned long long));
  L.total = o;
  return L;
}

} // namespace

size_t fused_smem_bytes(int mw, int nw, bool vectors, size_t eb, size_t rb, bool margin) {
  return layout(mw, nw, mw + kLdPad, nw + kLdPad, vectors, eb, rb, margin).total;
}

bool fused_fits(char precision, int m, int n, bool vectors, size_t smem) {
  const int mw = std::max(m, n), nw = std::min(m, n);
  return fused_smem_bytes(mw, nw, vectors, precision_elem_bytes(precision),
                          precision_real_bytes(precision), true) <= smem;
}

bool fits(char precision, int m, int n, bool vectors) {
  return fused_fits(precision, m, n, vectors, size_t(max_smem_optin()));
}

template <class T> FusedShape plan_fused(FusedParams<T> &P, bool vectors, int G, int tpm_cap) {
  using R = real_of_t<T>;
  const size_t eb = sizeof(T), rb = sizeof(R);
  const int mw = std::max(P.mw_max, 1), nw = std::max(P.nw_max, 1);
  FusedShape shape;
  shape.lanes = G;
  const int need = (mw + G - 1) / G;
  int rpl = 1;
  while (rpl < need && rpl < kMaxRowsPerLane) rpl *= 2;
  shape.rows_per_lane = rpl;

  P.slots_max = std::max(2, nw + (nw & 1));
  // (a table ordering's steps: the caller's, from its tables)
  if (!P.ord_off) P.steps_max = P.slots_max - 1;
  const int half = P.slots_max / 2;
  P.ngroups = std::max(1, std::min(half, tpm_cap / G));
  int tpm = P.ngroups * G;
  if (tpm < 32) {
    int ng = 1;
    while (ng < P.ngroups) ng *= 2;
    tpm = ng * G; // a power of two <= 32: whole matrices per warp
  } else {
    tpm = (tpm + 31) / 32 * 32;
  }
  P.pair_iters = (half + P.ngroups - 1) / P.ngroups;
  P.col_iters = (nw + P.ngroups - 1) / P.ngroups;
  // Several pair iterations per group: the warp computes its rotations one
  // lane per pair (one instruction stream per warp and step); one
  // iteration: each group computes its own (columns stay in registers).
  shape.warp_rot = P.pair_iters >= 2;
  // Leading dimensions: a multiple of 128 bytes for the small matrices
  // (with the kernel's group-rotated row blocks the groups of one
  // shared-memory wavefront then read disjoint banks), else +kLdPad. Up to
  // 64 rows the rounded layout stays far below the opt-in limit, so fits()
  // (which counts +kLdPad) still holds.
  // (Only when a wavefront's L / G groups find as many row blocks to
  // rotate through, RPL >= L / G; otherwise the odd padding spreads better.)
  const int wave = int(128 / eb); // elements per 128-byte wavefront
  const bool align = G >= wave || rpl * G >= wave;
  const auto ld_of = [&](int rows) {
    return align && rows <= kAlignLdRows ? (rows + wave - 1) / wave * wave : rows + kLdPad;
  };
  P.ldw = ld_of(mw);
  P.ldvw = ld_of(nw);
  const Layout L = layout(mw, nw, P.ldw, P.ldvw, vectors, eb, rb, false);
  P.off_v = L.v;
  P.off_nrm = L.nrm;
  P.off_anc = L.anc;
  P.off_expo = L.expo;
  P.off_rank = L.rank;
  P.off_flag = L.flag;
  P.off_x = L.x;
  P.off_coef = L.coef;
  P.off_state = L.state;
  P.off_rpq = L.rpq;
  P.off_rmode = L.rmode;
  P.off_rg = L.rg;
  P.off_rc = L.rc;
  P.half_max = half;
  P.smem_per_matrix = L.total;

  const size_t optin = size_t(max_smem_optin());
  int mpb_min = tpm < 32 ? 32 / tpm : 1;
  if (size_t(mpb_min) * L.total > optin) { // whole warp for one matrix
    tpm = 32;
    mpb_min = 1;
  }
  int mpb_max = std::max(1, kTargetBlockThreads / tpm);
  mpb_max = int(std::min<long>(mpb_max, std::max<long>(optin / L.total, 1)));
  // Keep at least two blocks per multiprocessor when the batch allows.
  const long per_block = (P.count + 2L * sm_count() - 1) / (2L * sm_count());
  mpb_max = int(std::min<long>(mpb_max, std::max<long>(per_block, 1)));
  if (tpm < 32) mpb_max = std::max(mpb_min, mpb_max / mpb_min * mpb_min);
  // Matrices per block: as many as kTargetBlockThreads allows (the fewest
  // that reach the same residency are slower: docs/design/fused.md).
  const int mpb = mpb_max;
  P.mpb = std::max(mpb, 1);
  P.tpm = tpm;
  return shape;
}

template FusedShape plan_fused<float>(FusedParams<float> &, bool, int, int);
template FusedShape plan_fused<double>(FusedParams<double> &, bool, int, int);
template FusedShape plan_fused<std::complex<float>>(FusedParams<std::complex<float>> &, bool, int,
                                                    int);
template FusedShape plan_fused<std::complex<double>>(FusedParams<std::complex<double>> &, bool, int,
                                                     int);

} // namespace bsvd::detail::cuda
