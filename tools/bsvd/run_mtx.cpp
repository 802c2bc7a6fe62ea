// bsvd run on Matrix Market files: one variable-size batch, one output set
// per matrix (<name>.S.npy, .U.npy, .V.npy) and summary.tsv (docs/cli.md).
// A file that cannot be read is reported and skipped; the others are solved.
// Under MPI (ranks.hpp) the ranks split the files by their cost, each
// writes the outputs of its own, and rank 0 writes summary.tsv.
#include "run.hpp"

#include "files.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace fs = std::filesystem;

namespace bsvd::cli {
namespace {

struct Input {
  std::string file, name; // name: unique among the inputs (output_names)
  testing::DenseMatrix d;
  std::string error; // empty when read
};

// Output names: the file's stem, extended by as many parent directories as
// make it unique among the inputs ("a", or "dir1/a" and "dir2/a" when two
// directories hold a.mtx). False with the duplicate when one file is given
// twice.
bool output_names(std::vector<Input> &in, std::string &err) {
  std::vector<std::vector<std::string>> parts(in.size()); // innermost first
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < in.size(); ++i) {
    std::error_code ec;
    fs::path p = fs::weakly_canonical(fs::absolute(in[i].file, ec), ec);
    if (ec) p = fs::absolute(in[i].file);
    auto [it, fresh] = seen.emplace(p.string(), i);
    if (!fresh) {
      err = in[i].file + " is given twice (also as " + in[it->second].file + ")";
      return false;
    }
    parts[i].push_back(p.stem().string());
    for (fs::path q = p.parent_path(); q.has_relative_path(); q = q.parent_path())
      parts[i].push_back(q.filename().string());
  }
  std::vector<size_t> depth(in.size(), 1);
  auto name = [&](size_t i) {
    std::string s = parts[i][0];
    for (size_t d = 1; d < depth[i]; ++d) s = parts[i][d] + "/" + s;
    return s;
  };
  for (bool changed = true; changed;) {
    changed = false;
    std::map<std::string, std::vector<size_t>> by;
    for (size_t i = 0; i < in.size(); ++i) by[name(i)].push_back(i);
    for (auto &kv : by)
      if (kv.second.size() > 1)
        for (size_t i : kv.second)
          if (depth[i] < parts[i].size()) {
            ++depth[i];
            changed = true;
          }
  }
  for (size_t i = 0; i < in.size(); ++i) in[i].name = name(i);
  return true;
}

// One summary.tsv field: no tabs or line breaks inside.
std::string field(std::string s) {
  for (char &c : s)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return s;
}

// One rank's part of the run: its matrices solved, their outputs written to
// temporary files (set), their summary rows. fail != 0: nothing may be
// published, the run's exit status (the message is in msg).
struct Staged {
  int fail = 0;
  std::string msg;
  Tally tally;
  std::string rows; // "<input index> <summary row>\n" per input of this rank
  OutputSet set;
  double solve = 0;
};

template <class T> void stage_mtx(std::vector<Input> &in, const std::vector<size_t> &mine,
                                  const RunArgs &a, const bsvd_options_t &base, Staged &st) {
  using R = real_t<T>;
  constexpr bool complex_t = !std::is_floating_point_v<T>;
  const bool vec = !a.values_only;
  std::vector<size_t> ok; // indices of the inputs in the batch
  for (size_t i : mine) {
    const int kd = std::min(in[i].d.m, in[i].d.n);
    std::string why;
    if (in[i].d.is_complex && !complex_t)
      why = "complex entries: run with --precision c or z";
    else if (a.subset == BSVD_RANGE_INDEX && kd > 0 && kd <= a.iu)
      why = "min(m, n) = " + std::to_string(kd) + ": fewer values than --subset-index " +
            a.subset_index + " asks";
    if (in[i].error.empty() && !why.empty()) {
      in[i].error = why;
      std::fprintf(stderr, "bsvd run: %s: %s (skipped)\n", in[i].file.c_str(), why.c_str());
    }
    if (in[i].error.empty()) ok.push_back(i);
  }
  const int batch = int(ok.size());
  std::vector<int> m(batch), n(batch), ld(batch), ldv(batch);
  std::vector<std::vector<T>> A(batch), U(batch), V(batch);
  std::vector<std::vector<R>> S(batch);
  std::vector<const T *> pA(batch);
  std::vector<R *> pS(batch);
  std::vector<T *> pU(batch), pV(batch);
  for (int b = 0; b < batch; ++b) {
    const auto &d = in[ok[b]].d;
    m[b] = d.m;
    n[b] = d.n;
    ld[b] = std::max(1, d.m);
    ldv[b] = std::max(1, d.n);
    // the values (and vectors) each output has room for (RunArgs::room)
    const int k = std::min(d.m, d.n) ? int(a.room(std::min(d.m, d.n))) : 0;
    A[b] = testing::dense_as<T>(d);
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
  std::vector<int> info(batch), sweeps(batch), path(batch), ns(batch);
  bsvd_options_t o = base;
  o.path = path.data();
  const double ts = now_seconds();
  if (batch > 0) {
    const Job job = vec ? Job::Vectors : Job::Values;
    bsvd_status_t s;
    if (a.subset != BSVD_RANGE_ALL) {
      s = gesvdx_vbatched<T>(
          job, bsvd_range_t(a.subset), m.data(), n.data(), pA.data(), ld.data(), R(a.vl), R(a.vu),
          a.il, a.iu, ns.data(), pS.data(), vec ? pU.data() : nullptr, vec ? ld.data() : nullptr,
          vec ? pV.data() : nullptr, vec ? ldv.data() : nullptr, info.data(), batch, o);
      std::fill(path.begin(), path.end(), kPathSubset);
    } else {
      s = gesvj_vbatched<T>(job, m.data(), n.data(), pA.data(), ld.data(), pS.data(),
                            vec ? pU.data() : nullptr, vec ? ld.data() : nullptr,
                            vec ? pV.data() : nullptr, vec ? ldv.data() : nullptr, info.data(),
                            sweeps.data(), batch, o);
      for (int b = 0; b < batch; ++b) ns[b] = int(S[b].size());
    }
    if (s != 0) {
      st.fail = s < 0 ? 2 : 1;
      st.msg = std::string("bsvd run: ") + bsvd_status_string(s) + ": " + bsvd_last_error();
      return;
    }
  }
  st.solve = now_seconds() - ts;

  Tally &t = st.tally;
  OutputSet &set = st.set;
  std::string err;
  size_t next = 0; // position in ok
  for (size_t i : mine) {
    const std::string stem = (fs::path(a.out) / in[i].name).string();
    const bool solved = next < ok.size() && ok[next] == i;
    std::string row = std::to_string(i) + " " + field(in[i].name) + "\t" + field(in[i].file);
    if (!solved) {
      ++t.skipped;
      st.rows +=
          row + "\terror\t\t\t\t\t\t\t" + (a.residuals ? "\t\t" : "") + field(in[i].error) + "\n";
      // An earlier run's outputs under this name are not this run's.
      for (const char *x : {".S.npy", ".U.npy", ".V.npy"}) set.remove_stale(stem + x);
      continue;
    }
    const int b = int(next++);
    const int k = ns[b]; // (the values found: min(m, n) without a subset)
    std::error_code ec;
    fs::create_directories(fs::path(stem).parent_path(), ec);
    bool good =
        set.add_npy(stem + ".S.npy", npy_dtype<R>(), {k}, S[b].data(), size_t(k) * sizeof(R), err);
    if (good && vec) {
      const auto u = row_major(m[b], k, U[b].data(), ld[b]);
      const auto v = row_major(n[b], k, V[b].data(), ldv[b]);
      good = set.add_npy(stem + ".U.npy", npy_dtype<T>(), {m[b], k}, u.data(), u.size() * sizeof(T),
                         err) &&
             set.add_npy(stem + ".V.npy", npy_dtype<T>(), {n[b], k}, v.data(), v.size() * sizeof(T),
                         err);
    } else {
      set.remove_stale(stem + ".U.npy");
      set.remove_stale(stem + ".V.npy");
    }
    if (!good) {
      st.fail = 1;
      st.msg = "bsvd run: cannot write the outputs (none written): " + err;
      return;
    }
    t.add(info[b], sweeps[b], path[b]);
    const char *status = info[b] == 0 ? "ok" : info[b] > 0 ? "not-converged" : "non-finite";
    char num[200];
    std::snprintf(num, sizeof num, "\t%s\t%d\t%d\t%d\t%d\t%s\t%.17g\t%.17g", status, m[b], n[b],
                  info[b], sweeps[b], path_name(path[b]), k ? double(S[b][0]) : 0.0,
                  k ? double(S[b][k - 1]) : 0.0);
    row += num;
    if (a.residuals) {
      const Residual r =
          residual_of<T>(m[b], n[b], A[b].data(), S[b].data(), U[b].data(), V[b].data());
      if (info[b] >= 0) t.add(r);
      std::snprintf(num, sizeof num, "\t%.3g\t%.3g", r.residual, r.orthogonality);
      row += num;
    }
    st.rows += row + "\t\n";
  }
}

// The cost of a Matrix Market file's SVD up to a factor, m n min(m, n),
// from its size line; 1 when the header cannot be read (the rank that
// reads the whole file reports why).
double mtx_cost(const std::string &file) {
  std::ifstream f(file);
  std::string line;
  if (!std::getline(f, line) || line.rfind("%%MatrixMarket", 0) != 0) return 1;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '%' || line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    std::istringstream is(line);
    double m = 0, n = 0;
    if (!(is >> m >> n) || !(m >= 0) || !(n >= 0)) return 1;
    return std::max(1.0, m * n * std::min(m, n));
  }
  return 1;
}

// The rank of each input: the most costly first, each to the rank with the
// least cost so far (the longest-processing-time rule; within 4/3 of the
// best balance). Ties go to the lower index and rank, so every rank
// computes the same assignment.
std::vector<int> balance(const std::vector<double> &cost, int ranks) {
  std::vector<size_t> order(cost.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return cost[x] > cost[y]; });
  std::vector<double> load(size_t(ranks), 0.0);
  std::vector<int> owner(cost.size());
  for (size_t i : order) {
    const int r = int(std::min_element(load.begin(), load.end()) - load.begin());
    owner[i] = r;
    load[size_t(r)] += cost[i];
  }
  return owner;
}

