/*
 * bsvd: batched singular value decomposition on CPUs and GPUs.
 *
 * C API. Every entry point computes, for each matrix A (m x n, column-major)
 * of a batch, the reduced SVD  A = U * diag(S) * V^H  with k = min(m, n):
 *   S  k singular values, non-negative, sorted descending;
 *   U  m x k with orthonormal columns;   V  n x k with orthonormal columns.
 * Wide matrices (m < n) are solved through A^H and the factors swapped.
 *
 * Names follow LAPACK: bsvd_<p>gesvj_<form>, p in {s, d, c, z}, form in
 *   strided_batched  one array, matrix b at A + b * strideA (uniform size)
 *   batched          an array of pointers, one per matrix (uniform size)
 *   vbatched         an array of pointers with per-matrix m, n and leading
 *                    dimensions (variable size)
 *
 * Two levels of error (LAPACK / MAGMA convention):
 *   - the call returns a status: 0 on success, -i when argument i (1-based,
 *     in the order of the prototype) is invalid, or a positive
 *     bsvd_status_code for failures that are not an argument's fault.
 *     bsvd_last_error() gives a sentence naming the argument and its value.
 *   - each matrix gets info[b]: 0 converged; > 0 did not converge within
 *     max_sweeps (the output is still returned and usually useful);
 *     BSVD_INFO_NONFINITE when the matrix holds NaN or Inf (its S, U, V are
 *     set to NaN; the rest of the batch is unaffected).
 *
 * Memory: with the cpu backend every pointer is host memory. With the cuda
 * backend the matrices (A, S, U, V, info, sweeps) may all be in host memory
 * or all in device memory; the pointer arrays and size arrays of the
 * batched / vbatched forms are always host memory. Calls return when the
 * results are written.
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
typedef struct { float re, im; } bsvd_cfloat;
typedef struct { double re, im; } bsvd_cdouble;

typedef int bsvd_status_t;

/* Positive status codes (negative ones name an argument, see above). */
enum bsvd_status_code {
  BSVD_STATUS_SUCCESS = 0,
  BSVD_STATUS_BACKEND_UNAVAILABLE = 1, /* backend not built, or no GPU */
  BSVD_STATUS_NOT_SUPPORTED = 2,       /* valid request this build cannot do */
  BSVD_STATUS_ALLOC_FAILED = 3,        /* host or device allocation failed */
  BSVD_STATUS_DEVICE_ERROR = 4,        /* a CUDA call failed */
  BSVD_STATUS_WORKSPACE_TOO_SMALL = 5, /* opts->workspace_bytes too small */
  BSVD_STATUS_INTERNAL_ERROR = 6
};
/* The codes are 0 ... BSVD_STATUS_COUNT - 1. */
#define BSVD_STATUS_COUNT 7

/* Per-matrix info code for NaN or Inf in the input. */
#define BSVD_INFO_NONFINITE (-1)

/* bsvd_options_t::eig_sweeps: let the library choose per matrix. */
#define BSVD_EIG_SWEEPS_AUTO (-1)

/* Every enum below is dense -- its enumerators are 0 ... BSVD_<ENUM>_COUNT
 * - 1 -- and ends in a _MAX_ENUM entry of 0x7fffffff so that any int a C
 * caller passes is a valid value of the type (C++ sanitizers reject loads
 * of out-of-range enum values); the library checks the range and returns
 * -position for values that are not listed. */
typedef enum {
  BSVD_JOB_VALUES = 0,  /* singular values only; U and V are not referenced */
  BSVD_JOB_VECTORS = 1, /* singular values and economy U (m x k), V (n x k) */
  BSVD_JOB_MAX_ENUM = 0x7fffffff /* makes every int a valid value (checked) */
} bsvd_job_t;
#define BSVD_JOB_COUNT 2

typedef enum {
  BSVD_BACKEND_AUTO = 0, /* cuda when a GPU is visible, else cpu */
  BSVD_BACKEND_CPU = 1,
  BSVD_BACKEND_CUDA = 2,
  BSVD_BACKEND_MAX_ENUM = 0x7fffffff
} bsvd_backend_t;
#define BSVD_BACKEND_COUNT 3

