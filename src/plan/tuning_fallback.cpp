// The tables by architecture family, and the fallback for a GPU whose
// family has no measured table (tuning.hpp). The fallback is derived, not
// measured: docs/design/tuning.md ("Other GPUs") gives the reasoning, and a
// family's measured table replaces it once someone measures one.
#include "tuning.hpp"

#include <algorithm>
#include <cmath>

namespace bsvd::detail::plan {

const Tuning &sm90_table(); // tuning_sm90.cpp

namespace {

// The machine the sm_90 table was measured on: an H100 SXM (132 SMs, FP64
// at half the FP32 rate). The fallback scales the thresholds that count
// parallelism by the GPU's own against these.
constexpr int kMeasuredSms = 132;
constexpr int kMeasuredFp64Ratio = 2;

// The name `bsvd plan` prints for a family's fallback table.
const char *fallback_name(int cc_major, int cc_minor) {
  if (cc_major == 8 && cc_minor == 0) return "sm_80 fallback (A100, A30; from device facts)";
  if (cc_major == 8 && cc_minor == 6)
    return "sm_86 fallback (A10, A40, RTX 30xx; from device facts)";
  if (cc_major == 8 && cc_minor == 7) return "sm_87 fallback (Jetson Orin; from device facts)";
  if (cc_major == 8 && cc_minor == 9)
    return "sm_89 fallback (L4, L40S, RTX 40xx; from device facts)";
  if (cc_major == 9) return "sm_9x fallback (from device facts)";
  if (cc_major == 10) return "sm_100 fallback (B200, GB200; from device facts)";
  if (cc_major == 12) return "sm_120 fallback (RTX 50xx, RTX PRO; from device facts)";
  return "fallback from device facts";
}

long scaled(long v, double f) { return std::max(1L, long(std::lround(double(v) * f))); }

} // namespace

const Tuning *measured_table(int cc_major, int cc_minor) {
  (void)cc_minor;
  if (cc_major == 9) return &sm90_table(); // H100, H200 (9.0)
  return nullptr;
}

const Tuning &tuning_table(int cc_major, int cc_minor) {
  const Tuning *t = measured_table(cc_major, cc_minor);
  return t ? *t : sm90_table();
}

Tuning tuning_for(const DeviceDesc &d) {
  if (const Tuning *t = measured_table(d.cc_major, d.cc_minor)) return *t;
  return fallback_table(d);
}

// What changes against the sm_90 table, and why:
//  - The eigensolver plan rule (WCYCLE's TLP model) switches to the warp
//    plan once pairs x 32 threads fill the GPU, to the 128-thread plan once
//    pairs x 128 do: the thresholds count threads in flight, so they scale
//    with the SM count. Where FP64 runs at 1/16 of FP32 or slower (consumer
//    GPUs: 1/32, 1/64), d and z are bound by the few FP64 units, which far
//    fewer threads keep busy: their thresholds also scale by the measured
//    GPU's FP64 ratio over this one's (2/64 on an RTX 4090), so the warp
//    plan -- the least redundant work per pair -- comes at fewer pairs.
//  - The Gram kernel's split plan is worth it while its blocks fit two waves
//    (7 tile-2 blocks per SM): the cap scales with the SM count.
// Every other value (the fused kernel's lanes and caps, the register tier,
// the QR and preconditioning rules) is a property of the kernels' shapes
// more than of the GPU and stays; where a GPU cannot run a path at all
// (shared memory per block, clusters), the planner's facts say so
// (PathFacts), not the table.
Tuning fallback_table(const DeviceDesc &d) {
  Tuning t = sm90_table();
  t.name = fallback_name(d.cc_major, d.cc_minor);
  const double sms = double(std::max(d.sm_count, 1)) / kMeasuredSms;
  const double fp64 = d.slow_fp64() ? double(kMeasuredFp64Ratio) / double(d.fp64_ratio) : 1.0;
  BlockedTuning &b = t.blocked;
  for (int p = 0; p < 4; ++p) {
    const bool dbl = p == prec_index('d') || p == prec_index('z');
    const double f = sms * (dbl ? fp64 : 1.0);
    b.tlp_warp_full[p] = scaled(b.tlp_warp_full[p], f);
    b.tlp_warp_ragged[p] = scaled(b.tlp_warp_ragged[p], f);
  }
  b.tlp_block = scaled(b.tlp_block, sms);
  b.gram_split_max_blocks = 14L * std::max(d.sm_count, 1);
  return t;
}

} // namespace bsvd::detail::plan
