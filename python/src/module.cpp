// bsvd._bsvd: the thin native layer under the Python package.
//
// It takes arrays through DLPack (nb::ndarray: NumPy, PyTorch, CuPy, JAX...)
// together with the *column-major* description the Python layer worked out
// (m, n, leading dimensions, strides, offsets), checks that every access the
// library will make lies inside the arrays it was given, sets the CUDA
// device of the arrays, releases the GIL and calls the C API. It returns
// the status and bsvd_last_error(); the Python layer turns those into
// exceptions. No C++ exception is left to cross into Python unhandled
// (nanobind translates the std::exception family raised here).
//
// svd_strided / svd_vbatched (what the package calls) keep the per-matrix
// info and sweeps arrays in buffers of this layer (reused from call to call,
// see InfoBuffers) and return the numbers of matrices that did not converge
// or held NaN/Inf, so the Python layer allocates, exports and copies back
// no info array per call; gesvj_strided takes the caller's info array (the
// library call alone, for benchmarks and tests). Those calls block: they
// return when the results are written. The stream-ordered calls (CUDA arrays
// of PyTorch and CuPy: enqueue only, capturable) are in async.cpp; the
// checks and helpers both files use are in native.hpp.
//
// Layout conventions are the Python layer's business (bsvd/__init__.py):
// this file knows nothing about row-major arrays or transposes.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <bsvd/bsvd.h>

#include "native.hpp"

#include <algorithm>
#include <climits>
#include <complex>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#if defined(BSVD_WITH_CUDA)
#include <cuda_runtime.h>
#endif

namespace nb = nanobind;
using namespace bsvdpy;

void register_async(nb::module_ &mod); // async.cpp
void register_hsvd(nb::module_ &mod); // hsvd.cpp
void register_gesvdx(nb::module_ &mod); // gesvdx.cpp
void register_gels(nb::module_ &mod); // gels.cpp
#if defined(BSVD_WITH_JAX_FFI)
void register_jax(nb::module_ &mod); // jax_ffi.cpp (jax's FFI headers found)
#endif

namespace {

// ---- per-matrix info kept by this layer --------------------------------------
//
// svd_strided and svd_vbatched hand the library info (and, when asked,
// sweeps) arrays of this layer: per thread, one host buffer and, per CUDA
// device, one device buffer with a pinned host twin, grown when a call needs
// more and reused, so a call allocates nothing for them. The library returns
// when its results are written (for device data it has synchronized the
// stream); info (and sweeps) are then copied to the host on the caller's
// stream (a few microseconds for 10,000 matrices), and the call returns the
// number of matrices that did not converge (info > 0) and that held NaN or
// Inf (info == BSVD_INFO_NONFINITE). The per-matrix arrays come back, as
// NumPy arrays, only when the caller asks for them (details: return_info).
//
// Returned to Python: (status, message, not_converged, nonfinite, info,
// sweeps, path); info, sweeps and path are None unless details (and on an
// error status).

using IntArray = nb::ndarray<nb::numpy, int32_t, nb::ndim<1>>;
using Summary = std::tuple<int, std::string, int64_t, int64_t, std::optional<IntArray>,
                           std::optional<IntArray>, std::optional<IntArray>>;

struct Scratch {
  std::vector<int> host; // host-space calls: info, then sweeps
#if defined(BSVD_WITH_CUDA)
  struct Device {
    int device = -1;
    int *d = nullptr; // device: info, then sweeps
    int *h = nullptr; // pinned host copy
    size_t cap = 0; // ints in each
  };
  std::vector<Device> devices;

