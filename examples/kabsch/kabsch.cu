// Batched Kabsch alignment in a user kernel with bsvd::device::svd: one
// thread per pair of point clouds forms the 3 x 3 cross-covariance H,
// takes its SVD in registers and writes R = V diag(1, 1, d) U^T,
// d = det(V U^T). Checked against the same computation on the host (the
// header is its own CPU twin) and against the known rotations.
//
//   nvcc -std=c++17 -O3 -arch=sm_90 -I../../include kabsch.cu -o kabsch && ./kabsch [N]
#include <bsvd/device/svd.cuh>

#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

constexpr int K = 20; // points per cloud

#define CHECK(x)                                                                                   \
  do {                                                                                             \
    const cudaError_t e_ = (x);                                                                    \
    if (e_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                                \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

// P, Q: K points of 3 coordinates per pair (xyz xyz ...); R: 3 x 3 column-major.
__host__ __device__ inline int kabsch_one(const double *p, const double *q, double *R) {
  double pc[3] = {0, 0, 0}, qc[3] = {0, 0, 0};
  for (int j = 0; j < K; ++j)
    for (int i = 0; i < 3; ++i) pc[i] += p[3 * j + i] / K, qc[i] += q[3 * j + i] / K;
  double H[9] = {};
  for (int j = 0; j < K; ++j)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) H[r + 3 * c] += (p[3 * j + r] - pc[r]) * (q[3 * j + c] - qc[c]);
  double S[3], U[9], V[9];
  const int info = bsvd::device::svd<double, 3, 3>(3, 3, H, 3, S, U, 3, V, 3);
  auto det = [](const double *M) {
    return M[0] * (M[4] * M[8] - M[7] * M[5]) - M[3] * (M[1] * M[8] - M[7] * M[2]) +
           M[6] * (M[1] * M[5] - M[4] * M[2]);
  };
  const double d = det(V) * det(U) < 0 ? -1.0 : 1.0;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      R[r + 3 * c] = V[r] * U[c] + V[r + 3] * U[c + 3] + d * V[r + 6] * U[c + 6];
  return info;
}

__global__ void kabsch_kernel(int n, const double *P, const double *Q, double *R, int *info) {
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b < n) info[b] = kabsch_one(P + size_t(b) * 3 * K, Q + size_t(b) * 3 * K, R + 9 * size_t(b));
}

int main(int argc, char **argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 100000;
  std::mt19937_64 g(1);
  std::normal_distribution<double> nd;
  std::vector<double> P(size_t(n) * 3 * K), Q(P.size()), Rt(size_t(n) * 9);
  for (int b = 0; b < n; ++b) {
    double w = nd(g), x = nd(g), y = nd(g), z = nd(g);
    const double s = std::sqrt(w * w + x * x + y * y + z * z);
    w /= s, x /= s, y /= s, z /= s;
    const double M[9] = {1 - 2 * (y * y + z * z), 2 * (x * y + z * w),     2 * (x * z - y * w),
                         2 * (x * y - z * w),     1 - 2 * (x * x + z * z), 2 * (y * z + x * w),
                         2 * (x * z + y * w),     2 * (y * z - x * w),     1 - 2 * (x * x + y * y)};
    for (int i = 0; i < 9; ++i) Rt[9 * size_t(b) + i] = M[i];
    for (int j = 0; j < K; ++j) {
      const double p[3] = {nd(g), nd(g), nd(g)};
      for (int r = 0; r < 3; ++r) {
        P[size_t(b) * 3 * K + 3 * j + r] = p[r];
        Q[size_t(b) * 3 * K + 3 * j + r] =
            M[r] * p[0] + M[r + 3] * p[1] + M[r + 6] * p[2] + 0.5 * (r + 1);
      }
    }
  }
  double *dP, *dQ, *dR;
  int *dI;
  CHECK(cudaMalloc(&dP, P.size() * sizeof(double)));
  CHECK(cudaMalloc(&dQ, Q.size() * sizeof(double)));
  CHECK(cudaMalloc(&dR, Rt.size() * sizeof(double)));
  CHECK(cudaMalloc(&dI, size_t(n) * sizeof(int)));
  CHECK(cudaMemcpy(dP, P.data(), P.size() * sizeof(double), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dQ, Q.data(), Q.size() * sizeof(double), cudaMemcpyHostToDevice));
  const int threads = 128, blocks = (n + threads - 1) / threads;
  kabsch_kernel<<<blocks, threads>>>(n, dP, dQ, dR, dI); // warm-up
  CHECK(cudaGetLastError());
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  CHECK(cudaEventRecord(e0));
  kabsch_kernel<<<blocks, threads>>>(n, dP, dQ, dR, dI);
  CHECK(cudaEventRecord(e1));
  CHECK(cudaEventSynchronize(e1));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, e0, e1));
  std::vector<double> R(Rt.size());
  std::vector<int> info(n);
  CHECK(cudaMemcpy(R.data(), dR, R.size() * sizeof(double), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(info.data(), dI, size_t(n) * sizeof(int), cudaMemcpyDeviceToHost));
  // The CPU reference: the same function on the host.
  const auto t0 = std::chrono::steady_clock::now();
  double err_host = 0, err_true = 0;
  int bad = 0;
  for (int b = 0; b < n; ++b) {
    double Rh[9];
    bad += kabsch_one(&P[size_t(b) * 3 * K], &Q[size_t(b) * 3 * K], Rh) != 0 || info[b] != 0;
    for (int i = 0; i < 9; ++i) {
      err_host = std::fmax(err_host, std::fabs(R[9 * size_t(b) + i] - Rh[i]));
      err_true = std::fmax(err_true, std::fabs(R[9 * size_t(b) + i] - Rt[9 * size_t(b) + i]));
    }
  }
  const double host_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%d alignments of %d points: GPU kernel %.3f ms, host (one thread) %.1f ms\n", n, K,
              ms, host_ms);
  std::printf("max |R_gpu - R_host| = %.2e, max |R_gpu - R_true| = %.2e, info != 0: %d\n", err_host,
              err_true, bad);
  const bool ok = bad == 0 && err_host < 1e-13 && err_true < 1e-12;
  std::printf("%s\n", ok ? "OK" : "FAILED");
  cudaFree(dP), cudaFree(dQ), cudaFree(dR), cudaFree(dI);
  return ok ? 0 : 1;
}
