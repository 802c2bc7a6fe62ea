// Typed overrides of the library's automatic choices.
//
// Every automatic choice of the library (which path a matrix takes, the
// kernels' plans, the stream groups, ...) is made by the planner from the
// tuning table of the GPU (src/plan/tuning.hpp). Benchmarks and tests need
// to force a choice -- to measure every plan, or to check that two plans
// give the same bits -- and they do so through this struct, never through
// the options of the public API, which only hold what a user may ask for.
//
// The environment is read in one place only, overrides_from_env(), once per
// process when the overrides are first needed (so BSVD_GRAM_TILE=4 on a
// command line still reaches the library); after that the current set is
// changed only by set_override() / set_overrides() / ScopedOverrides. Each
// call takes one snapshot (current_overrides()), so a call never sees a
// half-changed set. The variable of each field is named beside it;
// docs/design/overrides.md lists them with what they force.
#pragma once

namespace bsvd::detail {

// A forced choice between two ways, or the rule's own (kAuto).
enum class Force : signed char { kAuto = -1, kOff = 0, kOn = 1 };

// The own Gram kernel's plans of the blocked path (src/cuda/blocked/gram*.cuh).
enum class GramPlan : signed char {
  kAuto = 0, // the rule (plan/tuning.hpp, gram_plan)
  kTile2 = 2, // latency plan: five warps per pair
  kTile4 = 4, // throughput plan: two warps per pair
  kSplit = 3, // tile 2 on one block per 128-row segment of each pair
  kMma = 5, // FP64 tensor cores (double only; elsewhere tile 4)
};

struct Overrides {
  // ---- fused kernel ----------------------------------------------------
  int fused_lanes = 0; // BSVD_FUSED_LANES: lanes per column pair 4/8/16/32; 0 = table
  bool fused_gcd_rule = false; // BSVD_FUSED_RULE=gcd: WCYCLE's gcd rule for the lanes
  int fused_tpm = 0; // BSVD_FUSED_TPM: threads per matrix cap 32..256; 0 = table
  int fused_max_cols = 0; // BSVD_FUSED_MAX_COLS: the fused kernel's column cap; 0 = rule
  Force fused_beside = Force::kAuto; // BSVD_BESIDE=0|1: fused/QR beside the blocked path
  // ---- register tier -----------------------------------------------------
  int tiny_max_dim = -1; // BSVD_TINY_MAX_DIM=0..32: its size cap (0 = off); -1 = table
  // BSVD_TINY_LANES_FROM=2..9: lanes variant from this size (always beyond 8); -1 = table
  int tiny_lanes_from = -1;

  // ---- blocked path ----------------------------------------------------
  Force gram_cublas = Force::kAuto; // BSVD_GRAM=cublas|own: the Gram stage by cuBLAS
  GramPlan gram_plan = GramPlan::kAuto; // BSVD_GRAM_TILE=2|4|s|m: the own Gram kernel's plan
  long tlp_warp = 0; // BSVD_TLP_THRESHOLD: the warp eigensolver plan's TLP threshold
  long tlp_block = 0; // BSVD_TLP_BLOCK_THRESHOLD: the 128-thread plan's
  int evd_threads = 0; // BSVD_EVD_THREADS=32|128|256: force an eigensolver plan
  Force evd_lean = Force::kAuto; // BSVD_EVD_LEAN=0|1: the lean warp kernel (d)
  int stream_groups = 0; // BSVD_BLK_GROUPS=1|2: Gram-path matrices in 1 or 2 streams
  bool profile = false; // BSVD_PROFILE=1: stage timers of the blocked path

