// Batched TRSV through the C API (bsvd_<p>trsv_*, bsvd.h "Batched BLAS:
// TRSV") on the cpu backend: on well-conditioned (diagonally dominant)
// triangles of many orders, every uplo / op / diag and increments of both
// signs, the scaled backward error ||op(A) x - b|| / (||A|| ||x|| n u) of
// the result and of CBLAS xTRSV's; on ill-conditioned ones the backward
// error only; the untouched rest of A's storage and of x; the first zero
// of a non-unit diagonal (info, x unchanged, the rest of the batch
// solved); the three forms and the thread counts agreeing bit for bit;
// and the argument checks (-position, bsvd_last_error(), nothing written).
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
CBLAS_UPLO cblas_uplo(bsvd_uplo_t u) { return u == BSVD_UPLO_L ? CblasLower : CblasUpper; }
CBLAS_DIAG cblas_diag(bsvd_diag_t d) { return d == BSVD_DIAG_N ? CblasNonUnit : CblasUnit; }
void ref_trsv(bsvd_uplo_t u, bsvd_op_t t, bsvd_diag_t d, int n, const float *A, int lda, float *x,
              int ix) {
  cblas_strsv(CblasColMajor, cblas_uplo(u), cblas_op(t), cblas_diag(d), n, A, lda, x, ix);
}
void ref_trsv(bsvd_uplo_t u, bsvd_op_t t, bsvd_diag_t d, int n, const double *A, int lda, double *x,
              int ix) {
  cblas_dtrsv(CblasColMajor, cblas_uplo(u), cblas_op(t), cblas_diag(d), n, A, lda, x, ix);
}
template <class R> void ref_trsv(bsvd_uplo_t u, bsvd_op_t t, bsvd_diag_t d, int n,
                                 const std::complex<R> *A, int lda, std::complex<R> *x, int ix) {
  if constexpr (std::is_same_v<R, float>)
    cblas_ctrsv(CblasColMajor, cblas_uplo(u), cblas_op(t), cblas_diag(d), n, A, lda, x, ix);
  else
    cblas_ztrsv(CblasColMajor, cblas_uplo(u), cblas_op(t), cblas_diag(d), n, A, lda, x, ix);
}

template <class T> class Trsv : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(Trsv, Types);

// The residual's working precision: long double (real) and its complex.
using LD = long double;
using CLD = std::complex<long double>;
template <class T> CLD wide(T v) {
  if constexpr (std::is_same_v<T, R_t<T>>)
    return CLD(LD(v), 0);
  else
    return CLD(LD(v.real()), LD(v.imag()));
}

bool in_triangle(bsvd_uplo_t u, int i, int j) { return u == BSVD_UPLO_L ? i >= j : i <= j; }

// ||op(A) x - b||_inf / (||op(A)||_inf ||x||_inf n u), A's triangle with
// the diagonal of diag, x and b the n entries at increment inc.
template <class T> double backward_error(bsvd_uplo_t u, bsvd_op_t t, bsvd_diag_t d, int n,
                                         const T *A, int lda, const T *x, const T *b, int inc) {
  auto at = [&](int i) { return size_t(inc > 0 ? i : n - 1 - i) * size_t(std::abs(inc)); };
  auto opa = [&](int i, int j) -> CLD {
    const int r = t == BSVD_OP_N ? i : j, c = t == BSVD_OP_N ? j : i;
    if (!in_triangle(u, r, c)) return 0;
    if (r == c && d == BSVD_DIAG_U) return 1;
    const CLD a = wide(A[r + size_t(c) * lda]);
    return t == BSVD_OP_C ? std::conj(a) : a;
  };
  LD res = 0, anorm = 0, xnorm = 0;
  for (int i = 0; i < n; ++i) {
    CLD s = -wide(b[at(i)]);
    LD row = 0;
    for (int j = 0; j < n; ++j) {
      const CLD a = opa(i, j);
      s += a * wide(x[at(j)]);
      row += std::abs(a);
    }
    res = std::max(res, std::abs(s));
    anorm = std::max(anorm, row);
    xnorm = std::max(xnorm, std::abs(wide(x[at(i)])));
  }
  if (res == 0) return 0;
  return double(res / (anorm * xnorm * n * LD(unit_roundoff<T>())));
}

