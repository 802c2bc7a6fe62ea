// Host data to device memory in stream order, in a way that stream capture
// can record: the one way every GPU path uploads what the host worked out
// for a call (pointer arrays, launch maps, ordering tables, per-matrix
// records).
//
// Outside a capture it is cudaMemcpyAsync from the caller's (pageable)
// buffer, which the driver stages before returning (for the few KB of a
// call's tables without waiting for the stream: tests/gpu/test_gpu_async.cu
// checks that a call returns while its stream is busy). Inside a capture a
// memcpy node would keep the address of a host buffer that dies with the
// call, so the bytes travel by value instead: as the parameters of small
// copy kernels (4 KB each), which the graph keeps with its nodes.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

namespace bsvd::detail::cuda {

// Whether `stream` is being captured into a CUDA graph now.
bool stream_capturing(cudaStream_t stream);

// bytes from the host's src to the device's dst, ordered on stream.
cudaError_t upload_bytes(void *dst, const void *src, size_t bytes, cudaStream_t stream);

template <class E> cudaError_t upload(E *dst, const std::vector<E> &src, cudaStream_t stream) {
  return upload_bytes(dst, src.data(), src.size() * sizeof(E), stream);
}

} // namespace bsvd::detail::cuda
