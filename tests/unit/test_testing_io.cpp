// .npy and Matrix Market readers: round trips, every class of malformed
// input rejected with a one-line message.
#include "testing/io.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace bt = bsvd::testing;
namespace fs = std::filesystem;

namespace {

class TempDir {
public:
  TempDir() {
    dir_ = fs::temp_directory_path() /
           ("bsvd_testing_io_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string &name) const { return (dir_ / name).string(); }
  std::string write(const std::string &name, const std::string &bytes) const {
    const std::string p = path(name);
    std::ofstream f(p, std::ios::binary);
    f.write(bytes.data(), bytes.size());
    return p;
  }

private:
  fs::path dir_;
};

// A .npy file from a header dict and raw data (v1.0 unless told).
std::string npy_bytes(const std::string &dict, const std::string &data, int major = 1,
                      bool pad = true) {
  std::string h = dict;
  const int pre = major == 1 ? 10 : 12;
  if (pad)
    while ((pre + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::string s = "\x93NUMPY";
  s += char(major);
  s += '\0';
  const size_t len = h.size();
  s += char(len & 0xff);
  s += char((len >> 8) & 0xff);
  if (major >= 2) {
    s += char((len >> 16) & 0xff);
    s += char((len >> 24) & 0xff);
  }
  return s + h + data;
}

void expect_one_line(const std::string &err) {
  EXPECT_FALSE(err.empty());
  EXPECT_EQ(err.find('\n'), std::string::npos) << err;
}

} // namespace

TEST(TestingNpy, RoundTripAllDtypesBothOrders) {
  TempDir t;
  const struct {
    const char *dtype;
    size_t size;
  } types[] = {{"f4", 4}, {"f8", 8}, {"c8", 8}, {"c16", 16}};
  for (auto ty : types)
    for (bool fortran : {false, true})
      for (std::vector<int64_t> shape : {std::vector<int64_t>{3, 5}, {7}, {2, 3, 4}, {}, {0, 4}}) {
        bt::NpyArray a;
        a.dtype = ty.dtype;
        a.shape = shape;
        a.fortran_order = fortran;
        EXPECT_EQ(a.itemsize(), ty.size);
        a.data.resize(size_t(a.elements()) * a.itemsize());
        for (size_t i = 0; i < a.data.size(); ++i) a.data[i] = (unsigned char)(i * 37 + 11);
        const std::string p = t.path(std::string("a_") + ty.dtype + ".npy");
        std::string err;
        ASSERT_TRUE(bt::write_npy(p, a, err)) << err;
        // header (prelude + dict) aligned to 64 bytes as numpy does
        const auto fsize = fs::file_size(p);
        EXPECT_EQ((fsize - a.data.size()) % 64, 0u);
        bt::NpyArray b;
        ASSERT_TRUE(bt::read_npy(p, b, err)) << err;
        EXPECT_EQ(b.dtype, a.dtype);
        EXPECT_EQ(b.shape, a.shape);
        EXPECT_EQ(b.fortran_order, a.fortran_order);
        EXPECT_EQ(b.data, a.data);
      }
}

TEST(TestingNpy, ReadsNumpyStyleHeaders) {
  TempDir t;
  double v[6] = {1, 2, 3, 4, 5, 6};
  const std::string data(reinterpret_cast<const char *>(v), sizeof v);
  std::string err;
  bt::NpyArray a;
  // numpy's own spelling (v1.0), a v2.0 header, 16-byte alignment of old
  // numpy, double quotes and another key order.
  for (auto bytes :
       {npy_bytes("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", data),
        npy_bytes("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", data, 2),
        npy_bytes("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3)}", data, 1, false),
        npy_bytes("{\"shape\":(2,3),\"fortran_order\":True,\"descr\":\"<f8\"}", data)}) {
    ASSERT_TRUE(bt::read_npy(t.write("x.npy", bytes), a, err)) << err;
    EXPECT_EQ(a.dtype, "f8");
    EXPECT_TRUE(a.fortran_order);
    EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
    ASSERT_EQ(a.data.size(), sizeof v);
    EXPECT_EQ(0, std::memcmp(a.data.data(), v, sizeof v));
  }
}

// An empty array whose other extents multiply past int64 (found by the
// fuzzer): the reader accepts it with no data, and elements() agrees.
TEST(TestingNpy, ZeroExtentAfterHugeOnesIsEmpty) {
  const std::string bytes =
      npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (6, 4294294967296, 42, "
                "4294294967296, 0), }",
                "");
  std::istringstream in(bytes);
  bt::NpyArray a;
  std::string err;
  ASSERT_TRUE(bt::read_npy(in, bytes.size(), "x.npy", a, err)) << err;
  EXPECT_EQ(a.elements(), 0);
  EXPECT_TRUE(a.data.empty());
  a.shape = {int64_t(1) << 40, int64_t(1) << 40};
  EXPECT_EQ(a.elements(), -1); // no zero extent: an overflow stays one
}

TEST(TestingNpy, RejectsMalformed) {
  TempDir t;
  const std::string d48(48, '\1');
  const std::string ok = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }";
  struct Case {
    const char *what;
    std::string bytes;
    const char *needle;
  };
  std::vector<Case> cases = {
      {"empty file", "", "too short"},
      {"bad magic", "\x93NUMPX" + npy_bytes(ok, d48).substr(6), "magic"},
      {"version 4.0",
       [&] {
         auto s = npy_bytes(ok, d48);
         s[6] = 4;
         return s;
       }(),
       "version"},
      {"truncated header", npy_bytes(ok, d48).substr(0, 40), "truncated"},
      {"huge header length",
       [&] {
         auto s = npy_bytes(ok, d48, 2);
         s[11] = 0x7f;
         return s;
       }(),
       "header length"},
      {"garbage header", npy_bytes("hello world", d48), "malformed header"},
      {"not closed", npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3)", d48),
       "malformed header"},
      {"missing shape", npy_bytes("{'descr': '<f8', 'fortran_order': False, }", d48),
       "missing key 'shape'"},
      {"unknown key",
       npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), 'x': 1}", d48),
       "unexpected key"},
      {"duplicate key",
       npy_bytes("{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (2, 3)}", d48),
       "duplicate"},
      {"bad bool", npy_bytes("{'descr': '<f8', 'fortran_order': 0, 'shape': (2, 3), }", d48),
       "True or False"},
      {"negative dim",
       npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (-2, 3), }", d48), "shape"},
      {"float dim", npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2.5, 3), }", d48),
       "shape"},
      {"shape not tuple", npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': 6, }", d48),
       "tuple"},
      {"big-endian", npy_bytes("{'descr': '>f8', 'fortran_order': False, 'shape': (2, 3), }", d48),
       "big-endian"},
      {"object", npy_bytes("{'descr': '|O', 'fortran_order': False, 'shape': (2, 3), }", d48),
       "object"},
      {"int dtype", npy_bytes("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }", d48),
       "unsupported dtype"},
      {"structured",
       npy_bytes("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2, 3), }", d48),
       "structured"},
      {"truncated data", npy_bytes(ok, d48.substr(0, 47)), "truncated data"},
      {"too much data", npy_bytes(ok, d48 + "x"), "unexpected bytes"},
      {"wrong shape for data",
       npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 3), }", d48),
       "truncated data"},
      {"absurd shape",
       npy_bytes("{'descr': '<c16', 'fortran_order': False, 'shape': (4000000000, 4000000000, "
                 "4000000000), }",
                 d48),
       "truncated data"},
      {"overflowing dim",
       npy_bytes(
           "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999999, 1), }",
           d48),
       "too large"},
      {"NUL in header",
       npy_bytes(
           [] {
             const char h[] = "{'descr': '<f8'\0, 'fortran_order': False, 'shape': (2, 3), }";
             return std::string(h, sizeof h - 1);
           }(),
           d48),
       "malformed header"},
  };
  for (const auto &c : cases) {
    bt::NpyArray a;
    std::string err;
    EXPECT_FALSE(bt::read_npy(t.write("bad.npy", c.bytes), a, err)) << c.what;
    expect_one_line(err);
    EXPECT_NE(err.find(c.needle), std::string::npos) << c.what << ": " << err;
    EXPECT_NE(err.find("bad.npy"), std::string::npos) << err;
    EXPECT_TRUE(a.data.empty()) << c.what;
  }
  bt::NpyArray a;
  std::string err;
  EXPECT_FALSE(bt::read_npy(t.path("does_not_exist.npy"), a, err));
  expect_one_line(err);
  EXPECT_FALSE(bt::read_npy(t.path(""), a, err)); // a directory
  expect_one_line(err);
}