/* Parallel orderings of the column (block) pairs within a sweep. */
typedef enum {
  BSVD_ORDERING_ROUND_ROBIN = 0, /* Brent-Luk round-robin (default) */
  BSVD_ORDERING_ODD_EVEN = 1,    /* odd-even transposition ordering */
  /* HBJ (Novakovic, SISC 2015) Sec. 3: the parallel ordering closest to the
     sequential row-cyclic (resp. column-cyclic) ordering -- the
     lexicographically first sequence of steps of disjoint pairs when the
     pairs are ranked row by row (resp. column by column) of the upper
     triangle -- run in reverse, as HBJ do. Orders whose odd part exceeds 11
     are padded with idle slots (n = 100: 111 steps instead of 99).
     Table-based; so far only the cpu backend implements them (the cuda
     kernel does not read the table yet). */
  BSVD_ORDERING_ROW_PARALLEL = 2,
  BSVD_ORDERING_COLUMN_PARALLEL = 3,
  BSVD_ORDERING_MAX_ENUM = 0x7fffffff
} bsvd_ordering_t;
#define BSVD_ORDERING_COUNT 4

typedef enum {
  BSVD_VARIANT_AUTO = 0,      /* let the planner choose */
  BSVD_VARIANT_UNBLOCKED = 1, /* column-pair rotations */
  BSVD_VARIANT_BLOCKED = 2,   /* block-column pairs: Gram, Jacobi EVD, update */
  BSVD_VARIANT_MAX_ENUM = 0x7fffffff
} bsvd_variant_t;
#define BSVD_VARIANT_COUNT 3

/* How the blocked path finds the rotation of a block-column pair
   A_ij = [A_i A_j] (m x k, k <= 2 block_size): the levels of the W-cycle
   workflow (WCYCLE Algorithm 2). The shared-memory solvers need the pair
   to fit in shared memory; a matrix whose pair does not fit uses GRAM. */
typedef enum {
  BSVD_PAIR_AUTO = 0,   /* per matrix, from its size and precision */
  BSVD_PAIR_GRAM = 1,   /* G = A_ij^H A_ij in global memory, Jacobi EVD of G,
                           A_ij Q: three launches per step (MAGMA-SVD) */
  BSVD_PAIR_EVD_SM = 2, /* the same with A_ij held in shared memory:
                           one launch per step, A_ij read and written once */
  BSVD_PAIR_SVD_SM = 3, /* one-sided Jacobi on A_ij in shared memory; its
                           right singular vectors are the rotation
                           (WCYCLE Observation 1) */
  BSVD_PAIR_MAX_ENUM = 0x7fffffff
} bsvd_pair_solver_t;
#define BSVD_PAIR_SOLVER_COUNT 4

/* Which path a matrix took (reported through bsvd_options_t::path). */
typedef enum {
  BSVD_PATH_TRIVIAL = 0, /* empty matrix or non-finite input: nothing solved */
  BSVD_PATH_CPU_UNBLOCKED = 1,
  BSVD_PATH_CPU_BLOCKED = 2,
  BSVD_PATH_CUDA_FUSED = 3,  /* one-kernel shared-memory solver */
  BSVD_PATH_CUDA_BLOCKED = 4, /* blocked path, pairs by BSVD_PAIR_GRAM */
  BSVD_PATH_CUDA_QR = 5,      /* Householder QR, the fused kernel on R, U = Q U_R */
  BSVD_PATH_CUDA_PAIR_EVD = 6, /* blocked path, pairs by BSVD_PAIR_EVD_SM */
  BSVD_PATH_CUDA_PAIR_SVD = 7, /* blocked path, pairs by BSVD_PAIR_SVD_SM */
  BSVD_PATH_CUDA_QRCP = 8,     /* QR with column pivoting, the blocked path
                                  on R^H (opts.precondition) */
  BSVD_PATH_MAX_ENUM = 0x7fffffff
} bsvd_path_t;
#define BSVD_PATH_COUNT 9

