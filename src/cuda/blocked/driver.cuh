// The blocked path's host driver (run_blocked, blocked.hpp): one
// BlockedRun per call. Its run() is the whole call as a loop over named
// steps -- the workspace and the kernels' launch attributes, the load, then
// per sweep the sweep's plan (every tuning decision of the sweep, in
// plan_sweep), its uploads, its steps, the convergence read-back and the
// early finishes (the active-matrix mask of MAGMA-SVD Sec. 8), and at the
// end the finish of the rest and the stage profile.
#pragma once

#include "../../core/inner_sweeps.hpp"
#include "../../core/ordering.hpp"
#include "../common/device_loop.hpp"
#include "../common/side_stream.hpp"
#include "../common/upload.hpp"
#include "../../plan/blocked_sweep.hpp"
#include "../common/device_info.hpp" // max_smem_optin
#include "blocked.hpp"
#include "evd_block.cuh"
#include "evd_lean.cuh"
#include "evd_warp.cuh"
#include "finish.cuh"
#include "gram.cuh"
#include "gram_cublas.cuh"
#include "gram_mma.cuh"
#include "gram_wide.cuh"
#include "hyp.hpp"
#include "layout.hpp"
#include "load.cuh"
#include "loop.cuh"
#include "pair.cuh"
#include "sweep_plan.cuh"
#include "timer.hpp"
#include "update.cuh"

#include <algorithm>
#include <chrono>
#include <type_traits>
#include <vector>

namespace bsvd::detail::cuda {

#define BSVD_BLK_TRY(call)                                                                         \
  do {                                                                                             \
    const cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) return e_;                                                              \
  } while (0)