// A batch of `batch` triangles in one strided array: the triangle uplo
// random, its diagonal n + 1 + |random| (dominant; well conditioned) or
// random (ill: ill conditioned; with diag = U the off-diagonal is scaled
// by 1 / n instead unless ill), and NaN everywhere the solve must not read
// (the other triangle, the diagonal when diag = U, the padding rows).
template <class T> struct Problem {
  int n, lda, inc, batch;
  int64_t sA, sx;
  std::vector<T> A, x;
};
template <class T> Problem<T> make_problem(bsvd_uplo_t u, bsvd_diag_t d, int n, int inc, int batch,
                                           bool ill, std::mt19937_64 &g) {
  const T nan = T(std::numeric_limits<R_t<T>>::quiet_NaN());
  Problem<T> p{n, n + 3, inc, batch, 0, 0, {}, {}};
  p.sA = int64_t(p.lda) * std::max(n, 1);
  p.sx = 2 + int64_t(std::max(n, 1)) * std::abs(inc);
  p.A.assign(size_t(p.sA) * batch, nan);
  p.x.resize(size_t(p.sx) * batch);
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        if (!in_triangle(u, i, j) || (i == j && d == BSVD_DIAG_U)) continue;
        T v = random_value<T>(g);
        if (i == j && !ill) v = T(R_t<T>(n + 1)) + T(std::abs(v));
        if (i != j && d == BSVD_DIAG_U && !ill) v /= R_t<T>(n); // (dominant unit diagonal)
        p.A[size_t(b * p.sA) + i + size_t(j) * p.lda] = v;
      }
  for (T &v : p.x) v = random_value<T>(g);
  return p;
}

template <class T> void run_case(bsvd_uplo_t u, bsvd_op_t t, bsvd_diag_t d, int n, int inc,
                                 bool ill, std::mt19937_64 &g) {
  Problem<T> p = make_problem<T>(u, d, n, inc, 3, ill, g);
  const std::vector<T> b = p.x;
  std::vector<T> xref = p.x;
  std::vector<int> info(size_t(p.batch), -7);
  bsvd_options_t o = options(BSVD_BACKEND_CPU);
  ASSERT_EQ(Api<T>::trsv_strided(false, u, t, d, n, cp(p.A.data()), p.lda, p.sA, cp(p.x.data()),
                                 inc, p.sx, info.data(), p.batch, &o),
            0)
      << bsvd_last_error();
  const std::string what = "n " + std::to_string(n) + " uplo " + std::to_string(u) + " op " +
                           std::to_string(t) + " diag " + std::to_string(d) + " inc " +
                           std::to_string(inc) + (ill ? " ill" : "");
  for (int k = 0; k < p.batch; ++k) {
    EXPECT_EQ(info[size_t(k)], 0) << what;
    const size_t off = size_t(k * p.sx);
    ref_trsv(u, t, d, n, p.A.data() + k * p.sA, p.lda, xref.data() + off, inc);
    bool finite = true;
    for (int i = 0; i < n; ++i)
      finite = finite && std::isfinite(std::abs(p.x[off + i * std::abs(inc)]));
    ASSERT_TRUE(finite) << what;
    EXPECT_LE(backward_error(u, t, d, n, p.A.data() + k * p.sA, p.lda, p.x.data() + off,
                             b.data() + off, inc),
              30)
        << what << " matrix " << k;
    if (!ill) { // (CBLAS on the same problem: the check itself is sound)
      EXPECT_LE(backward_error(u, t, d, n, p.A.data() + k * p.sA, p.lda, xref.data() + off,
                               b.data() + off, inc),
                30)
          << what << " cblas";
    }
  }
  // The gaps between x's entries and after each x: untouched.
  const size_t ai = size_t(std::abs(inc));
  for (size_t i = 0; i < p.x.size(); ++i) {
    const size_t in = i % size_t(p.sx);
    if (!(in % ai == 0 && in / ai < size_t(n))) {
      EXPECT_EQ(p.x[i], b[i]) << what << " gap " << i;
    }
  }
}

