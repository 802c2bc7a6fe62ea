/*
 * bsvd: batched singular value decomposition on CPUs and GPUs -- C API.
 *
 * Every solver entry point computes, for each matrix A (m x n, column-major)
 * of a batch, the reduced SVD  A = U * diag(S) * V^H  with k = min(m, n):
 *   S  k singular values, non-negative, sorted descending;
 *   U  m x k with orthonormal columns;   V  n x k with orthonormal columns;
 * by one-sided Jacobi rotations -- or, on the cpu backend with the default
 * options, by LAPACK xGESDD where that is faster (BSVD_PATH_CPU_LAPACK).
 * Wide matrices (m < n) are solved through A^H and the factors swapped.
 *
 * Names follow LAPACK: bsvd_<p>gesvj_<form>, p in {s, d, c, z}, form in
 *   strided_batched  one array, matrix b at A + b * strideA (uniform size)
 *   batched          an array of pointers, one per matrix (uniform size)
 *   vbatched         an array of pointers with per-matrix m, n and leading
 *                    dimensions (variable size)
 *
 * Errors come in two levels (the LAPACK / MAGMA convention):
 *   - the call returns a status: 0 on success; -i when argument i (1-based,
 *     in the order of the prototype) is invalid, in which case no output is
 *     written; or a positive bsvd_status_code for a failure that is not an
 *     argument's fault. bsvd_last_error() gives a sentence naming the
 *     argument and its value.
 *   - each matrix gets info[b]: 0 converged; > 0 did not converge within
 *     max_sweeps (the output is written, but not at converged accuracy);
 *     BSVD_INFO_NONFINITE when the matrix holds NaN or Inf (its S, U, V are
 *     set to NaN; the rest of the batch is unaffected). sweeps[b]: the
 *     Jacobi sweeps the matrix took; 0 on BSVD_PATH_CPU_LAPACK (which
 *     reports info 0, or falls back to the Jacobi solver) and on
 *     BSVD_PATH_CUDA_BIDIAG (no iteration that could fail to converge).
 *
 * Memory: with the cpu backend every pointer is host memory. With the cuda
 * backend the matrices and per-matrix outputs (A, S, U, V, info, sweeps)
 * are either all in host memory (copied to the GPU and back) or all in
 * device memory of the current device; the pointer arrays and size arrays
 * of the batched / vbatched forms, and opts->path, are always host memory.
 *
 * Blocking: every solver call returns when its results are written. The
 * cuda backend works on opts->stream and synchronizes it before returning;
 * no call leaves work in flight. The _async forms (end of this file) only
 * enqueue: they return before the GPU has started, never wait for the
 * device, and may be captured in a CUDA graph.
 *
 * The batched BLAS and LAPACK building blocks (GEMV, GEBRD, TRSV) are
 * declared in bsvd/blas.h, which this header includes.
 */
#ifndef BSVD_BSVD_H
#define BSVD_BSVD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Complex values, layout-compatible with std::complex, C99 _Complex and
 * cuComplex: real part first. */
typedef struct {
  float re, im;
} bsvd_cfloat;
typedef struct {
  double re, im;
} bsvd_cdouble;

/* 0, -position of an invalid argument, or a bsvd_status_code. */
typedef int bsvd_status_t;

/* Positive status codes (negative statuses name an argument, see above). */
enum bsvd_status_code {
  BSVD_STATUS_SUCCESS = 0,
  BSVD_STATUS_BACKEND_UNAVAILABLE = 1, /* backend not built, or no GPU */
  BSVD_STATUS_NOT_SUPPORTED = 2, /* valid request this build cannot do */
  BSVD_STATUS_ALLOC_FAILED = 3, /* host or device allocation failed */
  BSVD_STATUS_DEVICE_ERROR = 4, /* a CUDA call failed */
  BSVD_STATUS_WORKSPACE_TOO_SMALL = 5, /* opts->workspace_bytes too small */
  BSVD_STATUS_INTERNAL_ERROR = 6
};
/* The codes are 0 ... BSVD_STATUS_COUNT - 1. */
#define BSVD_STATUS_COUNT 7

/* Per-matrix info code for NaN or Inf in the input. */
#define BSVD_INFO_NONFINITE (-1)
/* Hyperbolic SVD (bsvd_<p>gehsvj_*) only: the matrix violates the rank
 * condition rank(G) = rank(G J G^H) (numerically): a pair of columns of
 * opposite signs stayed parallel with equal norms, so no hyperbolic
 * rotation exists. S, U, V hold the last iterate, which is not an HSVD. */
#define BSVD_INFO_HYPERBOLIC_BREAKDOWN (-2)

/* bsvd_options_t::eig_sweeps: let the library choose per matrix. */
#define BSVD_EIG_SWEEPS_AUTO (-1)

/* Every enum below is dense -- its enumerators are 0 ... BSVD_<ENUM>_COUNT
 * - 1 -- and ends in a _MAX_ENUM entry of 0x7fffffff, so that any int a C
 * caller passes is a valid value of the type (C++ sanitizers reject loads
 * of out-of-range enum values). _MAX_ENUM is not a value to pass: the
 * library checks the range of every enum argument and option and returns
 * -position for a value outside 0 ... COUNT - 1. */