  // Buffers of at least `ints` ints on `device` (the current device).
  Device &on_device(int device, size_t ints) {
    Device *x = nullptr;
    for (Device &y : devices)
      if (y.device == device) x = &y;
    if (!x) {
      devices.push_back(Device{});
      x = &devices.back();
      x->device = device;
    }
    if (x->cap < ints) {
      release(*x);
      const size_t cap = (ints + 4095) / 4096 * 4096;
      if (cudaMalloc(reinterpret_cast<void **>(&x->d), cap * sizeof(int)) != cudaSuccess ||
          cudaMallocHost(reinterpret_cast<void **>(&x->h), cap * sizeof(int)) != cudaSuccess) {
        cudaGetLastError();
        release(*x);
        throw std::bad_alloc();
      }
      x->cap = cap;
    }
    return *x;
  }
  static void release(Device &x) {
    // The calls that used the buffers have returned (they synchronize).
    if (x.d) cudaFree(x.d);
    if (x.h) cudaFreeHost(x.h);
    x.d = x.h = nullptr;
    x.cap = 0;
  }
  ~Scratch() {
    // Thread exit. Errors (the runtime already unloading at process exit)
    // are of no consequence here.
    for (Device &x : devices) {
      if (x.cap && cudaSetDevice(x.device) == cudaSuccess) release(x);
    }
    cudaGetLastError();
  }
#endif
};

thread_local Scratch tls_scratch;

IntArray owned_copy(const int *src, int64_t count) {
  int32_t *p = new int32_t[size_t(std::max<int64_t>(count, 1))];
  std::copy(src, src + count, p);
  nb::capsule owner(p, [](void *q) noexcept { delete[] static_cast<int32_t *>(q); });
  size_t shape[1] = {size_t(count)};
  return IntArray(p, 1, shape, owner);
}

class InfoBuffers {
public:
  // Made after the arrays' device is current (DeviceGuard), with the GIL.
  InfoBuffers(const Where &w, int64_t count, bool details)
      : count_(count), details_(details), device_(w.space == Space::Device) {
    const size_t ints = size_t(count) * (details ? 2 : 1);
    if (device_) {
#if defined(BSVD_WITH_CUDA)
      if (ints > 0) {
        Scratch::Device &b = tls_scratch.on_device(w.device_id, ints);
        info = b.d;
        host_ = b.h;
      }
#endif
    } else {
      std::vector<int> &h = tls_scratch.host;
      if (h.size() < ints) h.resize(ints);
      info = host_ = h.data();
    }
    if (details && count > 0) {
      sweeps = info + count;
      path_.reset(new int[size_t(count)]);
      path = path_.get();
    }
  }

  // After a successful call, GIL released: info (and sweeps) to the host,
  // on the stream of the call; then the counts. Returns 0 or a status.
  bsvd_status_t fetch(uintptr_t stream) {
    if (count_ <= 0) return 0;
    if (device_) {
#if defined(BSVD_WITH_CUDA)
      const auto s = reinterpret_cast<cudaStream_t>(stream);
      const size_t bytes = size_t(count_) * (details_ ? 2 : 1) * sizeof(int);
      cudaError_t e = cudaMemcpyAsync(host_, info, bytes, cudaMemcpyDeviceToHost, s);
      if (e == cudaSuccess) e = cudaStreamSynchronize(s);
      if (e != cudaSuccess) {
        cudaGetLastError();
        error_ = std::string("bsvd: copying the per-matrix info to the host failed: ") +
                 cudaGetErrorString(e);
        return BSVD_STATUS_DEVICE_ERROR;
      }
#else
      (void)stream;
#endif
    }
    for (int64_t i = 0; i < count_; ++i) {
      const int v = host_[i];
      not_converged_ += v > 0;
      nonfinite_ += v == BSVD_INFO_NONFINITE;
    }
    return 0;
  }

  // With the GIL.
  Summary result(bsvd_status_t st) const {
    if (st != 0) {
      std::string msg = error_.empty() ? std::string(bsvd_last_error()) : error_;
      return {int(st), msg, 0, 0, std::nullopt, std::nullopt, std::nullopt};
    }
    std::optional<IntArray> i, s, p;
    if (details_) {
      i = owned_copy(host_, count_);
      s = owned_copy(host_ + count_, count_);
      p = owned_copy(path_.get(), count_);
    }
    return {0, std::string(), not_converged_, nonfinite_, std::move(i), std::move(s), std::move(p)};
  }

