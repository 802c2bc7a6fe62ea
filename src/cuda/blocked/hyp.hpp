// The hyperbolic SVD's kernels of the blocked path, behind functions so
// that their instances are compiled in blocked_hyp_*.cu, in parallel with
// the SVD's (blocked_*.cu), which stay as they were: the pair kernel
// (blk_pair_hyp_kernel, pair_hyp.cuh, K = kBlockedKmax) and the finish with
// the signature (blk_finish_kernel<T, true>, finish.cuh).
#pragma once

#include "params.cuh"

#include <cstddef>

namespace bsvd::detail::cuda {

// The kernels' dynamic shared memory limits: pair_smem for the pair kernel
// (0: not launched), finish_smem for the finish (set when above 48 KB).
template <class T> cudaError_t blk_hyp_configure(size_t pair_smem, size_t finish_smem);
// grid thread blocks of 256 threads (pair) or kFinishThreads (finish) on
// stream st; errors are the launch's (cudaGetLastError).
template <class T>
void blk_hyp_pair_launch(const BlkParams<T> &P, unsigned grid, size_t smem, cudaStream_t st);
template <class T>
void blk_hyp_finish_launch(const BlkParams<T> &P, unsigned grid, size_t smem, cudaStream_t st);

} // namespace bsvd::detail::cuda