/* What to compute. */
typedef enum {
  BSVD_JOB_VALUES = 0, /* singular values only; U, V and their leading
                           dimensions and strides are not referenced */
  BSVD_JOB_VECTORS = 1, /* singular values and the economy U (m x k) and
                           V (n x k) */
  BSVD_JOB_MAX_ENUM = 0x7fffffff
} bsvd_job_t;
#define BSVD_JOB_COUNT 2

/* Where the batch is solved. */
typedef enum {
  BSVD_BACKEND_AUTO = 0, /* the default: cuda when the matrices are in
                            device memory or a GPU is visible; else cpu */
  BSVD_BACKEND_CPU = 1, /* host threads over the batch; host memory only */
  BSVD_BACKEND_CUDA = 2, /* the GPU; host or device memory. Some matrices
                            may still be solved on the host (those the GPU
                            paths cannot take); opts->path tells which */
  BSVD_BACKEND_MAX_ENUM = 0x7fffffff
} bsvd_backend_t;
#define BSVD_BACKEND_COUNT 3

/* The parallel ordering: which column pairs (block-column pairs in the
 * blocked variant) are rotated together in each step of a sweep. Both
 * backends run all four. On the cuda backend the fused kernel takes every
 * ordering and the blocked path round-robin only: with another ordering
 * the matrices too large for the fused kernel are solved on the host
 * (opts->path says cpu-...). See docs/design/orderings.md. */
typedef enum {
  BSVD_ORDERING_ROUND_ROBIN = 0, /* Brent-Luk round-robin (the default) */
  BSVD_ORDERING_ODD_EVEN = 1, /* odd-even transposition ordering */
  /* The parallel orderings closest to the sequential row-cyclic (resp.
     column-cyclic) ordering (Novakovic, SISC 2015, Sec. 3), run in
     reverse. Orders whose odd part exceeds 11 are padded with idle slots,
     so a sweep takes more steps than n - 1 (n = 100: 111). */
  BSVD_ORDERING_ROW_PARALLEL = 2,
  BSVD_ORDERING_COLUMN_PARALLEL = 3,
  BSVD_ORDERING_MAX_ENUM = 0x7fffffff
} bsvd_ordering_t;
#define BSVD_ORDERING_COUNT 4

/* How the columns are rotated. */
typedef enum {
  BSVD_VARIANT_AUTO = 0, /* the default. cpu: per matrix the faster of
                                 LAPACK xGESDD (BSVD_PATH_CPU_LAPACK) and
                                 UNBLOCKED, when the library links LAPACK
                                 and tol, max_sweeps, ordering and
                                 precondition keep their defaults; else
                                 UNBLOCKED (docs/design/cpu.md). cuda: per
                                 matrix, QR first for tall or wide ones
                                 (opts->qr), one thread per matrix for
                                 the smallest (docs/design/tiny.md), the
                                 one-kernel solver for those that fit on
                                 chip up to a column cap,
                                 the blocked path for the others (see
                                 docs/design/fused.md, blocked.md) */
  BSVD_VARIANT_UNBLOCKED = 1, /* column-pair rotations. cuda: the one-kernel
                                 solver for matrices that fit on chip, the
                                 host for the others */
  BSVD_VARIANT_BLOCKED = 2, /* block-column pairs of block_size columns:
                                 the pair's rotation from a small solve
                                 (pair_solver), applied as one update */
  BSVD_VARIANT_MAX_ENUM = 0x7fffffff
} bsvd_variant_t;
#define BSVD_VARIANT_COUNT 3

/* Blocked variant: how the rotation of a block-column pair
 * A_ij = [A_i A_j] (m x k, k <= 2 block_size) is found. The shared-memory
 * solvers (cuda) need the pair to fit in shared memory; a matrix whose
 * pair does not fit uses GRAM. The cpu backend runs SVD_SM (the same
 * algorithm as the GPU's) and GRAM for every other value. See
 * docs/design/blocked.md. */
typedef enum {
  BSVD_PAIR_AUTO = 0, /* the default: per matrix, from its size and
                           precision */
  BSVD_PAIR_GRAM = 1, /* G = A_ij^H A_ij, Jacobi eigenvectors Q of G,
                           A_ij Q, in global memory */
  BSVD_PAIR_EVD_SM = 2, /* the same with A_ij held in shared memory */
  BSVD_PAIR_SVD_SM = 3, /* one-sided Jacobi on A_ij in shared memory; its
                           right singular vectors are the rotation */
  BSVD_PAIR_MAX_ENUM = 0x7fffffff
} bsvd_pair_solver_t;
#define BSVD_PAIR_SOLVER_COUNT 4

/* Which path solved a matrix (reported per matrix through
 * bsvd_options_t::path). */