// One run_blocked call of instance K: the Gram order (blocked_k_of(nb)), the
// narrow one (32) with every plan, or the wide one (64): the Gram path only
// (every mode BSVD_PAIR_GRAM; plan::blocked_pair_mode gives that), its own Gram
// kernel (or cuBLAS), the block eigensolver of 256 threads.
//
// It decides nothing itself: the plan's BlockedPlan gives the block width,
// the pair solvers and the Gram stage by cuBLAS per matrix; per sweep, the
// rule plan::plan_sweep (src/plan/blocked_sweep.hpp) takes the counts of
// the active matrices (count_sweep) and chooses the eigensolver plan, the
// lean kernel, the Gram plan and the two stream groups.
template <class Tstd, int K> class BlockedRun {
public:
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  using Clock = std::chrono::steady_clock;
  static constexpr bool kWide = K != kBlockedKmax;
  // The lean warp kernel (d, the narrow instance; evd_lean.cuh).
  static constexpr bool kLean = !kWide && kEvdLean<T>;
  static constexpr char kPrec = precision_of<Tstd>();
  static constexpr size_t kEvdSmem = kEvdWarps * sizeof(EvdWarpSmem<T, K>);
  static constexpr size_t kLeanSmem = kEvdWarps * sizeof(EvdLeanSmem<T, K>);
  static constexpr size_t kBlockSmem = sizeof(EvdBlockSmem<T, K>);

  // The workspace's pointers and the per-matrix records (host only: no
  // CUDA call; run_blocked_impl has checked the arguments). hnplus: the
  // HSVD's signatures in host memory, indexed like kb (null: the SVD).
  BlockedRun(Clock::time_point t0, const Batch<Tstd> &kb, const std::vector<int> &idx,
             const std::vector<int> &m, const std::vector<int> &n, const plan::BlockedPlan &bp,
             const plan::Plan &p, cudaStream_t stream, unsigned char *ws, const int *hnplus);

  cudaError_t run() {
    BSVD_BLK_TRY(upload_mats());
    BSVD_BLK_TRY(configure_kernels());
    BSVD_BLK_TRY(load());
    start_iteration();
    BSVD_BLK_TRY(configure_finish());
    for (int sweep = 1; sweep <= max_sweeps_ && !active_.empty(); ++sweep) {
      SweepPlan sp = plan_sweep();
      BSVD_BLK_TRY(upload_sweep());
      BSVD_BLK_TRY(run_sweep(sp, stream_, pipe_));
      BSVD_BLK_TRY(read_convergence(sweep));
      BSVD_BLK_TRY(finish_converged(sweep));
    }
    BSVD_BLK_TRY(finish_rest());
    store_profile();
    return cudaSuccess;
  }

  // The same call, stream-ordered (Exec::kAsync; loop.cuh): the host plans
  // one sweep for every matrix and enqueues it as the body of a loop the
  // device ends; converged matrices are skipped inside the launches. The
  // stream must be capturing (run_blocked_impl makes sure). No host wait,
  // no profile.
  cudaError_t enqueue();

private:
  // runs of equal mw among the cuBLAS matrices: one batched GEMM each
  struct GemmGroup {
    int mw;
    long long first, count;
  };
  using SweepPlan = BlkSweepPlan<Tstd>;

  // the steps of run()
  void bind_workspace();
  void build_mats(const std::vector<int> &idx, const std::vector<int> &m,
                  const std::vector<int> &n);
  cudaError_t upload_mats();
  cudaError_t configure_kernels();
  cudaError_t configure_pair_kernels();
  cudaError_t load();
  void start_iteration();
  void choose_cublas_matrices();
  cudaError_t configure_finish();
  SweepPlan plan_sweep();
  void order_active(SweepPlan &sp);
  plan::SweepCounts count_sweep(const SweepPlan &sp) const;
  void set_gram_plan(SweepPlan &sp);
  void set_groups(SweepPlan &sp) const;
  cudaError_t upload_sweep();
  cudaError_t run_sweep(SweepPlan &sp, cudaStream_t main, SideStream &pipe);
  cudaError_t run_step(SweepPlan &sp, int s, cudaStream_t main, SideStream &pipe);
  cudaError_t launch_load();
  cudaError_t enqueue_loop(SweepPlan &sp);
  cudaError_t enqueue_finish();
  cudaError_t gram_path_step(const BlkParams<Tstd> &Pg, cudaStream_t st, const SweepPlan &sp);
  void launch_gram_own(const BlkParams<Tstd> &Pg, cudaStream_t st, GramPlan plan);
  cudaError_t launch_gram_cublas(const BlkParams<Tstd> &Pg, cudaStream_t st);
  void launch_evd(const BlkParams<Tstd> &Pg, cudaStream_t st, const SweepPlan &sp);
  cudaError_t read_convergence(int sweep);
  cudaError_t finish_converged(int sweep);
  cudaError_t launch_finish(const std::vector<int> &which, cudaStream_t st);
  cudaError_t finish_rest();
  void store_profile();

  // Block pairs of matrix i per step (one for a single block).
  long pairs_of(int i) const { return wcycle_pairs(nblk_[i], wr_); }

  // the call
  const Clock::time_point t0_;
  const Batch<Tstd> &kb_;
  const plan::BlockedPlan &bp_;
  const std::vector<int> &mode_;
  const Config &cfg_;
  const plan::Tuning &tuning_;
  const int nb_, cnt_, wr_, we_;
  // The HSVD (signatures given): its blocks (hsvd_blocks), pair kernel
  // (pair_hyp.cuh), breakdown rule and finish (hyp.hpp).
  const int *const hnplus_;
  const bool hyp_;
  const cudaStream_t stream_;
  unsigned char *const ws_;
  const BlkLayout L_;
  // the launches' parameters: P_ for the Gram path (its active slice set
  // per sweep), Pf_ for the finish
  BlkParams<Tstd> P_, Pf_;
  int *desw_ = nullptr, *dact_ = nullptr, *dgbase_ = nullptr, *dfin_ = nullptr;
  T *gp_base_ = nullptr; // the split plan's partial tiles (none: nullptr)
  // per matrix
  std::vector<BlkMat> mats_;
  std::vector<int> nblk_, rows_; // blocks; rows of W and V
  std::vector<int> state_; // the load's state words
  // conv_: 1 converged, 0 not (the sweep limit), -1 the HSVD's breakdown
  std::vector<int> active_, conv_, sweeps_, rot_;
  std::vector<int> subst_, subrun_; // the HSVD: this sweep's substitution, sweeps in a row
  std::vector<InnerSweepRule> rules_;
  std::vector<int> esw_; // this sweep's inner sweep caps
  std::vector<char> cub_; // Gram stage by cuBLAS
  int max_sweeps_ = 0;
  // the per-sweep order of the active matrices: Gram (own kernel, then
  // cuBLAS by mw), EVD_SM, SVD_SM; the cuBLAS matrices' first GEMMs and
  // GEMM groups
  std::vector<int> order_, gbase_;
  std::vector<GemmGroup> groups_;
  std::vector<int> converged_now_; // converged in the sweep just read back
  bool device_loop_ = false; // enqueue(): the sweep loop runs on the device
  BlkLoop loop_;
  // launch attributes and run-wide decisions
  bool lean_on_ = false; // the lean kernel may run (d, nb 16, the tuning's switch)
  size_t pair_smem_[2] = {0, 0}; // EVD_SM, SVD_SM: their largest matrix
  size_t fsmem_ = 0; // the finish's dynamic shared memory
  // the finish
  std::vector<int> fin_; // (matrix, converged, sweeps) in launch order
  std::vector<char> finished_;
  int nfin_ = 0;
  BlockedProfile prof_;
  // Destroyed in reverse: pipe_ and side_ join the call's stream (and are
  // released) before the timer's events are.
  BlkTimer timer_;
  SideStream side_; // the early finishes
  SideStream pipe_; // the first group's stream when the Gram path splits in two
};