typedef struct {
  bsvd_backend_t backend;   /* default AUTO */
  bsvd_ordering_t ordering; /* default ROUND_ROBIN */
  bsvd_variant_t variant;   /* default AUTO */
  int block_size;  /* columns per block of the blocked variant; 0 = auto
                      (16). The cuda backend's blocked path takes widths
                      up to 16 in every precision and 17 ... 32 in s, d, c
                      (pairs by GRAM only; slower than 16 on the H100 so
                      far, docs/perf/blocked-path.md); a wider block runs
                      the matrix on the CPU backend. */
  double tol;      /* rotate a pair when |a_i^H a_j| > tol ||a_i|| ||a_j||;
                      <= 0 selects the default sqrt(m) * u (u = unit
                      roundoff of the precision), as LAPACK's xGESVJ */
  int max_sweeps;  /* <= 0 selects the default, 80 */
  int eig_sweeps;  /* blocked variant: sweeps of the inner Gram-matrix
                      eigensolver; BSVD_EIG_SWEEPS_AUTO (-1, the default)
                      = one, and two for a matrix once its convergence
                      stalls (src/core/inner_sweeps.hpp); 0 = until
                      converged; k > 0 = k (1 = the inexact mode) */
  int num_threads; /* cpu backend: threads over the batch; 0 = all cores */
  void *stream;    /* cuda backend: a cudaStream_t; NULL = default stream */
  void *workspace; /* caller's workspace, or NULL: the library allocates.
                      (cuda: where the blocked path's Gram stage uses
                      cuBLAS -- tuning.hpp -- its handle, created once per
                      thread and device and kept, holds memory of its own) */
  size_t workspace_bytes;
  int *path;       /* optional output: host array of batch bsvd_path_t */
  int qr;          /* cuda backend, tall or wide matrices: factor A = QR
                      (A^H = QR when m < n) first and solve R with the
                      fused kernel. 0 = auto (when max(m, n) >= 32 min(m, n)
                      and max(m, n) >= 1000, and A itself fits the fused
                      kernel or has at most 32 columns and 384 KiB, e.g.
                      d 3000x16, 2000x24, 1024x32; see
                      docs/perf/qr-path.md), 1 = whenever R fits,
                      -1 = never. The cpu backend ignores it. */
  bsvd_pair_solver_t pair_solver; /* blocked variant, see bsvd_pair_solver_t;
                      default AUTO. The cpu backend runs SVD_SM (the twin
                      of the GPU's) and otherwise GRAM. */
  int precondition; /* QR with column pivoting first (HBJ Sec. 2, the
                      xGEJSV preconditioning): A P = Q R (A^H P = Q R when
                      m < n), one-sided Jacobi on R^H, then U = Q V_R and
                      V = P U_R (swapped when m < n). Fewer sweeps on
                      slowly converging matrices (structured, graded,
                      rank-deficient), little gain on random ones.
                      1 = every matrix the call iterates on (cuda: the
                      matrices of the blocked path, reported as
                      BSVD_PATH_CUDA_QRCP; the fused kernel's and the qr
                      option's keep their own paths), -1 = never, 0 = auto
                      (the default). cuda, auto: every blocked-path matrix
                      of the call is preconditioned when each fits the
                      factorization's thread-block clusters (up to ~600
                      columns d, ~400 z) and a cost model fitted on the
                      H100 predicts at most 10 % extra time on fast-
                      converging (random) input: few or large matrices
                      (e.g. d: up to 2 of 128^2, 9 of 256^2, 38 of
                      512^2, the SuiteSparse batch), not many small ones
                      (tuning.hpp, qrcp_auto_rule). cpu, auto: never.
                      Measured on the H100, d (docs/perf/wcycle.md,
                      Sessions 16-17): ill-conditioned matrices (logrand,
                      geo families) 1.3-2.9x faster, the SuiteSparse batch
                      93 vs 121 ms; random well-conditioned ones 0-33 %
                      slower (the rule keeps the dear cases off), 2x beyond
                      the clusters. Use 1 for graded, structured or
                      ill-conditioned input in large batches. */
  int wcycle_blocks; /* blocked variant: a second level below the block
                      pairs (WCYCLE Algorithm 2, the pairs that go one
                      level down). 0 or 1 = one level (the default): the
                      blocks of block_size columns meet round-robin.
                      r = 2 ... 64: outer blocks of r blocks meet
                      round-robin, and each outer pair [A_I A_J] (2 r
                      block_size columns) is rotated one level down by
                      wcycle_sweeps round-robin sweeps over its 2 r blocks
                      (each block pair as at one level: Gram, eigensolver
                      or pair solver, update). A matrix of at most r blocks
                      stays at one level. Needs ordering = ROUND_ROBIN.
                      Measured on the H100 (docs/perf/wcycle.md, Session
                      21): never faster than one level; r = 2 or 4 with
                      one sweep 1.0-1.3x slower on uniform batches of
                      100 ... 512 square and 1.2-1.3x on the SuiteSparse
                      batch, two sweeps 1.0-1.8x. No automatic choice
                      takes it. */
  int wcycle_sweeps; /* sweeps one level down per outer pair: 0 = 1 (the
                      default), 1 ... 8 */
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
} bsvd_options_t;

