// bsvd run, shared by the .npy path (run_npy.cpp), the Matrix Market path
// (run_mtx.cpp) and the command (cmd_run.cpp). Exit status: 0 every input solved and every output
// written (per-matrix info codes, e.g. non-finite input, are in the outputs
// and the summary line); 1 an input file could not be used, the solver
// failed or an output could not be written; 2 a usage error (nothing done).
#pragma once

#include "common.hpp"
#include "ranks.hpp"

#include "testing/io.hpp"
#include "testing/metrics.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace bsvd::cli {

struct RunArgs {
  std::vector<std::string> inputs;
  std::string out = "bsvd-out";
  std::string precision = "d";
  bool values_only = false;
  bool residuals = false; // per-matrix T1 and T2 (metrics.hpp) in the outputs
  bool mpi = false; // the ranks of MPI_COMM_WORLD split the batch (ranks.hpp)
  // >= 0: the hyperbolic SVD with J = diag(I_nplus, -I_(n-nplus)) for every
  // matrix (bsvd_<p>gehsvj_strided_batched; .npy input only)
  int nplus = -1;
  // --subset-index LO:HI / --subset-value VL:VU: selected triplets by
  // gesvdx (.npy input only); subset is then BSVD_RANGE_INDEX or _VALUE
  std::string subset_index, subset_value;
  int subset = BSVD_RANGE_ALL, il = 0, iu = 0;
  double vl = 0, vu = 0;
  SolverArgs solver;
  // Values (and vectors) per matrix in the outputs: k = min(m, n), or the
  // index range's count.
  int64_t room(int64_t k) const { return subset == BSVD_RANGE_INDEX ? iu - il + 1 : k; }
};

// gesvdx's path in the summary: not one of the plan's (bsvd_path_t).
constexpr int kPathSubset = -1;

template <class T> const char *npy_dtype();
template <> inline const char *npy_dtype<float>() { return "f4"; }
template <> inline const char *npy_dtype<double>() { return "f8"; }
template <> inline const char *npy_dtype<std::complex<float>>() { return "c8"; }
template <> inline const char *npy_dtype<std::complex<double>>() { return "c16"; }

// Column-major m x n matrix (leading dimension ld) -> row-major (C order).
template <class T> std::vector<T> row_major(int rows, int cols, const T *src, int ld) {
  std::vector<T> dst(size_t(rows) * cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) dst[size_t(i) * cols + j] = src[i + size_t(j) * ld];
  return dst;
}

// T1 and max(T2u, T2v) of one solved matrix, in units of u.
struct Residual {
  double residual = 0, orthogonality = 0;
};
template <class T>
Residual residual_of(int m, int n, const T *A, const real_t<T> *S, const T *U, const T *V) {
  const testing::Ratios r = testing::accuracy<T, real_t<T>>(
      m, n, A, std::max(1, m), S, U, std::max(1, m), V, std::max(1, n), nullptr);
  return {r.t1, std::max(r.t2u, r.t2v)};
}

// Counts for the run's one-line summary.
struct Tally {
  int count = 0, converged = 0, not_converged = 0, nonfinite = 0, skipped = 0, max_sweeps = 0;
  int breakdown = 0; // --nplus: BSVD_INFO_HYPERBOLIC_BREAKDOWN
  double worst_residual = 0, worst_orthogonality = 0;
  std::map<int, int> paths;
  void add(int info, int sweeps, int path);
  void add(const Residual &r);
  // The counts as text, and the sum of another rank's (ranks.hpp: gather).
  std::string encode() const;
  void merge(const std::string &encoded);
};

const char *path_name(int p);
// A reader's message without its leading "<file name>: " (the caller names
// the file with its full path).
std::string reason(const std::string &file, const std::string &err);
// The run's one line on stdout; ranks > 1 names the number of processes.
void print_summary(const Tally &t, char precision, const RunArgs &a, double total, double solve,
                   int ranks = 1);

int run_npy(const std::string &file, const RunArgs &a, const bsvd_options_t &o, double t0,
            const Ranks &ranks);
int run_mtx(const std::vector<std::string> &files, const RunArgs &a, const bsvd_options_t &o,
            double t0, const Ranks &ranks);

} // namespace bsvd::cli
