// The cpu backend of batched GEMV, GEBRD, TRSV, GELS and GESVDX (backends.hpp;
// bsvd.h, "Batched BLAS ..."): std::thread workers over the batch, each
// product, reduction or solve by the device API's code on serial_team
// (blas.cuh, gebrd.cuh, trsv.cuh, gels.cuh).
//
// Why the device headers and not the BLAS / LAPACK the library may link:
// (1) they are the CPU twin of the cuda kernels -- the same operations in
// the same order per output entry -- so the GPU tests compare a kernel with
// this backend to rounding, and a user can do the same; (2) the library
// builds without LAPACK (BSVD_LAPACK=OFF) and these calls must exist there
// too; (3) the batches these calls are for hold small matrices, where a
// BLAS call's fixed cost is a large share of the work. For large matrices
// OpenBLAS's blocked, vectorized kernels would be faster (dgemv several
// times, dgebrd more, by its GEMM-rich blocked form); routing those to
// LAPACK is the cpu side of the later blocked step (issue 50).
#include "../core/backends.hpp"
#include "../core/gels_one.hpp"
#include "../core/gesvdx_one.hpp"
#include "../plan/bidiag.hpp"

#include <bsvd/device/gebrd.cuh>
#include <bsvd/device/trsv.cuh>

#include <algorithm>
#include <atomic>
#include <complex>
#include <thread>
#include <vector>

