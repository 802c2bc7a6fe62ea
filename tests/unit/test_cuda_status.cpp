// How a failed CUDA call becomes a status (src/cuda/operation.hpp,
// BSVD_CUDA_TRY): memory that could not be allocated is ALLOC_FAILED, as
// bsvd.h documents (Python: MemoryError), anything else DEVICE_ERROR; the
// message names the call. Needs only the CUDA headers: no GPU, no call
// into the runtime.
#if defined(BSVD_WITH_CUDA)
#include "cuda/operation.hpp"

#include <bsvd/bsvd.h>

#include <gtest/gtest.h>

#include <string>

namespace {

using bsvd::detail::cuda::status_of;

bsvd_status_t fails_with(cudaError_t e) {
  using namespace bsvd::detail;
  BSVD_CUDA_TRY(e);
  return BSVD_STATUS_SUCCESS;
}

TEST(CudaStatus, AllocationFailureIsAllocFailed) {
  EXPECT_EQ(status_of(cudaErrorMemoryAllocation), BSVD_STATUS_ALLOC_FAILED);
  EXPECT_EQ(fails_with(cudaErrorMemoryAllocation), BSVD_STATUS_ALLOC_FAILED);
  EXPECT_NE(std::string(bsvd_last_error()).find("cudaErrorMemoryAllocation"), std::string::npos)
      << bsvd_last_error();
}

TEST(CudaStatus, OtherFailuresAreDeviceErrors) {
  for (cudaError_t e : {cudaErrorLaunchFailure, cudaErrorInvalidValue, cudaErrorIllegalAddress,
                        cudaErrorNoDevice, cudaErrorLaunchOutOfResources})
    EXPECT_EQ(fails_with(e), BSVD_STATUS_DEVICE_ERROR) << cudaGetErrorName(e);
  EXPECT_EQ(fails_with(cudaSuccess), BSVD_STATUS_SUCCESS);
}

} // namespace
#endif
