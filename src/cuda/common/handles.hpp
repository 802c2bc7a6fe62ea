// The library handles of cuBLAS and cuSOLVER: one per thread and device,
// created on first use and kept until the process ends (destroying one from
// a thread-exit or static destructor can run after the CUDA context is
// gone).
//
// Creating a handle allocates device memory, which a stream capture in
// progress on the creating thread forbids in its global and thread-local
// modes (the creation fails and the capture is invalidated). The library's
// own graphs are captured after prepare_handles (backend.cu) has made the
// handles a plan needs; a first call inside the caller's capture creates
// them with this thread's capture mode relaxed for the creation alone.
#pragma once

#include <cublas_v2.h>
#include <cusolverDn.h>

namespace bsvd::detail::cuda {

// The current device's handle into *h (nullptr on failure), and the
// library's status of its creation (or of the device query before it).
cublasStatus_t cublas_handle(cublasHandle_t *h);
cusolverStatus_t cusolver_handle(cusolverDnHandle_t *h);

// The statuses' names, for error messages ("CUBLAS_STATUS_ALLOC_FAILED").
const char *cublas_status_name(cublasStatus_t st);
const char *cusolver_status_name(cusolverStatus_t st);

} // namespace bsvd::detail::cuda
