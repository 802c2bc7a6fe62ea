// The blocked path's host driver (driver.cuh), continued: one sweep's
// execution on the host-driven loop -- its uploads, its steps (Gram, pair
// solve, update; the own or cuBLAS Gram kernel, the eigensolver plans),
// the convergence read-back and the early finishes -- and the finish of the
// matrices left at the end. Included by driver.cuh only (BSVD_BLK_TRY).
#pragma once

#ifndef BSVD_BLK_TRY
#error "driver_sweep.cuh is a part of driver.cuh: include that"
#endif

namespace bsvd::detail::cuda {

// The sweep's order, cuBLAS GEMM positions and inner sweep caps to the
// device; the rotation counters zeroed.
template <class Tstd, int K> cudaError_t BlockedRun<Tstd, K>::upload_sweep() {
  BSVD_BLK_TRY(upload(dact_, order_, stream_));
  BSVD_BLK_TRY(upload(dgbase_, gbase_, stream_));
  BSVD_BLK_TRY(cudaMemsetAsync(P_.rot, 0, cnt_ * sizeof(int), stream_));
  if (hyp_) BSVD_BLK_TRY(cudaMemsetAsync(P_.subst, 0, cnt_ * sizeof(int), stream_));
  BSVD_BLK_TRY(upload(desw_, esw_, stream_));
  return cudaSuccess;
}

// The sweep's steps (with two stream groups: pipe_ forked before, joined
// after).
template <class Tstd, int K>
cudaError_t BlockedRun<Tstd, K>::run_sweep(SweepPlan &sp, cudaStream_t main, SideStream &pipe) {
  if (sp.split > 0) {
    BSVD_BLK_TRY(pipe.fork());
    ++prof_.split_sweeps;
  }
  for (int s = 0; s < sp.steps; ++s) BSVD_BLK_TRY(run_step(sp, s, main, pipe));
  if (sp.split > 0) BSVD_BLK_TRY(pipe.join());
  return cudaSuccess;
}

// Step s: the Gram path (one group or two), then the pair kernels.
template <class Tstd, int K> cudaError_t
BlockedRun<Tstd, K>::run_step(SweepPlan &sp, int s, cudaStream_t main, SideStream &pipe) {
  P_.step = sp.pe.step = sp.ps.step = sp.p1.step = sp.p2.step = s;
  if (sp.split > 0) {
    BSVD_BLK_TRY(gram_path_step(sp.p1, pipe.get(), sp));
    BSVD_BLK_TRY(gram_path_step(sp.p2, main, sp));
  } else if (P_.nact) {
    BSVD_BLK_TRY(gram_path_step(P_, main, sp));
  }
  if constexpr (!kWide) { // (the wide instance: every matrix on the Gram path)
    if (sp.pe.nact) {
      timer_.mark(kStagePairEvd);
      blk_pair_kernel<Tstd, K, false>
          <<<unsigned(sp.pe.nact) * unsigned(P_.half), 256, pair_smem_[0], main>>>(sp.pe);
      ++prof_.launches;
    }
    if (sp.ps.nact) {
      timer_.mark(kStagePairSvd);
      const unsigned grid = unsigned(sp.ps.nact) * unsigned(P_.half);
      if (hyp_)
        blk_hyp_pair_launch<Tstd>(sp.ps, grid, pair_smem_[1], main);
      else
        blk_pair_kernel<Tstd, K, true><<<grid, 256, pair_smem_[1], main>>>(sp.ps);
      ++prof_.launches;
    }
  }
  timer_.mark(kStageEnd);
  BSVD_BLK_TRY(cudaGetLastError());
  return cudaSuccess;
}

// One step of the Gram path (Gram, eigensolver, update) for the active
// matrices of Pg, on stream st.
template <class Tstd, int K>
cudaError_t BlockedRun<Tstd, K>::gram_path_step(const BlkParams<Tstd> &Pg, cudaStream_t st,
                                                const SweepPlan &sp) {
  const unsigned grid = unsigned(Pg.nact) * unsigned(Pg.half);
  timer_.mark(kStageGram);
  if (Pg.nown) launch_gram_own(Pg, st, sp.gram);
  if (Pg.ncub) BSVD_BLK_TRY(launch_gram_cublas(Pg, st));
  timer_.mark(kStageEvd);
  launch_evd(Pg, st, sp);
  timer_.mark(kStageUpdate);
  blk_update_kernel<Tstd, K><<<dim3(grid, sp.urows), 128, 0, st>>>(Pg);
  prof_.launches += 2 + (Pg.nown > 0);
  return cudaGetLastError();
}

template <class Tstd, int K> void
BlockedRun<Tstd, K>::launch_gram_own(const BlkParams<Tstd> &Pg, cudaStream_t st, GramPlan plan) {
  const unsigned gg = unsigned(Pg.nown) * unsigned(Pg.half);
  if (plan == GramPlan::kMma) { // (d only: plan::gram_plan, gram_plan_wide)
    if constexpr (std::is_same_v<Tstd, double>)
      blk_gram_mma_kernel<Tstd, K><<<gg, gram_mma_threads<K>(), 0, st>>>(Pg);
  } else if constexpr (kWide)
    blk_gram_wide_kernel<Tstd, K><<<gg, kGramWideThreads, 0, st>>>(Pg);
  else if (plan == GramPlan::kTile4)
    blk_gram_tile4_kernel<Tstd, K><<<gg, kGramTile4Threads, 0, st>>>(Pg);
  else if (plan == GramPlan::kSplit)
    blk_gram_tile2_kernel<Tstd, K, true>
        <<<dim3(gg, unsigned(Pg.gseg)), kGramTile2Threads, 0, st>>>(Pg);
  else
    blk_gram_tile2_kernel<Tstd, K, false><<<gg, kGramTile2Threads, 0, st>>>(Pg);
  ++prof_.gram_steps[gram_plan_index(plan)];
}

// The cuBLAS matrices' Gram stage: the pointer triples, one batched GEMM
// per group of equal mw, the mirror.
template <class Tstd, int K>
cudaError_t BlockedRun<Tstd, K>::launch_gram_cublas(const BlkParams<Tstd> &Pg, cudaStream_t st) {
  const long long threads = (long long)Pg.ncub * Pg.half;
  blk_gram_ptr_kernel<Tstd, K><<<unsigned((threads + 127) / 128), 128, 0, st>>>(Pg);
  if (cudaError_t e = cudaGetLastError()) return e;
  void **A = Pg.gptr, **B = Pg.gptr + Pg.gcap, **C = Pg.gptr + 2 * Pg.gcap;
  for (const GemmGroup &g : groups_) {
    if (cudaError_t e = gram_gemm_batched(kPrec, nb_, g.mw, K, A + g.first, B + g.first,
                                          C + g.first, int(g.count), st))
      return e;
    ++prof_.gram_cublas;
  }
  blk_gram_mirror_kernel<Tstd, K><<<unsigned(threads), 256, 0, st>>>(Pg);
  prof_.launches += 2 + long(groups_.size());
  return cudaSuccess; // (the launch errors are read after the update)
}

// The eigensolver by the sweep's plan.
template <class Tstd, int K> void
BlockedRun<Tstd, K>::launch_evd(const BlkParams<Tstd> &Pg, cudaStream_t st, const SweepPlan &sp) {
  const unsigned grid = unsigned(Pg.nact) * unsigned(Pg.half);
  const unsigned warp_blocks = (grid + kEvdWarps - 1) / kEvdWarps;
  if constexpr (kWide)
    blk_evd_block_kernel<Tstd, K, 256><<<grid, 256, kBlockSmem, st>>>(Pg);
  else if (sp.evd_nt == 32) {
    if constexpr (kLean)
      if (sp.lean) {
        blk_evd_lean_kernel<Tstd, K><<<warp_blocks, 32 * kEvdWarps, kLeanSmem, st>>>(Pg);
        ++prof_.evd_lean_steps;
      }
    // (on the device the automatic rule may raise a matrix to two inner
    // sweeps mid-run: both kernels, one returns at once, Pg.evd_lean)
    if (!sp.lean || Pg.evd_lean)
      blk_evd_warp_kernel<Tstd, K><<<warp_blocks, 32 * kEvdWarps, kEvdSmem, st>>>(Pg);
  } else if (sp.evd_nt == 128)
    blk_evd_block_kernel<Tstd, K, 128><<<grid, 128, kBlockSmem, st>>>(Pg);
  else
    blk_evd_block_kernel<Tstd, K, 256><<<grid, 256, kBlockSmem, st>>>(Pg);
  ++prof_.evd_steps[plan::evd_plan_index(sp.evd_nt)];
}

// The sweep's rotation counts (the host waits): a matrix that rotated
// nothing has converged and leaves the active list. The HSVD's breakdown
// rule (the twin's, jacobi_hyperbolic_blocked.cpp): a matrix that took a
// substituted step in kHyperbolicBreakdownSweeps sweeps in a row, or in
// the last one, leaves it too, to be finished with the breakdown code.
template <class Tstd, int K> cudaError_t BlockedRun<Tstd, K>::read_convergence(int sweep) {
  BSVD_BLK_TRY(
      cudaMemcpyAsync(rot_.data(), P_.rot, cnt_ * sizeof(int), cudaMemcpyDeviceToHost, stream_));
  if (hyp_)
    BSVD_BLK_TRY(cudaMemcpyAsync(subst_.data(), P_.subst, cnt_ * sizeof(int),
                                 cudaMemcpyDeviceToHost, stream_));
  BSVD_BLK_TRY(cudaStreamSynchronize(stream_));
  timer_.collect();
  std::vector<int> still;
  converged_now_.clear();
  for (int i : active_) {
    sweeps_[i] = sweep;
    if (rot_[i]) {
      if (nblk_[i] > 1) rules_[i].after_sweep(rot_[i]);
      if (hyp_) {
        subrun_[i] = subst_[i] ? subrun_[i] + 1 : 0;
        if (subrun_[i] >= kHyperbolicBreakdownSweeps || (sweep == max_sweeps_ && subst_[i])) {
          conv_[i] = -1;
          converged_now_.push_back(i);
          continue;
        }
      }
      still.push_back(i);
    } else {
      conv_[i] = 1;
      converged_now_.push_back(i);
    }
  }
  active_.swap(still);
  prof_.sweeps = sweep;
  return cudaSuccess;
}

// The matrices that converged in this sweep, while others iterate on:
// finished beside the iteration, after what the stream has so far.
template <class Tstd, int K> cudaError_t BlockedRun<Tstd, K>::finish_converged(int sweep) {
  if (!converged_now_.empty() && !active_.empty() && sweep < max_sweeps_) {
    BSVD_BLK_TRY(side_.fork());
    BSVD_BLK_TRY(launch_finish(converged_now_, side_.get()));
  }
  return cudaSuccess;
}

template <class Tstd, int K>
cudaError_t BlockedRun<Tstd, K>::launch_finish(const std::vector<int> &which, cudaStream_t st) {
  if (which.empty()) return cudaSuccess;
  const int off = nfin_;
  for (int i : which) {
    fin_[3 * size_t(nfin_)] = i;
    fin_[3 * size_t(nfin_) + 1] = conv_[i];
    fin_[3 * size_t(nfin_) + 2] = sweeps_[i];
    finished_[i] = 1;
    ++nfin_;
  }
  cudaError_t e = upload_bytes(dfin_ + 3 * size_t(off), fin_.data() + 3 * size_t(off),
                               3 * which.size() * sizeof(int), st);
  if (e != cudaSuccess) return e;
  BlkParams<Tstd> Pl = Pf_;
  Pl.fin = dfin_ + 3 * size_t(off);
  if (hyp_)
    blk_hyp_finish_launch<Tstd>(Pl, unsigned(which.size()), fsmem_, st);
  else
    blk_finish_kernel<Tstd><<<unsigned(which.size()), kFinishThreads, fsmem_, st>>>(Pl);
  ++prof_.launches;
  return cudaGetLastError();
}

// The rest: the matrices that iterated to the end, hit the sweep limit, or
// never iterated (zero, non-finite); the call ends when the side stream's
// finishes have.
template <class Tstd, int K> cudaError_t BlockedRun<Tstd, K>::finish_rest() {
  std::vector<int> rest;
  for (int i = 0; i < cnt_; ++i)
    if (!finished_[i]) rest.push_back(i);
  timer_.mark(kStageFinish);
  BSVD_BLK_TRY(launch_finish(rest, stream_));
  BSVD_BLK_TRY(side_.join());
  timer_.mark(kStageEnd);
  if (timer_.on) {
    BSVD_BLK_TRY(cudaStreamSynchronize(stream_));
    timer_.collect();
    prof_.load = timer_.ms[kStageLoad];
    prof_.gram = timer_.ms[kStageGram];
    prof_.evd = timer_.ms[kStageEvd];
    prof_.update = timer_.ms[kStageUpdate];
    prof_.finish = timer_.ms[kStageFinish];
    prof_.pair_evd = timer_.ms[kStagePairEvd];
    prof_.pair_svd = timer_.ms[kStagePairSvd];
  }
  return cudaSuccess;
}

} // namespace bsvd::detail::cuda