typedef enum {
  BSVD_PATH_TRIVIAL = 0, /* empty matrix or non-finite input: nothing
                                  solved */
  BSVD_PATH_CPU_UNBLOCKED = 1, /* host, unblocked variant */
  BSVD_PATH_CPU_BLOCKED = 2, /* host, blocked variant */
  BSVD_PATH_CUDA_FUSED = 3, /* GPU, the one-kernel shared-memory solver
                                  (docs/design/fused.md) */
  BSVD_PATH_CUDA_BLOCKED = 4, /* GPU, blocked path, pairs by BSVD_PAIR_GRAM
                                  (docs/design/blocked.md) */
  BSVD_PATH_CUDA_QR = 5, /* GPU, Householder QR first, the one-kernel
                                  solver on R, U = Q U_R (opts->qr;
                                  docs/design/qr.md) */
  BSVD_PATH_CUDA_PAIR_EVD = 6, /* GPU, blocked path, pairs by
                                  BSVD_PAIR_EVD_SM */
  BSVD_PATH_CUDA_PAIR_SVD = 7, /* GPU, blocked path, pairs by
                                  BSVD_PAIR_SVD_SM */
  BSVD_PATH_CUDA_QRCP = 8, /* GPU, QR with column pivoting first, the
                                  blocked path on R^H (opts->precondition;
                                  docs/design/qrcp.md) */
  BSVD_PATH_CUDA_TINY = 9, /* GPU, one thread per matrix in registers
                              (small matrices; docs/design/tiny.md) */
  BSVD_PATH_CPU_LAPACK = 10, /* host, LAPACK xGESDD (cpu backend, variant
                                  auto; sweeps = 0; docs/design/cpu.md) */
  BSVD_PATH_CUDA_GRAM = 11, /* GPU, the Gram matrix's eigenvectors first
                               (opts->precondition = 2), the blocked path
                               on A V0 (docs/design/gram.md) */
  BSVD_PATH_CUDA_DEVICES = 12, /* GPUs, one matrix across several
                                  (opts->device_count); not chosen
                                  automatically, only where the
                                  environment forces it
                                  (docs/multi-gpu.md) */
  BSVD_PATH_CUDA_BIDIAG = 13, /* GPU, values only: Householder
                                 bidiagonalization (on chip, or blocked
                                 panels first for larger matrices), then
                                 bisection on the bidiagonal (sweeps = 0;
                                 docs/design/bidiag.md) */
  BSVD_PATH_MAX_ENUM = 0x7fffffff
} bsvd_path_t;
#define BSVD_PATH_COUNT 14

/* Options of a call. Fill it with bsvd_options_init, then set the fields
 * to change; a NULL opts means all defaults. "cpu" / "cuda" say which
 * backend reads a field; the other ignores it. */
