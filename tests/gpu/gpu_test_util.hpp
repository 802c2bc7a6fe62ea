// Helpers shared by the GPU tests: calls through the public API with the
// cuda backend (host or device pointers), the CPU twin (solve_one with the
// same configuration), T1-T4 of a solved matrix, the test-family batches.
#pragma once

#include <bsvd/bsvd.h>
#include <bsvd/svd.hpp>

#include "core/backends.hpp"
#include "core/batch.hpp"
#include "cpu/jacobi.hpp"
#include "cuda/fused/fused.hpp"
#include "cuda/qr/qr.hpp"
#include "core/overrides.hpp"
#include "cuda/common/device_info.hpp"
#include "cuda/facts.hpp"
#include "plan/plan.hpp"
#include "testing/generate.hpp"
#include "testing/io.hpp"
#include "testing/lapack_ref.hpp"
#include "testing/metrics.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using bsvd::detail::Batch;
using bsvd::detail::Config;
using bsvd::testing::Edge;
using bsvd::testing::Family;
template <class T> using R_t = bsvd::detail::real_of_t<T>;

#define SKIP_WITHOUT_GPU()                                                                         \
  do {                                                                                             \
    if (!bsvd::detail::cuda_available()) GTEST_SKIP() << "no CUDA GPU visible";                    \
  } while (0)

namespace cu = bsvd::detail::cuda;
namespace pl = bsvd::detail::plan;

// One of the library's overrides (core/overrides.hpp), named by its
// environment variable, set for the life of the object; the overrides are
// restored at its end, also when an ASSERT leaves the test early.
class ScopedOverride {
public:
  explicit ScopedOverride(const char *name)
      : name_(name), saved_(bsvd::detail::current_overrides()) {}
  void set(const char *value) { put(value); }
  void unset() { put(nullptr); } // the rule's own choice
  ~ScopedOverride() { bsvd::detail::set_overrides(saved_); }
  ScopedOverride(const ScopedOverride &) = delete;
  ScopedOverride &operator=(const ScopedOverride &) = delete;

private:
  void put(const char *value) {
    bsvd::detail::Overrides o = bsvd::detail::current_overrides();
    EXPECT_TRUE(bsvd::detail::set_override(o, name_.c_str(), value)) << name_;
    bsvd::detail::set_overrides(o);
  }
  std::string name_;
  bsvd::detail::Overrides saved_;
};

template <class T> double uroff() { return double(bsvd::detail::unit_roundoff<R_t<T>>()); }
template <class T> char prec() {
  if constexpr (std::is_same_v<T, float>)
    return 's';
  else if constexpr (std::is_same_v<T, double>)
    return 'd';
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return 'c';
  else
    return 'z';
}

// A uniform batch solved by one call; outputs packed (ld = m, n).
template <class T> struct Solved {
  int m = 0, n = 0, k = 0, batch = 0;
  std::vector<R_t<T>> S;
  std::vector<T> U, V;
  std::vector<int> info, sweeps, path;
  bsvd_status_t status = -99;
};

// Host-pointer call through the public API with options o (ld = m, n;
// outputs preset to -7 / -3, info 99, sweeps and path -1).
template <class T> Solved<T> gpu_solve_with(int m, int n, int batch, const std::vector<T> &A,
                                            bool vectors, bsvd_options_t o) {
  Solved<T> r;
  r.m = m;
  r.n = n;
  r.k = std::min(m, n);
  r.batch = batch;
  r.S.assign(size_t(batch) * r.k, R_t<T>(-7));
  if (vectors) {
    r.U.assign(size_t(batch) * m * r.k, T(-3));
    r.V.assign(size_t(batch) * n * r.k, T(-3));
  }
  r.info.assign(batch, 99);
  r.sweeps.assign(batch, -1);
  r.path.assign(batch, -1);
  o.path = r.path.data();
  r.status = bsvd::gesvj_strided_batched<T>(
      vectors ? bsvd::Job::Vectors : bsvd::Job::Values, m, n, A.data(), std::max(m, 1),
      int64_t(m) * n, r.S.data(), r.k, vectors ? r.U.data() : nullptr, std::max(m, 1),
      int64_t(m) * r.k, vectors ? r.V.data() : nullptr, std::max(n, 1), int64_t(n) * r.k,
      r.info.data(), r.sweeps.data(), batch, o);
  return r;
}