  // ---- QR front end and preconditioning -------------------------------
  Force qr_wy = Force::kAuto; // BSVD_QR_WY=0|1: Q applied in compact WY form
  Force qr_tsqr = Force::kAuto; // BSVD_QR_TSQR=0|1: TSQR for <= 32 columns
  int qr_threads = 0; // BSVD_QR_THREADS=256|512|1024: threads per QR matrix
  Force qr_cluster = Force::kAuto; // BSVD_QR_CLUSTER=0: pivoted factorization on one block
  Force qr_apply = Force::kAuto; // BSVD_QR_APPLY=0: Q formed in the finish kernel
  Force qrcp_throughput = Force::kAuto; // BSVD_QRCP_PLAN=throughput|latency
  bool qrcp_trace = false; // BSVD_QRCP_PLAN_TRACE=1: print the QRCP decisions
  Force gram_auto =
      Force::kAuto; // BSVD_GRAM_AUTO=0|1: the plan's Gram route off / on (every precision)
  Force bidiag = Force::kAuto; // BSVD_BIDIAG=0|1: the values-only bidiagonal route off / on
  bool gram_trace = false; // BSVD_GRAM_TRACE=1: print the Gram route's test (blocking calls)

  // ---- cuda backend: host-resident data ---------------------------------
  long host_chunk = -1; // BSVD_HOST_CHUNK: bytes of A per streamed chunk of a host
      // batch (0: never streamed, one copy); -1 = the default, 64 MiB

  // ---- one matrix across devices (core/distributed.hpp) -------------------
  int dist_min_cols = 0; // BSVD_DIST_MIN_COLS: min(m, n) from which a one-matrix call
      // over devices takes the distributed solve (1 = always); 0 = table (never)
  int dist_pair_cols = 0; // BSVD_DIST_PAIR_COLS: target pair width; 0 = table
  int dist_inner_sweeps = -1; // BSVD_DIST_INNER_SWEEPS: sweeps of each pair's solve
      // (0 = until converged); -1 = table
  // ---- cpu backend -----------------------------------------------------
  Force cpu_lapack = Force::kAuto; // BSVD_CPU_LAPACK=0|1: LAPACK path off / on
      // for every matrix that may take it (plan::cpu_lapack)
  // ---- device facts --------------------------------------------------------
  // BSVD_DEVICE_AS=sm_80|sm_86|sm_89|sm_90|sm_100|sm_120 (or 80, 86, ...):
  // the planner and the kernels' host code see the current GPU narrowed to
  // that generation's facts (plan::device_as: compute capability, cluster
  // launch, shared memory per block, FP64 rate), so that an H100 runs the
  // paths and tables of an A100 or an RTX GPU. 0 = the GPU's own facts.
  int device_as = 0;
  // ---- tests -------------------------------------------------------------
  long long test_write_limit = -1; // BSVD_TEST_WRITE_LIMIT=N: src/testing's file
      // writes fail with ENOSPC once N bytes are written (a full disk in the
      // CLI tests); -1 = no limit
};

// Sets the field of the variable `name` (one of the names above) from its
// value as the environment would give it; a null or empty value, or one
// that is not a choice of the field, restores the default. false: no such
// variable.
bool set_override(Overrides &o, const char *name, const char *value);

// The variables above, from the environment (unset or unrecognized values
// keep the default). The only getenv of the library.
Overrides overrides_from_env();

// The current overrides (a copy; thread-safe). The first call loads them
// from the environment.
Overrides current_overrides();

// Replaces the current overrides (benchmarks, tests).
void set_overrides(const Overrides &o);

// A number that changes with every set_overrides: what a cached plan was
// made under (the cuda backend's replayed graphs, backend.cu).
unsigned long long overrides_generation();

// Sets overrides for a scope and restores the previous ones after it.
class ScopedOverrides {
public:
  explicit ScopedOverrides(const Overrides &o) : saved_(current_overrides()) { set_overrides(o); }
  ~ScopedOverrides() { set_overrides(saved_); }
  ScopedOverrides(const ScopedOverrides &) = delete;
  ScopedOverrides &operator=(const ScopedOverrides &) = delete;

private:
  Overrides saved_;
};

} // namespace bsvd::detail
