// .npy and Matrix Market readers (the writers: io_write.cpp). Every reader
// validates its input completely before it allocates in proportion to any
// number the file claims, and reports the first problem as one line
// "<file>: <reason>".
#include "testing/io.hpp"

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

#ifndef BSVD_SOURCE_DIR
#define BSVD_SOURCE_DIR "."
#endif

namespace bsvd::testing {

namespace {

constexpr uint64_t kMaxNpyHeader = 1u << 20; // bytes

std::string base_name(const std::string &path) {
  return std::filesystem::path(path).filename().string();
}

bool fail(std::string &err, const std::string &path, const std::string &why) {
  err = base_name(path) + ": " + why;
  return false;
}

// Size of a regular file, or -1.
int64_t file_size(const std::string &path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return -1;
  const auto s = std::filesystem::file_size(path, ec);
  if (ec) return -1;
  return static_cast<int64_t>(s);
}

size_t dtype_size(const std::string &d) {
  if (d == "f4" || d == "i4") return 4; // i4: the info / sweeps outputs
  if (d == "f8" || d == "c8") return 8;
  if (d == "c16") return 16;
  return 0;
}

// ---- the .npy header: a Python dict literal --------------------------------

struct HeaderParser {
  const std::string &s;
  size_t p = 0;
  std::string why;

