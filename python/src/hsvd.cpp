// bsvd._bsvd, the hyperbolic SVD: hsvd_strided calls
// bsvd_<p>gehsvj_strided_batched on a checked uniform batch (bsvd.hsvd and
// bsvd.eigh_factored, python/bsvd/_hsvd.py).
//
// The arrays are described column-major as for svd_strided (A is G, m x n,
// m >= n; U m x n; V n x n) and checked by the same check_strided. nplus
// is a host int32 array of batch entries (the library reads it on the
// host). info, sweeps and path are the caller's arrays, as gesvj_strided
// takes them: the HSVD has an info code of its own
// (BSVD_INFO_HYPERBOLIC_BREAKDOWN) that the counts of InfoBuffers do not
// carry, so the Python layer reads the per-matrix info itself.
//
// Returns (status, message); the Python layer raises for a status.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <bsvd/bsvd.h>

#include "native.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace nb = nanobind;
using namespace bsvdpy;

namespace {

bsvd_status_t call_hsvd(const Strided &c, const int *nplus, int *info, int *sweeps,
                        const bsvd_options_t &opts) {
  const bsvd_job_t job = c.vectors ? BSVD_JOB_VECTORS : BSVD_JOB_VALUES;
  bsvd_status_t st = 0;
#define BSVD_CALL(p, T, R)                                                                         \
  st = bsvd_##p##gehsvj_strided_batched(                                                           \
      job, c.m, c.n, nplus, static_cast<const T *>(c.A), c.lda, c.strideA, static_cast<R *>(c.S),  \
      c.strideS, static_cast<T *>(c.U), c.ldu, c.strideU, static_cast<T *>(c.V), c.ldv, c.strideV, \
      info, sweeps, c.batch, &opts)
  switch (c.prec) {
  case 's': BSVD_CALL(s, float, float); break;
  case 'd': BSVD_CALL(d, double, double); break;
  case 'c': BSVD_CALL(c, bsvd_cfloat, float); break;
  default: BSVD_CALL(z, bsvd_cdouble, double); break;
  }
#undef BSVD_CALL
  return st;
}

Result hsvd_strided(ROArray A, int64_t m, int64_t n, ROArray nplus, int64_t lda, int64_t strideA,
                    Array S, int64_t strideS, std::optional<Array> U, int64_t ldu, int64_t strideU,
                    std::optional<Array> V, int64_t ldv, int64_t strideV, Array info,
                    std::optional<Array> sweeps, std::optional<Array> path, int64_t batch,
                    const Opts &o) {
  SpaceCheck sc;
  const Strided c =
      check_strided(A, m, n, lda, strideA, S, strideS, U, ldu, strideU, V, ldv, strideV, batch, sc);
  if (where_of(nplus.device_type(), nplus.device_id(), "nplus").space != Space::Host)
    throw nb::value_error("bsvd: nplus must be host memory");
  if (!is_dtype(nplus.dtype(), nb::dlpack::dtype_code::Int, 32))
    throw nb::type_error("bsvd: nplus must be int32");
  // One int per matrix, contiguous: the library reads nplus[b].
  if (batch > 0 && (nplus.ndim() != 1 || (nplus.shape(0) > 1 && nplus.stride(0) != 1)))
    throw nb::value_error("bsvd: nplus must be a contiguous 1-D array");
  need(batch, span_of(nplus, "nplus"), "nplus");
  check_per_matrix(sc, info, sweeps, path, batch);
  const bsvd_options_t opts = make_options(o, path ? static_cast<int *>(path->data()) : nullptr);
  DeviceGuard guard(sc.w);
  bsvd_status_t st = 0;
  {
    nb::gil_scoped_release release;
    st = call_hsvd(c, static_cast<const int *>(nplus.data()), static_cast<int *>(info.data()),
                   sweeps ? static_cast<int *>(sweeps->data()) : nullptr, opts);
  }
  return finish(st);
}

} // namespace

void register_hsvd(nb::module_ &mod) {
  mod.def("hsvd_strided", &hsvd_strided, nb::arg("A"), nb::arg("m"), nb::arg("n"), nb::arg("nplus"),
          nb::arg("lda"), nb::arg("strideA"), nb::arg("S"), nb::arg("strideS"), nb::arg("U").none(),
          nb::arg("ldu"), nb::arg("strideU"), nb::arg("V").none(), nb::arg("ldv"),
          nb::arg("strideV"), nb::arg("info"), nb::arg("sweeps").none(), nb::arg("path").none(),
          nb::arg("batch"), nb::arg("opts"));
  mod.attr("INFO_HYPERBOLIC_BREAKDOWN") = BSVD_INFO_HYPERBOLIC_BREAKDOWN;
}
