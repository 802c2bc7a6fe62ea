// bsvd run: solve a batch read from .npy or Matrix Market files and write
// S, U, V (and per-matrix info and sweeps) as .npy files (run.hpp: exit
// status; docs/cli.md: the outputs).
#include "run.hpp"

#include "files.hpp"

#include <cstdio>
#include <filesystem>

namespace fs = std::filesystem;

namespace bsvd::cli {

void Tally::add(int info, int sweeps, int path) {
  ++count;
  if (info == 0)
    ++converged;
  else if (info > 0)
    ++not_converged;
  else
    ++nonfinite;
  max_sweeps = std::max(max_sweeps, sweeps);
  ++paths[path];
}

void Tally::add(const Residual &r) {
  worst_residual = std::max(worst_residual, r.residual);
  worst_orthogonality = std::max(worst_orthogonality, r.orthogonality);
}

const char *path_name(int p) {
  const char *s = bsvd_path_string(p);
  return s ? s : "?";
}

std::string reason(const std::string &file, const std::string &err) {
  const std::string prefix = fs::path(file).filename().string() + ": ";
  return err.rfind(prefix, 0) == 0 ? err.substr(prefix.size()) : err;
}

void print_summary(const Tally &t, char p, const RunArgs &a, double total, double solve) {
  std::string paths;
  for (auto &kv : t.paths)
    paths += (paths.empty() ? "" : ", ") + std::string(path_name(kv.first)) + " " +
             std::to_string(kv.second);
  std::string extra;
  if (t.skipped) extra += ", " + std::to_string(t.skipped) + " skipped";
  if (a.residuals) {
    char buf[120];
    std::snprintf(buf, sizeof buf, "; worst residual %.3g u, orthogonality %.3g u",
                  t.worst_residual, t.worst_orthogonality);
    extra += buf;
  }
  std::printf("bsvd run: %d matrices (%c, %s; %s): %d converged, %d not converged, %d non-finite"
              "%s; max sweeps %d; time %.3f s (solve %.3f s) -> %s\n",
              t.count, p, a.solver.backend.c_str(), paths.c_str(), t.converged, t.not_converged,
              t.nonfinite, extra.c_str(), t.max_sweeps, total, solve, a.out.c_str());
}

namespace {

char precision_of_dtype(const std::string &d) {
  if (d == "f4") return 's';
  if (d == "f8") return 'd';
  if (d == "c8") return 'c';
  if (d == "c16") return 'z';
  return 0;
}

// One .npy array of shape (batch, m, n) or (m, n).
template <class T> int run_npy(const testing::NpyArray &in, const std::string &file,
                               const RunArgs &a, const bsvd_options_t &base, double t0) {
  using R = real_t<T>;
  const bool three = in.shape.size() == 3;
  const int64_t batch = three ? in.shape[0] : 1;
  const int64_t m = in.shape[three ? 1 : 0], n = in.shape[three ? 2 : 1];
  if (batch > INT32_MAX || m > INT32_MAX || n > INT32_MAX) {
    std::fprintf(stderr, "bsvd run: %s: array too large for one call\n", file.c_str());
    return 1;
  }
  const int64_t k = std::min(m, n);
  // Gather into column-major matrices whatever the file's order.
  std::vector<T> A(size_t(batch * m * n));
  const T *src = reinterpret_cast<const T *>(in.data.data());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) {
        const int64_t s = in.fortran_order ? b + batch * (i + m * j) : (b * m + i) * n + j;
        A[size_t(b * m * n + i + j * m)] = src[s];
      }
  const bool vec = !a.values_only;
  const int ldm = int(std::max<int64_t>(1, m)), ldn = int(std::max<int64_t>(1, n));
  std::vector<R> S(size_t(batch * k));
  std::vector<T> U(vec ? size_t(batch * m * k) : 0), V(vec ? size_t(batch * n * k) : 0);
  std::vector<int> info(batch), sweeps(batch), path(batch);
  bsvd_options_t o = base;
  o.path = path.data();
  const double ts = now_seconds();
  const bsvd_status_t st = gesvj_strided_batched<T>(
      vec ? Job::Vectors : Job::Values, int(m), int(n), A.data(), ldm, m * n, S.data(), k,
      vec ? U.data() : nullptr, ldm, m * k, vec ? V.data() : nullptr, ldn, n * k, info.data(),
      sweeps.data(), int(batch), o);
  const double solve = now_seconds() - ts;
  if (st != 0) {
    std::fprintf(stderr, "bsvd run: %s: %s: %s\n", file.c_str(), bsvd_status_string(st),
                 bsvd_last_error());
    return st < 0 ? 2 : 1;
  }
  Tally t;
  std::vector<double> res(a.residuals ? batch : 0), orth(a.residuals ? batch : 0);
  for (int64_t b = 0; b < batch; ++b) {
    t.add(info[b], sweeps[b], path[b]);
    if (!a.residuals) continue;
    const Residual r = residual_of<T>(int(m), int(n), A.data() + b * m * n, S.data() + b * k,
                                      U.data() + b * m * k, V.data() + b * n * k);
    res[b] = r.residual;
    orth[b] = r.orthogonality;
    if (info[b] >= 0) t.add(r);
  }
  auto lead = [&](std::vector<long long> s) {
    if (three) s.insert(s.begin(), batch);
    return s;
  };
  auto out = [&](const char *name) { return (fs::path(a.out) / name).string(); };
  OutputSet set;
  std::string err;
  bool ok =
      set.add_npy(out("S.npy"), npy_dtype<R>(), lead({k}), S.data(), S.size() * sizeof(R), err);
  for (int which = 0; ok && vec && which < 2; ++which) {
    const int64_t rows = which ? n : m;
    const std::vector<T> &X = which ? V : U;
    std::vector<T> rm(X.size());
    for (int64_t b = 0; b < batch; ++b) {
      const auto one =
          row_major(int(rows), int(k), X.data() + b * rows * k, int(std::max<int64_t>(1, rows)));
      std::copy(one.begin(), one.end(), rm.begin() + b * rows * k);
    }
    ok = set.add_npy(out(which ? "V.npy" : "U.npy"), npy_dtype<T>(), lead({rows, k}), rm.data(),
                     rm.size() * sizeof(T), err);
  }
  // Per-matrix scalars: shape (batch,), or () for a 2-D input (as S is (k,)).
  if (ok) ok = set.add_npy(out("info.npy"), "i4", lead({}), info.data(), info.size() * 4, err);
  if (ok)
    ok = set.add_npy(out("sweeps.npy"), "i4", lead({}), sweeps.data(), sweeps.size() * 4, err);
  if (ok && a.residuals) {
    ok = set.add_npy(out("residual.npy"), "f8", lead({}), res.data(), res.size() * 8, err) &&
         set.add_npy(out("orthogonality.npy"), "f8", lead({}), orth.data(), orth.size() * 8, err);
  }
  // Outputs of an earlier run into the same directory that this run does
  // not write would be read as this run's: they go.
  if (!vec) {
    set.remove_stale(out("U.npy"));
    set.remove_stale(out("V.npy"));
  }
  if (!a.residuals) {
    set.remove_stale(out("residual.npy"));
    set.remove_stale(out("orthogonality.npy"));
  }
  if (!ok || !set.publish(err)) {
    std::fprintf(stderr, "bsvd run: cannot write the outputs (none written): %s\n", err.c_str());
    return 1;
  }
  print_summary(t, precision_of<T>(), a, now_seconds() - t0, solve);
  return 0;
}

int run_one_npy(const std::string &file, const RunArgs &a, const bsvd_options_t &opts, double t0) {
  testing::NpyArray arr;
  std::string err;
  if (!testing::read_npy(file, arr, err)) {
    std::fprintf(stderr, "bsvd run: %s: %s\n", file.c_str(), reason(file, err).c_str());
    return 1;
  }
  if (arr.shape.size() != 2 && arr.shape.size() != 3) {
    std::fprintf(stderr,
                 "bsvd run: %s: expected shape (batch, m, n) or (m, n), got %zu dimensions\n",
                 file.c_str(), arr.shape.size());
    return 1;
  }
  int rc = 1;
  if (!with_precision(precision_of_dtype(arr.dtype),
                      [&](auto tag) { rc = run_npy<decltype(tag)>(arr, file, a, opts, t0); })) {
    std::fprintf(stderr, "bsvd run: %s: unsupported dtype %s (f4, f8, c8 or c16)\n", file.c_str(),
                 arr.dtype.c_str());
    return 1;
  }
  return rc;
}

int run(const RunArgs &a) {
  const double t0 = now_seconds();
  bsvd_options_t opts;
  std::string err;
  if (!a.solver.to_options(opts, err)) {
    std::fprintf(stderr, "bsvd run: %s\n", err.c_str());
    return 2;
  }
  if (a.precision.size() != 1 || std::string("sdcz").find(a.precision[0]) == std::string::npos) {
    std::fprintf(stderr, "bsvd run: --precision '%s': must be one of s, d, c, z\n",
                 a.precision.c_str());
    return 2;
  }
  if (a.residuals && a.values_only) {
    std::fprintf(stderr, "bsvd run: --residuals needs U and V: drop --values-only\n");
    return 2;
  }
  // Directories expand to their Matrix Market files; a missing file stays
  // in the list and is reported as unreadable with the others.
  std::vector<std::string> files;
  for (const auto &in : a.inputs) {
    std::error_code ec;
    if (fs::is_directory(in, ec)) {
      auto list = testing::list_matrix_market(in);
      if (list.empty()) {
        std::fprintf(stderr, "bsvd run: no .mtx files in directory %s\n", in.c_str());
        return 2;
      }
      files.insert(files.end(), list.begin(), list.end());
    } else {
      files.push_back(in);
    }
  }
  const bool npy = files.size() == 1 && fs::path(files[0]).extension() == ".npy";
  if (!npy)
    for (const auto &f : files)
      if (fs::path(f).extension() == ".npy") {
        std::fprintf(stderr,
                     "bsvd run: give one .npy file, or Matrix Market files (got %s among "
                     "others)\n",
                     f.c_str());
        return 2;
      }
  // The output directory is checked before anything is read or solved.
  if (!check_output_dir(a.out, "-o", err)) {
    std::fprintf(stderr, "bsvd run: %s\n", err.c_str());
    return 2;
  }
  return npy ? run_one_npy(files[0], a, opts, t0) : run_mtx(files, a, opts, t0);
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
  args->solver.add_to(*sub);
  sub->callback([args, &rc] { rc = run(*args); });
}

} // namespace bsvd::cli
