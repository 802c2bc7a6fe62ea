// CPU one-sided Jacobi: the reference every GPU kernel is compared with.
//
// Single-matrix building blocks, usable on their own by tests (the "CPU
// twins" of the GPU kernels), plus the batch driver in cpu_backend.cpp.
// All matrices are column-major. m >= n is assumed by the Jacobi routines;
// solve_one handles any shape.
#pragma once

#include "../core/batch.hpp"
#include "../core/ordering.hpp"

namespace bsvd::detail {

struct SweepStats {
  int sweeps = 0;     // sweeps performed
  bool converged = false;
};

// Unblocked one-sided Jacobi on W (m x n, m >= n): column-pair rotations
// (rotation.hpp) in the given parallel ordering, squared column norms carried
// across rotations (WCYCLE eq. 6) and recomputed from the columns at the start
// of every sweep. V (n x n) accumulates the rotations when non-null (it must
// hold the identity, or any matrix to post-multiply, on entry).
// tol: rotate a pair when |a_p^H a_q| > tol ||a_p|| ||a_q||.
// A sweep in which no pair needs a rotation ends the iteration.
template <class T>
SweepStats jacobi_unblocked(int m, int n, T *W, int ldw, T *V, int ldv,
                            const Ordering &ord, double tol, int max_sweeps);

// Blocked one-sided Jacobi: columns split into blocks of nb; for each block
// pair (i, j) of the ordering over blocks: G = [W_i W_j]^H [W_i W_j], its
// eigenvectors Q by hermitian_jacobi_evd, then [W_i W_j] *= Q and
// [V_i V_j] *= Q. Converged when no block pair's Gram matrix has an
// off-diagonal entry over tol (relative to its diagonal). pair_svd: each
// pair's rotation by one-sided Jacobi on its own columns instead (WCYCLE
// Observation 1; the twin of the GPU's shared-memory pair SVD).
template <class T>
SweepStats jacobi_blocked(int m, int n, T *W, int ldw, T *V, int ldv, int nb,
                          const Ordering &block_ord, double tol, int max_sweeps,
                          int eig_sweeps, bsvd_ordering_t eig_ordering, bool pair_svd = false);

// Two-sided Jacobi eigensolver of the k x k Hermitian G (lower and upper
// triangles both read and updated), the twin of the GPU shared-memory
// eigensolver: round-robin steps, all pairs of a step applied "in parallel"
// (their rotations computed from the same G, then applied to rows and
// columns). Q (k x k) receives the eigenvectors (product of rotations).
// sweeps = 0: until no off-diagonal |g_pq| > tol sqrt(g_pp g_qq);
// sweeps > 0: exactly that many sweeps at most (1 = the inexact mode).
// Returns the number of rotations applied (0 means G was already diagonal
// to the tolerance).
template <class T>
long hermitian_jacobi_evd(int k, T *G, int ldg, T *Q, int ldq, double tol,
                          int sweeps, bsvd_ordering_t ordering);

// Scratch elements of T one solve_one call needs for an m x n matrix.
size_t solve_one_scratch(int m, int n, bool vectors);

// Solves matrix b of the batch completely: NaN/Inf check, m < n through the
// conjugate transpose, power-of-two scaling of badly scaled input, the
// chosen variant, then the finish (sigma_j = ||w_j||, u_j = w_j / sigma_j,
// null columns of U completed to an orthonormal set, descending sort, swap
// back for m < n, scaling undone) and writes S, U, V, info, sweeps.
// Returns the bsvd_path_t taken.
template <class T>
int solve_one(const Batch<T> &batch, int b, const Config &cfg, T *scratch);

} // namespace bsvd::detail