typedef struct {
  bsvd_backend_t backend; /* default BSVD_BACKEND_AUTO */
  bsvd_ordering_t ordering; /* default BSVD_ORDERING_ROUND_ROBIN */
  bsvd_variant_t variant; /* default BSVD_VARIANT_AUTO */
  int block_size; /* blocked variant: columns per block; 0 = auto (16),
                      the default. cuda: widths up to 16 in every
                      precision, 17 ... 32 in s, d and c (pairs by
                      BSVD_PAIR_GRAM only); a matrix asking for a wider
                      block is solved on the host. */
  double tol; /* rotate a pair when |a_i^H a_j| > tol ||a_i|| ||a_j||;
                      0 <= tol < 1; 0 (the default) selects
                      sqrt(max(m, 16)) * u (u = unit roundoff of the
                      precision, m the rows of A or of A^H when m < n):
                      LAPACK xGESVJ's sqrt(m) u from 16 rows on, 4 u
                      below, where sqrt(m) u lies under the rounding noise
                      of a computed inner product (docs/accuracy.md) */
  int max_sweeps; /* sweep limit per matrix; 0 (the default) selects 80 */
  int eig_sweeps; /* blocked variant: sweeps of the inner solve of each
                      block pair. BSVD_EIG_SWEEPS_AUTO (-1, the default):
                      one, and two for a matrix once its convergence
                      stalls; 0: until the inner solve converges; k > 0:
                      k sweeps (1 = the inexact one-sweep mode) */
  int num_threads; /* cpu: threads over the batch; 0 (the default) = all
                      cores; more than the cores counts as all cores */
  void *stream; /* cuda: a cudaStream_t to work on; NULL (the default)
                      = the default stream. The blocking calls
                      synchronize it before returning; the _async
                      forms only enqueue on it. */
  void *workspace; /* NULL (the default): the library allocates what the
                      call needs and frees it before returning (cuda:
                      stream-ordered on opts->stream). Otherwise the
                      caller's workspace of workspace_bytes bytes, at
                      least what bsvd_workspace_size reports, in host
                      memory for the cpu backend and device memory for the
                      cuda backend; smaller gives
                      BSVD_STATUS_WORKSPACE_TOO_SMALL. (cuda: where the
                      blocked path uses cuBLAS, its handle -- created once
                      per thread and device, and kept -- holds memory of
                      its own.) */
  size_t workspace_bytes; /* size of workspace; must be 0 when workspace
                      is NULL */
  int *path; /* optional output (NULL: not reported): host array of
                      batch entries, the bsvd_path_t that solved each
                      matrix */
  int qr; /* cuda, tall or wide matrices: factor A = QR (A^H = QR
                      when m < n) first and solve R with the one-kernel
                      solver (BSVD_PATH_CUDA_QR). 0 (the default) = auto:
                      when max(m, n) >= 32 min(m, n), max(m, n) >= 1000,
                      and the matrix is small enough (it fits the
                      one-kernel solver itself, or has at most 32 columns
                      and 384 KiB, e.g. d 3000 x 16, 2000 x 24,
                      1024 x 32); 1 = whenever R fits the one-kernel
                      solver; -1 = never. See docs/design/qr.md. */
  bsvd_pair_solver_t pair_solver; /* blocked variant, see
                      bsvd_pair_solver_t; default BSVD_PAIR_AUTO */
  int precondition; /* QR with column pivoting first (the xGEJSV
                      preconditioning): A P = Q R (A^H P = Q R when m < n),
                      one-sided Jacobi on R^H, then U = Q V_R and
                      V = P U_R (swapped when m < n). It saves sweeps on
                      slowly converging matrices (graded, structured,
                      ill-conditioned, rank-deficient) and costs time on
                      fast-converging (random, well-conditioned) ones.
                      1 = on for every matrix the call iterates on (cuda:
                      the matrices of the blocked path, reported as
                      BSVD_PATH_CUDA_QRCP; those of the one-kernel solver
                      and of the qr option keep their paths); -1 = never;
                      0 (the default) = auto. cuda, auto: the matrices
                      of the blocked path with min(m,n) >= 128 whose
                      shape holds much work in the call (count x
                      max(m,n) x min(m,n)^2 >= 200 x 128^3: 200 of 128^2,
                      25 of 256^2, one of 1024^2) take the route of 2,
                      which tests their Gram matrices first and runs the
                      plain blocked path where the preconditioning is not
                      predicted to pay
                      (docs/design/decisions/0022-gram-route-by-default.md);
                      the others are QR-preconditioned by a cost rule:
                      every such matrix of the call when each fits the
                      factorization's on-chip limit (about 600 columns d,
                      400 z) and the predicted extra time on
                      fast-converging input is small -- typically calls
                      with few or large matrices, not many small ones.
                      cpu, auto: never. Use 1 for graded, structured or
                      ill-conditioned input in large batches. See
                      docs/design/qrcp.md.
                      2 = the Gram matrix's eigenvectors first (mixed
                      precision): V0 = eigenvectors of A^H A formed in
                      single precision (s and d: float, c and z: complex
                      float), made orthonormal in the working precision,
                      then one-sided Jacobi on A V0 (A^H V0 when m < n)
                      and V = V0 V_J. Fewer sweeps on well-conditioned
                      matrices (random d 256^2: about 4.5 instead of 11);
                      the accuracy contract (docs/accuracy.md) is the
                      same, but the high relative accuracy of small
                      singular values that one-sided Jacobi has on graded
                      matrices is not kept. cuda: the matrices of the
                      blocked path (BSVD_PATH_CUDA_GRAM), the _async
                      forms too; cpu: every matrix the call iterates on.
                      Pays on batches of well- to moderately conditioned
                      matrices of 128 or more columns (d 1000 x 256^2
                      random: 2.3x faster); costs time on matrices that
                      converge in few sweeps anyway and on mixed-size
                      batches (one eigensolver call per shape). See
                      docs/design/gram.md. For the high relative accuracy
                      of tiny singular values on the GPU, set -1 or 1:
                      the default may take this route. */
  int wcycle_blocks; /* blocked variant: a second level below the block
                      pairs (the W-cycle). 0 or 1 (the default) = one
                      level: the blocks of block_size columns meet in the
                      ordering. r = 2 ... 64: outer blocks of r blocks
                      meet round-robin, and each outer pair [A_I A_J]
                      (2 r block_size columns) is rotated one level down
                      by wcycle_sweeps round-robin sweeps over its 2 r
                      blocks. A matrix of at most r blocks stays at one
                      level. Needs ordering = BSVD_ORDERING_ROUND_ROBIN
                      (else -position of opts). No automatic choice ever
                      selects it: it runs only when set. See
                      docs/design/blocked.md. */
  int wcycle_sweeps; /* sweeps one level down per outer pair: 0 (the
                      default) = 1; 1 ... 8 */
  size_t struct_size; /* the size of the struct the caller filled:
                      bsvd_options_init sets sizeof(bsvd_options_t). The
                      library reads only the fields within struct_size
                      bytes and takes the defaults for later fields, so a
                      caller built against this header keeps working when
                      a later version adds fields (they go after this
                      one). 0 means a caller that filled the struct itself
                      without bsvd_options_init: its fields of this version
                      are read as given. A nonzero value below
                      offsetof(bsvd_options_t, struct_size) +
                      sizeof(size_t) is invalid (-position of opts). A
                      caller that sets every field by hand sets this one
                      too (0 or sizeof(bsvd_options_t)). */
  /* Fields added after struct_size (a caller whose struct_size ends
     before them gets their defaults). */
  int device_count; /* cuda, blocking calls on host data: the GPUs that
                      share the batch. 0 (the default): the current
                      device alone; BSVD_DEVICES_ALL (-1): every visible
                      GPU; n > 0: the n distinct ordinals in devices. The
                      batch is cut into contiguous ranges of about equal
                      work, one per device, each solved there as a call of
                      its own (the current device's on opts->stream, the
                      others on streams of the library's) on a host
                      thread of its own; the call returns when all are
                      done. Each range's results have the bits of a
                      one-device call on that range. Not with
                      opts->workspace (one device's memory). Device data
                      is solved on the device that holds it, and the
                      _async forms only enqueue there: device_count does
                      not apply to them. See docs/multi-gpu.md. */
  const int *devices; /* device_count > 0: the CUDA device ordinals */
} bsvd_options_t;

