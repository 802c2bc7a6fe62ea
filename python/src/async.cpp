// bsvd._bsvd, the stream-ordered part: the calls behind bsvd.svd for CUDA
// arrays of PyTorch and CuPy (the package's torch op bsvd::svd and its
// CuPy path), which only enqueue work on the caller's stream.
//
//   svd_strided_async  bsvd_<p>gesvj_strided_batched_async on device arrays:
//                      the caller's outputs, info (and sweeps) in device
//                      memory, the caller's workspace (or None: the library
//                      allocates stream-ordered), path in host memory. The
//                      arrays are checked as svd_strided checks them; the
//                      call never waits for the device, so it may be made
//                      while the stream is being captured into a CUDA graph.
//   workspace_size     bsvd_workspace_size_async (bytes for opts->workspace).
//   info_counts        the opt-in check (bsvd.svd(check=True)): copies an
//                      info array to the host on a stream, waits for it,
//                      and counts the matrices that did not converge or held
//                      NaN / Inf. It refuses a stream under capture (a wait
//                      there would invalidate the capture).
//   stream_capturing   whether a stream is being captured (the Python layer
//                      falls back to the blocking call for a plan the _async
//                      form refuses only outside a capture).
//
// Each returns (status, message, ...) as the other bindings; the Python
// layer turns a status into its exception.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <bsvd/bsvd.h>

#include "native.hpp"

#include <cstdint>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace nb = nanobind;
using namespace bsvdpy;

