// The blocked path's stage profile (Overrides::profile, BSVD_PROFILE;
// BlockedProfile in blocked.hpp): CUDA events at the start of each stage
// on the call's stream, folded into milliseconds per stage after each
// host synchronization.
#pragma once

#include "blocked.hpp"

#include <cstddef>
#include <vector>

#include <cuda_runtime.h>

namespace bsvd::detail::cuda {

// The stages BlkTimer times: BlockedProfile's fields.
enum BlkStage : int {
  kStageEnd = -1, // the end of the stage before
  kStageLoad = 0,
  kStageGram = 1,
  kStageEvd = 2,
  kStageUpdate = 3,
  kStageFinish = 4,
  kStagePairEvd = 5,
  kStagePairSvd = 6
};

// Stage timing with events (profiling only).
struct BlkTimer {
  bool on = false;
  cudaStream_t stream = nullptr;
  std::vector<cudaEvent_t> ev;
  std::vector<int> stage;
  double ms[7] = {0, 0, 0, 0, 0, 0, 0};
  void mark(int s) { // event at the start of stage s (kStageEnd: end of the last)
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

void blocked_store_profile(const BlockedProfile &p);

} // namespace bsvd::detail::cuda
