// T1-T4 of one large matrix on the GPU (bsvd bench --devices, a case whose
// CPU check of m n k long-double products would take minutes): the
// products by cuBLAS in the working precision, the 1-norms by a kernel.
// T3 against the reference singular values given by the caller.
#pragma once

#include "bench.hpp"

#include "core/batch.hpp"
#include "cuda/common/gemm.hpp"
#include "testing/metrics.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <type_traits>
#include <vector>

namespace bsvd::cli {

// The cuBLAS / cuSOLVER element type of T (the library's table).
template <class T> constexpr cudaDataType cuda_type() {
  return detail::cuda::data_type(detail::precision_of<T>());
}

namespace large_check {

// sums[j] = sum_i |x_ij - (i == j ? d : 0)| of an m x n matrix (C = 2: complex).
template <class R, int C>
__global__ void col_abs_sums(int m, int n, const R *X, R d, double *sums) {
  const int j = blockIdx.x;
  double s = 0;
  for (int i = threadIdx.x; i < m; i += blockDim.x) {
    const R *x = X + (size_t(j) * m + i) * C;
    const R re = x[0] - (i == j ? d : R(0));
    s += C == 2 ? hypot(double(re), double(x[1])) : fabs(double(re));
  }
  __shared__ double part[256];
  part[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[j] = part[0];
}

// C = op(A) op(B) (alpha, beta), op = conjugate transpose where asked.
template <class T> bool gemm(cublasHandle_t h, bool ha, bool hb, int m, int n, int k,
                             const T &alpha, const T *A, int lda, const T *B, int ldb,
                             const T &beta, T *C, int ldc) {
  const cudaDataType t = cuda_type<T>();
  const bool cpx = t == CUDA_C_32F || t == CUDA_C_64F;
  const bool dbl = t == CUDA_R_64F || t == CUDA_C_64F;
  const cublasOperation_t H = cpx ? CUBLAS_OP_C : CUBLAS_OP_T;
  return cublasGemmEx(h, ha ? H : CUBLAS_OP_N, hb ? H : CUBLAS_OP_N, m, n, k, &alpha, A, t, lda, B,
                      t, ldb, &beta, C, t, ldc,
                      dbl ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F_PEDANTIC,
                      CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
}

// max_j sums[j] of X (minus d I), or -1 on a CUDA error.
template <class T> double norm1(int m, int n, const T *dX, real_t<T> d) {
  using R = real_t<T>;
  constexpr int C = sizeof(T) / sizeof(R);
  double *sums = nullptr;
  if (cudaMalloc(&sums, sizeof(double) * n) != cudaSuccess) return -1;
  col_abs_sums<R, C><<<n, 256>>>(m, n, reinterpret_cast<const R *>(dX), d, sums);
  std::vector<double> h(static_cast<size_t>(n));
  const bool ok =
      cudaMemcpy(h.data(), sums, sizeof(double) * n, cudaMemcpyDeviceToHost) == cudaSuccess;
  cudaFree(sums);
  return ok ? *std::max_element(h.begin(), h.end()) : -1;
}

} // namespace large_check

// Reference singular values of A (host, m x n, m >= n) by cuSOLVER's gesvd
// (QR iteration, values only) on the GPU: absolute errors of order
// u sigma_1, what T3 measures. false on a failure.
template <class T> bool reference_values_gpu(int m, int n, const T *A, double *ref) {
  using R = real_t<T>;
  cusolverDnHandle_t h = nullptr;
  if (m < n || cusolverDnCreate(&h) != CUSOLVER_STATUS_SUCCESS) return false;
  const int k = n;
  T *dA = nullptr, *work = nullptr;
  R *dS = nullptr, *rwork = nullptr;
  int *dinfo = nullptr, lwork = 0;
  bool ok = cudaMalloc(&dA, sizeof(T) * size_t(m) * n) == cudaSuccess &&
            cudaMalloc(&dS, sizeof(R) * k) == cudaSuccess &&
            cudaMalloc(&rwork, sizeof(R) * k) == cudaSuccess &&
            cudaMalloc(&dinfo, sizeof(int)) == cudaSuccess &&
            cudaMemcpy(dA, A, sizeof(T) * size_t(m) * n, cudaMemcpyHostToDevice) == cudaSuccess;
  auto call = [&](bool query) {
    cusolverStatus_t s;
    if constexpr (std::is_same_v<T, float>)
      s = query ? cusolverDnSgesvd_bufferSize(h, m, n, &lwork)
                : cusolverDnSgesvd(h, 'N', 'N', m, n, dA, m, dS, nullptr, m, nullptr, n, work,
                                   lwork, rwork, dinfo);
    else if constexpr (std::is_same_v<T, double>)
      s = query ? cusolverDnDgesvd_bufferSize(h, m, n, &lwork)
                : cusolverDnDgesvd(h, 'N', 'N', m, n, dA, m, dS, nullptr, m, nullptr, n, work,
                                   lwork, rwork, dinfo);
    else if constexpr (std::is_same_v<T, std::complex<float>>)
      s = query ? cusolverDnCgesvd_bufferSize(h, m, n, &lwork)
                : cusolverDnCgesvd(h, 'N', 'N', m, n, reinterpret_cast<cuComplex *>(dA), m, dS,
                                   nullptr, m, nullptr, n, reinterpret_cast<cuComplex *>(work),
                                   lwork, rwork, dinfo);
    else
      s = query ? cusolverDnZgesvd_bufferSize(h, m, n, &lwork)
                : cusolverDnZgesvd(h, 'N', 'N', m, n, reinterpret_cast<cuDoubleComplex *>(dA), m,
                                   dS, nullptr, m, nullptr, n,
                                   reinterpret_cast<cuDoubleComplex *>(work), lwork, rwork, dinfo);
    return s == CUSOLVER_STATUS_SUCCESS;
  };
  ok = ok && call(true) && cudaMalloc(&work, sizeof(T) * size_t(std::max(lwork, 1))) == cudaSuccess;
  ok = ok && call(false);
  std::vector<R> S(static_cast<size_t>(k));
  int info = -1;
  ok = ok && cudaMemcpy(S.data(), dS, sizeof(R) * k, cudaMemcpyDeviceToHost) == cudaSuccess &&
       cudaMemcpy(&info, dinfo, sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess && info == 0;
  for (int j = 0; ok && j < k; ++j) ref[j] = double(S[size_t(j)]);
  cudaFree(dA);
  cudaFree(work);
  cudaFree(dS);
  cudaFree(rwork);
  cudaFree(dinfo);
  cusolverDnDestroy(h);
  cudaGetLastError();
  return ok;
}

// The ratios of one m x n matrix A (host) and its S, U, V (host; U, V null
// without vectors) into row; false when the GPU could not hold the check.
template <class T> bool record_accuracy_gpu(BenchRow &row, int m, int n, const T *A,
                                            const real_t<T> *S, const T *U, const T *V,
                                            const double *S_ref) {
  using R = real_t<T>;
  using namespace large_check;
  const int k = std::min(m, n);
  const double u = double(testing::unit_roundoff<T>());
  testing::Ratios q;
  q.t4 = 0;
  for (int j = 0; j < k; ++j)
    if (S[j] < R(0) || (j > 0 && S[j] > S[j - 1])) q.t4 = INFINITY;
  double num = 0;
  for (int j = 0; j < k; ++j) num += (double(S[j]) - S_ref[j]) * (double(S[j]) - S_ref[j]);
  q.t3 = std::sqrt(num) / (k * std::max(double(S_ref[0]), 1e-300)) / u;
  if (U && V) {
    cublasHandle_t h = nullptr;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return false;
    T *dA = nullptr, *dU = nullptr, *dV = nullptr, *dG = nullptr;
    const size_t ea = size_t(m) * n, eu = size_t(m) * k, ev = size_t(n) * k;
    bool ok = cudaMalloc(&dA, sizeof(T) * ea) == cudaSuccess &&
              cudaMalloc(&dU, sizeof(T) * eu) == cudaSuccess &&
              cudaMalloc(&dV, sizeof(T) * ev) == cudaSuccess &&
              cudaMalloc(&dG, sizeof(T) * size_t(k) * k) == cudaSuccess;
    std::vector<T> Us(U, U + eu); // U diag(S)
    for (int j = 0; j < k; ++j)
      for (int i = 0; i < m; ++i) Us[size_t(j) * m + i] *= S[j];
    const T one(1), mone(-1), zero(0);
    double a1 = -1, r1 = -1, gu = -1, gv = -1;
    if (ok) {
      ok = cudaMemcpy(dA, A, sizeof(T) * ea, cudaMemcpyHostToDevice) == cudaSuccess &&
           cudaMemcpy(dV, V, sizeof(T) * ev, cudaMemcpyHostToDevice) == cudaSuccess &&
           cudaMemcpy(dU, U, sizeof(T) * eu, cudaMemcpyHostToDevice) == cudaSuccess;
      // ||I - U^H U||_1, ||I - V^H V||_1, ||A||_1
      ok = ok && gemm(h, true, false, k, k, m, one, dU, m, dU, m, zero, dG, k);
      gu = norm1<T>(k, k, dG, R(1));
      ok = ok && gemm(h, true, false, k, k, n, one, dV, n, dV, n, zero, dG, k);
      gv = norm1<T>(k, k, dG, R(1));
      a1 = norm1<T>(m, n, dA, R(0));
      // ||A - (U S) V^H||_1
      ok = ok && cudaMemcpy(dU, Us.data(), sizeof(T) * eu, cudaMemcpyHostToDevice) == cudaSuccess;
      ok = ok && gemm(h, false, true, m, n, k, mone, dU, m, dV, n, one, dA, m);
      r1 = norm1<T>(m, n, dA, R(0));
      ok = ok && a1 >= 0 && r1 >= 0 && gu >= 0 && gv >= 0 && cudaDeviceSynchronize() == cudaSuccess;
    }
    cudaFree(dA);
    cudaFree(dU);
    cudaFree(dV);
    cudaFree(dG);
    cublasDestroy(h);
    if (!ok) {
      cudaGetLastError();
      return false;
    }
    q.t1 = a1 > 0 ? r1 / (double(n) * a1) / u : 0;
    q.t2u = gu / m / u;
    q.t2v = gv / n / u;
  }
  row.t1 = q.t1;
  row.t2 = std::max(q.t2u, q.t2v);
  row.t3 = q.t3;
  row.sorted = q.t4 == 0;
  row.pass = q.pass();
  return true;
}

} // namespace bsvd::cli
