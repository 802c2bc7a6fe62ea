// bsvd run: solve a batch read from .npy or Matrix Market files and write
// S, U, V (and per-matrix info and sweeps) as .npy files.
#include "common.hpp"

#include "testing/io.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>

namespace fs = std::filesystem;

namespace bsvd::cli {
namespace {

using testing::NpyArray;

template <class T> const char *npy_dtype();
template <> const char *npy_dtype<float>() { return "f4"; }
template <> const char *npy_dtype<double>() { return "f8"; }
template <> const char *npy_dtype<std::complex<float>>() { return "c8"; }
template <> const char *npy_dtype<std::complex<double>>() { return "c16"; }

char precision_of_dtype(const std::string &d) {
  if (d == "f4") return 's';
  if (d == "f8") return 'd';
  if (d == "c8") return 'c';
  if (d == "c16") return 'z';
  return 0;
}

// Column-major m x n matrix -> row-major block (NumPy's C order), and back.
template <class T, class S> void to_row_major(int rows, int cols, const S *src, int ld, T *dst) {
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) dst[size_t(i) * cols + j] = T(src[i + size_t(j) * ld]);
}

template <class T> bool save(const fs::path &p, const std::vector<int64_t> &shape, const T *data,
                             const char *dtype, std::string &err) {
  NpyArray a;
  a.dtype = dtype;
  a.shape = shape;
  a.fortran_order = false;
  a.data.resize(size_t(a.elements()) * sizeof(T));
  if (!a.data.empty()) std::memcpy(a.data.data(), data, a.data.size());
  return testing::write_npy(p.string(), a, err);
}

struct RunArgs {
  std::vector<std::string> inputs;
  std::string out = "bsvd-out";
  std::string precision = "d";
  bool values_only = false;
  bool quiet = false;
  SolverArgs solver;
};

struct Tally {
  int count = 0, converged = 0, not_converged = 0, nonfinite = 0, max_sweeps = 0;
  std::map<int, int> paths;
  void add(int info, int sweeps, int path) {
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
};

const char *path_name(int p) {
  const char *s = bsvd_path_string(p);
  return s ? s : "?";
}

void print_summary(const Tally &t, char p, const RunArgs &a, double total, double solve) {
  std::string paths;
  for (auto &kv : t.paths)
    paths += (paths.empty() ? "" : ", ") + std::string(path_name(kv.first)) + " " +
             std::to_string(kv.second);
  std::printf("bsvd run: %d matrices (%c, %s; %s): %d converged, %d not converged, %d non-finite; "
              "max sweeps %d; time %.3f s (solve %.3f s) -> %s\n",
              t.count, p, a.solver.backend.c_str(), paths.c_str(), t.converged, t.not_converged,
              t.nonfinite, t.max_sweeps, total, solve, a.out.c_str());
}

// One .npy array of shape (batch, m, n) or (m, n).
template <class T>
int run_npy(const NpyArray &in, const RunArgs &a, const bsvd_options_t &base, double t0) {
  using R = real_t<T>;
  const bool three = in.shape.size() == 3;
  const int64_t batch = three ? in.shape[0] : 1;
  const int64_t m = in.shape[three ? 1 : 0], n = in.shape[three ? 2 : 1];
  if (batch > INT32_MAX || m > INT32_MAX || n > INT32_MAX) {
    std::fprintf(stderr, "bsvd run: array too large for one call\n");
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
  std::vector<R> S(size_t(batch * k));
  std::vector<T> U(vec ? size_t(batch * m * k) : 0), V(vec ? size_t(batch * n * k) : 0);
  std::vector<int> info(batch), sweeps(batch), path(batch);
  bsvd_options_t o = base;
  o.path = path.data();
  const double ts = now_seconds();
  const bsvd_status_t st = gesvj_strided_batched<T>(
      vec ? Job::Vectors : Job::Values, int(m), int(n), A.data(), int(std::max<int64_t>(1, m)),
      m * n, S.data(), k, vec ? U.data() : nullptr, int(std::max<int64_t>(1, m)), m * k,
      vec ? V.data() : nullptr, int(std::max<int64_t>(1, n)), n * k, info.data(), sweeps.data(),
      int(batch), o);
  const double solve = now_seconds() - ts;
  if (st != 0) {
    std::fprintf(stderr, "bsvd run: %s: %s\n", bsvd_status_string(st), bsvd_last_error());
    return 1;
  }
  std::error_code ec;
  fs::create_directories(a.out, ec);
  std::string err;
  std::vector<T> tmp;
  auto lead = [&](std::vector<int64_t> s) {
    if (three) s.insert(s.begin(), batch);
    return s;
  };
  bool ok = save(fs::path(a.out) / "S.npy", lead({k}), S.data(), npy_dtype<R>(), err);
  if (ok && vec) {
    tmp.resize(U.size());
    for (int64_t b = 0; b < batch; ++b)
      to_row_major(int(m), int(k), U.data() + b * m * k, int(std::max<int64_t>(1, m)),
                   tmp.data() + b * m * k);
    ok = save(fs::path(a.out) / "U.npy", lead({m, k}), tmp.data(), npy_dtype<T>(), err);
    tmp.resize(V.size());
    for (int64_t b = 0; ok && b < batch; ++b)
      to_row_major(int(n), int(k), V.data() + b * n * k, int(std::max<int64_t>(1, n)),
                   tmp.data() + b * n * k);
    if (ok) ok = save(fs::path(a.out) / "V.npy", lead({n, k}), tmp.data(), npy_dtype<T>(), err);
  }
  if (ok) ok = save(fs::path(a.out) / "info.npy", {batch}, info.data(), "i4", err);
  if (ok) ok = save(fs::path(a.out) / "sweeps.npy", {batch}, sweeps.data(), "i4", err);
  if (!ok) {
    std::fprintf(stderr, "bsvd run: cannot write output: %s\n", err.c_str());
    return 1;
  }
  Tally t;
  for (int64_t b = 0; b < batch; ++b) t.add(info[b], sweeps[b], path[b]);
  print_summary(t, precision_of<T>(), a, now_seconds() - t0, solve);
  return 0; // per-matrix problems are in info.npy and the summary line
}

// Matrix Market files: a variable-size batch, one output set per matrix.
template <class T> int run_mtx(const std::vector<testing::DenseMatrix> &mats, const RunArgs &a,
                               const bsvd_options_t &base, double t0) {
  using R = real_t<T>;
  const int batch = int(mats.size());
  const bool vec = !a.values_only;
  std::vector<int> m(batch), n(batch), lda(batch), ldu(batch), ldv(batch);
  std::vector<std::vector<T>> A(batch), U(batch), V(batch);
  std::vector<std::vector<R>> S(batch);
  std::vector<const T *> pA(batch);
  std::vector<R *> pS(batch);
  std::vector<T *> pU(batch), pV(batch);
  for (int b = 0; b < batch; ++b) {
    const auto &d = mats[b];
    m[b] = d.m;
    n[b] = d.n;
    lda[b] = std::max(1, d.m);
    ldu[b] = std::max(1, d.m);
    ldv[b] = std::max(1, d.n);
    const int k = std::min(d.m, d.n);
    A[b].assign(d.a.begin(), d.a.end());
    S[b].resize(k);
    if (vec) {
      U[b].resize(size_t(d.m) * k);
      V[b].resize(size_t(d.n) * k);
    }
    pA[b] = A[b].data();
    pS[b] = S[b].data();
    pU[b] = U[b].data();
    pV[b] = V[b].data();
  }
  std::vector<int> info(batch), sweeps(batch), path(batch);
  bsvd_options_t o = base;
  o.path = path.data();
  const double ts = now_seconds();
  const bsvd_status_t st = gesvj_vbatched<T>(
      vec ? Job::Vectors : Job::Values, m.data(), n.data(), pA.data(), lda.data(), pS.data(),
      vec ? pU.data() : nullptr, vec ? ldu.data() : nullptr, vec ? pV.data() : nullptr,
      vec ? ldv.data() : nullptr, info.data(), sweeps.data(), batch, o);
  const double solve = now_seconds() - ts;
  if (st != 0) {
    std::fprintf(stderr, "bsvd run: %s: %s\n", bsvd_status_string(st), bsvd_last_error());
    return 1;
  }
  std::error_code ec;
  fs::create_directories(a.out, ec);
  std::string err;
  Tally t;
  FILE *sum = std::fopen((fs::path(a.out) / "summary.tsv").string().c_str(), "w");
  if (!sum) {
    std::fprintf(stderr, "bsvd run: cannot write %s\n",
                 (fs::path(a.out) / "summary.tsv").string().c_str());
    return 1;
  }
  std::fprintf(sum, "name\tm\tn\tinfo\tsweeps\tpath\tsigma_max\tsigma_min\n");
  for (int b = 0; b < batch; ++b) {
    const int k = std::min(m[b], n[b]);
    const std::string stem = (fs::path(a.out) / mats[b].name).string();
    bool ok = save(stem + ".S.npy", {k}, S[b].data(), npy_dtype<R>(), err);
    if (ok && vec) {
      std::vector<T> tmp(U[b].size());
      to_row_major(m[b], k, U[b].data(), ldu[b], tmp.data());
      ok = save(stem + ".U.npy", {m[b], k}, tmp.data(), npy_dtype<T>(), err);
      tmp.resize(V[b].size());
      to_row_major(n[b], k, V[b].data(), ldv[b], tmp.data());
      if (ok) ok = save(stem + ".V.npy", {n[b], k}, tmp.data(), npy_dtype<T>(), err);
    }
    if (!ok) {
      std::fclose(sum);
      std::fprintf(stderr, "bsvd run: cannot write output: %s\n", err.c_str());
      return 1;
    }
    std::fprintf(sum, "%s\t%d\t%d\t%d\t%d\t%s\t%.17g\t%.17g\n", mats[b].name.c_str(), m[b], n[b],
                 info[b], sweeps[b], path_name(path[b]), k ? double(S[b][0]) : 0.0,
                 k ? double(S[b][k - 1]) : 0.0);
    t.add(info[b], sweeps[b], path[b]);
  }
  std::fclose(sum);
  print_summary(t, precision_of<T>(), a, now_seconds() - t0, solve);
  return 0; // per-matrix problems are in info.npy and the summary line
}

int run(const RunArgs &a) {
  const double t0 = now_seconds();
  bsvd_options_t opts;
  std::string err;
  if (!a.solver.to_options(opts, err)) {
    std::fprintf(stderr, "bsvd run: %s\n", err.c_str());
    return 2;
  }
  // Expand directories to their Matrix Market files.
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
  if (npy) {
    NpyArray arr;
    if (!testing::read_npy(files[0], arr, err)) {
      std::fprintf(stderr, "bsvd run: %s: %s\n", files[0].c_str(), err.c_str());
      return 2;
    }
    if (arr.shape.size() != 2 && arr.shape.size() != 3) {
      std::fprintf(stderr,
                   "bsvd run: %s: expected shape (batch, m, n) or (m, n), got %zu dimensions\n",
                   files[0].c_str(), arr.shape.size());
      return 2;
    }
    int rc = 2;
    if (!with_precision(precision_of_dtype(arr.dtype),
                        [&](auto tag) { rc = run_npy<decltype(tag)>(arr, a, opts, t0); })) {
      std::fprintf(stderr, "bsvd run: %s: unsupported dtype %s\n", files[0].c_str(),
                   arr.dtype.c_str());
      return 2;
    }
    return rc;
  }
  std::vector<testing::DenseMatrix> mats;
  for (const auto &f : files) {
    if (fs::path(f).extension() == ".npy") {
      std::fprintf(stderr,
                   "bsvd run: give one .npy file, or Matrix Market files (got %s among others)\n",
                   f.c_str());
      return 2;
    }
    testing::DenseMatrix d;
    if (!testing::read_matrix_market(f, d, err)) {
      std::fprintf(stderr, "bsvd run: %s: %s\n", f.c_str(), err.c_str());
      return 2;
    }
    mats.push_back(std::move(d));
  }
  if (a.precision.size() != 1) {
    std::fprintf(stderr, "bsvd run: --precision must be one of s, d, c, z\n");
    return 2;
  }
  int rc = 2;
  if (!with_precision(a.precision[0],
                      [&](auto tag) { rc = run_mtx<decltype(tag)>(mats, a, opts, t0); })) {
    std::fprintf(stderr, "bsvd run: --precision must be one of s, d, c, z\n");
    return 2;
  }
  return rc;
}

} // namespace

void add_run(CLI::App &app, int &rc) {
  auto args = std::make_shared<RunArgs>();
  auto *sub = app.add_subcommand(
      "run",
      "Solve a batch: one .npy array of shape (batch, m, n) or (m, n), or Matrix Market files / "
      "directories (a variable-size batch). Writes S, U, V so that A = U diag(S) V^H.");
  sub->add_option("inputs", args->inputs, "input .npy file, or .mtx files and directories")
      ->required();
  sub->add_option("-o,--out", args->out, "output directory")->capture_default_str();
  sub->add_option("--precision", args->precision,
                  "s, d, c or z for Matrix Market input (.npy: its dtype)")
      ->capture_default_str();
  sub->add_flag("--values-only", args->values_only, "singular values only");
  args->solver.add_to(*sub);
  sub->callback([args, &rc] { rc = run(*args); });
}

} // namespace bsvd::cli
