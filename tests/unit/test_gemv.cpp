// Batched GEMV through the C API (bsvd_<p>gemv_*, bsvd.h "Batched BLAS and
// LAPACK") on the cpu backend: against CBLAS xGEMV on many shapes (empty
// ones included), every op, increments of both signs and the scalars at
// BLAS's edges (alpha = 0, beta = 0, beta = 1); the three forms agreeing
// bit for bit; and the argument checks (-position, bsvd_last_error(),
// nothing written).
#include "blas_api_helpers.hpp"

#include <bsvd/bsvd.h>

#include <cblas.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace blas_test;

// ---- CBLAS, one name ---------------------------------------------------------
CBLAS_TRANSPOSE cblas_op(bsvd_op_t t) {
  return t == BSVD_OP_N ? CblasNoTrans : t == BSVD_OP_T ? CblasTrans : CblasConjTrans;
}
void ref_gemv(bsvd_op_t t, int m, int n, float al, const float *A, int lda, const float *x, int ix,
              float be, float *y, int iy) {
  cblas_sgemv(CblasColMajor, cblas_op(t), m, n, al, A, lda, x, ix, be, y, iy);
}
void ref_gemv(bsvd_op_t t, int m, int n, double al, const double *A, int lda, const double *x,
              int ix, double be, double *y, int iy) {
  cblas_dgemv(CblasColMajor, cblas_op(t), m, n, al, A, lda, x, ix, be, y, iy);
}
template <class R> void ref_gemv(bsvd_op_t t, int m, int n, std::complex<R> al,
                                 const std::complex<R> *A, int lda, const std::complex<R> *x,
                                 int ix, std::complex<R> be, std::complex<R> *y, int iy) {
  if constexpr (std::is_same_v<R, float>)
    cblas_cgemv(CblasColMajor, cblas_op(t), m, n, &al, A, lda, x, ix, &be, y, iy);
  else
    cblas_zgemv(CblasColMajor, cblas_op(t), m, n, &al, A, lda, x, ix, &be, y, iy);
}

template <class T> class Gemv : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(Gemv, Types);

// One strided call of `batch` products and its CBLAS reference, entry by
// entry: |y - y_ref| <= 4 (len(x) + 2) u (|alpha| sum |a| |x| + |beta| |y0|)
// (both round each product; the bound is the standard one with room), and
// bit for bit where BLAS does not compute (quick returns).
template <class T> struct Case {
  bsvd_op_t op;
  int m, n, incx, incy, batch = 3;
  T alpha, beta;
  unsigned seed;
};

