// bsvd._bsvd, the JAX part: the XLA FFI handlers behind bsvd.svd for JAX
// arrays (bsvd/_jax.py calls them with jax.ffi.ffi_call, eagerly and inside
// jax.jit, vmap and grad). Compiled only when CMake found jax's FFI headers
// (BSVD_WITH_JAX_FFI, python/CMakeLists.txt); the CUDA handler only with the
// CUDA backend (BSVD_WITH_CUDA).
//
// The call "bsvd_svd", one handler per platform ("cpu", "CUDA"):
//
//   A (..., m, n) float32 / float64 / complex64 / complex128, row-major
//     (XLA's default layout for a custom call)
//   -> S (..., k) real, Vh1 (..., k, n), U1 (..., k, m), info (...),
//      sweeps (...), path (...) int32;  k = min(m, n)
//
// The library is column-major, so row-major A is handed to it as A^T (n x m
// column-major) without a copy, as bsvd/__init__.py's _reduced does (trans
// "T"): the library's U (n x k) lands in Vh1 (row-major (k, n): Vh of A up
// to conjugation) and its V (m x k) in U1; bsvd/_jax.py takes U = U1^T
// (conjugated for complex) and Vh = Vh1. Without vectors (attribute vectors
// = false) Vh1 and U1 are empty.
//
// Attributes: vectors (bool) and options, the value of every row of the
// library's option table (bsvd_option_info) in its order (float64), checked
// by the Python layer (the library checks them again). backend auto is
// resolved by the handler: cpu for host buffers, cuda for device buffers.
//
// cpu: the blocking bsvd_<p>gesvj_strided_batched on host buffers (XLA's
// CPU runtime calls the handler when A is ready and expects the outputs
// written on return).
// CUDA: everything on XLA's stream, nothing waits for the device: the
// workspace (bsvd_workspace_size_async bytes) from XLA's scratch allocator,
// the _async form with opts.stream = XLA's stream, info and sweeps written by
// the device into the output buffers, and the planned path (host memory
// the library fills before returning) written into the path buffer by
// memset nodes. A plan the _async form refuses (some matrices solved on the
// host) falls back to the blocking call, which waits; the handler is not
// declared command-buffer compatible, so XLA never captures it in a CUDA
// graph and that fallback is always allowed.
#include "xla/ffi/api/ffi.h"

#include <bsvd/bsvd.h>

#include "native.hpp"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

namespace ffi = xla::ffi;
using namespace bsvdpy;

namespace bsvdjax {

struct Attrs {
  bool vectors;
  ffi::Span<const double> options; // every option, in bsvd_option_info's order
};

} // namespace bsvdjax

XLA_FFI_REGISTER_STRUCT_ATTR_DECODING(bsvdjax::Attrs, ::xla::ffi::StructMember<bool>("vectors"),
                                      ::xla::ffi::StructMember<ffi::Span<const double>>("options"));