TEST(TestingNpy, WriteRejectsInconsistentArrays) {
  TempDir t;
  bt::NpyArray a;
  std::string err;
  a.dtype = "f8";
  a.shape = {2, 2};
  a.data.resize(24);
  EXPECT_FALSE(bt::write_npy(t.path("w.npy"), a, err));
  expect_one_line(err);
  a.data.resize(32);
  a.dtype = "i4";
  EXPECT_FALSE(bt::write_npy(t.path("w.npy"), a, err));
  a.dtype = "f8";
  a.shape = {-1, 2};
  EXPECT_FALSE(bt::write_npy(t.path("w.npy"), a, err));
  a.shape = {2, 2};
  EXPECT_FALSE(bt::write_npy(t.path("no_such_dir/w.npy"), a, err));
  expect_one_line(err);
  EXPECT_TRUE(bt::write_npy(t.path("w.npy"), a, err)) << err;
}

TEST(TestingMatrixMarket, ParsesAllVariants) {
  TempDir t;
  bt::DenseMatrix d;
  std::string err;
  auto read = [&](const std::string &text) {
    const bool ok = bt::read_matrix_market(t.write("m.mtx", text), d, err);
    EXPECT_TRUE(ok) << err;
    return ok;
  };
  auto A = [&](int i, int j) { return d.a[i + size_t(j) * d.m]; };

  ASSERT_TRUE(read("%%MatrixMarket matrix coordinate real general\n% comment\n%\n\n"
                   "3 2 3\n1 1 1.5\n3 2 -2e-3\n2 1 4\n"));
  EXPECT_EQ(d.name, "m");
  EXPECT_EQ(d.m, 3);
  EXPECT_EQ(d.n, 2);
  EXPECT_EQ(A(0, 0), 1.5);
  EXPECT_EQ(A(2, 1), -2e-3);
  EXPECT_EQ(A(1, 0), 4);
  EXPECT_EQ(A(0, 1), 0);

  ASSERT_TRUE(
      read("%%MatrixMarket matrix coordinate integer symmetric\n3 3 3\n1 1 2\n3 1 5\n3 2 -1\n"));
  EXPECT_EQ(A(2, 0), 5);
  EXPECT_EQ(A(0, 2), 5);
  EXPECT_EQ(A(1, 2), -1);
  EXPECT_EQ(A(0, 0), 2);

  ASSERT_TRUE(
      read("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 3\n3 2 0.5\n"));
  EXPECT_EQ(A(1, 0), 3);
  EXPECT_EQ(A(0, 1), -3);
  EXPECT_EQ(A(2, 1), 0.5);
  EXPECT_EQ(A(1, 2), -0.5);

  ASSERT_TRUE(read("%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n"));
  EXPECT_EQ(d.a, (std::vector<double>{1, 1, 1, 0}));

  ASSERT_TRUE(read("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n1 1 2\n"));
  EXPECT_EQ(A(0, 0), 3); // duplicates add up

  ASSERT_TRUE(read("%%MatrixMarket matrix array real general\n2 3\n1\n2\n3\n4\n5\n6\n"));
  EXPECT_EQ(d.a, (std::vector<double>{1, 2, 3, 4, 5, 6}));

  ASSERT_TRUE(read("%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n"));
  EXPECT_EQ(d.a, (std::vector<double>{1, 2, 2, 3}));

  ASSERT_TRUE(read("%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n"));
  EXPECT_EQ(d.a, (std::vector<double>{0, 1, 2, -1, 0, 3, -2, -3, 0}));

  ASSERT_TRUE(read("%%MatrixMarket MATRIX Coordinate Real General\r\n1 1 1\r\n1 1 7\r\n"));
  EXPECT_EQ(d.a, (std::vector<double>{7}));

  ASSERT_TRUE(read("%%MatrixMarket matrix coordinate real general\n4 5 0\n"));
  EXPECT_EQ(d.a, std::vector<double>(20, 0.0));
}

