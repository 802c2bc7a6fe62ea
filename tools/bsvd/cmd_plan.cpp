// `bsvd plan`: the plan a call would run (bsvd_explain) -- which path each
// matrix takes and every parameter of each group -- without solving.
//   bsvd plan --precision d --cases 1000x128x128         one uniform batch
//   bsvd plan --precision d --sizes 8x8,3000x16,300x300  one variable-size batch
//   bsvd plan data/matrices                               the shapes of Matrix Market files
#include "common.hpp"

#include "testing/io.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <filesystem>
#include <string>
#include <vector>

namespace bsvd::cli {

namespace {

struct PlanArgs {
  SolverArgs solver;
  std::string precision = "d";
  std::string cases, sizes;
  std::vector<std::string> inputs;
  bool values_only = false;
};

// "B x M x N" (cases) or "M x N" (sizes) -> numbers; false if malformed.
bool parse_shape(const std::string &t, std::vector<int> &out, size_t parts) {
  out.clear();
  for (const std::string &x : split(t, 'x')) {
    size_t pos = 0;
    try {
      const int v = std::stoi(x, &pos);
      if (pos != x.size() || v < 0) return false;
      out.push_back(v);
    } catch (...) {
      return false;
    }
  }
  return out.size() == parts;
}

// The shapes of the Matrix Market files of the inputs (files or folders).
bool mtx_shapes(const std::vector<std::string> &inputs, std::vector<int> &m, std::vector<int> &n,
                std::string &err) {
  std::vector<std::string> files;
  for (const std::string &in : inputs) {
    if (std::filesystem::is_directory(in)) {
      const std::vector<std::string> in_dir = testing::list_matrix_market(in);
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else {
      files.push_back(in);
    }
  }
  for (const std::string &f : files) {
    testing::DenseMatrix a;
    if (!testing::read_matrix_market(f, a, err)) {
      err = f + ": " + err;
      return false;
    }
    m.push_back(a.m);
    n.push_back(a.n);
  }
  if (files.empty()) err = "no .mtx file among the inputs";
  return !files.empty();
}

int run_plan(const PlanArgs &a) {
  bsvd_options_t o;
  std::string err;
  if (!a.solver.to_options(o, err)) {
    std::fprintf(stderr, "bsvd plan: %s\n", err.c_str());
    return 2;
  }
  if (a.precision.size() != 1) {
    std::fprintf(stderr, "bsvd plan: --precision takes one of s, d, c, z\n");
    return 2;
  }
  const char p = a.precision[0];
  const bsvd_job_t job = a.values_only ? BSVD_JOB_VALUES : BSVD_JOB_VECTORS;
  auto show = [&](auto query) {
    size_t need = 0;
    bsvd_status_t st = query(nullptr, 0, &need);
    std::string text(need, '\0');
    if (st == 0) st = query(text.data(), text.size(), nullptr);
    if (st != 0) {
      std::fprintf(stderr, "bsvd plan: %s: %s\n", bsvd_status_string(st), bsvd_last_error());
      return st < 0 ? 2 : 1;
    }
    std::fputs(text.c_str(), stdout);
    return 0;
  };
  const int given = !a.cases.empty() + !a.sizes.empty() + !a.inputs.empty();
  if (given != 1) {
    std::fprintf(stderr, "bsvd plan: give one of --cases, --sizes or Matrix Market inputs\n");
    return 2;
  }
  if (!a.cases.empty()) {
    int rc = 0;
    for (const std::string &c : split(a.cases, ',')) {
      std::vector<int> v;
      if (!parse_shape(c, v, 3)) {
        std::fprintf(stderr, "bsvd plan: --cases takes BATCHxMxN, not '%s'\n", c.c_str());
        return 2;
      }
      std::printf("== %s\n", c.c_str());
      rc = std::max(rc, show([&](char *buf, size_t len, size_t *need) {
                      return bsvd_explain(p, job, v[1], v[2], v[0], &o, buf, len, need);
                    }));
    }
    return rc;
  }
  std::vector<int> m, n;
  if (!a.sizes.empty()) {
    for (const std::string &c : split(a.sizes, ',')) {
      std::vector<int> v;
      if (!parse_shape(c, v, 2)) {
        std::fprintf(stderr, "bsvd plan: --sizes takes MxN,MxN,..., not '%s'\n", c.c_str());
        return 2;
      }
      m.push_back(v[0]);
      n.push_back(v[1]);
    }
  } else if (!mtx_shapes(a.inputs, m, n, err)) {
    std::fprintf(stderr, "bsvd plan: %s\n", err.c_str());
    return 2;
  }
  return show([&](char *buf, size_t len, size_t *need) {
    return bsvd_explain_v(p, job, m.data(), n.data(), int(m.size()), &o, buf, len, need);
  });
}

} // namespace

void add_plan(CLI::App &app, int &rc) {
  auto a = std::make_shared<PlanArgs>();
  auto *cmd = app.add_subcommand(
      "plan", "print the plan of a call: each matrix's path and the parameters of each group");
  a->solver.add_to(*cmd);
  cmd->add_option("--precision", a->precision, "s, d, c or z")->capture_default_str();
  cmd->add_option("--cases", a->cases, "uniform batches BATCHxMxN[,...], one plan each");
  cmd->add_option("--sizes", a->sizes, "one variable-size batch MxN[,MxN...]");
  cmd->add_option("inputs", a->inputs, "Matrix Market files or folders: one batch of their shapes");
  cmd->add_flag("--values-only", a->values_only, "singular values only (no U, V)");
  cmd->callback([a, &rc] { rc = run_plan(*a); });
}

} // namespace bsvd::cli