/* Fills *opts with the defaults above (struct_size included). */
void bsvd_options_init(bsvd_options_t *opts);

/* Names. Every enum value has a canonical short name, the one the bsvd
 * command-line tool and the Python package take and print (kept in one
 * table per enum, src/core/names.cpp):
 *   bsvd_<enum>_string(value)  the name; NULL when value is not an
 *       enumerator (outside 0 ... BSVD_<ENUM>_COUNT - 1), so counting up
 *       from 0 until NULL lists them all. The strings are static.
 *   bsvd_<enum>_from_string(name, &value)  the value of a name, '_' also
 *       accepted for '-'; case-sensitive. Returns 0 and sets *value; -1 for
 *       a NULL or unknown name, -2 for a NULL value, with *value untouched
 *       and bsvd_last_error() listing the valid names. */
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

/* Short description of any status, never NULL: the status code's name
 * (bsvd_status_code_string), "invalid argument" for a negative status,
 * "unknown status" for any other value. */
const char *bsvd_status_string(bsvd_status_t status);

/* Detail of the last non-zero status returned in this thread, e.g.
 * "argument 5 (lda) = 3 is less than max(1, m) = 7". Empty if none. */
const char *bsvd_last_error(void);

/* 1 when the cuda backend is built and a GPU is visible, else 0. */
int bsvd_cuda_available(void);

const char *bsvd_version(void);

/* Workspace the call would use for a uniform batch (bytes). The backend is
 * resolved as the call would resolve it. precision is 's', 'd', 'c' or 'z'. */
bsvd_status_t bsvd_workspace_size(char precision, bsvd_job_t job, int m, int n,
                                  int batch, const bsvd_options_t *opts,
                                  size_t *bytes);
/* The same for a variable-size batch. */
bsvd_status_t bsvd_workspace_size_v(char precision, bsvd_job_t job,
                                    const int *m, const int *n, int batch,
                                    const bsvd_options_t *opts, size_t *bytes);

#define BSVD_DECLARE_GESVJ(p, T, R)                                            \
  bsvd_status_t bsvd_##p##gesvj_strided_batched(                               \
      bsvd_job_t job, int m, int n, const T *A, int lda, int64_t strideA,      \
      R *S, int64_t strideS, T *U, int ldu, int64_t strideU, T *V, int ldv,    \
      int64_t strideV, int *info, int *sweeps, int batch,                      \
      const bsvd_options_t *opts);                                             \
  bsvd_status_t bsvd_##p##gesvj_batched(                                       \
      bsvd_job_t job, int m, int n, const T *const *A_array, int lda,          \
      R *const *S_array, T *const *U_array, int ldu, T *const *V_array,        \
      int ldv, int *info, int *sweeps, int batch, const bsvd_options_t *opts); \
  bsvd_status_t bsvd_##p##gesvj_vbatched(                                      \
      bsvd_job_t job, const int *m, const int *n, const T *const *A_array,     \
      const int *lda, R *const *S_array, T *const *U_array, const int *ldu,    \
      T *const *V_array, const int *ldv, int *info, int *sweeps, int batch,    \
      const bsvd_options_t *opts);

/* Arguments, in order (strided form): job, m, n, A, lda, strideA, S,
 * strideS, U, ldu, strideU, V, ldv, strideV, info, sweeps, batch, opts.
 *   m, n >= 0; lda >= max(1, m); ldu >= max(1, m) and ldv >= max(1, n) when
 *   job = VECTORS; strides at least the size of one matrix (lda * n,
 *   min(m, n), ldu * min(m, n), ldv * min(m, n)); info non-NULL (batch
 *   entries); sweeps may be NULL; opts may be NULL (defaults). */
BSVD_DECLARE_GESVJ(s, float, float)
BSVD_DECLARE_GESVJ(d, double, double)
BSVD_DECLARE_GESVJ(c, bsvd_cfloat, float)
BSVD_DECLARE_GESVJ(z, bsvd_cdouble, double)

#undef BSVD_DECLARE_GESVJ

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BSVD_BSVD_H */