template <class T> void run_case(const Case<T> &c) {
  using R = R_t<T>;
  const double u = unit_roundoff<T>();
  std::mt19937_64 g(c.seed);
  const int lda = c.m + 2, lx = c.op == BSVD_OP_N ? c.n : c.m, ly = c.op == BSVD_OP_N ? c.m : c.n;
  const int64_t sA = int64_t(lda) * std::max(c.n, 1), sx = 1 + int64_t(std::max(lx, 1)) * 3,
                sy = 1 + int64_t(std::max(ly, 1)) * 3;
  std::vector<T> A(size_t(sA) * c.batch), x(size_t(sx) * c.batch), y(size_t(sy) * c.batch);
  for (T &v : A) v = random_value<T>(g);
  for (T &v : x) v = random_value<T>(g);
  for (T &v : y) v = random_value<T>(g);
  std::vector<T> yref = y;
  const std::vector<T> y0 = y;
  bsvd_options_t o = options(BSVD_BACKEND_CPU);
  ASSERT_EQ(Api<T>::gemv_strided(false, c.op, c.m, c.n, cv(c.alpha), cp(A.data()), lda, sA,
                                 cp(x.data()), c.incx, sx, cv(c.beta), cp(y.data()), c.incy, sy,
                                 c.batch, &o),
            0)
      << bsvd_last_error();
  for (int b = 0; b < c.batch; ++b)
    ref_gemv(c.op, c.m, c.n, c.alpha, A.data() + b * sA, lda, x.data() + b * sx, c.incx, c.beta,
             yref.data() + b * sy, c.incy);
  const bool quick = c.m == 0 || c.n == 0 || (c.alpha == T(0) && c.beta == T(1));
  if (quick) {
    EXPECT_EQ(std::memcmp(y.data(), y0.data(), y.size() * sizeof(T)), 0);
    return;
  }
  const int ax = std::abs(c.incx), ay = std::abs(c.incy);
  for (int b = 0; b < c.batch; ++b)
    for (int i = 0; i < ly; ++i) {
      double bound = 0;
      for (int l = 0; l < lx; ++l) {
        const T a =
            c.op == BSVD_OP_N ? A[b * sA + i + size_t(l) * lda] : A[b * sA + l + size_t(i) * lda];
        const int xl = c.incx > 0 ? l : lx - 1 - l;
        bound += std::abs(a) * std::abs(x[b * sx + size_t(xl) * ax]);
      }
      const size_t yi = size_t(b * sy) + size_t(c.incy > 0 ? i : ly - 1 - i) * ay;
      bound = std::abs(c.alpha) * bound + std::abs(c.beta) * std::abs(y0[yi]);
      EXPECT_LE(std::abs(y[yi] - yref[yi]),
                4 * (lx + 2) * u * bound + std::numeric_limits<R>::min())
          << c.m << "x" << c.n << " op " << c.op << " incx " << c.incx << " incy " << c.incy
          << " b " << b << " i " << i;
    }
  // (the untouched gaps between strided entries and between products)
  for (size_t i = 0; i < y.size(); ++i) {
    const size_t in = i % size_t(sy);
    const bool entry = in % size_t(ay) == 0 && in / size_t(ay) < size_t(ly);
    if (!entry) EXPECT_EQ(y[i], y0[i]) << "gap " << i;
  }
}

TYPED_TEST(Gemv, AgainstCblas) {
  using T = TypeParam;
  std::mt19937_64 g(11);
  const std::vector<std::pair<int, int>> shapes = {{0, 0},  {0, 3},  {3, 0},  {1, 1},  {2, 7},
                                                   {7, 2},  {5, 5},  {17, 9}, {9, 17}, {64, 33},
                                                   {1, 40}, {40, 1}, {300, 3}};
  unsigned seed = 1;
  for (auto [m, n] : shapes)
    for (bsvd_op_t op : {BSVD_OP_N, BSVD_OP_T, BSVD_OP_C})
      for (auto [ix, iy] : std::vector<std::pair<int, int>>{{1, 1}, {-2, 3}, {2, -1}}) {
        const T a = random_value<T>(g), b = random_value<T>(g);
        for (auto [alpha, beta] : std::vector<std::pair<T, T>>{
                 {a, b}, {a, T(0)}, {T(0), b}, {T(0), T(1)}, {T(1), T(1)}, {a, T(0)}})
          run_case<T>({op, m, n, ix, iy, 3, alpha, beta, seed++});
      }
}