// The same with the cuda backend and the options as arguments. The
// preconditioning is off unless asked for (precondition = 1, or 0 for the
// automatic choice): the tests of the plain paths keep testing them
// whatever that choice decides for their batches.
template <class T>
Solved<T> gpu_solve(int m, int n, int batch, const std::vector<T> &A, bool vectors = true,
                    bsvd_ordering_t ord = BSVD_ORDERING_ROUND_ROBIN, int max_sweeps = 0,
                    bsvd_variant_t variant = BSVD_VARIANT_AUTO, int block_size = 0,
                    int eig_sweeps = 1, int qr = 0, bsvd_pair_solver_t pair = BSVD_PAIR_AUTO,
                    int precondition = -1, int wcycle_blocks = 0, int wcycle_sweeps = 0) {
  bsvd_options_t o;
  bsvd_options_init(&o);
  o.backend = BSVD_BACKEND_CUDA;
  o.ordering = ord;
  o.max_sweeps = max_sweeps;
  o.variant = variant;
  o.block_size = block_size;
  o.eig_sweeps = eig_sweeps;
  o.qr = qr;
  o.pair_solver = pair;
  o.precondition = precondition;
  o.wcycle_blocks = wcycle_blocks;
  o.wcycle_sweeps = wcycle_sweeps;
  return gpu_solve_with<T>(m, n, batch, A, vectors, o);
}

// The same with every operand in device memory (preconditioning off).
template <class T>
Solved<T> gpu_solve_device(int m, int n, int batch, const std::vector<T> &A, bool vectors = true,
                           bsvd_variant_t variant = BSVD_VARIANT_AUTO, int qr = 0,
                           bsvd_pair_solver_t pair = BSVD_PAIR_AUTO) {
  Solved<T> r;
  r.m = m;
  r.n = n;
  r.k = std::min(m, n);
  r.batch = batch;
  const size_t nA = A.size(), nS = size_t(batch) * r.k, nU = size_t(batch) * m * r.k,
               nV = size_t(batch) * n * r.k;
  T *dA = nullptr, *dU = nullptr, *dV = nullptr;
  R_t<T> *dS = nullptr;
  int *dinfo = nullptr, *dsw = nullptr;
  EXPECT_EQ(cudaMalloc(&dA, nA * sizeof(T)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&dS, std::max<size_t>(nS, 1) * sizeof(R_t<T>)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&dU, std::max<size_t>(nU, 1) * sizeof(T)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&dV, std::max<size_t>(nV, 1) * sizeof(T)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&dinfo, batch * sizeof(int)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&dsw, batch * sizeof(int)), cudaSuccess);
  cudaMemcpy(dA, A.data(), nA * sizeof(T), cudaMemcpyHostToDevice);
  r.path.assign(batch, -1);
  bsvd_options_t o;
  bsvd_options_init(&o);
  o.backend = BSVD_BACKEND_CUDA;
  o.variant = variant;
  o.qr = qr;
  o.pair_solver = pair;
  o.precondition = -1;
  o.path = r.path.data();
  r.status = bsvd::gesvj_strided_batched<T>(vectors ? bsvd::Job::Vectors : bsvd::Job::Values, m, n,
                                            dA, m, int64_t(m) * n, dS, r.k, vectors ? dU : nullptr,
                                            m, int64_t(m) * r.k, vectors ? dV : nullptr, n,
                                            int64_t(n) * r.k, dinfo, dsw, batch, o);
  r.S.resize(nS);
  r.info.resize(batch);
  r.sweeps.resize(batch);
  cudaMemcpy(r.S.data(), dS, nS * sizeof(R_t<T>), cudaMemcpyDeviceToHost);
  cudaMemcpy(r.info.data(), dinfo, batch * sizeof(int), cudaMemcpyDeviceToHost);
  cudaMemcpy(r.sweeps.data(), dsw, batch * sizeof(int), cudaMemcpyDeviceToHost);
  if (vectors) {
    r.U.resize(nU);
    r.V.resize(nV);
    cudaMemcpy(r.U.data(), dU, nU * sizeof(T), cudaMemcpyDeviceToHost);
    cudaMemcpy(r.V.data(), dV, nV * sizeof(T), cudaMemcpyDeviceToHost);
  }
  cudaFree(dA);
  cudaFree(dS);
  cudaFree(dU);
  cudaFree(dV);
  cudaFree(dinfo);
  cudaFree(dsw);
  return r;
}

