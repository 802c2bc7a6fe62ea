// The plan of one call: which path each matrix takes and every parameter
// the paths need, as data, made by host-only code.
//
//   make_plan(shapes, settings, device, path facts, tuning) -> Plan
//
// The cuda backend executes a plan (src/cuda/backend.cu): it lays out the
// workspace and runs one operation per group; it decides nothing itself.
// What can only be decided while a call runs -- the blocked path's plan of
// each Jacobi step, which depends on the matrices still iterating -- is a
// rule of this folder too (blocked_sweep.hpp), which the driver calls with
// the step's counts. `bsvd plan` prints a plan (explain).
#pragma once

#include "../core/batch.hpp"
#include "device.hpp"
#include "tuning.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace bsvd::detail::plan {

// The GPU paths (src/cuda/<path>/) and the CPU fallback.
enum class Route : unsigned char {
  kFused, // one kernel per matrix set, the matrix in shared memory
  kTiny, // one thread per matrix, the matrix in registers (n <= tiny_cols)
  kBlocked, // block Jacobi in global memory: Gram, eigensolver, update per step
  kQr, // QR (TSQR) first, the fused kernel on R, Q applied
  kQrcp, // QR with column pivoting first, the blocked path on R^H
  kGram, // the Gram matrix's eigenvectors V0 first, the blocked path on A V0
  kCpu, // what no GPU path implements (an ordering, a block width), on the CPU
  kBidiag, // values only: GEBRD on chip, then bisection on the bidiagonal
};
const char *route_name(Route r);

// One launch of the fused kernel: its matrices share the shared-memory
// envelope mw_max x nw_max.
struct FusedLaunch {
  std::vector<int> members; // positions in the group's index list
  int mw_max = 0, nw_max = 0;
  int lanes = 32; // lanes of a warp per column pair
  int tpm_cap = 256; // threads per matrix, at most
};

// The blocked path's settings for its matrices (kBlocked, or R^H of kQrcp).
struct BlockedPlan {
  int nb = 0; // block width
  int wr = 1, we = 1; // two-level ordering: blocks per outer block, inner sweeps
  std::vector<int> mode; // per matrix: bsvd_pair_solver_t, never AUTO
  std::vector<char> cublas; // per matrix: its Gram matrices by cuBLAS
};

// The QR front end's settings (kQr, kQrcp).
struct QrPlan {
  bool pivoted = false; // QR with column pivoting (kQrcp)
  bool tsqr = false; // the factorization by TSQR (every matrix has >= 2 chunks)
  bool wy = true; // Q applied in compact WY form
  bool cluster = true; // pivoted factorization on thread-block clusters
  bool apply = true; // Q applied by a grid of blocks
  int threads = 256; // threads per matrix of the one-block kernels
};

struct Group {
  Route route = Route::kCpu;
  std::vector<int> index; // the call's matrices, ascending
  std::vector<int> m, n; // their sizes
  // >= 0: the group is the call's matrices 0 ... whole - 1, all m[0] x
  // n[0], and index is empty -- a uniform batch on the register tier, where
  // per-matrix lists cost more host time than the kernel (1e6 matrices:
  // ~3 ms against 0.05 ms), or on the cpu backend. Read through size(),
  // at(), rows(), cols().
  int whole = -1;
  size_t size() const { return whole >= 0 ? size_t(whole) : index.size(); }
  int at(size_t i) const { return whole >= 0 ? int(i) : index[i]; }
  int rows(size_t i) const { return whole >= 0 ? m[0] : m[i]; }
  int cols(size_t i) const { return whole >= 0 ? n[0] : n[i]; }
  bool beside = false; // on a side stream, beside the blocked path
  bool lapack = false; // kCpu: the LAPACK path (cpu_lapack), else the Jacobi solver
  std::vector<FusedLaunch> fused; // kFused: its launches; kQr: those of the R factors
  BlockedPlan blocked; // kBlocked; kQrcp (on R^H)
  QrPlan qr; // kQr, kQrcp
  size_t workspace_bytes = 0; // set by the backend that sizes it
};

