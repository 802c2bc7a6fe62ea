// The command-line tools' shared pieces: option flags from the option
// table, enum and count validators, lists, progress lines. Linked into the
// installed tool `bsvd` (main.cpp) and the build tree's benchmark
// `bsvd-bench` (tools/bench/).
#include "common.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <unistd.h>

namespace bsvd::cli {

std::string EnumNames::list(const char *last_sep) const {
  std::string out;
  for (int v = 0; const char *s = name(v); ++v) {
    if (v > 0) out += name(v + 1) ? ", " : last_sep;
    out += s;
  }
  return out;
}

bool EnumNames::value(const std::string &s, const char *option, int &v, std::string &err) const {
  if (parse(s.c_str(), &v) == 0) return true;
  err = std::string("unknown ") + option + " '" + s + "' (" + list(", ") + ")";
  return false;
}

CLI::Validator count(long long lo) {
  return CLI::Validator(
      [lo](std::string &s) -> std::string {
        char *end = nullptr;
        const double x = std::strtod(s.c_str(), &end);
        if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(x) || x != std::floor(x))
          return "'" + s + "' is not a whole number";
        if (x < double(lo)) return "must be " + std::to_string(lo) + " or more (got " + s + ")";
        if (x > 9.2e18) return "'" + s + "' is too large";
        s = std::to_string((long long)x);
        return {};
      },
      "INT>=" + std::to_string(lo), "count");
}

namespace {

// The CLI's flag of an option row: --name with '_' as '-', except the
// shorter --threads (with --num-threads as its alias) for num_threads.
std::string flag_names(const bsvd_option_info_t &r) {
  std::string f = r.name;
  for (char &c : f)
    if (c == '_') c = '-';
  if (f == "num-threads") return "--threads,--num-threads";
  return "--" + f;
}

// "a, b or c" of an enum row's names.
std::string value_names(const bsvd_option_info_t &r, const char *last_sep = " or ") {
  std::string out;
  for (int v = int(r.lo); v <= int(r.hi); ++v) {
    if (v > int(r.lo)) out += v == int(r.hi) ? last_sep : ", ";
    out += r.value_name(v);
  }
  return out;
}

// The value of a flag's text under its row (ENUM: a name, '_' taken for
// '-'; INT: a whole number, "1e6" taken; REAL: a number), or a message.
bool row_value(const bsvd_option_info_t &r, const std::string &s, double &v, std::string &err) {
  if (r.kind == BSVD_OPTION_ENUM) {
    std::string t = s;
    for (char &c : t)
      if (c == '_') c = '-';
    for (int x = int(r.lo); x <= int(r.hi); ++x)
      if (t == r.value_name(x)) {
        v = x;
        return true;
      }
    err = "unknown value '" + s + "' (" + value_names(r, ", ") + ")";
    return false;
  }
  char *end = nullptr;
  const double x = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || std::isnan(x)) {
    err = "'" + s + (r.kind == BSVD_OPTION_INT ? "' is not a whole number" : "' is not a number");
    return false;
  }
  char buf[160];
  if (r.kind == BSVD_OPTION_REAL) {
    if (x < r.lo || x > r.hi) {
      std::snprintf(buf, sizeof buf, "must be at least %g and below %g (got %s)", r.lo,
                    std::nextafter(r.hi, HUGE_VAL), s.c_str());
      err = buf;
      return false;
    }
  } else if (!std::isfinite(x) || x != std::floor(x)) {
    err = "'" + s + "' is not a whole number";
    return false;
  } else if (x < r.lo || x > r.hi) {
    if (r.hi >= 2147483647.0)
      std::snprintf(buf, sizeof buf, "must be %g or more (got %s)", r.lo, s.c_str());
    else
      std::snprintf(buf, sizeof buf, "must be in %g ... %g (got %s)", r.lo, r.hi, s.c_str());
    err = buf;
    return false;
  }
  v = x;
  return true;
}

} // namespace

