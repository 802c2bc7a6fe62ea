// The GPU's batched GEBRD in both regimes (gebrd.cu), as the public
// bsvd_<p>gebrd_* and the values-only route (values.cu) call it: matrix i
// takes panels[i] panels of plan::kGebrdBlock columns over global memory
// (labrd.cuh: one thread block per matrix runs xLABRD, then a tiled kernel
// applies the panel's rank-2nb update), and then its trailing matrix is
// reduced on chip (one block per matrix, the trailing matrix in shared
// memory, gebd2). panels[i] = 0 for every matrix is the on-chip regime
// alone. The bidiagonal's entries are restored into A as xGEBRD leaves
// them; info[i] (when the batch has info) is 0 or BSVD_INFO_NONFINITE.
#pragma once

#include "../../core/blas_batch.hpp"
#include "../../core/options.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

#include <cuda_runtime.h>

namespace bsvd::detail::cuda {

template <class T> struct GebrdRun {
  GebrdBatch<T> b; // device-visible arrays
  const int *panels; // device memory, b.count entries; null: none
  T *X = nullptr; // matrix i's X (m x nb, ld ldx) at X + i * xstride
  T *Y = nullptr; // and Y (n x nb, ld ldy) at Y + i * ystride
  int ldx = 1, ldy = 1;
  int64_t xstride = 0, ystride = 0;
};

// What the launches need from the host: the most panels, the largest
// trailing m and n after panel p's update (the update grid), and the tail
// kernel's shared memory and thread count.
struct GebrdShape {
  int pmax = 0, mmax = 0, nmax = 0, tail_len = 1;
  size_t tail_smem = 256;
};

// The panels of each matrix (plan::gebrd_panels against this GPU's shared
// memory) and the shape; false names the first matrix no panel count
// brings within shared memory (which, then).
bool gebrd_shape(const std::vector<int> &m, const std::vector<int> &n, size_t elem,
                 std::vector<int> &panels, GebrdShape &shape, int &which);

// X's and Y's bytes for count matrices of at most mmax x nmax.
size_t gebrd_xy_bytes(int count, int mmax, int nmax, size_t elem);

template <class T>
cudaError_t enqueue_gebrd(const GebrdRun<T> &run, const GebrdShape &shape, cudaStream_t stream);

} // namespace bsvd::detail::cuda