struct Plan {
  char precision = 'd';
  bool vectors = false;
  int count = 0;
  bool uniform = true; // one size for every matrix
  // The hyperbolic SVD: only the paths with hyperbolic instances (fused,
  // blocked with the pair solver BSVD_PAIR_SVD_SM), cfg as hyperbolic_settings
  // left it.
  bool hyperbolic = false;
  Config cfg;
  Tuning tuning; // the GPU's table with the call's overrides
  DeviceDesc device; // id -1: no GPU (every matrix on the CPU)
  int fused_cols = 0; // the call's fused column cap (variant auto)
  // The preconditioning of the blocked-path matrices: whether, and for the
  // automatic choice its prediction (precondition_count matrices of the
  // largest's size, precondition_cols columns; cost as a fraction).
  bool precondition = false;
  bool precondition_auto = false;
  bool gram = false; // the blocked path's matrices preconditioned by V0 (kGram), asked for
  // kGram chosen by the plan (precondition = 0, GramTuning): the group runs
  // the test on its Gram matrices and is preconditioned where it predicts a
  // gain, else runs the plain blocked path
  bool gram_auto = false;
  double precondition_count = 0, precondition_cost = 0;
  int precondition_cols = 0;
  std::vector<Group> groups; // in the order they are enqueued
  size_t workspace_bytes = 0; // the call's total, set by the backend

  const Group *find(Route r) const;
  Group *find(Route r);
};

// The shapes of a call: dims with host-visible size arrays.
struct Shapes {
  char precision = 'd';
  bool vectors = false;
  int count = 0;
  Dims dims;
  bool hyperbolic = false; // the HSVD (Batch::nplus set)
};

// The shapes of a batch (its sizes must be host-visible).
template <class T> Shapes shapes_of(const Batch<T> &b) {
  Shapes s;
  s.precision = precision_of<T>();
  s.vectors = b.vectors;
  s.count = b.count;
  s.dims = b.dims;
  s.hyperbolic = b.nplus != nullptr;
  return s;
}

// The plan of a call on a GPU (device.id >= 0) or, with no GPU, the
// fallback of the cuda backend (every non-empty matrix on the CPU).
Plan make_plan(const Shapes &shapes, const Config &cfg, const DeviceDesc &device,
               const PathFacts &facts, const Tuning &tuning);

// What the hyperbolic SVD's plan may use of cfg (HBJ Sec. 2, 4.3): no
// preconditioning (QRCP's column pivots would permute J); the unpivoted QR
// front end (G = Q R keeps G's columns, so R's HSVD with the same J gives
// G's, U = Q U_R); the blocked path's one-sided pair solver only (the
// eigensolver-based ones make a unitary Q, not a J-unitary one) and the
// one-level ordering. make_plan adds: no register tier.
Config hyperbolic_settings(const Config &cfg);

// The plan of a call on the cpu backend: the matrices of the LAPACK path
// (cpu_lapack) in one group (lapack set), the Jacobi solver's in another.
Plan cpu_plan(const Shapes &shapes, const Config &cfg);

// Whether the cpu backend solves an m x n matrix by LAPACK xGESDD
// (BSVD_PATH_CPU_LAPACK) rather than by its own Jacobi solver: only when
// the library links LAPACK and the call asks for nothing that only the
// Jacobi solver has (variant auto; tol, max_sweeps, ordering and
// precondition at their defaults); then where xGESDD is the faster
// (docs/design/cpu.md). force: the BSVD_CPU_LAPACK override.
bool cpu_lapack(char prec, int m, int n, bool vectors, const Config &cfg,
                Force force = Force::kAuto);

// The rules make_plan applies per matrix (exposed for tests and tools).
// Block width of the blocked path, or 0 when no compiled instance takes it.
int blocked_nb(const Config &cfg, char prec, const PathFacts &facts);
// The pair solver of a blocked mw x nw matrix.
int blocked_pair_mode(char prec, int mw, const Config &cfg, int nb, const PathFacts &facts,
                      const Tuning &t);
// Whether an m x n matrix takes the QR front end (cfg.qr: 0 auto, 1 when R
// fits the fused kernel, -1 never).
bool qr_route(char prec, int m, int n, bool vectors, int qr, const PathFacts &facts,
              const Tuning &t);
// precondition = 2 (Route::kGram on the GPU, blocking and _async calls:
// cuSOLVER's batched eigensolver is captured into the call's graph).
inline bool gram_preconditioned(const Config &cfg) { return cfg.precondition == 2; }

// The path of one matrix, given the call's fused cap and preconditioning.
// tiny: the register tier's reach for the call (tiny_reach; default: off).
Route route(char prec, int m, int n, bool vectors, bool gpu, const Config &cfg, int nb,
            bool precondition, int fused_cols, const PathFacts &facts, const Tuning &t,
            TinyReach tiny = {});

// A readable table of the plan: one line per group with its parameters.
std::string explain(const Plan &p);

} // namespace bsvd::detail::plan