/* opts->device_count: every visible CUDA device. */
#define BSVD_DEVICES_ALL (-1)

/* Fills *opts with the defaults above (struct_size included). */
void bsvd_options_init(bsvd_options_t *opts);

/* ---- Names ------------------------------------------------------------------
 * Every enum value has a canonical short name, the one the bsvd command-line
 * tool and the Python package take and print: the enumerator's suffix in
 * lower case with '-' for '_' (BSVD_PATH_CUDA_QRCP: cuda-qrcp,
 * BSVD_ORDERING_ROUND_ROBIN: round-robin), except BSVD_PAIR_EVD_SM and
 * BSVD_PAIR_SVD_SM (evd, svd). Status codes have phrases with spaces
 * (BSVD_STATUS_ALLOC_FAILED: allocation failed).
 *
 *   bsvd_<enum>_string(value)  the name; NULL when value is not an
 *       enumerator (outside 0 ... BSVD_<ENUM>_COUNT - 1), so counting up
 *       from 0 until NULL lists them all. The strings are static.
 *   bsvd_<enum>_from_string(name, &value)  the value of a name, '_' also
 *       accepted for '-' (round_robin); case-sensitive. Returns 0 and sets
 *       *value; -1 for a NULL or unknown name, -2 for a NULL value, with
 *       *value untouched and bsvd_last_error() listing the valid names. */
const char *bsvd_job_string(int job);
const char *bsvd_backend_string(int backend);
const char *bsvd_ordering_string(int ordering);
const char *bsvd_variant_string(int variant);
const char *bsvd_pair_solver_string(int pair_solver);
const char *bsvd_path_string(int path);
const char *bsvd_status_code_string(int status);
bsvd_status_t bsvd_job_from_string(const char *name, int *value);
bsvd_status_t bsvd_backend_from_string(const char *name, int *value);
bsvd_status_t bsvd_ordering_from_string(const char *name, int *value);
bsvd_status_t bsvd_variant_from_string(const char *name, int *value);
bsvd_status_t bsvd_pair_solver_from_string(const char *name, int *value);
bsvd_status_t bsvd_path_from_string(const char *name, int *value);
bsvd_status_t bsvd_status_code_from_string(const char *name, int *value);

/* ---- Options as data ---------------------------------------------------------
 * Every field of bsvd_options_t that says how a batch is solved (backend,
 * ordering, variant, block_size, tol, max_sweeps, eig_sweeps, num_threads,
 * qr, pair_solver, precondition, wcycle_blocks, wcycle_sweeps) is one row
 * of the library's option table, described here for programs that build
 * option parsers: the Python package's keywords and the bsvd command-line
 * tool's flags are made from it. The per-call fields (stream, workspace,
 * workspace_bytes, path, struct_size, device_count, devices) are not rows.
 *
 *   bsvd_option_count()      the number of rows, BSVD_OPTION_COUNT
 *   bsvd_option_info(i)      row i (0 ... count - 1), static; NULL outside
 *   bsvd_option_find(name)   the row of a field name ("max_sweeps"), or -1
 *   bsvd_option_set(opts, i, value)   sets row i's field of *opts from a
 *       double (enums and ints: a whole number); -1 for a NULL opts, -2
 *       for an i outside the rows, -3 for a value outside lo ... hi or not
 *       whole for an integer field, with bsvd_last_error() naming the
 *       field, its range and the value; *opts is untouched then.
 *   bsvd_option_get(opts, i, &value)  row i's field of *opts as a double
 *       (-1, -2 as above; -3 for a NULL value). */
typedef enum {
  BSVD_OPTION_ENUM = 0, /* values 0 ... hi, each named by value_name */
  BSVD_OPTION_INT = 1, /* whole numbers lo ... hi */
  BSVD_OPTION_REAL = 2, /* numbers lo ... hi */
  BSVD_OPTION_KIND_MAX_ENUM = 0x7fffffff
} bsvd_option_kind_t;
typedef struct {
  const char *name; /* the bsvd_options_t field */
  bsvd_option_kind_t kind;
  double lo, hi; /* the valid values: lo <= value <= hi */
  double init; /* bsvd_options_init's value */
  const char *(*value_name)(int value); /* BSVD_OPTION_ENUM: the enum's
                      bsvd_<enum>_string; NULL for the other kinds */
  const char *help; /* one line */
} bsvd_option_info_t;
#define BSVD_OPTION_COUNT 13
int bsvd_option_count(void);
const bsvd_option_info_t *bsvd_option_info(int option);
int bsvd_option_find(const char *name);
bsvd_status_t bsvd_option_set(bsvd_options_t *opts, int option, double value);
bsvd_status_t bsvd_option_get(const bsvd_options_t *opts, int option, double *value);