// Complex files (read for the c and z precisions) and non-finite values,
// which are read so the solver can isolate such a matrix (info code) as it
// does for a .npy batch.
TEST(TestingMatrixMarket, ParsesComplexAndNonFinite) {
  TempDir t;
  bt::DenseMatrix d;
  std::string err;
  ASSERT_TRUE(bt::read_matrix_market(
      t.write("c.mtx", "%%MatrixMarket matrix coordinate complex general\n3 2 3\n"
                       "1 1 1.5 -2\n3 2 0 4\n1 1 0.5 1\n"),
      d, err))
      << err;
  EXPECT_TRUE(d.is_complex);
  EXPECT_EQ(d.a, (std::vector<double>{2, 0, 0, 0, 0, 0}));
  EXPECT_EQ(d.im, (std::vector<double>{-1, 0, 0, 0, 0, 4}));
  const auto z = bt::dense_as<std::complex<double>>(d);
  EXPECT_EQ(z[0], std::complex<double>(2, -1));
  EXPECT_EQ(z[5], std::complex<double>(0, 4));

  ASSERT_TRUE(bt::read_matrix_market(
      t.write("h.mtx", "%%MatrixMarket matrix array complex hermitian\n2 2\n1 0\n2 3\n4 0\n"), d,
      err))
      << err;
  EXPECT_EQ(d.a, (std::vector<double>{1, 2, 2, 4}));
  EXPECT_EQ(d.im, (std::vector<double>{0, 3, -3, 0}));

  ASSERT_TRUE(bt::read_matrix_market(
      t.write("s.mtx", "%%MatrixMarket matrix coordinate complex skew-symmetric\n2 2 1\n"
                       "2 1 1 1\n"),
      d, err))
      << err;
  EXPECT_EQ(d.a, (std::vector<double>{0, 1, -1, 0}));
  EXPECT_EQ(d.im, (std::vector<double>{0, 1, -1, 0}));

  ASSERT_TRUE(bt::read_matrix_market(
      t.write("n.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 nan\n2 2 -inf\n"),
      d, err))
      << err;
  EXPECT_TRUE(std::isnan(d.a[0]));
  EXPECT_EQ(d.a[3], -INFINITY);
  EXPECT_FALSE(d.finite());
  EXPECT_FALSE(d.is_complex);
  EXPECT_TRUE(d.im.empty());
}

