// One matrix of a gesvdx batch (bsvd.h) after its bidiagonalization, as
// both backends run it (src/cpu/blas.cpp on serial_team, the cuda
// kernel of src/cuda/bidiag/gesvdx.cu on a block team): the range's
// indices, the triplets (the device API's gesvdx_bidiag), ns and info.
#pragma once

#include "blas_batch.hpp"

#include <bsvd/bsvd.h>
#include <bsvd/device/gesvdx.cuh>

namespace bsvd::detail {

// How many values range asks of a matrix of k = min(m, n): the room its
// S, U and V must have (k for all and value; iu - il + 1 for index).
template <class T> BSVD_HD int gesvdx_room(const GesvdxBatch<T> &b, int k) {
  return b.range == BSVD_RANGE_INDEX ? (k > 0 ? b.iu - b.il + 1 : 0) : k;
}

// Matrix i of b, reduced (W: the device API's element type of T; Ar, lda:
// the reduced copy; d, e, tauq, taup its bidiagonalization). rwork:
// gesvdx_rwork(k) reals, work: gesvdx_work(m, n, room) entries. The team's
// first member writes ns and info.
template <class T, class W, class Team>
BSVD_HD void gesvdx_one(const GesvdxBatch<T> &b, int i, const W *Ar, int lda, const real_of_t<T> *d,
                        const real_of_t<T> *e, const W *tauq, const W *taup, real_of_t<T> *rwork,
                        W *work, const Team &team) {
  using R = real_of_t<T>;
  const int m = b.dims.rows(i), n = b.dims.cols(i), k = m < n ? m : n;
  int il = 0, ns = k, st = 0;
  if (b.range == BSVD_RANGE_INDEX) {
    il = b.il, ns = k > 0 ? b.iu - b.il + 1 : 0;
  } else if (b.range == BSVD_RANGE_VALUE) {
    // counted by the first member, handed to the others by two reductions
    // (exact: k < 2^24)
    R c = R(-1), first = R(-1);
    if (team.rank() == 0) {
      c = R(bsvd::device::bd_value_range(k, d, e, b.vl, b.vu, &il, rwork));
      first = R(il);
    }
    c = team.max(c);
    il = int(team.max(first)), ns = int(c);
    if (ns < 0) st = bsvd::device::kInfoNonFinite, ns = 0;
  }
  if (ns > 0) {
    W *U = b.vectors ? reinterpret_cast<W *>(b.U.ptr(i)) : nullptr;
    W *V = b.vectors ? reinterpret_cast<W *>(b.V.ptr(i)) : nullptr;
    st = bsvd::device::gesvdx_bidiag(m, n, Ar, lda, d, e, tauq, taup, il, il + ns - 1, b.S.ptr(i),
                                     U, b.vectors ? b.U.ldm(i) : 1, V, b.vectors ? b.V.ldm(i) : 1,
                                     rwork, work, team);
  }
  if (team.rank() == 0) b.ns[i] = ns, b.info[i] = st;
}

} // namespace bsvd::detail
