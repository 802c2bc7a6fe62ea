// bsvd run on one .npy array of shape (batch, m, n) or (m, n): S.npy, U.npy,
// V.npy, info.npy, sweeps.npy (docs/cli.md). Under MPI (ranks.hpp) each
// rank reads, solves and writes a contiguous slice of the batch: rank 0
// creates each output's temporary file with its header, every rank writes
// its slice at its offset, and rank 0 renames the files into place once all
// have written theirs; the bytes are those of one process.
#include "run.hpp"

#include "files.hpp"

#include <cstdio>
#include <filesystem>

namespace fs = std::filesystem;

namespace bsvd::cli {
namespace {

char precision_of_dtype(const std::string &d) {
  if (d == "f4") return 's';
  if (d == "f8") return 'd';
  if (d == "c8") return 'c';
  if (d == "c16") return 'z';
  return 0;
}

// count matrices m x n from the bytes of an array (count, m, n) in C or
// Fortran order, as column-major matrices one after the other.
template <class T> std::vector<T> column_major(const unsigned char *bytes, int64_t count, int64_t m,
                                               int64_t n, bool fortran) {
  std::vector<T> A(size_t(count * m * n));
  const T *src = reinterpret_cast<const T *>(bytes);
  for (int64_t b = 0; b < count; ++b)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) {
        const int64_t s = fortran ? b + count * (i + m * j) : (b * m + i) * n + j;
        A[size_t(b * m * n + i + j * m)] = src[s];
      }
  return A;
}

// The solved matrices of a batch (or of a rank's slice), the outputs' data
// in C order.
template <class T> struct Solved {
  std::vector<real_t<T>> S;
  std::vector<T> U, V; // each matrix's U (m x c) and V (n x c), row-major
  std::vector<int> info, sweeps;
  std::vector<int> ns; // with a subset (RunArgs::subset): the triplets found
  std::vector<double> res, orth; // with --residuals
  Tally tally;
  double solve = 0;
};

// Solves the count matrices of A (column-major m x n each). A status other
// than 0 is the library's; err holds its message.
template <class T> bsvd_status_t solve(const std::vector<T> &A, int64_t count, int64_t m, int64_t n,
                                       const RunArgs &a, const bsvd_options_t &base, Solved<T> &s,
                                       std::string &err) {
  // k: the values (and vectors) per matrix in the outputs (RunArgs::room)
  const int64_t k = a.room(std::min(m, n));
  const bool vec = !a.values_only;
  const int ldm = int(std::max<int64_t>(1, m)), ldn = int(std::max<int64_t>(1, n));
  s.S.resize(size_t(count * k));
  std::vector<T> U(vec ? size_t(count * m * k) : 0), V(vec ? size_t(count * n * k) : 0);
  s.info.resize(size_t(count));
  s.sweeps.resize(size_t(count));
  std::vector<int> path(size_t(count), 0);
  bsvd_options_t o = base;
  o.path = path.data();
  const Job job = vec ? Job::Vectors : Job::Values;
  const std::vector<int> nplus(a.nplus >= 0 ? size_t(count) : 0, a.nplus);
  const double ts = now_seconds();
  bsvd_status_t st = BSVD_STATUS_SUCCESS;
  if (count > 0 && a.subset != BSVD_RANGE_ALL) {
    // (outputs beyond each matrix's count stay zero: the vectors above are)
    using R = real_t<T>;
    s.ns.resize(size_t(count));
    st = gesvdx_strided_batched<T>(job, bsvd_range_t(a.subset), int(m), int(n), A.data(), ldm,
                                   m * n, R(a.vl), R(a.vu), a.il, a.iu, s.ns.data(), s.S.data(),
                                   std::max<int64_t>(k, 1), vec ? U.data() : nullptr, ldm,
                                   m * std::max<int64_t>(k, 1), vec ? V.data() : nullptr, ldn,
                                   n * std::max<int64_t>(k, 1), s.info.data(), int(count), o);
    std::fill(path.begin(), path.end(), kPathSubset);
  } else if (count > 0 && a.nplus >= 0)
    st = gehsvj_strided_batched<T>(job, int(m), int(n), nplus.data(), A.data(), ldm, m * n,
                                   s.S.data(), k, vec ? U.data() : nullptr, ldm, m * k,
                                   vec ? V.data() : nullptr, ldn, n * k, s.info.data(),
                                   s.sweeps.data(), int(count), o);
  else if (count > 0)
    st = gesvj_strided_batched<T>(job, int(m), int(n), A.data(), ldm, m * n, s.S.data(), k,
                                  vec ? U.data() : nullptr, ldm, m * k, vec ? V.data() : nullptr,
                                  ldn, n * k, s.info.data(), s.sweeps.data(), int(count), o);
  s.solve = now_seconds() - ts;
  if (st != 0) {
    err = std::string(bsvd_status_string(st)) + ": " + bsvd_last_error();
    return st;
  }
  if (a.residuals) {
    s.res.resize(size_t(count));
    s.orth.resize(size_t(count));
  }
  for (int64_t b = 0; b < count; ++b) {
    s.tally.add(s.info[b], s.sweeps[b], path[b]);
    if (!a.residuals) continue;
    const Residual r = residual_of<T>(int(m), int(n), A.data() + b * m * n, s.S.data() + b * k,
                                      U.data() + b * m * k, V.data() + b * n * k);
    s.res[b] = r.residual;
    s.orth[b] = r.orthogonality;
    if (s.info[b] >= 0) s.tally.add(r);
  }
  for (int which = 0; vec && which < 2; ++which) {
    const int64_t rows = which ? n : m;
    const std::vector<T> &X = which ? V : U;
    std::vector<T> &rm = which ? s.V : s.U;
    rm.resize(X.size());
    for (int64_t b = 0; b < count; ++b) {
      const auto one =
          row_major(int(rows), int(k), X.data() + b * rows * k, int(std::max<int64_t>(1, rows)));
      std::copy(one.begin(), one.end(), rm.begin() + b * rows * k);
    }
  }
  return st;
}

// One output array: its file, dtype, the shape of one matrix's part, and
// the data of the solved matrices.
struct Output {
  const char *file, *dtype;
  std::vector<long long> shape;
  const void *data;
  size_t bytes;
};

template <class T>
std::vector<Output> outputs(const Solved<T> &s, int64_t m, int64_t n, const RunArgs &a) {
  const long long k = a.room(std::min(m, n));
  std::vector<Output> out{
      {"S.npy", npy_dtype<real_t<T>>(), {k}, s.S.data(), s.S.size() * sizeof(real_t<T>)}};
  if (!a.values_only) {
    out.push_back({"U.npy", npy_dtype<T>(), {m, k}, s.U.data(), s.U.size() * sizeof(T)});
    out.push_back({"V.npy", npy_dtype<T>(), {n, k}, s.V.data(), s.V.size() * sizeof(T)});
  }
  // Per-matrix scalars: shape (batch,), or () for a 2-D input (as S is (k,)).
  out.push_back({"info.npy", "i4", {}, s.info.data(), s.info.size() * 4});
  out.push_back({"sweeps.npy", "i4", {}, s.sweeps.data(), s.sweeps.size() * 4});
  if (a.subset != BSVD_RANGE_ALL) out.push_back({"ns.npy", "i4", {}, s.ns.data(), s.ns.size() * 4});
  if (a.residuals) {
    out.push_back({"residual.npy", "f8", {}, s.res.data(), s.res.size() * 8});
    out.push_back({"orthogonality.npy", "f8", {}, s.orth.data(), s.orth.size() * 8});
  }
  return out;
}

// Outputs of an earlier run into the same directory that this run does not
// write would be read as this run's: they go.
void remove_stale(OutputSet &set, const RunArgs &a) {
  auto out = [&](const char *name) { return (fs::path(a.out) / name).string(); };
  if (a.values_only) {
    set.remove_stale(out("U.npy"));
    set.remove_stale(out("V.npy"));
  }
  if (a.subset == BSVD_RANGE_ALL) set.remove_stale(out("ns.npy"));
  if (!a.residuals) {
    set.remove_stale(out("residual.npy"));
    set.remove_stale(out("orthogonality.npy"));
  }
}

struct Shape {
  bool three; // (batch, m, n); else (m, n), one matrix
  int64_t batch, m, n;
  // The full shape of an output whose matrices have shape s.
  std::vector<int64_t> of(const std::vector<long long> &s) const {
    std::vector<int64_t> full(s.begin(), s.end());
    if (three) full.insert(full.begin(), batch);
    return full;
  }
};

// One process: the whole array read, solved and written.
template <class T> int run_whole(const testing::NpyArray &in, const Shape &sh,
                                 const std::string &file, const RunArgs &a,
                                 const bsvd_options_t &base, double t0) {
  Solved<T> s;
  std::string err;
  const bsvd_status_t st =
      solve<T>(column_major<T>(in.data.data(), sh.batch, sh.m, sh.n, in.fortran_order), sh.batch,
               sh.m, sh.n, a, base, s, err);
  if (st != 0) {
    std::fprintf(stderr, "bsvd run: %s: %s\n", file.c_str(), err.c_str());
    return st < 0 ? 2 : 1;
  }
  OutputSet set;
  bool ok = true;
  for (const Output &o : outputs(s, sh.m, sh.n, a)) {
    const std::vector<int64_t> full = sh.of(o.shape);
    ok = ok && set.add_npy((fs::path(a.out) / o.file).string(), o.dtype,
                           std::vector<long long>(full.begin(), full.end()), o.data, o.bytes, err);
  }
  remove_stale(set, a);
  if (!ok || !set.publish(err)) {
    std::fprintf(stderr, "bsvd run: cannot write the outputs (none written): %s\n", err.c_str());
    return 1;
  }
  print_summary(s.tally, precision_of<T>(), a, now_seconds() - t0, s.solve);
  return 0;
}

// The bytes of matrices [b0, b1) of the array in file (data at offset): a
// C-order slice is one read, a Fortran-order one a read per element
// position (runs of b1 - b0 items).
bool read_slice(const std::string &file, uint64_t offset, const testing::NpyArray &h,
                const Shape &sh, int64_t b0, int64_t b1, std::vector<unsigned char> &raw,
                std::string &err) {
  const uint64_t item = h.itemsize(), count = uint64_t(b1 - b0), mn = uint64_t(sh.m * sh.n);
  raw.resize(size_t(count * mn * item));
  if (!h.fortran_order || count == 0)
    return testing::read_at(file, offset + uint64_t(b0) * mn * item, raw.data(), raw.size(), err);
  for (uint64_t e = 0; e < mn; ++e)
    if (!testing::read_at(file, offset + (uint64_t(b0) + uint64_t(sh.batch) * e) * item,
                          raw.data() + e * count * item, size_t(count * item), err))
      return false;
  return true;
}

// Several ranks: each its slice of the batch. Every rank passes every
// collective below in the same order whatever fails where.
template <class T> int run_ranks(const testing::NpyArray &h, uint64_t offset, const Shape &sh,
                                 const std::string &file, const RunArgs &a,
                                 const bsvd_options_t &base, double t0, const Ranks &ranks) {
  const int64_t b0 = sh.batch * ranks.rank() / ranks.size();
  const int64_t b1 = sh.batch * (ranks.rank() + 1) / ranks.size();
  Solved<T> s;
  std::string err, msg;
  int rc = 0;
  {
    std::vector<unsigned char> raw;
    if (!read_slice(file, offset, h, sh, b0, b1, raw, err)) {
      rc = 1;
      msg = "bsvd run: " + file + ": " + reason(file, err);
    } else {
      const std::vector<T> A = column_major<T>(raw.data(), b1 - b0, sh.m, sh.n, h.fortran_order);
      raw = {};
      if (const bsvd_status_t st = solve<T>(A, b1 - b0, sh.m, sh.n, a, base, s, err)) {
        rc = st < 0 ? 2 : 1;
        msg = "bsvd run: " + file + ": " + err;
      }
    }
  }
  if ((rc = ranks.agree(rc, msg))) return rc;

  const std::vector<Output> outs = outputs(s, sh.m, sh.n, a);
  std::vector<std::string> preludes(outs.size());
  for (size_t i = 0; i < outs.size(); ++i)
    testing::npy_prelude(outs[i].dtype, sh.of(outs[i].shape), false, preludes[i], err);
  // Rank 0 creates the temporary files (their names to every rank), and
  // owns them: its set removes them unless they are published.
  OutputSet set;
  std::string names;
  if (ranks.rank() == 0) {
    for (size_t i = 0; i < outs.size() && rc == 0; ++i) {
      const std::string path = (fs::path(a.out) / outs[i].file).string();
      std::string tmp;
      if (!testing::write_temp(path, {{preludes[i].data(), preludes[i].size()}}, tmp, err)) {
        rc = 1;
        msg = "bsvd run: cannot write the outputs (none written): " + err;
        break;
      }
      set.add_temp(tmp, path);
      names += tmp + "\n";
    }
    remove_stale(set, a);
  }
  if ((rc = ranks.agree(rc, msg))) return rc;
  ranks.broadcast(names);
  std::vector<std::string> tmp;
  for (size_t p = 0, q; (q = names.find('\n', p)) != std::string::npos; p = q + 1)
    tmp.push_back(names.substr(p, q - p));
  for (size_t i = 0; i < outs.size() && rc == 0; ++i) {
    const uint64_t per = b1 > b0 ? outs[i].bytes / uint64_t(b1 - b0) : 0; // bytes a matrix
    if (outs[i].bytes && !testing::write_at(tmp[i], preludes[i].size() + uint64_t(b0) * per,
                                            outs[i].data, outs[i].bytes, err)) {
      rc = 1; // named by its target, as one process names it
      msg = "bsvd run: cannot write the outputs (none written): " +
            (fs::path(a.out) / outs[i].file).string() + err.substr(tmp[i].size());
    }
  }
  const std::vector<std::string> tallies = ranks.gather(s.tally.encode());
  const double solve_time = ranks.max(s.solve);
  if ((rc = ranks.agree(rc, msg))) return rc;
  if (ranks.rank() == 0 && !set.publish(err)) {
    rc = 1;
    msg = "bsvd run: cannot write the outputs (none written): " + err;
  }
  if ((rc = ranks.agree(rc, msg))) return rc;
  if (ranks.rank() == 0) {
    Tally t;
    for (const std::string &x : tallies) t.merge(x);
    print_summary(t, precision_of<T>(), a, now_seconds() - t0, solve_time, ranks.size());
  }
  return 0;
}

} // namespace

