// Shared by the native layer's files (module.cpp: the blocking calls and the
// module; async.cpp: the stream-ordered calls): the array checks, the
// options, the device guard and the checked strided batch. Everything here
// is inline in namespace bsvdpy; module.cpp and async.cpp use it.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <bsvd/bsvd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#if defined(BSVD_WITH_CUDA)
#include <cuda_runtime.h>
#endif

namespace bsvdpy {

namespace nb = nanobind;

using Array = nb::ndarray<>; // any dtype, device, layout
using ROArray = nb::ndarray<nb::ro>; // input: read-only is fine

// ---- array checks ----------------------------------------------------------

enum class Space { Host, Device };

struct Where {
  Space space = Space::Host;
  int device_id = 0;
};

inline Where where_of(int device_type, int device_id, const char *what) {
  switch (device_type) {
  case nb::device::cpu::value:
  case nb::device::cuda_host::value: return {Space::Host, 0};
  case nb::device::cuda::value:
  case nb::device::cuda_managed::value: return {Space::Device, device_id};
  default:
    throw nb::type_error((std::string("bsvd: ") + what +
                          " is on an unsupported device (DLPack device type " +
                          std::to_string(device_type) + "); only CPU and CUDA arrays are supported")
                             .c_str());
  }
}

// Number of elements spanned from data() to the last element (0 if empty);
// negative strides are refused.
template <class Arr> int64_t span_of(const Arr &a, const char *what) {
  int64_t last = 0;
  for (size_t i = 0; i < a.ndim(); ++i) {
    if (a.shape(i) == 0) return 0;
    if (a.stride(i) < 0)
      throw nb::value_error((std::string("bsvd: ") + what + " has a negative stride").c_str());
    last += int64_t(a.shape(i) - 1) * a.stride(i);
  }
  return last + 1;
}

// Elements touched by a batch of column-major rows x cols matrices with
// leading dimension ld, matrix b at offset + b * stride.
inline int64_t extent(int64_t offset, int64_t rows, int64_t cols, int64_t ld, int64_t stride,
                      int64_t batch) {
  if (rows <= 0 || cols <= 0 || batch <= 0) return 0;
  return offset + (batch - 1) * stride + (cols - 1) * ld + rows;
}

inline void need(int64_t extent_elems, int64_t span, const char *what) {
  if (extent_elems > span)
    throw nb::value_error(
        (std::string("bsvd: ") + what + " is too small for the requested layout (needs " +
         std::to_string(extent_elems) + " elements, has " + std::to_string(span) + ")")
            .c_str());
}

inline bool is_dtype(const nb::dlpack::dtype &d, nb::dlpack::dtype_code code, int bits) {
  return d.code == uint8_t(code) && d.bits == bits && d.lanes == 1;
}

// Precision letter of the matrix dtype: s, d, c, z.
inline char precision_of(const nb::dlpack::dtype &d) {
  using C = nb::dlpack::dtype_code;
  if (is_dtype(d, C::Float, 32)) return 's';
  if (is_dtype(d, C::Float, 64)) return 'd';
  if (is_dtype(d, C::Complex, 64)) return 'c';
  if (is_dtype(d, C::Complex, 128)) return 'z';
  throw nb::type_error(
      "bsvd: unsupported dtype; expected float32, float64, complex64 or complex128");
}

inline void check_real_of(const Array &a, char prec, const char *what) {
  using C = nb::dlpack::dtype_code;
  const int bits = (prec == 's' || prec == 'c') ? 32 : 64;
  if (!is_dtype(a.dtype(), C::Float, bits))
    throw nb::type_error(
        (std::string("bsvd: ") + what + " must be float" + std::to_string(bits)).c_str());
}

inline void check_same_dtype(const Array &a, const nb::dlpack::dtype &d, const char *what) {
  if (!(a.dtype() == d))
    throw nb::type_error((std::string("bsvd: ") + what + " must have the dtype of A").c_str());
}

inline void check_int32(const Array &a, const char *what) {
  if (!is_dtype(a.dtype(), nb::dlpack::dtype_code::Int, 32))
    throw nb::type_error((std::string("bsvd: ") + what + " must be int32").c_str());
}

// All arrays of one call live in one memory space (and on one device).
struct SpaceCheck {
  bool first = true;
  Where w;
  void add(int device_type, int device_id, const char *what) {
    const Where x = where_of(device_type, device_id, what);
    if (first) {
      w = x;
      first = false;
      return;
    }
    if (x.space != w.space || (x.space == Space::Device && x.device_id != w.device_id))
      throw nb::value_error(
          (std::string("bsvd: ") + what +
           " is on a different device than A: all arrays of a call must be on one device")
              .c_str());
  }
};

// ---- options, device guard, the call ---------------------------------------

// A call's options: the value of every row of the library's option table
// (bsvd_option_info, in its order; the Python layer has checked them), the
// stream, and the devices of a host batch.
struct Opts {
  std::vector<double> values;
  uintptr_t stream = 0;
  int device_count = 0; // bsvd_options_t::device_count; devices its list
  std::vector<int> devices = {};
};

inline bsvd_options_t make_options(const Opts &o, int *path) {
  bsvd_options_t opts;
  bsvd_options_init(&opts);
  if (o.values.size() != size_t(bsvd_option_count()))
    throw std::invalid_argument("bsvd: Options holds " + std::to_string(o.values.size()) +
                                " values, not one per option (" +
                                std::to_string(bsvd_option_count()) + ")");
  for (int i = 0; i < bsvd_option_count(); ++i)
    if (bsvd_option_set(&opts, i, o.values[size_t(i)]) != 0)
      throw std::invalid_argument(std::string("bsvd: ") + bsvd_last_error());
  opts.stream = reinterpret_cast<void *>(o.stream);
  opts.device_count = o.device_count;
  opts.devices = o.devices.empty() ? nullptr : o.devices.data();
  opts.path = path;
  return opts;
}

// Makes the arrays' device current for the call (the library launches on
// the current device) and restores the caller's afterwards.
struct DeviceGuard {
#if defined(BSVD_WITH_CUDA)
  int previous = -1;
  explicit DeviceGuard(const Where &w) {
    if (w.space != Space::Device) return;
    int cur = 0;
    if (cudaGetDevice(&cur) != cudaSuccess) {
      cudaGetLastError();
      throw std::runtime_error("bsvd: cudaGetDevice failed");
    }
    if (cur != w.device_id) {
      if (cudaSetDevice(w.device_id) != cudaSuccess) {
        cudaGetLastError();
        throw std::runtime_error("bsvd: cudaSetDevice failed for device " +
                                 std::to_string(w.device_id));
      }
      previous = cur;
    }
  }
  ~DeviceGuard() {
    if (previous >= 0) cudaSetDevice(previous);
  }
#else
  explicit DeviceGuard(const Where &) {}
#endif
};

inline void check_device_usable(const Where &w) {
  if (w.space == Space::Device && !bsvd_cuda_available())
    throw nb::value_error(
        "bsvd: the arrays are CUDA device memory, but this bsvd was built without "
        "the CUDA backend (or no GPU is visible to it); rebuild with nvcc available");
}

inline int to_int(int64_t v, const char *what) {
  if (v < 0 || v > INT_MAX)
    throw nb::value_error((std::string("bsvd: ") + what + " = " + std::to_string(v) +
                           " does not fit the library's int")
                              .c_str());
  return int(v);
}

template <class T> T *ptr_at(const Array &a, int64_t offset) {
  return reinterpret_cast<T *>(static_cast<unsigned char *>(a.data()) +
                               offset * int64_t(a.itemsize()));
}

using Result = std::tuple<int, std::string>;

inline Result finish(bsvd_status_t st) {
  return {int(st), st == 0 ? std::string() : std::string(bsvd_last_error())};
}

// ---- uniform batch: the strided form ---------------------------------------
//
// A: column-major m x n matrices, matrix b at A.data + b*strideA (elements).
// S: k values per matrix at S.data + b*strideS. U (m x k, ldu, strideU) and
// V (n x k, ldv, strideV) may be None for values only. (k = min(m, n), or
// the cols of check_strided: gesvdx's room.)

struct Strided { // a checked uniform batch
  char prec;
  bool vectors;
  int m, n, lda, ldu, ldv, batch;
  int64_t strideA, strideS, strideU, strideV;
  const void *A;
  void *S, *U, *V;
};

// Every check of the arrays A, S, U, V; sc holds their memory space after.
inline Strided check_strided(const ROArray &A, int64_t m, int64_t n, int64_t lda, int64_t strideA,
                             const Array &S, int64_t strideS, const std::optional<Array> &U,
                             int64_t ldu, int64_t strideU, const std::optional<Array> &V,
                             int64_t ldv, int64_t strideV, int64_t batch, SpaceCheck &sc,
                             int64_t cols = -1) {
  Strided c;
  c.prec = precision_of(A.dtype());
  c.vectors = U.has_value();
  if (c.vectors != V.has_value())
    throw nb::value_error("bsvd: U and V must both be given or both be None");
  // (the values and vectors per matrix: min(m, n) unless the call asks fewer)
  const int64_t k = cols >= 0 ? cols : std::min(m, n);
  // Sizes and layout (the library checks its own rules again).
  c.m = to_int(m, "m");
  c.n = to_int(n, "n");
  c.lda = to_int(lda, "lda");
  c.batch = to_int(batch, "batch");
  c.ldu = c.vectors ? to_int(ldu, "ldu") : 1;
  c.ldv = c.vectors ? to_int(ldv, "ldv") : 1;
  if (strideA < 0 || strideS < 0 || strideU < 0 || strideV < 0)
    throw nb::value_error("bsvd: negative batch stride");
  c.strideA = strideA;
  c.strideS = strideS;
  c.strideU = strideU;
  c.strideV = strideV;

  sc.add(A.device_type(), A.device_id(), "A");
  sc.add(S.device_type(), S.device_id(), "S");
  check_real_of(S, c.prec, "S");
  if (c.vectors) {
    sc.add(U->device_type(), U->device_id(), "U");
    sc.add(V->device_type(), V->device_id(), "V");
    check_same_dtype(*U, A.dtype(), "U");
    check_same_dtype(*V, A.dtype(), "V");
  }
  check_device_usable(sc.w);

  // Every access inside the arrays given.
  need(extent(0, m, n, lda, strideA, batch), span_of(A, "A"), "A");
  need(extent(0, k, 1, 1, strideS, batch), span_of(S, "S"), "S");
  if (c.vectors) {
    need(extent(0, m, k, ldu, strideU, batch), span_of(*U, "U"), "U");
    need(extent(0, n, k, ldv, strideV, batch), span_of(*V, "V"), "V");
  }
  c.A = A.data();
  c.S = S.data();
  c.U = c.vectors ? U->data() : nullptr;
  c.V = c.vectors ? V->data() : nullptr;
  return c;
}

// The caller's per-matrix arrays of a blocking call: info (batch int32, in
// the memory space of A), sweeps (None or likewise), path (None or host
// int32, batch).
inline void check_per_matrix(SpaceCheck &sc, const Array &info, const std::optional<Array> &sweeps,
                             const std::optional<Array> &path, int64_t batch) {
  sc.add(info.device_type(), info.device_id(), "info");
  check_int32(info, "info");
  need(batch, span_of(info, "info"), "info");
  if (sweeps) {
    sc.add(sweeps->device_type(), sweeps->device_id(), "sweeps");
    check_int32(*sweeps, "sweeps");
    need(batch, span_of(*sweeps, "sweeps"), "sweeps");
  }
  if (path) {
    if (where_of(path->device_type(), path->device_id(), "path").space != Space::Host)
      throw nb::value_error("bsvd: path must be host memory");
    check_int32(*path, "path");
    need(batch, span_of(*path, "path"), "path");
  }
}

// The library call (GIL released by the caller, device current): the
// blocking bsvd_<p>gesvj_strided_batched, or with stream_ordered its _async
// form (enqueue only).
inline bsvd_status_t call_strided(const Strided &c, int *info, int *sweeps,
                                  const bsvd_options_t &opts, bool stream_ordered = false) {
  const bsvd_job_t job = c.vectors ? BSVD_JOB_VECTORS : BSVD_JOB_VALUES;
  bsvd_status_t st = 0;
#define BSVD_CALL(p, T, R, suffix)                                                                 \
  st = bsvd_##p##gesvj_strided_batched##suffix(                                                    \
      job, c.m, c.n, static_cast<const T *>(c.A), c.lda, c.strideA, static_cast<R *>(c.S),         \
      c.strideS, static_cast<T *>(c.U), c.ldu, c.strideU, static_cast<T *>(c.V), c.ldv, c.strideV, \
      info, sweeps, c.batch, &opts)
#define BSVD_CALL_BOTH(p, T, R)                                                                    \
  if (stream_ordered)                                                                              \
    BSVD_CALL(p, T, R, _async);                                                                    \
  else                                                                                             \
    BSVD_CALL(p, T, R, )
  switch (c.prec) {
  case 's': BSVD_CALL_BOTH(s, float, float); break;
  case 'd': BSVD_CALL_BOTH(d, double, double); break;
  case 'c': BSVD_CALL_BOTH(c, bsvd_cfloat, float); break;
  default: BSVD_CALL_BOTH(z, bsvd_cdouble, double); break;
  }
#undef BSVD_CALL_BOTH
#undef BSVD_CALL
  return st;
}

