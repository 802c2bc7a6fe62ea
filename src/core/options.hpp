// The options of a call: every field of bsvd_options_t that says how a
// batch is solved, one row each. From this table come
//   - bsvd_options_init's values and check_options' range checks (api.cpp),
//   - Config, the resolved settings the backends read, and make_config,
//   - the key under which a stream-ordered call's graph is replayed
//     (src/cuda/backend.cu),
//   - the public description bsvd_option_info / bsvd_option_set (bsvd.h),
//     from which the Python keywords and their checks, the torch op's
//     schema, the JAX FFI attribute and the CLI's flags are made.
// Adding an option is one row here, its field in bsvd_options_t (bsvd.h),
// and its use; the static_asserts in options.cpp catch a row whose field
// does not exist or has another type.
//
//   X(name, type, kind, lo, hi, init, resolved, value_name, help)
//     name        the bsvd_options_t and Config field, the Python keyword,
//                 the CLI flag (--name, '_' as '-')
//     type        its C type; kind: ENUM (named values, bsvd_<enum>_string),
//                 INT or REAL
//     lo, hi      the valid values, lo <= x <= hi
//     init        bsvd_options_init's value
//     resolved    the Config value of a field value x (defaults resolved)
//     value_name  ENUM: the name of a value; else nullptr
//     help        one line for the CLI and the Python messages
#pragma once

#include <bsvd/bsvd.h>

#include <climits>
#include <string>

namespace bsvd::detail {

// One-sided Jacobi with the parallel round-robin ordering needs ~11 sweeps
// on well-conditioned matrices but 40-47 on graded ones of order 500
// (logrand / geo families with kappa = 1e10, and SuiteSparse matrices such
// as Erdos971 and Harvard500, measured on the CPU solver): the limit leaves
// room for that, and for order ~1000.
constexpr int kDefaultMaxSweeps = 80;
inline constexpr int kWcycleMaxBlocks = 64, kWcycleMaxSweeps = 8;
// The largest tol below 1 (tol < 1: a pair is rotated when its cosine
// exceeds tol).
inline constexpr double kTolMax = 1.0 - 0x1p-53;

#define BSVD_OPTION_TABLE(X)                                                                       \
  X(backend, bsvd_backend_t, ENUM, 0, BSVD_BACKEND_COUNT - 1, BSVD_BACKEND_AUTO, x,                \
    bsvd_backend_string,                                                                           \
    "where the batch is solved (auto: the GPU for device data or when one "                        \
    "is visible)")                                                                                 \
  X(ordering, bsvd_ordering_t, ENUM, 0, BSVD_ORDERING_COUNT - 1, BSVD_ORDERING_ROUND_ROBIN, x,     \
    bsvd_ordering_string, "the parallel ordering of the column pairs")                             \
  X(variant, bsvd_variant_t, ENUM, 0, BSVD_VARIANT_COUNT - 1, BSVD_VARIANT_AUTO, x,                \
    bsvd_variant_string, "column pairs (unblocked), block-column pairs (blocked), or auto")        \
  X(block_size, int, INT, 0, INT_MAX, 0, x, nullptr,                                               \
    "blocked variant: columns per block (0: auto, 16)")                                            \
  X(tol, double, REAL, 0, kTolMax, 0, x, nullptr,                                                  \
    "rotate a pair when |a_i^H a_j| > tol ||a_i|| ||a_j|| (0: the default, from m and the "        \
    "precision)")                                                                                  \
  X(max_sweeps, int, INT, 0, INT_MAX, 0, (x > 0 ? x : kDefaultMaxSweeps), nullptr,                 \
    "sweep limit per matrix (0: 80)")                                                              \
  X(eig_sweeps, int, INT, BSVD_EIG_SWEEPS_AUTO, INT_MAX, BSVD_EIG_SWEEPS_AUTO, x, nullptr,         \
    "blocked variant: sweeps of each block pair's inner solve (-1: auto, 1 then 2 once a "         \
    "matrix stalls; 0: until it converges; k: k sweeps)")                                          \
  X(num_threads, int, INT, 0, INT_MAX, 0, x, nullptr,                                              \
    "cpu: threads over the batch (0: all cores)")                                                  \
  X(qr, int, INT, -1, 1, 0, x, nullptr,                                                            \
    "cuda: QR first for tall or wide matrices (0: auto, 1: whenever R fits the one-kernel "        \
    "solver, -1: never)")                                                                          \
  X(pair_solver, bsvd_pair_solver_t, ENUM, 0, BSVD_PAIR_SOLVER_COUNT - 1, BSVD_PAIR_AUTO, x,       \
    bsvd_pair_solver_string, "blocked variant: how a block pair is rotated")                       \
  X(precondition, int, INT, -1, 2, 0, x, nullptr,                                                  \
    "preconditioning (0: auto, 1: QR with column pivoting, -1: never, 2: the Gram matrix's "       \
    "single-precision eigenvectors)")                                                              \
  X(wcycle_blocks, int, INT, 0, kWcycleMaxBlocks, 0, (x >= 2 ? x : 1), nullptr,                    \
    "blocked variant: blocks per outer block of a second level, the W-cycle (0: one level)")       \
  X(wcycle_sweeps, int, INT, 0, kWcycleMaxSweeps, 0, (x >= 1 ? x : 1), nullptr,                    \
    "sweeps one level down per outer pair (0: 1)")

// The rows' count, and the index of each (kOpt_<name>).
enum OptionIndex : int {
#define BSVD_OPTION_INDEX(name, ...) kOpt_##name,
  BSVD_OPTION_TABLE(BSVD_OPTION_INDEX)
#undef BSVD_OPTION_INDEX
      kOptionCount
};

// Row i's field of o, as a double, and set from one (a value the row
// accepts: option_accepts).
double option_value(const bsvd_options_t &o, int i);
void set_option_value(bsvd_options_t &o, int i, double v);
// Row i (0 ... kOptionCount - 1) as bsvd_option_info describes it.
const bsvd_option_info_t &option_info(int i);
// Whether v is a valid value of the row: lo <= v <= hi, whole for ENUM and
// INT rows.
bool option_accepts(const bsvd_option_info_t &r, double v);
// The valid values in words, for messages ("a whole number in -1 ... 2").
std::string option_range(const bsvd_option_info_t &r);

} // namespace bsvd::detail
