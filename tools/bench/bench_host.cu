// `bsvd bench --devices`: the blocking call on host data, copies included,
// on the current GPU and over several (bsvd_options_t::device_count).
#include "bench.hpp"
#include "bench_accuracy.hpp"
#include "bench_large_check.cuh"

#include <bsvd/svd.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <vector>

namespace bsvd::cli {

namespace {

// One row: the median wall time of c.reps calls on the host batch, T1-T4 on
// the sample, the most sweeps.
// ref: the case's reference singular values (large cases).
template <class T> BenchRow host_row(const BenchCase &c, const T *A, const std::string &dev,
                                     const char *solver, int device_count, const int *devices,
                                     const std::vector<double> &ref) {
  using R = real_t<T>;
  const int k = std::min(c.m, c.n);
  BenchRow row;
  row.solver = solver;
  row.device = dev;
  row.c = c;
  std::vector<R> S(size_t(c.batch) * k);
  std::vector<T> U(c.vectors ? size_t(c.batch) * c.m * k : 0);
  std::vector<T> V(c.vectors ? size_t(c.batch) * c.n * k : 0);
  std::vector<int> info(c.batch), sweeps(c.batch);
  bsvd_options_t o;
  bsvd_options_init(&o);
  o.backend = BSVD_BACKEND_CUDA;
  o.eig_sweeps = c.eig_sweeps;
  o.device_count = device_count;
  o.devices = devices;
  int path = -1; // one matrix: its path goes into the note
  if (c.batch == 1) o.path = &path;
  const auto call = [&] {
    return gesvj_strided_batched<T>(c.vectors ? Job::Vectors : Job::Values, c.m, c.n, A, c.m,
                                    int64_t(c.m) * c.n, S.data(), k, c.vectors ? U.data() : nullptr,
                                    c.m, int64_t(c.m) * k, c.vectors ? V.data() : nullptr, c.n,
                                    int64_t(c.n) * k, info.data(), sweeps.data(), c.batch, o);
  };
  if (bsvd_status_t st = call()) { // (also the warm-up: plans, pools, page-locked memory)
    row.note = "refused: status " + std::to_string(st) + ": " + bsvd_last_error();
    return row;
  }
  std::vector<double> t;
  for (int r = 0; r < c.reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    call();
    t.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  row.ms = t[t.size() / 2];
  row.max_sweeps = *std::max_element(sweeps.begin(), sweeps.end());
  if (c.batch == 1) row.note = std::string("path ") + bsvd_path_string(path);
  if (bench_large_one(c)) {
    if (!record_accuracy_gpu<T>(row, c.m, c.n, A, S.data(), c.vectors ? U.data() : nullptr,
                                c.vectors ? V.data() : nullptr, ref.data()))
      row.note += "; accuracy not checked: the GPU check failed";
    return row;
  }
  const int sample = std::min(c.batch, c.check_sample);
  record_accuracy<T>(row, c.m, c.n, A, sample, S.data(), size_t(k), c.vectors ? U.data() : nullptr,
                     c.m, size_t(c.m) * k, c.vectors ? V.data() : nullptr, c.n, size_t(c.n) * k);
  return row;
}

} // namespace

bool bench_large_one(const BenchCase &c) {
  return c.batch == 1 && double(c.m) * c.n * std::min(c.m, c.n) > 2e9;
}

template <class T> void bench_host_rows(const BenchCase &c, const T *A, const std::string &dev,
                                        std::vector<BenchRow> &rows) {
  int visible = 0;
  if (cudaGetDeviceCount(&visible) != cudaSuccess) cudaGetLastError();
  std::vector<double> ref;
  if (bench_large_one(c)) { // cuSOLVER gesvd's singular values, once (the reference
    // LAPACK of the GPU machine would take minutes at 4096^2)
    ref.resize(size_t(std::min(c.m, c.n)));
    if (c.m < c.n || !reference_values_gpu<T>(c.m, c.n, A, ref.data())) ref.assign(ref.size(), NAN);
  }
  const BenchRow one = host_row<T>(c, A, dev, "bsvd-cuda-host", 0, nullptr, ref);
  BenchRow many = host_row<T>(c, A, dev, "bsvd-cuda-host-devices", c.device_count,
                              c.devices.empty() ? nullptr : c.devices.data(), ref);
  const int n = c.device_count == BSVD_DEVICES_ALL ? visible : c.device_count;
  char note[160];
  if (many.note.rfind("refused", 0) != 0 && one.ms > 0 && many.ms > 0) {
    std::snprintf(note, sizeof note, "%d GPUs: %.2fx the current GPU's host-data call", n,
                  one.ms / many.ms);
    many.note = many.note.empty() ? note : std::string(note) + "; " + many.note;
    many.device = std::to_string(n) + " x " + dev;
  }
  rows.push_back(one);
  rows.push_back(many);
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template void bench_host_rows<T>(const BenchCase &, const T *, const std::string &,              \
                                   std::vector<BenchRow> &);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::cli