// The stream entry points (the fuzzers') agree with the file readers.
TEST(TestingIo, StreamReadersMatchFileReaders) {
  TempDir t;
  const std::string text = "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n";
  bt::DenseMatrix a, b;
  std::string err;
  ASSERT_TRUE(bt::read_matrix_market(t.write("x.mtx", text), a, err)) << err;
  std::istringstream in(text);
  ASSERT_TRUE(bt::read_matrix_market(in, text.size(), "x.mtx", b, err)) << err;
  EXPECT_EQ(a.a, b.a);
  EXPECT_EQ(a.name, b.name);
  std::istringstream bad("%%MatrixMarket matrix array real general\n2 2\n1\n");
  EXPECT_FALSE(bt::read_matrix_market(bad, 40, "y.mtx", b, err));
  EXPECT_EQ(err.rfind("y.mtx: ", 0), 0u) << err;

  const std::string npy =
      npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", std::string(16, '\0'));
  bt::NpyArray x, y;
  ASSERT_TRUE(bt::read_npy(t.write("x.npy", npy), x, err)) << err;
  std::istringstream nin(npy);
  ASSERT_TRUE(bt::read_npy(nin, npy.size(), "x.npy", y, err)) << err;
  EXPECT_EQ(x.shape, y.shape);
  EXPECT_EQ(x.data, y.data);
  std::istringstream nbad(npy.substr(0, 20));
  EXPECT_FALSE(bt::read_npy(nbad, 20, "y.npy", y, err));
  EXPECT_EQ(err.rfind("y.npy: ", 0), 0u) << err;
}

// Writes go to a temporary file and are renamed into place: a failed write
// names the file and the system's reason and leaves nothing behind.
TEST(TestingIo, AtomicWriteFailureLeavesNothing) {
  TempDir t;
  bt::NpyArray a;
  a.dtype = "f8";
  a.shape = {2};
  a.data.assign(16, 0);
  std::string err;
  ASSERT_TRUE(bt::write_npy(t.path("a.npy"), a, err)) << err;
  EXPECT_FALSE(bt::write_npy(t.path("a.npy/b.npy"), a, err));
  expect_one_line(err);
  EXPECT_NE(err.find("Not a directory"), std::string::npos) << err;
  EXPECT_FALSE(bt::write_npy(t.path("no/such/dir/b.npy"), a, err));
  EXPECT_NE(err.find("No such file or directory"), std::string::npos) << err;
  std::vector<std::string> names;
  for (const auto &e : fs::directory_iterator(t.path(""))) names.push_back(e.path().filename());
  EXPECT_EQ(names, std::vector<std::string>{"a.npy"});
}