namespace bsvd::detail {

namespace {

// Runs body(b, worker) for every matrix b of the batch on up to `threads`
// workers pulling indices from a shared counter (each result depends only
// on its matrix: the same bits for any number of threads). work: the
// batch's flops, which caps the workers so that each has at least about
// 64K of them -- starting a thread costs tens of microseconds, about what
// a 64 x 64 GEMV takes.
template <class Body> void for_each_matrix(int count, int threads, double work, Body &&body) {
  const double per = 65536;
  threads = std::max(1, std::min({threads, count, int(std::min(work / per + 1, 1e6))}));
  std::atomic<int> next{0};
  auto worker = [&](int w) {
    for (int b; (b = next.fetch_add(1)) < count;) body(b, w);
  };
  std::vector<std::thread> pool;
  try {
    pool.reserve(size_t(threads - 1));
    for (int w = 1; w < threads; ++w) pool.emplace_back(worker, w);
  } catch (...) {
    // Fewer threads than asked: the started workers share the batch.
  }
  worker(0);
  for (std::thread &t : pool) t.join();
}

bsvd::device::op device_op(int trans) {
  return trans == BSVD_OP_N   ? bsvd::device::op::N
         : trans == BSVD_OP_T ? bsvd::device::op::T
                              : bsvd::device::op::C;
}

} // namespace

template <class T> bsvd_status_t cpu_gemv(const GemvBatch<T> &b, int threads) {
  double work = 0;
  for (int i = 0; i < b.count; ++i) work += 2.0 * b.dims.rows(i) * b.dims.cols(i);
  const bsvd::device::op op = device_op(b.trans);
  for_each_matrix(b.count, threads, work, [&](int i, int) {
    // The GPU's split of op T / C (plan::gemv_lanes): the same bits.
    bsvd::device::gemv(op, b.dims.rows(i), b.dims.cols(i), b.alpha, b.A.ptr(i), b.A.ldm(i),
                       b.x.ptr(i), b.x.ldm(i), b.beta, b.y.ptr(i), b.y.ldm(i),
                       bsvd::device::serial_team{},
                       plan::gemv_lanes(op == bsvd::device::op::N, b.dims.rows(i)));
  });
  return BSVD_STATUS_SUCCESS;
}

// info[i]: trsv's (0, or the first zero of a non-unit diagonal, x_i then
// unchanged).
template <class T> bsvd_status_t cpu_trsv(const TrsvBatch<T> &b, int threads) {
  double work = 0;
  for (int i = 0; i < b.count; ++i) work += double(b.order(i)) * b.order(i);
  const bsvd::device::uplo ul =
      b.uplo == BSVD_UPLO_L ? bsvd::device::uplo::L : bsvd::device::uplo::U;
  const bsvd::device::diag dg =
      b.diag == BSVD_DIAG_N ? bsvd::device::diag::N : bsvd::device::diag::U;
  const bsvd::device::op op = device_op(b.trans);
  for_each_matrix(b.count, threads, work, [&](int i, int) {
    b.info[i] =
        bsvd::device::trsv(ul, op, dg, b.order(i), b.A.ptr(i), b.A.ldm(i), b.x.ptr(i), b.x.ldm(i));
  });
  return BSVD_STATUS_SUCCESS;
}

// Each worker has gels's work for the largest matrix; info: gels_one's.
template <class T> bsvd_status_t cpu_gels(const GelsBatch<T> &b, int threads) {
  double work = 0;
  long wmax = 1;
  for (int i = 0; i < b.count; ++i) {
    const double m = b.dims.rows(i), n = b.dims.cols(i), k = std::min(m, n);
    work += 2 * m * n * k + 4 * std::max(m, n) * k * b.rhs(i);
    wmax = std::max(wmax, bsvd::device::gels_work(b.dims.rows(i), b.dims.cols(i), b.rhs(i)));
  }
  using W = typename bsvd::device::detail::traits<T>::W; // (the device API's complex)
  std::vector<std::vector<T>> scratch(size_t(std::max(1, std::min(threads, b.count))));
  for_each_matrix(b.count, int(scratch.size()), work, [&](int i, int w) {
    std::vector<T> &ws = scratch[size_t(w)];
    if (ws.empty()) ws.resize(size_t(wmax));
    b.info[i] = gels_one(b, i, reinterpret_cast<W *>(ws.data()), static_cast<W *>(nullptr),
                         bsvd::device::serial_team{});
  });
  return BSVD_STATUS_SUCCESS;
}

// Each worker has min(m, n) entries of work for the largest matrix.
template <class T> bsvd_status_t cpu_gelsd_apply(const GelsdBatch<T> &b, int threads) {
  double work = 0;
  int kmax = 1;
  for (int i = 0; i < b.count; ++i) {
    const int m = b.dims.rows(i), n = b.dims.cols(i);
    work += 2.0 * (m + n) * std::min(m, n) * b.nrhs;
    kmax = std::max(kmax, std::min(m, n));
  }
  using W = typename bsvd::device::detail::traits<T>::W;
  std::vector<std::vector<T>> scratch(size_t(std::max(1, std::min(threads, b.count))));
  for_each_matrix(b.count, int(scratch.size()), work, [&](int i, int w) {
    std::vector<T> &ws = scratch[size_t(w)];
    if (ws.empty()) ws.resize(size_t(kmax));
    b.rank[i] = gelsd_one(b, i, reinterpret_cast<W *>(ws.data()), bsvd::device::serial_team{});
  });
  return BSVD_STATUS_SUCCESS;
}

// Each worker has a work vector for the largest matrix (gebd2's max(m, n)
// entries); info: BSVD_INFO_NONFINITE where d or e holds NaN or Inf.
template <class T> bsvd_status_t cpu_gebrd(const GebrdBatch<T> &b, int threads) {
  using R = real_of_t<T>;
  double work = 0;
  int mx = 1;
  for (int i = 0; i < b.count; ++i) {
    const double m = b.dims.rows(i), n = b.dims.cols(i);
    work += 4 * m * n * std::min(m, n);
    mx = std::max({mx, b.dims.rows(i), b.dims.cols(i)});
  }
  std::vector<std::vector<T>> scratch(size_t(std::max(1, std::min(threads, b.count))));
  for_each_matrix(b.count, int(scratch.size()), work, [&](int i, int w) {
    std::vector<T> &ws = scratch[size_t(w)];
    if (ws.empty()) ws.resize(size_t(mx));
    const int m = b.dims.rows(i), n = b.dims.cols(i), k = std::min(m, n);
    R *d = b.d.ptr(i), *e = b.e.ptr(i);
    if (k > 0)
      bsvd::device::gebd2(m, n, b.A.ptr(i), b.A.ldm(i), d, e, b.tauq.ptr(i), b.taup.ptr(i),
                          ws.data());
    bool finite = true;
    for (int j = 0; j < k; ++j)
      finite = finite && bsvd::device::detail::finite(d[j]) &&
               (j + 1 >= k || bsvd::device::detail::finite(e[j]));
    b.info[i] = finite ? 0 : BSVD_INFO_NONFINITE;
  });
  return BSVD_STATUS_SUCCESS;
}

// Each matrix: a copy of A reduced by gebd2, then gesvdx_one; each worker
// has scratch for the largest matrix.
template <class T> bsvd_status_t cpu_gesvdx(const GesvdxBatch<T> &b, int threads) {
  using R = real_of_t<T>;
  double work = 0;
  int mx = 1, kx = 1;
  size_t mn = 1;
  for (int i = 0; i < b.count; ++i) {
    const int m = b.dims.rows(i), n = b.dims.cols(i), k = std::min(m, n);
    work += 4.0 * m * n * k + (b.vectors ? 40.0 * k * gesvdx_room(b, k) * (m + n) : 0);
    mx = std::max({mx, m, n}), kx = std::max(kx, k), mn = std::max(mn, size_t(m) * n);
  }
  struct Scratch {
    std::vector<T> a; // A's copy, then gebd2's work, tauq, taup, gesvdx's work
    std::vector<R> r; // d, e, gesvdx's rwork
  };
  std::vector<Scratch> scratch(size_t(std::max(1, std::min(threads, b.count))));
  for_each_matrix(b.count, int(scratch.size()), work, [&](int i, int w) {
    Scratch &s = scratch[size_t(w)];
    if (s.a.empty()) {
      s.a.resize(mn + size_t(mx) + 2 * size_t(kx) + size_t(bsvd::device::gesvdx_work(mx, mx, kx)));
      s.r.resize(2 * size_t(kx) + size_t(bsvd::device::gesvdx_rwork(kx)));
    }
    const int m = b.dims.rows(i), n = b.dims.cols(i), k = std::min(m, n), lda = std::max(1, m);
    if (k == 0) {
      b.ns[i] = 0, b.info[i] = 0;
      return;
    }
    T *A = s.a.data(), *gwork = A + mn, *tauq = gwork + mx, *taup = tauq + kx, *xwork = taup + kx;
    R *d = s.r.data(), *e = d + kx, *rwork = e + kx;
    const T *src = b.A.ptr(i);
    for (int j = 0; j < n; ++j)
      std::copy(src + size_t(j) * b.A.ldm(i), src + size_t(j) * b.A.ldm(i) + m,
                A + size_t(j) * lda);
    bsvd::device::gebd2(m, n, A, lda, d, e, tauq, taup, gwork);
    gesvdx_one(b, i, A, lda, d, e, tauq, taup, rwork, xwork, bsvd::device::serial_team{});
  });
  return BSVD_STATUS_SUCCESS;
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template bsvd_status_t cpu_gesvdx<T>(const GesvdxBatch<T> &, int);                               \
  template bsvd_status_t cpu_gemv<T>(const GemvBatch<T> &, int);                                   \
  template bsvd_status_t cpu_gebrd<T>(const GebrdBatch<T> &, int);                                 \
  template bsvd_status_t cpu_trsv<T>(const TrsvBatch<T> &, int);                                   \
  template bsvd_status_t cpu_gels<T>(const GelsBatch<T> &, int);                                   \
  template bsvd_status_t cpu_gelsd_apply<T>(const GelsdBatch<T> &, int);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail
