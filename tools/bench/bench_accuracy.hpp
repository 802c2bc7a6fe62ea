// Accuracy columns of a bench row, shared by the CPU (cmd_bench.cpp) and
// GPU (bench_cuda.cu) benchmarks: the worst T1-T4 ratios over the first
// `sample` matrices of a case.
#pragma once

#include "bench.hpp"

#include "testing/lapack_ref.hpp"
#include "testing/metrics.hpp"

#include <bsvd/svd.hpp>

#include <algorithm>
#include <vector>

namespace bsvd::cli {

// A: column-major m x n matrices back to back (lda = m). S, U, V: per-matrix
// blocks of strides sS, sU, sV with leading dimensions ldu, ldv; U and V may
// be null (values only).
template <class T> void record_accuracy(BenchRow &row, int m, int n, const T *A, int sample,
                                        const real_t<T> *S, size_t sS, const T *U, int ldu,
                                        size_t sU, const T *V, int ldv, size_t sV) {
  testing::Ratios worst;
  std::vector<double> ref(std::min(m, n));
  for (int b = 0; b < sample; ++b) {
    const T *Ab = A + size_t(b) * m * n;
    const int linfo = testing::reference_singular_values<T>(m, n, Ab, m, ref.data());
    const auto r = testing::accuracy<T, real_t<T>>(
        m, n, Ab, m, S + b * sS, U ? U + b * sU : nullptr, ldu, V ? V + b * sV : nullptr, ldv,
        linfo == 0 ? ref.data() : nullptr);
    worst.max_with(r);
  }
  row.t1 = worst.t1;
  row.t2 = std::max(worst.t2u, worst.t2v);
  row.t3 = worst.t3;
  row.sorted = worst.t4 == 0;
  row.pass = worst.pass();
}

} // namespace bsvd::cli
