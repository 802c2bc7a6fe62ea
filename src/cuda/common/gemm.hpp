// One strided-batched GEMM call for every precision (the Gram
// preconditioning's products, the distributed solve's Gram matrices and
// updates).
#pragma once

#include <cublas_v2.h>

namespace bsvd::detail::cuda {

// The element type of a precision letter ('s', 'd', 'c', 'z').
constexpr cudaDataType data_type(char p) {
  switch (p) {
  case 's': return CUDA_R_32F;
  case 'd': return CUDA_R_64F;
  case 'c': return CUDA_C_32F;
  default: return CUDA_C_64F;
  }
}

// C = alpha op(A) B + beta C for `count` matrices at element strides, op(A)
// = A^H (A^T when real) when conj_a, else A; m x n results of inner
// dimension k. t: the element type; the compute type is the precision's (no
// TF32: the pedantic single-precision compute type, as the blocked path's
// cuBLAS Gram).
cublasStatus_t gemm_strided(cublasHandle_t h, cudaDataType t, bool conj_a, int m, int n, int k,
                            const void *alpha, const void *A, int lda, long long sa, const void *B,
                            int ldb, long long sb, const void *beta, void *C, int ldc, long long sc,
                            int count);

} // namespace bsvd::detail::cuda
