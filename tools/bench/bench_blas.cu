// `bsvd bench --blas`: the batched BLAS and LAPACK building blocks of the
// bidiagonal and least-squares routes (bsvd/blas.h; issues 50 and 52) on
// the GPU, side by side with what cuBLAS and cuSOLVER offer for the same
// batch, in one process, device data, s and d. Per case BATCHxMxN:
//   copy                         cudaMemcpy of the batch's A (device to
//                                device): the memory roofline the GEMV
//                                rows are compared with (read + write)
//   bsvd-gemv-N, -T              y = A x, y = A^T x (bsvd_?gemv_strided_batched)
//   cublas-gemvStridedBatched-N, -T
//   bsvd-trsv                    (m = n) x := A^-1 x, A upper, non-unit
//   cublas-trsmBatched           the same solve, one right-hand side
//   bsvd-gebrd                   (fits on chip) the reduction to bidiagonal form
//   cusolver-gebrd-loop          one cusolverDn?gebrd per matrix (a subset
//                                timed and scaled, as the gesvd loop)
//   bsvd-gebrd+bdsv              gebrd, then the bidiagonal values by
//                                bisection (device API bdsv.cuh, a thread
//                                block per matrix): the values-only route
//                                of issue 50 before it is routed
// Each row's note gives its bandwidth (bytes of A moved once, plus the
// vectors) and, for a bsvd row, the largest difference from the cuBLAS /
// cuSOLVER row in units of u times the operand's scale; the values row
// records T3 (its singular values against LAPACK's) on the check sample.
// Compare the values row with `bsvd bench --values-only` on the same case.
#include "bench_gpu.cuh"

#include <bsvd/bsvd.h>
#include <bsvd/device/bdsv.cuh>

#include <cublas_v2.h>

namespace bsvd::cli {

namespace {

using namespace gpu_bench;

// bsvd's and cuBLAS's / cuSOLVER's calls by precision (real only).
template <class T> struct Bl;
#define BL_TRAITS(T, P, p)                                                                         \
  template <> struct Bl<T> {                                                                       \
    static bsvd_status_t gemv(bsvd_op_t op, int m, int n, const T *A, const T *x, T *y, int batch, \
                              const bsvd_options_t *o) {                                           \
      const int lx = op == BSVD_OP_N ? n : m, ly = op == BSVD_OP_N ? m : n;                        \
      return bsvd_##p##gemv_strided_batched(op, m, n, T(1), A, m, int64_t(m) * n, x, 1, lx, T(0),  \
                                            y, 1, ly, batch, o);                                   \
    }                                                                                              \
    static cublasStatus_t cgemv(cublasHandle_t h, cublasOperation_t op, int m, int n, const T *A,  \
                                const T *x, T *y, int batch) {                                     \
      const T one = 1, zero = 0;                                                                   \
      const int lx = op == CUBLAS_OP_N ? n : m, ly = op == CUBLAS_OP_N ? m : n;                    \
      return cublas##P##gemvStridedBatched(h, op, m, n, &one, A, m, (long long)m * n, x, 1, lx,    \
                                           &zero, y, 1, ly, batch);                                \
    }                                                                                              \
    static bsvd_status_t trsv(int n, const T *A, T *x, int *info, int batch,                       \
                              const bsvd_options_t *o) {                                           \
      return bsvd_##p##trsv_strided_batched(BSVD_UPLO_U, BSVD_OP_N, BSVD_DIAG_N, n, A, n,          \
                                            int64_t(n) * n, x, 1, n, info, batch, o);              \
    }                                                                                              \
    static cublasStatus_t ctrsm(cublasHandle_t h, int n, const T *const *A, T *const *x,           \
                                int batch) {                                                       \
      const T one = 1;                                                                             \
      return cublas##P##trsmBatched(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,      \
                                    CUBLAS_DIAG_NON_UNIT, n, 1, &one, A, n, x, n, batch);          \
    }                                                                                              \
    static bsvd_status_t gebrd(int m, int n, T *A, T *d, T *e, T *tq, T *tp, int *info, int batch, \
                               const bsvd_options_t *o) {                                          \
      const int k = std::min(m, n);                                                                \
      return bsvd_##p##gebrd_strided_batched(m, n, A, m, int64_t(m) * n, d, k, e,                  \
                                             std::max(k - 1, 1), tq, k, tp, k, info, batch, o);    \
    }                                                                                              \
    static cusolverStatus_t cgebrd_size(cusolverDnHandle_t h, int m, int n, int *lw) {             \
      return cusolverDn##P##gebrd_bufferSize(h, m, n, lw);                                         \
    }                                                                                              \
    static cusolverStatus_t cgebrd(cusolverDnHandle_t h, int m, int n, T *A, T *d, T *e, T *tq,    \
                                   T *tp, T *w, int lw, int *info) {                               \
      return cusolverDn##P##gebrd(h, m, n, A, m, d, e, tq, tp, w, lw, info);                       \
    }                                                                                              \
  };