template <class Tstd, int K>
BlockedRun<Tstd, K>::BlockedRun(Clock::time_point t0, const Batch<Tstd> &kb,
                                const std::vector<int> &idx, const std::vector<int> &m,
                                const std::vector<int> &n, const plan::BlockedPlan &bp,
                                const plan::Plan &p, cudaStream_t stream, unsigned char *ws,
                                const int *hnplus)
    : t0_(t0), kb_(kb), bp_(bp), mode_(bp.mode), cfg_(p.cfg), tuning_(p.tuning), nb_(bp.nb),
      cnt_(int(idx.size())), wr_(bp.wr), we_(bp.we), hnplus_(hnplus), hyp_(hnplus != nullptr),
      stream_(stream), ws_(ws),
      L_(blk_layout(m, n, kb.vectors, sizeof(T), bp.nb, blocked_gram_count(bp.mode), K, wr_, hyp_)),
      side_(stream), pipe_(stream) {
  bind_workspace();
  build_mats(idx, m, n);
}

// P_'s settings and its arrays in the workspace (layout.hpp).
template <class Tstd, int K> void BlockedRun<Tstd, K>::bind_workspace() {
  P_.batch = kb_;
  P_.vectors = kb_.vectors;
  P_.nb = nb_;
  P_.wr = wr_;
  P_.we = we_;
  P_.half = L_.half;
  P_.tol = cfg_.tol;
  P_.mats = reinterpret_cast<const BlkMat *>(ws_ + L_.mats);
  P_.state = reinterpret_cast<int *>(ws_ + L_.state);
  P_.rot = reinterpret_cast<int *>(ws_ + L_.rot);
  P_.subst = hyp_ ? reinterpret_cast<int *>(ws_ + L_.subst) : nullptr;
  desw_ = reinterpret_cast<int *>(ws_ + L_.esw);
  P_.esw = desw_;
  dact_ = reinterpret_cast<int *>(ws_ + L_.act);
  P_.act = dact_;
  P_.W = reinterpret_cast<T *>(ws_ + L_.W);
  P_.V = reinterpret_cast<T *>(ws_ + L_.V);
  P_.X = reinterpret_cast<T *>(ws_ + L_.X);
  P_.G = reinterpret_cast<T *>(ws_ + L_.G);
  gp_base_ = L_.gp_tiles ? reinterpret_cast<T *>(ws_ + L_.Gp) : nullptr;
  P_.Q = reinterpret_cast<T *>(ws_ + L_.Q);
  P_.pflag = reinterpret_cast<int *>(ws_ + L_.pflag);
  P_.nullf = reinterpret_cast<R *>(ws_ + L_.nullf);
  P_.gptr = reinterpret_cast<void **>(ws_ + L_.gptr);
  dgbase_ = reinterpret_cast<int *>(ws_ + L_.gbase);
  P_.gbase = dgbase_;
  P_.gcap = L_.gcap;
  dfin_ = reinterpret_cast<int *>(ws_ + L_.fin);
}

// The per-matrix records (W = A or A^H: mw >= nw), block counts and rows,
// and the batch's largest sizes.
template <class Tstd, int K> void BlockedRun<Tstd, K>::build_mats(const std::vector<int> &idx,
                                                                  const std::vector<int> &m,
                                                                  const std::vector<int> &n) {
  mats_.resize(cnt_);
  nblk_.resize(cnt_);
  rows_.resize(cnt_);
  long long ow = 0, ov = 0, ox = 0;
  for (int i = 0; i < cnt_; ++i) {
    BlkMat &B = mats_[i];
    B.b = idx[i];
    B.m = m[i];
    B.n = n[i];
    B.mw = std::max(m[i], n[i]);
    B.nw = std::min(m[i], n[i]);
    B.woff = ow;
    B.voff = ov;
    B.xoff = ox;
    ow += (long long)B.mw * B.nw;
    if (kb_.vectors) {
      ov += (long long)B.nw * B.nw;
      ox += 2 * B.mw + B.nw;
    }
    nblk_[i] = hyp_ ? hsvd_blocks(B.nw, hnplus_[B.b], nb_) : (B.nw + nb_ - 1) / nb_;
    rows_[i] = B.mw + (kb_.vectors ? B.nw : 0);
    P_.mw_max = std::max(P_.mw_max, B.mw);
    P_.nw_max = std::max(P_.nw_max, B.nw);
  }
  P_.col_iters = (P_.nw_max + P_.ngroups - 1) / P_.ngroups;
}