void SolverArgs::add_to(CLI::App &app) {
  const int count = bsvd_option_count();
  text.assign(size_t(count), std::string());
  bsvd_options_t defaults;
  bsvd_options_init(&defaults);
  for (int i = 0; i < count; ++i) {
    const bsvd_option_info_t &r = *bsvd_option_info(i);
    std::string help = r.help;
    if (r.kind == BSVD_OPTION_ENUM)
      help += ": " + value_names(r) + " (default " + r.value_name(int(r.init)) + ")";
    else {
      char buf[48];
      std::snprintf(buf, sizeof buf, " (default %g)", r.init);
      help += buf;
    }
    CLI::Option *opt = app.add_option(flag_names(r), text[size_t(i)], help);
    if (r.kind == BSVD_OPTION_ENUM) { // named in to_options, once per run (under MPI: rank 0)
      opt->type_name("NAME");
      continue;
    }
    opt->type_name(r.kind == BSVD_OPTION_INT ? "INT" : "NUMBER")
        ->check(CLI::Validator(
            [r](std::string &s) -> std::string {
              double v = 0;
              std::string err;
              return row_value(r, s, v, err) ? std::string() : err;
            },
            "", r.name));
  }
  app.add_option("--devices", devices,
                 "cuda, host data: the GPUs that share the batch: all, or a comma list of device "
                 "ordinals (default: the current GPU; docs/multi-gpu.md)");
}

std::string SolverArgs::backend() const {
  const int i = bsvd_option_find("backend");
  const bsvd_option_info_t &r = *bsvd_option_info(i);
  return size_t(i) < text.size() && !text[size_t(i)].empty() ? text[size_t(i)]
                                                             : r.value_name(int(r.init));
}

bool parse_devices(const std::string &s, int &count, std::vector<int> &list, std::string &err) {
  list.clear();
  count = 0;
  if (s.empty()) return true;
  if (s == "all") {
    count = BSVD_DEVICES_ALL;
    return true;
  }
  try {
    list = parse_int_list(s);
  } catch (const std::exception &) {
    list.clear();
  }
  if (list.empty()) {
    err = "--devices must be all or a comma list of device ordinals, not '" + s + "'";
    return false;
  }
  count = int(list.size());
  return true;
}

bool SolverArgs::to_options(bsvd_options_t &o, std::string &err) const {
  bsvd_options_init(&o);
  for (int i = 0; i < int(text.size()); ++i) {
    if (text[size_t(i)].empty()) continue;
    const bsvd_option_info_t &r = *bsvd_option_info(i);
    double v = 0;
    if (!row_value(r, text[size_t(i)], v, err)) { // (the flag's check took it already)
      err = flag_names(r).substr(0, flag_names(r).find(',')) + ": " + err;
      return false;
    }
    if (bsvd_option_set(&o, i, v) != 0) {
      err = bsvd_last_error();
      return false;
    }
  }
  if (!parse_devices(devices, o.device_count, device_list, err)) return false;
  o.devices = device_list.empty() ? nullptr : device_list.data();
  return true;
}

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ')
      cur += c;
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::vector<int> parse_int_list(const std::string &s) {
  std::vector<int> out;
  for (const auto &t : split(s, ',')) {
    size_t pos = 0;
    const int v = std::stoi(t, &pos);
    if (pos != t.size()) throw std::invalid_argument("not an integer: " + t);
    out.push_back(v);
  }
  return out;
}

Progress::Progress(int total_, bool enabled_) : total(total_), enabled(enabled_) {
  tty = isatty(2);
}

void Progress::step(const std::string &what) {
  ++done;
  if (!enabled) return;
  std::fprintf(stderr, tty ? "\r\033[K[%3d/%d] %s" : "[%3d/%d] %s\n", done, total, what.c_str());
  std::fflush(stderr);
}

void Progress::finish() {
  if (enabled && tty) std::fprintf(stderr, "\r\033[K");
}

} // namespace bsvd::cli
