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
// The driver (backend.cu, run_qr) does: qr_factor (load with the checks and
// power-of-two prescaling of the other paths, factor, write B), the fused
// kernel on the B batch (its own workspace batch with pointer arrays),
// qr_finish (S scaled back, info, sweeps, U and V). All on one stream, no
// host synchronization.
//
// Files: host.cu (routing, layout), launch.cuh (qr_factor, qr_finish),
// params.cuh, reflector.cuh, householder.cuh (one block per matrix),
// tsqr.cuh, qrcp.cuh (clusters), wy.cuh, apply.cuh, finish.cuh.
// Design and measurements: docs/design/qr.md.
#pragma once

#include "../../core/batch.hpp"

#include <cstddef>
#include <vector>

#include <cuda_runtime.h>

namespace bsvd::detail::cuda {

// max(m, n) >= kQrAutoRatio * min(m, n): the shape the automatic choice
// (qr = 0) considers tall or wide enough.
constexpr int kQrAutoRatio = 32;
constexpr int kQrAutoMinRows = 1000; // and at least this many rows (smaller ones were not measured)
// Q is applied by a grid of blocks of kQApplyThreads (qr_apply_q_kernel),
// each holding a chunk of X's columns (up to two per warp, within
// kQApplyBudget bytes) beside kQApplyChunk staged reflectors; with fewer
// than kQrAutoApplyCols columns per block (d beyond 2048 rows) the
// application is what makes QR slower.
constexpr int kQApplyThreads = 512;
constexpr int kQApplyChunk = 8;
constexpr size_t kQApplyBudget = 64 * 1024;
constexpr int kQrAutoApplyCols = 4;
// X's columns per block of qr_apply_q_kernel for columns of col_bytes on
// the current device; 0 when one column and the staged reflectors do not
// fit its shared memory (the finish kernel then forms X itself).
int qr_apply_cols(size_t col_bytes);
constexpr int kQrAutoMaxCols = 32; // QR for matrices A that do not fit: at most this many columns
constexpr size_t kQrAutoMaxBytes = 384 * 1024; // and (WY form) at most this large
constexpr int kQrAutoMaxColsGrid = 16; // at most this many columns with the grid (BSVD_QR_WY=0)
// Whether the unpivoted path applies Q in compact WY form (qr_wy_m_kernel,
// qr_wy_apply_kernel; the default, BSVD_QR_WY=0 turns it off).
bool qr_wy_enabled();

// Whether matrix m x n takes the QR path for the qr setting (0 auto, 1
// whenever R fits the fused kernel, -1 never). Auto: only matrices at
// least kQrAutoRatio times taller than wide with at least kQrAutoMinRows
// rows, and then
//  - those that fit the fused kernel themselves;
//  - or, not fitting it, those of at most kQrAutoMaxCols columns that TSQR
//    takes or of at most kQrAutoMaxBytes, with Q in WY form; without WY
//    (BSVD_QR_WY=0) those of at most kQrAutoMaxColsGrid columns whose Q
//    the grid applies with at least kQrAutoApplyCols columns per block.
// On such shapes one factorization and the solve of the small nw x nw R
// cost less than sweeping all mw rows; beyond these bounds the
// factorization (a larger cluster) or the application of Q (fewer columns
// per block) costs more than it saves. Measurements: docs/design/qr.md.
bool qr_route(char precision, int m, int n, bool vectors, int qr);

// Whether the blocked-path matrices of a call are preconditioned by QR
// with column pivoting (opts.precondition; path cuda-qrcp): 1 all, -1
// none, 0 auto. qrcp_route says whether it is forced on; the automatic
// choice (backend.cu, make_plan) preconditions every blocked-path matrix
// of the call when each fits a cluster (qrcp_cluster_fit) and the
// predicted cost on fast-converging input is small (qrcp_auto_rule,
// tuning.hpp). It pays on slowly converging matrices (fewer sweeps) and
// costs the factorization and Q on fast-converging ones, most where no
// cluster holds the matrix (the one-block kernel); neither the batch's
// shape nor its sizes tell the two apart, so the rule bounds what it
// costs where it does not pay. Measurements: docs/design/qr.md.
// The pivoted factorization and R^H's solve by the blocked path are
// described at qr_factor_kernel (householder.cuh) and in
// src/cpu/solve_one.cpp (its twin).
bool qrcp_route(int precondition);
// Blocks per cluster of the throughput plan's pivoted factorization of an
// m x n matrix on this GPU (qrcp_cluster_size), 0 when no cluster holds it
// or the GPU has no clusters (compute capability below 9.0): the one-block
// kernel then factors it from global memory.
template <class T> int qrcp_cluster_fit(int m, int n);

// One QR matrix of the launch: its batch index, sizes, offsets (elements)
// of its regions in the workspace; piv: factored with column pivoting and
// B = R^H (the preconditioning), its partial norms at vn + 2 tau and its
// pivots at perm + tau.
struct QrMat {
  int b, m, n, mw, nw;
  long long y, tau, B, S, U, V;
  int piv = 0;
  // TSQR (qr_tsqr_call; nc = 0: not this matrix): nc chunks of hc rows;
  // element offsets of its chunks' tau (t1, nc nw, in QrLayout's tau1) and
  // of its nc nw x nw blocks (zs) in the regions Zs (the stacked R factors,
  // factored in place), X2 (the second level's Q_2 [Z; 0]) and M1 (the
  // chunks' WY matrices M_c). The second level's tau is the matrix's own
  // (tau), which the one-level factorization would hold.
  int nc = 0, hc = 0;
  long long t1 = 0, zs = 0;
};

// Workspace layout of run_qr for matrices of sizes m[i] x n[i].
struct QrLayout {
  size_t mats = 0, escale = 0, info = 0, sweeps = 0, Y = 0, tau = 0, B = 0, S = 0, U = 0, V = 0;
  size_t vn = 0, perm = 0, sel = 0, nf = 0;
  size_t parr = 0, iarr = 0, map = 0, total = 0;
  // TSQR's regions (tsqr: the call takes it; chunks: its chunk jobs)
  size_t tau1 = 0, Zs = 0, X2 = 0, M1 = 0, tjobs = 0;
  bool tsqr = false;
  long long chunks = 0;
};
// piv: the pivoted factorization (the preconditioning), which never takes
// TSQR.
QrLayout qr_layout(const std::vector<int> &m, const std::vector<int> &n, bool vectors,
                   size_t elem_bytes, size_t real_bytes, bool piv = false);

// TSQR (src/core/tsqr.hpp) for the unpivoted factorization: whether it is
// on (qr_tsqr_enabled: BSVD_QR_TSQR=0 turns it off, and so does
// BSVD_QR_WY=0, since its Q is applied in WY form), the chunks of an mw x
// nw working matrix (qr_tsqr_chunks; 0: not taken), and whether a call on
// matrices m[i] x n[i] takes it (qr_tsqr_call: on, and every matrix has at
// least two chunks; one factorization for the whole call). The chunks are
// factored in shared memory by one block each (qr_tsqr_factor_kernel), the
// stacked R factors once more, and Q is applied in compact WY form chunk
// by chunk (docs/design/qr.md).
// elem_bytes: the precision's; the stacked R factors (nc nw x nw) must fit
// one block's shared memory within kTsqrMaxStackBytes. qr_tsqr_chunks is
// the shape's answer; qr_tsqr_call also reads the switches (once per call:
// reading the environment per matrix is slow on large batches).
constexpr size_t kTsqrMaxStackBytes = 96 * 1024;
bool qr_tsqr_enabled();
int qr_tsqr_chunks(int mw, int nw, size_t elem_bytes);
bool qr_tsqr_call(const std::vector<int> &m, const std::vector<int> &n, bool piv,
                  size_t elem_bytes);
// Sets the TSQR fields of mats[0, count) (nc, hc and the offsets into
// QrLayout's TSQR regions, in qr_layout's order) for a call that takes it.
void qr_tsqr_offsets(struct QrMat *mats, int count, size_t elem_bytes);

// Threads per matrix of the one-block QR kernels: 256 for the tall / wide
// QR path; kQrcpThreads for the pivoted factorization of the
// preconditioning, whose matrices are square and large (the columns'
// reflector work spread over more warps),
// and per block of its cluster kernel (which is used only at this count,
// whose block reductions it repeats). BSVD_QR_THREADS=256|512|1024
// overrides both (measurements).
constexpr int kQrcpThreads = 1024;
// Threads per block of the cluster factorization's throughput plan
// (qrcp_throughput_rule, tuning.hpp); its bits are the one-block kernel's
// at this count.
constexpr int kQrcpThroughputThreads = 256;
int qr_threads(bool pivoted);

// Launches (elements of the workspace as laid out by qr_layout; mats
// device-visible, count entries; threads: 256, 512 or 1024 per matrix;
// hmats: a host copy of mats, or null). With hmats, the pivoted
// factorization of the matrices that fit runs on thread-block clusters
// holding the matrix in shared memory (qrcp_cluster_kernel), and the
// finish applies Q with a grid of blocks per matrix (qr_apply_q_kernel);
// both give the bits of the one-block kernels (at 1024 threads per matrix
// for the factorization).
template <class T>
cudaError_t qr_factor(const Batch<T> &kb, const QrMat *mats, int count, int nw_max,
                      unsigned char *ws, const QrLayout &L, cudaStream_t stream,
                      int threads = 256, const QrMat *hmats = nullptr);
template <class T>
cudaError_t qr_finish(const Batch<T> &kb, const QrMat *mats, int count, int nw_max,
                      unsigned char *ws, const QrLayout &L, cudaStream_t stream,
                      int threads = 256, const QrMat *hmats = nullptr);

} // namespace bsvd::detail::cuda