  int *info = nullptr; // handed to the library
  int *sweeps = nullptr; // details only
  int *path = nullptr; // details only (host memory)

private:
  int64_t count_;
  bool details_, device_;
  int *host_ = nullptr; // where info (then sweeps) is read on the host
  std::unique_ptr<int[]> path_;
  int64_t not_converged_ = 0, nonfinite_ = 0;
  std::string error_;
};

// The package's call: info kept by this layer (see InfoBuffers).
Summary svd_strided(ROArray A, int64_t m, int64_t n, int64_t lda, int64_t strideA, Array S,
                    int64_t strideS, std::optional<Array> U, int64_t ldu, int64_t strideU,
                    std::optional<Array> V, int64_t ldv, int64_t strideV, int64_t batch,
                    const Opts &o, bool details) {
  SpaceCheck sc;
  const Strided c =
      check_strided(A, m, n, lda, strideA, S, strideS, U, ldu, strideU, V, ldv, strideV, batch, sc);
  DeviceGuard guard(sc.w);
  InfoBuffers ib(sc.w, batch, details);
  const bsvd_options_t opts = make_options(o, ib.path);
  bsvd_status_t st = 0;
  {
    nb::gil_scoped_release release;
    st = call_strided(c, ib.info, ib.sweeps, opts);
    if (st == 0) st = ib.fetch(o.stream);
  }
  return ib.result(st);
}

// The library call alone on the caller's info (batch int32, in the memory
// space of A), sweeps (None or batch int32, likewise) and path (None or
// host int32, batch): what bench.py times as "native", and the tests' way
// to reach the library's own argument checks.
Result gesvj_strided(ROArray A, int64_t m, int64_t n, int64_t lda, int64_t strideA, Array S,
                     int64_t strideS, std::optional<Array> U, int64_t ldu, int64_t strideU,
                     std::optional<Array> V, int64_t ldv, int64_t strideV, Array info,
                     std::optional<Array> sweeps, std::optional<Array> path, int64_t batch,
                     const Opts &o) {
  SpaceCheck sc;
  const Strided c =
      check_strided(A, m, n, lda, strideA, S, strideS, U, ldu, strideU, V, ldv, strideV, batch, sc);
  check_per_matrix(sc, info, sweeps, path, batch);
  const bsvd_options_t opts = make_options(o, path ? static_cast<int *>(path->data()) : nullptr);
  DeviceGuard guard(sc.w);
  bsvd_status_t st = 0;
  {
    nb::gil_scoped_release release;
    st = call_strided(c, static_cast<int *>(info.data()),
                      sweeps ? static_cast<int *>(sweeps->data()) : nullptr, opts);
  }
  return finish(st);
}

// ---- variable-size batch: the vbatched form --------------------------------
//
// The arrays as native.hpp's check_vbatched describes them; info kept by
// this layer (see InfoBuffers).
Summary svd_vbatched(std::vector<ROArray> A_list, std::vector<int64_t> m, std::vector<int64_t> n,
                     std::vector<int64_t> lda, Array S, std::vector<int64_t> offS,
                     std::optional<Array> U, std::vector<int64_t> ldu, std::vector<int64_t> offU,
                     std::optional<Array> V, std::vector<int64_t> ldv, std::vector<int64_t> offV,
                     const Opts &o, bool details) {
  const size_t count = A_list.size();
  const int ib = to_int(int64_t(count), "batch");
  if (count == 0) return {0, std::string(), 0, 0, std::nullopt, std::nullopt, std::nullopt};
  const VBatch v = check_vbatched(A_list, m, n, lda, S, offS, U, ldu, offU, V, ldv, offV);
  const bool vectors = v.vectors;
  const char prec = v.prec;
  const Where w = v.w;
  const std::vector<int> &im = v.m, &in = v.n, &ilda = v.lda, &ildu = v.ldu, &ildv = v.ldv;
  const std::vector<const void *> &pA = v.A;
  const std::vector<void *> &pS = v.S, &pU = v.U, &pV = v.V;

  DeviceGuard guard(w);
  InfoBuffers info(w, int64_t(count), details);
  const bsvd_options_t opts = make_options(o, info.path);
  const bsvd_job_t job = vectors ? BSVD_JOB_VECTORS : BSVD_JOB_VALUES;
  bsvd_status_t st = 0;
  {
    nb::gil_scoped_release release;
#define BSVD_CALL(p, T, R)                                                                         \
  st = bsvd_##p##gesvj_vbatched(                                                                   \
      job, im.data(), in.data(), reinterpret_cast<const T *const *>(pA.data()), ilda.data(),       \
      reinterpret_cast<R *const *>(pS.data()),                                                     \
      vectors ? reinterpret_cast<T *const *>(pU.data()) : nullptr, ildu.data(),                    \
      vectors ? reinterpret_cast<T *const *>(pV.data()) : nullptr, ildv.data(), info.info,         \
      info.sweeps, ib, &opts)
    switch (prec) {
    case 's': BSVD_CALL(s, float, float); break;
    case 'd': BSVD_CALL(d, double, double); break;
    case 'c': BSVD_CALL(c, bsvd_cfloat, float); break;
    default: BSVD_CALL(z, bsvd_cdouble, double); break;
    }
#undef BSVD_CALL
    if (st == 0) st = info.fetch(o.stream);
  }
  return info.result(st);
}