// Rank 0 writes summary.tsv from every rank's rows; the outputs are
// published only when every rank wrote all of its own (a rank that failed
// leaves nothing anywhere, as one process does).
int finish(const std::vector<Input> &in, Staged &st, const RunArgs &a, double t0,
           const Ranks &ranks) {
  const std::vector<std::string> rows = ranks.gather(st.rows);
  const std::vector<std::string> tallies = ranks.gather(st.tally.encode());
  const double solve = ranks.max(st.solve);
  if (ranks.rank() == 0 && !st.fail) {
    std::vector<std::string> row(in.size());
    for (const std::string &part : rows) {
      std::istringstream is(part);
      size_t i;
      std::string r;
      while (is >> i && std::getline(is.ignore(1), r))
        if (i < row.size()) row[i] = r + "\n";
    }
    std::string tsv = "name\tfile\tstatus\tm\tn\tinfo\tsweeps\tpath\tsigma_max\tsigma_min";
    tsv += a.residuals ? "\tresidual\torthogonality\tmessage\n" : "\tmessage\n";
    for (const std::string &r : row) tsv += r;
    std::string err;
    if (!st.set.add_text((fs::path(a.out) / "summary.tsv").string(), tsv, err)) {
      st.fail = 1;
      st.msg = "bsvd run: cannot write the outputs (none written): " + err;
    }
  }
  if (const int rc = ranks.agree(st.fail, st.msg)) return rc; // the temporary files go with set
  std::string err, msg;
  if (!st.set.publish(err)) msg = "bsvd run: cannot write the outputs (none written): " + err;
  if (const int rc = ranks.agree(msg.empty() ? 0 : 1, msg)) return rc;
  const int skipped = ranks.max(st.tally.skipped > 0 ? 1 : 0);
  if (ranks.rank() == 0) {
    Tally t;
    for (const std::string &s : tallies) t.merge(s);
    print_summary(t, a.precision[0], a, now_seconds() - t0, solve, ranks.size());
    if (t.skipped)
      std::fprintf(stderr, "bsvd run: %d of %zu files could not be used (see summary.tsv)\n",
                   t.skipped, in.size());
  }
  return skipped;
}

} // namespace