TYPED_TEST(Trsv, BackwardErrorAndCblas) {
  using T = TypeParam;
  std::mt19937_64 g(21);
  for (int n : {0, 1, 2, 17, 64, 130})
    for (bsvd_uplo_t u : {BSVD_UPLO_L, BSVD_UPLO_U})
      for (bsvd_op_t t : {BSVD_OP_N, BSVD_OP_T, BSVD_OP_C})
        for (bsvd_diag_t d : {BSVD_DIAG_N, BSVD_DIAG_U})
          for (int inc : {1, -1, 3, -3}) run_case<T>(u, t, d, n, inc, false, g);
}

// Random triangles without a dominant diagonal: condition numbers grow
// like 2^n, the forward error with them; the backward error stays small.
TYPED_TEST(Trsv, IllConditionedBackwardError) {
  using T = TypeParam;
  std::mt19937_64 g(23);
  for (int n : {17, 40})
    for (bsvd_uplo_t u : {BSVD_UPLO_L, BSVD_UPLO_U})
      for (bsvd_op_t t : {BSVD_OP_N, BSVD_OP_C})
        for (int inc : {1, -2}) run_case<T>(u, t, BSVD_DIAG_N, n, inc, true, g);
}

// A zero on a non-unit diagonal: info = its 1-based index for that matrix
// only, its x unchanged; the others solved. With diag = U the diagonal is
// not read, so the same data solves.
TYPED_TEST(Trsv, ZeroDiagonalInfo) {
  using T = TypeParam;
  std::mt19937_64 g(29);
  for (bsvd_op_t t : {BSVD_OP_N, BSVD_OP_T}) {
    Problem<T> p = make_problem<T>(BSVD_UPLO_U, BSVD_DIAG_N, 40, 1, 3, false, g);
    p.A[size_t(p.sA) + 35 + size_t(35) * p.lda] = T(0);
    p.A[size_t(p.sA) + 36 + size_t(36) * p.lda] = T(0);
    const std::vector<T> b = p.x;
    std::vector<int> info(3, -7);
    bsvd_options_t o = options(BSVD_BACKEND_CPU);
    ASSERT_EQ(Api<T>::trsv_strided(false, BSVD_UPLO_U, t, BSVD_DIAG_N, p.n, cp(p.A.data()), p.lda,
                                   p.sA, cp(p.x.data()), 1, p.sx, info.data(), 3, &o),
              0);
    EXPECT_EQ(info, (std::vector<int>{0, 36, 0}));
    EXPECT_TRUE(std::equal(p.x.begin() + p.sx, p.x.begin() + 2 * p.sx, b.begin() + p.sx));
    for (int k : {0, 2})
      EXPECT_LE(backward_error(BSVD_UPLO_U, t, BSVD_DIAG_N, p.n, p.A.data() + k * p.sA, p.lda,
                               p.x.data() + k * p.sx, b.data() + k * p.sx, 1),
                30);
    // diag = U: the zero is not read.
    for (int k = 0; k < 3; ++k)
      for (int j = 0; j < p.n; ++j) p.A[size_t(k * p.sA) + j + size_t(j) * p.lda] = T(0);
    p.x = b;
    ASSERT_EQ(Api<T>::trsv_strided(false, BSVD_UPLO_U, t, BSVD_DIAG_U, p.n, cp(p.A.data()), p.lda,
                                   p.sA, cp(p.x.data()), 1, p.sx, info.data(), 3, &o),
              0);
    EXPECT_EQ(info, (std::vector<int>{0, 0, 0}));
    EXPECT_LE(backward_error(BSVD_UPLO_U, t, BSVD_DIAG_U, p.n, p.A.data() + p.sA, p.lda,
                             p.x.data() + p.sx, b.data() + p.sx, 1),
              30);
  }
}

