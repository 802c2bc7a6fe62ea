// The blocked path's host driver (run_blocked, blocked.hpp).
#pragma once

#include "../../core/inner_sweeps.hpp"
#include "../../core/ordering.hpp"
#include "../common/side_stream.hpp"
#include "../fused.hpp" // max_smem_optin
#include "../tuning.hpp"
#include "blocked.hpp"
#include "evd_block.cuh"
#include "evd_lean.cuh"
#include "evd_warp.cuh"
#include "finish.cuh"
#include "gram.cuh"
#include "gram_cublas.cuh"
#include "gram_mma.cuh"
#include "gram_wide.cuh"
#include "layout.hpp"
#include "load.cuh"
#include "pair.cuh"
#include "update.cuh"

#include <algorithm>
#include <chrono>
#include <type_traits>
#include <vector>

namespace bsvd::detail::cuda {

// Stage timing with events (profiling only).
struct BlkTimer {
  bool on = false;
  cudaStream_t stream = nullptr;
  std::vector<cudaEvent_t> ev;
  std::vector<int> stage;
  double ms[7] = {0, 0, 0, 0, 0, 0, 0};
  void mark(int s) { // event at the start of stage s (-1: end of the last)
    if (!on) return;
    cudaEvent_t e;
    cudaEventCreate(&e);
    cudaEventRecord(e, stream);
    ev.push_back(e);
    stage.push_back(s);
  }
  void collect() { // after a synchronization: fold the recorded intervals
    if (!on || ev.empty()) return;
    for (size_t i = 0; i + 1 < ev.size(); ++i) {
      float f = 0;
      cudaEventElapsedTime(&f, ev[i], ev[i + 1]);
      if (stage[i] >= 0) ms[stage[i]] += f;
    }
    for (size_t i = 0; i + 1 < ev.size(); ++i) cudaEventDestroy(ev[i]);
    ev.erase(ev.begin(), ev.end() - 1);
    stage.erase(stage.begin(), stage.end() - 1);
  }
  ~BlkTimer() {
    for (cudaEvent_t e : ev) cudaEventDestroy(e);
  }
};

bool blocked_profiling_on();
void blocked_store_profile(const BlockedProfile &p);

#define BSVD_BLK_TRY(call)                                                     \
  do {                                                                         \
    const cudaError_t e_ = (call);                                             \
    if (e_ != cudaSuccess) return e_;                                          \
  } while (0)

// K: the instance's Gram order (blocked_k_of(nb)): the narrow one (32)
// with every plan, or the wide one (64): the Gram path only (every mode
// BSVD_PAIR_GRAM; blocked_pair_mode gives that), its own Gram kernel (or
// cuBLAS), the block eigensolver of 256 threads.
template <class Tstd, int K>
cudaError_t run_blocked_impl(const Batch<Tstd> &kb, const std::vector<int> &idx,
                             const std::vector<int> &m, const std::vector<int> &n,
                             const std::vector<int> &mode, const Config &cfg, int nb,
                             cudaStream_t stream, unsigned char *ws) {
  using T = dev_t<Tstd>;
  using R = dreal_t<T>;
  constexpr bool kWide = K != kBlockedKmax;
  static_assert(K == kBlockedKmax || K == kBlockedKwide, "the compiled instances");
  const auto t0 = std::chrono::steady_clock::now();
  const int cnt = int(idx.size());
  BlockedProfile prof;
  if (cnt == 0) return cudaSuccess;
  if (blocked_k_of(nb) != K || nb < 1) return cudaErrorInvalidValue;
  if constexpr (kWide)
    for (int x : mode)
      if (x != BSVD_PAIR_GRAM) return cudaErrorInvalidValue;
  const int wr = cfg.wcycle_blocks, we = std::max(1, cfg.wcycle_sweeps);
  const BlkLayout L =
      blk_layout(m, n, kb.vectors, sizeof(T), nb, blocked_gram_count(mode), K, wr);

  BlkParams<Tstd> P;
  P.batch = kb;
  P.vectors = kb.vectors;
  P.nb = nb;
  P.wr = wr;
  P.we = we;
  P.half = L.half;
  P.tol = cfg.tol;
  P.mats = reinterpret_cast<const BlkMat *>(ws + L.mats);
  P.state = reinterpret_cast<int *>(ws + L.state);
  P.rot = reinterpret_cast<int *>(ws + L.rot);
  int *desw = reinterpret_cast<int *>(ws + L.esw);
  P.esw = desw;
  int *dact = reinterpret_cast<int *>(ws + L.act);
  P.act = dact;
  P.W = reinterpret_cast<T *>(ws + L.W);
  P.V = reinterpret_cast<T *>(ws + L.V);
  P.X = reinterpret_cast<T *>(ws + L.X);
  P.G = reinterpret_cast<T *>(ws + L.G);
  T *const gp_base = L.gp_tiles ? reinterpret_cast<T *>(ws + L.Gp) : nullptr;
  P.Q = reinterpret_cast<T *>(ws + L.Q);
  P.pflag = reinterpret_cast<int *>(ws + L.pflag);
  P.nullf = reinterpret_cast<R *>(ws + L.nullf);
  P.gptr = reinterpret_cast<void **>(ws + L.gptr);
  int *dgbase = reinterpret_cast<int *>(ws + L.gbase);
  P.gbase = dgbase;
  P.gcap = L.gcap;

  std::vector<BlkMat> mats(cnt);
  std::vector<int> nblk(cnt), rows(cnt);
  long long ow = 0, ov = 0, ox = 0;
  for (int i = 0; i < cnt; ++i) {
    BlkMat &B = mats[i];
    B.b = idx[i];
    B.m = m[i];
    B.n = n[i];
    B.mw = std::max(m[i], n[i]);
    B.nw = std::min(m[i], n[i]);
    B.woff = ow;
    B.voff = ov;
    B.xoff = ox;
    ow += (long long)B.mw * B.nw;
    if (kb.vectors) {
      ov += (long long)B.nw * B.nw;
      ox += 2 * B.mw + B.nw;
    }
    nblk[i] = (B.nw + nb - 1) / nb;
    rows[i] = B.mw + (kb.vectors ? B.nw : 0);
    P.mw_max = std::max(P.mw_max, B.mw);
    P.nw_max = std::max(P.nw_max, B.nw);
  }
  P.col_iters = (P.nw_max + P.ngroups - 1) / P.ngroups;
  BSVD_BLK_TRY(cudaMemcpyAsync(const_cast<BlkMat *>(P.mats), mats.data(), cnt * sizeof(BlkMat),
                               cudaMemcpyHostToDevice, stream));

  const size_t evd_smem = kEvdWarps * sizeof(EvdWarpSmem<T, K>);
  size_t pair_smem[2] = {0, 0}; // EVD_SM, SVD_SM
  (void)evd_smem; // (the narrow instance's plans only)
  // The lean warp kernel (d, nb 16; evd_lean_ok per sweep below).
  constexpr bool kLean = !kWide && kEvdLean<T>;
  const bool lean_on = kLean && nb == K / 2 && evd_lean_enabled();
  const size_t lean_smem = kEvdWarps * sizeof(EvdLeanSmem<T, K>);
  if constexpr (kLean)
    if (lean_on) {
      BSVD_BLK_TRY(cudaFuncSetAttribute(blk_evd_lean_kernel<Tstd, K>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        int(lean_smem)));
      BSVD_BLK_TRY(cudaFuncSetAttribute(blk_evd_lean_kernel<Tstd, K>,
                                        cudaFuncAttributePreferredSharedMemoryCarveout,
                                        int(cudaSharedmemCarveoutMaxShared)));
    }
  if constexpr (!kWide) {
    BSVD_BLK_TRY(cudaFuncSetAttribute(blk_evd_warp_kernel<Tstd, K>,
                                      cudaFuncAttributeMaxDynamicSharedMemorySize, int(evd_smem)));
    BSVD_BLK_TRY(cudaFuncSetAttribute(blk_evd_warp_kernel<Tstd, K>,
                                      cudaFuncAttributePreferredSharedMemoryCarveout,
                                      int(cudaSharedmemCarveoutMaxShared)));
    // The block plans' two G buffers (z: 52 KB, above the 48 KB default).
    BSVD_BLK_TRY(cudaFuncSetAttribute(blk_evd_block_kernel<Tstd, K, 128>,
                                      cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      int(sizeof(EvdBlockSmem<T, K>))));
    // Shared memory of the pair kernels: their largest matrix.
    for (int i = 0; i < cnt; ++i)
      if (mode[i] != BSVD_PAIR_GRAM) {
        size_t &b = pair_smem[mode[i] == BSVD_PAIR_SVD_SM];
        b = std::max(b, pair_smem_bytes<T, K>(mats[i].mw));
      }
    if (pair_smem[0])
      BSVD_BLK_TRY(cudaFuncSetAttribute(blk_pair_kernel<Tstd, K, false>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        int(pair_smem[0])));
    if (pair_smem[1])
      BSVD_BLK_TRY(cudaFuncSetAttribute(blk_pair_kernel<Tstd, K, true>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        int(pair_smem[1])));
  }
  // The 256-thread block plan (the wide instance's only one: d 105 KB, two
  // blocks per SM with the carveout at its maximum).
  BSVD_BLK_TRY(cudaFuncSetAttribute(blk_evd_block_kernel<Tstd, K, 256>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    int(sizeof(EvdBlockSmem<T, K>))));
  if constexpr (kWide)
    BSVD_BLK_TRY(cudaFuncSetAttribute(blk_evd_block_kernel<Tstd, K, 256>,
                                      cudaFuncAttributePreferredSharedMemoryCarveout,
                                      int(cudaSharedmemCarveoutMaxShared)));

  BlkTimer timer;
  timer.on = blocked_profiling_on();
  timer.stream = stream;
  long launches = 0;

  timer.mark(0);
  blk_load_kernel<Tstd><<<cnt, 256, 0, stream>>>(P);
  ++launches;
  BSVD_BLK_TRY(cudaGetLastError());
  timer.mark(-1);
  std::vector<int> state(size_t(cnt) * kBsWords);
  BSVD_BLK_TRY(cudaMemcpyAsync(state.data(), P.state, state.size() * sizeof(int),
                               cudaMemcpyDeviceToHost, stream));
  BSVD_BLK_TRY(cudaStreamSynchronize(stream));
  timer.collect();

  std::vector<int> active, conv(cnt, 0), sweeps(cnt, 0), rot(cnt);
  // Inner sweeps per matrix and outer sweep: cfg.eig_sweeps, or the rule of
  // inner_sweeps.hpp on the counted rotations (as the CPU twin; a single
  // block takes no rule there either).
  std::vector<InnerSweepRule> rules(cnt);
  std::vector<int> esw(cnt);
  for (int i = 0; i < cnt; ++i) {
    if (state[size_t(i) * kBsWords + kBsStart]) active.push_back(i);
    else conv[i] = 1; // zero (converged, 0 sweeps) or non-finite (reported by info)
  }
  const int max_sweeps = cfg.max_sweeps > 0 ? cfg.max_sweeps : kDefaultMaxSweeps;
  // Gram stage by cuBLAS (tuning.hpp): matrices of full, evenly paired
  // blocks whose row count the rule gives to cuBLAS, when a handle exists.
  constexpr char prec = precision_of<Tstd>();
  std::vector<char> cub(cnt, 0);
  bool any_cub = false;
  for (int i = 0; i < cnt; ++i) {
    // (not with the two-level ordering: the pointer arrays hold nblk / 2
    // GEMMs of real pairs per step, which its steps need not have)
    cub[i] = mode[i] == BSVD_PAIR_GRAM && nblk[i] >= 2 && mats[i].nw % (2 * nb) == 0 &&
             wcycle_r(nblk[i], wr) == 1 && choose_gram_cublas(prec, mats[i].mw);
    any_cub = any_cub || cub[i];
  }
  if (any_cub && !gram_cublas_available()) std::fill(cub.begin(), cub.end(), 0);
  // The finish (blk_finish_kernel), one thread block per matrix, launched
  // for a group of matrices. A matrix that converges while others iterate
  // is finished on a side stream at once: the iteration's tail (a few
  // matrices' dependent steps) leaves most of the GPU idle, and the finish
  // of a rank-deficient matrix (the completion of its null columns, on one
  // multiprocessor) then runs beside it instead of after it.
  size_t fsmem = size_t(blk_finish_pad(P.nw_max)) * (sizeof(R) + 3 * sizeof(int));
  if (kb.vectors) {
    // The completion's rounds: X and C of the widest round the batch needs
    // (completion_block, rotation.hpp; the same widths as the CPU twin), if
    // the device has the shared memory for them (beyond ~6000 columns it
    // has not: every matrix then completes one column at a time, where the
    // CPU twin still takes rounds -- the same kind of completion, possibly
    // other columns).
    size_t xc = 0;
    for (int i = 0; i < cnt; ++i)
      xc = std::max(xc, size_t(mats[i].mw + mats[i].nw) *
                            size_t(completion_block(mats[i].mw, mats[i].nw, int(sizeof(T)))) *
                            sizeof(T));
    xc = (xc + 15) & ~size_t(15);
    const size_t with = fsmem + xc + round_scratch_bytes(kFinishThreads, sizeof(T), P.nw_max);
    if (xc > 0 && with <= size_t(max_smem_optin())) {
      P.round_bytes = int(xc);
      fsmem = with;
    }
  }
  if (fsmem > 48 * 1024)
    BSVD_BLK_TRY(cudaFuncSetAttribute(blk_finish_kernel<Tstd>,
                                      cudaFuncAttributeMaxDynamicSharedMemorySize, int(fsmem)));
  BlkParams<Tstd> Pf = P; // the finish's team: kFinishThreads per matrix
  Pf.tpm = kFinishThreads;
  Pf.ngroups = kFinishThreads / 32;
  Pf.col_iters = (P.nw_max + Pf.ngroups - 1) / Pf.ngroups;
  int *dfin = reinterpret_cast<int *>(ws + L.fin);
  std::vector<int> fin(3 * size_t(cnt)); // (matrix, converged, sweeps) in launch order
  std::vector<char> finished(cnt, 0);
  int nfin = 0;
  auto launch_finish = [&](const std::vector<int> &which, cudaStream_t st) -> cudaError_t {
    if (which.empty()) return cudaSuccess;
    const int off = nfin;
    for (int i : which) {
      fin[3 * size_t(nfin)] = i;
      fin[3 * size_t(nfin) + 1] = conv[i];
      fin[3 * size_t(nfin) + 2] = sweeps[i];
      finished[i] = 1;
      ++nfin;
    }
    cudaError_t e = cudaMemcpyAsync(dfin + 3 * size_t(off), fin.data() + 3 * size_t(off),
                                    3 * which.size() * sizeof(int), cudaMemcpyHostToDevice, st);
    if (e != cudaSuccess) return e;
    BlkParams<Tstd> Pl = Pf;
    Pl.fin = dfin + 3 * size_t(off);
    blk_finish_kernel<Tstd><<<unsigned(which.size()), kFinishThreads, fsmem, st>>>(Pl);
    ++launches;
    return cudaGetLastError();
  };
  SideStream side(stream); // joined and released at scope exit
  SideStream pipe(stream);  // the first group's stream when the Gram path splits in two
  const int groups_wanted = blocked_stream_groups();
  // Block pairs of matrix i per step (one for a single block).
  auto pairs_of = [&](int i) -> long { return wcycle_pairs(nblk[i], wr); };
  std::vector<int> order; // the active matrices: Gram (own kernel, then cuBLAS by mw), EVD_SM, SVD_SM
  std::vector<int> gbase;
  struct GemmGroup { int mw; long long first, count; };
  std::vector<GemmGroup> groups; // runs of equal mw among the cuBLAS matrices
  for (int sweep = 1; sweep <= max_sweeps && !active.empty(); ++sweep) {
    int steps = 1, rmax = 1, nby[3] = {0, 0, 0};
    long gram_pairs = 0; // pairs per step on the Gram path: the TLP of the eigensolver plan
    order.clear();
    for (int want : {int(BSVD_PAIR_GRAM), int(BSVD_PAIR_EVD_SM), int(BSVD_PAIR_SVD_SM)})
      for (int i : active)
        if (mode[i] == want) {
          order.push_back(i);
          ++nby[want - BSVD_PAIR_GRAM];
          steps = std::max(steps, wcycle_steps(nblk[i], wr, we));
          if (want == BSVD_PAIR_GRAM) {
            rmax = std::max(rmax, rows[i]);
            gram_pairs += pairs_of(i);
          }
        }
    // Gram segment: own-kernel matrices first, then the cuBLAS ones by mw.
    const auto gend = order.begin() + nby[0];
    const auto cfirst = std::stable_partition(order.begin(), gend, [&](int i) { return !cub[i]; });
    std::stable_sort(cfirst, gend, [&](int a, int b) { return mats[a].mw < mats[b].mw; });
    P.nown = int(cfirst - order.begin());
    P.ncub = nby[0] - P.nown;
    gbase.clear();
    groups.clear();
    long long at = 0;
    for (auto it = cfirst; it != gend; ++it) {
      const int i = *it;
      gbase.push_back(int(at));
      const long long gemms = 3LL * (nblk[i] / 2);
      if (groups.empty() || groups.back().mw != mats[i].mw) groups.push_back({mats[i].mw, at, 0});
      groups.back().count += gemms;
      at += gemms;
    }
    BSVD_BLK_TRY(cudaMemcpyAsync(dact, order.data(), order.size() * sizeof(int),
                                 cudaMemcpyHostToDevice, stream));
    if (!gbase.empty())
      BSVD_BLK_TRY(cudaMemcpyAsync(dgbase, gbase.data(), gbase.size() * sizeof(int),
                                   cudaMemcpyHostToDevice, stream));
    BSVD_BLK_TRY(cudaMemsetAsync(P.rot, 0, cnt * sizeof(int), stream));
    for (int i = 0; i < cnt; ++i) esw[i] = inner_sweep_cap(cfg.eig_sweeps, rules[i], kInnerConvergeCap);
    BSVD_BLK_TRY(cudaMemcpyAsync(desw, esw.data(), cnt * sizeof(int), cudaMemcpyHostToDevice, stream));
    BlkParams<Tstd> Pe = P, Ps = P;
    P.nact = nby[0];
    Pe.act = dact + nby[0];
    Pe.nact = nby[1];
    Ps.act = dact + nby[0] + nby[1];
    Ps.nact = nby[2];
    // Full step: every Gram-path matrix has full pairs (two or more
    // blocks, all nb wide: a single block is a pair of width nb, not 2 nb).
    // The warp plan's threshold depends on it (tuning.hpp), and the lean
    // warp kernel needs it and one inner sweep (evd_lean_enabled).
    bool full = true, one_inner = true;
    for (int j = 0; j < nby[0]; ++j) {
      full = full && full_pairs(mats[order[j]].nw, nb);
      one_inner = one_inner && esw[order[j]] == 1;
    }
    const int evd_nt = kWide ? 256 : choose_evd_threads(gram_pairs, prec, full);
    const bool lean = lean_on && evd_nt == 32 && full && one_inner;
    long own_pairs = 0; // pairs per step of the own Gram kernel: its plan's TLP
    int own_mw = 0;     // ... and its tallest pair: the split plan's segments
    for (int j = 0; j < P.nown; ++j) {
      own_pairs += pairs_of(order[j]);
      own_mw = std::max(own_mw, mats[order[j]].mw);
    }
    const int own_segs = (own_mw + kGramSegRows - 1) / kGramSegRows;
    const long long own_slots = (long long)P.nown * P.half;
    // (own_slots x own_segs <= kGramSplitMaxTiles implies it fits L.gp_tiles)
    // (the wide instance: blk_gram_wide_kernel, reported as tile 4, or for d
    // the tensor-core plan)
    const int gram_tile =
        kWide ? choose_gram_wide(prec) : choose_gram_tile(own_pairs, own_slots, own_segs, prec);
    P.Gp = gram_tile == 3 ? gp_base : nullptr;
    P.gseg = gram_tile == 3 ? own_segs : 0;
    const unsigned urows = unsigned((rmax + 127) / 128);
    // One step of the Gram path (Gram, eigensolver, update) for the active
    // matrices of Pg, on stream st.
    auto gram_step = [&](const BlkParams<Tstd> &Pg, cudaStream_t st) -> cudaError_t {
      const unsigned grid = unsigned(Pg.nact) * unsigned(Pg.half);
      timer.mark(1);
      if (Pg.nown) {
        const unsigned gg = unsigned(Pg.nown) * unsigned(Pg.half);
        if (gram_tile == 5) { // (d only: choose_gram_tile, choose_gram_wide)
          if constexpr (std::is_same_v<Tstd, double>)
            blk_gram_mma_kernel<Tstd, K><<<gg, gram_mma_threads<K>(), 0, st>>>(Pg);
        } else if constexpr (kWide)
          blk_gram_wide_kernel<Tstd, K><<<gg, kGramWideThreads, 0, st>>>(Pg);
        else if (gram_tile == 4)
          blk_gram_tile4_kernel<Tstd, K><<<gg, kGramTile4Threads, 0, st>>>(Pg);
        else if (gram_tile == 3)
          blk_gram_tile2_kernel<Tstd, K, true>
              <<<dim3(gg, unsigned(Pg.gseg)), kGramTile2Threads, 0, st>>>(Pg);
        else
          blk_gram_tile2_kernel<Tstd, K, false><<<gg, kGramTile2Threads, 0, st>>>(Pg);
        ++prof.gram_steps[gram_tile == 5 ? 3 : gram_tile == 4 ? 1 : gram_tile == 3 ? 2 : 0];
      }
      if (Pg.ncub) {
        const long long threads = (long long)Pg.ncub * Pg.half;
        blk_gram_ptr_kernel<Tstd, K><<<unsigned((threads + 127) / 128), 128, 0, st>>>(Pg);
        if (cudaError_t e = cudaGetLastError()) return e;
        void **A = Pg.gptr, **B = Pg.gptr + Pg.gcap, **C = Pg.gptr + 2 * Pg.gcap;
        for (const GemmGroup &g : groups) {
          if (cudaError_t e = gram_gemm_batched(prec, nb, g.mw, K, A + g.first, B + g.first,
                                                C + g.first, int(g.count), st))
            return e;
          ++prof.gram_cublas;
        }
        blk_gram_mirror_kernel<Tstd, K><<<unsigned(threads), 256, 0, st>>>(Pg);
        launches += 2 + long(groups.size());
      }
      timer.mark(2);
      if constexpr (kWide)
        blk_evd_block_kernel<Tstd, K, 256><<<grid, 256, sizeof(EvdBlockSmem<T, K>), st>>>(Pg);
      else if (evd_nt == 32) {
        if constexpr (kLean)
          if (lean) {
            blk_evd_lean_kernel<Tstd, K>
                <<<(grid + kEvdWarps - 1) / kEvdWarps, 32 * kEvdWarps, lean_smem, st>>>(Pg);
            ++prof.evd_lean_steps;
          }
        if (!lean)
          blk_evd_warp_kernel<Tstd, K>
              <<<(grid + kEvdWarps - 1) / kEvdWarps, 32 * kEvdWarps, evd_smem, st>>>(Pg);
      }
      else if (evd_nt == 128)
        blk_evd_block_kernel<Tstd, K, 128><<<grid, 128, sizeof(EvdBlockSmem<T, K>), st>>>(Pg);
      else
        blk_evd_block_kernel<Tstd, K, 256><<<grid, 256, sizeof(EvdBlockSmem<T, K>), st>>>(Pg);
      ++prof.evd_steps[evd_plan_index(evd_nt)];
      timer.mark(3);
      blk_update_kernel<Tstd, K><<<dim3(grid, urows), 128, 0, st>>>(Pg);
      launches += 2 + (Pg.nown > 0);
      return cudaGetLastError();
    };
    // Two groups of the Gram path's matrices, each on its own stream
    // (blocked_stream_groups, tuning.hpp): the first `split` own-kernel
    // matrices (about half the step's pairs) on the side stream `pipe`, the
    // rest on stream. Their steps are independent, so one group's
    // eigensolver (latency-bound) may run beside the other's Gram or update
    // (memory-bound). The slots of the second group start after the first
    // group's in G, Q and pflag. Not with the stage timer (its events are
    // on stream).
    int split = 0;
    if (groups_wanted == 2 && !timer.on && P.nown >= 2) {
      long acc = 0;
      while (split < P.nown - 1 && 2 * acc < gram_pairs) {
        acc += pairs_of(order[split]);
        ++split;
      }
    }
    BlkParams<Tstd> P1 = P, P2 = P;
    if (split > 0) {
      P1.nown = P1.nact = split;
      P1.ncub = 0;
      P2.act = dact + split;
      P2.nown = P.nown - split;
      P2.nact = P.nact - split;
      const size_t first = size_t(split) * size_t(P.half);
      P2.G = P.G + first * K * K;
      if (P.gseg) P2.Gp = P.Gp + first * size_t(P.gseg) * K * K;
      P2.Q = P.Q + first * K * K;
      P2.pflag = P.pflag + first;
      BSVD_BLK_TRY(pipe.fork());
      ++prof.split_sweeps;
    }
    for (int s = 0; s < steps; ++s) {
      P.step = Pe.step = Ps.step = P1.step = P2.step = s;
      if (split > 0) {
        BSVD_BLK_TRY(gram_step(P1, pipe.get()));
        BSVD_BLK_TRY(gram_step(P2, stream));
      } else if (P.nact) {
        BSVD_BLK_TRY(gram_step(P, stream));
      }
      if constexpr (!kWide) { // (the wide instance: every matrix on the Gram path)
        if (Pe.nact) {
          timer.mark(5);
          blk_pair_kernel<Tstd, K, false>
              <<<unsigned(Pe.nact) * unsigned(P.half), 256, pair_smem[0], stream>>>(Pe);
          ++launches;
        }
        if (Ps.nact) {
          timer.mark(6);
          blk_pair_kernel<Tstd, K, true>
              <<<unsigned(Ps.nact) * unsigned(P.half), 256, pair_smem[1], stream>>>(Ps);
          ++launches;
        }
      }
      timer.mark(-1);
      BSVD_BLK_TRY(cudaGetLastError());
    }
    if (split > 0) BSVD_BLK_TRY(pipe.join());
    BSVD_BLK_TRY(cudaMemcpyAsync(rot.data(), P.rot, cnt * sizeof(int), cudaMemcpyDeviceToHost,
                                 stream));
    BSVD_BLK_TRY(cudaStreamSynchronize(stream));
    timer.collect();
    std::vector<int> still, now;
    for (int i : active) {
      sweeps[i] = sweep;
      if (rot[i]) {
        still.push_back(i);
        if (nblk[i] > 1) rules[i].after_sweep(rot[i]);
      } else {
        conv[i] = 1;
        now.push_back(i);
      }
    }
    if (!now.empty() && !still.empty() && sweep < max_sweeps) {
      // Finished beside the iteration, after what the stream has so far.
      BSVD_BLK_TRY(side.fork());
      BSVD_BLK_TRY(launch_finish(now, side.get()));
    }
    active.swap(still);
    prof.sweeps = sweep;
  }

  // The rest: the matrices that iterated to the end, hit the sweep limit,
  // or never iterated (zero, non-finite).
  std::vector<int> rest;
  for (int i = 0; i < cnt; ++i)
    if (!finished[i]) rest.push_back(i);
  timer.mark(4);
  BSVD_BLK_TRY(launch_finish(rest, stream));
  BSVD_BLK_TRY(side.join()); // the call ends when the side stream's finishes have
  timer.mark(-1);
  if (timer.on) {
    BSVD_BLK_TRY(cudaStreamSynchronize(stream));
    timer.collect();
    prof.load = timer.ms[0];
    prof.gram = timer.ms[1];
    prof.evd = timer.ms[2];
    prof.update = timer.ms[3];
    prof.finish = timer.ms[4];
    prof.pair_evd = timer.ms[5];
    prof.pair_svd = timer.ms[6];
  }
  prof.launches = launches;
  prof.total =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  blocked_store_profile(prof);
  return cudaSuccess;
}

// The instance for nb (blocked_k_of): the wide one where the precision has
// it (blocked_has_wide), else an invalid value (blocked_nb never gives such
// an nb).
template <class Tstd>
cudaError_t run_blocked_any(const Batch<Tstd> &kb, const std::vector<int> &idx,
                            const std::vector<int> &m, const std::vector<int> &n,
                            const std::vector<int> &mode, const Config &cfg, int nb,
                            cudaStream_t stream, unsigned char *ws) {
  if (blocked_k_of(nb) == kBlockedKmax)
    return run_blocked_impl<Tstd, kBlockedKmax>(kb, idx, m, n, mode, cfg, nb, stream, ws);
  if constexpr (blocked_has_wide(precision_of<Tstd>()))
    return run_blocked_impl<Tstd, kBlockedKwide>(kb, idx, m, n, mode, cfg, nb, stream, ws);
  return cudaErrorInvalidValue;
}

#undef BSVD_BLK_TRY

} // namespace bsvd::detail::cuda