// beta = 0 does not read y; alpha = 0 reads neither A nor x (BLAS's
// rules, bsvd.h): NaN there does not reach the result.
TYPED_TEST(Gemv, NanNotReadWhereBlasDoesNotRead) {
  using T = TypeParam;
  const T nan = T(std::numeric_limits<R_t<T>>::quiet_NaN());
  bsvd_options_t o = options(BSVD_BACKEND_CPU);
  std::vector<T> A(6, T(1)), x(3, T(1)), y(3, nan); // (y: 2 entries for op N, 3 for T)
  ASSERT_EQ(Api<T>::gemv_strided(false, BSVD_OP_N, 2, 3, cv(T(2)), cp(A.data()), 2, 6, cp(x.data()),
                                 1, 3, cv(T(0)), cp(y.data()), 1, 2, 1, &o),
            0);
  EXPECT_EQ(y[0], T(6));
  EXPECT_EQ(y[1], T(6));
  std::fill(A.begin(), A.end(), nan);
  std::fill(x.begin(), x.end(), nan);
  ASSERT_EQ(Api<T>::gemv_strided(false, BSVD_OP_N, 2, 3, cv(T(0)), cp(A.data()), 2, 6, cp(x.data()),
                                 1, 3, cv(T(2)), cp(y.data()), 1, 2, 1, &o),
            0);
  EXPECT_EQ(y[0], T(12));
  // alpha = 0: A and x may be NULL; alpha = 0 and beta = 1: y too.
  EXPECT_EQ(Api<T>::gemv_strided(false, BSVD_OP_T, 2, 3, cv(T(0)), (const C_t<T> *)nullptr, 2, 6,
                                 (const C_t<T> *)nullptr, 1, 3, cv(T(0)), cp(y.data()), 1, 3, 1,
                                 &o),
            0);
  EXPECT_EQ(y[0], T(0));
  EXPECT_EQ(Api<T>::gemv_strided(false, BSVD_OP_T, 2, 3, cv(T(0)), (const C_t<T> *)nullptr, 2, 6,
                                 (const C_t<T> *)nullptr, 1, 3, cv(T(1)), (C_t<T> *)nullptr, 1, 3,
                                 1, &o),
            0);
}

// The strided, batched and vbatched forms, and 1 or 2 threads: the same
// bits (one code path per product).
TYPED_TEST(Gemv, FormsAndThreadsAgree) {
  using T = TypeParam;
  std::mt19937_64 g(5);
  const int batch = 7, m = 13, n = 6, lda = 15;
  std::vector<T> A(size_t(lda) * n * batch), x(size_t(m) * batch), y(size_t(n) * batch);
  for (T &v : A) v = random_value<T>(g);
  for (T &v : x) v = random_value<T>(g);
  for (T &v : y) v = random_value<T>(g);
  const T alpha = random_value<T>(g), beta = random_value<T>(g);
  bsvd_options_t o = options(BSVD_BACKEND_CPU);
  o.num_threads = 1;
  std::vector<T> y1 = y;
  ASSERT_EQ(Api<T>::gemv_strided(false, BSVD_OP_C, m, n, cv(alpha), cp(A.data()), lda,
                                 int64_t(lda) * n, cp(x.data()), 1, m, cv(beta), cp(y1.data()), 1,
                                 n, batch, &o),
            0);
  o.num_threads = 2;
  std::vector<T> y2 = y;
  ASSERT_EQ(Api<T>::gemv_strided(false, BSVD_OP_C, m, n, cv(alpha), cp(A.data()), lda,
                                 int64_t(lda) * n, cp(x.data()), 1, m, cv(beta), cp(y2.data()), 1,
                                 n, batch, &o),
            0);
  EXPECT_EQ(y1, y2);
  std::vector<T> y3 = y, y4 = y;
  std::vector<const T *> Ap, xp;
  std::vector<T *> y3p, y4p;
  for (int b = 0; b < batch; ++b) {
    Ap.push_back(A.data() + size_t(b) * lda * n);
    xp.push_back(x.data() + size_t(b) * m);
    y3p.push_back(y3.data() + size_t(b) * n);
    y4p.push_back(y4.data() + size_t(b) * n);
  }
  ASSERT_EQ(Api<T>::gemv_batched(false, BSVD_OP_C, m, n, cv(alpha), cpa(Ap.data()), lda,
                                 cpa(xp.data()), 1, cv(beta), cpa(y3p.data()), 1, batch, &o),
            0);
  EXPECT_EQ(y1, y3);
  const std::vector<int> mv(batch, m), nv(batch, n), ldv(batch, lda), one(batch, 1);
  ASSERT_EQ(Api<T>::gemv_vbatched(false, BSVD_OP_C, mv.data(), nv.data(), cv(alpha), cpa(Ap.data()),
                                  ldv.data(), cpa(xp.data()), one.data(), cv(beta), cpa(y4p.data()),
                                  one.data(), batch, &o),
            0);
  EXPECT_EQ(y1, y4);
}

