// bsvd._bsvd, selected singular triplets: gesvdx_strided calls
// bsvd_<p>gesvdx_strided_batched on a checked uniform batch (bsvd.svd's
// subset_by_index / subset_by_value, python/bsvd/_subset.py).
//
// The arrays are described column-major as for svd_strided and checked by
// the same check_strided, with room for `cols` values and vectors per
// matrix (iu - il + 1 for an index range, min(m, n) otherwise). ns and
// info are the caller's int32 arrays of batch entries in A's memory space.
// The call blocks (for device data it returns when the results are
// written). Returns (status, message); the Python layer raises for a
// status.
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

struct Range {
  int kind, il, iu;
  double vl, vu;
};

bsvd_status_t call_gesvdx(const Strided &c, const Range &r, int *ns, int *info,
                          const bsvd_options_t &opts) {
  const bsvd_job_t job = c.vectors ? BSVD_JOB_VECTORS : BSVD_JOB_VALUES;
  const bsvd_range_t range = bsvd_range_t(r.kind);
  bsvd_status_t st = 0;
#define BSVD_CALL(p, T, R)                                                                         \
  st = bsvd_##p##gesvdx_strided_batched(                                                           \
      job, range, c.m, c.n, static_cast<const T *>(c.A), c.lda, c.strideA, R(r.vl), R(r.vu), r.il, \
      r.iu, ns, static_cast<R *>(c.S), c.strideS, static_cast<T *>(c.U), c.ldu, c.strideU,         \
      static_cast<T *>(c.V), c.ldv, c.strideV, info, c.batch, &opts)
  switch (c.prec) {
  case 's': BSVD_CALL(s, float, float); break;
  case 'd': BSVD_CALL(d, double, double); break;
  case 'c': BSVD_CALL(c, bsvd_cfloat, float); break;
  default: BSVD_CALL(z, bsvd_cdouble, double); break;
  }
#undef BSVD_CALL
  return st;
}

Result gesvdx_strided(ROArray A, int64_t m, int64_t n, int64_t lda, int64_t strideA, int range,
                      double vl, double vu, int64_t il, int64_t iu, Array ns, Array S,
                      int64_t strideS, std::optional<Array> U, int64_t ldu, int64_t strideU,
                      std::optional<Array> V, int64_t ldv, int64_t strideV, Array info,
                      int64_t cols, int64_t batch, const Opts &o) {
  SpaceCheck sc;
  const Strided c = check_strided(A, m, n, lda, strideA, S, strideS, U, ldu, strideU, V, ldv,
                                  strideV, batch, sc, cols);
  check_per_matrix(sc, info, std::nullopt, std::nullopt, batch);
  sc.add(ns.device_type(), ns.device_id(), "ns");
  check_int32(ns, "ns");
  need(batch, span_of(ns, "ns"), "ns");
  const Range r{range, to_int(il, "il"), to_int(iu, "iu"), vl, vu};
  const bsvd_options_t opts = make_options(o, nullptr);
  DeviceGuard guard(sc.w);
  bsvd_status_t st = 0;
  {
    nb::gil_scoped_release release;
    st = call_gesvdx(c, r, static_cast<int *>(ns.data()), static_cast<int *>(info.data()), opts);
  }
  return finish(st);
}

} // namespace

void register_gesvdx(nb::module_ &mod) {
  mod.def("gesvdx_strided", &gesvdx_strided, nb::arg("A"), nb::arg("m"), nb::arg("n"),
          nb::arg("lda"), nb::arg("strideA"), nb::arg("range"), nb::arg("vl"), nb::arg("vu"),
          nb::arg("il"), nb::arg("iu"), nb::arg("ns"), nb::arg("S"), nb::arg("strideS"),
          nb::arg("U").none(), nb::arg("ldu"), nb::arg("strideU"), nb::arg("V").none(),
          nb::arg("ldv"), nb::arg("strideV"), nb::arg("info"), nb::arg("cols"), nb::arg("batch"),
          nb::arg("opts"));
  mod.attr("RANGE_ALL") = int(BSVD_RANGE_ALL);
  mod.attr("RANGE_INDEX") = int(BSVD_RANGE_INDEX);
  mod.attr("RANGE_VALUE") = int(BSVD_RANGE_VALUE);
}
