// The names of the public enums: one table per enum, the only place where
// they are spelled. The C API's bsvd_<enum>_string / bsvd_<enum>_from_string
// (bsvd.h) read them; the CLI and the Python package go through those
// functions, so a name added or changed here reaches all of them.
//
// Every enum is dense (its enumerators are 0 ... COUNT - 1), so a table is
// indexed by value; the static_asserts below keep each table in step with
// the header's enumerators and its COUNT constant.
#include "backends.hpp"

#include <bsvd/bsvd.h>

#include <cstddef>
#include <string>

namespace bsvd::detail {
namespace {

struct Entry {
  int value;
  const char *name;
};

template <size_t N> constexpr bool dense(const Entry (&t)[N]) {
  for (size_t i = 0; i < N; ++i)
    if (t[i].value != int(i)) return false;
  return true;
}

// Canonical names use '-' between words (status names use ' ').
constexpr Entry kStatus[] = {
    {BSVD_STATUS_SUCCESS, "success"},
    {BSVD_STATUS_BACKEND_UNAVAILABLE, "backend unavailable"},
    {BSVD_STATUS_NOT_SUPPORTED, "not supported"},
    {BSVD_STATUS_ALLOC_FAILED, "allocation failed"},
    {BSVD_STATUS_DEVICE_ERROR, "device error"},
    {BSVD_STATUS_WORKSPACE_TOO_SMALL, "workspace too small"},
    {BSVD_STATUS_INTERNAL_ERROR, "internal error"},
};
// What bsvd_status_string says for statuses that are not a code above.
constexpr const char *kStatusInvalidArgument = "invalid argument";
constexpr const char *kStatusUnknown = "unknown status";

constexpr Entry kJob[] = {
    {BSVD_JOB_VALUES, "values"},
    {BSVD_JOB_VECTORS, "vectors"},
};

constexpr Entry kBackend[] = {
    {BSVD_BACKEND_AUTO, "auto"},
    {BSVD_BACKEND_CPU, "cpu"},
    {BSVD_BACKEND_CUDA, "cuda"},
};

constexpr Entry kOrdering[] = {
    {BSVD_ORDERING_ROUND_ROBIN, "round-robin"},
    {BSVD_ORDERING_ODD_EVEN, "odd-even"},
    {BSVD_ORDERING_ROW_PARALLEL, "row-parallel"},
    {BSVD_ORDERING_COLUMN_PARALLEL, "column-parallel"},
};

constexpr Entry kVariant[] = {
    {BSVD_VARIANT_AUTO, "auto"},
    {BSVD_VARIANT_UNBLOCKED, "unblocked"},
    {BSVD_VARIANT_BLOCKED, "blocked"},
};

constexpr Entry kPairSolver[] = {
    {BSVD_PAIR_AUTO, "auto"},
    {BSVD_PAIR_GRAM, "gram"},
    {BSVD_PAIR_EVD_SM, "evd"},
    {BSVD_PAIR_SVD_SM, "svd"},
};

constexpr Entry kPath[] = {
    {BSVD_PATH_TRIVIAL, "trivial"},
    {BSVD_PATH_CPU_UNBLOCKED, "cpu-unblocked"},
    {BSVD_PATH_CPU_BLOCKED, "cpu-blocked"},
    {BSVD_PATH_CUDA_FUSED, "cuda-fused"},
    {BSVD_PATH_CUDA_BLOCKED, "cuda-blocked"},
    {BSVD_PATH_CUDA_QR, "cuda-qr"},
    {BSVD_PATH_CUDA_PAIR_EVD, "cuda-pair-evd"},
    {BSVD_PATH_CUDA_PAIR_SVD, "cuda-pair-svd"},
    {BSVD_PATH_CUDA_QRCP, "cuda-qrcp"},
    {BSVD_PATH_CUDA_TINY, "cuda-tiny"},
    {BSVD_PATH_CPU_LAPACK, "cpu-lapack"},
    {BSVD_PATH_CUDA_GRAM, "cuda-gram"},
    {BSVD_PATH_CUDA_DEVICES, "cuda-devices"},
    {BSVD_PATH_CUDA_BIDIAG, "cuda-bidiag"},
};

#define BSVD_CHECK_TABLE(table, count, last)                                                       \
  static_assert(dense(table), #table " must list the enumerators in order");                       \
  static_assert(sizeof(table) / sizeof(Entry) == size_t(count),                                    \
                #table " must have " #count " entries");                                           \
  static_assert(count == int(last) + 1, #count " must be " #last " + 1")
BSVD_CHECK_TABLE(kStatus, BSVD_STATUS_COUNT, BSVD_STATUS_INTERNAL_ERROR);
BSVD_CHECK_TABLE(kJob, BSVD_JOB_COUNT, BSVD_JOB_VECTORS);
BSVD_CHECK_TABLE(kBackend, BSVD_BACKEND_COUNT, BSVD_BACKEND_CUDA);
BSVD_CHECK_TABLE(kOrdering, BSVD_ORDERING_COUNT, BSVD_ORDERING_COLUMN_PARALLEL);
BSVD_CHECK_TABLE(kVariant, BSVD_VARIANT_COUNT, BSVD_VARIANT_BLOCKED);
BSVD_CHECK_TABLE(kPairSolver, BSVD_PAIR_SOLVER_COUNT, BSVD_PAIR_SVD_SM);
BSVD_CHECK_TABLE(kPath, BSVD_PATH_COUNT, BSVD_PATH_CUDA_BIDIAG);
#undef BSVD_CHECK_TABLE

struct Table {
  const char *type; // for messages
  const Entry *entries;
  int count;
};

template <size_t N> constexpr Table table(const char *type, const Entry (&t)[N]) {
  return {type, t, int(N)};
}

const char *name_of(const Table &t, int value) {
  return value >= 0 && value < t.count ? t.entries[value].name : nullptr;
}

// given matches canonical when equal, '_' standing for '-'.
bool same_name(const char *given, const char *canonical) {
  for (; *given && *canonical; ++given, ++canonical)
    if (*given != *canonical && !(*given == '_' && *canonical == '-')) return false;
  return *given == *canonical;
}

bsvd_status_t parse(const Table &t, const char *name, int *value) {
  clear_error();
  if (!name) {
    set_error("argument 1 (name) is NULL");
    return -1;
  }
  if (!value) {
    set_error("argument 2 (value) is NULL");
    return -2;
  }
  for (int i = 0; i < t.count; ++i) {
    if (same_name(name, t.entries[i].name)) {
      *value = t.entries[i].value;
      return 0;
    }
  }
  std::string names;
  for (int i = 0; i < t.count; ++i) (names += i ? ", " : "") += t.entries[i].name;
  set_error("argument 1 (name) = '%.80s' is not a %s (%s)", name, t.type, names.c_str());
  return -1;
}

constexpr Table kStatusTable = table("bsvd_status_code", kStatus);
constexpr Table kJobTable = table("bsvd_job_t", kJob);
constexpr Table kBackendTable = table("bsvd_backend_t", kBackend);
constexpr Table kOrderingTable = table("bsvd_ordering_t", kOrdering);
constexpr Table kVariantTable = table("bsvd_variant_t", kVariant);
constexpr Table kPairSolverTable = table("bsvd_pair_solver_t", kPairSolver);
constexpr Table kPathTable = table("bsvd_path_t", kPath);

} // namespace
} // namespace bsvd::detail

using namespace bsvd::detail;

extern "C" {

const char *bsvd_status_string(bsvd_status_t status) {
  if (status < 0) return kStatusInvalidArgument;
  const char *s = name_of(kStatusTable, status);
  return s ? s : kStatusUnknown;
}

#define BSVD_DEFINE_NAMES(fn, tab)                                                                 \
  const char *bsvd_##fn##_string(int value) { return name_of(tab, value); }                        \
  bsvd_status_t bsvd_##fn##_from_string(const char *name, int *value) {                            \
    return parse(tab, name, value);                                                                \
  }
BSVD_DEFINE_NAMES(status_code, kStatusTable)
BSVD_DEFINE_NAMES(job, kJobTable)
BSVD_DEFINE_NAMES(backend, kBackendTable)
BSVD_DEFINE_NAMES(ordering, kOrderingTable)
BSVD_DEFINE_NAMES(variant, kVariantTable)
BSVD_DEFINE_NAMES(pair_solver, kPairSolverTable)
BSVD_DEFINE_NAMES(path, kPathTable)
#undef BSVD_DEFINE_NAMES

} // extern "C"