// The strided, batched and vbatched forms, and 1 or 2 threads: the same
// bits (one code path per solve).
TYPED_TEST(Trsv, FormsAndThreadsAgree) {
  using T = TypeParam;
  std::mt19937_64 g(31);
  const int batch = 7;
  Problem<T> p = make_problem<T>(BSVD_UPLO_L, BSVD_DIAG_N, 45, -2, batch, false, g);
  bsvd_options_t o = options(BSVD_BACKEND_CPU);
  std::vector<int> info(batch, -7);
  o.num_threads = 1;
  std::vector<T> x1 = p.x, x2 = p.x, x3 = p.x, x4 = p.x;
  ASSERT_EQ(Api<T>::trsv_strided(false, BSVD_UPLO_L, BSVD_OP_C, BSVD_DIAG_N, p.n, cp(p.A.data()),
                                 p.lda, p.sA, cp(x1.data()), p.inc, p.sx, info.data(), batch, &o),
            0);
  o.num_threads = 2;
  ASSERT_EQ(Api<T>::trsv_strided(false, BSVD_UPLO_L, BSVD_OP_C, BSVD_DIAG_N, p.n, cp(p.A.data()),
                                 p.lda, p.sA, cp(x2.data()), p.inc, p.sx, info.data(), batch, &o),
            0);
  EXPECT_EQ(x1, x2);
  std::vector<const T *> Ap;
  std::vector<T *> x3p, x4p;
  for (int b = 0; b < batch; ++b) {
    Ap.push_back(p.A.data() + b * p.sA);
    x3p.push_back(x3.data() + b * p.sx);
    x4p.push_back(x4.data() + b * p.sx);
  }
  ASSERT_EQ(Api<T>::trsv_batched(false, BSVD_UPLO_L, BSVD_OP_C, BSVD_DIAG_N, p.n, cpa(Ap.data()),
                                 p.lda, cpa(x3p.data()), p.inc, info.data(), batch, &o),
            0);
  EXPECT_EQ(x1, x3);
  const std::vector<int> nv(batch, p.n), ldv(batch, p.lda), incv(batch, p.inc);
  ASSERT_EQ(Api<T>::trsv_vbatched(false, BSVD_UPLO_L, BSVD_OP_C, BSVD_DIAG_N, nv.data(),
                                  cpa(Ap.data()), ldv.data(), cpa(x4p.data()), incv.data(),
                                  info.data(), batch, &o),
            0);
  EXPECT_EQ(x1, x4);
  EXPECT_EQ(info, std::vector<int>(batch, 0));
}

// Variable sizes: each solve as a call of its own, a zero diagonal in one.
TYPED_TEST(Trsv, VariableSizes) {
  using T = TypeParam;
  std::mt19937_64 g(37);
  const std::vector<int> nv = {3, 0, 33, 1, 70}, incx = {1, 1, -2, 3, -1};
  const int batch = int(nv.size());
  std::vector<Problem<T>> ps;
  std::vector<int> lda;
  for (int b = 0; b < batch; ++b) {
    ps.push_back(make_problem<T>(BSVD_UPLO_U, BSVD_DIAG_N, nv[b], incx[b], 1, false, g));
    lda.push_back(ps.back().lda);
  }
  ps[2].A[5 + size_t(5) * lda[2]] = T(0);
  std::vector<std::vector<T>> want;
  std::vector<int> want_info(batch), info(batch, -7);
  bsvd_options_t o = options(BSVD_BACKEND_CPU);
  for (int b = 0; b < batch; ++b) {
    want.push_back(ps[b].x);
    ASSERT_EQ(Api<T>::trsv_strided(false, BSVD_UPLO_U, BSVD_OP_T, BSVD_DIAG_N, nv[b],
                                   cp(ps[b].A.data()), lda[b], 0, cp(want[b].data()), incx[b], 0,
                                   &want_info[b], 1, &o),
              0);
  }
  std::vector<const T *> Ap;
  std::vector<T *> xp;
  for (int b = 0; b < batch; ++b) {
    Ap.push_back(ps[b].A.data());
    xp.push_back(ps[b].x.data());
  }
  ASSERT_EQ(Api<T>::trsv_vbatched(false, BSVD_UPLO_U, BSVD_OP_T, BSVD_DIAG_N, nv.data(),
                                  cpa(Ap.data()), lda.data(), cpa(xp.data()), incx.data(),
                                  info.data(), batch, &o),
            0)
      << bsvd_last_error();
  EXPECT_EQ(info, want_info);
  EXPECT_EQ(info[2], 6);
  for (int b = 0; b < batch; ++b) EXPECT_EQ(ps[b].x, want[b]) << b;
}

