// QR preprocessing on the GPU for tall and wide matrices (MAGMA-SVD Sec.
// 9.2): W = A (A^H when m < n, mw x nw, mw >= nw) is factored W = Q R by
// Householder reflections (one thread block per matrix), the nw x nw
// matrices B = R (tall) or R^H (wide) are solved by the fused kernel, and
// the side that carries Q is formed by applying the reflections:
//   tall:  A = (Q U_B) S V_B^H          U = Q [U_B; 0],  V = V_B
//   wide:  A = U_B S (Q V_B)^H          U = U_B,         V = Q [V_B; 0]
// Values only: S of B, no reflections applied. The CPU twin of the
// factorization and of applying Q is src/cpu/qr.cpp (same conventions:
// LAPACK xGEQR2).
//
// The operation (op.hpp, QrOp::run) does: qr_factor (load with the checks and
// power-of-two prescaling of the other paths, factor, write B), the fused
// kernel on the B batch (its own workspace batch with pointer arrays),
// qr_finish (S scaled back, info, sweeps, U and V). All on one stream, no
// host synchronization.
//
// Files: op.hpp / op.cu (the operation), host.cu (layout), launch.cuh (qr_factor, qr_finish),
// params.cuh, reflector.cuh, householder.cuh (one block per matrix),
// tsqr.cuh, qrcp.cuh (clusters), wy.cuh, apply.cuh, finish.cuh.
// Design and measurements: docs/design/qr.md.
#pragma once

#include "../../core/batch.hpp"
#include "../../plan/plan.hpp"

#include <cstddef>
#include <vector>

#include <cuda_runtime.h>

