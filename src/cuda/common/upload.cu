// upload.hpp.
#include "upload.hpp"

#include <algorithm>
#include <cstring>

namespace bsvd::detail::cuda {

namespace {

// Under the 4 KB of parameters every architecture takes.
constexpr size_t kChunkBytes = 4096 - 16;

struct Chunk {
  unsigned char *dst;
  unsigned bytes;
  unsigned char data[kChunkBytes];
};

__global__ void upload_chunk_kernel(const __grid_constant__ Chunk c) {
  for (unsigned i = threadIdx.x; i < c.bytes; i += blockDim.x) c.dst[i] = c.data[i];
}

} // namespace

bool stream_capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &st) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return st != cudaStreamCaptureStatusNone;
}

cudaError_t upload_bytes(void *dst, const void *src, size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return cudaSuccess;
  if (!stream_capturing(stream))
    return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream);
  const auto *from = static_cast<const unsigned char *>(src);
  auto *to = static_cast<unsigned char *>(dst);
  for (size_t o = 0; o < bytes; o += kChunkBytes) {
    Chunk c;
    c.dst = to + o;
    c.bytes = unsigned(std::min(kChunkBytes, bytes - o));
    std::memcpy(c.data, from + o, c.bytes);
    upload_chunk_kernel<<<1, 256, 0, stream>>>(c);
    if (cudaError_t e = cudaGetLastError()) return e;
  }
  return cudaSuccess;
}

} // namespace bsvd::detail::cuda
