// bsvd run: solve a batch read from .npy or Matrix Market files and write
// S, U, V (and per-matrix info and sweeps) as .npy files (run.hpp: exit
// status; docs/cli.md: the outputs). The checks common to both inputs, the
// summary line, and the start of the ranks under --mpi (ranks.hpp).
#include "run.hpp"

#include "files.hpp"

#include <climits>
#include <stdexcept>
#include <cstdio>
#include <filesystem>
#include <sstream>

namespace fs = std::filesystem;

namespace bsvd::cli {

void Tally::add(int info, int sweeps, int path) {
  ++count;
  if (info == 0)
    ++converged;
  else if (info > 0)
    ++not_converged;
  else if (info == BSVD_INFO_HYPERBOLIC_BREAKDOWN)
    ++breakdown;
  else
    ++nonfinite;
  max_sweeps = std::max(max_sweeps, sweeps);
  ++paths[path];
}

void Tally::add(const Residual &r) {
  worst_residual = std::max(worst_residual, r.residual);
  worst_orthogonality = std::max(worst_orthogonality, r.orthogonality);
}

std::string Tally::encode() const {
  std::ostringstream os;
  os.precision(17);
  os << count << ' ' << converged << ' ' << not_converged << ' ' << nonfinite << ' ' << skipped
     << ' ' << max_sweeps << ' ' << worst_residual << ' ' << worst_orthogonality << ' '
     << breakdown;
  for (const auto &kv : paths) os << ' ' << kv.first << ' ' << kv.second;
  return os.str();
}

void Tally::merge(const std::string &encoded) {
  std::istringstream is(encoded);
  Tally t;
  is >> t.count >> t.converged >> t.not_converged >> t.nonfinite >> t.skipped >> t.max_sweeps >>
      t.worst_residual >> t.worst_orthogonality >> t.breakdown;
  count += t.count;
  converged += t.converged;
  not_converged += t.not_converged;
  nonfinite += t.nonfinite;
  skipped += t.skipped;
  breakdown += t.breakdown;
  max_sweeps = std::max(max_sweeps, t.max_sweeps);
  worst_residual = std::max(worst_residual, t.worst_residual);
  worst_orthogonality = std::max(worst_orthogonality, t.worst_orthogonality);
  for (int p, c; is >> p >> c;) paths[p] += c;
}

const char *path_name(int p) {
  if (p == kPathSubset) return "gesvdx";
  const char *s = bsvd_path_string(p);
  return s ? s : "?";
}

std::string reason(const std::string &file, const std::string &err) {
  const std::string prefix = fs::path(file).filename().string() + ": ";
  return err.rfind(prefix, 0) == 0 ? err.substr(prefix.size()) : err;
}

void print_summary(const Tally &t, char p, const RunArgs &a, double total, double solve,
                   int ranks) {
  std::string paths;
  for (auto &kv : t.paths)
    paths += (paths.empty() ? "" : ", ") + std::string(path_name(kv.first)) + " " +
             std::to_string(kv.second);
  std::string extra;
  if (t.breakdown) extra += ", " + std::to_string(t.breakdown) + " hyperbolic breakdown";
  if (t.skipped) extra += ", " + std::to_string(t.skipped) + " skipped";
  if (a.residuals) {
    char buf[120];
    std::snprintf(buf, sizeof buf, "; worst residual %.3g u, orthogonality %.3g u",
                  t.worst_residual, t.worst_orthogonality);
    extra += buf;
  }
  // Under MPI: the slowest rank's solve.
  const std::string on = ranks > 1 ? ", " + std::to_string(ranks) + " ranks" : "";
  const std::string hsvd = a.nplus >= 0 ? ", hsvd nplus " + std::to_string(a.nplus) : "";
  std::printf("bsvd run: %d matrices (%c, %s%s; %s): %d converged, %d not converged, %d non-finite"
              "%s; max sweeps %d; time %.3f s (solve %.3f s%s) -> %s\n",
              t.count, p, a.solver.backend().c_str(), hsvd.c_str(), paths.c_str(), t.converged,
              t.not_converged, t.nonfinite, extra.c_str(), t.max_sweeps, total, solve, on.c_str(),
              a.out.c_str());
}

namespace {

// --subset-index LO:HI (0 <= LO <= HI, whole numbers) or --subset-value
// VL:VU (0 <= VL < VU; VU may be inf) into a's range; their checks against
// the matrices' size are the library's.
bool parse_subset(RunArgs &a, std::string &err) {
  if (a.subset_index.empty() && a.subset_value.empty()) return true;
  if (!a.subset_index.empty() && !a.subset_value.empty()) {
    err = "give one of --subset-index and --subset-value";
    return false;
  }
  if (a.nplus >= 0 || a.residuals) {
    err = std::string(a.nplus >= 0 ? "--nplus" : "--residuals") +
          " does not apply to a subset of the triplets: drop one of them";
    return false;
  }
  const bool index = !a.subset_index.empty();
  const std::string &t = index ? a.subset_index : a.subset_value;
  const size_t colon = t.find(':');
  const char *flag = index ? "--subset-index" : "--subset-value";
  try {
    if (colon == std::string::npos) throw std::invalid_argument("no colon");
    const std::string lo = t.substr(0, colon), hi = t.substr(colon + 1);
    size_t used_lo = 0, used_hi = 0;
    if (index) {
      a.il = std::stoi(lo, &used_lo), a.iu = std::stoi(hi, &used_hi);
    } else {
      a.vl = std::stod(lo, &used_lo), a.vu = std::stod(hi, &used_hi);
    }
    if (used_lo != lo.size() || used_hi != hi.size()) throw std::invalid_argument("trailing");
  } catch (const std::exception &) {
    err = std::string(flag) + " '" + t + "': expected " + (index ? "LO:HI (ints)" : "VL:VU");
    return false;
  }
  if (index ? !(0 <= a.il && a.il <= a.iu) : !(a.vl >= 0 && a.vu > a.vl)) {
    err = std::string(flag) + " '" + t + "': needs " +
          (index ? "0 <= LO <= HI (0: the largest value)" : "0 <= VL < VU");
    return false;
  }
  a.subset = index ? BSVD_RANGE_INDEX : BSVD_RANGE_VALUE;
  return true;
}

// The checks before any input is read: options, inputs, the output
// directory. 0, or 2 with the message in err.
int usage(RunArgs &a, bsvd_options_t &opts, std::vector<std::string> &files, bool &npy,
          std::string &err) {
  if (!a.solver.to_options(opts, err)) return 2;
  if (a.precision.size() != 1 || std::string("sdcz").find(a.precision[0]) == std::string::npos) {
    err = "--precision '" + a.precision + "': must be one of s, d, c, z";
    return 2;
  }
  if (a.residuals && a.nplus >= 0) {
    err = "--residuals measures the orthogonality of V, which the hyperbolic SVD's V does not "
          "have: drop it with --nplus";
    return 2;
  }
  if (!parse_subset(a, err)) return 2;
  if (a.residuals && a.values_only) {
    err = "--residuals needs U and V: drop --values-only";
    return 2;
  }
  // Directories expand to their Matrix Market files; a missing file stays
  // in the list and is reported as unreadable with the others.
  for (const auto &in : a.inputs) {
    std::error_code ec;
    if (fs::is_directory(in, ec)) {
      auto list = testing::list_matrix_market(in);
      if (list.empty()) {
        err = "no .mtx files in directory " + in;
        return 2;
      }
      files.insert(files.end(), list.begin(), list.end());
    } else {
      files.push_back(in);
    }
  }
  npy = files.size() == 1 && fs::path(files[0]).extension() == ".npy";
  if (a.nplus >= 0 && !npy) {
    err = "--nplus (the hyperbolic SVD) needs one .npy input";
    return 2;
  }
  if (!npy)
    for (const auto &f : files)
      if (fs::path(f).extension() == ".npy") {
        err = "give one .npy file, or Matrix Market files (got " + f + " among others)";
        return 2;
      }
  // The output directory is checked before anything is read or solved.
  return check_output_dir(a.out, "-o", err) ? 0 : 2;
}

int run(RunArgs a) {
  const double t0 = now_seconds();
  Ranks ranks;
  std::string err;
  if (a.mpi && !ranks.start_mpi(err)) {
    std::fprintf(stderr, "bsvd run: %s\n", err.c_str());
    return 2;
  }
  if (!a.mpi && launcher_world_size() > 1) {
    std::fprintf(stderr,
                 "bsvd run: started as one of %d MPI processes: add --mpi so that they split the "
                 "batch (without it each would solve all of it into the same files)\n",
                 launcher_world_size());
    return 2;
  }
  ranks.select_device(a.solver.backend());
  bsvd_options_t opts;
  std::vector<std::string> files;
  bool npy = false;
  const int rc = usage(a, opts, files, npy, err);
  if (ranks.agree(rc, rc ? "bsvd run: " + err : "")) return 2;
  return npy ? run_npy(files[0], a, opts, t0, ranks) : run_mtx(files, a, opts, t0, ranks);
}

} // namespace

void add_run(CLI::App &app, int &rc) {
  auto args = std::make_shared<RunArgs>();
  auto *sub = app.add_subcommand(
      "run",
      "Solve a batch: one .npy array of shape (batch, m, n) or (m, n), or Matrix Market files / "
      "directories (a variable-size batch). Writes S, U, V so that A = U diag(S) V^H "
      "(docs/cli.md). Exit 0: all solved and written; 1: an input or output failed; 2: usage.");
  sub->add_option("inputs", args->inputs, "input .npy file, or .mtx files and directories")
      ->required();
  sub->add_option("-o,--out", args->out, "output directory")->capture_default_str();
  sub->add_option("--precision", args->precision,
                  "s, d, c or z for Matrix Market input (.npy: its dtype)")
      ->capture_default_str();
  sub->add_flag("--values-only", args->values_only, "singular values only");
  sub->add_flag("--residuals", args->residuals,
                "also report each matrix's residual ||A - U S V^H||_1 / (n ||A||_1) and "
                "orthogonality max(||I - U^H U||_1 / m, ||I - V^H V||_1 / n), in units of u");
  sub->add_option("--nplus", args->nplus,
                  "the hyperbolic SVD instead (.npy input, m >= n): J = diag(I_K, -I_(n-K)) "
                  "for every matrix, G = U diag(S) V^H with V^H J V = J, S descending on "
                  "each side (docs/hsvd.md)")
      ->check(CLI::Range(0, INT_MAX))
      ->option_text("K");
  sub->add_option("--subset-index", args->subset_index,
                  "only the singular values LO ... HI (0-based, 0 = the largest) and their "
                  "vectors, by bidiagonalization, bisection and inverse iteration (gesvdx); .npy: "
                  "S, U, V have HI - LO + 1 columns, ns.npy the count per matrix; Matrix Market: "
                  "a file with min(m, n) <= HI is skipped")
      ->option_text("LO:HI");
  sub->add_option("--subset-value", args->subset_value,
                  "only the singular values in (VL, VU] and their vectors (gesvdx); .npy: S, U, V "
                  "keep min(m, n) columns, zero after each matrix's ns.npy count")
      ->option_text("VL:VU");
  sub->add_flag("--mpi", args->mpi,
                "under mpirun: the ranks split the batch, each solves and writes its part "
                "(docs/cli.md, \"Several processes\")");
  args->solver.add_to(*sub);
  sub->callback([args, &rc] { rc = run(*args); });
}

} // namespace bsvd::cli
