// The fused shared-memory Jacobi SVD kernel: host-side interface.
//
// One kernel solves each matrix completely in shared memory (MAGMA-SVD
// Sec. 9.1, WCYCLE Sec. IV-B): W = A (or A^H when m < n) and V are read
// once, rotated in place for all sweeps, and U, S, V written once.
// Design and measurements: docs/design/fused.md.
#pragma once

#include "../../core/batch.hpp"
#include "../common/device_info.hpp" // max_smem_optin, sm_count, cc_major

#include <cstddef>

#include <cuda_runtime.h>

namespace bsvd::detail::cuda {

// Shared-memory layout and launch geometry of one launch. Built on the host
// by plan_fused(), passed to the kernel by value.
template <class T> struct FusedParams {
  Batch<T> batch; // device-visible arrays (pointers, sizes, lds)
  const int *map = nullptr; // launch slot -> matrix index (null: identity)
  int count = 0; // matrices in this launch
  int mpb = 1; // matrices per block
  int tpm = 32; // threads per matrix (divides 32, or multiple of 32)
  int ngroups = 1; // column-pair groups per matrix (G lanes each)
  int mw_max = 0, nw_max = 0; // largest W = A or A^H (mw >= nw)
  int ldw = 0, ldvw = 0; // leading dimensions of W and V in shared memory
  int slots_max = 2, steps_max = 1; // steps_max: the most steps of a sweep in the launch
  int pair_iters = 1; // ceil(pairs per step / ngroups)
  int half_max = 1; // pair slots per step (slots_max / 2)
  int col_iters = 1; // ceil(nw_max / ngroups)
  int ordering = 0; // bsvd_ordering_t
  // Every ordering but round-robin (which the kernel evaluates in closed
  // form): ord_tab + ord_off[nw] is the packed_pair_table of width nw
  // (ordering.hpp) for each width of the launch; null for round-robin.
  const int *ord_tab = nullptr, *ord_off = nullptr;
  int max_sweeps = 40;
  double tol = 0; // <= 0: the default per matrix (rotation.hpp resolve_tol)
  size_t smem_per_matrix = 0;
  // byte offsets inside one matrix's shared-memory slice
  size_t off_v = 0, off_nrm = 0, off_anc = 0, off_expo = 0, off_rank = 0, off_flag = 0, off_x = 0,
         off_coef = 0, off_state = 0, off_rpq = 0, off_rmode = 0, off_rg = 0, off_rc = 0;
  // The hyperbolic SVD (docs/hsvd.md): nplus[b] the +1 entries of matrix
  // b's signature (device memory, indexed like the batch); null: the SVD.
  const int *nplus = nullptr;
};

// Lanes per column pair (G) and rows per lane held in registers (RPL)
// select the kernel instance.
struct FusedShape {
  int lanes = 32;
  int rows_per_lane = 1;
  bool warp_rot = false; // rotations one lane per pair inside each warp
};

// Launch geometry: one block holds kTargetBlockThreads / tpm matrices when
// a matrix takes fewer threads (tpm < 256); larger matrices get one block
// each with at most kMaxThreadsPerMatrix threads (groups loop over the
// pairs; __launch_bounds__(256, 4): at most 64 registers).
constexpr int kTargetBlockThreads = 256;
constexpr int kMaxThreadsPerMatrix = 256;
// Rows per lane cached in registers during a pair update (more rows are
// re-read from shared memory): powers of two up to this.
constexpr int kMaxRowsPerLane = 8;
// Padding (elements) added to the leading dimension of W and V in shared
// memory to spread the columns over the banks; up to kAlignLdRows rows the
// leading dimensions are rounded up to a multiple of 128 bytes instead
// (bank-conflict-free group-rotated rows).
constexpr int kLdPad = 1;
constexpr int kAlignLdRows = 64;

// Bytes of shared memory one matrix needs (mw >= nw are W's dimensions);
// margin: with the margin fused_fits counts.
size_t fused_smem_bytes(int mw, int nw, bool vectors, size_t elem_bytes, size_t real_bytes,
                        bool margin);

// Bytes of one element and of its real part for precision 's', 'd', 'c', 'z'.
constexpr size_t precision_elem_bytes(char precision) {
  return precision == 's' ? 4 : precision == 'z' ? 16 : 8;
}
constexpr size_t precision_real_bytes(char precision) {
  return precision == 's' || precision == 'c' ? 4 : 8;
}

// Whether an m x n matrix (any shape) fits the fused kernel on a device
// with smem bytes of shared memory per block (fused_fits), or on the
// current device (fits). precision: 's', 'd', 'c', 'z'. It counts two ints
// per column slot more than a launch lays out: the routing's measured
// boundaries (the largest fused size, 118^2 in d with vectors; the fused
// column caps; the QR rule) rest on this answer.
bool fused_fits(char precision, int m, int n, bool vectors, size_t smem);
bool fits(char precision, int m, int n, bool vectors);

// Fills the geometry of P (everything but batch/map/count/tol/max_sweeps/
// ordering, which the caller sets first) and returns the kernel shape, for
// `lanes` lanes per column pair and at most tpm_cap threads per matrix (the
// plan's FusedLaunch).
template <class T> FusedShape plan_fused(FusedParams<T> &P, bool vectors, int lanes, int tpm_cap);

// Launches the kernel on `stream` (errors: the launch's cudaError_t);
// launch_fused_hyp: its hyperbolic instances (P.nplus set).
template <class T>
cudaError_t launch_fused(const FusedParams<T> &P, FusedShape shape, cudaStream_t stream);
template <class T>
cudaError_t launch_fused_hyp(const FusedParams<T> &P, FusedShape shape, cudaStream_t stream);

} // namespace bsvd::detail::cuda