// Variable sizes: each product as a call of its own.
TYPED_TEST(Gemv, VariableSizes) {
  using T = TypeParam;
  std::mt19937_64 g(9);
  const std::vector<int> mv = {3, 0, 8, 1, 20}, nv = {4, 5, 0, 9, 7}, lda = {3, 1, 9, 2, 21},
                         incx = {1, 1, 2, -1, 1}, incy = {2, 1, 1, 1, -3};
  const int batch = int(mv.size());
  std::vector<std::vector<T>> A(batch), x(batch), y(batch);
  for (int b = 0; b < batch; ++b) {
    A[b].resize(size_t(lda[b]) * std::max(nv[b], 1));
    x[b].resize(size_t(std::max(mv[b], 1)) * 2);
    y[b].resize(size_t(std::max(nv[b], 1)) * 3);
    for (T &v : A[b]) v = random_value<T>(g);
    for (T &v : x[b]) v = random_value<T>(g);
    for (T &v : y[b]) v = random_value<T>(g);
  }
  auto want = y;
  const T alpha = random_value<T>(g), beta = random_value<T>(g);
  bsvd_options_t o = options(BSVD_BACKEND_CPU);
  for (int b = 0; b < batch; ++b)
    ASSERT_EQ(Api<T>::gemv_strided(false, BSVD_OP_T, mv[b], nv[b], cv(alpha), cp(A[b].data()),
                                   lda[b], 0, cp(x[b].data()), incx[b], 0, cv(beta),
                                   cp(want[b].data()), incy[b], 0, 1, &o),
              0);
  std::vector<const T *> Ap, xp;
  std::vector<T *> yp;
  for (int b = 0; b < batch; ++b) {
    Ap.push_back(A[b].data());
    xp.push_back(x[b].data());
    yp.push_back(y[b].data());
  }
  ASSERT_EQ(Api<T>::gemv_vbatched(false, BSVD_OP_T, mv.data(), nv.data(), cv(alpha), cpa(Ap.data()),
                                  lda.data(), cpa(xp.data()), incx.data(), cv(beta), cpa(yp.data()),
                                  incy.data(), batch, &o),
            0)
      << bsvd_last_error();
  EXPECT_EQ(y, want);
}

// ---- argument checks ---------------------------------------------------------
struct StridedCall {
  int trans = BSVD_OP_N, m = 4, n = 3, lda = 4, incx = 1, incy = 1, batch = 2;
  int64_t sA = 12, sx = 3, sy = 4;
  std::vector<double> A = std::vector<double>(24, 1.0), x = std::vector<double>(6, 1.0),
                      y = std::vector<double>(8, 7.0);
  const double *pA = nullptr, *px = nullptr;
  double *py = nullptr;
  bool nullA = false, nullx = false, nully = false;
  bsvd_options_t o = options(BSVD_BACKEND_CPU);
  const bsvd_options_t *po = &o;
  bsvd_status_t run() {
    return bsvd_dgemv_strided_batched(bsvd_op_t(trans), m, n, 1.0, nullA ? nullptr : A.data(), lda,
                                      sA, nullx ? nullptr : x.data(), incx, sx, 0.5,
                                      nully ? nullptr : y.data(), incy, sy, batch, po);
  }
};