namespace {

// An int32 array of at least `count` elements, or a value / type error.
void check_ints(const Array &a, int64_t count, const char *what) {
  check_int32(a, what);
  need(count, span_of(a, what), what);
}

Result svd_strided_async(ROArray A, int64_t m, int64_t n, int64_t lda, int64_t strideA, Array S,
                         int64_t strideS, std::optional<Array> U, int64_t ldu, int64_t strideU,
                         std::optional<Array> V, int64_t ldv, int64_t strideV, Array info,
                         std::optional<Array> sweeps, std::optional<Array> path,
                         std::optional<Array> workspace, int64_t batch, const Opts &o) {
  SpaceCheck sc;
  const Strided c =
      check_strided(A, m, n, lda, strideA, S, strideS, U, ldu, strideU, V, ldv, strideV, batch, sc);
  if (sc.w.space != Space::Device)
    throw nb::value_error("bsvd: svd_strided_async takes CUDA device arrays (host arrays go "
                          "through the blocking svd_strided)");
  sc.add(info.device_type(), info.device_id(), "info");
  check_ints(info, batch, "info");
  if (sweeps) {
    sc.add(sweeps->device_type(), sweeps->device_id(), "sweeps");
    check_ints(*sweeps, batch, "sweeps");
  }
  if (path) {
    if (where_of(path->device_type(), path->device_id(), "path").space != Space::Host)
      throw nb::value_error("bsvd: path must be host memory");
    check_ints(*path, batch, "path");
  }
  void *ws = nullptr;
  size_t ws_bytes = 0;
  if (workspace) {
    sc.add(workspace->device_type(), workspace->device_id(), "workspace");
    ws_bytes = size_t(span_of(*workspace, "workspace")) * workspace->itemsize();
    if (ws_bytes > 0) ws = workspace->data();
  }
  bsvd_options_t opts = make_options(o, path ? static_cast<int *>(path->data()) : nullptr);
  opts.workspace = ws;
  opts.workspace_bytes = ws_bytes;
  DeviceGuard guard(sc.w);
  bsvd_status_t st = 0;
  {
    nb::gil_scoped_release release;
    st = call_strided(c, static_cast<int *>(info.data()),
                      sweeps ? static_cast<int *>(sweeps->data()) : nullptr, opts, true);
  }
  return finish(st);
}

// (status, message, bytes) of bsvd_workspace_size_async (the workspace of
// svd_strided_async: device data only); device_id >= 0 makes that
// CUDA device current for the query (the plan reads its properties).
// Answers are kept: the query plans the call, a tenth of a stream-ordered
// call's host time, and its inputs are all in the key (the library's
// overrides come from the environment once per process).
std::tuple<int, std::string, size_t> workspace_size(const std::string &precision, bool vectors,
                                                    int64_t m, int64_t n, int64_t batch,
                                                    const Opts &o, int device_id) {
  if (precision.size() != 1) throw nb::value_error("bsvd: precision is one of s, d, c, z");
  using Key = std::tuple<char, bool, int64_t, int64_t, int64_t, int, std::vector<double>>;
  static std::map<Key, size_t> known; // (under the GIL)
  const Key key{precision[0], vectors, m, n, batch, device_id, o.values};
  if (auto it = known.find(key); it != known.end()) return {0, std::string(), it->second};
  const bsvd_options_t opts = make_options(o, nullptr);
  DeviceGuard guard(device_id >= 0 ? Where{Space::Device, device_id} : Where{});
  size_t bytes = 0;
  const bsvd_status_t st = bsvd_workspace_size_async(
      precision[0], vectors ? BSVD_JOB_VECTORS : BSVD_JOB_VALUES, to_int(m, "m"), to_int(n, "n"),
      to_int(batch, "batch"), &opts, &bytes);
  const Result r = finish(st);
  if (st == 0) {
    if (known.size() >= 256) known.clear();
    known.emplace(key, bytes);
  }
  return {std::get<0>(r), std::get<1>(r), bytes};
}

// (status, message, not_converged, nonfinite) of the first `count` entries
// of a contiguous int32 info array, host or device; a device array is read
// on `stream` after the work queued there (the call waits for it).
std::tuple<int, std::string, int64_t, int64_t> info_counts(Array info, int64_t count,
                                                           uintptr_t stream) {
  check_ints(info, count, "info");
  if (span_of(info, "info") != int64_t(info.size()))
    throw nb::value_error("bsvd: info must be contiguous");
  const Where w = where_of(info.device_type(), info.device_id(), "info");
  check_device_usable(w);
  std::vector<int> host;
  const int *values = static_cast<const int *>(info.data());
  if (w.space == Space::Device && count > 0) {
#if defined(BSVD_WITH_CUDA)
    DeviceGuard guard(w);
    host.resize(size_t(count));
    std::string error;
    int error_status = 0;
    {
      nb::gil_scoped_release release;
      const auto s = reinterpret_cast<cudaStream_t>(stream);
      cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
      cudaError_t e = cudaStreamIsCapturing(s, &cap);
      if (e == cudaSuccess && cap != cudaStreamCaptureStatusNone) {
        error_status = BSVD_STATUS_NOT_SUPPORTED;
        error = "bsvd: check=True (or check_finite=True) waits for the solve to read info, "
                "which cannot be done while the stream is being captured into a CUDA graph; "
                "call without check and read the info array (return_info=True) after replay";
      } else {
        if (e == cudaSuccess)
          e = cudaMemcpyAsync(host.data(), values, size_t(count) * sizeof(int),
                              cudaMemcpyDeviceToHost, s);
        if (e == cudaSuccess) e = cudaStreamSynchronize(s);
        if (e != cudaSuccess) {
          cudaGetLastError();
          error_status = BSVD_STATUS_DEVICE_ERROR;
          error = std::string("bsvd: copying the per-matrix info to the host failed: ") +
                  cudaGetErrorString(e);
        }
      }
    }
    if (error_status != 0) return {error_status, error, 0, 0};
    values = host.data();
#else
    (void)stream;
#endif
  }
  int64_t nc = 0, nf = 0;
  for (int64_t i = 0; i < count; ++i) {
    nc += values[i] > 0;
    nf += values[i] == BSVD_INFO_NONFINITE;
  }
  return {0, std::string(), nc, nf};
}

// Whether `stream` (of CUDA device device_id) is being captured into a CUDA
// graph: the Python layer falls back to the blocking call (which waits)
// only when it is not. A failed query counts as capturing; false without
// CUDA.
bool stream_capturing(uintptr_t stream, int device_id) {
#if defined(BSVD_WITH_CUDA)
  try {
    DeviceGuard guard(Where{Space::Device, device_id});
    cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(reinterpret_cast<cudaStream_t>(stream), &cap) != cudaSuccess) {
      cudaGetLastError();
      return true;
    }
    return cap != cudaStreamCaptureStatusNone;
  } catch (const std::exception &) {
    return true;
  }
#else
  (void)stream;
  (void)device_id;
  return false;
#endif
}

} // namespace

void register_async(nb::module_ &mod) {
  mod.def("svd_strided_async", &svd_strided_async, nb::arg("A"), nb::arg("m"), nb::arg("n"),
          nb::arg("lda"), nb::arg("strideA"), nb::arg("S"), nb::arg("strideS"), nb::arg("U").none(),
          nb::arg("ldu"), nb::arg("strideU"), nb::arg("V").none(), nb::arg("ldv"),
          nb::arg("strideV"), nb::arg("info"), nb::arg("sweeps").none(), nb::arg("path").none(),
          nb::arg("workspace").none(), nb::arg("batch"), nb::arg("opts"));
  mod.def("workspace_size", &workspace_size, nb::arg("precision"), nb::arg("vectors"), nb::arg("m"),
          nb::arg("n"), nb::arg("batch"), nb::arg("opts"), nb::arg("device_id") = -1);
  mod.def("info_counts", &info_counts, nb::arg("info"), nb::arg("count"), nb::arg("stream"));
  mod.def("stream_capturing", &stream_capturing, nb::arg("stream"), nb::arg("device_id"));
}