template <class Tstd, int K> cudaError_t BlockedRun<Tstd, K>::upload_mats() {
  return upload(const_cast<BlkMat *>(P_.mats), mats_, stream_);
}

// Dynamic shared memory (and carveouts) of the eigensolver and pair kernels.
template <class Tstd, int K> cudaError_t BlockedRun<Tstd, K>::configure_kernels() {
  lean_on_ = kLean && nb_ == K / 2 && plan::evd_lean(tuning_);
  if constexpr (kLean)
    if (lean_on_) {
      BSVD_BLK_TRY(cudaFuncSetAttribute(blk_evd_lean_kernel<Tstd, K>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        int(kLeanSmem)));
      BSVD_BLK_TRY(cudaFuncSetAttribute(blk_evd_lean_kernel<Tstd, K>,
                                        cudaFuncAttributePreferredSharedMemoryCarveout,
                                        int(cudaSharedmemCarveoutMaxShared)));
    }
  if constexpr (!kWide) {
    // The warp plan where it fits a block (z: 140 KB, above a 99 KiB GPU's
    // limit; the plan never takes it there: CudaFacts::evd_warp_fits).
    if (kEvdSmem <= size_t(max_smem_optin())) {
      BSVD_BLK_TRY(cudaFuncSetAttribute(blk_evd_warp_kernel<Tstd, K>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        int(kEvdSmem)));
      BSVD_BLK_TRY(cudaFuncSetAttribute(blk_evd_warp_kernel<Tstd, K>,
                                        cudaFuncAttributePreferredSharedMemoryCarveout,
                                        int(cudaSharedmemCarveoutMaxShared)));
    }
    // The block plans' two G buffers (z: 52 KB, above the 48 KB default).
    BSVD_BLK_TRY(cudaFuncSetAttribute(blk_evd_block_kernel<Tstd, K, 128>,
                                      cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      int(kBlockSmem)));
    BSVD_BLK_TRY(configure_pair_kernels());
  }
  // The 256-thread block plan (the wide instance's only one: d 105 KB, two
  // blocks per SM with the carveout at its maximum).
  BSVD_BLK_TRY(cudaFuncSetAttribute(blk_evd_block_kernel<Tstd, K, 256>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, int(kBlockSmem)));
  if constexpr (kWide)
    BSVD_BLK_TRY(cudaFuncSetAttribute(blk_evd_block_kernel<Tstd, K, 256>,
                                      cudaFuncAttributePreferredSharedMemoryCarveout,
                                      int(cudaSharedmemCarveoutMaxShared)));
  return cudaSuccess;
}

// Shared memory of the pair kernels: their largest matrix (the narrow
// instance only).
template <class Tstd, int K> cudaError_t BlockedRun<Tstd, K>::configure_pair_kernels() {
  for (int i = 0; i < cnt_; ++i)
    if (mode_[i] != BSVD_PAIR_GRAM) {
      size_t &b = pair_smem_[mode_[i] == BSVD_PAIR_SVD_SM];
      b = std::max(b, pair_smem_bytes<T, K>(mats_[i].mw));
    }
  if (pair_smem_[0])
    BSVD_BLK_TRY(cudaFuncSetAttribute(blk_pair_kernel<Tstd, K, false>,
                                      cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      int(pair_smem_[0])));
  if (hyp_) return blk_hyp_configure<Tstd>(pair_smem_[1], 0);
  if (pair_smem_[1])
    BSVD_BLK_TRY(cudaFuncSetAttribute(blk_pair_kernel<Tstd, K, true>,
                                      cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      int(pair_smem_[1])));
  return cudaSuccess;
}

// W, V and the state words; the host waits for the state.
template <class Tstd, int K> cudaError_t BlockedRun<Tstd, K>::launch_load() {
  timer_.on = tuning_.blocked.profile && !device_loop_;
  timer_.stream = stream_;
  timer_.mark(kStageLoad);
  blk_load_kernel<Tstd><<<cnt_, 256, 0, stream_>>>(P_);
  ++prof_.launches;
  BSVD_BLK_TRY(cudaGetLastError());
  timer_.mark(kStageEnd);
  return cudaSuccess;
}

