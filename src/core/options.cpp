// The option table as data (bsvd_option_info and friends, bsvd.h): the
// rows of options.hpp, and the reading and writing of their fields.
#include "options.hpp"

#include "api_common.hpp"
#include "backends.hpp" // clear_error

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>

namespace bsvd::detail {

namespace {

// Each row names a field of bsvd_options_t of its type.
#define BSVD_OPTION_CHECK(name, type, kind, lo, hi, init, resolved, value_name, help)              \
  static_assert(std::is_same_v<decltype(bsvd_options_t::name), type>,                              \
                "options.hpp: the type of bsvd_options_t::" #name);
BSVD_OPTION_TABLE(BSVD_OPTION_CHECK)
#undef BSVD_OPTION_CHECK
static_assert(kOptionCount == BSVD_OPTION_COUNT, "bsvd.h: BSVD_OPTION_COUNT is not the table's");

constexpr bsvd_option_info_t kInfo[] = {
#define BSVD_OPTION_INFO(name, type, kind, lo, hi, init, resolved, value_name, help)               \
  {#name, BSVD_OPTION_##kind, double(lo), double(hi), double(init), value_name, help},
    BSVD_OPTION_TABLE(BSVD_OPTION_INFO)
#undef BSVD_OPTION_INFO
};

template <class T> T from_double(double v) {
  if constexpr (std::is_floating_point_v<T>)
    return T(v);
  else
    return T(static_cast<long long>(v));
}

} // namespace

namespace {
// A field's value; an enum field's bits read as the int a C caller may
// have stored (any int, -1 included: a load of the enum type would be
// undefined for values outside its enumerators' range).
template <class F> double field_value(const F &f) {
  if constexpr (std::is_enum_v<F>) {
    static_assert(sizeof(F) == sizeof(int), "an enum option is an int in C");
    int v = 0;
    std::memcpy(&v, &f, sizeof v);
    return double(v);
  } else {
    return double(f);
  }
}
} // namespace

double option_value(const bsvd_options_t &o, int i) {
  switch (i) {
#define BSVD_OPTION_GET(name, ...)                                                                 \
  case kOpt_##name: return field_value(o.name);
    BSVD_OPTION_TABLE(BSVD_OPTION_GET)
#undef BSVD_OPTION_GET
  default: return 0;
  }
}

void set_option_value(bsvd_options_t &o, int i, double v) {
  switch (i) {
#define BSVD_OPTION_SET(name, type, ...)                                                           \
  case kOpt_##name: o.name = from_double<type>(v); return;
    BSVD_OPTION_TABLE(BSVD_OPTION_SET)
#undef BSVD_OPTION_SET
  default: return;
  }
}

const bsvd_option_info_t &option_info(int i) { return kInfo[i]; }

bool option_accepts(const bsvd_option_info_t &r, double v) {
  if (std::isnan(v) || v < r.lo || v > r.hi) return false;
  return r.kind == BSVD_OPTION_REAL || v == std::floor(v);
}

std::string option_range(const bsvd_option_info_t &r) {
  char buf[96];
  if (r.kind == BSVD_OPTION_ENUM) {
    std::string s;
    for (int v = int(r.lo); v <= int(r.hi); ++v) {
      if (!s.empty()) s += v == int(r.hi) ? " or " : ", ";
      s += std::to_string(v) + " (" + r.value_name(v) + ")";
    }
    return s;
  }
  if (r.kind == BSVD_OPTION_REAL)
    std::snprintf(buf, sizeof buf, "a number in [%g, %g)", r.lo, std::nextafter(r.hi, HUGE_VAL));
  else if (r.hi >= double(INT_MAX))
    std::snprintf(buf, sizeof buf, "a whole number, at least %g", r.lo);
  else
    std::snprintf(buf, sizeof buf, "a whole number in %g ... %g", r.lo, r.hi);
  return buf;
}

} // namespace bsvd::detail

using namespace bsvd::detail;

extern "C" {

int bsvd_option_count(void) { return kOptionCount; }

const bsvd_option_info_t *bsvd_option_info(int option) {
  return option >= 0 && option < kOptionCount ? &option_info(option) : nullptr;
}

int bsvd_option_find(const char *name) {
  if (!name) return -1;
  for (int i = 0; i < kOptionCount; ++i)
    if (std::strcmp(option_info(i).name, name) == 0) return i;
  return -1;
}

bsvd_status_t bsvd_option_set(bsvd_options_t *opts, int option, double value) {
  clear_error();
  if (!opts) return bad(1, "opts", "is NULL");
  if (option < 0 || option >= kOptionCount)
    return bad(2, "option", "= %d is not in 0 ... %d", option, kOptionCount - 1);
  const bsvd_option_info_t &r = option_info(option);
  if (!option_accepts(r, value))
    return bad(3, "value", "= %g is not a valid opts->%s: %s", value, r.name,
               option_range(r).c_str());
  set_option_value(*opts, option, value);
  return 0;
}

bsvd_status_t bsvd_option_get(const bsvd_options_t *opts, int option, double *value) {
  clear_error();
  if (!opts) return bad(1, "opts", "is NULL");
  if (option < 0 || option >= kOptionCount)
    return bad(2, "option", "= %d is not in 0 ... %d", option, kOptionCount - 1);
  if (!value) return bad(3, "value", "is NULL");
  *value = option_value(*opts, option);
  return 0;
}

} // extern "C"
