// bsvd check: the accuracy suite. For each precision, the six singular-value
// families over sizes and shapes, the edge cases and the SuiteSparse
// matrices are solved and checked with T1-T4 (src/testing/metrics.hpp);
// the worst ratio of each row is printed, and the exit status is 1 if any
// row exceeds the threshold.
#include "common.hpp"
#include "files.hpp"

#include "testing/generate.hpp"
#include "testing/io.hpp"
#include "testing/lapack_ref.hpp"
#include "testing/metrics.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

namespace bsvd::cli {
namespace {

using testing::Ratios;

struct CheckArgs {
  std::string precisions = "sdcz";
  std::string families = "all";
  std::string sizes = "1,2,3,7,16,31,33,64,100,257";
  std::string shapes = "square,tall,wide";
  std::string edges = "all";
  std::string matrices; // directory; default: the repository's data/matrices
  bool no_matrices = false;
  int batch = 2;
  int edge_max_size = 100;
  double threshold = testing::kThreshold;
  uint64_t seed = 20261121;
  bool quiet = false;
  std::string json;
  SolverArgs solver;
};

struct Row {
  Row(char p, std::string n) : precision(p), name(std::move(n)) {}
  char precision;
  std::string name;
  int cases = 0; // matrices checked
  Ratios worst;
  int max_sweeps = 0;
  int not_converged = 0;
  int wrong_info = 0; // matrices whose info was not what the case expects
  std::string first_failure;
  bool pass(double k) const { return cases > 0 && worst.pass(k) && wrong_info == 0; }
};

constexpr int kMaxSize = 1000000; // --sizes: beyond it 8s overflows int soon

// Shape of a case: square s x s; tall (m >> n): 8s x s up to s = 64, 4s x s
// beyond; wide: the transpose of tall.
bool shape_dims(const std::string &shape, int s, int &m, int &n) {
  const int f = s <= 64 ? 8 : 4;
  if (shape == "square") {
    m = s;
    n = s;
    return true;
  }
  if (shape == "tall") {
    m = f * s;
    n = s;
    return true;
  }
  if (shape == "wide") {
    m = s;
    n = f * s;
    return true;
  }
  return false;
}

struct Solved {
  std::vector<double> S; // promoted for the checks
};

// Solves `batch` matrices of one size with the library; checks each one.
// expect_info[b]: the info the matrix must get (0, or BSVD_INFO_NONFINITE).
template <class T> bool solve_and_check(int m, int n, const std::vector<T> &A, int batch,
                                        const std::vector<int> &expect_info,
                                        const bsvd_options_t &opts, Row &row,
                                        const std::string &label, double k) {
  using R = real_t<T>;
  const int kk = std::min(m, n);
  const int lda = std::max(1, m), ldu = std::max(1, m), ldv = std::max(1, n);
  std::vector<R> S(size_t(batch) * kk);
  std::vector<T> U(size_t(batch) * ldu * kk), V(size_t(batch) * ldv * kk);
  std::vector<int> info(batch, -99), sweeps(batch, 0);
  const bsvd_status_t st = gesvj_strided_batched<T>(
      Job::Vectors, m, n, A.data(), lda, int64_t(lda) * n, S.data(), kk, U.data(), ldu,
      int64_t(ldu) * kk, V.data(), ldv, int64_t(ldv) * kk, info.data(), sweeps.data(), batch, opts);
  if (st != 0) {
    row.wrong_info += batch;
    if (row.first_failure.empty())
      row.first_failure = label + ": status " + std::to_string(st) + " " + bsvd_last_error();
    return false;
  }
  bool ok = true;
  std::vector<double> ref(kk);
  for (int b = 0; b < batch; ++b) {
    ++row.cases;
    row.max_sweeps = std::max(row.max_sweeps, sweeps[b]);
    const T *Ab = A.data() + size_t(b) * lda * n;
    const R *Sb = S.data() + size_t(b) * kk;
    if (expect_info[b] == BSVD_INFO_NONFINITE) {
      bool nan_out = info[b] == BSVD_INFO_NONFINITE;
      for (int i = 0; i < kk; ++i) nan_out = nan_out && std::isnan(double(Sb[i]));
      if (!nan_out) {
        ++row.wrong_info;
        ok = false;
        if (row.first_failure.empty())
          row.first_failure = label + ": non-finite input got info " + std::to_string(info[b]);
      }
      continue;
    }
    if (info[b] != 0) {
      if (info[b] > 0) ++row.not_converged;
      ++row.wrong_info;
      ok = false;
      if (row.first_failure.empty())
        row.first_failure = label + ": info " + std::to_string(info[b]) + " after " +
                            std::to_string(sweeps[b]) + " sweeps";
    }
    const int linfo = testing::reference_singular_values<T>(m, n, Ab, lda, ref.data());
    const Ratios r = testing::accuracy<T, R>(m, n, Ab, lda, Sb, U.data() + size_t(b) * ldu * kk,
                                             ldu, V.data() + size_t(b) * ldv * kk, ldv,
                                             linfo == 0 ? ref.data() : nullptr);
    row.worst.max_with(r);
    if (!r.pass(k)) {
      ok = false;
      if (row.first_failure.empty()) {
        char buf[200];
        std::snprintf(buf, sizeof buf, ": T1 %.3g T2 %.3g/%.3g T3 %.3g T4 %.3g", r.t1, r.t2u, r.t2v,
                      r.t3, r.t4);
        row.first_failure = label + buf;
      }
    }
  }
  return ok;
}

template <class T>
void check_precision(const CheckArgs &a, const bsvd_options_t &opts, std::vector<Row> &rows,
                     Progress &prog, const std::vector<testing::Family> &fams,
                     const std::vector<testing::Edge> &edges, const std::vector<int> &sizes,
                     const std::vector<std::string> &shapes,
                     const std::vector<testing::DenseMatrix> &mats) {
  const char p = precision_of<T>();
  const double kappa = testing::default_kappa<T>();
  uint64_t seed = a.seed + 7919ull * uint64_t(p);
  for (auto f : fams) {
    Row row{p, testing::family_name(f)};
    for (int s : sizes)
      for (const auto &sh : shapes) {
        int m, n;
        shape_dims(sh, s, m, n);
        char label[96];
        std::snprintf(label, sizeof label, "%c %s %dx%d", p, testing::family_name(f), m, n);
        prog.step(label);
        std::vector<T> A(size_t(a.batch) * m * n);
        for (int b = 0; b < a.batch; ++b)
          testing::generate<T>(f, m, n, kappa, ++seed, A.data() + size_t(b) * m * n,
                               std::max(1, m));
        solve_and_check<T>(m, n, A, a.batch, std::vector<int>(a.batch, 0), opts, row, label,
                           a.threshold);
      }
    rows.push_back(row);
  }
  for (auto e : edges) {
    Row row{p, std::string("edge:") + testing::edge_name(e)};
    const bool nonfinite = e == testing::Edge::Nan || e == testing::Edge::Inf;
    for (int s : sizes) {
      if (s > a.edge_max_size) continue;
      for (const auto &sh : shapes) {
        int m, n;
        shape_dims(sh, s, m, n);
        char label[96];
        std::snprintf(label, sizeof label, "%c %s %dx%d", p, testing::edge_name(e), m, n);
        prog.step(label);
        // Non-finite cases sit in the middle of a batch of healthy matrices,
        // which must come out unaffected.
        const int batch = nonfinite ? 3 : 1;
        std::vector<T> A(size_t(batch) * m * n);
        std::vector<int> expect(batch, 0);
        for (int b = 0; b < batch; ++b) {
          T *Ab = A.data() + size_t(b) * m * n;
          if (nonfinite && b != 1)
            testing::generate<T>(testing::Family::Random, m, n, kappa, ++seed, Ab, std::max(1, m));
          else
            testing::generate_edge<T>(e, m, n, ++seed, Ab, std::max(1, m));
        }
        if (nonfinite) expect[1] = BSVD_INFO_NONFINITE;
        solve_and_check<T>(m, n, A, batch, expect, opts, row, label, a.threshold);
      }
    }
    if (row.cases) rows.push_back(row);
  }
  if (!mats.empty()) {
    Row row{p, "suitesparse"};
    for (const auto &d : mats) {
      prog.step(std::string(1, p) + " " + d.name + " " + std::to_string(d.m) + "x" +
                std::to_string(d.n));
      std::vector<T> A(d.a.begin(), d.a.end());
      solve_and_check<T>(d.m, d.n, A, 1, {0}, opts, row, std::string(1, p) + " " + d.name,
                         a.threshold);
    }
    rows.push_back(row);
  }
}

int check(const CheckArgs &a) {
  bsvd_options_t opts;
  std::string err;
  if (!a.solver.to_options(opts, err)) {
    std::fprintf(stderr, "bsvd check: %s\n", err.c_str());
    return 2;
  }
  {
    // The library checks the options on every call: one 1 x 1 solve finds
    // a refused option up front, a usage error rather than failed rows.
    double a1 = 1, s1, u1, v1;
    int i1, w1;
    const bsvd_status_t st = gesvj_strided_batched<double>(Job::Vectors, 1, 1, &a1, 1, 1, &s1, 1,
                                                           &u1, 1, 1, &v1, 1, 1, &i1, &w1, 1, opts);
    if (st < 0) {
      std::fprintf(stderr, "bsvd check: invalid options: %s\n", bsvd_last_error());
      return 2;
    }
  }
  std::vector<testing::Family> fams;
  if (a.families == "all")
    fams = testing::all_families();
  else if (a.families != "none")
    for (const auto &f : split(a.families, ',')) {
      testing::Family fam;
      if (!testing::parse_family(f, fam)) {
        std::fprintf(stderr, "bsvd check: unknown family '%s'\n", f.c_str());
        return 2;
      }
      fams.push_back(fam);
    }
  std::vector<testing::Edge> edges;
  if (a.edges == "all")
    edges = testing::all_edges();
  else if (a.edges != "none")
    for (const auto &e : split(a.edges, ',')) {
      testing::Edge ed;
      if (!testing::parse_edge(e, ed)) {
        std::fprintf(stderr, "bsvd check: unknown edge case '%s'\n", e.c_str());
        return 2;
      }
      edges.push_back(ed);
    }
  std::vector<int> sizes;
  try {
    sizes = parse_int_list(a.sizes);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "bsvd check: --sizes: %s\n", e.what());
    return 2;
  }
  for (int s : sizes)
    if (s < 0 || s > kMaxSize) {
      std::fprintf(stderr, "bsvd check: --sizes: size %d is %s\n", s,
                   s < 0 ? "negative" : "too large (at most 1000000)");
      return 2;
    }
  if (!a.json.empty() && !check_output_file(a.json, "--json", err)) {
    std::fprintf(stderr, "bsvd check: %s\n", err.c_str());
    return 2;
  }
  const auto shapes = split(a.shapes, ',');
  double largest = 0; // bytes of the largest case: A, U and V of the batch
  for (const auto &sh : shapes) {
    int m, n;
    if (!shape_dims(sh, 1, m, n)) {
      std::fprintf(stderr, "bsvd check: unknown shape '%s' (square, tall, wide)\n", sh.c_str());
      return 2;
    }
    for (int s : sizes) {
      shape_dims(sh, s, m, n);
      const double k = std::min(m, n);
      largest = std::max(largest, double(a.batch) * (double(m) * n + (double(m) + n) * k) * 16);
    }
  }
  if (!fits_in_memory(largest, "--batch " + std::to_string(a.batch) + " with --sizes " + a.sizes,
                      err)) {
    std::fprintf(stderr, "bsvd check: %s\n", err.c_str());
    return 2;
  }
  for (char p : a.precisions)
    if (std::string("sdcz").find(p) == std::string::npos) {
      std::fprintf(stderr, "bsvd check: unknown precision '%c' (s, d, c, z)\n", p);
      return 2;
    }
  std::vector<testing::DenseMatrix> mats;
  if (!a.no_matrices) {
    const std::string dir = a.matrices.empty() ? testing::default_matrix_dir() : a.matrices;
    for (const auto &f : testing::list_matrix_market(dir)) {
      testing::DenseMatrix d;
      if (!testing::read_matrix_market(f, d, err)) {
        std::fprintf(stderr, "bsvd check: %s: %s\n", f.c_str(), err.c_str());
        return 2;
      }
      // The suite solves each file in every precision from its real
      // entries and expects info 0: complex and non-finite files do not fit.
      if (d.is_complex || !d.finite()) {
        std::fprintf(stderr, "bsvd check: %s: %s entries (--matrices takes real, finite files)\n",
                     f.c_str(), d.is_complex ? "complex" : "NaN or Inf");
        return 2;
      }
      mats.push_back(std::move(d));
    }
    if (mats.empty()) {
      std::fprintf(stderr, "bsvd check: no Matrix Market files in %s (use --no-matrices to skip)\n",
                   dir.c_str());
      return 2;
    }
  }
  int edge_sizes = 0;
  for (int s : sizes) edge_sizes += s <= a.edge_max_size;
  const int per_prec = int(fams.size() * sizes.size() * shapes.size() +
                           edges.size() * edge_sizes * shapes.size() + mats.size());
  Progress prog(per_prec * int(a.precisions.size()), !a.quiet);
  std::vector<Row> rows;
  const double t0 = now_seconds();
  for (char p : a.precisions)
    with_precision(p, [&](auto tag) {
      check_precision<decltype(tag)>(a, opts, rows, prog, fams, edges, sizes, shapes, mats);
    });
  prog.finish();

