// Output files of the bsvd tool (files.hpp).
#include "files.hpp"

#include "testing/io.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace bsvd::cli {

namespace {

// Creates and removes a file in dir: the only reliable test that it takes
// new files (permissions, read-only mounts, ACLs, a full inode table).
bool probe_dir(const std::string &dir, std::string &why) {
  const std::string probe =
      (fs::path(dir.empty() ? "." : dir) / (".bsvd-probe-" + std::to_string(::getpid()))).string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    why = std::string("cannot create a file there: ") + std::strerror(errno);
    return false;
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return true;
}

} // namespace

bool check_output_dir(const std::string &dir, const char *option, std::string &err) {
  std::error_code ec;
  if (dir.empty()) {
    err = std::string(option) + ": empty path";
    return false;
  }
  if (!fs::is_directory(dir, ec)) {
    // Create first, then look: the ranks of an MPI run check one output
    // directory at once, and one may create it between another's tests.
    std::error_code made;
    fs::create_directories(dir, made);
    if (!fs::is_directory(dir, ec)) {
      err = std::string(option) + " " + dir +
            (fs::exists(dir, ec) ? ": exists and is not a directory"
                                 : ": cannot create the directory: " + made.message());
      return false;
    }
  }
  std::string why;
  if (!probe_dir(dir, why)) {
    err = std::string(option) + " " + dir + ": " + why;
    return false;
  }
  return true;
}

bool check_output_file(const std::string &path, const char *option, std::string &err) {
  std::error_code ec;
  if (path.empty()) {
    err = std::string(option) + ": empty path";
    return false;
  }
  if (fs::is_directory(path, ec)) {
    err = std::string(option) + " " + path + ": is a directory";
    return false;
  }
  const fs::path parent = fs::path(path).parent_path();
  const std::string dir = parent.empty() ? "." : parent.string();
  if (!fs::is_directory(dir, ec)) {
    err = std::string(option) + " " + path + ": directory " + dir +
          (fs::exists(dir, ec) ? " is not a directory" : " does not exist");
    return false;
  }
  std::string why;
  if (!probe_dir(dir, why)) {
    err = std::string(option) + " " + path + ": " + why;
    return false;
  }
  return true;
}

bool write_text_file(const std::string &path, const std::string &text, std::string &err) {
  return testing::write_file_atomic(path, {{text.data(), text.size()}}, err);
}

OutputSet::~OutputSet() {
  for (const auto &f : files_) ::unlink(f.tmp.c_str());
}

bool OutputSet::add_npy(const std::string &path, const char *dtype,
                        const std::vector<long long> &shape, const void *data, size_t bytes,
                        std::string &err) {
  std::string tmp;
  const std::vector<int64_t> s(shape.begin(), shape.end());
  if (!testing::write_npy_temp(path, dtype, s, data, bytes, tmp, err)) return false;
  files_.push_back({tmp, path});
  return true;
}

bool OutputSet::add_text(const std::string &path, const std::string &text, std::string &err) {
  std::string tmp;
  if (!testing::write_temp(path, {{text.data(), text.size()}}, tmp, err)) return false;
  files_.push_back({tmp, path});
  return true;
}

bool OutputSet::publish(std::string &err) {
  for (size_t i = 0; i < files_.size(); ++i) {
    if (std::rename(files_[i].tmp.c_str(), files_[i].path.c_str()) != 0) {
      err =
          files_[i].path + ": cannot rename the temporary file into place: " + std::strerror(errno);
      // The earlier files are in place already; the rest are removed.
      files_.erase(files_.begin(), files_.begin() + long(i));
      return false;
    }
  }
  files_.clear();
  for (const auto &p : stale_) {
    std::error_code ec;
    fs::remove(p, ec);
  }
  stale_.clear();
  return true;
}

double physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? double(pages) * double(page) : 0.0;
}

std::string human_bytes(double b) {
  const char *unit[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
  int u = 0;
  while (b >= 1000 && u < 6) {
    b /= 1000;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, b < 10 && u > 0 ? "%.1f %s" : "%.0f %s", b, unit[u]);
  return buf;
}

bool fits_in_memory(double bytes, const std::string &what, std::string &err) {
  const double mem = physical_memory_bytes();
  if (std::isfinite(bytes) && (mem == 0 || bytes <= mem)) return true;
  err = what + " needs " +
        (std::isfinite(bytes) && bytes < 1e21 ? human_bytes(bytes) : "more than 1e21 bytes") +
        ", more than this machine's memory (" + human_bytes(mem) + ")";
  return false;
}

} // namespace bsvd::cli
