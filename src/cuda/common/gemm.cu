// gemm.hpp.
#include "gemm.hpp"

namespace bsvd::detail::cuda {

cublasStatus_t gemm_strided(cublasHandle_t h, cudaDataType t, bool conj_a, int m, int n, int k,
                            const void *alpha, const void *A, int lda, long long sa, const void *B,
                            int ldb, long long sb, const void *beta, void *C, int ldc, long long sc,
                            int count) {
  const bool dbl = t == CUDA_R_64F || t == CUDA_C_64F;
  const bool cpx = t == CUDA_C_32F || t == CUDA_C_64F;
  const cublasOperation_t op = conj_a ? (cpx ? CUBLAS_OP_C : CUBLAS_OP_T) : CUBLAS_OP_N;
  return cublasGemmStridedBatchedEx(
      h, op, CUBLAS_OP_N, m, n, k, alpha, A, t, lda, sa, B, t, ldb, sb, beta, C, t, ldc, sc, count,
      dbl ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_GEMM_DEFAULT);
}

} // namespace bsvd::detail::cuda
