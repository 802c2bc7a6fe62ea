// The register tier: one thread per matrix, bsvd::device::svd
// (include/bsvd/device/svd.cuh) in registers; docs/design/tiny.md.
#pragma once

#include "../../core/batch.hpp"
#include "launches.hpp"

#include <cuda_runtime.h>

namespace bsvd::detail::cuda {

constexpr int kTinyThreads = 64; // threads (matrices) per block
constexpr int kLanesThreads = 128; // threads per block of the lanes variant

template <class T> struct TinyParams {
  Batch<T> batch;
  const int *map = nullptr; // the group's i-th matrix is batch matrix map[i]; null: i
  int count = 0; // matrices of the launch
  int dim = 0; // the instance: max(m, n) over the launch, <= plan::kTinyInstanceMax
  double tol = 0; // <= 0: the device API's default
  int max_sweeps = 0;
  bool lanes = false; // the lanes variant (lanes.cuh): L lanes per matrix
};

// Whether matrices are staged through shared memory (uniform, contiguous,
// in batch order) -- coalesced loads and stores -- or read and written by
// each thread where they lie.
template <class T> bool tiny_staged(const TinyParams<T> &P);
// Dynamic shared memory of a staged launch.
size_t tiny_smem_bytes(int m, int n, bool vectors, size_t elem);

template <class T> cudaError_t launch_tiny(const TinyParams<T> &P, cudaStream_t stream);

} // namespace bsvd::detail::cuda
