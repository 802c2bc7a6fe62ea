// bsvd._bsvd, least squares by QR / LQ: gels_strided calls
// bsvd_<p>gels_strided_batched for bsvd.lstsq(driver='gels')
// (python/bsvd/_lstsq.py).
//
// The inputs are read only (a JAX array cannot be written, a NumPy or torch
// one is the caller's): A and B, C-contiguous, are first copied into the
// writable buffers Af and X the caller allocated with the same shapes, on
// opts' stream for device data, then solved in place there. Each matrix of
// A is a column-major m x n matrix with lda = m (the caller passes A or
// A^H so that it is tall: the library's QR path), each of B ldb x nrhs.
// info: int32, batch entries, in the arrays' memory space. The call
// blocks. Returns (status, message).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <bsvd/bsvd.h>

#include "native.hpp"

#include <cstdint>
#include <cstring>
#include <string>

#if defined(BSVD_WITH_CUDA)
#include <cuda_runtime.h>
#endif

namespace nb = nanobind;
using namespace bsvdpy;

namespace {

template <class Arr> void check_contiguous(const Arr &a, const char *what) {
  for (size_t i = 0; i < a.ndim(); ++i)
    if (a.shape(i) == 0) return; // (no element: any strides)
  int64_t expect = 1;
  for (size_t i = a.ndim(); i-- > 0;) {
    if (a.shape(i) != 1 && a.stride(i) != expect)
      throw nb::value_error((std::string("bsvd: ") + what + " must be C-contiguous").c_str());
    expect *= int64_t(a.shape(i));
  }
}

template <class Arr> int64_t count_of(const Arr &a) {
  int64_t c = 1;
  for (size_t i = 0; i < a.ndim(); ++i) c *= int64_t(a.shape(i));
  return c;
}

// dst <- src, elems entries of itemsize bytes, in the memory space w.
void copy_in(void *dst, const void *src, int64_t elems, size_t itemsize, const Where &w,
             uintptr_t stream) {
  const size_t bytes = size_t(elems) * itemsize;
  if (bytes == 0) return;
  if (w.space == Space::Host) {
    std::memcpy(dst, src, bytes);
    return;
  }
#if defined(BSVD_WITH_CUDA)
  if (cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
                      reinterpret_cast<cudaStream_t>(stream)) != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error("bsvd: copying the input on the device failed");
  }
#else
  (void)stream;
  throw nb::value_error("bsvd: device arrays, but this bsvd was built without CUDA");
#endif
}

Result gels_strided(ROArray A, ROArray B, Array Af, Array X, int trans, int64_t m, int64_t n,
                    int64_t nrhs, int64_t ldb, Array info, int64_t batch, const Opts &o) {
  SpaceCheck sc;
  for (auto [a, what] : {std::pair<const Array *, const char *>{&Af, "Af"}, {&X, "X"}}) {
    sc.add(a->device_type(), a->device_id(), what);
    check_contiguous(*a, what);
  }
  sc.add(A.device_type(), A.device_id(), "A");
  sc.add(B.device_type(), B.device_id(), "B");
  sc.add(info.device_type(), info.device_id(), "info");
  check_device_usable(sc.w);
  const char prec = precision_of(Af.dtype());
  check_same_dtype(X, Af.dtype(), "X");
  if (!(A.dtype() == Af.dtype()) || !(B.dtype() == Af.dtype()))
    throw nb::type_error("bsvd: A and B must have Af's dtype");
  check_int32(info, "info");
  const int im = to_int(m, "m"), in = to_int(n, "n"), ik = to_int(nrhs, "nrhs"),
            ib = to_int(batch, "batch"), ild = to_int(ldb, "ldb");
  const int64_t sa = int64_t(im) * in, sb = int64_t(ild) * ik;
  need(sa * batch, count_of(Af), "Af");
  need(sb * batch, count_of(X), "X");
  need(batch, count_of(info), "info");
  if (count_of(A) != count_of(Af) || count_of(B) != count_of(X))
    throw nb::value_error("bsvd: A and B must have the sizes of Af and X");
  check_contiguous(A, "A");
  check_contiguous(B, "B");
  const bsvd_options_t opts = make_options(o, nullptr);
  DeviceGuard guard(sc.w);
  bsvd_status_t st = 0;
  {
    nb::gil_scoped_release release;
    copy_in(Af.data(), A.data(), count_of(Af), Af.itemsize(), sc.w, o.stream);
    copy_in(X.data(), B.data(), count_of(X), X.itemsize(), sc.w, o.stream);
    const bsvd_op_t op = bsvd_op_t(trans);
    int *pinfo = static_cast<int *>(info.data());
    const int lda = im > 1 ? im : 1;
#define BSVD_CALL(p, T)                                                                            \
  st = bsvd_##p##gels_strided_batched(op, im, in, ik, static_cast<T *>(Af.data()), lda, sa,        \
                                      static_cast<T *>(X.data()), ild, sb, pinfo, ib, &opts)
    switch (prec) {
    case 's': BSVD_CALL(s, float); break;
    case 'd': BSVD_CALL(d, double); break;
    case 'c': BSVD_CALL(c, bsvd_cfloat); break;
    default: BSVD_CALL(z, bsvd_cdouble); break;
    }
#undef BSVD_CALL
  }
  return finish(st);
}

} // namespace

void register_gels(nb::module_ &mod) {
  mod.def("gels_strided", &gels_strided, nb::arg("A"), nb::arg("B"), nb::arg("Af"), nb::arg("X"),
          nb::arg("trans"), nb::arg("m"), nb::arg("n"), nb::arg("nrhs"), nb::arg("ldb"),
          nb::arg("info"), nb::arg("batch"), nb::arg("opts"));
  mod.attr("OP_N") = int(BSVD_OP_N);
  mod.attr("OP_T") = int(BSVD_OP_T);
  mod.attr("OP_C") = int(BSVD_OP_C);
}