TEST(TestingMatrixMarket, RejectsMalformed) {
  TempDir t;
  const std::string H = "%%MatrixMarket matrix coordinate real general\n";
  struct Case {
    const char *what;
    std::string text;
    const char *needle;
  };
  std::vector<Case> cases = {
      {"empty", "", "banner"},
      {"no banner", "3 3 1\n1 1 1\n", "banner"},
      {"short banner", "%%MatrixMarket matrix coordinate real\n1 1 1\n1 1 1\n", "banner"},
      {"complex one value", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1\n",
       "expected 4 fields"},
      {"hermitian complex diagonal",
       "%%MatrixMarket matrix coordinate complex hermitian\n2 2 1\n1 1 1 2\n", "diagonal"},
      {"hermitian", "%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n",
       "unsupported"},
      {"vector", "%%MatrixMarket vector coordinate real general\n1 1 1\n1 1 1\n", "unsupported"},
      {"unknown field", "%%MatrixMarket matrix coordinate quaternion general\n1 1 1\n1 1 1\n",
       "field"},
      {"no size line", H + "% only comments\n", "size line"},
      {"bad size line", H + "3 3\n", "size line"},
      {"size not int", H + "3 x 1\n1 1 1\n", "not an integer"},
      {"negative size", H + "-3 3 1\n1 1 1\n", "negative"},
      {"absurd size", H + "100000 100000 1\n1 1 1\n", "too large"},
      {"huge int", H + "99999999999999999999999 1 1\n1 1 1\n", "not an integer"},
      {"nnz > mn", H + "2 2 5\n1 1 1\n", "exceeds"},
      {"claims many entries", H + "1000 1000 900000\n1 1 1\n", "too short"},
      {"index too large", H + "3 3 1\n4 1 1\n", "out of range"},
      {"index zero", H + "3 3 1\n0 1 1\n", "out of range"},
      {"index not int", H + "3 3 1\n1.5 1 1\n", "not an integer"},
      {"value not number", H + "3 3 1\n1 1 abc\n", "is not a number"},
      {"value trailing junk", H + "3 3 1\n1 1 1.0x\n", "is not a number"},
      {"value overflow", H + "3 3 1\n1 1 1e999\n", "out of range"},
      {"missing value", H + "3 3 1\n1 1\n", "fields"},
      {"extra field", H + "3 3 1\n1 1 1 2\n", "fields"},
      {"too few entries", H + "3 3 3\n1 1 1\n2 2 2\n", "expected 3 entries, found 2"},
      {"too many entries", H + "3 3 1\n1 1 1\n2 2 2\n", "more entries"},
      {"symmetric not square", "%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n1 1 1\n",
       "square"},
      {"skew diagonal", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n",
       "diagonal"},
      {"array pattern", "%%MatrixMarket matrix array pattern general\n1 1\n", "pattern"},
      {"array short", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n",
       "expected 4 entries"},
      {"array two per line", "%%MatrixMarket matrix array real general\n2 1\n1 2\n", "field"},
      {"binary garbage",
       std::string("\x7f"
                   "ELF\0\0\1\2garbage",
                   15),
       "banner"},
  };
  for (const auto &c : cases) {
    bt::DenseMatrix d;
    std::string err;
    EXPECT_FALSE(bt::read_matrix_market(t.write("bad.mtx", c.text), d, err)) << c.what;
    expect_one_line(err);
    EXPECT_NE(err.find(c.needle), std::string::npos) << c.what << ": " << err;
    EXPECT_TRUE(d.a.empty()) << c.what;
  }
  bt::DenseMatrix d;
  std::string err;
  EXPECT_FALSE(bt::read_matrix_market(t.path("missing.mtx"), d, err));
  expect_one_line(err);
}

TEST(TestingMatrixMarket, ListDirectory) {
  TempDir t;
  t.write("b.mtx", "");
  t.write("a.mtx", "");
  t.write("c.txt", "");
  fs::create_directories(t.path("d.mtx")); // a directory, not listed
  const auto files = bt::list_matrix_market(t.path(""));
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(fs::path(files[0]).filename(), "a.mtx");
  EXPECT_EQ(fs::path(files[1]).filename(), "b.mtx");
  EXPECT_TRUE(bt::list_matrix_market(t.path("nope")).empty());
}