  void ws() {
    while (p < s.size() && (s[p] == ' ' || s[p] == '\t' || s[p] == '\n' || s[p] == '\r')) ++p;
  }
  bool expect(char c) {
    ws();
    if (p < s.size() && s[p] == c) {
      ++p;
      return true;
    }
    why = std::string("malformed header: expected '") + c + "' at offset " + std::to_string(p);
    return false;
  }
  bool string_lit(std::string &out) {
    ws();
    if (p >= s.size() || (s[p] != '\'' && s[p] != '"')) {
      why = "malformed header: expected a quoted string at offset " + std::to_string(p);
      return false;
    }
    const char q = s[p++];
    const size_t start = p;
    while (p < s.size() && s[p] != q) {
      if (s[p] == '\\' || static_cast<unsigned char>(s[p]) < 0x20) {
        why = "malformed header: unsupported character in a string";
        return false;
      }
      ++p;
    }
    if (p >= s.size()) {
      why = "malformed header: unterminated string";
      return false;
    }
    out = s.substr(start, p - start);
    ++p;
    return true;
  }
  bool word(const char *w) {
    const size_t n = std::strlen(w);
    if (s.compare(p, n, w) == 0) {
      p += n;
      return true;
    }
    return false;
  }
  bool boolean(bool &out) {
    ws();
    if (word("True"))
      out = true;
    else if (word("False"))
      out = false;
    else {
      why = "malformed header: fortran_order must be True or False";
      return false;
    }
    return true;
  }
  bool shape(std::vector<int64_t> &out) {
    out.clear();
    if (!expect('(')) {
      why = "malformed header: shape must be a tuple";
      return false;
    }
    for (;;) {
      ws();
      if (p < s.size() && s[p] == ')') {
        ++p;
        break;
      }
      if (p >= s.size() || !std::isdigit(static_cast<unsigned char>(s[p]))) {
        why = "malformed header: shape entries must be non-negative integers";
        return false;
      }
      int64_t v = 0;
      while (p < s.size() && std::isdigit(static_cast<unsigned char>(s[p]))) {
        if (v > (INT64_MAX - 9) / 10) {
          why = "shape entry too large";
          return false;
        }
        v = v * 10 + (s[p++] - '0');
      }
      out.push_back(v);
      if (out.size() > 32) {
        why = "too many dimensions (more than 32)";
        return false;
      }
      ws();
      if (p < s.size() && s[p] == ',') {
        ++p;
        continue;
      }
      ws();
      if (p < s.size() && s[p] == ')') {
        ++p;
        if (out.size() == 1) {
          // "(5)" is an int in Python, not a tuple; numpy writes "(5,)".
          why = "malformed header: a 1-d shape must be written (n,)";
          return false;
        }
        break;
      }
      why = "malformed header: bad shape tuple";
      return false;
    }
    return true;
  }
};

bool parse_npy_header(const std::string &h, NpyArray &out, std::string &why) {
  HeaderParser P{h, 0, {}};
  bool have_descr = false, have_order = false, have_shape = false;
  std::string descr;
  if (!P.expect('{')) {
    why = "malformed header: not a dict";
    return false;
  }
  for (;;) {
    P.ws();
    if (P.p < h.size() && h[P.p] == '}') {
      ++P.p;
      break;
    }
    std::string key;
    if (!P.string_lit(key) || !P.expect(':')) {
      why = P.why;
      return false;
    }
    if (key == "descr") {
      if (have_descr) {
        why = "malformed header: duplicate key 'descr'";
        return false;
      }
      have_descr = true;
      P.ws();
      if (P.p < h.size() && (h[P.p] == '[' || h[P.p] == '{')) {
        why = "structured dtypes are not supported (expected <f4, <f8, <c8, <c16 or <i4)";
        return false;
      }
      if (!P.string_lit(descr)) {
        why = P.why;
        return false;
      }
    } else if (key == "fortran_order") {
      if (have_order) {
        why = "malformed header: duplicate key 'fortran_order'";
        return false;
      }
      have_order = true;
      if (!P.boolean(out.fortran_order)) {
        why = P.why;
        return false;
      }
    } else if (key == "shape") {
      if (have_shape) {
        why = "malformed header: duplicate key 'shape'";
        return false;
      }
      have_shape = true;
      if (!P.shape(out.shape)) {
        why = P.why;
        return false;
      }
    } else {
      why = "malformed header: unexpected key '" + key.substr(0, 40) + "'";
      return false;
    }
    P.ws();
    if (P.p < h.size() && h[P.p] == ',') {
      ++P.p;
      continue;
    }
    if (!P.expect('}')) {
      why = P.why;
      return false;
    }
    break;
  }
  P.ws();
  if (P.p != h.size()) {
    why = "malformed header: trailing characters after the dict";
    return false;
  }
  if (!have_descr || !have_order || !have_shape) {
    why = std::string("malformed header: missing key '") +
          (!have_descr   ? "descr"
           : !have_order ? "fortran_order"
                         : "shape") +
          "'";
    return false;
  }
  // dtype
  if (descr.size() >= 2 && descr[0] == '>') {
    why = "big-endian dtype '" + descr + "' is not supported";
    return false;
  }
  if (descr.size() >= 2 && descr[1] == 'O') {
    why = "object arrays are not supported";
    return false;
  }
  const std::string bare = descr.size() >= 2 ? descr.substr(1) : std::string();
  if (descr.empty() || descr[0] != '<' || dtype_size(bare) == 0) {
    why = "unsupported dtype '" + descr.substr(0, 20) + "' (expected <f4, <f8, <c8, <c16 or <i4)";
    return false;
  }
  out.dtype = bare;
  return true;
}

// Little-endian unsigned integer of `n` bytes.
uint64_t le(const unsigned char *b, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | b[i];
  return v;
}

// ---- Matrix Market -----------------------------------------------------------

std::string lower(std::string s) {
  for (char &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

void split(const std::string &line, std::vector<std::string> &tok) {
  tok.clear();
  size_t p = 0;
  while (p < line.size()) {
    while (p < line.size() && std::isspace(static_cast<unsigned char>(line[p]))) ++p;
    if (p >= line.size()) break;
    const size_t q = p;
    while (p < line.size() && !std::isspace(static_cast<unsigned char>(line[p]))) ++p;
    tok.push_back(line.substr(q, p - q));
  }
}

bool parse_int(const std::string &t, int64_t &v) {
  if (t.empty() || t.size() > 20) return false;
  for (size_t i = (t[0] == '+' || t[0] == '-') ? 1 : 0; i < t.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(t[i]))) return false;
  errno = 0;
  char *end = nullptr;
  const long long x = std::strtoll(t.c_str(), &end, 10);
  if (errno == ERANGE || end != t.c_str() + t.size()) return false;
  v = x;
  return true;
}

// A decimal number (strtod syntax). "nan" and "inf" are taken (numpy and
// scipy write them); a finite-looking value that overflows ("1e999") is
// refused with "out of range". Returns false with the reason in why.
bool parse_real(const std::string &t, double &v, const char *&why) {
  why = "is not a number";
  if (t.empty()) return false;
  errno = 0;
  char *end = nullptr;
  const double x = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size()) return false;
  if (errno == ERANGE && std::isinf(x)) {
    why = "is out of range (overflows a double)";
    return false;
  }
  v = x;
  return true;
}

bool is_blank_or_comment(const std::string &line) {
  for (char c : line) {
    if (c == '%') return true;
    if (!std::isspace(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

} // namespace

size_t NpyArray::itemsize() const { return dtype_size(dtype); }

int64_t NpyArray::elements() const {
  // A zero extent makes the array empty whatever the others are, as the
  // reader takes it: (2**40, 2**40, 0) holds no element, not an overflow.
  for (int64_t d : shape)
    if (d < 0) return -1;
  for (int64_t d : shape)
    if (d == 0) return 0;
  int64_t e = 1;
  for (int64_t d : shape) {
    if (e > INT64_MAX / d) return -1;
    e *= d;
  }
  return e;
}

bool read_npy(const std::string &path, NpyArray &out, std::string &err) {
  out = NpyArray{};
  const int64_t size = file_size(path);
  if (size < 0) return fail(err, path, "cannot open (missing or not a regular file)");
  std::ifstream f(path, std::ios::binary);
  if (!f) return fail(err, path, std::string("cannot open for reading: ") + std::strerror(errno));
  return read_npy(f, uint64_t(size), base_name(path), out, err);
}

namespace {

// The prelude and header of a .npy stream of `size` bytes, validated against
// the size: out gets dtype, shape and order (no data); offset is where the
// data starts, and the data fills the rest of the stream exactly.
bool read_npy_prelude(std::istream &f, uint64_t size, const std::string &path, NpyArray &out,
                      uint64_t &offset, std::string &err) {
  out = NpyArray{};
  unsigned char pre[12];
  if (size < 10 || !f.read(reinterpret_cast<char *>(pre), 10))
    return fail(err, path, "not a .npy file (too short)");
  if (std::memcmp(pre, "\x93NUMPY", 6) != 0)
    return fail(err, path, "not a .npy file (bad magic string)");
  const int major = pre[6], minor = pre[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    return fail(err, path,
                "unsupported .npy format version " + std::to_string(major) + "." +
                    std::to_string(minor) + " (expected 1.0, 2.0 or 3.0)");
  int prelude = 10;
  uint64_t hlen = le(pre + 8, 2);
  if (major >= 2) {
    if (size < 12 || !f.read(reinterpret_cast<char *>(pre + 10), 2))
      return fail(err, path, "truncated .npy header");
    prelude = 12;
    hlen = le(pre + 8, 4);
  }
  if (hlen > kMaxNpyHeader)
    return fail(err, path, "header length " + std::to_string(hlen) + " is implausible");
  if (size - prelude < hlen) return fail(err, path, "truncated .npy header");
  std::string header(hlen, '\0');
  if (hlen && !f.read(&header[0], static_cast<std::streamsize>(hlen)))
    return fail(err, path, "cannot read the .npy header");
  for (unsigned char c : header)
    if (c == 0 || c >= 0x80) return fail(err, path, "malformed header: non-ASCII bytes");
  std::string why;
  if (!parse_npy_header(header, out, why)) {
    out = NpyArray{};
    return fail(err, path, why);
  }
  const uint64_t avail = size - prelude - hlen;
  // elements * itemsize, without overflow; anything beyond the file is
  // "truncated" whatever the exact number.
  uint64_t need = out.itemsize();
  bool beyond = false;
  for (int64_t d : out.shape) {
    if (d == 0) {
      need = 0;
      beyond = false;
      break;
    }
    if (beyond || need > avail / static_cast<uint64_t>(d))
      beyond = true;
    else
      need *= static_cast<uint64_t>(d);
  }
  if (beyond || need > avail) {
    std::ostringstream os;
    os << "truncated data: the header's shape needs ";
    if (beyond)
      os << "more than " << avail;
    else
      os << need;
    os << " bytes, the file holds " << avail;
    out = NpyArray{};
    return fail(err, path, os.str());
  }
  if (need < avail) {
    const uint64_t extra = avail - need;
    out = NpyArray{};
    return fail(err, path,
                std::to_string(extra) +
                    " unexpected bytes after the array data (shape and size disagree)");
  }
  offset = prelude + hlen;
  return true;
}

} // namespace

bool read_npy(std::istream &f, uint64_t size, const std::string &path, NpyArray &out,
              std::string &err) {
  uint64_t offset = 0;
  if (!read_npy_prelude(f, size, path, out, offset, err)) return false;
  const uint64_t need = size - offset;
  out.data.resize(need);
  if (need &&
      !f.read(reinterpret_cast<char *>(out.data.data()), static_cast<std::streamsize>(need))) {
    out = NpyArray{};
    return fail(err, path, "read error in the array data");
  }
  return true;
}

bool read_npy_header(const std::string &path, NpyArray &out, uint64_t &offset, std::string &err) {
  out = NpyArray{};
  const int64_t size = file_size(path);
  if (size < 0) return fail(err, path, "cannot open (missing or not a regular file)");
  std::ifstream f(path, std::ios::binary);
  if (!f) return fail(err, path, std::string("cannot open for reading: ") + std::strerror(errno));
  return read_npy_prelude(f, uint64_t(size), base_name(path), out, offset, err);
}

bool read_at(const std::string &path, uint64_t offset, void *data, size_t bytes, std::string &err) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail(err, path, std::string("cannot open for reading: ") + std::strerror(errno));
  char *p = static_cast<char *>(data);
  while (bytes > 0) {
    const ssize_t r = ::pread(fd, p, std::min<size_t>(bytes, size_t(1) << 30), off_t(offset));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      const int e = r < 0 ? errno : EIO;
      ::close(fd);
      return fail(err, path, std::string("read error in the array data: ") + std::strerror(e));
    }
    p += r;
    offset += uint64_t(r);
    bytes -= size_t(r);
  }
  ::close(fd);
  return true;
}

// ---- Matrix Market -------------------------------------------------------------

bool DenseMatrix::finite() const {
  for (double x : a)
    if (!std::isfinite(x)) return false;
  for (double x : im)
    if (!std::isfinite(x)) return false;
  return true;
}

bool read_matrix_market(const std::string &path, DenseMatrix &out, std::string &err) {
  out = DenseMatrix{};
  const int64_t size = file_size(path);
  if (size < 0) return fail(err, path, "cannot open (missing or not a regular file)");
  std::ifstream f(path);
  if (!f) return fail(err, path, std::string("cannot open for reading: ") + std::strerror(errno));
  return read_matrix_market(f, uint64_t(size), base_name(path), out, err);
}

bool read_matrix_market(std::istream &f, uint64_t size, const std::string &path, DenseMatrix &out,
                        std::string &err, int64_t max_elements) {
  out = DenseMatrix{};
  std::string line;
  int64_t lineno = 0;
  auto bad = [&](const std::string &why) {
    out = DenseMatrix{};
    return fail(err, path, "line " + std::to_string(lineno) + ": " + why);
  };

  // Banner.
  if (!std::getline(f, line)) return fail(err, path, "empty file (no %%MatrixMarket banner)");
  ++lineno;
  std::vector<std::string> tok;
  split(line, tok);
  if (tok.empty() || lower(tok[0]) != "%%matrixmarket") return bad("missing %%MatrixMarket banner");
  if (tok.size() != 5)
    return bad("banner must be: %%MatrixMarket matrix <format> <field> <symmetry>");
  const std::string object = lower(tok[1]), format = lower(tok[2]), field = lower(tok[3]),
                    symmetry = lower(tok[4]);
  if (object != "matrix") return bad("unsupported object '" + tok[1] + "' (only 'matrix')");
  if (format != "coordinate" && format != "array")
    return bad("unknown format '" + tok[2] + "' (coordinate or array)");
  if (field != "real" && field != "integer" && field != "pattern" && field != "double" &&
      field != "complex")
    return bad("unknown field '" + tok[3] + "' (real, integer, complex or pattern)");
  if (symmetry != "general" && symmetry != "symmetric" && symmetry != "skew-symmetric" &&
      symmetry != "hermitian")
    return bad("unknown symmetry '" + tok[4] +
               "' (general, symmetric, skew-symmetric or hermitian)");
  const bool coordinate = format == "coordinate";
  const bool pattern = field == "pattern";
  const bool cplx = field == "complex";
  const bool sym = symmetry == "symmetric", skew = symmetry == "skew-symmetric",
             herm = symmetry == "hermitian";
  if (pattern && !coordinate) return bad("pattern field needs the coordinate format");
  if (pattern && skew) return bad("a pattern matrix cannot be skew-symmetric");
  if (herm && !cplx)
    return bad("hermitian symmetry is unsupported for the " + field +
               " field (complex only; a real one is symmetric)");

  // Size line (after comments / blank lines).
  bool have_size = false;
  while (std::getline(f, line)) {
    ++lineno;
    if (is_blank_or_comment(line)) continue;
    have_size = true;
    break;
  }
  if (!have_size) return bad("missing size line");
  split(line, tok);
  const size_t want = coordinate ? 3 : 2;
  if (tok.size() != want)
    return bad(std::string("size line must be '") + (coordinate ? "m n nnz" : "m n") + "'");
  int64_t m = 0, n = 0, nnz = 0;
  if (!parse_int(tok[0], m) || !parse_int(tok[1], n) || (coordinate && !parse_int(tok[2], nnz)))
    return bad("size line: not an integer");
  if (m < 0 || n < 0 || nnz < 0) return bad("size line: negative size");
  if (m > INT_MAX || n > INT_MAX || (n > 0 && m > max_elements / n))
    return bad("matrix too large (" + tok[0] + " x " + tok[1] + " exceeds " +
               std::to_string(max_elements) + " elements)");
  if ((sym || skew || herm) && m != n)
    return bad("a symmetric, skew-symmetric or hermitian matrix must be square");
  const int64_t elements = m * n;
  int64_t count; // entries the file must hold
  if (coordinate) {
    if (nnz > elements) return bad("nnz " + tok[2] + " exceeds m * n");
    count = nnz;
  } else {
    count = (sym || herm) ? n * (n + 1) / 2 : skew ? n * (n - 1) / 2 : elements;
  }
  // Every entry needs at least "v\n" (array), "i j\n" (pattern) or "i j v\n"
  // (a complex value one more field): a file too short for its claim is
  // rejected before allocating.
  const int64_t min_bytes = (coordinate ? (pattern ? 4 : 6) : 2) + (cplx ? 2 : 0);
  if (count > 0 && uint64_t(count) > size / uint64_t(min_bytes))
    return bad("file too short for " + std::to_string(count) + " entries");

  out.name = std::filesystem::path(path).stem().string();
  out.m = static_cast<int>(m);
  out.n = static_cast<int>(n);
  out.is_complex = cplx;
  out.a.assign(static_cast<size_t>(elements), 0.0);
  if (cplx) out.im.assign(static_cast<size_t>(elements), 0.0);
  auto add = [&](int64_t i, int64_t j, double re, double im) {
    const size_t k = static_cast<size_t>(i + j * m);
    out.a[k] += re;
    if (cplx) out.im[k] += im;
  };

  int64_t seen = 0;
  int64_t ai = skew ? 1 : 0, aj = 0; // array format: next position
  const size_t nvalues = pattern ? 0 : cplx ? 2 : 1;
  while (std::getline(f, line)) {
    ++lineno;
    if (is_blank_or_comment(line)) continue;
    if (seen == count) return bad("more entries than the " + std::to_string(count) + " declared");
    split(line, tok);
    double v[2] = {1.0, 0.0};
    int64_t i, j;
    const size_t nf = (coordinate ? 2 : 0) + nvalues;
    if (tok.size() != nf)
      return bad("expected " + std::to_string(nf) + (nf == 1 ? " field" : " fields") + ", found " +
                 std::to_string(tok.size()));
    if (coordinate) {
      if (!parse_int(tok[0], i) || !parse_int(tok[1], j)) return bad("index is not an integer");
      if (i < 1 || i > m || j < 1 || j > n)
        return bad("index (" + tok[0] + ", " + tok[1] + ") out of range");
      --i;
      --j;
    } else {
      i = ai;
      j = aj;
      // next position: column-major over the stored triangle
      ++ai;
      if (ai >= m) {
        ++aj;
        ai = (sym || herm) ? aj : skew ? aj + 1 : 0;
      }
    }
    for (size_t k = 0; k < nvalues; ++k) {
      const std::string &t = tok[(coordinate ? 2 : 0) + k];
      const char *why = nullptr;
      if (!parse_real(t, v[k], why)) return bad("value '" + t.substr(0, 40) + "' " + why);
    }
    if (skew && i == j) {
      if (v[0] != 0 || v[1] != 0) return bad("nonzero diagonal entry in a skew-symmetric matrix");
      ++seen;
      continue;
    }
    if (herm && i == j && v[1] != 0)
      return bad("diagonal entry of a hermitian matrix with a nonzero imaginary part");
    // Duplicates in coordinate files add up (the SuiteSparse convention).
    add(i, j, v[0], v[1]);
    if (i != j) {
      if (sym) add(j, i, v[0], v[1]);
      if (skew) add(j, i, -v[0], -v[1]);
      if (herm) add(j, i, v[0], -v[1]);
    }
    ++seen;
  }
  if (f.bad()) return bad("read error");
  if (seen != count)
    return bad("expected " + std::to_string(count) + " entries, found " + std::to_string(seen));
  return true;
}

std::string default_matrix_dir() { return BSVD_SOURCE_DIR "/data/matrices"; }

std::vector<std::string> list_matrix_market(const std::string &dir) {
  std::vector<std::string> files;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec), end;
  if (ec) return files;
  for (; it != end; it.increment(ec)) {
    if (ec) break;
    std::error_code ec2;
    if (!it->is_regular_file(ec2)) continue;
    if (it->path().extension() == ".mtx") files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

} // namespace bsvd::testing
