// What the planner knows of a GPU: a plain description (no CUDA types) and
// the facts of the compiled paths on it -- which shapes each path can hold.
// The cuda backend fills both (src/cuda/common/device_info.hpp,
// src/cuda/facts.cu); the unit tests fill them by hand.
#pragma once

namespace bsvd::detail::plan {

struct DeviceDesc {
  int id = -1; // CUDA device ordinal; -1: none
  int cc_major = 0, cc_minor = 0;
  int sm_count = 1; // multiprocessors
  int smem_optin = 48 * 1024; // dynamic shared memory per block (opt-in), bytes
};

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
};

} // namespace bsvd::detail::plan
