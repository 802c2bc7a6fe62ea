// The blocked GPU path: one-sided block Jacobi for matrices that do not fit
// the fused shared-memory kernel (MAGMA-SVD Sec. 5-8, WCYCLE Sec. IV-C,
// HBJ Sec. 4). Host-side interface; the kernels and the driver are beside
// it, one file per stage (driver.cuh includes them all).
//
// Per matrix of the batch (W = A, or A^H when m < n, mw >= nw, copied to
// the workspace with the fused kernel's load step; V = I), the columns are
// cut into blocks of nb. Each sweep runs the round-robin steps over the
// blocks; each step is three launches over every (active matrix, block
// pair) of the step:
//   gram:   G = [W_i W_j]^H [W_i W_j]                (k x k, k <= 2 nb)
//   evd:    Q = eigenvectors of G by the parallel Hermitian Jacobi solver in
//           shared memory (eig_sweeps sweeps; 1 = the inexact mode), one
//           Newton-Schulz re-orthogonalization step, columns ordered by
//           descending eigenvalue (nb >= 8); a pair whose G needed no
//           rotation is masked off the update;
//   update: [W_i W_j] <- [W_i W_j] Q, [V_i V_j] <- [V_i V_j] Q, every row
//           read once and its k outputs kept in registers.
// A matrix whose sweep rotated nothing has converged and leaves the active
// list (the mask of MAGMA-SVD Sec. 8); the batch ends when the list is
// empty or the sweep limit is reached. The fused kernel's finish step
// (matrix_io.cuh; null columns completed in rounds, complete_rounds) writes
// U, S, V, info and sweeps: for a matrix that converges while others still
// iterate, at once on a side stream (beside the iteration's tail); for the
// rest after the iteration.
//
// Pairs in shared memory (WCYCLE Algorithm 2, lines 8-11): a matrix whose
// pair [W_i W_j] fits in shared memory can instead take one launch per step
// (blk_pair_kernel) that reads the pair once, finds Q there -- by the Gram
// matrix and the same eigensolver (EVD_SM), or by one-sided Jacobi on the
// pair itself (SVD_SM, WCYCLE Observation 1) -- and writes it once;
// the plan chooses per matrix (plan::blocked_pair_mode), so one batch mixes
// the three.
//
// Every step is the parallel form of the CPU twin (src/cpu/jacobi_blocked.cpp
// with evd.cpp): the same block and inner orderings, rotation formula, test,
// re-orthogonalization, sort and stopping rule.
//
// The hyperbolic SVD (signatures given; docs/hsvd.md): the blocks lie
// within each side of the signature's boundary (hsvd_blocks, params.cuh),
// every pair takes the shared-memory one-sided solver with hyperbolic steps
// across the boundary (pair_hyp.cuh), a per-matrix breakdown rule ends a
// matrix whose sweeps keep substituting, and the finish sorts each side on
// its own; the twin is src/cpu/jacobi_hyperbolic_blocked.cpp.
#pragma once

#include "../../core/batch.hpp"
#include "../../plan/plan.hpp"

#include <cstddef>
#include <vector>

#include <cuda_runtime.h>