template <class Tstd, int K> cudaError_t BlockedRun<Tstd, K>::load() {
  BSVD_BLK_TRY(launch_load());
  state_.resize(size_t(cnt_) * kBsWords);
  BSVD_BLK_TRY(cudaMemcpyAsync(state_.data(), P_.state, state_.size() * sizeof(int),
                               cudaMemcpyDeviceToHost, stream_));
  BSVD_BLK_TRY(cudaStreamSynchronize(stream_));
  timer_.collect();
  return cudaSuccess;
}

// The active list, the inner sweep rules and the Gram stage's engine per
// matrix (host; the cuBLAS handle is created here when one is needed).
template <class Tstd, int K> void BlockedRun<Tstd, K>::start_iteration() {
  conv_.assign(cnt_, 0);
  sweeps_.assign(cnt_, 0);
  rot_.resize(cnt_);
  subst_.assign(hyp_ ? cnt_ : 0, 0);
  subrun_.assign(hyp_ ? cnt_ : 0, 0);
  // Inner sweeps per matrix and outer sweep: cfg.eig_sweeps, or the rule of
  // inner_sweeps.hpp on the counted rotations (as the CPU twin; a single
  // block takes no rule there either).
  rules_.resize(cnt_);
  esw_.resize(cnt_);
  for (int i = 0; i < cnt_; ++i) {
    if (state_[size_t(i) * kBsWords + kBsStart])
      active_.push_back(i);
    else
      conv_[i] = 1; // zero (converged, 0 sweeps) or non-finite (reported by info)
  }
  max_sweeps_ = cfg_.max_sweeps > 0 ? cfg_.max_sweeps : kDefaultMaxSweeps;
  choose_cublas_matrices();
}

// The Gram stage by cuBLAS for the matrices the plan gives it, when a
// handle exists.
template <class Tstd, int K> void BlockedRun<Tstd, K>::choose_cublas_matrices() {
  cub_.assign(bp_.cublas.begin(), bp_.cublas.end());
  const bool any_cub = std::find(cub_.begin(), cub_.end(), 1) != cub_.end();
  if (any_cub && !gram_cublas_available()) std::fill(cub_.begin(), cub_.end(), 0);
}

// The finish (blk_finish_kernel), one thread block per matrix, launched for
// a group of matrices. A matrix that converges while others iterate is
// finished on a side stream at once: the iteration's tail (a few matrices'
// dependent steps) leaves most of the GPU idle, and the finish of a
// rank-deficient matrix (the completion of its null columns, on one
// multiprocessor) then runs beside it instead of after it.
template <class Tstd, int K> cudaError_t BlockedRun<Tstd, K>::configure_finish() {
  fsmem_ = size_t(blk_finish_pad(P_.nw_max)) * (sizeof(R) + 3 * sizeof(int));
  if (kb_.vectors) {
    // The completion's rounds: X and C of the widest round the batch needs
    // (completion_block, rotation.hpp; the same widths as the CPU twin), if
    // the device has the shared memory for them (beyond ~6000 columns it
    // has not: every matrix then completes one column at a time, where the
    // CPU twin still takes rounds -- the same kind of completion, possibly
    // other columns).
    size_t xc = 0;
    for (int i = 0; i < cnt_; ++i)
      xc = std::max(xc, size_t(mats_[i].mw + mats_[i].nw) *
                            size_t(completion_block(mats_[i].mw, mats_[i].nw, int(sizeof(T)))) *
                            sizeof(T));
    xc = (xc + 15) & ~size_t(15);
    const size_t with = fsmem_ + xc + round_scratch_bytes(kFinishThreads, sizeof(T), P_.nw_max);
    if (xc > 0 && with <= size_t(max_smem_optin())) {
      P_.round_bytes = int(xc);
      fsmem_ = with;
    }
  }
  if (hyp_)
    BSVD_BLK_TRY(blk_hyp_configure<Tstd>(0, fsmem_));
  else if (fsmem_ > 48 * 1024)
    BSVD_BLK_TRY(cudaFuncSetAttribute(blk_finish_kernel<Tstd>,
                                      cudaFuncAttributeMaxDynamicSharedMemorySize, int(fsmem_)));
  Pf_ = P_; // the finish's team: kFinishThreads per matrix
  Pf_.tpm = kFinishThreads;
  Pf_.ngroups = kFinishThreads / 32;
  Pf_.col_iters = (P_.nw_max + Pf_.ngroups - 1) / Pf_.ngroups;
  fin_.resize(3 * size_t(cnt_));
  finished_.assign(cnt_, 0);
  return cudaSuccess;
}