// ---- argument checks ---------------------------------------------------------
struct StridedCall {
  int uplo = BSVD_UPLO_L, trans = BSVD_OP_N, diag = BSVD_DIAG_N, n = 4, lda = 4, incx = 1,
      batch = 2;
  int64_t sA = 16, sx = 4;
  std::vector<double> A = std::vector<double>(32, 1.0), x = std::vector<double>(8, 7.0);
  std::vector<int> info = std::vector<int>(2, -7);
  bool nullA = false, nullx = false, nullinfo = false;
  bsvd_options_t o = options(BSVD_BACKEND_CPU);
  const bsvd_options_t *po = &o;
  bsvd_status_t run() {
    return bsvd_dtrsv_strided_batched(
        bsvd_uplo_t(uplo), bsvd_op_t(trans), bsvd_diag_t(diag), n, nullA ? nullptr : A.data(), lda,
        sA, nullx ? nullptr : x.data(), incx, sx, nullinfo ? nullptr : info.data(), batch, po);
  }
};

TEST(TrsvArgs, StridedFormNamesTheArgument) {
  struct Bad {
    const char *what;
    int status;
    void (*set)(StridedCall &);
  };
  const Bad cases[] = {
      {"uplo", -1, [](StridedCall &c) { c.uplo = 2; }},
      {"uplo", -1, [](StridedCall &c) { c.uplo = -1; }},
      {"trans", -2, [](StridedCall &c) { c.trans = 3; }},
      {"diag", -3, [](StridedCall &c) { c.diag = 2; }},
      {"n", -4, [](StridedCall &c) { c.n = -1; }},
      {"A", -5, [](StridedCall &c) { c.nullA = true; }},
      {"lda", -6, [](StridedCall &c) { c.lda = 3; }},
      {"lda", -6, [](StridedCall &c) { c.n = 0, c.lda = 0; }},
      {"strideA", -7, [](StridedCall &c) { c.sA = -1; }},
      {"x", -8, [](StridedCall &c) { c.nullx = true; }},
      {"incx", -9, [](StridedCall &c) { c.incx = 0; }},
      {"stridex", -10, [](StridedCall &c) { c.sx = 3; }},
      {"stridex", -10, [](StridedCall &c) { c.incx = -2, c.sx = 6; }},
      {"info", -11, [](StridedCall &c) { c.nullinfo = true; }},
      {"batch", -12, [](StridedCall &c) { c.batch = -1; }},
      {"opts->struct_size", -13, [](StridedCall &c) { c.o.struct_size = 3; }},
      {"opts->num_threads", -13, [](StridedCall &c) { c.o.num_threads = -4; }},
  };
  for (const Bad &b : cases) {
    StridedCall c;
    b.set(c);
    EXPECT_EQ(c.run(), b.status) << b.what;
    EXPECT_NE(std::string(bsvd_last_error()).find(b.what), std::string::npos)
        << b.what << ": " << bsvd_last_error();
    EXPECT_EQ(c.x, std::vector<double>(8, 7.0)) << b.what << ": x written";
    EXPECT_EQ(c.info, std::vector<int>(2, -7)) << b.what << ": info written";
  }
  StridedCall ok;
  EXPECT_EQ(ok.run(), 0) << bsvd_last_error();
  EXPECT_STREQ(bsvd_last_error(), "");
  EXPECT_EQ(ok.info, std::vector<int>(2, 0));
  // strideA = 0: one A for the whole batch.
  StridedCall bc;
  bc.sA = 0;
  EXPECT_EQ(bc.run(), 0);
  EXPECT_EQ(bc.x[0], bc.x[4]);
  // n = 0: A and x not read, nothing written but info.
  StridedCall e;
  e.n = 0, e.lda = 1, e.nullA = e.nullx = true;
  EXPECT_EQ(e.run(), 0);
  EXPECT_EQ(e.x, std::vector<double>(8, 7.0));
  EXPECT_EQ(e.info, std::vector<int>(2, 0));
  // batch = 0: nothing read (info may be NULL).
  StridedCall z;
  z.batch = 0, z.nullA = z.nullx = z.nullinfo = true;
  EXPECT_EQ(z.run(), 0);
  z.po = nullptr; // defaults (auto backend: host data runs on the cpu)
  z.batch = 2, z.nullA = z.nullx = z.nullinfo = false;
  EXPECT_EQ(z.run(), 0) << bsvd_last_error();
}