TEST(GemvArgs, StridedFormNamesTheArgument) {
  struct Bad {
    const char *what;
    int status;
    void (*set)(StridedCall &);
  };
  const Bad cases[] = {
      {"trans", -1, [](StridedCall &c) { c.trans = 3; }},
      {"m", -2, [](StridedCall &c) { c.m = -1; }},
      {"n", -3, [](StridedCall &c) { c.n = -1; }},
      {"A", -5, [](StridedCall &c) { c.nullA = true; }},
      {"lda", -6, [](StridedCall &c) { c.lda = 3; }},
      {"strideA", -7, [](StridedCall &c) { c.sA = -1; }},
      {"x", -8, [](StridedCall &c) { c.nullx = true; }},
      {"incx", -9, [](StridedCall &c) { c.incx = 0; }},
      {"stridex", -10, [](StridedCall &c) { c.sx = -3; }},
      {"y", -12, [](StridedCall &c) { c.nully = true; }},
      {"incy", -13, [](StridedCall &c) { c.incy = 0; }},
      {"stridey", -14, [](StridedCall &c) { c.sy = 3; }},
      {"stridey", -14, [](StridedCall &c) { c.incy = -2, c.sy = 6; }},
      {"batch", -15, [](StridedCall &c) { c.batch = -1; }},
      {"opts->struct_size", -16, [](StridedCall &c) { c.o.struct_size = 3; }},
      {"opts->num_threads", -16, [](StridedCall &c) { c.o.num_threads = -4; }},
  };
  for (const Bad &b : cases) {
    StridedCall c;
    b.set(c);
    EXPECT_EQ(c.run(), b.status) << b.what;
    EXPECT_NE(std::string(bsvd_last_error()).find(b.what), std::string::npos)
        << b.what << ": " << bsvd_last_error();
    EXPECT_EQ(c.y, std::vector<double>(8, 7.0)) << b.what << ": y written";
  }
  StridedCall ok;
  EXPECT_EQ(ok.run(), 0) << bsvd_last_error();
  EXPECT_STREQ(bsvd_last_error(), "");
  // strideA = 0 and stridex = 0: one A and one x for the whole batch.
  StridedCall bc;
  bc.sA = 0, bc.sx = 0;
  EXPECT_EQ(bc.run(), 0);
  EXPECT_EQ(bc.y[0], bc.y[4]);
  // Empty products, and batch = 0: nothing read, nothing written.
  StridedCall e;
  e.n = 0, e.nullA = e.nullx = true;
  EXPECT_EQ(e.run(), 0);
  EXPECT_EQ(e.y, std::vector<double>(8, 7.0));
  StridedCall z;
  z.batch = 0, z.nullA = z.nullx = z.nully = true;
  EXPECT_EQ(z.run(), 0);
  z.po = nullptr; // defaults (auto backend: host data runs on the cpu)
  z.batch = 2, z.nullA = z.nullx = z.nully = false;
  EXPECT_EQ(z.run(), 0) << bsvd_last_error();
}