// The CPU twin: solve_one on one matrix with the same configuration.
template <class T> struct Twin {
  std::vector<R_t<T>> S;
  int info = 99, sweeps = -1;
};
template <class T> Twin<T> cpu_twin(int m, int n, const T *A, bool vectors, bsvd_ordering_t ord,
                                    Config cfg = Config{}) {
  Twin<T> t;
  const int k = std::min(m, n);
  t.S.assign(std::max(k, 1), R_t<T>(0));
  std::vector<T> U(vectors ? size_t(std::max(m, 1)) * std::max(k, 1) : 1);
  std::vector<T> V(vectors ? size_t(std::max(n, 1)) * std::max(k, 1) : 1);
  Batch<T> b;
  b.vectors = vectors;
  b.count = 1;
  b.dims.m = m;
  b.dims.n = n;
  b.A.base = A;
  b.A.ld = std::max(m, 1);
  b.S.base = t.S.data();
  b.U.base = U.data();
  b.U.ld = std::max(m, 1);
  b.V.base = V.data();
  b.V.ld = std::max(n, 1);
  b.info = &t.info;
  b.sweeps = &t.sweeps;
  cfg.ordering = ord;
  std::vector<T> scratch(bsvd::detail::solve_one_scratch(m, n, vectors) + 16);
  bsvd::detail::solve_one(b, 0, cfg, scratch.data());
  return t;
}

// Worst T1-T4 ratios of matrix b of a solved batch (reference from LAPACK).
// Largest |sigma_gpu - sigma_cpu| / sigma_1 in units of u.
template <class T> double twin_gap(const Solved<T> &r, int b, const Twin<T> &tw) {
  const double s1 = std::max(double(tw.S[0]), 1e-300);
  double worst = 0;
  for (int j = 0; j < r.k; ++j)
    worst = std::max(worst, std::abs(double(r.S[size_t(b) * r.k + j]) - double(tw.S[j])) / s1);
  return worst / uroff<T>();
}

// Two solves of the same batch gave the same bits: S, U, V and sweeps.
template <class T> void expect_same_bits(const Solved<T> &a, const Solved<T> &b) {
  EXPECT_EQ(a.S, b.S);
  EXPECT_EQ(a.U, b.U);
  EXPECT_EQ(a.V, b.V);
  EXPECT_EQ(a.sweeps, b.sweeps);
}

// Host and device operands give the same bits (S, U, V, sweeps), and values
// only gives the S and sweeps of the full solve; every matrix took `path`.
template <class T> void expect_host_device_values_agree(int m, int n, int batch,
                                                        const std::vector<T> &A,
                                                        bsvd_variant_t variant, int qr, int path,
                                                        bsvd_pair_solver_t pair = BSVD_PAIR_AUTO) {
  // the library's default inner sweeps, as gpu_solve_device's options
  const int eig = BSVD_EIG_SWEEPS_AUTO;
  const auto h =
      gpu_solve<T>(m, n, batch, A, true, BSVD_ORDERING_ROUND_ROBIN, 0, variant, 0, eig, qr, pair);
  const auto d = gpu_solve_device<T>(m, n, batch, A, true, variant, qr, pair);
  const auto s =
      gpu_solve<T>(m, n, batch, A, false, BSVD_ORDERING_ROUND_ROBIN, 0, variant, 0, eig, qr, pair);
  ASSERT_EQ(h.status, 0) << bsvd_last_error();
  ASSERT_EQ(d.status, 0) << bsvd_last_error();
  ASSERT_EQ(s.status, 0) << bsvd_last_error();
  expect_same_bits(h, d);
  EXPECT_EQ(h.S, s.S);
  EXPECT_EQ(h.sweeps, s.sweeps);
  for (int b = 0; b < batch; ++b) EXPECT_EQ(d.path[b], path);
}

