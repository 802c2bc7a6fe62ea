// The blocked path's sweep loop on the device, for stream-ordered calls
// (Exec::kAsync; BlockedRun::enqueue in driver.cuh). The host driver reads
// each sweep's rotation counts back and shrinks the active list; here the
// same decisions are made by kernels, and the loop runs as a CUDA graph
// conditional node (common/device_loop.hpp):
//
//   start   each matrix's flag (the load's start word), sweeps, inner sweep
//           rule and cap, rotation count; the loop's condition
//   body    the sweep's steps over every matrix (a matrix whose flag is off
//           is skipped by every kernel: slot_block_pair), then `end`
//           and the eigensolver (where the lean kernel is planned: lean
//           while every live matrix is at one inner sweep, the host
//           driver's rule)
//   end     per live matrix: sweeps; no rotation -> converged (flag off),
//           else the inner sweep rule takes the count (inner_sweeps.hpp,
//           the host driver's and the CPU twin's rule); the condition:
//           some matrix live and the sweep limit not reached
//   fin     the finish's (matrix, converged, sweeps) triples
//
// The HSVD (BlkLoop::subrun set) adds the host driver's breakdown rule to
// end: a live matrix counts its sweeps in a row with a substituted step
// (BlkParams::subst, set by the pair kernel), and stops at
// kHyperbolicBreakdownSweeps of them or with one in the last sweep;
// subrun -1 marks it, and fin reports it as converged = -1.
//
// start and end run one thread block: they touch a few words per matrix.
#pragma once

#include "../../core/inner_sweeps.hpp"
#include "params.cuh"

namespace bsvd::detail::cuda {

struct BlkLoop {
  int *alive = nullptr; // per matrix: still iterating
  int *sweeps = nullptr; // per matrix: sweeps taken
  InnerSweepRule *rules = nullptr;
  int *counter = nullptr; // [0] sweeps run, [1] the lean kernel's turn (BlkParams::evd_lean)
  int *subrun =
      nullptr; // per matrix (HSVD only): sweeps in a row with a substitution; -1 breakdown
  int cnt = 0, nb = 16, max_sweeps = 0, eig_sweeps = BSVD_EIG_SWEEPS_AUTO;
};
constexpr int kLoopThreads = 256;

template <class Tstd> __global__ void __launch_bounds__(kLoopThreads)
    blk_loop_start_kernel(const __grid_constant__ BlkParams<Tstd> P, BlkLoop Lp,
                          cudaGraphConditionalHandle cond) {
  int any = 0, two = 0;
  for (int i = threadIdx.x; i < Lp.cnt; i += kLoopThreads) {
    const int live = P.state[size_t(i) * kBsWords + kBsStart] != 0;
    Lp.alive[i] = live;
    Lp.sweeps[i] = 0;
    Lp.rules[i] = InnerSweepRule();
    const int cap = inner_sweep_cap(Lp.eig_sweeps, Lp.rules[i], kInnerConvergeCap);
    const_cast<int *>(P.esw)[i] = cap;
    P.rot[i] = 0;
    if (Lp.subrun) {
      Lp.subrun[i] = 0;
      P.subst[i] = 0;
    }
    any |= live;
    two |= live && cap != 1;
  }
  any = __syncthreads_or(any);
  two = __syncthreads_or(two);
  if (threadIdx.x == 0) {
    Lp.counter[0] = 0;
    Lp.counter[1] = !two;
    cudaGraphSetConditional(cond, any && Lp.max_sweeps > 0);
  }
}

template <class Tstd> __global__ void __launch_bounds__(kLoopThreads)
    blk_loop_end_kernel(const __grid_constant__ BlkParams<Tstd> P, BlkLoop Lp,
                        cudaGraphConditionalHandle cond) {
  const int sweep = Lp.counter[0] + 1;
  int any = 0, two = 0;
  for (int i = threadIdx.x; i < Lp.cnt; i += kLoopThreads) {
    if (!Lp.alive[i]) continue;
    Lp.sweeps[i] = sweep;
    const int r = P.rot[i];
    if (r) {
      const int nw = P.mats[i].nw;
      const int nblk =
          Lp.subrun ? hsvd_blocks(nw, P.batch.nplus[P.mats[i].b], Lp.nb) : (nw + Lp.nb - 1) / Lp.nb;
      if (nblk > 1) Lp.rules[i].after_sweep(r);
      if (Lp.subrun) {
        const int sub = P.subst[i], run = sub ? Lp.subrun[i] + 1 : 0;
        P.subst[i] = 0;
        Lp.subrun[i] = run;
        if (run >= kHyperbolicBreakdownSweeps || (sweep == Lp.max_sweeps && sub)) {
          Lp.subrun[i] = -1;
          Lp.alive[i] = 0;
          continue;
        }
      }
      const int cap = inner_sweep_cap(Lp.eig_sweeps, Lp.rules[i], kInnerConvergeCap);
      const_cast<int *>(P.esw)[i] = cap;
      P.rot[i] = 0;
      any = 1;
      two |= cap != 1;
    } else {
      Lp.alive[i] = 0;
    }
  }
  any = __syncthreads_or(any);
  two = __syncthreads_or(two);
  if (threadIdx.x == 0) {
    Lp.counter[0] = sweep;
    Lp.counter[1] = !two;
    cudaGraphSetConditional(cond, any && sweep < Lp.max_sweeps);
  }
}

// fin: (matrix, converged, sweeps) of every matrix, in matrix order.
// (A template like every kernel of this header: one instance per
// precision's translation unit.)
template <class Tstd> __global__ void blk_loop_fin_kernel(BlkLoop Lp, int *fin) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= Lp.cnt) return;
  fin[3 * size_t(i)] = i;
  fin[3 * size_t(i) + 1] = Lp.subrun && Lp.subrun[i] < 0 ? -1 : !Lp.alive[i];
  fin[3 * size_t(i) + 2] = Lp.sweeps[i];
}

} // namespace bsvd::detail::cuda
