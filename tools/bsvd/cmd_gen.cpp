// bsvd gen: write a test batch as .npy, shape (batch, m, n), C order.
#include "common.hpp"
#include "files.hpp"

#include "testing/generate.hpp"
#include "testing/io.hpp"

#include <cstdio>
#include <cstring>

namespace bsvd::cli {
namespace {

struct GenArgs {
  std::string out;
  std::string family = "random";
  std::string edge;
  std::string precision = "d";
  long long batch = 1;
  int m = 8, n = 8;
  double kappa = 0;
  uint64_t seed = 1;
};

template <class T> const char *dtype_of();
template <> const char *dtype_of<float>() { return "f4"; }
template <> const char *dtype_of<double>() { return "f8"; }
template <> const char *dtype_of<std::complex<float>>() { return "c8"; }
template <> const char *dtype_of<std::complex<double>>() { return "c16"; }

template <class T> int gen(const GenArgs &a) {
  testing::Family fam{};
  testing::Edge edge{};
  const bool use_edge = !a.edge.empty();
  if (use_edge ? !testing::parse_edge(a.edge, edge) : !testing::parse_family(a.family, fam)) {
    std::fprintf(stderr, "bsvd gen: unknown %s '%s'\n", use_edge ? "edge case" : "family",
                 (use_edge ? a.edge : a.family).c_str());
    return 2;
  }
  const double kappa = a.kappa > 0 ? a.kappa : testing::default_kappa<T>();
  std::string err;
  if (!check_output_file(a.out, "-o", err)) {
    std::fprintf(stderr, "bsvd gen: %s\n", err.c_str());
    return 2;
  }
  // The batch is held twice (row-major copy and the file's bytes).
  const double bytes = 2.0 * double(a.batch) * double(a.m) * double(a.n) * double(sizeof(T));
  if (!fits_in_memory(bytes,
                      "--batch " + std::to_string(a.batch) + " of " + std::to_string(a.m) + " x " +
                          std::to_string(a.n) + " " + a.precision + " matrices",
                      err)) {
    std::fprintf(stderr, "bsvd gen: %s\n", err.c_str());
    return 2;
  }
  const size_t mn = size_t(a.m) * a.n;
  std::vector<T> A(mn), rowmajor(mn * a.batch);
  for (long long b = 0; b < a.batch; ++b) {
    const uint64_t seed = a.seed * 1000003ull + uint64_t(b);
    if (use_edge)
      testing::generate_edge<T>(edge, a.m, a.n, seed, A.data(), std::max(1, a.m));
    else
      testing::generate<T>(fam, a.m, a.n, kappa, seed, A.data(), std::max(1, a.m));
    for (int i = 0; i < a.m; ++i)
      for (int j = 0; j < a.n; ++j)
        rowmajor[size_t(b) * mn + size_t(i) * a.n + j] = A[i + size_t(j) * a.m];
  }
  testing::NpyArray arr;
  arr.dtype = dtype_of<T>();
  arr.shape = {a.batch, a.m, a.n};
  arr.data.resize(rowmajor.size() * sizeof(T));
  if (!arr.data.empty()) std::memcpy(arr.data.data(), rowmajor.data(), arr.data.size());
  if (!testing::write_npy(a.out, arr, err)) {
    std::fprintf(stderr, "bsvd gen: %s\n", err.c_str());
    return 1;
  }
  std::printf("bsvd gen: wrote %lld x %d x %d %s (%s) to %s\n", a.batch, a.m, a.n,
              arr.dtype.c_str(), use_edge ? a.edge.c_str() : a.family.c_str(), a.out.c_str());
  return 0;
}

} // namespace

void add_gen(CLI::App &app, int &rc) {
  auto a = std::make_shared<GenArgs>();
  auto *sub = app.add_subcommand("gen", "Write a test batch (.npy, shape (batch, m, n))");
  sub->add_option("-o,--out", a->out, "output .npy file")->required();
  sub->add_option("--family", a->family, "random, arith, cluster0, cluster1, logrand, geo")
      ->capture_default_str();
  sub->add_option("--edge", a->edge,
                  "instead of a family: zero, identity, rankdef, overflow, underflow, nan, inf");
  sub->add_option("--precision", a->precision, "s, d, c or z")->capture_default_str();
  sub->add_option("--batch", a->batch, "number of matrices")
      ->capture_default_str()
      ->transform(count(0));
  sub->add_option("-m", a->m, "rows")->capture_default_str()->transform(count(0));
  sub->add_option("-n", a->n, "columns")->capture_default_str()->transform(count(0));
  sub->add_option("--kappa", a->kappa, "condition number (0 = 1e5 for s/c, 1e10 for d/z)");
  sub->add_option("--seed", a->seed, "random seed")->capture_default_str();
  sub->callback([a, &rc] {
    if (a->precision.size() != 1 ||
        !with_precision(a->precision[0], [&](auto tag) { rc = gen<decltype(tag)>(*a); })) {
      std::fprintf(stderr, "bsvd gen: --precision must be one of s, d, c, z\n");
      rc = 2;
    }
  });
}

} // namespace bsvd::cli