int run_mtx(const std::vector<std::string> &files, const RunArgs &a, const bsvd_options_t &o,
            double t0, const Ranks &ranks) {
  std::vector<Input> in(files.size());
  for (size_t i = 0; i < files.size(); ++i) in[i].file = files[i];
  std::string err;
  const bool named = output_names(in, err);
  if (const int rc = ranks.agree(named ? 0 : 2, named ? "" : "bsvd run: " + err)) return rc;
  // Each rank reads the headers of every size()-th file; the sum gives all
  // ranks every cost.
  std::vector<double> cost(in.size(), 0.0);
  if (ranks.size() > 1)
    for (size_t i = size_t(ranks.rank()); i < in.size(); i += size_t(ranks.size()))
      cost[i] = mtx_cost(in[i].file);
  ranks.sum(cost);
  const std::vector<int> owner = balance(cost, ranks.size());
  std::vector<size_t> mine;
  for (size_t i = 0; i < in.size(); ++i)
    if (owner[i] == ranks.rank()) mine.push_back(i);
  for (size_t i : mine) {
    Input &x = in[i];
    if (!testing::read_matrix_market(x.file, x.d, x.error)) {
      x.error = reason(x.file, x.error);
      std::fprintf(stderr, "bsvd run: %s: %s (skipped)\n", x.file.c_str(), x.error.c_str());
      x.d = testing::DenseMatrix{}; // the memory of a half-read file back
    }
  }
  Staged st;
  with_precision(a.precision[0], [&](auto tag) { stage_mtx<decltype(tag)>(in, mine, a, o, st); });
  return finish(in, st, a, t0, ranks);
}

} // namespace bsvd::cli
