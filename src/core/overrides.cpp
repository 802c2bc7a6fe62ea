// The overrides loader (overrides.hpp): the library's only getenv.
#include "overrides.hpp"

#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <mutex>

namespace bsvd::detail {

namespace {

const char *env(const char *name) {
  const char *e = std::getenv(name);
  return e && e[0] ? e : nullptr;
}

// An integer from `allowed`, else 0.
int env_choice(const char *name, std::initializer_list<int> allowed) {
  const char *e = env(name);
  if (!e) return 0;
  const int v = std::atoi(e);
  for (int a : allowed)
    if (v == a) return v;
  return 0;
}

long env_positive(const char *name) {
  const char *e = env(name);
  const long v = e ? std::atol(e) : 0;
  return v > 0 ? v : 0;
}

// "0" turns a default-on switch off, "1" forces it on.
Force env_switch(const char *name) {
  const char *e = env(name);
  if (!e) return Force::kAuto;
  return e[0] == '0' ? Force::kOff : e[0] == '1' ? Force::kOn : Force::kAuto;
}

std::mutex g_mutex;
Overrides g_current;
bool g_loaded = false;

} // namespace

Overrides overrides_from_env() {
  Overrides o;
  o.fused_lanes = env_choice("BSVD_FUSED_LANES", {4, 8, 16, 32});
  if (const char *e = env("BSVD_FUSED_RULE")) o.fused_gcd_rule = e[0] == 'g';
  o.fused_tpm = env_choice("BSVD_FUSED_TPM", {32, 64, 128, 256});
  o.fused_max_cols = int(env_positive("BSVD_FUSED_MAX_COLS"));
  o.fused_beside = env_switch("BSVD_BESIDE");

  if (const char *e = env("BSVD_GRAM"))
    o.gram_cublas = e[0] == 'c' ? Force::kOn : e[0] == 'o' ? Force::kOff : Force::kAuto;
  if (const char *e = env("BSVD_GRAM_TILE")) {
    if (e[0] == 's') o.gram_plan = GramPlan::kSplit;
    else if (e[0] == 'm') o.gram_plan = GramPlan::kMma;
    else if (std::atoi(e) == 2) o.gram_plan = GramPlan::kTile2;
    else if (std::atoi(e) == 4) o.gram_plan = GramPlan::kTile4;
  }
  o.tlp_warp = env_positive("BSVD_TLP_THRESHOLD");
  o.tlp_block = env_positive("BSVD_TLP_BLOCK_THRESHOLD");
  o.evd_threads = env_choice("BSVD_EVD_THREADS", {32, 128, 256});
  o.evd_lean = env_switch("BSVD_EVD_LEAN");
  o.stream_groups = env_choice("BSVD_BLK_GROUPS", {1, 2});
  if (const char *e = env("BSVD_PROFILE")) o.profile = std::strcmp(e, "0") != 0;

  o.qr_wy = env_switch("BSVD_QR_WY");
  o.qr_tsqr = env_switch("BSVD_QR_TSQR");
  o.qr_threads = env_choice("BSVD_QR_THREADS", {256, 512, 1024});
  o.qr_cluster = env_switch("BSVD_QR_CLUSTER");
  o.qr_apply = env_switch("BSVD_QR_APPLY");
  if (const char *e = env("BSVD_QRCP_PLAN"))
    o.qrcp_throughput = e[0] == 't' ? Force::kOn : e[0] == 'l' ? Force::kOff : Force::kAuto;
  if (const char *e = env("BSVD_QRCP_PLAN_TRACE")) o.qrcp_trace = e[0] == '1';
  return o;
}

Overrides current_overrides() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_loaded) {
    g_current = overrides_from_env();
    g_loaded = true;
  }
  return g_current;
}

void set_overrides(const Overrides &o) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_current = o;
  g_loaded = true;
}

} // namespace bsvd::detail