namespace bsvd::detail::cuda {

// Q is applied by a grid of blocks of kQApplyThreads (qr_apply_q_kernel),
// each holding a chunk of X's columns (up to two per warp, within
// kQApplyBudget bytes) beside kQApplyChunk staged reflectors.
constexpr int kQApplyThreads = 512;
constexpr int kQApplyChunk = 8;
constexpr size_t kQApplyBudget = 64 * 1024;
// X's columns per block of qr_apply_q_kernel for columns of col_bytes with
// smem bytes of shared memory per block; 0 when one column and the staged
// reflectors do not fit (the finish kernel then forms X itself).
int qr_apply_cols(size_t col_bytes, size_t smem);

// Which matrices take the QR front end, and whether a call's blocked-path
// matrices are preconditioned, are the planner's rules (src/plan/plan.cpp:
// qr_route, auto_precondition; docs/design/qr.md, qrcp.md). The pivoted
// factorization and R^H's solve by the blocked path are described at
// qr_factor_kernel (householder.cuh) and in src/cpu/solve_one.cpp (its twin).

// Blocks per cluster of the throughput plan's pivoted factorization of an
// mw x nw matrix (qrcp_cluster_size) on a GPU of compute capability cc_major
// with smem bytes of shared memory per block; 0 when no cluster holds it or
// the GPU has no clusters (compute capability below 9.0): the one-block
// kernel then factors it from global memory.
template <class T> int qrcp_cluster_fit(int mw, int nw, size_t smem, int cc_major);

// One QR matrix of the launch: its batch index, sizes, offsets (elements)
// of its regions in the workspace; piv: factored with column pivoting and
// B = R^H (the preconditioning), its partial norms at vn + 2 tau and its
// pivots at perm + tau.
struct QrMat {
  int b, m, n, mw, nw;
  long long y, tau, B, S, U, V;
  int piv = 0;
  // TSQR (QrLayout::tsqr; nc = 0: not this matrix): nc chunks of hc rows;
  // element offsets of its chunks' tau (t1, nc nw, in QrLayout's tau1) and
  // of its nc nw x nw blocks (zs) in the regions Zs (the stacked R factors,
  // factored in place), X2 (the second level's Q_2 [Z; 0]) and M1 (the
  // chunks' WY matrices M_c). The second level's tau is the matrix's own
  // (tau), which the one-level factorization would hold.
  int nc = 0, hc = 0;
  long long t1 = 0, zs = 0;
};

// Workspace layout of the QR operation (op.hpp) for matrices of sizes
// m[i] x n[i].
struct QrLayout {
  size_t mats = 0, escale = 0, info = 0, sweeps = 0, Y = 0, tau = 0, B = 0, S = 0, U = 0, V = 0;
  size_t vn = 0, perm = 0, sel = 0, nf = 0;
  size_t parr = 0, iarr = 0, map = 0, total = 0;
  // TSQR's regions (tsqr: the call takes it; chunks: its chunk jobs)
  size_t tau1 = 0, Zs = 0, X2 = 0, M1 = 0, tjobs = 0;
  bool tsqr = false;
  long long chunks = 0;
};
// piv: the pivoted factorization (the preconditioning); tsqr: the call's
// factorization by TSQR (plan::QrPlan::tsqr; never with piv).
QrLayout qr_layout(const std::vector<int> &m, const std::vector<int> &n, bool vectors,
                   size_t elem_bytes, size_t real_bytes, bool piv = false, bool tsqr = false);

// TSQR (src/core/tsqr.hpp) for the unpivoted factorization: the chunks of
// an mw x nw working matrix (0: not taken; the planner takes TSQR for a
// call when every matrix has two or more). The chunks are factored in
// shared memory by one block each (qr_tsqr_factor_kernel), the stacked R
// factors once more, and Q is applied in compact WY form chunk by chunk
// (docs/design/qr.md). elem_bytes: the precision's; the stacked R factors
// (nc nw x nw) must fit one block's shared memory within kTsqrMaxStackBytes.
constexpr size_t kTsqrMaxStackBytes = 96 * 1024;
int qr_tsqr_chunks(int mw, int nw, size_t elem_bytes);
// Sets the TSQR fields of mats[0, count) (nc, hc and the offsets into
// QrLayout's TSQR regions, in qr_layout's order) for a call that takes it.
void qr_tsqr_offsets(struct QrMat *mats, int count, size_t elem_bytes);

// Threads per matrix of the one-block QR kernels: 256 for the tall / wide
// QR path; kQrcpThreads for the pivoted factorization of the
// preconditioning, whose matrices are square and large (the columns'
// reflector work spread over more warps), and per block of its cluster
// kernel's latency plan (which repeats the one-block kernel's reductions at
// this count). The throughput plan's blocks have kQrcpThroughputThreads;
// its bits are the one-block kernel's at that count.
constexpr int kQrcpThreads = 1024;
constexpr int kQrcpThroughputThreads = 256;

// What qr_factor and qr_finish take from the plan (plan::QrPlan and the
// call's tuning): the one-block kernels' threads per matrix (256, 512 or
// 1024) and the switches of the factorization and of Q's application.
struct QrLaunch {
  int threads = 256;
  bool cluster = true; // the pivoted factorization on clusters where they fit
  bool wy = true; // the unpivoted path's Q in compact WY form
  bool apply = true; // Q applied by a grid of blocks (else in the finish kernel)
  const plan::Tuning *tuning = nullptr; // the cluster plans' rule (qrcp_throughput)
};
// The launch settings of a QR group: its threads (the override, or the
// default of its kind) and switches.
QrLaunch qr_launch(const plan::QrPlan &q, const plan::Tuning &t);

// Launches (elements of the workspace as laid out by qr_layout; mats
// device-visible, count entries; hmats: a host copy of mats, or null).
// With hmats, the pivoted factorization of the matrices that fit runs on
// thread-block clusters holding the matrix in shared memory
// (qrcp_cluster_kernel), and the finish applies Q with a grid of blocks per
// matrix (qr_apply_q_kernel) or in WY form; both give the bits of the
// one-block kernels (at 1024 threads per matrix for the factorization).
template <class T> cudaError_t qr_factor(const Batch<T> &kb, const QrMat *mats, int count,
                                         int nw_max, unsigned char *ws, const QrLayout &L,
                                         cudaStream_t stream, const QrLaunch &q,
                                         const QrMat *hmats = nullptr);
template <class T> cudaError_t qr_finish(const Batch<T> &kb, const QrMat *mats, int count,
                                         int nw_max, unsigned char *ws, const QrLayout &L,
                                         cudaStream_t stream, const QrLaunch &q,
                                         const QrMat *hmats = nullptr);

} // namespace bsvd::detail::cuda