TEST(GemvArgs, PointerArrayForms) {
  std::vector<double> A(12, 1.0), x(4, 1.0), y(3, 0.0);
  const double *Ap[2] = {A.data(), A.data()}, *xp[2] = {x.data(), x.data()};
  double *yp[2] = {y.data(), y.data() + 0};
  double y2[3];
  yp[1] = y2;
  bsvd_options_t o = options(BSVD_BACKEND_CPU);
  EXPECT_EQ(bsvd_dgemv_batched(BSVD_OP_T, 4, 3, 1.0, nullptr, 4, xp, 1, 0.0, yp, 1, 2, &o), -5);
  EXPECT_EQ(bsvd_dgemv_batched(BSVD_OP_T, 4, 3, 1.0, Ap, 4, nullptr, 1, 0.0, yp, 1, 2, &o), -7);
  EXPECT_EQ(bsvd_dgemv_batched(BSVD_OP_T, 4, 3, 1.0, Ap, 4, xp, 0, 0.0, yp, 1, 2, &o), -8);
  EXPECT_EQ(bsvd_dgemv_batched(BSVD_OP_T, 4, 3, 1.0, Ap, 4, xp, 1, 0.0, nullptr, 1, 2, &o), -10);
  EXPECT_EQ(bsvd_dgemv_batched(BSVD_OP_T, 4, 3, 1.0, Ap, 4, xp, 1, 0.0, yp, 0, 2, &o), -11);
  EXPECT_EQ(bsvd_dgemv_batched(BSVD_OP_T, 4, 3, 1.0, Ap, 4, xp, 1, 0.0, yp, 1, -1, &o), -12);
  yp[1] = nullptr; // a NULL entry
  EXPECT_EQ(bsvd_dgemv_batched(BSVD_OP_T, 4, 3, 1.0, Ap, 4, xp, 1, 0.0, yp, 1, 2, &o), -10);
  EXPECT_NE(std::string(bsvd_last_error()).find("matrix 1"), std::string::npos);
  yp[1] = y2;
  EXPECT_EQ(bsvd_dgemv_batched(BSVD_OP_T, 4, 3, 1.0, Ap, 4, xp, 1, 0.0, yp, 1, 2, &o), 0);
  EXPECT_EQ(y[0], 4.0);
  EXPECT_EQ(y2[2], 4.0);
  // vbatched: per-matrix sizes named with their index.
  int m[2] = {4, 4}, n[2] = {3, 3}, lda[2] = {4, 4}, inc[2] = {1, 1};
  EXPECT_EQ(bsvd_dgemv_vbatched(BSVD_OP_N, nullptr, n, 1.0, Ap, lda, xp, inc, 0.0, yp, inc, 2, &o),
            -2);
  m[1] = -1;
  EXPECT_EQ(bsvd_dgemv_vbatched(BSVD_OP_N, m, n, 1.0, Ap, lda, xp, inc, 0.0, yp, inc, 2, &o), -2);
  EXPECT_NE(std::string(bsvd_last_error()).find("m[1]"), std::string::npos) << bsvd_last_error();
  m[1] = 4, lda[1] = 2;
  EXPECT_EQ(bsvd_dgemv_vbatched(BSVD_OP_N, m, n, 1.0, Ap, lda, xp, inc, 0.0, yp, inc, 2, &o), -6);
  EXPECT_NE(std::string(bsvd_last_error()).find("lda[1]"), std::string::npos);
  lda[1] = 4;
  EXPECT_EQ(bsvd_dgemv_vbatched(BSVD_OP_N, m, n, 1.0, Ap, lda, xp, nullptr, 0.0, yp, inc, 2, &o),
            -8);
  EXPECT_EQ(bsvd_dgemv_vbatched(BSVD_OP_N, m, n, 1.0, Ap, lda, xp, inc, 0.0, yp, nullptr, 2, &o),
            -11);
}

// The backends: the cuda backend takes device memory only; without a GPU
// (or CUDA) it is unavailable, and the _async forms with it.
TEST(GemvArgs, Backends) {
  std::vector<double> A(12, 1.0), x(4, 1.0), y(4, 0.0);
  bsvd_options_t o = options(BSVD_BACKEND_CUDA);
  const bsvd_status_t s = bsvd_dgemv_strided_batched(BSVD_OP_N, 4, 3, 1.0, A.data(), 4, 0, x.data(),
                                                     1, 0, 0.0, y.data(), 1, 4, 1, &o);
  EXPECT_EQ(s, bsvd_cuda_available() ? int(BSVD_STATUS_NOT_SUPPORTED)
                                     : int(BSVD_STATUS_BACKEND_UNAVAILABLE));
  o.backend = BSVD_BACKEND_CPU;
  EXPECT_EQ(bsvd_dgemv_strided_batched_async(BSVD_OP_N, 4, 3, 1.0, A.data(), 4, 0, x.data(), 1, 0,
                                             0.0, y.data(), 1, 4, 1, &o),
            -16);
  o.backend = BSVD_BACKEND_AUTO;
  const bsvd_status_t a = bsvd_dgemv_strided_batched_async(
      BSVD_OP_N, 4, 3, 1.0, A.data(), 4, 0, x.data(), 1, 0, 0.0, y.data(), 1, 4, 1, &o);
  EXPECT_EQ(a, bsvd_cuda_available() ? -12 : int(BSVD_STATUS_BACKEND_UNAVAILABLE));
  EXPECT_EQ(y, std::vector<double>(4, 0.0));
}

} // namespace
