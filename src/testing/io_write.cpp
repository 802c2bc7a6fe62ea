// .npy and text writers (io.hpp): every byte goes to a temporary file in the
// target's directory, which is renamed into place once complete, so a failed
// write (full disk, I/O error) leaves the target as it was.
#include "testing/io.hpp"

#include "core/overrides.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <unistd.h>

namespace bsvd::testing {

namespace {

std::string sys_error(int e) { return std::strerror(e); }

// Creates a new file ".<name>.tmp-<pid>-<n>" in path's directory (mode 0666
// less the umask, as a plain create would have).
int create_temp(const std::string &path, std::string &tmp, std::string &err) {
  static unsigned counter = 0;
  const std::filesystem::path p(path);
  const std::filesystem::path dir = p.parent_path();
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string name = "." + p.filename().string() + ".tmp-" + std::to_string(::getpid()) +
                             "-" + std::to_string(counter++);
    tmp = (dir / name).string();
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    if (errno != EEXIST) {
      err = path + ": cannot create a temporary file in '" +
            (dir.empty() ? std::string(".") : dir.string()) + "': " + sys_error(errno);
      return -1;
    }
  }
  err = path + ": cannot create a temporary file (names in use)";
  return -1;
}

// BSVD_TEST_WRITE_LIMIT=N: the process's writes fail with ENOSPC once N
// bytes are written, so tests can show that a full disk loses no output on
// machines where they cannot mount a small file system.
size_t write_budget() {
  static const size_t budget = [] {
    const long long n = bsvd::detail::current_overrides().test_write_limit;
    return n >= 0 ? size_t(n) : SIZE_MAX;
  }();
  return budget;
}

// Writes all of data to fd, at offset when offset >= 0 (pwrite), else at
// the file position.
bool write_all(int fd, const void *data, size_t size, int &e, int64_t offset = -1) {
  static size_t written = 0;
  const char *p = static_cast<const char *>(data);
  while (size > 0) {
    size_t chunk = std::min<size_t>(size, size_t(1) << 30);
    if (write_budget() != SIZE_MAX) {
      if (written >= write_budget()) {
        e = ENOSPC;
        return false;
      }
      chunk = std::min(chunk, write_budget() - written);
    }
    const ssize_t w = offset < 0 ? ::write(fd, p, chunk) : ::pwrite(fd, p, chunk, off_t(offset));
    if (w < 0) {
      if (errno == EINTR) continue;
      e = errno;
      return false;
    }
    if (w == 0) {
      e = EIO;
      return false;
    }
    p += w;
    if (offset >= 0) offset += w;
    size -= size_t(w);
    written += size_t(w);
  }
  return true;
}

} // namespace

bool npy_prelude(const std::string &dtype, const std::vector<int64_t> &shape, bool fortran_order,
                 std::string &out, std::string &err) {
  if (NpyArray{dtype, {}, false, {}}.itemsize() == 0) {
    err = "unsupported dtype '" + dtype + "' (expected f4, f8, c8, c16 or i4)";
    return false;
  }
  std::string h = "{'descr': '<" + dtype +
                  "', 'fortran_order': " + (fortran_order ? "True" : "False") + ", 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      err = "bad shape (negative dimension)";
      return false;
    }
    if (i) h += ", ";
    h += std::to_string(shape[i]);
  }
  if (shape.size() == 1) h += ",";
  h += "), }";
  // Pad with spaces and a final newline to a multiple of 64 (numpy's choice).
  auto padded = [&](int pre) {
    size_t total = pre + h.size() + 1;
    return h + std::string((64 - total % 64) % 64, ' ') + "\n";
  };
  int major = 1;
  std::string hp = padded(10);
  if (hp.size() > 65535) {
    major = 2;
    hp = padded(12);
  }
  out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  const uint64_t hl = hp.size();
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) out += static_cast<char>((hl >> (8 * i)) & 0xff);
  out += hp;
  return true;
}

bool write_temp(const std::string &path, const std::vector<Chunk> &chunks, std::string &tmp,
                std::string &err) {
  tmp.clear();
  std::string t;
  const int fd = create_temp(path, t, err);
  if (fd < 0) return false;
  int e = 0;
  bool ok = true;
  for (const Chunk &c : chunks)
    if (ok && c.size) ok = write_all(fd, c.data, c.size, e);
  if (::close(fd) != 0 && ok) {
    ok = false;
    e = errno;
  }
  if (!ok) {
    ::unlink(t.c_str());
    err = path + ": write failed: " + sys_error(e);
    return false;
  }
  tmp = t;
  return true;
}

bool write_at(const std::string &path, uint64_t offset, const void *data, size_t bytes,
              std::string &err) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  int e = 0;
  bool ok = fd >= 0;
  if (!ok) e = errno;
  if (ok && bytes) ok = write_all(fd, data, bytes, e, int64_t(offset));
  if (fd >= 0 && ::close(fd) != 0 && ok) {
    ok = false;
    e = errno;
  }
  if (!ok) err = path + ": write failed: " + sys_error(e);
  return ok;
}

bool write_file_atomic(const std::string &path, const std::vector<Chunk> &chunks,
                       std::string &err) {
  std::string tmp;
  if (!write_temp(path, chunks, tmp, err)) return false;
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    err = path + ": cannot rename the temporary file into place: " + sys_error(e);
    return false;
  }
  return true;
}

bool write_npy_temp(const std::string &path, const std::string &dtype,
                    const std::vector<int64_t> &shape, const void *data, size_t bytes,
                    std::string &tmp, std::string &err) {
  std::string pre;
  if (!npy_prelude(dtype, shape, false, pre, err)) {
    err = path + ": " + err;
    return false;
  }
  NpyArray probe;
  probe.dtype = dtype;
  probe.shape = shape;
  const int64_t e = probe.elements();
  if (e < 0 || uint64_t(e) > SIZE_MAX / probe.itemsize() || bytes != size_t(e) * probe.itemsize()) {
    err = path + ": data size " + std::to_string(bytes) + " does not match shape and dtype";
    return false;
  }
  return write_temp(path, {{pre.data(), pre.size()}, {data, bytes}}, tmp, err);
}

bool write_npy(const std::string &path, const NpyArray &arr, std::string &err) {
  auto fail = [&](const std::string &why) {
    err = std::filesystem::path(path).filename().string() + ": " + why;
    return false;
  };
  if (arr.itemsize() == 0)
    return fail("unsupported dtype '" + arr.dtype + "' (expected f4, f8, c8, c16 or i4)");
  const int64_t e = arr.elements();
  if (e < 0) return fail("bad shape (negative or overflowing)");
  if (static_cast<uint64_t>(e) > SIZE_MAX / arr.itemsize() ||
      arr.data.size() != static_cast<size_t>(e) * arr.itemsize())
    return fail("data size " + std::to_string(arr.data.size()) + " does not match shape and dtype");
  std::string pre;
  if (!npy_prelude(arr.dtype, arr.shape, arr.fortran_order, pre, err)) return fail(err);
  return write_file_atomic(path, {{pre.data(), pre.size()}, {arr.data.data(), arr.data.size()}},
                           err);
}

} // namespace bsvd::testing