template <class T> bsvd::testing::Ratios ratios(const Solved<T> &r, const std::vector<T> &A, int b,
                                                bool with_ref = true) {
  const int m = r.m, n = r.n, k = r.k;
  std::vector<double> ref(std::max(k, 1));
  const T *Ab = A.data() + size_t(b) * m * n;
  bool have_ref = false;
  if (with_ref)
    have_ref = bsvd::testing::reference_singular_values<T>(m, n, Ab, m, ref.data()) == 0;
  return bsvd::testing::accuracy<T, R_t<T>>(m, n, Ab, std::max(m, 1), r.S.data() + size_t(b) * k,
                                            r.U.empty() ? nullptr : r.U.data() + size_t(b) * m * k,
                                            std::max(m, 1),
                                            r.V.empty() ? nullptr : r.V.data() + size_t(b) * n * k,
                                            std::max(n, 1), have_ref ? ref.data() : nullptr);
}

std::string ratio_text(const bsvd::testing::Ratios &q) {
  char s[160];
  std::snprintf(s, sizeof s, "t1=%.3g t2u=%.3g t2v=%.3g t3=%.3g t4=%.3g", q.t1, q.t2u, q.t2v, q.t3,
                q.t4);
  return s;
}

// One variable-size (vbatched) call with host operands: matrix b has
// dims[b], leading dimensions max(rows, 1) + pad, A filled by
// fill(b, m, n, A_b, lda) (left zero otherwise), S, U, V preset to -1.
template <class T> struct VSolved {
  std::vector<std::pair<int, int>> dims;
  std::vector<std::vector<T>> A, U, V;
  std::vector<std::vector<R_t<T>>> S;
  std::vector<int> lda, ldu, ldv, info, sweeps, path;
  bsvd_status_t status = -99;
  // T1-T4 of matrix b against LAPACK's singular values.
  bsvd::testing::Ratios ratios(int b) const {
    const auto [m, n] = dims[b];
    std::vector<double> ref(std::min(m, n));
    const bool have =
        bsvd::testing::reference_singular_values<T>(m, n, A[b].data(), lda[b], ref.data()) == 0;
    EXPECT_TRUE(have);
    return bsvd::testing::accuracy<T, R_t<T>>(m, n, A[b].data(), lda[b], S[b].data(), U[b].data(),
                                              ldu[b], V[b].data(), ldv[b],
                                              have ? ref.data() : nullptr);
  }
};
template <class T, class Fill> VSolved<T>
vbatched_solve(const std::vector<std::pair<int, int>> &dims, int pad, Fill fill, bsvd_options_t o) {
  VSolved<T> r;
  r.dims = dims;
  const int batch = int(dims.size());
  std::vector<int> mv, nv;
  std::vector<const T *> pA;
  std::vector<R_t<T> *> pS;
  std::vector<T *> pU, pV;
  r.A.resize(batch);
  r.U.resize(batch);
  r.V.resize(batch);
  r.S.resize(batch);
  for (int b = 0; b < batch; ++b) {
    const auto [m, n] = dims[b];
    const int k = std::min(m, n);
    mv.push_back(m);
    nv.push_back(n);
    r.lda.push_back(std::max(m, 1) + pad);
    r.ldu.push_back(std::max(m, 1) + pad);
    r.ldv.push_back(std::max(n, 1) + pad);
    r.A[b].assign(size_t(r.lda[b]) * std::max(n, 1), T(0));
    if (m > 0 && n > 0) fill(b, m, n, r.A[b].data(), r.lda[b]);
    r.S[b].assign(std::max(k, 1), R_t<T>(-1));
    r.U[b].assign(size_t(r.ldu[b]) * std::max(k, 1), T(-1));
    r.V[b].assign(size_t(r.ldv[b]) * std::max(k, 1), T(-1));
    pA.push_back(r.A[b].data());
    pS.push_back(r.S[b].data());
    pU.push_back(r.U[b].data());
    pV.push_back(r.V[b].data());
  }
  r.info.assign(batch, 99);
  r.sweeps.assign(batch, -1);
  r.path.assign(batch, -1);
  o.path = r.path.data();
  r.status = bsvd::gesvj_vbatched<T>(bsvd::Job::Vectors, mv.data(), nv.data(), pA.data(),
                                     r.lda.data(), pS.data(), pU.data(), r.ldu.data(), pV.data(),
                                     r.ldv.data(), r.info.data(), r.sweeps.data(), batch, o);
  return r;
}
// Options for the cuda backend (defaults otherwise: the automatic
// preconditioning included; tests of the plain blocked path also set
// precondition = -1, so that they keep testing it).
inline bsvd_options_t cuda_options() {
  bsvd_options_t o;
  bsvd_options_init(&o);
  o.backend = BSVD_BACKEND_CUDA;
  return o;
}
// The same with the preconditioning off (the plain paths).
inline bsvd_options_t plain_options() {
  bsvd_options_t o = cuda_options();
  o.precondition = -1;
  return o;
}