// The sweep's plan: the order of the active matrices and every decision
// of the sweep (host only; P_ takes the Gram path's active slice and plan).
template <class Tstd, int K>
typename BlockedRun<Tstd, K>::SweepPlan BlockedRun<Tstd, K>::plan_sweep() {
  SweepPlan sp;
  order_active(sp);
  for (int i = 0; i < cnt_; ++i)
    esw_[i] = inner_sweep_cap(cfg_.eig_sweeps, rules_[i], kInnerConvergeCap);
  sp.pe = P_;
  sp.ps = P_;
  P_.nact = sp.nby[0];
  sp.pe.act = dact_ + sp.nby[0];
  sp.pe.nact = sp.nby[1];
  sp.ps.act = dact_ + sp.nby[0] + sp.nby[1];
  sp.ps.nact = sp.nby[2];
  const plan::SweepChoice c = plan::plan_sweep(tuning_, kPrec, count_sweep(sp));
  sp.evd_nt = c.evd_threads;
  sp.lean = c.lean && lean_on_;
  sp.gram = c.gram;
  sp.split = c.split;
  set_gram_plan(sp);
  sp.urows = unsigned((sp.rmax + 127) / 128);
  set_groups(sp);
  return sp;
}

// order_: the active matrices by pair mode (Gram, EVD_SM, SVD_SM), the
// Gram ones own kernel first, then cuBLAS by mw; the cuBLAS matrices'
// first GEMMs (gbase_) and GEMM groups (groups_).
template <class Tstd, int K> void BlockedRun<Tstd, K>::order_active(SweepPlan &sp) {
  order_.clear();
  for (int want : {int(BSVD_PAIR_GRAM), int(BSVD_PAIR_EVD_SM), int(BSVD_PAIR_SVD_SM)})
    for (int i : active_)
      if (mode_[i] == want) {
        order_.push_back(i);
        ++sp.nby[want - BSVD_PAIR_GRAM];
        sp.steps = std::max(sp.steps, wcycle_steps(nblk_[i], wr_, we_));
        if (want == BSVD_PAIR_GRAM) {
          sp.rmax = std::max(sp.rmax, rows_[i]);
          sp.gram_pairs += pairs_of(i);
        }
      }
  const auto gend = order_.begin() + sp.nby[0];
  const auto cfirst = std::stable_partition(order_.begin(), gend, [&](int i) { return !cub_[i]; });
  std::stable_sort(cfirst, gend, [&](int a, int b) { return mats_[a].mw < mats_[b].mw; });
  P_.nown = int(cfirst - order_.begin());
  P_.ncub = sp.nby[0] - P_.nown;
  gbase_.clear();
  groups_.clear();
  long long at = 0;
  for (auto it = cfirst; it != gend; ++it) {
    const int i = *it;
    gbase_.push_back(int(at));
    const long long gemms = 3LL * (nblk_[i] / 2);
    if (groups_.empty() || groups_.back().mw != mats_[i].mw)
      groups_.push_back({mats_[i].mw, at, 0});
    groups_.back().count += gemms;
    at += gemms;
  }
}

// What the sweep's rule needs: the Gram path's pairs per step; whether the
// step is full (every Gram-path matrix has full pairs: two or more blocks,
// all nb wide -- a single block is a pair of width nb, not 2 nb) and takes
// one inner sweep, which the lean kernel needs; the own Gram kernel's pairs
// per matrix, its pair slots and its tallest pair's row segments (the split
// plan; own_slots x own_segs <= kGramSplitMaxTiles implies it fits
// L_.gp_tiles).
template <class Tstd, int K>
plan::SweepCounts BlockedRun<Tstd, K>::count_sweep(const SweepPlan &sp) const {
  plan::SweepCounts c;
  c.wide = kWide;
  c.lean_kernel = kLean && nb_ == K / 2;
  c.gram_pairs = sp.gram_pairs;
  for (int j = 0; j < sp.nby[0]; ++j) {
    c.full = c.full && plan::full_pairs(mats_[order_[j]].nw, nb_);
    c.one_inner = c.one_inner && esw_[order_[j]] == 1;
  }
  int own_mw = 0;
  for (int j = 0; j < P_.nown; ++j) {
    c.own_pairs.push_back(pairs_of(order_[j]));
    own_mw = std::max(own_mw, mats_[order_[j]].mw);
  }
  c.own_segs = (own_mw + kGramSegRows - 1) / kGramSegRows;
  c.own_slots = long(P_.nown) * P_.half;
  c.split_max_tiles = kGramSplitMaxTiles;
  c.timer_on = timer_.on;
  return c;
}

