// The library handles of cuBLAS and cuSOLVER: one per thread and device,
// created on first use and kept until the process ends (destroying one from
// a thread-exit or static destructor can run after the CUDA context is
// gone). nullptr when the library cannot create one.
#pragma once

#include <cublas_v2.h>
#include <cusolverDn.h>

namespace bsvd::detail::cuda {

cublasHandle_t cublas_handle();
cusolverDnHandle_t cusolver_handle();

} // namespace bsvd::detail::cuda
