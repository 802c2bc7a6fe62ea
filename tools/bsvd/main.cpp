// bsvd: batched SVD from the command line.
//   bsvd run    solve a batch from .npy or Matrix Market files, write S, U, V
//   bsvd check  the accuracy suite (T1-T4) over precisions, families, sizes
//   bsvd gen    write test batches (.npy)
//   bsvd plan   the plan of a call: each matrix's path and its parameters
//   bsvd bench  time bsvd against LAPACK (and cuSOLVER on a GPU): runs the
//               build tree's bsvd-bench (tools/bench/), a developer tool that
//               reaches into the library's internals and is not installed
#include "common.hpp"

#include <cerrno>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

// `bsvd bench ARGS` is `bsvd-bench ARGS` from the directory of this
// executable (where the build puts both). Returns only if it cannot run.
int exec_bench(int argc, char **argv) {
  std::string dir;
  std::vector<char> self(4096);
  const ssize_t len = readlink("/proc/self/exe", self.data(), self.size() - 1);
  if (len > 0) {
    dir.assign(self.data(), size_t(len));
    dir.erase(dir.find_last_of('/') + 1);
  }
  const std::string bench = dir + "bsvd-bench";
  std::vector<char *> args{const_cast<char *>(bench.c_str())};
  for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  execv(bench.c_str(), args.data());
  if (errno == ENOENT)
    std::cerr << "bsvd bench: the benchmark is a developer tool of the build tree and is not "
                 "installed (no "
              << bench << "); build the target bsvd_bench and run it from the build directory\n";
  else
    std::cerr << "bsvd bench: cannot run " << bench << ": " << std::strerror(errno) << "\n";
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  using namespace bsvd::cli;
  if (argc > 1 && std::strcmp(argv[1], "bench") == 0) return exec_bench(argc, argv);
  CLI::App app{"bsvd: batched singular value decomposition (one-sided Jacobi) on CPUs and GPUs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("bsvd ") + bsvd_version());
  int rc = 0;
  add_run(app, rc);
  add_gen(app, rc);
  add_check(app, rc);
  // (listed for --help; main runs bsvd-bench before parsing)
  app.add_subcommand("bench", "Time bsvd against LAPACK (cpu) and cuSOLVER (cuda) on the same "
                              "data (the build tree's bsvd-bench; not installed)")
      ->allow_extras();
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