// ---- owned buffers (for frameworks that cannot lend writable memory: JAX) --
//
// Returns a nanobind.nb_ndarray (an object with __dlpack__ and
// __dlpack_device__, nb::array_api) of `count`
// elements of the given dtype (one of s, d, c, z, i = int32), in host memory
// or on CUDA device `device_id`, owned by a capsule that frees it.
using Owned = nb::ndarray<nb::array_api>;

Owned empty(int64_t count, char dtype, bool device, int device_id) {
  if (count < 0) throw nb::value_error("bsvd: negative size");
  nb::dlpack::dtype dt;
  switch (dtype) {
  case 's': dt = nb::dtype<float>(); break;
  case 'd': dt = nb::dtype<double>(); break;
  case 'c': dt = nb::dtype<std::complex<float>>(); break;
  case 'z': dt = nb::dtype<std::complex<double>>(); break;
  case 'i': dt = nb::dtype<int32_t>(); break;
  default: throw nb::value_error("bsvd: unknown dtype letter");
  }
  const size_t bytes = std::max<size_t>(1, size_t(count) * (dt.bits / 8));
  size_t shape[1] = {size_t(count)};
  if (!device) {
    void *p = ::operator new(bytes);
    nb::capsule owner(p, [](void *q) noexcept { ::operator delete(q); });
    return Owned(p, 1, shape, owner, nullptr, dt, nb::device::cpu::value, 0);
  }
#if defined(BSVD_WITH_CUDA)
  DeviceGuard guard(Where{Space::Device, device_id});
  void *p = nullptr;
  if (cudaMalloc(&p, bytes) != cudaSuccess) {
    cudaGetLastError();
    throw std::bad_alloc();
  }
  nb::capsule owner(p, [](void *q) noexcept { cudaFree(q); });
  return Owned(p, 1, shape, owner, nullptr, dt, nb::device::cuda::value, device_id);
#else
  (void)device_id;
  throw nb::value_error("bsvd: this bsvd was built without the CUDA backend");
#endif
}

} // namespace

