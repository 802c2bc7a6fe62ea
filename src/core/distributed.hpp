// One large matrix across devices (HBJ §5; docs/multi-gpu.md, "One large matrix").
//
// The outermost blocking level of the hierarchically blocked one-sided
// Jacobi method spread over g devices. The working matrix W (mw x nw,
// mw >= nw) is cut into 2 g k block columns of w columns each (nw padded
// with zero columns to 2 g k w); a pair of two blocks is pw = 2 w columns,
// and each device holds k pairs: G (mw x k pw) and, with vectors, the same
// columns of V (np x k pw, np = 2 g k w rows, the identity's columns at the
// start). An outer step on every device, for each of its pairs G_p:
//   G_p = Û Σ V̂^H by the single-device solver (the whole call machinery;
//     solved to convergence, its QRCP preconditioning shortens the tall
//     pair to pw x pw where the plan takes it: inner_config),
//     `inner_sweeps` sweeps at most, with the matrix's tolerance
//     (sqrt(max(mw, 16)) u by default);
//   the pair rotated when that solve rotated: more than one sweep, or
//     not converged within the cap (HBJ §4.5: a count of proper rotations);
//   Q from V̂ (pair_rotation, below); G_p <- Û Σ, its columns in Q's
//   order, numerically null columns set to zero (kept_value) (the inner
//   solve's own columns: a GEMM G_p Q would add noise of
//   order sqrt(pw) u ||G_p|| to every column, more than the tolerance
//   relative to the small ones, and the iteration never stopped on d
//   2048^2); V_p <- V_p Q (a GEMM);
// then the blocks move to their pairs of the next step of the outer
// ordering (round robin over the blocks, below): a copy within a device or
// to a neighbour. An outer sweep in which no pair rotated ends the
// iteration: every pair of columns met in it and was orthogonal to the
// tolerance, as the one-device solvers require. The finish is the host's
// (cpu::finish_columns), on the gathered columns.
//
// Why not the Gram matrix of each pair and its eigenvectors (HBJ §5 forms
// G_p^H G_p and shortens it by Cholesky): the eigenvectors of a Gram matrix
// do not orthogonalize columns of small norm to a relative tolerance, and
// the iteration stalled on the cluster0 family in the CPU twin (80 sweeps);
// Cholesky fails on the numerically rank-deficient pairs of such matrices.
//
// The driver below is shared by the GPU engine (src/cuda/distributed.cu)
// and its CPU twin (src/cpu/distributed.cpp, threads as devices); an
// engine provides
//   void load(const T *W, int64_t ldw);        // blocks of W (mw x nw) to
//                                             // their step-0 places, V = I
//   void rotate();                            // the outer step, each device
//   void exchange(const std::vector<Move> &); // the blocks' moves
//   long rotations();                         // waits; the counts since
//                                             // the last call, summed
//   void gather(T *W, int64_t ldw, T *V, int64_t ldv);
//                                             // every block to its columns
//                                             // of W (mw x np), V (np x np)
#pragma once

#include "batch.hpp"

#include <cstdint>
#include <vector>

