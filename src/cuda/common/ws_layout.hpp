// Carving a device workspace into regions: 256-byte aligned offsets handed
// out in order (the blocked path's and the QR path's layouts, the call's
// plan in backend.cu).
#pragma once

#include <cstddef>

namespace bsvd::detail::cuda {

inline size_t ws_align(size_t bytes) { return (bytes + 255) & ~size_t(255); }

struct WsCursor {
  size_t used = 0;
  // Offset of a new region of `bytes` bytes.
  size_t take(size_t bytes) {
    const size_t at = used;
    used += ws_align(bytes);
    return at;
  }
};

} // namespace bsvd::detail::cuda