/* Short description of any status, never NULL: the status code's name
 * (bsvd_status_code_string), "invalid argument" for a negative status,
 * "unknown status" for any other value. */
const char *bsvd_status_string(bsvd_status_t status);

/* Detail of the last non-zero status returned in this thread, e.g.
 * "argument 5 (lda) = 3 is less than max(1, m) = 7". Empty if none. */
const char *bsvd_last_error(void);

/* 1 when the cuda backend is built, a GPU is visible and the current GPU
 * can run this build (compute capability 8.0 or newer, and a kernel image
 * for it: SASS of its architecture or PTX the driver can compile; checked
 * once per device), else 0. */
int bsvd_cuda_available(void);

/* Why bsvd_cuda_available() is 0, one sentence, e.g. "GPU 0 (Tesla V100,
 * compute capability 7.0) is not supported: bsvd needs compute capability
 * 8.0 or newer (this build holds CUDA architectures 80-real ...)"; "" when
 * it is 1. Never NULL; valid until the next call in the same thread. A
 * cuda call that cannot run returns BSVD_STATUS_BACKEND_UNAVAILABLE with
 * the same sentence in bsvd_last_error(), before any work. */
const char *bsvd_cuda_status(void);

/* The library's version string, e.g. "0.1.0". */
const char *bsvd_version(void);

/* Workspace the call would use for a uniform batch (bytes): the size
 * opts->workspace must have. The backend is resolved as the call resolves
 * it for host data. precision is 's', 'd', 'c' or 'z'. Arguments are
 * checked as by the solver calls (-position, bsvd_last_error()). */
bsvd_status_t bsvd_workspace_size(char precision, bsvd_job_t job, int m, int n, int batch,
                                  const bsvd_options_t *opts, size_t *bytes);
/* The same for a variable-size batch (m, n: host arrays of batch sizes). */
bsvd_status_t bsvd_workspace_size_v(char precision, bsvd_job_t job, const int *m, const int *n,
                                    int batch, const bsvd_options_t *opts, size_t *bytes);

/* The plan of a call as text: which path each matrix would take and the
 * parameters of each group -- the table `bsvd plan` prints -- for a uniform
 * batch (bsvd_explain) or a variable-size one (bsvd_explain_v: m, n host
 * arrays of batch sizes), resolved as the call resolves it for host data.
 * Nothing is solved. Writes at most len bytes, the terminating NUL
 * included, into buf (which may be NULL when len = 0); *needed (needed may
 * be NULL) receives the length of the whole text plus one. Arguments are
 * checked as by bsvd_workspace_size; buf is argument 7. */
bsvd_status_t bsvd_explain(char precision, bsvd_job_t job, int m, int n, int batch,
                           const bsvd_options_t *opts, char *buf, size_t len, size_t *needed);
bsvd_status_t bsvd_explain_v(char precision, bsvd_job_t job, const int *m, const int *n, int batch,
                             const bsvd_options_t *opts, char *buf, size_t len, size_t *needed);

#define BSVD_DECLARE_GESVJ(p, T, R)                                                                \
  bsvd_status_t bsvd_##p##gesvj_strided_batched(                                                   \
      bsvd_job_t job, int m, int n, const T *A, int lda, int64_t strideA, R *S, int64_t strideS,   \
      T *U, int ldu, int64_t strideU, T *V, int ldv, int64_t strideV, int *info, int *sweeps,      \
      int batch, const bsvd_options_t *opts);                                                      \
  bsvd_status_t bsvd_##p##gesvj_batched(bsvd_job_t job, int m, int n, const T *const *A_array,     \
                                        int lda, R *const *S_array, T *const *U_array, int ldu,    \
                                        T *const *V_array, int ldv, int *info, int *sweeps,        \
                                        int batch, const bsvd_options_t *opts);                    \
  bsvd_status_t bsvd_##p##gesvj_vbatched(                                                          \
      bsvd_job_t job, const int *m, const int *n, const T *const *A_array, const int *lda,         \
      R *const *S_array, T *const *U_array, const int *ldu, T *const *V_array, const int *ldv,     \
      int *info, int *sweeps, int batch, const bsvd_options_t *opts);

/* Arguments, in order (the positions of -i):
 *   strided_batched: job, m, n, A, lda, strideA, S, strideS, U, ldu,
 *     strideU, V, ldv, strideV, info, sweeps, batch, opts;
 *   batched and vbatched: job, m, n, A_array, lda, S_array, U_array, ldu,
 *     V_array, ldv, info, sweeps, batch, opts (vbatched: m, n, lda, ldu, ldv
 *     are host arrays of batch entries).
 *   m, n >= 0; lda >= max(1, m); ldu >= max(1, m) and ldv >= max(1, n) when
 *   job = VECTORS; strides at least the size of one matrix (lda * n,
 *   min(m, n), ldu * min(m, n), ldv * min(m, n)); info non-NULL (batch
 *   entries); sweeps may be NULL; opts may be NULL (defaults). */