TEST(TrsvArgs, PointerArrayForms) {
  std::vector<double> A(16, 1.0), x(4, 1.0), x2(4, 1.0);
  const double *Ap[2] = {A.data(), A.data()};
  double *xp[2] = {x.data(), x2.data()};
  int info[2] = {-7, -7};
  bsvd_options_t o = options(BSVD_BACKEND_CPU);
  const bsvd_uplo_t L = BSVD_UPLO_L;
  const bsvd_op_t N = BSVD_OP_N;
  const bsvd_diag_t D = BSVD_DIAG_N;
  EXPECT_EQ(bsvd_dtrsv_batched(bsvd_uplo_t(5), N, D, 4, Ap, 4, xp, 1, info, 2, &o), -1);
  EXPECT_EQ(bsvd_dtrsv_batched(L, bsvd_op_t(-1), D, 4, Ap, 4, xp, 1, info, 2, &o), -2);
  EXPECT_EQ(bsvd_dtrsv_batched(L, N, bsvd_diag_t(7), 4, Ap, 4, xp, 1, info, 2, &o), -3);
  EXPECT_EQ(bsvd_dtrsv_batched(L, N, D, -1, Ap, 4, xp, 1, info, 2, &o), -4);
  EXPECT_EQ(bsvd_dtrsv_batched(L, N, D, 4, nullptr, 4, xp, 1, info, 2, &o), -5);
  EXPECT_EQ(bsvd_dtrsv_batched(L, N, D, 4, Ap, 3, xp, 1, info, 2, &o), -6);
  EXPECT_EQ(bsvd_dtrsv_batched(L, N, D, 4, Ap, 4, nullptr, 1, info, 2, &o), -7);
  EXPECT_EQ(bsvd_dtrsv_batched(L, N, D, 4, Ap, 4, xp, 0, info, 2, &o), -8);
  EXPECT_EQ(bsvd_dtrsv_batched(L, N, D, 4, Ap, 4, xp, 1, nullptr, 2, &o), -9);
  EXPECT_EQ(bsvd_dtrsv_batched(L, N, D, 4, Ap, 4, xp, 1, info, -1, &o), -10);
  o.struct_size = 1;
  EXPECT_EQ(bsvd_dtrsv_batched(L, N, D, 4, Ap, 4, xp, 1, info, 2, &o), -11);
  o = options(BSVD_BACKEND_CPU);
  xp[1] = nullptr; // a NULL entry
  EXPECT_EQ(bsvd_dtrsv_batched(L, N, D, 4, Ap, 4, xp, 1, info, 2, &o), -7);
  EXPECT_NE(std::string(bsvd_last_error()).find("matrix 1"), std::string::npos);
  EXPECT_EQ(x, std::vector<double>(4, 1.0));
  EXPECT_EQ(info[0], -7);
  xp[1] = x2.data();
  EXPECT_EQ(bsvd_dtrsv_batched(L, N, D, 4, Ap, 4, xp, 1, info, 2, &o), 0);
  EXPECT_EQ(x[0], 1.0);
  EXPECT_EQ(x[1], 0.0);
  EXPECT_EQ(info[1], 0);
  // vbatched: per-matrix sizes named with their index.
  int n[2] = {4, 4}, lda[2] = {4, 4}, inc[2] = {1, 1};
  EXPECT_EQ(bsvd_dtrsv_vbatched(L, N, D, nullptr, Ap, lda, xp, inc, info, 2, &o), -4);
  n[1] = -1;
  EXPECT_EQ(bsvd_dtrsv_vbatched(L, N, D, n, Ap, lda, xp, inc, info, 2, &o), -4);
  EXPECT_NE(std::string(bsvd_last_error()).find("n[1]"), std::string::npos) << bsvd_last_error();
  n[1] = 4, lda[1] = 2;
  EXPECT_EQ(bsvd_dtrsv_vbatched(L, N, D, n, Ap, lda, xp, inc, info, 2, &o), -6);
  EXPECT_NE(std::string(bsvd_last_error()).find("lda[1]"), std::string::npos);
  lda[1] = 4, inc[1] = 0;
  EXPECT_EQ(bsvd_dtrsv_vbatched(L, N, D, n, Ap, lda, xp, inc, info, 2, &o), -8);
  EXPECT_NE(std::string(bsvd_last_error()).find("incx[1]"), std::string::npos);
  EXPECT_EQ(bsvd_dtrsv_vbatched(L, N, D, n, Ap, lda, xp, nullptr, info, 2, &o), -8);
  EXPECT_EQ(bsvd_dtrsv_vbatched(L, N, D, n, Ap, nullptr, xp, inc, info, 2, &o), -6);
}

