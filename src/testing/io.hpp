// File formats: NumPy .npy (read and write) and Matrix Market (read).
// Every reader validates its input and returns false with a one-line reason
// in `err`; none aborts or throws on malformed files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
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
bool write_npy(const std::string &path, const NpyArray &arr, std::string &err);

// A Matrix Market file (coordinate or array; real, integer or pattern;
// general, symmetric or skew-symmetric), expanded to a dense column-major
// m x n double matrix. Pattern entries are 1; duplicate coordinate entries
// add up; one entry per line; '%' lines and blank lines are skipped. Refused:
// complex / hermitian (unsupported), indices out of range, entry counts that
// differ from the size line, non-numbers and non-finite values, m * n > 1e8.
struct DenseMatrix {
  std::string name; // file name without directory and extension
  int m = 0, n = 0;
  std::vector<double> a; // a[i + j * m]
};

bool read_matrix_market(const std::string &path, DenseMatrix &out, std::string &err);

// Directory holding the SuiteSparse matrices shipped with the repository.
std::string default_matrix_dir();
// All *.mtx files of a directory (not recursive) as paths (dir + "/" +
// name), sorted; empty if the directory cannot be read.
std::vector<std::string> list_matrix_market(const std::string &dir);

} // namespace bsvd::testing