namespace bsvdjax {
namespace {

using Out = ffi::Result<ffi::AnyBuffer>;
using IntOut = ffi::Result<ffi::Buffer<ffi::S32>>;

ffi::Error invalid(const std::string &what) {
  return ffi::Error::InvalidArgument("bsvd.svd (jax): " + what);
}

// The library's status as an XLA error with bsvd_last_error().
ffi::Error status_error(bsvd_status_t st) {
  ffi::ErrorCode code = ffi::ErrorCode::kInternal;
  if (st < 0)
    code = ffi::ErrorCode::kInvalidArgument;
  else if (st == BSVD_STATUS_BACKEND_UNAVAILABLE)
    code = ffi::ErrorCode::kUnavailable;
  else if (st == BSVD_STATUS_NOT_SUPPORTED)
    code = ffi::ErrorCode::kUnimplemented;
  else if (st == BSVD_STATUS_ALLOC_FAILED)
    code = ffi::ErrorCode::kResourceExhausted;
  return ffi::Error(code, std::string("bsvd.svd: ") + bsvd_last_error());
}

char precision_of(ffi::DataType t) {
  switch (t) {
  case ffi::DataType::F32: return 's';
  case ffi::DataType::F64: return 'd';
  case ffi::DataType::C64: return 'c';
  case ffi::DataType::C128: return 'z';
  default: return 0;
  }
}

ffi::DataType real_of(char prec) {
  return (prec == 's' || prec == 'c') ? ffi::DataType::F32 : ffi::DataType::F64;
}

// The checked column-major description of the call (Strided of native.hpp,
// which call_strided takes), from the buffers' shapes and dtypes. XLA gives
// the buffers the shapes bsvd/_jax.py declared; these checks catch a
// mismatch between the two files rather than user errors.
ffi::Error describe(const ffi::AnyBuffer &A, const ffi::AnyBuffer &S, const ffi::AnyBuffer &Vh1,
                    const ffi::AnyBuffer &U1, size_t per_matrix_count, bool vectors, Strided &c) {
  const auto dims = A.dimensions();
  if (dims.size() < 2) return invalid("A must have at least 2 dimensions (..., m, n)");
  const int64_t m = dims[dims.size() - 2], n = dims[dims.size() - 1], k = std::min(m, n);
  int64_t batch = 1;
  for (size_t i = 0; i + 2 < dims.size(); ++i) batch *= dims[i];
  c.prec = precision_of(A.element_type());
  if (c.prec == 0) return invalid("A must be float32, float64, complex64 or complex128");
  if (S.element_type() != real_of(c.prec) || int64_t(S.element_count()) != batch * k)
    return invalid("S has the wrong dtype or size");
  if (int64_t(per_matrix_count) != batch) return invalid("info, sweeps, path must have batch size");
  c.vectors = vectors;
  if (vectors) {
    if (Vh1.element_type() != A.element_type() || U1.element_type() != A.element_type() ||
        int64_t(Vh1.element_count()) != batch * k * n ||
        int64_t(U1.element_count()) != batch * k * m)
      return invalid("the vector outputs have the wrong dtype or size");
  } else if (Vh1.element_count() != 0 || U1.element_count() != 0) {
    return invalid("without vectors the vector outputs must be empty");
  }
  if (m > INT_MAX || n > INT_MAX || batch > INT_MAX)
    return invalid("m, n and the batch size must fit the library's int");
  // A^T column-major: n x m, leading dimension n.
  c.m = int(n);
  c.n = int(m);
  c.lda = int(std::max<int64_t>(n, 1));
  c.batch = int(batch);
  c.strideA = m * n;
  c.strideS = k;
  c.ldu = c.lda; // the library's U (n x k) -> Vh1
  c.strideU = n * k;
  c.ldv = int(std::max<int64_t>(m, 1)); // the library's V (m x k) -> U1
  c.strideV = m * k;
  c.A = A.untyped_data();
  c.S = S.untyped_data();
  c.U = vectors ? Vh1.untyped_data() : nullptr;
  c.V = vectors ? U1.untyped_data() : nullptr;
  return ffi::Error::Success();
}

bool nothing_to_solve(const Strided &c) { return c.batch == 0 || c.m == 0 || c.n == 0; }

// The row of backend in the option table.
int backend_row() {
  static const int row = bsvd_option_find("backend");
  return row;
}

int backend_of(const Attrs &a) {
  const size_t i = size_t(backend_row());
  return i < a.options.size() ? int(a.options[i]) : int(BSVD_BACKEND_AUTO);
}

// The call's options with the backend resolved (backend) on stream.
Opts opts_of(const Attrs &a, int backend, uintptr_t stream) {
  Opts o{std::vector<double>(a.options.begin(), a.options.end()), stream};
  if (size_t(backend_row()) < o.values.size()) o.values[size_t(backend_row())] = backend;
  return o;
}

// ---- cpu -------------------------------------------------------------------

ffi::Error svd_cpu(ffi::AnyBuffer A, Out S, Out Vh1, Out U1, IntOut info, IntOut sweeps,
                   IntOut path, Attrs a) {
  Strided c;
  ffi::Error e = describe(A, *S, *Vh1, *U1, info->element_count(), a.vectors, c);
  if (e.failure()) return e;
  int *pinfo = info->typed_data(), *psweeps = sweeps->typed_data(), *ppath = path->typed_data();
  if (nothing_to_solve(c)) { // an empty batch or k = 0: info 0, path trivial
    std::fill_n(pinfo, c.batch, 0);
    std::fill_n(psweeps, c.batch, 0);
    std::fill_n(ppath, c.batch, 0);
    return ffi::Error::Success();
  }
  // "auto" on host buffers is the cpu backend, as bsvd.svd resolves it for
  // host arrays (the library's own auto would take a visible GPU).
  const int backend = backend_of(a) == BSVD_BACKEND_AUTO ? int(BSVD_BACKEND_CPU) : backend_of(a);
  const bsvd_options_t opts = make_options(opts_of(a, backend, 0), ppath);
  const bsvd_status_t st = call_strided(c, pinfo, psweeps, opts);
  return st == 0 ? ffi::Error::Success() : status_error(st);
}

XLA_FFI_DEFINE_HANDLER(svd_cpu_handler, svd_cpu,
                       ffi::Ffi::Bind()
                           .Arg<ffi::AnyBuffer>() // A
                           .Ret<ffi::AnyBuffer>() // S
                           .Ret<ffi::AnyBuffer>() // Vh1
                           .Ret<ffi::AnyBuffer>() // U1
                           .Ret<ffi::Buffer<ffi::S32>>() // info
                           .Ret<ffi::Buffer<ffi::S32>>() // sweeps
                           .Ret<ffi::Buffer<ffi::S32>>() // path
                           .Attrs<Attrs>());

// ---- CUDA ------------------------------------------------------------------

#if defined(BSVD_WITH_CUDA)

ffi::Error cuda_error(cudaError_t err, const char *what) {
  cudaGetLastError();
  return ffi::Error::Internal(std::string("bsvd.svd: ") + what + ": " + cudaGetErrorString(err));
}

// The planned path of each matrix (host) into the int32 device buffer, in
// stream order and without a host buffer that must outlive the call: a
// memset to 0, then per run of one non-zero path a 2-D memset that sets the
// low byte of each of the run's int32 (paths are below 256, little endian).
// A uniform batch is one run (or a few).
cudaError_t write_path(int *dst, const std::vector<int> &planned, cudaStream_t stream) {
  const size_t count = planned.size();
  cudaError_t err = cudaMemsetAsync(dst, 0, count * sizeof(int), stream);
  for (size_t i = 0; i < count && err == cudaSuccess;) {
    size_t j = i + 1;
    while (j < count && planned[j] == planned[i]) ++j;
    if (planned[i] > 0 && planned[i] < 256)
      err = cudaMemset2DAsync(dst + i, sizeof(int), planned[i], 1, j - i, stream);
    i = j;
  }
  return err;
}

ffi::Error svd_cuda(cudaStream_t stream, int32_t device, ffi::ScratchAllocator scratch,
                    ffi::AnyBuffer A, Out S, Out Vh1, Out U1, IntOut info, IntOut sweeps,
                    IntOut path, Attrs a) {
  Strided c;
  ffi::Error e = describe(A, *S, *Vh1, *U1, info->element_count(), a.vectors, c);
  if (e.failure()) return e;
  if (backend_of(a) == BSVD_BACKEND_CPU)
    return invalid("backend='cpu' needs host arrays, but the input is on a CUDA device");
  int *pinfo = info->typed_data(), *psweeps = sweeps->typed_data(), *ppath = path->typed_data();
  try {
    DeviceGuard guard(Where{Space::Device, device}); // the library launches on the current device
    const size_t ints = size_t(c.batch) * sizeof(int);
    if (nothing_to_solve(c)) {
      cudaError_t err = cudaSuccess;
      for (int *p : {pinfo, psweeps, ppath})
        if (err == cudaSuccess && ints) err = cudaMemsetAsync(p, 0, ints, stream);
      return err == cudaSuccess ? ffi::Error::Success() : cuda_error(err, "cudaMemsetAsync");
    }
    std::vector<int> planned(size_t(c.batch), 0);
    const uintptr_t handle = reinterpret_cast<uintptr_t>(stream);
    bsvd_options_t opts = make_options(opts_of(a, BSVD_BACKEND_CUDA, handle), planned.data());
    size_t bytes = 0;
    bsvd_status_t st = bsvd_workspace_size_async(
        c.prec, c.vectors ? BSVD_JOB_VECTORS : BSVD_JOB_VALUES, c.m, c.n, c.batch, &opts, &bytes);
    if (st != 0) return status_error(st);
    if (bytes > 0) {
      // XLA's allocator: freed when the handler returns, reused only by
      // work XLA enqueues later on this stream (as jaxlib's own solvers).
      // It refuses alignments above 16 bytes (XLA_FFI_DeviceMemory_Allocate),
      // so the workspace gets the 256 of a cudaMalloc by rounding up inside
      // a slightly larger block.
      constexpr size_t kAlign = 256;
      const auto ws = scratch.Allocate(bytes + kAlign, 16);
      if (!ws.has_value())
        return ffi::Error(ffi::ErrorCode::kResourceExhausted,
                          "bsvd.svd: XLA's scratch allocator could not provide the workspace "
                          "of " +
                              std::to_string(bytes + kAlign) + " bytes");
      const uintptr_t base = reinterpret_cast<uintptr_t>(*ws);
      opts.workspace = reinterpret_cast<void *>((base + kAlign - 1) / kAlign * kAlign);
      opts.workspace_bytes = bytes;
    }
    st = call_strided(c, pinfo, psweeps, opts, /*stream_ordered=*/true);
    if (st == BSVD_STATUS_NOT_SUPPORTED) {
      // Some matrices would be solved on the host (an ordering other than
      // round-robin beyond the one-kernel solver, a block size beyond the
      // GPU's): the blocking call on the same stream, which waits, as
      // bsvd.svd does for torch and CuPy outside a capture.
      opts.workspace = nullptr;
      opts.workspace_bytes = 0;
      st = call_strided(c, pinfo, psweeps, opts);
    }
    if (st != 0) return status_error(st);
    const cudaError_t err = write_path(ppath, planned, stream);
    return err == cudaSuccess ? ffi::Error::Success() : cuda_error(err, "writing path");
  } catch (const std::exception &ex) {
    return ffi::Error::Internal(ex.what());
  }
}

// Not command-buffer compatible (no ffi::Traits::kCmdBufferCompatible): the
// _async call could be captured, but the blocking fallback above could not.
XLA_FFI_DEFINE_HANDLER(svd_cuda_handler, svd_cuda,
                       ffi::Ffi::Bind()
                           .Ctx<ffi::PlatformStream<cudaStream_t>>()
                           .Ctx<ffi::DeviceOrdinal>()
                           .Ctx<ffi::ScratchAllocator>()
                           .Arg<ffi::AnyBuffer>() // A
                           .Ret<ffi::AnyBuffer>() // S
                           .Ret<ffi::AnyBuffer>() // Vh1
                           .Ret<ffi::AnyBuffer>() // U1
                           .Ret<ffi::Buffer<ffi::S32>>() // info
                           .Ret<ffi::Buffer<ffi::S32>>() // sweeps
                           .Ret<ffi::Buffer<ffi::S32>>() // path
                           .Attrs<Attrs>());

#endif // BSVD_WITH_CUDA

} // namespace
} // namespace bsvdjax

// jax_ffi_targets(): {platform: capsule of the XLA_FFI_Handler*}, for
// jax.ffi.register_ffi_target("bsvd_svd", capsule, platform=...).
void register_jax(nb::module_ &mod) {
  mod.def("jax_ffi_targets", []() {
    nb::dict targets;
    targets["cpu"] = nb::capsule(reinterpret_cast<void *>(bsvdjax::svd_cpu_handler));
#if defined(BSVD_WITH_CUDA)
    targets["CUDA"] = nb::capsule(reinterpret_cast<void *>(bsvdjax::svd_cuda_handler));
#endif
    return targets;
  });
}