// The split plan's partial tiles and segments for the Gram launches.
template <class Tstd, int K> void BlockedRun<Tstd, K>::set_gram_plan(SweepPlan &sp) {
  int own_mw = 0;
  for (int j = 0; j < P_.nown; ++j) own_mw = std::max(own_mw, mats_[order_[j]].mw);
  sp.own_segs = (own_mw + kGramSegRows - 1) / kGramSegRows;
  P_.Gp = sp.gram == GramPlan::kSplit ? gp_base_ : nullptr;
  P_.gseg = sp.gram == GramPlan::kSplit ? sp.own_segs : 0;
}

// Two groups of the Gram path's matrices (sp.split > 0), each on its own
// stream: the first `split` own-kernel matrices on the side stream pipe_,
// the rest on the call's stream. Their steps are independent, so one
// group's eigensolver (latency-bound) may run beside the other's Gram or
// update (memory-bound). The slots of the second group start after the
// first group's in G, Q and pflag.
template <class Tstd, int K> void BlockedRun<Tstd, K>::set_groups(SweepPlan &sp) const {
  sp.p1 = P_;
  sp.p2 = P_;
  if (sp.split > 0) {
    sp.p1.nown = sp.p1.nact = sp.split;
    sp.p1.ncub = 0;
    sp.p2.act = dact_ + sp.split;
    sp.p2.nown = P_.nown - sp.split;
    sp.p2.nact = P_.nact - sp.split;
    const size_t first = size_t(sp.split) * size_t(P_.half);
    sp.p2.G = P_.G + first * K * K;
    if (P_.gseg) sp.p2.Gp = P_.Gp + first * size_t(P_.gseg) * K * K;
    sp.p2.Q = P_.Q + first * K * K;
    sp.p2.pflag = P_.pflag + first;
  }
}

template <class Tstd, int K> void BlockedRun<Tstd, K>::store_profile() {
  prof_.total = std::chrono::duration<double, std::milli>(Clock::now() - t0_).count();
  blocked_store_profile(prof_);
}

template <class Tstd, int K> cudaError_t BlockedRun<Tstd, K>::enqueue() {
  device_loop_ = true;
  loop_.alive = reinterpret_cast<int *>(ws_ + L_.alive);
  loop_.sweeps = reinterpret_cast<int *>(ws_ + L_.msweeps);
  loop_.rules = reinterpret_cast<InnerSweepRule *>(ws_ + L_.rules);
  loop_.counter = reinterpret_cast<int *>(ws_ + L_.counter);
  loop_.subrun = hyp_ ? reinterpret_cast<int *>(ws_ + L_.subrun) : nullptr;
  loop_.cnt = cnt_;
  loop_.nb = nb_;
  loop_.max_sweeps = cfg_.max_sweeps > 0 ? cfg_.max_sweeps : kDefaultMaxSweeps;
  loop_.eig_sweeps = cfg_.eig_sweeps;
  P_.alive = loop_.alive;
  BSVD_BLK_TRY(upload_mats());
  BSVD_BLK_TRY(configure_kernels());
  BSVD_BLK_TRY(launch_load());
  // One plan for every sweep: all matrices in the order, the first sweep's
  // rule (the host driver re-plans per sweep for the active ones); the
  // Gram stage by the own kernel (a cuBLAS batched GEMM takes its count
  // from the host).
  for (int i = 0; i < cnt_; ++i) active_.push_back(i);
  rules_.assign(cnt_, InnerSweepRule());
  esw_.resize(cnt_);
  cub_.assign(cnt_, 0);
  BSVD_BLK_TRY(configure_finish());
  SweepPlan sp = plan_sweep();
  if (sp.lean && cfg_.eig_sweeps == BSVD_EIG_SWEEPS_AUTO) {
    P_.evd_lean = loop_.counter + 1;
    sp.pe.evd_lean = sp.ps.evd_lean = sp.p1.evd_lean = sp.p2.evd_lean = P_.evd_lean;
  }
  BSVD_BLK_TRY(upload(dact_, order_, stream_));
  BSVD_BLK_TRY(enqueue_loop(sp));
  BSVD_BLK_TRY(enqueue_finish());
  store_profile();
  return cudaSuccess;
}