  int failed = 0;
  std::printf("%-4s %-16s %7s %10s %10s %10s %6s %7s  %s\n", "prec", "case", "matrices", "T1/u",
              "T2/u", "T3/u", "sorted", "sweeps", "result");
  for (const auto &r : rows) {
    const bool ok = r.pass(a.threshold);
    failed += !ok;
    std::printf("%-4c %-16s %7d %10.3g %10.3g %10.3g %6s %7d  %s\n", r.precision, r.name.c_str(),
                r.cases, r.worst.t1, std::max(r.worst.t2u, r.worst.t2v), r.worst.t3,
                r.worst.t4 == 0 ? "yes" : "NO", r.max_sweeps, ok ? "pass" : "FAIL");
  }
  for (const auto &r : rows)
    if (!r.pass(a.threshold))
      std::printf("  first failure in %c %s: %s\n", r.precision, r.name.c_str(),
                  r.first_failure.c_str());
  std::printf("bsvd check: %zu rows, %d failed (threshold %g u, backend %s, %.1f s)\n", rows.size(),
              failed, a.threshold, a.solver.backend().c_str(), now_seconds() - t0);
  if (!a.json.empty()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto &r : rows)
      j.push_back({{"precision", std::string(1, r.precision)},
                   {"case", r.name},
                   {"matrices", r.cases},
                   {"t1", r.worst.t1},
                   {"t2u", r.worst.t2u},
                   {"t2v", r.worst.t2v},
                   {"t3", r.worst.t3},
                   {"sorted", r.worst.t4 == 0},
                   {"max_sweeps", r.max_sweeps},
                   {"pass", r.pass(a.threshold)}});
    if (!write_text_file(a.json, j.dump(1) + "\n", err)) {
      std::fprintf(stderr, "bsvd check: --json: %s\n", err.c_str());
      return 1;
    }
  }
  return failed ? 1 : 0;
}

} // namespace

