// libFuzzer entry point for the Matrix Market reader (scripts/fuzz.sh builds
// and runs it). Any input must give true or false with a one-line reason: a
// crash, a sanitizer report, a hang or an allocation beyond what the input
// justifies is a bug in the reader.
#include "testing/io.hpp"

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char *>(data), size));
  bsvd::testing::DenseMatrix d;
  std::string err;
  // At most 2^20 elements (16 MB complex): the reader's own cap, 1e8, lets
  // a 40-byte header claim 1.6 GB, which the sanitizers' allocator keeps and
  // which would end a run at its memory limit without a bug.
  const bool ok = bsvd::testing::read_matrix_market(in, size, "fuzz.mtx", d, err, int64_t(1) << 20);
  // An accepted matrix is m x n with m * n entries (and as many imaginary
  // parts when complex); a refusal explains itself and names the file.
  if (ok) {
    const size_t e = size_t(d.m) * size_t(d.n);
    if (d.m < 0 || d.n < 0 || d.a.size() != e || d.im.size() != (d.is_complex ? e : 0))
      std::abort();
  } else if (err.rfind("fuzz.mtx: ", 0) != 0 || err.find('\n') != std::string::npos) {
    std::abort();
  }
  return 0;
}
