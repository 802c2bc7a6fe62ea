// The overrides loader (overrides.hpp): the library's only getenv.
#include "overrides.hpp"

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <mutex>

namespace bsvd::detail {

namespace {

// An integer from `allowed`, else 0.
int choice(const char *v, std::initializer_list<int> allowed) {
  const int x = std::atoi(v);
  for (int a : allowed)
    if (x == a) return x;
  return 0;
}

long positive(const char *v) {
  const long x = std::atol(v);
  return x > 0 ? x : 0;
}

// "0" turns a default-on switch off, "1" forces it on.
Force on_off(const char *v) {
  return v[0] == '0' ? Force::kOff : v[0] == '1' ? Force::kOn : Force::kAuto;
}

// One variable: sets its field from a value (null: the default).
struct Var {
  const char *name;
  void (*set)(Overrides &o, const char *v);
};

const Var kVars[] = {
    {"BSVD_FUSED_LANES",
     [](Overrides &o, const char *v) {
       o.fused_lanes = v ? choice(v, {4, 8, 16, 32}) : 0;
     }},
    {"BSVD_FUSED_RULE", [](Overrides &o, const char *v) { o.fused_gcd_rule = v && v[0] == 'g'; }},
    {"BSVD_FUSED_TPM",
     [](Overrides &o, const char *v) {
       o.fused_tpm = v ? choice(v, {32, 64, 128, 256}) : 0;
     }},
    {"BSVD_FUSED_MAX_COLS",
     [](Overrides &o, const char *v) { o.fused_max_cols = v ? int(positive(v)) : 0; }},
    {"BSVD_TINY_MAX_DIM",
     [](Overrides &o, const char *v) {
       const int x = v && *v ? std::atoi(v) : -1;
       o.tiny_max_dim = x >= 0 && x <= 32 ? x : -1;
     }},
    {"BSVD_TINY_LANES_FROM",
     [](Overrides &o, const char *v) {
       const int x = v && *v ? std::atoi(v) : -1;
       o.tiny_lanes_from = x >= 2 && x <= 9 ? x : -1;
     }},
    {"BSVD_BESIDE",
     [](Overrides &o, const char *v) { o.fused_beside = v ? on_off(v) : Force::kAuto; }},
    {"BSVD_GRAM",
     [](Overrides &o, const char *v) {
       o.gram_cublas = !v            ? Force::kAuto
                       : v[0] == 'c' ? Force::kOn
                       : v[0] == 'o' ? Force::kOff
                                     : Force::kAuto;
     }},
    {"BSVD_GRAM_TILE",
     [](Overrides &o, const char *v) {
       o.gram_plan = !v                  ? GramPlan::kAuto
                     : v[0] == 's'       ? GramPlan::kSplit
                     : v[0] == 'm'       ? GramPlan::kMma
                     : std::atoi(v) == 2 ? GramPlan::kTile2
                     : std::atoi(v) == 4 ? GramPlan::kTile4
                                         : GramPlan::kAuto;
     }},
    {"BSVD_TLP_THRESHOLD", [](Overrides &o, const char *v) { o.tlp_warp = v ? positive(v) : 0; }},
    {"BSVD_TLP_BLOCK_THRESHOLD",
     [](Overrides &o, const char *v) { o.tlp_block = v ? positive(v) : 0; }},
    {"BSVD_EVD_THREADS",
     [](Overrides &o, const char *v) {
       o.evd_threads = v ? choice(v, {32, 128, 256}) : 0;
     }},
    {"BSVD_EVD_LEAN",
     [](Overrides &o, const char *v) { o.evd_lean = v ? on_off(v) : Force::kAuto; }},
    {"BSVD_BLK_GROUPS",
     [](Overrides &o, const char *v) {
       o.stream_groups = v ? choice(v, {1, 2}) : 0;
     }},
    {"BSVD_PROFILE",
     [](Overrides &o, const char *v) { o.profile = v && std::strcmp(v, "0") != 0; }},
    {"BSVD_QR_WY", [](Overrides &o, const char *v) { o.qr_wy = v ? on_off(v) : Force::kAuto; }},
    {"BSVD_QR_TSQR", [](Overrides &o, const char *v) { o.qr_tsqr = v ? on_off(v) : Force::kAuto; }},
    {"BSVD_QR_THREADS",
     [](Overrides &o, const char *v) {
       o.qr_threads = v ? choice(v, {256, 512, 1024}) : 0;
     }},
    {"BSVD_QR_CLUSTER",
     [](Overrides &o, const char *v) { o.qr_cluster = v ? on_off(v) : Force::kAuto; }},
    {"BSVD_QR_APPLY",
     [](Overrides &o, const char *v) { o.qr_apply = v ? on_off(v) : Force::kAuto; }},
    {"BSVD_HOST_CHUNK",
     [](Overrides &o, const char *v) {
       o.host_chunk = v && std::atol(v) >= 0 && std::isdigit(static_cast<unsigned char>(v[0]))
                          ? std::atol(v)
                          : -1;
     }},
    {"BSVD_DIST_MIN_COLS",
     [](Overrides &o, const char *v) { o.dist_min_cols = v ? int(positive(v)) : 0; }},
    {"BSVD_DIST_PAIR_COLS",
     [](Overrides &o, const char *v) { o.dist_pair_cols = v ? int(positive(v)) : 0; }},
    {"BSVD_DIST_INNER_SWEEPS",
     [](Overrides &o, const char *v) {
       o.dist_inner_sweeps =
           v && std::isdigit(static_cast<unsigned char>(v[0])) ? std::atoi(v) : -1;
     }},
    {"BSVD_CPU_LAPACK",
     [](Overrides &o, const char *v) { o.cpu_lapack = v ? on_off(v) : Force::kAuto; }},
    {"BSVD_QRCP_PLAN",
     [](Overrides &o, const char *v) {
       o.qrcp_throughput = !v            ? Force::kAuto
                           : v[0] == 't' ? Force::kOn
                           : v[0] == 'l' ? Force::kOff
                                         : Force::kAuto;
     }},
    {"BSVD_QRCP_PLAN_TRACE", [](Overrides &o, const char *v) { o.qrcp_trace = v && v[0] == '1'; }},
    {"BSVD_GRAM_AUTO",
     [](Overrides &o, const char *v) { o.gram_auto = v ? on_off(v) : Force::kAuto; }},
    {"BSVD_GRAM_TRACE", [](Overrides &o, const char *v) { o.gram_trace = v && v[0] == '1'; }},
    {"BSVD_BIDIAG", [](Overrides &o, const char *v) { o.bidiag = v ? on_off(v) : Force::kAuto; }},
    {"BSVD_DEVICE_AS",
     [](Overrides &o, const char *v) {
       if (v && (v[0] == 's' || v[0] == 'S') && (v[1] == 'm' || v[1] == 'M') && v[2] == '_') v += 3;
       o.device_as = v ? choice(v, {80, 86, 89, 90, 100, 120}) : 0;
     }},
    {"BSVD_TEST_WRITE_LIMIT",
     [](Overrides &o,
        const char
            *v) { o.test_write_limit = v && *v ? (long long)std::strtoull(v, nullptr, 10) : -1; }},
};

std::mutex g_mutex;
Overrides g_current;
bool g_loaded = false;
std::atomic<unsigned long long> g_generation{0};

} // namespace

bool set_override(Overrides &o, const char *name, const char *value) {
  for (const Var &v : kVars)
    if (std::strcmp(v.name, name) == 0) {
      v.set(o, value && value[0] ? value : nullptr);
      return true;
    }
  return false;
}

Overrides overrides_from_env() {
  Overrides o;
  for (const Var &v : kVars)
    if (const char *e = std::getenv(v.name); e && e[0]) v.set(o, e);
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
  ++g_generation;
}

unsigned long long overrides_generation() { return g_generation.load(); }

} // namespace bsvd::detail
