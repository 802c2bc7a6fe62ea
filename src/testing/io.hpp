// File formats: NumPy .npy (read and write) and Matrix Market (read).
// Every reader validates its input and returns false with a one-line reason
// in `err`; none aborts or throws on malformed files. Every writer writes a
// temporary file beside the target and renames it into place, so a failed
// write (full disk, I/O error) leaves the target as it was.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <type_traits>
#include <vector>

namespace bsvd::testing {

// A .npy array. dtype is one of "f4", "f8", "c8", "c16" (little-endian), or
// "i4" (int32, used for the per-matrix info and sweeps that bsvd run writes).
struct NpyArray {
  std::string dtype;
  std::vector<int64_t> shape;
  bool fortran_order = false;
  std::vector<unsigned char> data; // raw bytes, product(shape) * itemsize
  size_t itemsize() const;
  int64_t elements() const;
};

bool read_npy(const std::string &path, NpyArray &out, std::string &err);
// The same from a stream of `size` bytes; `name` stands for the file in
// messages. (The fuzzers' entry point.)
bool read_npy(std::istream &in, uint64_t size, const std::string &name, NpyArray &out,
              std::string &err);

// The header of a .npy file without its data, checked as read_npy checks
// the whole file (the data must fill the rest of the file exactly): out gets
// dtype, shape and order, offset the byte where the data starts. For
// readers of part of an array (bsvd run under MPI: each rank its slice).
bool read_npy_header(const std::string &path, NpyArray &out, uint64_t &offset, std::string &err);
// bytes from path at offset; false with "<file name>: <reason>".
bool read_at(const std::string &path, uint64_t offset, void *data, size_t bytes, std::string &err);

// The bytes before the data of a .npy file (magic, version, header padded
// to 64 bytes as numpy pads it) for an array of this dtype and shape; false
// with a reason for an unknown dtype or a negative shape.
bool npy_prelude(const std::string &dtype, const std::vector<int64_t> &shape, bool fortran_order,
                 std::string &out, std::string &err);

// Atomic write: arr goes to a temporary file in path's directory, which is
// renamed to path once every byte is written. On failure path is untouched,
// the temporary file is removed, and err names the file and the system's
// reason (strerror), e.g. "S.npy: write failed: No space left on device".
bool write_npy(const std::string &path, const NpyArray &arr, std::string &err);

// The first half of an atomic write, for callers that publish several files
// together: the array (data: elements * itemsize bytes) is written to a new
// temporary file in path's directory, named ".<file name>.tmp-XXXXXX";
// its path is returned in tmp. The caller renames tmp to path (or removes
// it). Nothing is left behind on failure.
bool write_npy_temp(const std::string &path, const std::string &dtype,
                    const std::vector<int64_t> &shape, const void *data, size_t bytes,
                    std::string &tmp, std::string &err);
// The same for any bytes (text files): the concatenation of the chunks.
struct Chunk {
  const void *data;
  size_t size;
};
bool write_temp(const std::string &path, const std::vector<Chunk> &chunks, std::string &tmp,
                std::string &err);
// bytes into the existing file path at offset (pwrite; the file grows as
// needed), under the same BSVD_TEST_WRITE_LIMIT as the other writers: for
// several processes filling one temporary file (bsvd run under MPI). False
// with "<path>: write failed: <reason>".
bool write_at(const std::string &path, uint64_t offset, const void *data, size_t bytes,
              std::string &err);
// write_temp, then rename into place (the temporary file removed on failure).
bool write_file_atomic(const std::string &path, const std::vector<Chunk> &chunks, std::string &err);

// A Matrix Market file (coordinate or array; real, integer, complex or
// pattern; general, symmetric, skew-symmetric or hermitian), expanded to a
// dense column-major m x n matrix. Pattern entries are 1; duplicate
// coordinate entries add up; one entry per line; '%' lines and blank lines
// are skipped. Values may be "nan" and "inf" (as numpy writes them): such a
// matrix is read, and the solver reports it as non-finite. Refused: indices
// out of range, entry counts that differ from the size line, non-numbers,
// finite-looking values that overflow (1e999), a hermitian matrix with a
// non-real diagonal, m * n > 1e8.
struct DenseMatrix {
  std::string name; // file name without directory and extension
  int m = 0, n = 0;
  bool is_complex = false; // the file's field is complex
  std::vector<double> a; // a[i + j * m], the real parts
  std::vector<double> im; // imaginary parts (complex files), else empty
  bool finite() const; // no NaN or infinity among the entries
};

// The largest matrix (m * n) the reader makes dense: 1e8 elements, 800 MB
// of doubles (1.6 GB complex).
constexpr int64_t kMaxMatrixMarketElements = 100000000;

bool read_matrix_market(const std::string &path, DenseMatrix &out, std::string &err);
// The same from a stream of `size` bytes (`name`: the file, for messages
// and DenseMatrix::name); a smaller max_elements bounds what a header may
// claim (the fuzzer's harness: sizes a small input justifies).
bool read_matrix_market(std::istream &in, uint64_t size, const std::string &name, DenseMatrix &out,
                        std::string &err, int64_t max_elements = kMaxMatrixMarketElements);

// The entries as T (float, double, std::complex<float>, std::complex<double>),
// column-major. A complex matrix needs a complex T (callers check
// is_complex: with a real T the imaginary parts are dropped).
template <class T> std::vector<T> dense_as(const DenseMatrix &d) {
  std::vector<T> out(d.a.size());
  for (size_t i = 0; i < out.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      out[i] = T(d.a[i]);
    } else {
      using R = typename T::value_type;
      out[i] = T(R(d.a[i]), d.im.empty() ? R(0) : R(d.im[i]));
    }
  }
  return out;
}

// Directory holding the SuiteSparse matrices shipped with the repository.
std::string default_matrix_dir();
// All *.mtx files of a directory (not recursive) as paths (dir + "/" +
// name), sorted; empty if the directory cannot be read.
std::vector<std::string> list_matrix_market(const std::string &dir);

} // namespace bsvd::testing
