// The launch shapes of the batched building blocks of the bidiagonal route
// (bsvd.h, "Batched BLAS and LAPACK"; src/cuda/bidiag/): pure functions of
// the sizes, so the unit tests see what a GPU would be given. One thread
// block per product / matrix in this first regime; the tuning of the paper
// (MAGMA-BLAS §4: tiles, several threads per column of op T / C, padded
// shared memory) is a later step and will replace these rules with tables.
#pragma once

#include <bsvd/device/blas.cuh>

#include <cstddef>

namespace bsvd::detail::plan {

// Threads of a block: the output length (GEMV: one output entry per
// thread, blas.cuh) rounded up to a warp, at least one warp, at most
// kBidiagMaxThreads -- beyond that a thread takes several entries.
constexpr int kBidiagMaxThreads = 256;
int bidiag_threads(int len);

// The batched GEMV's lanes per output for op T / C (blas.cuh gemv's
// lanes; op N: 1, a thread per row): a warp per column once it has 32
// rows -- consecutive lanes read consecutive rows, coalesced, where one
// thread per column read 32 columns' lines at a time (MAGMA-BLAS §4.1) --
// the next power of two for shorter ones. Both backends take it per matrix,
// so a matrix's bits do not depend on the rest of its batch.
constexpr int gemv_lanes(bool op_n, int m) { return op_n ? 1 : bsvd::device::split_lanes(m); }

// GEBRD on chip: the bytes of dynamic shared memory one block needs to hold
// an m x n matrix (leading dimension m rounded up to odd: the op C GEMV's
// column per thread without bank conflicts), the work vector of max(m, n)
// entries and the team's 32 reduction slots, for entries of elem bytes.
size_t gebrd_smem_bytes(int m, int n, size_t elem);

// Its leading dimension in shared memory.
int gebrd_smem_ld(int m);

// The values-only route (Route::kBidiag): gebrd_smem_bytes, then tauq and
// taup (k = min(m, n) entries each), the bidiagonal's d and e and
// bisection's 2k scaled entries (reals of relem bytes).
size_t bidiag_values_smem_bytes(int m, int n, size_t elem, size_t relem);

// GEBRD beyond shared memory (the blocked regime, labrd.cuh): panels of
// kGebrdBlock columns over global memory (LAPACK's and MAGMA's default
// block of xGEBRD) until the trailing matrix fits the on-chip kernel.
constexpr int kGebrdBlock = 32;

// The panels of nb columns an m x n matrix of elem-byte entries needs
// before its trailing matrix fits `limit` bytes of shared memory
// (gebrd_smem_bytes, plus `extra` bytes per min(m, n) entry of the trailing
// matrix for a caller's vectors): 0 when it fits as it is, -1 when no count
// does (a tall or wide matrix whose last nb-column panel is still too
// large; panels nb < min(m, n) always).
int gebrd_panels(int m, int n, int nb, size_t elem, size_t extra, size_t limit);

} // namespace bsvd::detail::plan
