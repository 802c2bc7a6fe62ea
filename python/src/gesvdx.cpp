// bsvd._bsvd, selected singular triplets: gesvdx_strided calls
// bsvd_<p>gesvdx_strided_batched on a checked uniform batch (bsvd.svd's
// subset_by_index / subset_by_value, python/bsvd/_subset.py), and
// gesvdx_vbatched bsvd_<p>gesvdx_vbatched on a list (bsvd.svd_batch's).
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
#include <nanobind/stl/vector.h>

#include <bsvd/bsvd.h>

#include "native.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

// The variable-size form: the arrays as check_vbatched describes them
// (svd_vbatched's), with room for cols values and vectors per non-empty
// matrix (-1: min(m, n) each); ns and info int32 of count entries in the
// matrices' memory space.
Result gesvdx_vbatched(std::vector<ROArray> A_list, std::vector<int64_t> m, std::vector<int64_t> n,
                       std::vector<int64_t> lda, int range, double vl, double vu, int64_t il,
                       int64_t iu, Array ns, Array S, std::vector<int64_t> offS,
                       std::optional<Array> U, std::vector<int64_t> ldu, std::vector<int64_t> offU,
                       std::optional<Array> V, std::vector<int64_t> ldv, std::vector<int64_t> offV,
                       Array info, int64_t cols, const Opts &o) {
  const size_t count = A_list.size();
  const int ib = to_int(int64_t(count), "batch");
  if (count == 0) return finish(0);
  const VBatch v = check_vbatched(A_list, m, n, lda, S, offS, U, ldu, offU, V, ldv, offV, cols);
  SpaceCheck sc;
  sc.add(A_list[0].device_type(), A_list[0].device_id(), "A");
  check_per_matrix(sc, info, std::nullopt, std::nullopt, ib);
  sc.add(ns.device_type(), ns.device_id(), "ns");
  check_int32(ns, "ns");
  need(ib, span_of(ns, "ns"), "ns");
  const Range r{range, to_int(il, "il"), to_int(iu, "iu"), vl, vu};
  const bsvd_options_t opts = make_options(o, nullptr);
  const bsvd_job_t job = v.vectors ? BSVD_JOB_VECTORS : BSVD_JOB_VALUES;
  const bsvd_range_t rg = bsvd_range_t(r.kind);
  int *pns = static_cast<int *>(ns.data()), *pinfo = static_cast<int *>(info.data());
  DeviceGuard guard(v.w);
  bsvd_status_t st = 0;
  {
    nb::gil_scoped_release release;
#define BSVD_CALL(p, T, R)                                                                         \
  st = bsvd_##p##gesvdx_vbatched(                                                                  \
      job, rg, v.m.data(), v.n.data(), reinterpret_cast<const T *const *>(v.A.data()),             \
      v.lda.data(), R(r.vl), R(r.vu), r.il, r.iu, pns, reinterpret_cast<R *const *>(v.S.data()),   \
      v.vectors ? reinterpret_cast<T *const *>(v.U.data()) : nullptr, v.ldu.data(),                \
      v.vectors ? reinterpret_cast<T *const *>(v.V.data()) : nullptr, v.ldv.data(), pinfo, ib,     \
      &opts)
    switch (v.prec) {
    case 's': BSVD_CALL(s, float, float); break;
    case 'd': BSVD_CALL(d, double, double); break;
    case 'c': BSVD_CALL(c, bsvd_cfloat, float); break;
    default: BSVD_CALL(z, bsvd_cdouble, double); break;
    }
#undef BSVD_CALL
  }
  return finish(st);
}

} // namespace

void register_gesvdx(nb::module_ &mod) {
  mod.def("gesvdx_vbatched", &gesvdx_vbatched, nb::arg("A"), nb::arg("m"), nb::arg("n"),
          nb::arg("lda"), nb::arg("range"), nb::arg("vl"), nb::arg("vu"), nb::arg("il"),
          nb::arg("iu"), nb::arg("ns"), nb::arg("S"), nb::arg("offS"), nb::arg("U").none(),
          nb::arg("ldu"), nb::arg("offU"), nb::arg("V").none(), nb::arg("ldv"), nb::arg("offV"),
          nb::arg("info"), nb::arg("cols"), nb::arg("opts"));
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
