// Shared pieces of the bsvd command-line tool.
#pragma once

#include <bsvd/bsvd.h>
#include <bsvd/svd.hpp>

#include <CLI/CLI.hpp>

#include <chrono>
#include <complex>
#include <string>
#include <vector>

namespace bsvd::cli {

// The names of one public enum (bsvd.h: bsvd_<enum>_string and
// bsvd_<enum>_from_string), for parsing options and writing help texts.
struct EnumNames {
  const char *(*name)(int);
  bsvd_status_t (*parse)(const char *, int *);
  // "a, b, c or d" (sep " or "), "a, b, c, d" (sep ", ")
  std::string list(const char *last_sep = " or ") const;
  // The value of s; false with "unknown <option> 's' (a, b, c)" in err.
  bool value(const std::string &s, const char *option, int &v, std::string &err) const;
};
inline constexpr EnumNames kBackendNames{bsvd_backend_string, bsvd_backend_from_string};
inline constexpr EnumNames kOrderingNames{bsvd_ordering_string, bsvd_ordering_from_string};
inline constexpr EnumNames kVariantNames{bsvd_variant_string, bsvd_variant_from_string};
inline constexpr EnumNames kPairSolverNames{bsvd_pair_solver_string, bsvd_pair_solver_from_string};

// Solver settings common to run, check and plan: one flag per row of the
// library's option table (bsvd_option_info: --name with '_' as '-', and
// --threads for num_threads), and --devices.
struct SolverArgs {
  std::vector<std::string> text; // per row: the flag's value as given ("" = the default)
  std::string devices; // "" (the current GPU), "all", or a comma list of ordinals
  mutable std::vector<int> device_list; // what opts.devices points to
  void add_to(CLI::App &app);
  // Fills opts; returns false with a message for an invalid value.
  bool to_options(bsvd_options_t &opts, std::string &err) const;
  // The --backend value as given, or the default's name ("auto").
  std::string backend() const;
};

template <class T> constexpr char precision_of();
template <> constexpr char precision_of<float>() { return 's'; }
template <> constexpr char precision_of<double>() { return 'd'; }
template <> constexpr char precision_of<std::complex<float>>() { return 'c'; }
template <> constexpr char precision_of<std::complex<double>>() { return 'z'; }

// Calls f(T{}) with T the value type of precision p ('s','d','c','z').
template <class F> bool with_precision(char p, F &&f) {
  switch (p) {
  case 's': f(float{}); return true;
  case 'd': f(double{}); return true;
  case 'c': f(std::complex<float>{}); return true;
  case 'z': f(std::complex<double>{}); return true;
  default: return false;
  }
}

// Option checks with messages that name the bound (CLI11's own range
// checks print DBL_MAX in full). A failed check is a usage error (exit 2).
//   count(lo): an integer >= lo; "1e6" is taken as 1000000 (the string is
//              rewritten to digits before the option's conversion)
CLI::Validator count(long long lo);

std::vector<int> parse_int_list(const std::string &s); // "1,2,3" -> {1,2,3}

// --devices: "" -> 0 (the current GPU), "all" -> BSVD_DEVICES_ALL, "0,1"
// -> 2 with list {0, 1}; false with a message for anything else.
bool parse_devices(const std::string &s, int &count, std::vector<int> &list, std::string &err);
std::vector<std::string> split(const std::string &s, char sep);

inline double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Progress on stderr for long runs ("[ 12/48] ..."), overwritten in place on
// a terminal, one line per step otherwise. Disabled when quiet.
struct Progress {
  int total = 0, done = 0;
  bool enabled = true;
  bool tty = false;
  Progress(int total, bool enabled);
  void step(const std::string &what);
  void finish();
};

// Subcommands (each in its own file).
void add_run(CLI::App &app, int &rc);
void add_gen(CLI::App &app, int &rc);
void add_check(CLI::App &app, int &rc);
void add_plan(CLI::App &app, int &rc);

} // namespace bsvd::cli
