// libFuzzer entry point for the .npy reader (scripts/fuzz.sh builds and runs
// it). Any input must give true or false with a one-line reason: a crash, a
// sanitizer report, a hang or an allocation beyond what the input justifies
// is a bug in the reader.
#include "testing/io.hpp"

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char *>(data), size));
  bsvd::testing::NpyArray arr;
  std::string err;
  const bool ok = bsvd::testing::read_npy(in, size, "fuzz.npy", arr, err);
  // The contract the callers rely on: an accepted array's bytes match its
  // shape and dtype; a refusal explains itself and names the file.
  if (ok && (arr.elements() < 0 || arr.data.size() != size_t(arr.elements()) * arr.itemsize()))
    std::abort();
  if (!ok && (err.rfind("fuzz.npy: ", 0) != 0 || err.find('\n') != std::string::npos)) std::abort();
  return 0;
}
