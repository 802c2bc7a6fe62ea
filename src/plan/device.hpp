// What the planner knows of a GPU: a plain description (no CUDA types) and
// the facts of the compiled paths on it -- which shapes each path can hold.
// The cuda backend fills both (src/cuda/common/device_info.hpp,
// src/cuda/facts.cu); the unit tests fill them by hand.
#pragma once

namespace bsvd::detail::plan {

// Every rule that depends on the GPU reads these facts (never a compute
// capability compared in a kernel's host code), so that a test can describe
// any GPU and the override BSVD_DEVICE_AS can make a GPU look like an older
// one (device_as below). The defaults of the fields added for the
// fallback tables (clusters, fp64_ratio, l2_bytes) mean "unknown": a
// description that sets only the compute capability, SMs and shared memory
// plans exactly as before.
struct DeviceDesc {
  int id = -1; // CUDA device ordinal; -1: none
  int cc_major = 0, cc_minor = 0;
  int sm_count = 1; // multiprocessors
  int smem_optin = 48 * 1024; // dynamic shared memory per block (opt-in), bytes
  // Thread-block cluster launch (cudaDevAttrClusterLaunch): 1 yes, 0 no,
  // -1 unknown (then: compute capability 9.0 or newer).
  int cluster_launch = -1;
  // FP32 to FP64 throughput (cudaDevAttrSingleToDoublePrecisionPerfRatio):
  // 2 on H100 and A100, 32 or 64 on consumer GPUs; 0 unknown.
  int fp64_ratio = 0;
  long long l2_bytes = 0; // L2 cache; 0 unknown
  char name[96] = {}; // cudaDeviceProp::name; empty when unknown or described
  // Set when the facts were narrowed by device_as (the override
  // BSVD_DEVICE_AS): the GPU's own compute capability, for `bsvd plan`.
  int real_cc_major = 0, real_cc_minor = 0;

  bool clusters() const { return cluster_launch >= 0 ? cluster_launch != 0 : cc_major >= 9; }
  // Consumer GPUs (FP64 at 1/32 or 1/64 of FP32): rules whose thresholds
  // count FP64 work take other values there (tuning_fallback.cpp).
  bool slow_fp64() const { return fp64_ratio >= 16; }
};

// The facts d would have on the GPU generation `arch` (80: A100, 86: A10,
// RTX 30xx, 89: L4, RTX 40xx; the override BSVD_DEVICE_AS=sm_80 ...): the
// compute capability, cluster launch and per-block shared memory of that
// generation, never more than d's own (a larger GPU can imitate a smaller
// one, not the reverse). The SM count, L2 and FP64 rate stay d's. Returns
// false, d unchanged, for an arch it does not know (or 0: no override).
bool device_as(DeviceDesc &d, int arch);

// Shapes the compiled GPU paths can hold on one device. mw >= nw are a
// matrix's working dimensions (W = A, or A^H when m < n); prec: 's', 'd',
// 'c', 'z'.
class PathFacts {
public:
  virtual ~PathFacts() = default;
  // The fused kernel holds an mw x nw matrix (and V) in shared memory.
  virtual bool fused_fits(char prec, int mw, int nw, bool vectors) const = 0;
  // The largest block width of the blocked path's compiled instances.
  virtual int blocked_max_nb(char prec) const = 0;
  // The blocked path's shared-memory pair kernels take block width nb and
  // hold a pair of mw rows.
  virtual bool pair_fits(char prec, int mw, int nb) const = 0;
  // Blocks per cluster of the pivoted factorization (0: no cluster holds it).
  virtual int qrcp_cluster_blocks(char prec, int mw, int nw) const = 0;
  // TSQR chunks of an mw x nw matrix (below 2: TSQR does not take it).
  virtual int tsqr_chunks(char prec, int mw, int nw) const = 0;
  // Columns per block of the grid that applies Q to mw-row columns (0: none).
  virtual int qr_apply_cols(char prec, int mw) const = 0;
  // Whether the blocked path's warp eigensolver plan (its shared memory
  // fixed at compile time) fits a block on this GPU; when not, the plan
  // rule takes the 128-thread plan instead (make_plan).
  virtual bool evd_warp_fits(char prec) const {
    (void)prec;
    return true;
  }
  // The values-only bidiagonal route takes an m x n matrix: on chip (the
  // matrix, GEBRD's work vector and the bidiagonal in one block's shared
  // memory) or by GEBRD's panels until its trailing matrix is on chip.
  virtual bool bidiag_reaches(char prec, int m, int n) const {
    (void)prec, (void)m, (void)n;
    return false;
  }
};

// The facts of a build or machine without a GPU: no path holds anything.
class NoDeviceFacts final : public PathFacts {
public:
  bool fused_fits(char, int, int, bool) const override { return false; }
  int blocked_max_nb(char) const override { return 0; }
  bool pair_fits(char, int, int) const override { return false; }
  int qrcp_cluster_blocks(char, int, int) const override { return 0; }
  int tsqr_chunks(char, int, int) const override { return 0; }
  int qr_apply_cols(char, int) const override { return 0; }
  bool evd_warp_fits(char) const override { return false; }
  bool bidiag_reaches(char, int, int) const override { return false; }
};

} // namespace bsvd::detail::plan
