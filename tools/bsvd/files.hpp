// Output files of the bsvd tool: checked before any work starts, written
// atomically (a temporary file beside the target, renamed into place), and
// published as a set so a failure leaves every target as it was.
#pragma once

#include <string>
#include <vector>

namespace bsvd::cli {

// The directory exists (created if needed) and a file can be created in it;
// else false with "<option> <dir>: <reason>" (the system's errno text).
bool check_output_dir(const std::string &dir, const char *option, std::string &err);

// A file can be written at path (its directory exists and takes a new file;
// path is not a directory); else false with "<option> <path>: <reason>".
bool check_output_file(const std::string &path, const char *option, std::string &err);

// Writes text to path atomically; false with "<path>: <reason>".
bool write_text_file(const std::string &path, const std::string &text, std::string &err);

// Files written to temporary names first and renamed into place together by
// publish(). Destroying an unpublished set removes its temporary files.
class OutputSet {
public:
  OutputSet() = default;
  OutputSet(const OutputSet &) = delete;
  OutputSet &operator=(const OutputSet &) = delete;
  ~OutputSet();
  // An .npy array (dtype "f4", "f8", "c8", "c16" or "i4"; data in C order).
  bool add_npy(const std::string &path, const char *dtype, const std::vector<long long> &shape,
               const void *data, size_t bytes, std::string &err);
  bool add_text(const std::string &path, const std::string &text, std::string &err);
  // A temporary file written by other means (bsvd run under MPI: by every
  // rank), renamed to path by publish() or removed with the set.
  void add_temp(const std::string &tmp, const std::string &path) { files_.push_back({tmp, path}); }
  // Files of an earlier run that this run does not write (e.g. U.npy under
  // --values-only): removed once the set is published.
  void remove_stale(const std::string &path) { stale_.push_back(path); }
  // Renames every file into place, then removes the stale ones. On failure
  // the files not yet renamed are removed and err names the file.
  bool publish(std::string &err);
  size_t size() const { return files_.size(); }

private:
  struct File {
    std::string tmp, path;
  };
  std::vector<File> files_;
  std::vector<std::string> stale_;
};

// Bytes of physical memory (0 if unknown).
double physical_memory_bytes();

// "1.5 GB", "812 MB", ...
std::string human_bytes(double bytes);

// False with "<what> needs <N> GB, more than this machine's memory (<M> GB)"
// when bytes exceed the physical memory (or overflow).
bool fits_in_memory(double bytes, const std::string &what, std::string &err);

} // namespace bsvd::cli