int run_npy(const std::string &file, const RunArgs &a, const bsvd_options_t &opts, double t0,
            const Ranks &ranks) {
  // One process reads the whole file; ranks read its header, then each its
  // slice (no rank reads all of it).
  testing::NpyArray arr;
  uint64_t offset = 0;
  std::string err, msg;
  const bool whole = ranks.size() == 1;
  int rc = 0;
  if (!(whole ? testing::read_npy(file, arr, err)
              : testing::read_npy_header(file, arr, offset, err))) {
    rc = 1;
    msg = "bsvd run: " + file + ": " + reason(file, err);
  } else if (arr.shape.size() != 2 && arr.shape.size() != 3) {
    rc = 1;
    msg = "bsvd run: " + file + ": expected shape (batch, m, n) or (m, n), got " +
          std::to_string(arr.shape.size()) + " dimensions";
  } else if (!precision_of_dtype(arr.dtype)) {
    rc = 1;
    msg = "bsvd run: " + file + ": unsupported dtype " + arr.dtype + " (f4, f8, c8 or c16)";
  }
  Shape sh{arr.shape.size() == 3, 1, 0, 0};
  if (rc == 0) {
    sh.batch = sh.three ? arr.shape[0] : 1;
    sh.m = arr.shape[sh.three ? 1 : 0];
    sh.n = arr.shape[sh.three ? 2 : 1];
    if (sh.batch > INT32_MAX || sh.m > INT32_MAX || sh.n > INT32_MAX) {
      rc = 1;
      msg = "bsvd run: " + file + ": array too large for one call";
    }
  }
  if ((rc = ranks.agree(rc, msg))) return rc;
  with_precision(precision_of_dtype(arr.dtype), [&](auto tag) {
    using T = decltype(tag);
    rc = whole ? run_whole<T>(arr, sh, file, a, opts, t0)
               : run_ranks<T>(arr, offset, sh, file, a, opts, t0, ranks);
  });
  return rc;
}

} // namespace bsvd::cli
