// bsvd: batched SVD from the command line.
//   bsvd run    solve a batch from .npy or Matrix Market files, write S, U, V
//   bsvd check  the accuracy suite (T1-T4) over precisions, families, sizes
//   bsvd gen    write test batches (.npy)
//   bsvd bench  time bsvd against LAPACK (and cuSOLVER on a GPU)
//   bsvd plan   the plan of a call: each matrix's path and its parameters
#include "common.hpp"
#include "core/batch.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <iostream>
#include <unistd.h>

namespace bsvd::cli {

std::string EnumNames::list(const char *last_sep) const {
  std::string out;
  for (int v = 0; const char *s = name(v); ++v) {
    if (v > 0) out += name(v + 1) ? ", " : last_sep;
    out += s;
  }
  return out;
}

bool EnumNames::value(const std::string &s, const char *option, int &v, std::string &err) const {
  if (parse(s.c_str(), &v) == 0) return true;
  err = std::string("unknown ") + option + " '" + s + "' (" + list(", ") + ")";
  return false;
}

CLI::Validator count(long long lo) {
  return CLI::Validator(
      [lo](std::string &s) -> std::string {
        char *end = nullptr;
        const double x = std::strtod(s.c_str(), &end);
        if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(x) || x != std::floor(x))
          return "'" + s + "' is not a whole number";
        if (x < double(lo)) return "must be " + std::to_string(lo) + " or more (got " + s + ")";
        if (x > 9.2e18) return "'" + s + "' is too large";
        s = std::to_string((long long)x);
        return {};
      },
      "INT>=" + std::to_string(lo), "count");
}

CLI::Validator number_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string &s) -> std::string {
        char *end = nullptr;
        const double x = std::strtod(s.c_str(), &end);
        if (s.empty() || end != s.c_str() + s.size() || std::isnan(x))
          return "'" + s + "' is not a number";
        if (x < lo || x >= hi) {
          char buf[160];
          std::snprintf(buf, sizeof buf, "must be at least %g and below %g (got %s)", lo, hi,
                        s.c_str());
          return buf;
        }
        return {};
      },
      "NUMBER", "number_in");
}

void SolverArgs::add_to(CLI::App &app) {
  app.add_option("--backend", backend,
                 kBackendNames.list() + " (" + bsvd_backend_string(BSVD_BACKEND_AUTO) +
                     ": the GPU when one is visible)")
      ->capture_default_str();
  app.add_option("--ordering", ordering, kOrderingNames.list())->capture_default_str();
  app.add_option("--variant", variant, kVariantNames.list())->capture_default_str();
  app.add_option("--block-size", block_size, "columns per block (blocked variant; 0 = auto)")
      ->capture_default_str()
      ->transform(count(0));
  app.add_option("--tol", tol,
                 "rotation threshold, 0 <= tol < 1 (0 = sqrt(max(m, 16)) * unit roundoff)")
      ->capture_default_str()
      ->check(number_in(0, 1));
  app.add_option("--max-sweeps", max_sweeps, "sweep limit (0 = default 80)")
      ->capture_default_str()
      ->transform(count(0));
  app.add_option("--eig-sweeps", eig_sweeps,
                 "blocked: inner eigensolver sweeps (-1 = auto: 1, then 2 once a matrix stalls; 0 "
                 "= converge; 1 = inexact)")
      ->capture_default_str()
      ->transform(count(-1));
  app.add_option("--threads", threads, "CPU threads over the batch (0 = all cores)")
      ->capture_default_str()
      ->transform(count(0));
  app.add_option("--qr", qr,
                 "cuda: QR preprocessing of tall / wide matrices (0 auto, 1 when R fits, -1 never)")
      ->capture_default_str()
      ->check(CLI::Range(-1, 1));
  app.add_option("--precondition", precondition,
                 "QR with column pivoting first, Jacobi on R^H (1 on, -1 off, 0 auto: cuda by a "
                 "measured cost rule, cpu off); 2: the Gram matrix's eigenvectors V0 first, "
                 "Jacobi on A V0 (docs/design/gram.md)")
      ->capture_default_str()
      ->check(CLI::Range(-1, 2));
  app.add_option("--pair-solver", pair_solver,
                 "blocked variant: how a block pair is rotated: " + kPairSolverNames.list() + " (" +
                     bsvd_pair_solver_string(BSVD_PAIR_EVD_SM) +
                     ": cuda, the pair in shared memory; " +
                     bsvd_pair_solver_string(BSVD_PAIR_SVD_SM) + ": one-sided Jacobi on the pair)")
      ->capture_default_str();
  app.add_option(
         "--wcycle-blocks", wcycle_blocks,
         "blocked variant: a second level (W-cycle): outer blocks of this many blocks, "
         "each outer pair rotated by --wcycle-sweeps sweeps over its blocks (0 = one level)")
      ->capture_default_str()
      ->check(CLI::Range(0, detail::kWcycleMaxBlocks));
  app.add_option("--wcycle-sweeps", wcycle_sweeps, "sweeps one level down per outer pair (0 = 1)")
      ->capture_default_str()
      ->check(CLI::Range(0, detail::kWcycleMaxSweeps));
  app.add_option("--devices", devices,
                 "cuda, host data: the GPUs that share the batch: all, or a comma list of device "
                 "ordinals (default: the current GPU; docs/multi-gpu.md)");
}

bool parse_devices(const std::string &s, int &count, std::vector<int> &list, std::string &err) {
  list.clear();
  count = 0;
  if (s.empty()) return true;
  if (s == "all") {
    count = BSVD_DEVICES_ALL;
    return true;
  }
  try {
    list = parse_int_list(s);
  } catch (const std::exception &) {
    list.clear();
  }
  if (list.empty()) {
    err = "--devices must be all or a comma list of device ordinals, not '" + s + "'";
    return false;
  }
  count = int(list.size());
  return true;
}

bool SolverArgs::to_options(bsvd_options_t &o, std::string &err) const {
  bsvd_options_init(&o);
  int v = 0;
  if (!kBackendNames.value(backend, "--backend", v, err)) return false;
  o.backend = bsvd_backend_t(v);
  if (!kOrderingNames.value(ordering, "--ordering", v, err)) return false;
  o.ordering = bsvd_ordering_t(v);
  if (!kVariantNames.value(variant, "--variant", v, err)) return false;
  o.variant = bsvd_variant_t(v);
  if (!kPairSolverNames.value(pair_solver, "--pair-solver", v, err)) return false;
  o.pair_solver = bsvd_pair_solver_t(v);
  o.block_size = block_size;
  o.tol = tol;
  o.max_sweeps = max_sweeps;
  o.eig_sweeps = eig_sweeps;
  o.num_threads = threads;
  o.qr = qr;
  o.precondition = precondition;
  o.wcycle_blocks = wcycle_blocks;
  o.wcycle_sweeps = wcycle_sweeps;
  if (!parse_devices(devices, o.device_count, device_list, err)) return false;
  o.devices = device_list.empty() ? nullptr : device_list.data();
  return true;
}

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ')
      cur += c;
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
  add_plan(app, rc);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    // --help and --version exit 0; every other parse or option check
    // failure is a usage error: 2, apart from 1 (the work failed).
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const std::bad_alloc &) {
    std::cerr << "bsvd: out of memory (the batch or the sizes are too large for this machine)\n";
    return 1;
  } catch (const std::exception &e) {
    std::cerr << "bsvd: " << e.what() << "\n";
    return 2;
  }
  return rc;
}
