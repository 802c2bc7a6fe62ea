// What the public entry points share (api.cpp defines it; api_hsvd.cpp,
// the hyperbolic forms, and api_query.cpp, the workspace and plan
// queries, reuse it): the -position convention, the options, the sizes
// and pointers of a batch, the forms' checks and dispatch, the C types.
#pragma once

#include "batch.hpp"

#include <complex>
#include <cstring>
#include <exception>
#include <new>

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

// BSVD_BACKEND_AUTO for host data: cuda when a GPU is visible, else cpu.
// (Device data: cuda.)
bsvd_backend_t auto_backend_for_host_data(const Config &cfg);

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

// The C API's types as the templates take them (bsvd_cfloat ->
// std::complex<float>, bsvd_cdouble -> std::complex<double>, the rest as
// they are): the C entry points hand their pointers on through cpp().
template <class T> struct CType { using type = T; };
template <> struct CType<bsvd_cfloat> { using type = std::complex<float>; };
template <> struct CType<bsvd_cdouble> { using type = std::complex<double>; };

template <class T> const typename CType<T>::type *cpp(const T *p) {
  return reinterpret_cast<const typename CType<T>::type *>(p);
}
template <class T> typename CType<T>::type *cpp(T *p) {
  return reinterpret_cast<typename CType<T>::type *>(p);
}
template <class T> const typename CType<T>::type *const *cpp(const T *const *p) {
  return reinterpret_cast<const typename CType<T>::type *const *>(p);
}
template <class T> typename CType<T>::type *const *cpp(T *const *p) {
  return reinterpret_cast<typename CType<T>::type *const *>(p);
}

// A scalar argument of the C API as the templates take it (bsvd_cfloat ->
// std::complex<float>: the same bytes).
template <class T> typename CType<T>::type val(T x) {
  typename CType<T>::type v;
  static_assert(sizeof v == sizeof x, "C and C++ scalar types differ in size");
  std::memcpy(static_cast<void *>(&v), &x, sizeof v);
  return v;
}

// ---- the batched BLAS / LAPACK building blocks (api_blas.cpp: GEMV,
// api_gebrd.cpp: GEBRD; bsvd.h, "Batched BLAS and LAPACK") ---------------------
// One operand of the memory-space check: its pointer (for the first
// matrix that has work), argument position and name.
struct DataArg {
  const void *p;
  int pos;
  const char *name;
};
// Where the call's data lives, where = 0 host or 1 device: the space of
// the first non-null pointer; -position of the first that disagrees.
bsvd_status_t locate_data(const DataArg *args, int count, int &where);
// The backend of a building-block call on data in `where`: bsvd.h's
// "Backends and memory" (host data on the cpu, device data on the cuda
// backend; the _async forms device data only). posA / nameA: the argument
// blamed for memory in the wrong space; posOpts: opts.
bsvd_status_t blas_backend(int where, const bsvd_options_t &o, Exec exec, int posA,
                           const char *nameA, int posOpts, bsvd_backend_t &out);
void set_error(const char *fmt, ...); // (backends.hpp)
// f() with the exceptions a backend may throw as statuses (no exception
// crosses the C API).
template <class F> bsvd_status_t guarded(F &&f) {
  try {
    return f();
  } catch (const std::bad_alloc &) {
    set_error("host allocation failed");
    return BSVD_STATUS_ALLOC_FAILED;
  } catch (const std::exception &e) {
    set_error("internal error: %s", e.what());
    return BSVD_STATUS_INTERNAL_ERROR;
  } catch (...) {
    set_error("internal error");
    return BSVD_STATUS_INTERNAL_ERROR;
  }
}

} // namespace bsvd::detail
