// Runs the ranges of a split batch (plan/split.hpp) at once: the cuda
// backend's devices (api.cpp) and the CPU twin's tests.
#pragma once

#include <bsvd/bsvd.h>

#include "backends.hpp"

#include <functional>
#include <new>
#include <string>
#include <vector>

namespace bsvd::detail {

// Calls f(0) ... f(n - 1) at once, f(i) on worker thread i, and waits for
// all. The workers live as long as the process: a device's thread keeps its
// thread-local state (the library's streams, kept CUDA graphs, cuBLAS
// handle) from call to call instead of leaking it with each thread. One
// run at a time; a second caller waits for the first.
void run_on_workers(int n, const std::function<void(int)> &f);

// solve(part, first, count) -> bsvd_status_t for each range of starts, range
// p on worker p. Returns the status of the first failing range by range
// order, with its bsvd_last_error text (prefixed by its matrices) as this
// thread's error; SUCCESS when every range succeeded.
template <class F> bsvd_status_t run_split(const std::vector<int> &starts, F solve) {
  const size_t parts = starts.size() - 1;
  std::vector<bsvd_status_t> status(parts, BSVD_STATUS_SUCCESS);
  std::vector<std::string> error(parts);
  run_on_workers(int(parts), [&](int p) {
    try {
      status[size_t(p)] = solve(p, starts[size_t(p)], starts[size_t(p) + 1] - starts[size_t(p)]);
      if (status[size_t(p)] != BSVD_STATUS_SUCCESS) error[size_t(p)] = bsvd_last_error();
    } catch (const std::bad_alloc &) { // (a worker must not throw out of its function)
      status[size_t(p)] = BSVD_STATUS_ALLOC_FAILED;
      error[size_t(p)] = "host allocation failed";
    } catch (...) {
      status[size_t(p)] = BSVD_STATUS_INTERNAL_ERROR;
      error[size_t(p)] = "an exception in the range's thread";
    }
  });
  for (size_t p = 0; p < parts; ++p)
    if (status[p] != BSVD_STATUS_SUCCESS) {
      set_error("matrices %d ... %d: %s", starts[p], starts[p + 1] - 1, error[p].c_str());
      return status[p];
    }
  return BSVD_STATUS_SUCCESS;
}

} // namespace bsvd::detail
