// bsvd: batched SVD from the command line.
//   bsvd run    solve a batch from .npy or Matrix Market files, write S, U, V
//   bsvd check  the accuracy suite (T1-T4) over precisions, families, sizes
//   bsvd gen    write test batches (.npy)
//   bsvd bench  time bsvd against LAPACK (and cuSOLVER on a GPU)
#include "common.hpp"
#include "core/batch.hpp"

#include <cstdio>
#include <exception>
#include <iostream>
#include <unistd.h>

namespace bsvd::cli {

void SolverArgs::add_to(CLI::App &app) {
  app.add_option("--backend", backend, "cpu, cuda or auto (cuda when a GPU is visible)")
      ->capture_default_str();
  app.add_option("--ordering", ordering, "round-robin, odd-even, row-parallel or column-parallel")
      ->capture_default_str();
  app.add_option("--variant", variant, "auto, unblocked or blocked")->capture_default_str();
  app.add_option("--block-size", block_size, "columns per block (blocked variant; 0 = auto)")
      ->capture_default_str();
  app.add_option("--tol", tol, "rotation threshold (0 = sqrt(m) * unit roundoff)")->capture_default_str();
  app.add_option("--max-sweeps", max_sweeps, "sweep limit (0 = default 80)")->capture_default_str();
  app.add_option("--eig-sweeps", eig_sweeps, "blocked: inner eigensolver sweeps (-1 = auto: 1, then 2 once a matrix stalls; 0 = converge; 1 = inexact)")
      ->capture_default_str();
  app.add_option("--threads", threads, "CPU threads over the batch (0 = all cores)")->capture_default_str();
  app.add_option("--qr", qr, "cuda: QR preprocessing of tall / wide matrices (0 auto, 1 when R fits, -1 never)")
      ->capture_default_str()
      ->check(CLI::Range(-1, 1));
  app.add_option("--precondition", precondition,
                 "QR with column pivoting first, Jacobi on R^H (1 on, -1 off, 0 auto: cuda by a "
                 "measured cost rule, cpu off)")
      ->capture_default_str()
      ->check(CLI::Range(-1, 1));
  app.add_option("--pair-solver", pair_solver,
                 "blocked variant: how a block pair is rotated: auto, gram, evd (cuda: pair in "
                 "shared memory) or svd (one-sided Jacobi on the pair)")
      ->capture_default_str();
  app.add_option("--wcycle-blocks", wcycle_blocks,
                 "blocked variant: a second level (W-cycle): outer blocks of this many blocks, "
                 "each outer pair rotated by --wcycle-sweeps sweeps over its blocks (0 = one level)")
      ->capture_default_str()
      ->check(CLI::Range(0, detail::kWcycleMaxBlocks));
  app.add_option("--wcycle-sweeps", wcycle_sweeps,
                 "sweeps one level down per outer pair (0 = 1)")
      ->capture_default_str()
      ->check(CLI::Range(0, detail::kWcycleMaxSweeps));
}

bool SolverArgs::to_options(bsvd_options_t &o, std::string &err) const {
  bsvd_options_init(&o);
  if (backend == "auto") o.backend = BSVD_BACKEND_AUTO;
  else if (backend == "cpu") o.backend = BSVD_BACKEND_CPU;
  else if (backend == "cuda") o.backend = BSVD_BACKEND_CUDA;
  else { err = "unknown --backend '" + backend + "' (cpu, cuda, auto)"; return false; }
  if (ordering == "round-robin") o.ordering = BSVD_ORDERING_ROUND_ROBIN;
  else if (ordering == "odd-even") o.ordering = BSVD_ORDERING_ODD_EVEN;
  else if (ordering == "row-parallel") o.ordering = BSVD_ORDERING_ROW_PARALLEL;
  else if (ordering == "column-parallel") o.ordering = BSVD_ORDERING_COLUMN_PARALLEL;
  else {
    err = "unknown --ordering '" + ordering +
          "' (round-robin, odd-even, row-parallel, column-parallel)";
    return false;
  }
  if (variant == "auto") o.variant = BSVD_VARIANT_AUTO;
  else if (variant == "unblocked") o.variant = BSVD_VARIANT_UNBLOCKED;
  else if (variant == "blocked") o.variant = BSVD_VARIANT_BLOCKED;
  else { err = "unknown --variant '" + variant + "' (auto, unblocked, blocked)"; return false; }
  o.block_size = block_size;
  o.tol = tol;
  o.max_sweeps = max_sweeps;
  o.eig_sweeps = eig_sweeps;
  o.num_threads = threads;
  o.qr = qr;
  o.precondition = precondition;
  o.wcycle_blocks = wcycle_blocks;
  o.wcycle_sweeps = wcycle_sweeps;
  if (pair_solver == "auto") o.pair_solver = BSVD_PAIR_AUTO;
  else if (pair_solver == "gram") o.pair_solver = BSVD_PAIR_GRAM;
  else if (pair_solver == "evd") o.pair_solver = BSVD_PAIR_EVD_SM;
  else if (pair_solver == "svd") o.pair_solver = BSVD_PAIR_SVD_SM;
  else { err = "unknown --pair-solver '" + pair_solver + "' (auto, gram, evd, svd)"; return false; }
  return true;
}

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) { if (!cur.empty()) out.push_back(cur); cur.clear(); }
    else if (c != ' ') cur += c;
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::vector<int> parse_int_list(const std::string &s) {
  std::vector<int> out;
  for (const auto &t : split(s, ',')) {
    size_t pos = 0;
    const int v = std::stoi(t, &pos);
    if (pos != t.size()) throw std::invalid_argument("not an integer: " + t);
    out.push_back(v);
  }
  return out;
}

Progress::Progress(int total_, bool enabled_) : total(total_), enabled(enabled_) {
  tty = isatty(2);
}

void Progress::step(const std::string &what) {
  ++done;
  if (!enabled) return;
  std::fprintf(stderr, tty ? "\r\033[K[%3d/%d] %s" : "[%3d/%d] %s\n", done, total, what.c_str());
  std::fflush(stderr);
}

void Progress::finish() {
  if (enabled && tty) std::fprintf(stderr, "\r\033[K");
}

} // namespace bsvd::cli

int main(int argc, char **argv) {
  using namespace bsvd::cli;
  CLI::App app{"bsvd: batched singular value decomposition (one-sided Jacobi) on CPUs and GPUs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("bsvd ") + bsvd_version());
  int rc = 0;
  add_run(app, rc);
  add_gen(app, rc);
  add_check(app, rc);
  add_bench(app, rc);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e);
  } catch (const std::exception &e) {
    std::cerr << "bsvd: " << e.what() << "\n";
    return 2;
  }
  return rc;
}