BSVD_DECLARE_GESVJ(s, float, float)
BSVD_DECLARE_GESVJ(d, double, double)
BSVD_DECLARE_GESVJ(c, bsvd_cfloat, float)
BSVD_DECLARE_GESVJ(z, bsvd_cdouble, double)

#undef BSVD_DECLARE_GESVJ

/* ---- Hyperbolic SVD ---------------------------------------------------------
 *
 * bsvd_<p>gehsvj_strided_batched computes, for each G (m x n, m >= n) of a
 * uniform batch and its signature J = diag(I_nplus[b], -I_(n - nplus[b])),
 * the hyperbolic SVD (HBJ eq. 2.10; docs/hsvd.md)
 *   G = U diag(S) V^H,   U^H U = I,   V^H J V = J,
 * by one-sided Jacobi with hyperbolic rotations between the two sides of
 * nplus. It exists when rank(G) = rank(G J G^H); then the eigenvalues of
 * H = G J G^H are +S[j]^2 for j < nplus[b], -S[j]^2 for j >= nplus[b]
 * (and m - n zeros), with eigenvectors U[:, j] -- without forming H.
 *   S  n values: S[0 ... nplus-1] (the +1 side) descending, then
 *      S[nplus ... n-1] (the -1 side) descending;
 *   U  m x n with orthonormal columns;
 *   V  n x n, J-unitary; G = U diag(S) V^H as for gesvj. (The accumulated
 *      transformation, G T = U diag(S), is T = J V J = V^-H.)
 * The forms: strided_batched, batched and vbatched, each also _async;
 * their arguments are those of the bsvd_<p>gesvj_<form> of the same name
 * with nplus inserted as argument 4: a host array of batch entries, 0 <=
 * nplus[b] <= n[b] (nplus[b] = 0 or n[b] is the ordinary SVD). m < n
 * returns -3 (n). info[b]: 0, > 0 not converged, BSVD_INFO_NONFINITE,
 * BSVD_INFO_HYPERBOLIC_BREAKDOWN.
 * Options: as for gesvj, except precondition 1 or 2 (NOT_SUPPORTED: column
 * pivoting would permute J); opts->workspace is sized by
 * bsvd_workspace_size_hsvd (below), and the cpu backend ignores it. The paths (docs/hsvd.md): the one-kernel
 * solver, the unpivoted QR front end, the blocked path with its one-sided
 * pair solver, several GPUs (device_count), host data streamed in chunks;
 * no register tier (tiny matrices take the one-kernel solver). What no GPU
 * path takes is solved on the cpu, as for gesvj; the _async forms then
 * return NOT_SUPPORTED, as theirs do. */
/* The workspace of the HSVD forms (opts->workspace, as bsvd_workspace_size
 * for gesvj): for host data, and enough for the _async forms' device data;
 * 0 on the cpu backend, whose HSVD allocates its own scratch. */
bsvd_status_t bsvd_workspace_size_hsvd(char precision, bsvd_job_t job, int m, int n, int batch,
                                       const bsvd_options_t *opts, size_t *bytes);
bsvd_status_t bsvd_workspace_size_hsvd_v(char precision, bsvd_job_t job, const int *m, const int *n,
                                         int batch, const bsvd_options_t *opts, size_t *bytes);

#define BSVD_DECLARE_GEHSVJ(p, T, R, suffix)                                                       \
  bsvd_status_t bsvd_##p##gehsvj_strided_batched##suffix(                                          \
      bsvd_job_t job, int m, int n, const int *nplus, const T *A, int lda, int64_t strideA, R *S,  \
      int64_t strideS, T *U, int ldu, int64_t strideU, T *V, int ldv, int64_t strideV, int *info,  \
      int *sweeps, int batch, const bsvd_options_t *opts);                                         \
  bsvd_status_t bsvd_##p##gehsvj_batched##suffix(                                                  \
      bsvd_job_t job, int m, int n, const int *nplus, const T *const *A_array, int lda,            \
      R *const *S_array, T *const *U_array, int ldu, T *const *V_array, int ldv, int *info,        \
      int *sweeps, int batch, const bsvd_options_t *opts);                                         \
  bsvd_status_t bsvd_##p##gehsvj_vbatched##suffix(                                                 \
      bsvd_job_t job, const int *m, const int *n, const int *nplus, const T *const *A_array,       \
      const int *lda, R *const *S_array, T *const *U_array, const int *ldu, T *const *V_array,     \
      const int *ldv, int *info, int *sweeps, int batch, const bsvd_options_t *opts);
BSVD_DECLARE_GEHSVJ(s, float, float, )
BSVD_DECLARE_GEHSVJ(d, double, double, )
BSVD_DECLARE_GEHSVJ(c, bsvd_cfloat, float, )
BSVD_DECLARE_GEHSVJ(z, bsvd_cdouble, double, )
BSVD_DECLARE_GEHSVJ(s, float, float, _async)
BSVD_DECLARE_GEHSVJ(d, double, double, _async)
BSVD_DECLARE_GEHSVJ(c, bsvd_cfloat, float, _async)
BSVD_DECLARE_GEHSVJ(z, bsvd_cdouble, double, _async)
#undef BSVD_DECLARE_GEHSVJ

