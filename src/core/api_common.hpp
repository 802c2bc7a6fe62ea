// The argument checks every public entry point shares (api.cpp defines
// them; api_hsvd.cpp, the hyperbolic forms, reuses them): the -position
// convention, the options, and the sizes and pointers of a batch.
#pragma once

#include "batch.hpp"

namespace bsvd::detail {

// Positions (1-based) of each argument in a public prototype; 0 = absent
// (nplus: only in the hyperbolic forms).
struct ArgPos {
  int job, m, n, A, lda, strideA, S, strideS, U, ldu, strideU, V, ldv, strideV, info, sweeps, batch,
      opts, nplus;
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

// The public forms' checks and the call (api.cpp), the SVD's (nplus null,
// p.nplus 0) and the HSVD's (nplus its argument at position p.nplus):
// the strided form, and the pointer-array forms (variable: vbatched, with
// the per-matrix sizes mv, nv and leading dimensions).
template <class T>
bsvd_status_t strided(const ArgPos &p, bsvd_job_t job, int m, int n, const int *nplus, const T *A,
                      int lda, int64_t sA, real_of_t<T> *S, int64_t sS, T *U, int ldu, int64_t sU,
                      T *V, int ldv, int64_t sV, int *info, int *sweeps, int batch,
                      const bsvd_options_t *opts, Exec exec = Exec::kBlocking);
template <class T>
bsvd_status_t arrays(const ArgPos &p, bsvd_job_t job, int m, const int *mv, int n, const int *nv,
                     const int *nplus, const T *const *A, int lda, const int *ldav,
                     real_of_t<T> *const *S, T *const *U, int ldu, const int *lduv, T *const *V,
                     int ldv, const int *ldvv, int *info, int *sweeps, int batch,
                     const bsvd_options_t *opts, bool variable, Exec exec = Exec::kBlocking);

} // namespace bsvd::detail
