// The GPUs' descriptions, queried once per device and kept (thread-safe):
// two threads, or two GPUs, may call the library at once.
#pragma once

#include "../../plan/device.hpp"

#include <string>

namespace bsvd::detail::cuda {

// Whether the CUDA runtime sees a GPU.
bool gpu_visible();

// The description of device `dev` (queried on first use; the override
// BSVD_DEVICE_AS applied to it as read); false when the query fails.
bool device_desc(int dev, plan::DeviceDesc &out);

// The description of the calling thread's current device; false when there
// is none.
bool current_device_desc(plan::DeviceDesc &out);

// The oldest compute capability bsvd runs on (Ampere): the kernels use
// cp.async-era features, FP64 MMA and 163 KiB-class shared memory, and
// nothing older is built or tested.
constexpr int kMinCcMajor = 8;

// The CUDA architectures this build holds (CMAKE_CUDA_ARCHITECTURES).
const char *compiled_archs();

// Whether device `dev` can run this build: compute capability >= 8.0 and a
// kernel image (SASS of its architecture, or PTX the driver compiles) --
// checked once per device with cudaFuncGetAttributes, kept. why: "" when
// it can, else a sentence naming the device, its compute capability and
// the architectures built.
bool device_supported(int dev, std::string *why = nullptr);
bool current_device_supported(std::string *why = nullptr);

// Properties of the current device that the kernels' host code reads: the
// largest dynamic shared memory per block (opt-in; 48 KiB when unknown),
// the multiprocessors (1), the compute capability's major part (0).
int max_smem_optin();
int sm_count();
int cc_major();

} // namespace bsvd::detail::cuda