NB_MODULE(_bsvd, mod) {
  mod.doc() = "bsvd native layer (use the bsvd package, not this module)";

  // Options(values, stream): values in the order of option_table(), which
  // the Python layer has checked (the library checks them again).
  nb::class_<Opts>(mod, "Options")
      .def(nb::init<>())
      .def(
          "__init__",
          [](Opts *o, std::vector<double> values, uintptr_t stream) {
            new (o) Opts{std::move(values), stream};
          },
          nb::arg("values"), nb::arg("stream") = 0)
      .def_rw("values", &Opts::values)
      .def_rw("stream", &Opts::stream)
      .def_rw("device_count", &Opts::device_count)
      .def_rw("devices", &Opts::devices);

  // The library's option table (bsvd_option_info): one tuple per row,
  // (name, kind, lo, hi, init, value names or None, help); kind "enum",
  // "int" or "real".
  mod.def("option_table", []() {
    nb::list rows;
    for (int i = 0; i < bsvd_option_count(); ++i) {
      const bsvd_option_info_t &r = *bsvd_option_info(i);
      nb::object names = nb::none();
      if (r.kind == BSVD_OPTION_ENUM) {
        nb::list l;
        for (int v = 0; v <= int(r.hi); ++v) l.append(r.value_name(v));
        names = l;
      }
      const char *kind = r.kind == BSVD_OPTION_ENUM  ? "enum"
                         : r.kind == BSVD_OPTION_INT ? "int"
                                                     : "real";
      rows.append(nb::make_tuple(r.name, kind, r.lo, r.hi, r.init, names, r.help));
    }
    return rows;
  });

  mod.def("gesvj_strided", &gesvj_strided, nb::arg("A"), nb::arg("m"), nb::arg("n"), nb::arg("lda"),
          nb::arg("strideA"), nb::arg("S"), nb::arg("strideS"), nb::arg("U").none(), nb::arg("ldu"),
          nb::arg("strideU"), nb::arg("V").none(), nb::arg("ldv"), nb::arg("strideV"),
          nb::arg("info"), nb::arg("sweeps").none(), nb::arg("path").none(), nb::arg("batch"),
          nb::arg("opts"));
  mod.def("svd_strided", &svd_strided, nb::arg("A"), nb::arg("m"), nb::arg("n"), nb::arg("lda"),
          nb::arg("strideA"), nb::arg("S"), nb::arg("strideS"), nb::arg("U").none(), nb::arg("ldu"),
          nb::arg("strideU"), nb::arg("V").none(), nb::arg("ldv"), nb::arg("strideV"),
          nb::arg("batch"), nb::arg("opts"), nb::arg("details"));
  mod.def("svd_vbatched", &svd_vbatched, nb::arg("A"), nb::arg("m"), nb::arg("n"), nb::arg("lda"),
          nb::arg("S"), nb::arg("offS"), nb::arg("U").none(), nb::arg("ldu"), nb::arg("offU"),
          nb::arg("V").none(), nb::arg("ldv"), nb::arg("offV"), nb::arg("opts"),
          nb::arg("details"));
  register_async(mod);
  register_hsvd(mod);
  register_gesvdx(mod);
  register_gels(mod);
#if defined(BSVD_WITH_JAX_FFI)
  register_jax(mod);
#endif
  mod.def("empty", &empty, nb::arg("count"), nb::arg("dtype"), nb::arg("device"),
          nb::arg("device_id"));

  // The plan of a call as text (bsvd_explain_v): precision 's', 'd', 'c' or
  // 'z', the sizes of the batch's matrices.
  mod.def(
      "explain",
      [](const std::string &precision, bool vectors, const std::vector<int64_t> &m,
         const std::vector<int64_t> &n, const Opts &o) {
        if (precision.size() != 1) throw nb::value_error("bsvd: precision is one of s, d, c, z");
        if (m.size() != n.size()) throw nb::value_error("bsvd: m and n of different lengths");
        std::vector<int> im(m.size()), in(n.size());
        for (size_t i = 0; i < m.size(); ++i) {
          im[i] = to_int(m[i], "m[i]");
          in[i] = to_int(n[i], "n[i]");
        }
        const bsvd_options_t opts = make_options(o, nullptr);
        const bsvd_job_t job = vectors ? BSVD_JOB_VECTORS : BSVD_JOB_VALUES;
        const int count = to_int(int64_t(m.size()), "batch");
        size_t need = 0;
        bsvd_status_t st = bsvd_explain_v(precision[0], job, im.data(), in.data(), count, &opts,
                                          nullptr, 0, &need);
        std::string text(need, '\0');
        if (st == 0)
          st = bsvd_explain_v(precision[0], job, im.data(), in.data(), count, &opts, text.data(),
                              text.size(), nullptr);
        if (st != 0)
          throw nb::value_error((std::string("bsvd.plan: ") + bsvd_last_error()).c_str());
        text.resize(need > 0 ? need - 1 : 0);
        return text;
      },
      nb::arg("precision"), nb::arg("vectors"), nb::arg("m"), nb::arg("n"), nb::arg("opts"));

  mod.def("cuda_available", []() { return bsvd_cuda_available() != 0; });
  mod.def("cuda_status", []() { return std::string(bsvd_cuda_status()); });
  mod.def("cuda_built", []() {
#if defined(BSVD_WITH_CUDA)
    return true;
#else
    return false;
#endif
  });
  mod.def("version", []() { return std::string(bsvd_version()); });
  mod.def("status_string", [](int st) { return std::string(bsvd_status_string(st)); });

  // The enum names of the C API (bsvd_<enum>_string: None past the last
  // value, so the package counts up from 0 until None to build its tables;
  // bsvd_<enum>_from_string: None for an unknown name).
  using NameFn = const char *(*)(int);
  using ParseFn = bsvd_status_t (*)(const char *, int *);
  const auto names = [&mod](const char *what, NameFn name, ParseFn parse) {
    mod.def((std::string(what) + "_string").c_str(),
            [name](int value) -> std::optional<std::string> {
              const char *s = name(value);
              if (!s) return std::nullopt;
              return std::string(s);
            },
            nb::arg("value"));
    mod.def((std::string(what) + "_from_string").c_str(),
            [parse](const std::string &s) -> std::optional<int> {
              int v = 0;
              if (parse(s.c_str(), &v) != 0) return std::nullopt;
              return v;
            },
            nb::arg("name"));
  };
  names("job", bsvd_job_string, bsvd_job_from_string);
  names("backend", bsvd_backend_string, bsvd_backend_from_string);
  names("ordering", bsvd_ordering_string, bsvd_ordering_from_string);
  names("variant", bsvd_variant_string, bsvd_variant_from_string);
  names("pair_solver", bsvd_pair_solver_string, bsvd_pair_solver_from_string);
  names("path", bsvd_path_string, bsvd_path_from_string);
  names("status_code", bsvd_status_code_string, bsvd_status_code_from_string);
  mod.def("last_error", []() { return std::string(bsvd_last_error()); });

  mod.attr("INFO_NONFINITE") = BSVD_INFO_NONFINITE;
  mod.attr("BACKEND_AUTO") = int(BSVD_BACKEND_AUTO);
  mod.attr("BACKEND_CPU") = int(BSVD_BACKEND_CPU);
  mod.attr("BACKEND_CUDA") = int(BSVD_BACKEND_CUDA);
  mod.attr("ORDERING_ROUND_ROBIN") = int(BSVD_ORDERING_ROUND_ROBIN);
  mod.attr("VARIANT_AUTO") = int(BSVD_VARIANT_AUTO);
  mod.attr("STATUS_BACKEND_UNAVAILABLE") = int(BSVD_STATUS_BACKEND_UNAVAILABLE);
  mod.attr("STATUS_NOT_SUPPORTED") = int(BSVD_STATUS_NOT_SUPPORTED);
  mod.attr("STATUS_ALLOC_FAILED") = int(BSVD_STATUS_ALLOC_FAILED);
  mod.attr("STATUS_DEVICE_ERROR") = int(BSVD_STATUS_DEVICE_ERROR);
  mod.attr("STATUS_WORKSPACE_TOO_SMALL") = int(BSVD_STATUS_WORKSPACE_TOO_SMALL);
  mod.attr("STATUS_INTERNAL_ERROR") = int(BSVD_STATUS_INTERNAL_ERROR);
}