/* ---- Stream-ordered forms: enqueue only ------------------------------------
 *
 * bsvd_<p>gesvj_<form>_async takes the arguments of bsvd_<p>gesvj_<form>
 * (same order, same positions for -i) and the same results, but only
 * enqueues the work on opts->stream and returns. No call waits for the
 * device, copies to the host or allocates outside the stream's order:
 *
 *   - Memory: A, S, U, V, info and sweeps in device memory of the current
 *     device (host memory: -position of the argument). The pointer, size
 *     and leading-dimension arrays of the batched / vbatched forms are host
 *     memory, read before the call returns (free them when you like).
 *   - What may be read when: S, U, V, info and sweeps hold the results once
 *     opts->stream has passed the call (cudaStreamSynchronize,
 *     cudaEventSynchronize on an event recorded after it, or any work
 *     enqueued after it on the stream); A, S, U, V, info, sweeps and the
 *     workspace must stay allocated and untouched by other streams until
 *     then. A is read, never written.
 *   - Workspace: opts->workspace (device memory, at least
 *     bsvd_workspace_size_async bytes), or NULL: allocated and freed in
 *     stream order on opts->stream (cudaMallocAsync / cudaFreeAsync).
 *     bsvd_workspace_size answers for host data too (it adds the staging
 *     of A, S, U and V), so it is enough but often much more.
 *   - opts->path (host) is written before the call returns, with the path
 *     each matrix is planned for (BSVD_PATH_TRIVIAL for an empty one); a
 *     matrix that turns out to hold NaN or Inf reports its planned path
 *     here and BSVD_INFO_NONFINITE in info.
 *   - The cuda backend only: opts->backend = BSVD_BACKEND_CPU is -position
 *     of opts. A call whose plan would solve any matrix on the host (an
 *     ordering other than round-robin for a matrix too large for the
 *     one-kernel solver, a block size beyond the GPU's) returns
 *     BSVD_STATUS_NOT_SUPPORTED and enqueues nothing.
 *   - CUDA graphs: a call may be made while opts->stream is being captured
 *     (cudaStreamBeginCapture, any mode). Replaying the graph solves the
 *     current contents of the same A into the same outputs, with the same
 *     bits as an uncaptured call. With opts->workspace given, the captured
 *     graph allocates nothing; with NULL it holds an allocation and a free
 *     node. The blocked path's sweep loop is a conditional (while) node:
 *     the device decides when every matrix has converged; the default
 *     Gram route's test (opts->precondition) is a pair of conditional
 *     (if) nodes: the device takes the preconditioned or the plain
 *     iteration.
 *   - Errors: argument errors as the blocking forms (nothing enqueued); a
 *     CUDA error while enqueueing is BSVD_STATUS_DEVICE_ERROR; an error
 *     while the work runs is reported by the stream, as for any kernel.
 *   - opts->stream: a stream of the current device (NULL: the legacy
 *     default stream, which cannot be captured). */
#define BSVD_DECLARE_GESVJ_ASYNC(p, T, R)                                                          \
  bsvd_status_t bsvd_##p##gesvj_strided_batched_async(                                             \
      bsvd_job_t job, int m, int n, const T *A, int lda, int64_t strideA, R *S, int64_t strideS,   \
      T *U, int ldu, int64_t strideU, T *V, int ldv, int64_t strideV, int *info, int *sweeps,      \
      int batch, const bsvd_options_t *opts);                                                      \
  bsvd_status_t bsvd_##p##gesvj_batched_async(                                                     \
      bsvd_job_t job, int m, int n, const T *const *A_array, int lda, R *const *S_array,           \
      T *const *U_array, int ldu, T *const *V_array, int ldv, int *info, int *sweeps, int batch,   \
      const bsvd_options_t *opts);                                                                 \
  bsvd_status_t bsvd_##p##gesvj_vbatched_async(                                                    \
      bsvd_job_t job, const int *m, const int *n, const T *const *A_array, const int *lda,         \
      R *const *S_array, T *const *U_array, const int *ldu, T *const *V_array, const int *ldv,     \
      int *info, int *sweeps, int batch, const bsvd_options_t *opts);

/* The workspace of an _async call (device data): as bsvd_workspace_size,
 * same arguments and positions. */
bsvd_status_t bsvd_workspace_size_async(char precision, bsvd_job_t job, int m, int n, int batch,
                                        const bsvd_options_t *opts, size_t *bytes);
bsvd_status_t bsvd_workspace_size_async_v(char precision, bsvd_job_t job, const int *m,
                                          const int *n, int batch, const bsvd_options_t *opts,
                                          size_t *bytes);

BSVD_DECLARE_GESVJ_ASYNC(s, float, float)
BSVD_DECLARE_GESVJ_ASYNC(d, double, double)
BSVD_DECLARE_GESVJ_ASYNC(c, bsvd_cfloat, float)
BSVD_DECLARE_GESVJ_ASYNC(z, bsvd_cdouble, double)

#undef BSVD_DECLARE_GESVJ_ASYNC

#ifdef __cplusplus
} /* extern "C" */
#endif

/* The batched BLAS and LAPACK building blocks: GEMV, GEBRD, TRSV. */
#include "blas.h"

#endif /* BSVD_BSVD_H */