template <class T> std::vector<T> family_batch(Family f, int m, int n, int batch, uint64_t seed) {
  std::vector<T> A(size_t(batch) * m * n);
  for (int b = 0; b < batch; ++b)
    bsvd::testing::generate<T>(f, m, n, bsvd::testing::default_kappa<T>(), seed + b,
                               A.data() + size_t(b) * m * n, std::max(m, 1));
  return A;
}

// The fused kernel's column cap of the automatic routing for a call with
// these shapes (the plan's fused_cols, plan::fused_call_cols; opts.qr = 0).
template <class T>
int call_fused_cols(const std::vector<std::pair<int, int>> &dims, bool vectors = true) {
  std::vector<int> m, n;
  for (auto [a, b] : dims) {
    m.push_back(a);
    n.push_back(b);
  }
  pl::Shapes s;
  s.precision = prec<T>();
  s.vectors = vectors;
  s.count = int(m.size());
  s.dims.mv = m.data();
  s.dims.nv = n.data();
  return cu::call_plan(s, Config()).fused_cols;
}
// Whether the automatic variant sends an m x n matrix to the fused kernel:
// it fits and has at most cap columns (call_fused_cols; the larger ones that
// fit go to the blocked path). The default cap is that of a call of one
// such matrix.
template <class T> bool auto_fused(int m, int n, bool vectors = true, int cap = 0) {
  if (cap == 0) cap = call_fused_cols<T>({{m, n}}, vectors);
  return bsvd::detail::cuda::fits(prec<T>(), m, n, vectors) && std::min(m, n) <= cap;
}

// Whether the plan sends an m x n matrix of a call of `count` matrices to the
// register tier (round-robin ordering, the current table and overrides).
template <class T> bool auto_tiny(int m, int n, long count) {
  return m > 0 && n > 0 &&
         pl::tiny_reach(cu::current_tuning(), prec<T>(), count).takes(std::max(m, n));
}

// The rules of the tuning table with the current overrides, for the tests'
// expectations: the automatic preconditioning, and the blocks per cluster of
// the pivoted factorization of an m x n matrix on the current device.
inline bool qrcp_auto_rule(double count, int nw, char p) {
  return pl::qrcp_auto(cu::current_tuning(), p, count, nw);
}
template <class T> int qrcp_cluster_fit(int m, int n) {
  return cu::qrcp_cluster_fit<T>(std::max(m, n), std::min(m, n), size_t(cu::max_smem_optin()),
                                 cu::cc_major());
}

// Largest square size the fused kernel takes for this precision.
template <class T> int largest_fitting(bool vectors) {
  int n = 1;
  while (bsvd::detail::cuda::fits(prec<T>(), n + 1, n + 1, vectors)) ++n;
  return n;
}

} // namespace
