// Teams: who shares the work of one matrix in the device-side BLAS and
// LAPACK-style routines (blas.cuh, gebrd.cuh, bdsv.cuh). Header-only;
// compiles with nvcc and with a plain C++17 compiler.
//
// A routine written against a team splits its loops as
//
//   for (int i = team.rank(); i < len; i += team.size()) ...
//
// and combines partial results with team.sum / team.max, which return the
// same bits on every member (each member adds the partials in the same
// order), so every member takes the same branches from them -- a Householder
// reflector's beta and tau are computed redundantly by all members instead
// of by one and broadcast. team.sync() makes earlier writes of every member
// visible to every member. Every routine of these headers assumes its
// inputs are visible to the whole team on entry and syncs before it
// returns, so calls compose without extra barriers.
//
// serial_team: one thread does everything (the CPU twin; or one GPU thread
// per matrix, as the register tier does). block_team: all threads of a
// CUDA thread block (the on-chip regime: one block per matrix, the matrix
// in shared memory, MAGMA-BLAS §4.1.2's "big-tile setting").
//
// team.lead() is the team's first members as a team of their own (a block's
// first warp, whose barrier is __syncwarp; a serial team itself): the
// members with team.rank() < team.lead().size() call into it, with the same
// rank there. A step with little parallelism and many dependent steps -- a
// triangular solve's diagonal block -- runs on the lead, so that its
// barriers cost a warp's, not the block's.
#pragma once

#if !defined(BSVD_DEVICE_HD)
#if defined(__CUDACC__)
#define BSVD_DEVICE_HD __host__ __device__ __forceinline__
#else
#define BSVD_DEVICE_HD inline
#endif
#endif

namespace bsvd::device {

struct serial_team {
  BSVD_DEVICE_HD int rank() const { return 0; }
  BSVD_DEVICE_HD int size() const { return 1; }
  BSVD_DEVICE_HD void sync() const {}
  template <class R> BSVD_DEVICE_HD R sum(R x) const { return x; }
  template <class R> BSVD_DEVICE_HD R max(R x) const { return x; }
  BSVD_DEVICE_HD serial_team lead() const { return *this; }
};

#if defined(__CUDACC__)
// The first warp of a block (block_team::lead): rank = lane. It has no
// reductions (nothing run on a lead needs one yet).
struct warp_team {
  BSVD_DEVICE_HD int rank() const {
#if defined(__CUDA_ARCH__)
    return int(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31;
#else
    return 0;
#endif
  }
  BSVD_DEVICE_HD int size() const {
#if defined(__CUDA_ARCH__)
    return 32;
#else
    return 1;
#endif
  }
  BSVD_DEVICE_HD void sync() const {
#if defined(__CUDA_ARCH__)
    __syncwarp();
#endif
  }
};

// Every thread of the block, rank = linear thread index. The block size
// must be a multiple of 32 (the reductions shuffle over full warps) and at
// most 1024; scratch points to 32 entries of R in shared memory, owned by
// the team while a routine runs. R is the real type of the reductions
// (float or double). The member functions are host-device only so that
// host-device templates instantiated with this team compile; on the host
// they are never called.
template <class R> struct block_team {
  static constexpr bool kShuffle = true; // blas.cuh's split GEMV may shuffle
  R *scratch;
  BSVD_DEVICE_HD int rank() const {
#if defined(__CUDA_ARCH__)
    return int(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
#else
    return 0;
#endif
  }
  BSVD_DEVICE_HD int size() const {
#if defined(__CUDA_ARCH__)
    return int(blockDim.x * blockDim.y * blockDim.z);
#else
    return 1;
#endif
  }
  BSVD_DEVICE_HD void sync() const {
#if defined(__CUDA_ARCH__)
    __syncthreads();
#endif
  }
  BSVD_DEVICE_HD R sum(R x) const { return reduce<false>(x); }
  BSVD_DEVICE_HD R max(R x) const { return reduce<true>(x); }
  BSVD_DEVICE_HD warp_team lead() const { return {}; }

private:
  // Butterfly within each warp (lanes l and l ^ o add the same two values,
  // so all lanes end with the same bits), then every thread combines the
  // warps' results from scratch in warp order. The first barrier keeps a
  // previous call's readers ahead of this call's writers.
  template <bool kMax> BSVD_DEVICE_HD R reduce(R x) const {
#if defined(__CUDA_ARCH__)
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const R y = __shfl_xor_sync(0xffffffffu, x, o);
      x = kMax ? (y > x ? y : x) : x + y;
    }
    const int r = rank(), warps = size() >> 5;
    __syncthreads();
    if ((r & 31) == 0) scratch[r >> 5] = x;
    __syncthreads();
    R t = scratch[0];
    for (int w = 1; w < warps; ++w) t = kMax ? (scratch[w] > t ? scratch[w] : t) : t + scratch[w];
    return t;
#else
    return x;
#endif
  }
};
#endif

} // namespace bsvd::device