// The backends: the cuda backend takes device memory only; without a GPU
// (or CUDA) it is unavailable, and the _async forms with it.
TEST(TrsvArgs, Backends) {
  std::vector<double> A(16, 1.0), x(4, 1.0);
  int info = -7;
  bsvd_options_t o = options(BSVD_BACKEND_CUDA);
  const bsvd_status_t s = bsvd_dtrsv_strided_batched(BSVD_UPLO_U, BSVD_OP_N, BSVD_DIAG_N, 4,
                                                     A.data(), 4, 0, x.data(), 1, 4, &info, 1, &o);
  EXPECT_EQ(s, bsvd_cuda_available() ? int(BSVD_STATUS_NOT_SUPPORTED)
                                     : int(BSVD_STATUS_BACKEND_UNAVAILABLE));
  o.backend = BSVD_BACKEND_CPU;
  EXPECT_EQ(bsvd_dtrsv_strided_batched_async(BSVD_UPLO_U, BSVD_OP_N, BSVD_DIAG_N, 4, A.data(), 4, 0,
                                             x.data(), 1, 4, &info, 1, &o),
            -13);
  o.backend = BSVD_BACKEND_AUTO;
  const bsvd_status_t a = bsvd_dtrsv_strided_batched_async(
      BSVD_UPLO_U, BSVD_OP_N, BSVD_DIAG_N, 4, A.data(), 4, 0, x.data(), 1, 4, &info, 1, &o);
  EXPECT_EQ(a, bsvd_cuda_available() ? -8 : int(BSVD_STATUS_BACKEND_UNAVAILABLE));
  EXPECT_EQ(x, std::vector<double>(4, 1.0));
  EXPECT_EQ(info, -7);
}

} // namespace