namespace bsvd::detail::dist {

// The cut of the working matrix over the devices.
struct Layout {
  int mw = 0, nw = 0; // working matrix, mw >= nw
  int devices = 0; // g
  int pairs = 0; // k, pairs per device
  int width = 0; // w, columns per block
  int blocks() const { return 2 * devices * pairs; }
  int pair_cols() const { return 2 * width; }
  int padded() const { return blocks() * width; } // np >= nw
  int device_cols() const { return pairs * pair_cols(); }
};

// The layout for g devices and a target pair width (tuning: DistTuning):
// k = the pairs per device that bring pw nearest to pair_cols, at least
// one; w = ceil(nw / (2 g k)).
Layout make_layout(int mw, int nw, int devices, int pair_cols);

// Where a block sits in a step: device, and its first column in the
// device's G (and V) buffer.
struct Place {
  int device = 0, col = 0;
};

// The outer ordering: the round robin (circle method) over the B blocks,
// B - 1 steps a sweep. Pair i of step s is {top, bottom}: pair 0 =
// {B - 1, s}, pair i > 0 = {(s + i) mod (B - 1), (s - i) mod (B - 1)}.
// From one step to the next a top block moves one pair down and a bottom
// block one pair up, so with the pairs of a device consecutive only the
// blocks at the ends of a device's range change devices. The top block
// sits in the first w columns of its pair, the bottom in the last w.
int steps_per_sweep(const Layout &L);
Place place_of(const Layout &L, int step, int block);

// One block's move between steps: w columns of G (and V) from the source
// buffer's columns to the destination's.
struct Move {
  Place from, to;
};
// The moves from step s to step s + 1 (mod steps_per_sweep): every block.
std::vector<Move> moves_between(const Layout &L, int step);

struct Outcome {
  int sweeps = 0;
  bool converged = false;
};

// The outer iteration: max_sweeps outer sweeps at most.
template <class Engine> Outcome iterate(Engine &e, const Layout &L, int max_sweeps) {
  const int steps = steps_per_sweep(L);
  std::vector<std::vector<Move>> moves(static_cast<size_t>(steps));
  for (int s = 0; s < steps; ++s) moves[size_t(s)] = moves_between(L, s);
  Outcome out;
  for (int sweep = 1; sweep <= max_sweeps; ++sweep) {
    out.sweeps = sweep;
    for (int s = 0; s < steps; ++s) {
      e.rotate();
      e.exchange(moves[size_t(s)]);
    }
    if (e.rotations() == 0) {
      out.converged = true;
      break;
    }
  }
  return out;
}

// sigma_j of a rotated pair as its new column keeps it: 0 below the
// finish's null threshold pw u sigma_1 (finish_null_ratio), where Û's
// column is a completion, not the data's direction, and a column of that
// norm would keep rotating; the discarded part is below pw u ||A||.
template <class R> BSVD_HD inline R kept_value(R sj, R s1, int pw) {
  return sj < R(pw) * unit_roundoff<R>() * s1 ? R(0) : sj;
}

// Whether a pair's inner solve rotated (its info and sweeps).
BSVD_HD inline long pair_rotated(int info, int sweeps) { return info != 0 || sweeps > 1 ? 1 : 0; }

// The rotation a pair applies, from the inner solve's V̂ (pw x pw, ld pw)
// into Q, and to[j] the column of Q (and of the new G_p) that takes column
// j of V̂ (and of Û Σ) (the twin of the GPU kernel):
//   rotated = 0: Q = I, the pair left as it is (the one-device solvers
//     skip a pair below the tolerance);
//   else, when the largest |v_ij| of each column j lies in a different row
//     r_j (V̂ near a permutation): Q's column r_j = V̂'s column j, undoing
//     the inner solve's descending sort, so that a column stays in its
//     block once it no longer rotates;
//   else Q = V̂.
// Both matter to the stop: a sweep without a rotation leaves every column
// in place, so every pair of columns met in it (the ordering's promise
// holds for columns, not only for block places). With the sort kept, the
// CPU twin stopped on unconverged matrices (columns of large norm always
// moved one way, small ones the other, and some never met).
template <class T> void pair_rotation(int pw, long rotated, const T *Vhat, T *Q, int *to);

} // namespace bsvd::detail::dist

namespace bsvd::detail::dist {

// The settings of one distributed solve (plan: DistTuning).
struct Settings {
  int devices = 1; // g
  int pair_cols = 512; // target pw
  int inner_sweeps = 1; // sweeps of the solve of each X; 0 = until converged
};

// The host side shared by the engines (src/cpu/distributed.cpp).
template <class T> struct Host {
  bool trans = false; // W = A^H (m < n)
  int escale = 0; // W = A 2^escale (cpu::prescale_exponent)
  int mw = 0, nw = 0;
  std::vector<T> owned; // W when it is not A itself
  const T *W = nullptr; // the working matrix, mw x nw
  int64_t ldw = 0;
};
// Matrix 0 of b as a working matrix. false: NaN / Inf or all zeros, which
// the one-device solvers finish without a sweep (the caller calls one).
template <class T> bool prepare(const Batch<T> &b, Host<T> &h);

// The inner solve's settings: the call's, `inner_sweeps` sweeps; no
// preconditioning when the sweeps are capped, never the Gram one
// (distributed.cpp says why).
Config inner_config(const Config &cfg, const Settings &s);

// The finish from the gathered G (mw x np, ld mw) and V (np x np, ld np;
// null without vectors): the padding columns (V's identity columns beyond
// nw; without vectors, zero columns sorted last) dropped, then
// cpu::finish_columns; info and sweeps of matrix 0 from the outcome.
template <class T>
void finish(const Batch<T> &b, const Layout &L, const Host<T> &h, T *G, T *V, const Outcome &o);

// The CPU twin: matrix 0 of b solved by the distributed algorithm with
// s.devices threads as devices (the outer step's device work on a thread
// each); NaN / Inf and zero matrices by the one-matrix solver. Its result
// does not depend on how the threads are scheduled.
template <class T>
bsvd_status_t cpu_gesvj_distributed(const Batch<T> &b, const Config &cfg, const Settings &s);

} // namespace bsvd::detail::dist