BL_TRAITS(float, S, s)
BL_TRAITS(double, D, d)
#undef BL_TRAITS

// The bidiagonal's values, one thread block per matrix: d and e of the
// strided gebrd output (strides k and max(k - 1, 1)), S with stride k.
template <class R> __global__ void __launch_bounds__(256)
    bdsv_kernel(int k, const R *d, const R *e, R *S, int *info) {
  extern __shared__ __align__(16) unsigned char bdsv_smem[];
  R *scratch = reinterpret_cast<R *>(bdsv_smem), *b = scratch + 32;
  const bsvd::device::block_team<R> team{scratch};
  const size_t i = blockIdx.x;
  const int st = bsvd::device::bdsv(k, d + i * k, e + i * (k > 1 ? k - 1 : 1), S + i * k, b, team);
  if (team.rank() == 0 && st != 0) info[i] = st;
}

template <class T> std::vector<T> to_host(const DevBuf<T> &d) {
  std::vector<T> h(d.n);
  BENCH_CUDA(cudaMemcpy(h.data(), d.p, d.n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

// max_i |a_i - b_i| / (u scale), scale = max_i |b_i| (at least tiny).
template <class T> double diff_u(const std::vector<T> &a, const std::vector<T> &b) {
  double big = 0, diff = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    big = std::max(big, double(std::abs(b[i])));
    diff = std::max(diff, double(std::abs(a[i] - b[i])));
  }
  return diff / (std::max(big, 1e-300) * double(std::numeric_limits<T>::epsilon()) / 2);
}

struct Out {
  const BenchCase &c;
  std::string dev;
  std::vector<BenchRow> &rows;
  BenchRow &add(const std::string &solver, double ms, double bytes) {
    BenchRow r;
    r.solver = solver;
    r.device = dev;
    r.c = c;
    r.ms = ms;
    r.pass = true;
    char b[64];
    std::snprintf(b, sizeof b, "%.0f GB/s", bytes / (ms * 1e6));
    r.note = b;
    rows.push_back(r);
    return rows.back();
  }
  void refused(const std::string &solver, const std::string &why) {
    BenchRow r;
    r.solver = solver;
    r.device = dev;
    r.c = c;
    r.note = why;
    rows.push_back(r);
  }
};

void append(BenchRow &r, const std::string &what, double v) {
  char b[96];
  std::snprintf(b, sizeof b, "; %s %.3g", what.c_str(), v);
  r.note += b;
}

template <class T> void gemv_rows(Out &o, const T *dA, cublasHandle_t h) {
  const BenchCase &c = o.c;
  const int m = c.m, n = c.n, batch = c.batch;
  bsvd_options_t opts = default_options();
  opts.backend = BSVD_BACKEND_CUDA;
  const size_t mn = size_t(m) * n * batch;
  {
    DevBuf<T> copy(mn);
    const double ms = time_events(c.reps, nullptr, [&] {
      BENCH_CUDA(cudaMemcpyAsync(copy.p, dA, mn * sizeof(T), cudaMemcpyDeviceToDevice));
    });
    o.add("copy", ms, 2.0 * mn * sizeof(T)).note += " (read + write)";
  }
  std::vector<T> hx(size_t(std::max(m, n)) * batch);
  for (size_t i = 0; i < hx.size(); ++i) hx[i] = T((i * 7919 % 1000) / 500.0 - 1.0);
  DevBuf<T> x(hx.size()), y0(hx.size()), y1(hx.size());
  BENCH_CUDA(cudaMemcpy(x.p, hx.data(), hx.size() * sizeof(T), cudaMemcpyHostToDevice));
  for (int t = 0; t < 2; ++t) {
    const bsvd_op_t op = t ? BSVD_OP_T : BSVD_OP_N;
    const char *tag = t ? "-T" : "-N";
    const double bytes = double(mn + size_t(m + n) * batch) * sizeof(T);
    bsvd_status_t st = 0;
    const double ms = time_events(c.reps, nullptr,
                                  [&] { st = Bl<T>::gemv(op, m, n, dA, x.p, y0.p, batch, &opts); });
    const double cms = time_events(c.reps, nullptr, [&] {
      BENCH_BLAS(Bl<T>::cgemv(h, t ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, dA, x.p, y1.p, batch));
    });
    if (st != 0) {
      o.refused(std::string("bsvd-gemv") + tag, std::string("failed: ") + bsvd_last_error());
    } else {
      BenchRow &r = o.add(std::string("bsvd-gemv") + tag, ms, bytes);
      append(r, "vs cuBLAS (u |y|)", diff_u(to_host(y0), to_host(y1)));
    }
    o.add(std::string("cublas-gemvStridedBatched") + tag, cms, bytes);
  }
}

// Upper triangular, diagonal n + 1 so that the solve is well conditioned
// (the entries above it are the case's matrix).
template <class T> void trsv_rows(Out &o, const T *hA, cublasHandle_t h) {
  const BenchCase &c = o.c;
  const int n = c.n, batch = c.batch;
  if (c.m != n) return o.refused("bsvd-trsv", "skipped: m != n");
  std::vector<T> U(hA, hA + size_t(batch) * n * n);
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < n; ++j) U[size_t(b) * n * n + j + size_t(j) * n] = T(n + 1);
  DevBuf<T> dU(U.size()), x0(size_t(n) * batch), x1(size_t(n) * batch), xin(size_t(n) * batch);
  DevBuf<int> info(batch);
  std::vector<T> hx(size_t(n) * batch);
  for (size_t i = 0; i < hx.size(); ++i) hx[i] = T((i * 7919 % 1000) / 500.0 - 1.0);
  BENCH_CUDA(cudaMemcpy(dU.p, U.data(), U.size() * sizeof(T), cudaMemcpyHostToDevice));
  BENCH_CUDA(cudaMemcpy(xin.p, hx.data(), hx.size() * sizeof(T), cudaMemcpyHostToDevice));
  std::vector<const T *> pa(batch);
  std::vector<T *> px(batch);
  for (int b = 0; b < batch; ++b) {
    pa[b] = dU.p + size_t(b) * n * n;
    px[b] = x1.p + size_t(b) * n;
  }
  DevBuf<const T *> dpa(batch);
  DevBuf<T *> dpx(batch);
  BENCH_CUDA(cudaMemcpy(dpa.p, pa.data(), batch * sizeof(T *), cudaMemcpyHostToDevice));
  BENCH_CUDA(cudaMemcpy(dpx.p, px.data(), batch * sizeof(T *), cudaMemcpyHostToDevice));
  bsvd_options_t opts = default_options();
  opts.backend = BSVD_BACKEND_CUDA;
  const size_t vb = size_t(n) * batch * sizeof(T);
  const double bytes = (double(n) * (n + 1) / 2 * batch) * sizeof(T) + 2.0 * vb;
  bsvd_status_t st = 0;
  const double ms = time_events(
      c.reps, [&] { BENCH_CUDA(cudaMemcpy(x0.p, xin.p, vb, cudaMemcpyDeviceToDevice)); },
      [&] { st = Bl<T>::trsv(n, dU.p, x0.p, info.p, batch, &opts); });
  const double cms = time_events(
      c.reps, [&] { BENCH_CUDA(cudaMemcpy(x1.p, xin.p, vb, cudaMemcpyDeviceToDevice)); },
      [&] { BENCH_BLAS(Bl<T>::ctrsm(h, n, dpa.p, dpx.p, batch)); });
  if (st != 0) {
    o.refused("bsvd-trsv", std::string("failed: ") + bsvd_last_error());
  } else {
    BenchRow &r = o.add("bsvd-trsv", ms, bytes);
    append(r, "vs cuBLAS (u |x|)", diff_u(to_host(x0), to_host(x1)));
  }
  o.add("cublas-trsmBatched", cms, bytes);
}

template <class T> void gebrd_rows(Out &o, const T *hA, const T *dA, cusolverDnHandle_t h) {
  const BenchCase &c = o.c;
  const int m = c.m, n = c.n, batch = c.batch, k = std::min(m, n);
  const size_t mn = size_t(m) * n;
  DevBuf<T> W(mn * batch), d(size_t(k) * batch), e(size_t(std::max(k - 1, 1)) * batch),
      tq(size_t(k) * batch), tp(size_t(k) * batch), S(size_t(k) * batch);
  DevBuf<int> info(batch);
  bsvd_options_t opts = default_options();
  opts.backend = BSVD_BACKEND_CUDA;
  const double bytes = 2.0 * mn * batch * sizeof(T);
  auto reset = [&] {
    BENCH_CUDA(cudaMemcpy(W.p, dA, mn * batch * sizeof(T), cudaMemcpyDeviceToDevice));
  };
  bsvd_status_t st = 0;
  const double ms = time_events(c.reps, reset, [&] {
    st = Bl<T>::gebrd(m, n, W.p, d.p, e.p, tq.p, tp.p, info.p, batch, &opts);
  });
  std::vector<T> hd, he;
  if (st != 0) {
    o.refused("bsvd-gebrd", std::string("failed: ") + bsvd_last_error());
  } else {
    o.add("bsvd-gebrd", ms, bytes);
    hd = to_host(d);
    he = to_host(e);
    // The values route: gebrd, then bdsv on its d and e.
    const int threads = std::min(256, std::max(32, (k + 31) / 32 * 32));
    const size_t smem = (32 + 2 * size_t(k)) * sizeof(T);
    BENCH_CUDA(cudaFuncSetAttribute(bdsv_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    int(smem)));
    const double vms = time_events(c.reps, reset, [&] {
      st = Bl<T>::gebrd(m, n, W.p, d.p, e.p, tq.p, tp.p, info.p, batch, &opts);
      bdsv_kernel<T><<<batch, threads, smem>>>(k, d.p, e.p, S.p, info.p);
      BENCH_CUDA(cudaGetLastError());
    });
    const double bms = time_events(c.reps, nullptr, [&] {
      bdsv_kernel<T><<<batch, threads, smem>>>(k, d.p, e.p, S.p, info.p);
      BENCH_CUDA(cudaGetLastError());
    });
    BenchCase cv = c;
    cv.vectors = false;
    BenchRow r;
    r.solver = "bsvd-gebrd+bdsv";
    r.device = o.dev;
    r.c = cv;
    r.ms = vms;
    const std::vector<T> hS = to_host(S);
    check<T>(r, cv, hA, hS, size_t(k), {}, 0, m, {}, 0, n, std::min(c.check_sample, batch));
    char b[96];
    std::snprintf(b, sizeof b, "values only; bdsv alone %.3f ms", bms);
    r.note = b;
    o.rows.push_back(r);
  }
  // cuSOLVER: one gebrd per matrix on a subset, scaled.
  const int sub = loop_subset(c);
  int lw = 0;
  BENCH_SOLVER(Bl<T>::cgebrd_size(h, m, n, &lw));
  DevBuf<T> work(size_t(std::max(lw, 1)));
  BenchRow cr;
  cr.solver = "cusolver-gebrd-loop";
  cr.device = o.dev;
  cr.c = c;
  cr.pass = true;
  time_loop_subset(cr, c, sub, reset, [&] {
    for (int b = 0; b < sub; ++b)
      BENCH_SOLVER(Bl<T>::cgebrd(h, m, n, W.p + b * mn, d.p + size_t(b) * k,
                                 e.p + size_t(b) * std::max(k - 1, 1), tq.p + size_t(b) * k,
                                 tp.p + size_t(b) * k, work.p, lw, info.p + b));
  });
  if (!hd.empty()) {
    // |d| and |e| agree with LAPACK's up to signs (the reflectors' choice).
    std::vector<T> cd = to_host(d), ce = to_host(e);
    const size_t nd = size_t(sub) * k, ne = size_t(sub) * std::max(k - 1, 1);
    std::vector<T> ad(nd), bd(nd), ae(ne), be(ne);
    for (size_t i = 0; i < nd; ++i) {
      ad[i] = std::abs(hd[i]);
      bd[i] = std::abs(cd[i]);
    }
    for (size_t i = 0; i < ne; ++i) {
      ae[i] = std::abs(he[i]);
      be[i] = std::abs(ce[i]);
    }
    char b[96];
    std::snprintf(b, sizeof b, "; bsvd's |d|, |e| vs these (u max) %.3g, %.3g", diff_u(ad, bd),
                  diff_u(ae, be));
    cr.note += b;
  }
  o.rows.push_back(cr);
}

template <class T> bool bench_blas_t(const BenchCase &c, const T *hA, std::vector<BenchRow> &rows) {
  Out o{c, "", rows};
  try {
    cudaDeviceProp prop{};
    BENCH_CUDA(cudaGetDeviceProperties(&prop, 0));
    o.dev = prop.name;
    const size_t count = size_t(c.batch) * c.m * c.n;
    DevBuf<T> dA(count);
    BENCH_CUDA(cudaMemcpy(dA.p, hA, count * sizeof(T), cudaMemcpyHostToDevice));
    cublasHandle_t h = nullptr;
    BENCH_BLAS(cublasCreate(&h));
    cusolverDnHandle_t sh = nullptr;
    BENCH_SOLVER(cusolverDnCreate(&sh));
    try {
      gemv_rows<T>(o, dA.p, h);
      trsv_rows<T>(o, hA, h);
      gebrd_rows<T>(o, hA, dA.p, sh);
    } catch (...) {
      cublasDestroy(h);
      cusolverDnDestroy(sh);
      throw;
    }
    cublasDestroy(h);
    cusolverDnDestroy(sh);
  } catch (const CudaFail &f) {
    o.refused("bsvd-blas", "failed: " + f.what);
    return false;
  }
  return true;
}

} // namespace

bool bench_gpu_blas(const BenchCase &c, const void *A, std::vector<BenchRow> &rows) {
  switch (c.precision) {
  case 's': return bench_blas_t<float>(c, static_cast<const float *>(A), rows);
  case 'd': return bench_blas_t<double>(c, static_cast<const double *>(A), rows);
  default: {
    BenchRow r;
    r.solver = "bsvd-blas";
    r.c = c;
    r.note = "skipped: --blas runs s and d";
    rows.push_back(r);
    return true;
  }
  }
}

} // namespace bsvd::cli
