// bsvd-bench: side-by-side timings of bsvd and the incumbents (LAPACK,
// cuSOLVER) on the same data, in one process (bench.hpp). A developer tool
// of the build tree: it reaches into the library's internals (tuning
// tables, per-path profiles, forced routes) and is not installed. The
// installed tool's `bsvd bench ARGS` runs it when it sits next to `bsvd`.
#include "bench.hpp"
#include "common.hpp"

#include <exception>
#include <iostream>
#include <new>

int main(int argc, char **argv) {
  using namespace bsvd::cli;
  CLI::App app{"bsvd bench: time bsvd against LAPACK (cpu) and cuSOLVER (cuda) on the same data",
               "bsvd bench"};
  app.set_version_flag("--version", std::string("bsvd ") + bsvd_version());
  int rc = 0;
  add_bench_options(app, rc);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const std::bad_alloc &) {
    std::cerr << "bsvd bench: out of memory (the cases are too large for this machine)\n";
    return 1;
  } catch (const std::exception &e) {
    std::cerr << "bsvd bench: " << e.what() << "\n";
    return 2;
  }
  return rc;
}
