// Chunking of the tall-skinny QR (TSQR) that the GPU's QR path uses for
// tall matrices of few columns, and that its CPU twin (src/cpu/qr.cpp,
// tsqr_factor) repeats. Host code, shared by both so that they cut the
// rows alike.
//
// W (mw x nw) is cut into nc chunks of hc = ceil(mw / nc) rows (the last
// one shorter), nc = ceil(mw / kTsqrRows): chunk c holds rows
// [c hc, min(mw, (c + 1) hc)). Each chunk is factored by Householder QR;
// their R factors, stacked (nc nw x nw), are factored once more; R is the
// second factorization's. A chunk holds at most kTsqrRows rows, so a GPU
// thread block factors it in shared memory (d, 32 columns: 64 KB).
#pragma once

namespace bsvd::detail {

constexpr int kTsqrRows = 256; // rows per chunk, at most
constexpr int kTsqrMaxCols = 32; // columns of the matrices TSQR takes, at most

// Chunks of an mw x nw working matrix (mw >= nw); 0 when TSQR does not
// apply: fewer than two chunks, too many columns, or a last chunk shorter
// than nw (every chunk's factorization must see a full R).
inline int tsqr_chunks(int mw, int nw) {
  if (nw < 1 || nw > kTsqrMaxCols || mw <= kTsqrRows) return 0;
  const int nc = (mw + kTsqrRows - 1) / kTsqrRows;
  const int hc = (mw + nc - 1) / nc;
  return mw - (nc - 1) * hc >= nw ? nc : 0;
}
// Rows per chunk (the last one: the rest).
inline int tsqr_chunk_height(int mw, int nc) { return (mw + nc - 1) / nc; }

} // namespace bsvd::detail