namespace bsvd::detail::cuda {

// Order K of the Gram matrices of the compiled instances: the narrow one
// (K = 32, nb <= 16: every kernel and plan) and, for s, d and c, the wide
// one (K = 64, 16 < nb <= 32: the Gram path only, with the block
// eigensolver of 256 threads; the pair kernels and the warp eigensolver
// hold K = 32). z has the narrow instance only (a row of 64 complex
// doubles does not fit the update kernel's registers).
constexpr int kBlockedKmax = 32;
constexpr int kBlockedKwide = 64;
// Order of the Gram matrices for block width nb.
constexpr int blocked_k_of(int nb) { return nb > kBlockedKmax / 2 ? kBlockedKwide : kBlockedKmax; }
// Whether precision ('s', 'd', 'c', 'z') has the wide instance.
constexpr bool blocked_has_wide(char precision) { return precision != 'z'; }

// Shared memory of the pair kernels (EVD_SM, SVD_SM; the narrow instance)
// for a pair of mw rows. The planner takes a pair solver for a matrix only
// where this fits (facts.hpp, plan::blocked_pair_mode).
size_t blocked_pair_smem_bytes(char precision, int mw);

// Shared memory per block of the eigensolver kernels of instance k
// (kBlockedKmax or kBlockedKwide) for the plan of `threads` threads per Gram
// matrix (32: the warp plan, four Gram matrices a block; 128, 256): sizes
// fixed at compile time (z's warp plan 140 KB, d's wide block plan 105 KB),
// which a GPU with less per-block shared memory (99 KiB on compute
// capability 8.6, 8.9 and 12.0) cannot launch. The planner checks them
// (CudaFacts: blocked_max_nb, evd_warp_fits).
size_t blocked_evd_smem_bytes(char precision, int k, int threads);

// Workspace bytes for the blocked matrices of sizes m[i] x n[i] with pair
// solvers mode[i] and the block ordering of Config::wcycle_blocks
// (hyperbolic: for the HSVD, run_blocked with signatures).
size_t blocked_workspace_bytes(const std::vector<int> &m, const std::vector<int> &n,
                               const std::vector<int> &mode, bool vectors, size_t elem_bytes,
                               int nb, int wcycle_blocks, bool hyperbolic = false);

// Solves matrices idx[i] (sizes m[i] x n[i], all non-empty) of kb, whose
// pointers and size arrays are device-visible, with the plan's settings bp
// (block width, pair solvers, the Gram stage by cuBLAS) and the call's
// settings and tuning (p.cfg, p.tuning: the per-sweep rule plan_sweep).
// ws: blocked_workspace_bytes bytes of device memory, 256-byte aligned.
// Enqueued on stream; returns after the last launch is enqueued (it
// synchronizes once per sweep to read the matrices' rotation counts).
// hnplus (host memory, indexed like kb; kb.nplus the same values in device
// memory): the hyperbolic SVD (docs/hsvd.md), m >= n, every mode
// BSVD_PAIR_SVD_SM, bp.wr = bp.we = 1, ws sized with hyperbolic; null: the
// SVD.
template <class T>
cudaError_t run_blocked(const Batch<T> &kb, const std::vector<int> &idx, const std::vector<int> &m,
                        const std::vector<int> &n, const plan::BlockedPlan &bp, const plan::Plan &p,
                        cudaStream_t stream, unsigned char *ws, const int *hnplus = nullptr);

// The Gram stage by cuBLAS (plan::gram_cublas): whether a
// handle can be had on the current device (created once per thread and
// device, kept for the process), and C_e = A_e^H B_e for the `count` pointer
// triples (nb x nb, inner dimension mw, lda = ldb = mw, C's leading
// dimension ldc) on stream. precision: 's', 'd', 'c', 'z'.
bool gram_cublas_available();
cudaError_t gram_gemm_batched(char precision, int nb, int mw, int ldc, const void *const *A,
                              const void *const *B, void *const *C, int count, cudaStream_t stream);

// Stage times of the last run_blocked call on this thread, collected with
// CUDA events when profiling is on (the override Overrides::profile,
// BSVD_PROFILE=1). Milliseconds of GPU time per stage.
struct BlockedProfile {
  // finish: the launch after the iteration (the matrices that converged
  // earlier finish on a side stream, beside the other stages: not counted)
  double load = 0, gram = 0, evd = 0, update = 0, finish = 0;
  double pair_evd = 0, pair_svd = 0; // the shared-memory pair kernels
  double total = 0; // wall time of run_blocked, host clock
  int sweeps = 0; // sweeps of the slowest matrix
  long launches = 0; // kernel launches
  // Per launch: a step whose Gram-path matrices ran as two groups (split_sweeps
  // below; never with the stage timer) counts twice.
  long evd_steps[3] = {0, 0,
                       0}; // Gram-path steps whose eigensolver ran 32 / 128 / 256 threads per pair
  long evd_lean_steps = 0; // of evd_steps[0]: those that ran the lean warp kernel (d)
  long gram_cublas = 0; // cuBLAS batched-GEMM calls of the Gram stage (0: the own kernel only)
  long gram_steps[4] = {
      0, 0, 0, 0}; // steps whose own Gram kernel ran the tile-2 / tile-4 / split / tensor-core plan
  int split_sweeps = 0; // sweeps whose Gram-path matrices ran as two groups on two streams
};
BlockedProfile blocked_last_profile();

} // namespace bsvd::detail::cuda