// start, the while node (the sweep's steps and end), on the captured stream.
template <class Tstd, int K> cudaError_t BlockedRun<Tstd, K>::enqueue_loop(SweepPlan &sp) {
  DeviceWhile loop;
  BSVD_BLK_TRY(loop.create(stream_));
  const cudaGraphConditionalHandle cond = loop.handle();
  blk_loop_start_kernel<Tstd><<<1, kLoopThreads, 0, stream_>>>(P_, loop_, cond);
  BSVD_BLK_TRY(cudaGetLastError());
  return loop.add(stream_, [&](cudaStream_t body) -> cudaError_t {
    SideStream pipe(body);
    BSVD_BLK_TRY(run_sweep(sp, body, pipe));
    blk_loop_end_kernel<Tstd><<<1, kLoopThreads, 0, body>>>(P_, loop_, cond);
    return cudaGetLastError();
  });
}

// Every matrix's finish after the loop (the host driver finishes early
// converged ones beside the iteration; here the device alone knows them).
template <class Tstd, int K> cudaError_t BlockedRun<Tstd, K>::enqueue_finish() {
  blk_loop_fin_kernel<Tstd><<<unsigned((cnt_ + 255) / 256), 256, 0, stream_>>>(loop_, dfin_);
  BSVD_BLK_TRY(cudaGetLastError());
  BlkParams<Tstd> Pl = Pf_;
  Pl.fin = dfin_;
  if (hyp_)
    blk_hyp_finish_launch<Tstd>(Pl, unsigned(cnt_), fsmem_, stream_);
  else
    blk_finish_kernel<Tstd><<<unsigned(cnt_), kFinishThreads, fsmem_, stream_>>>(Pl);
  ++prof_.launches;
  return cudaGetLastError();
}

template <class Tstd, int K>
cudaError_t run_blocked_impl(const Batch<Tstd> &kb, const std::vector<int> &idx,
                             const std::vector<int> &m, const std::vector<int> &n,
                             const plan::BlockedPlan &bp, const plan::Plan &p, cudaStream_t stream,
                             unsigned char *ws, const int *hnplus) {
  static_assert(K == kBlockedKmax || K == kBlockedKwide, "the compiled instances");
  const auto t0 = std::chrono::steady_clock::now();
  if (idx.empty()) return cudaSuccess;
  if (blocked_k_of(bp.nb) != K || bp.nb < 1 || bp.mode.size() != idx.size() ||
      bp.cublas.size() != idx.size())
    return cudaErrorInvalidValue;
  if constexpr (K != kBlockedKmax)
    for (int x : bp.mode)
      if (x != BSVD_PAIR_GRAM) return cudaErrorInvalidValue;
  if (hnplus) { // the HSVD: the one-sided pair solver, one-level ordering, m >= n
    bool ok = K == kBlockedKmax && kb.nplus && bp.wr == 1 && bp.we == 1;
    for (size_t i = 0; ok && i < idx.size(); ++i)
      ok = bp.mode[i] == BSVD_PAIR_SVD_SM && m[i] >= n[i] && hnplus[idx[i]] >= 0 &&
           hnplus[idx[i]] <= n[i];
    if (!ok) return cudaErrorInvalidValue;
  }
  if (p.cfg.exec != Exec::kAsync) {
    BlockedRun<Tstd, K> call(t0, kb, idx, m, n, bp, p, stream, ws, hnplus);
    return call.run();
  }
  // The loop is a graph node: the stream is the caller's capture or the
  // one the backend makes for an uncaptured call (GraphCall).
  if (!stream_capturing(stream)) return cudaErrorInvalidValue; // (the backend captures)
  BlockedRun<Tstd, K> call(t0, kb, idx, m, n, bp, p, stream, ws, hnplus);
  return call.enqueue();
}

// The instance for nb (blocked_k_of): the wide one where the precision has
// it (blocked_has_wide), else an invalid value (plan::blocked_nb never gives
// such an nb).
template <class Tstd>
cudaError_t run_blocked_any(const Batch<Tstd> &kb, const std::vector<int> &idx,
                            const std::vector<int> &m, const std::vector<int> &n,
                            const plan::BlockedPlan &bp, const plan::Plan &p, cudaStream_t stream,
                            unsigned char *ws, const int *hnplus) {
  if (blocked_k_of(bp.nb) == kBlockedKmax)
    return run_blocked_impl<Tstd, kBlockedKmax>(kb, idx, m, n, bp, p, stream, ws, hnplus);
  if constexpr (blocked_has_wide(precision_of<Tstd>()))
    return run_blocked_impl<Tstd, kBlockedKwide>(kb, idx, m, n, bp, p, stream, ws, hnplus);
  return cudaErrorInvalidValue;
}

} // namespace bsvd::detail::cuda

// One sweep's execution on the host-driven loop and the finishes.
#include "driver_sweep.cuh"

#undef BSVD_BLK_TRY
