// The argument checks every public entry point shares (api.cpp defines
// them; api_hsvd.cpp, the hyperbolic forms, reuses them): the -position
// convention, the options, and the sizes and pointers of a batch.
#pragma once

#include "batch.hpp"

namespace bsvd::detail {

// Positions (1-based) of each argument in a public prototype; 0 = absent.
struct ArgPos {
  int job, m, n, A, lda, strideA, S, strideS, U, ldu, strideU, V, ldv, strideV, info, sweeps, batch,
      opts;
};

// Sets bsvd_last_error to "argument <pos> (<name>) <detail>" and returns -pos.
bsvd_status_t bad(int pos, const char *name, const char *fmt, ...);

// The caller's options (NULL: defaults) as a full, checked struct of this
// version (struct_size rules: bsvd.h); pos is their argument position.
bsvd_status_t read_options(const bsvd_options_t *user, int pos, bsvd_options_t &o);

Config make_config(const bsvd_options_t &o);

// The cpu backend's worker count for a batch of `batch` matrices.
int cpu_threads(const bsvd_options_t &o, int batch);

// Sizes, leading dimensions and the pointers a non-empty matrix needs.
template <class T> bsvd_status_t check_batch(const Batch<T> &b, const ArgPos &p, bool variable);

} // namespace bsvd::detail
