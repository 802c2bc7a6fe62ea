// bsvd-bench (`bsvd bench`): side-by-side timings of bsvd and the
// incumbents on the same data in one process. The options and the CPU part
// are in cmd_bench.cpp; the GPU part (bsvd cuda vs cuSOLVER) in
// bench_cuda.cu and its neighbours, built only with CUDA.
#pragma once

#include <bsvd/bsvd.h>

#include <string>
#include <utility>
#include <vector>

namespace CLI {
class App;
}

namespace bsvd::cli {

// The benchmark's options and its run on app (the whole of bsvd-bench).
void add_bench_options(CLI::App &app, int &rc);

struct BenchCase {
  char precision = 'd'; // s d c z
  int m = 0, n = 0, batch = 0;
  std::string family; // generator family name
  bool vectors = true;
  int reps = 5; // timed repetitions (median reported)
  int check_sample = 64; // matrices whose accuracy is checked
  int pair_solver = 0; // cuda: bsvd_pair_solver_t of the bsvd-cuda row;
      // -1 = the automatic choice plus one row per
      // fixed pair solver (the plan comparison)
  bool evd_plans = false; // cuda blocked path: one more row per eigensolver
      // plan (32 / 128 / 256 threads per Gram matrix)
  bool gram_plans = false; // cuda blocked path: one more row per Gram stage
      // (own kernel, cuBLAS)
  std::vector<int> block_sizes; // cuda blocked path: one more row per width
  std::vector<std::pair<int, int>> wcycles; // cuda blocked path: one more row per
      // two-level plan (wcycle_blocks, wcycle_sweeps)
  int eig_sweeps = BSVD_EIG_SWEEPS_AUTO; // bsvd_options_t::eig_sweeps of the bsvd rows
  bool async_rows = false; // cuda: one more row, bsvd-cuda-async (the _async form)
  bool async = false; // this row's calls: the _async form (its note: the host time)
  int device_count = 0; // cuda, != 0: two more rows, the blocking call on host data
  std::vector<int> devices; // on the current GPU and over these (bsvd_options_t's)
  bool hsvd = false; // cuda: the hyperbolic SVD's rows instead (bench_hsvd.cu)
  double hsvd_grade = 0; // > 0: G's columns graded over this many decades
  bool blas = false; // cuda: the batched BLAS / LAPACK rows instead (bench_blas.cu)
  int rank = 0; // cuda, > 0: rows of the top `rank` triplets too (bench_subset.cuh)
};

struct BenchRow {
  std::string solver; // "bsvd-cpu", "lapack-gesvd", "cusolver-gesvdjBatched", ...
  std::string device; // "cpu (N threads)" or the GPU name
  BenchCase c;
  double ms = 0; // median time of one call over the whole batch
  double t1 = 0, t2 = 0, t3 = 0; // worst ratios over the checked sample (units of u)
  bool sorted = true;
  bool pass = false; // all ratios < 30 and sorted
  int max_sweeps = 0; // bsvd: most sweeps in the batch (0 if unknown)
  double gflops = 0; // counted flop model / time (0 if no model)
  std::string note; // e.g. "skipped: m > 32", "refused: status 3"
};

// Counted flop model of one-sided Jacobi with `sweeps` sweeps on m x n
// (m >= n): per pair per sweep one inner product (2m, or 8m complex) plus
// the rotation of two columns of A (6m real, 24m complex ...) and of V.
double jacobi_flops(char precision, int m, int n, bool vectors, double sweeps, long batch);

// Counted flop model of the blocked path with block width nb (k = 2 nb per
// pair, all ceil(n / nb) choose 2 block pairs per sweep): Gram (m k (k + 1),
// one triangle), one inner eigensolver sweep (k - 1 steps of k / 2
// rotations of two rows and two columns of G and two columns of Q, 6 flops
// per entry pair), the re-orthogonalization (4 k^3) and the update of A
// and V (2 (m + n) k^2); times four for complex.
double blocked_flops(char precision, int m, int n, int nb, bool vectors, double sweeps, long batch);

// What the Gram preconditioning adds (path cuda-gram, before its sweeps of
// the blocked path): F^H F (2 m n^2), the eigensolver (~4 n^3: reduction,
// its vectors), two Newton-Schulz steps and the check (10 n^3), W V0
// (2 m n^2) and, with vectors, V0 V_J (2 n^3); times four for complex.
double gram_pre_flops(char precision, int m, int n, bool vectors, long batch);

#if defined(BSVD_WITH_CUDA)
// Runs bsvd (cuda backend) and the cuSOLVER drivers on `A` (host, batch
// column-major m x n matrices, lda = m, stored as the precision's type:
// float, double, std::complex<float>, std::complex<double>), appending one
// row per solver. Returns false (with rows explaining why) without a GPU.
bool bench_gpu(const BenchCase &c, const void *A, std::vector<BenchRow> &rows);
// `bsvd bench --hsvd` (bench_hsvd.cu): the hyperbolic SVD, the SVD and the
// eigensolvers on H = G J G^H, for the case's matrices as G.
bool bench_gpu_hsvd(const BenchCase &c, const void *A, std::vector<BenchRow> &rows);
// `bsvd bench --blas` (bench_blas.cu): GEMV, TRSV, GEBRD and the values
// route (gebrd + bdsv) against cuBLAS and cuSOLVER, s and d.
bool bench_gpu_blas(const BenchCase &c, const void *A, std::vector<BenchRow> &rows);

// The rows of c.device_count (bench_host.cu): the blocking call on the host
// batch A (copies in and out included) on the current GPU, bsvd-cuda-host,
// and over the devices, bsvd-cuda-host-devices (its note: the speedup).
// One matrix so large (m n min(m, n) > 2e9) that its accuracy is checked
// on the GPU (the CPU check's long-double products would take minutes at
// 4096^2): with --devices only the host-data rows run for it.
bool bench_large_one(const BenchCase &c);
template <class T> void bench_host_rows(const BenchCase &c, const T *A, const std::string &dev,
                                        std::vector<BenchRow> &rows);

// The mixed-size batch of Matrix Market files (WCYCLE Sec. V-D): bsvd in
// one variable-size call against cuSOLVER one matrix at a time (gesvdj and
// gesvd per matrix, and the better of the two per matrix), T1-T4 on every
// matrix; prints a per-matrix table (sizes, path, sweeps next to the CPU
// solver's with the same options, cuSOLVER times). wcycles: one more row per
// two-level plan (R, E), T1-T4 on every matrix. precision: s d c z.
bool bench_gpu_mtx(const std::vector<std::string> &files, char precision, int reps, int pair_solver,
                   bool evd_plans, int eig_sweeps, const std::vector<std::pair<int, int>> &wcycles,
                   std::vector<BenchRow> &rows);

// Measures the TLP threshold of the blocked eigensolver's plan choice
// (plan::evd_threads, src/plan/tuning.hpp): uniform batches of n x n random
// matrices of growing count, the eigensolver stage time of each plan
// (32 / 128 / 256 threads per Gram matrix; the plans give the same bits,
// so the same sweeps), and the two thresholds (tau_warp, tau_block) whose
// rule (evd_threads_rule) comes closest to the best plan of every batch
// (least sum of time / best time). Prints the table and the thresholds.
bool bench_tune_tlp(char precision, int n, std::vector<BenchRow> &rows);
#endif

} // namespace bsvd::cli