void add_check(CLI::App &app, int &rc) {
  auto a = std::make_shared<CheckArgs>();
  auto *sub = app.add_subcommand(
      "check", "Accuracy suite: T1-T4 on the six families, edge cases and the "
               "SuiteSparse matrices; exits 1 if any ratio exceeds the threshold");
  sub->add_option("--precision", a->precisions, "precisions to check, e.g. sdcz or d")
      ->capture_default_str();
  sub->add_option("--families", a->families, "comma list, all or none")->capture_default_str();
  sub->add_option("--sizes", a->sizes, "comma list of sizes s (see --shapes)")
      ->capture_default_str();
  sub->add_option("--shapes", a->shapes,
                  "square (s x s), tall (8s x s, 4s x s above 64), wide (transpose)")
      ->capture_default_str();
  sub->add_option("--edges", a->edges, "edge cases: comma list, all or none")
      ->capture_default_str();
  sub->add_option("--edge-max-size", a->edge_max_size, "largest size used for edge cases")
      ->capture_default_str()
      ->transform(count(0));
  sub->add_option("--batch", a->batch, "matrices per family case")
      ->capture_default_str()
      ->transform(count(1));
  sub->add_option("--matrices", a->matrices,
                  "directory of Matrix Market files (default: data/matrices)");
  sub->add_flag("--no-matrices", a->no_matrices, "skip the Matrix Market matrices");
  sub->add_option("--threshold", a->threshold, "pass when every ratio is below this many u")
      ->capture_default_str();
  sub->add_option("--seed", a->seed, "random seed")->capture_default_str();
  sub->add_option("--json", a->json, "also write the rows as JSON to this file");
  sub->add_flag("-q,--quiet", a->quiet, "no progress on stderr");
  a->solver.add_to(*sub);
  sub->callback([a, &rc] { rc = check(*a); });
}

} // namespace bsvd::cli