// ---- variable-size batch: the vbatched forms ------------------------------
//
// A_list[i]: matrix i, column-major m[i] x n[i] with leading dimension
// lda[i], starting at its data(). Outputs are flat arrays with per-matrix
// element offsets: S at S.data + offS[i]; U (m x c, ldu[i]) at U.data +
// offU[i]; V (n x c, ldv[i]) at V.data + offV[i], where c = min(m[i],
// n[i]), or cols for a non-empty matrix when cols >= 0 (gesvdx's room).

struct VBatch { // a checked variable-size batch (count >= 1)
  char prec;
  bool vectors;
  Where w;
  std::vector<int> m, n, lda, ldu, ldv;
  std::vector<const void *> A;
  std::vector<void *> S, U, V;
};

inline VBatch check_vbatched(const std::vector<ROArray> &A_list, const std::vector<int64_t> &m,
                             const std::vector<int64_t> &n, const std::vector<int64_t> &lda,
                             const Array &S, const std::vector<int64_t> &offS,
                             const std::optional<Array> &U, const std::vector<int64_t> &ldu,
                             const std::vector<int64_t> &offU, const std::optional<Array> &V,
                             const std::vector<int64_t> &ldv, const std::vector<int64_t> &offV,
                             int64_t cols = -1) {
  const size_t count = A_list.size();
  VBatch v;
  v.vectors = U.has_value();
  if (v.vectors != V.has_value())
    throw nb::value_error("bsvd: U and V must both be given or both be None");
  if (m.size() != count || n.size() != count || lda.size() != count || offS.size() != count ||
      (v.vectors && (ldu.size() != count || offU.size() != count || ldv.size() != count ||
                     offV.size() != count)))
    throw nb::value_error("bsvd: per-matrix lists of different lengths");
  const nb::dlpack::dtype dt = A_list[0].dtype();
  v.prec = precision_of(dt);
  SpaceCheck sc;
  for (size_t i = 0; i < count; ++i) {
    if (!(A_list[i].dtype() == dt))
      throw nb::type_error("bsvd: all matrices of a list must have one dtype");
    sc.add(A_list[i].device_type(), A_list[i].device_id(), "a matrix of the list");
  }
  sc.add(S.device_type(), S.device_id(), "S");
  check_real_of(S, v.prec, "S");
  if (v.vectors) {
    sc.add(U->device_type(), U->device_id(), "U");
    sc.add(V->device_type(), V->device_id(), "V");
    check_same_dtype(*U, dt, "U");
    check_same_dtype(*V, dt, "V");
  }
  v.w = sc.w;
  check_device_usable(v.w);

  const int64_t spanS = span_of(S, "S");
  const int64_t spanU = v.vectors ? span_of(*U, "U") : 0;
  const int64_t spanV = v.vectors ? span_of(*V, "V") : 0;
  v.m.resize(count), v.n.resize(count), v.lda.resize(count);
  v.ldu.assign(count, 1), v.ldv.assign(count, 1);
  v.A.resize(count), v.S.resize(count), v.U.assign(count, nullptr), v.V.assign(count, nullptr);
  for (size_t i = 0; i < count; ++i) {
    v.m[i] = to_int(m[i], "m[i]");
    v.n[i] = to_int(n[i], "n[i]");
    v.lda[i] = to_int(lda[i], "lda[i]");
    const int64_t kmin = std::min(m[i], n[i]), k = cols >= 0 && kmin > 0 ? cols : kmin;
    need(extent(0, m[i], n[i], lda[i], 0, 1), span_of(A_list[i], "A[i]"), "a matrix of the list");
    if (offS[i] < 0) throw nb::value_error("bsvd: negative offset");
    need(extent(offS[i], k, 1, 1, 0, 1), spanS, "S");
    v.A[i] = A_list[i].data();
    v.S[i] = ptr_at<unsigned char>(S, offS[i]);
    if (v.vectors) {
      v.ldu[i] = to_int(ldu[i], "ldu[i]");
      v.ldv[i] = to_int(ldv[i], "ldv[i]");
      if (offU[i] < 0 || offV[i] < 0) throw nb::value_error("bsvd: negative offset");
      need(extent(offU[i], m[i], k, ldu[i], 0, 1), spanU, "U");
      need(extent(offV[i], n[i], k, ldv[i], 0, 1), spanV, "V");
      v.U[i] = ptr_at<unsigned char>(*U, offU[i]);
      v.V[i] = ptr_at<unsigned char>(*V, offV[i]);
    }
  }
  return v;
}

} // namespace bsvdpy
