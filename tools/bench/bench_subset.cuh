// `bsvd bench --backend cuda --rank R`: the R largest singular triplets of
// every matrix, the selected-triplet route against the cuSOLVER call that
// offers a rank, on the same device data (bench_cuda.cu calls it):
//   bsvd-gesvdx-topR              bsvd_<p>gesvdx_strided_batched, range
//                                 index 0 .. R-1 (the blocking call, its
//                                 workspace allocated in stream order
//                                 inside the timing, as a user calls it)
//   cusolver-gesvdaStrided-topR   gesvdaStridedBatched with rank R (m >= n;
//                                 approximate: the Gram matrix's EVD)
// Their accuracy is not the full SVD's T1-T3 (R triplets reconstruct no
// matrix); the rows record, over the checked sample, in units of u with
// p = max(m, n):
//   t1 = max_j ||A v_j - s_j u_j|| / (s_1 p u)
//   t2 = max(|U^H U - I|_max, |V^H V - I|_max) / (p u)
//   t3 = max_j |s_j - s_j^ref| / (s_1 p u), s^ref the cpu backend's values.
#pragma once

#include "bench_gpu.cuh"

#include <algorithm>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

namespace bsvd::cli::gpu_bench {

template <class T> void record_subset_accuracy(BenchRow &row, const BenchCase &c, const T *hA,
                                               int r, const std::vector<real_t<T>> &S,
                                               const std::vector<T> &U, const std::vector<T> &V,
                                               int sample) {
  using R = real_t<T>;
  using W = std::complex<long double>;
  const int m = c.m, n = c.n, k = std::min(m, n);
  const double u = std::is_same_v<R, float> ? 0x1p-24 : 0x1p-53, p = std::max(m, n);
  std::vector<R> ref(size_t(sample) * k);
  std::vector<int> info(sample);
  bsvd_options_t o = default_options();
  o.backend = BSVD_BACKEND_CPU;
  if (gesvj_strided_batched<T>(Job::Values, m, n, hA, m, int64_t(m) * n, ref.data(), k, nullptr, 1,
                               0, nullptr, 1, 0, info.data(), nullptr, sample, o) != 0) {
    row.note += "no reference values; ";
    return;
  }
  row.t1 = row.t2 = row.t3 = 0;
  row.sorted = true;
  for (int b = 0; b < sample; ++b) {
    const T *A = hA + size_t(b) * m * n;
    const R *s = S.data() + size_t(b) * r;
    const T *Ub = U.data() + size_t(b) * m * r, *Vb = V.data() + size_t(b) * n * r;
    const double s1 = std::max(double(ref[size_t(b) * k]), 1e-300);
    for (int j = 0; j < r; ++j) {
      row.t3 =
          std::max(row.t3, std::abs(double(s[j]) - double(ref[size_t(b) * k + j])) / (s1 * p * u));
      if (j > 0 && s[j] > s[j - 1]) row.sorted = false;
      if (!c.vectors) continue;
      long double r2 = 0;
      for (int i = 0; i < m; ++i) {
        W av = 0;
        for (int q = 0; q < n; ++q) av += W(A[i + size_t(q) * m]) * W(Vb[q + size_t(j) * n]);
        av -= (long double)s[j] * W(Ub[i + size_t(j) * m]);
        r2 += std::norm(av);
      }
      row.t1 = std::max(row.t1, double(std::sqrt(r2)) / (s1 * p * u));
    }
    if (!c.vectors) continue;
    for (int which = 0; which < 2; ++which) {
      const int rows = which ? n : m;
      const T *X = which ? Vb : Ub;
      for (int a = 0; a < r; ++a)
        for (int q = 0; q < r; ++q) {
          W g = 0;
          for (int i = 0; i < rows; ++i)
            g += std::conj(W(X[i + size_t(a) * rows])) * W(X[i + size_t(q) * rows]);
          if (a == q) g -= 1;
          row.t2 = std::max(row.t2, double(std::abs(g)) / (p * u));
        }
    }
  }
  row.pass = row.sorted && row.t1 < 30 && row.t2 < 30 && row.t3 < 30;
}

template <class T> void run_subset_rows(const BenchCase &c, const T *hA, const T *dA,
                                        cusolverDnHandle_t h, const std::string &dev,
                                        std::vector<BenchRow> &rows) {
  using R = real_t<T>;
  const int m = c.m, n = c.n, k = std::min(m, n), batch = c.batch, r = std::min(c.rank, k);
  const std::string tag = "-top" + std::to_string(r);
  const int sample = std::min(c.check_sample, batch);
  DevBuf<T> dU(size_t(batch) * m * r), dV(size_t(batch) * n * r);
  DevBuf<R> dS(size_t(batch) * r);
  auto fetch = [&](BenchRow &row) {
    std::vector<R> S(size_t(batch) * r);
    std::vector<T> U(c.vectors ? dU.n : 0), V(c.vectors ? dV.n : 0);
    BENCH_CUDA(cudaMemcpy(S.data(), dS.p, S.size() * sizeof(R), cudaMemcpyDeviceToHost));
    if (c.vectors) {
      BENCH_CUDA(cudaMemcpy(U.data(), dU.p, U.size() * sizeof(T), cudaMemcpyDeviceToHost));
      BENCH_CUDA(cudaMemcpy(V.data(), dV.p, V.size() * sizeof(T), cudaMemcpyDeviceToHost));
    }
    record_subset_accuracy<T>(row, c, hA, r, S, U, V, sample);
  };
  {
    BenchRow row;
    row.solver = "bsvd-gesvdx" + tag;
    row.device = dev;
    row.c = c;
    DevBuf<int> dns(batch), dinfo(batch);
    bsvd_status_t st = 0;
    const bsvd_options_t o = default_options();
    auto body = [&] {
      st = gesvdx_strided_batched<T>(c.vectors ? Job::Vectors : Job::Values, BSVD_RANGE_INDEX, m, n,
                                     dA, m, int64_t(m) * n, R(0), R(0), 0, r - 1, dns.p, dS.p, r,
                                     dU.p, m, int64_t(m) * r, dV.p, n, int64_t(n) * r, dinfo.p,
                                     batch, o);
    };
    body();
    if (st != 0) {
      row.note = std::string("refused: ") + bsvd_status_string(st) + ": " + bsvd_last_error();
    } else {
      row.ms = time_events(c.reps, nullptr, body);
      fetch(row);
    }
    rows.push_back(row);
  }
  BenchRow row;
  row.solver = "cusolver-gesvdaStrided" + tag;
  row.device = dev;
  row.c = c;
  if (m < n) {
    row.note = "skipped: gesvda needs m >= n";
    rows.push_back(row);
    return;
  }
  if (time_gesvda<T>(c, dA, h, r, dS.p, dU.p, dV.p, row)) fetch(row);
  rows.push_back(row);
}

} // namespace bsvd::cli::gpu_bench
