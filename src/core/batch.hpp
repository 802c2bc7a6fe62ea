// Internal description of one call's batch, shared by every backend.
//
// The three public forms (strided, pointer array, variable size) all become
// one Batch<T>: each operand is either base + b * stride or array[b], each
// size either a scalar or a per-matrix array. The accessors are usable in
// host and device code, so a kernel can take a Batch<T> by value (with
// device-visible arrays) and serve every form with one code path.
#pragma once

#include <bsvd/bsvd.h>

#include "options.hpp"

#include <complex>
#include <cstdint>

#if defined(__CUDACC__)
#define BSVD_HD __host__ __device__
#else
#define BSVD_HD
#endif

namespace bsvd::detail {

// The precision letter of a scalar type: 's', 'd', 'c', 'z'.
template <class T> constexpr char precision_of();
template <> constexpr char precision_of<float>() { return 's'; }
template <> constexpr char precision_of<double>() { return 'd'; }
template <> constexpr char precision_of<std::complex<float>>() { return 'c'; }
template <> constexpr char precision_of<std::complex<double>>() { return 'z'; }

template <class T> struct real_of { using type = T; };
template <class T> struct real_of<std::complex<T>> { using type = T; };
template <class T> using real_of_t = typename real_of<T>::type;

// One operand of the batch: matrix b lives at ptr(b) with leading dim ldm(b).
template <class P> struct Operand {
  P base = nullptr; // strided form
  int64_t stride = 0;
  P const *array = nullptr; // pointer-array forms (takes precedence)
  int ld = 0; // uniform leading dimension
  const int *ldv = nullptr; // per-matrix leading dimensions (vbatched)

  BSVD_HD P ptr(int b) const { return array ? array[b] : base + int64_t(b) * stride; }
  BSVD_HD int ldm(int b) const { return ldv ? ldv[b] : ld; }
};

struct Dims {
  int m = 0, n = 0; // uniform sizes
  const int *mv = nullptr; // per-matrix sizes (vbatched)
  const int *nv = nullptr;
  BSVD_HD int rows(int b) const { return mv ? mv[b] : m; }
  BSVD_HD int cols(int b) const { return nv ? nv[b] : n; }
  BSVD_HD bool uniform() const { return mv == nullptr; }
};

template <class T> struct Batch {
  using R = real_of_t<T>;
  bool vectors = false;
  int count = 0;
  Dims dims;
  Operand<const T *> A;
  Operand<R *> S;
  Operand<T *> U; // unused when !vectors
  Operand<T *> V; // unused when !vectors
  int *info = nullptr;
  int *sweeps = nullptr; // may be null
  // The hyperbolic SVD (docs/hsvd.md): nplus[b] the +1 entries of matrix
  // b's signature J (host memory); null for the SVD.
  const int *nplus = nullptr;
};

// The Batch of a strided call's arguments (the public strided forms, checked
// by api_common.hpp's check_batch; and the single packed matrix of a
// preconditioned solve's inner matrix: batch 1, strides 0).
template <class T> Batch<T> strided_batch(bsvd_job_t job, int m, int n, const T *A, int lda,
                                          int64_t sA, real_of_t<T> *S, int64_t sS, T *U, int ldu,
                                          int64_t sU, T *V, int ldv, int64_t sV, int *info,
                                          int *sweeps, int batch) {
  Batch<T> b;
  b.vectors = job == BSVD_JOB_VECTORS;
  b.count = batch;
  b.dims.m = m;
  b.dims.n = n;
  b.A.base = A;
  b.A.stride = sA;
  b.A.ld = lda;
  b.S.base = S;
  b.S.stride = sS;
  b.U.base = U;
  b.U.stride = sU;
  b.U.ld = ldu;
  b.V.base = V;
  b.V.stride = sV;
  b.V.ld = ldv;
  b.info = info;
  b.sweeps = sweeps;
  return b;
}

// Matrices first ... first + count - 1 of a batch, as a batch of their own
// (host code: the batch's arrays are host memory or device pointers that
// are offset, not read).
template <class T> Batch<T> slice(const Batch<T> &b, int first, int count) {
  Batch<T> s = b;
  s.count = count;
  auto cut = [first](auto &op) {
    if (op.array)
      op.array += first;
    else if (op.base)
      op.base += int64_t(first) * op.stride;
    if (op.ldv) op.ldv += first;
  };
  cut(s.A);
  cut(s.S);
  if (s.vectors) {
    cut(s.U);
    cut(s.V);
  }
  if (s.dims.mv) s.dims.mv += first;
  if (s.dims.nv) s.dims.nv += first;
  if (s.info) s.info += first;
  if (s.sweeps) s.sweeps += first;
  if (s.nplus) s.nplus += first;
  return s;
}

// How a call runs: kBlocking returns when its results are written (the
// bsvd_<p>gesvj_<form> calls); kAsync only enqueues on the stream, device
// data on the cuda backend only, and may be captured in a CUDA graph (the
// _async forms, bsvd.h; docs/design/async.md).
enum class Exec { kBlocking, kAsync };

// The Config value of each option's field value (options.hpp: defaults
// resolved): to_config_<name>(x).
#define BSVD_OPTION_RESOLVE(name, type, kind, lo, hi, init, resolved, value_name, help)            \
  constexpr type to_config_##name(type x) { return type(resolved); }
BSVD_OPTION_TABLE(BSVD_OPTION_RESOLVE)
#undef BSVD_OPTION_RESOLVE

// Resolved solver settings: a field per option (options.hpp), defaults
// resolved (max_sweeps 80, ...), and how the call runs.
struct Config {
#define BSVD_OPTION_FIELD(name, type, kind, lo, hi, init, resolved, value_name, help)              \
  type name = to_config_##name(type(init));
  BSVD_OPTION_TABLE(BSVD_OPTION_FIELD)
#undef BSVD_OPTION_FIELD
  Exec exec = Exec::kBlocking;
};

// Unit roundoff u = 2^-p (p significand bits including the implicit one).
template <class R> constexpr R unit_roundoff();
template <> constexpr float unit_roundoff<float>() { return 5.9604644775390625e-8f; }
template <> constexpr double unit_roundoff<double>() { return 1.1102230246251565e-16; }

} // namespace bsvd::detail
