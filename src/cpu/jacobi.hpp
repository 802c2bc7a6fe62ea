// CPU one-sided Jacobi: the reference every GPU kernel is compared with.
//
// Single-matrix building blocks, usable on their own by tests (the "CPU
// twins" of the GPU kernels), plus the batch driver in cpu_backend.cpp.
// All matrices are column-major. m >= n is assumed by the Jacobi routines;
// solve_one handles any shape.
#pragma once

#include "../core/batch.hpp"
#include "../core/ordering.hpp"
#include "../core/rotation.hpp"

namespace bsvd::detail {

struct SweepStats {
  int sweeps = 0; // sweeps performed
  bool converged = false;
};

// Unblocked one-sided Jacobi on W (m x n, m >= n): column-pair rotations
// (rotation.hpp) in the given parallel ordering, squared column norms carried
// across rotations (WCYCLE eq. 6) and recomputed from the columns at the start
// of every sweep. V (n x n) accumulates the rotations when non-null (it must
// hold the identity, or any matrix to post-multiply, on entry).
// tol: rotate a pair when |a_p^H a_q| > tol ||a_p|| ||a_q||.
// A sweep in which no pair needs a rotation ends the iteration.
template <class T> SweepStats jacobi_unblocked(int m, int n, T *W, int ldw, T *V, int ldv,
                                               const Ordering &ord, double tol, int max_sweeps);

// The hyperbolic variant (HSVD, docs/hsvd.md): W = G (m x n, m >= n) with
// the signature J = diag(I_nplus, -I_(n - nplus)). Pairs of equal sign take
// the trigonometric rotation, pairs that straddle nplus the hyperbolic one
// (hyperbolic_rotation, rotation.hpp); no pair is ever swapped, so J stays
// partitioned. V (when non-null, the identity on entry) accumulates the
// transformation: G V = W on exit, V^H J V = J. The stop is the unblocked
// one (a sweep without a rotation of either kind). breakdown: a hyperbolic
// pair needed the 5/4 substitution in kHyperbolicBreakdownSweeps sweeps in
// a row (rotation.hpp), or in the last sweep
// of an unconverged run -- the rank condition rank(G) = rank(G J G^H) is
// violated (numerically).
struct HyperbolicStats {
  int sweeps = 0;
  bool converged = false;
  bool breakdown = false;
  bool substituted = false; // some step took the 5/4 substitution
};
template <class T> HyperbolicStats jacobi_hyperbolic(int m, int n, int nplus, T *W, int ldw, T *V,
                                                     int ldv, const Ordering &ord, double tol,
                                                     int max_sweeps);

// The blocked variant (HBJ Sec. 4.3; docs/hsvd.md): the columns cut into
// blocks of nb within each side of nplus, and for each pair of blocks of
// the ordering over the blocks the unblocked hyperbolic iteration on the
// pair's columns for `inner` sweeps (eig_sweeps: > 0 that many, 0 until
// converged, < 0 the blocked SVD's rule), its transformation accumulated
// into V. Stops on an outer sweep in which no pair rotated; breakdown:
// kHyperbolicBreakdownSweeps outer sweeps in a row with a substituted step,
// or one in the last. The column ordering serves the blocks and the pairs.
template <class T> HyperbolicStats jacobi_hyperbolic_blocked(int m, int n, int nplus, T *W, int ldw,
                                                             T *V, int ldv, int nb,
                                                             bsvd_ordering_t ordering, double tol,
                                                             int max_sweeps, int eig_sweeps);

// Blocked one-sided Jacobi: columns split into blocks of nb; for each block
// pair (i, j) of the ordering over blocks: G = [W_i W_j]^H [W_i W_j], its
// eigenvectors Q by hermitian_jacobi_evd, then [W_i W_j] *= Q and
// [V_i V_j] *= Q. Converged when no block pair's Gram matrix has an
// off-diagonal entry over tol (relative to its diagonal). pair_svd: each
// pair's rotation by one-sided Jacobi on its own columns instead (WCYCLE
// Observation 1; the twin of the GPU's shared-memory pair SVD).
template <class T> SweepStats jacobi_blocked(int m, int n, T *W, int ldw, T *V, int ldv, int nb,
                                             const Ordering &block_ord, double tol, int max_sweeps,
                                             int eig_sweeps, bsvd_ordering_t eig_ordering,
                                             bool pair_svd = false);

// Two-sided Jacobi eigensolver of the k x k Hermitian G (lower and upper
// triangles both read and updated), the twin of the GPU shared-memory
// eigensolver: round-robin steps, all pairs of a step applied "in parallel"
// (their rotations computed from the same G, then applied to rows and
// columns). Q (k x k) receives the eigenvectors (product of rotations).
// sweeps = 0: until no off-diagonal |g_pq| > tol sqrt(g_pp g_qq);
// sweeps > 0: exactly that many sweeps at most (1 = the inexact mode).
// Returns the number of rotations applied (0 means G was already diagonal
// to the tolerance).
template <class T> long hermitian_jacobi_evd(int k, T *G, int ldg, T *Q, int ldq, double tol,
                                             int sweeps, bsvd_ordering_t ordering);

// The finish's orthonormal completion: the columns of U (mw x nw, ld mw)
// flagged by null[j] become unit vectors orthogonal to the others and to
// each other (pivoted on the residuals of the unit vectors, in rounds of up
// to b candidates: complete.cpp; the rule at completion_block,
// rotation.hpp). work: completion_work(mw, nw, b) elements. The twin of
// the GPU finish (b = completion_width: the blocked path's rounds, 1 on the
// unblocked / fused path).
template <class T> void complete_basis(int mw, int nw, T *U, const char *null, int b, T *work);
inline size_t completion_work(int mw, int nw, int b) {
  return size_t(mw + nw) * size_t(b < 1 ? 1 : b) + size_t(mw);
}
template <class T> int completion_width(int mw, int nw, bool blocked) {
  const int b = blocked ? completion_block(mw, nw, int(sizeof(T))) : 1;
  return b < 1 ? 1 : b;
}

namespace cpu {
// The finish of a one-sided solve (solve_one's step (f)), also the
// distributed solve's (core/distributed.hpp): W (mw x nw, ld mw, mw >= nw)
// holds the converged columns, Vw (nw x nw, ld nw; null without vectors)
// their right factor. sigma_j = ||w_j|| (overflow-safe) times 2^-escale,
// u_j = w_j / sigma_j, columns below null_ratio sigma_max completed
// (complete_basis, rounds of completion_b), a descending stable sort, and
// matrix b's S, U, V written (U and V from Vw and W when trans: W = A^H).
// Scratch: mant and expo nw each, perm nw, cand completion_work(mw, nw,
// completion_b) (vectors only). info and sweeps are the caller's.
template <class T> void finish_columns(const Batch<T> &batch, int b, int mw, int nw, T *W, T *Vw,
                                       bool trans, int escale, real_of_t<T> null_ratio,
                                       int completion_b, real_of_t<T> *mant, int *expo, int *perm,
                                       T *cand);
} // namespace cpu

// Scratch elements of T one solve_one call needs for an m x n matrix.
size_t solve_one_scratch(int m, int n, bool vectors);

// Solves matrix b of the batch completely: NaN/Inf check, m < n through the
// conjugate transpose, power-of-two scaling of badly scaled input, the
// chosen variant, then the finish (sigma_j = ||w_j||, u_j = w_j / sigma_j,
// null columns of U completed to an orthonormal set, descending sort, swap
// back for m < n, scaling undone) and writes S, U, V, info, sweeps.
// Returns the bsvd_path_t taken.
template <class T> int solve_one(const Batch<T> &batch, int b, const Config &cfg, T *scratch);

} // namespace bsvd::detail
