// One matrix of a gels or gelsd batch (bsvd.h), as both backends run it
// (src/cpu/blas.cpp on serial_team, src/cuda/bidiag/gels.cu on a block
// team): the device API's gels, then the factor's diagonal checked for Inf
// and NaN -- the one place a non-finite A shows (every reflector mixes
// its column or row into the rest), which info reports instead of leaving
// a NaN solution unexplained.
#pragma once

#include "blas_batch.hpp"

#include <bsvd/bsvd.h>
#include <bsvd/device/gels.cuh>

namespace bsvd::detail {

// Matrix i of b (W: the device API's element type of T). work:
// gels_work(m, n, nrhs) entries; stage: null or trsv_work(kTrsvBlock)
// entries of shared memory. Returns info, the same on every member.
template <class T, class W, class Team>
BSVD_HD int gels_one(const GelsBatch<T> &b, int i, W *work, W *stage, const Team &team) {
  using R = real_of_t<T>;
  const int m = b.dims.rows(i), n = b.dims.cols(i), k = m < n ? m : n;
  const bsvd::device::op t = b.trans == BSVD_OP_N ? bsvd::device::op::N : bsvd::device::op::C;
  W *A = reinterpret_cast<W *>(b.A.ptr(i));
  const int lda = b.A.ldm(i);
  const int info = bsvd::device::gels(t, m, n, b.rhs(i), A, lda, reinterpret_cast<W *>(b.B.ptr(i)),
                                      b.B.ldm(i), work, team, stage);
  if (info != 0) return info;
  R bad = R(0);
  for (int j = team.rank(); j < k; j += team.size())
    if (!bsvd::device::detail::finite(A[j + long(j) * lda])) bad = R(1);
  return team.max(bad) > R(0) ? BSVD_INFO_NONFINITE : 0;
}

// Matrix i of a gelsd batch after its SVD (bsvd.h, gelsd): the cut
// rcond s_1 (rcond < 0: the precision's epsilon), then svd_solve; a
// non-finite matrix gets NaN in X's rows and rank 0. work: min(m, n)
// entries. Returns the rank, the same on every member.
template <class T, class W, class Team>
BSVD_HD int gelsd_one(const GelsdBatch<T> &b, int i, W *work, const Team &team) {
  using R = real_of_t<T>;
  const int m = b.dims.rows(i), n = b.dims.cols(i), k = m < n ? m : n, nrhs = b.nrhs;
  W *B = reinterpret_cast<W *>(b.B.ptr(i));
  const int ldb = b.B.ldm(i);
  if (b.info[i] == BSVD_INFO_NONFINITE) {
    bsvd::device::detail::fill_rows(0, n, nrhs, bsvd::device::detail::nan_of<W>(), B, ldb, team);
    return 0;
  }
  const R *S = b.S.ptr(i);
  const R eps = sizeof(R) == sizeof(float) ? R(0x1p-23) : R(0x1p-52);
  const R cut = (b.rcond < R(0) ? eps : b.rcond) * (k > 0 ? S[0] : R(0));
  return bsvd::device::svd_solve(m, n, nrhs, reinterpret_cast<const W *>(b.U.ptr(i)), m > 1 ? m : 1,
                                 S, reinterpret_cast<const W *>(b.V.ptr(i)), n > 1 ? n : 1, cut, B,
                                 ldb, work, team);
}

} // namespace bsvd::detail
