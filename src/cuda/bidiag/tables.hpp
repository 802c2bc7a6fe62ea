// The device copy of a building-block call's host tables (bsvd.h "Batched
// BLAS and LAPACK": the pointer arrays of the batched forms, the sizes,
// leading dimensions and increments of the vbatched form), for the kernels
// of src/cuda/bidiag/. They live in one allocation made and freed in stream
// order on the call's stream (cudaMallocAsync / cudaFreeAsync: no host wait,
// and a captured call records them as graph nodes), filled by
// upload_bytes, which stream capture can record too (common/upload.hpp).
#pragma once

#include "../common/upload.hpp"

#include <cstring>
#include <functional>
#include <vector>

#include <cuda_runtime.h>

namespace bsvd::detail::cuda {

class DeviceTables {
public:
  // After upload(), *field points at the device copy of its `count`
  // entries (a null field stays null: the form does not have it).
  template <class E> void add(E *&field, int count) {
    if (!field) return;
    const size_t off = (host_.size() + 15) / 16 * 16;
    host_.resize(off + size_t(count) * sizeof(E));
    std::memcpy(host_.data() + off, static_cast<const void *>(field), size_t(count) * sizeof(E));
    fix_.push_back(
        [&field, off](unsigned char *base) { field = reinterpret_cast<E *>(base + off); });
  }
  cudaError_t upload(cudaStream_t stream) {
    if (host_.empty()) return cudaSuccess;
    void *p = nullptr;
    if (cudaError_t e = cudaMallocAsync(&p, host_.size(), stream)) return e;
    dev_ = static_cast<unsigned char *>(p);
    stream_ = stream;
    if (cudaError_t e = upload_bytes(dev_, host_.data(), host_.size(), stream)) return e;
    for (auto &f : fix_) f(dev_);
    return cudaSuccess;
  }
  // Freed in stream order after the kernels that read it.
  ~DeviceTables() {
    if (dev_) cudaFreeAsync(dev_, stream_);
  }

private:
  std::vector<unsigned char> host_;
  std::vector<std::function<void(unsigned char *)>> fix_;
  unsigned char *dev_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

} // namespace bsvd::detail::cuda
