// The GPUs' descriptions, queried once per device and kept (thread-safe):
// two threads, or two GPUs, may call the library at once.
#pragma once

#include "../../plan/device.hpp"

namespace bsvd::detail::cuda {

// Whether the CUDA runtime sees a GPU.
bool gpu_visible();

// The description of device `dev` (queried on first use); false when the
// query fails.
bool device_desc(int dev, plan::DeviceDesc &out);

// The description of the calling thread's current device; false when there
// is none.
bool current_device_desc(plan::DeviceDesc &out);

// Properties of the current device that the kernels' host code reads: the
// largest dynamic shared memory per block (opt-in; 48 KiB when unknown),
// the multiprocessors (1), the compute capability's major part (0).
int max_smem_optin();
int sm_count();
int cc_major();

} // namespace bsvd::detail::cuda
