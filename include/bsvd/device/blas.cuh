// Level-2 BLAS on one matrix, shared by a team (team.cuh): GEMV and GERC,
// the two operations a Householder reflector is applied with (gebrd.cuh),
// and the scaled 2-norm of LARFG. Header-only; compiles with nvcc and with
// a plain C++17 compiler (the CPU twin).
//
//   bsvd::device::gemv(op::C, m, n, alpha, A, lda, x, incx, beta, y, incy, team);
//
// BLAS semantics (xGEMV, xGERC): column-major A with leading dimension lda;
// increments may be negative (the vector is then read from its end); with
// beta = 0, y is not read. T is float, double, std::complex<float|double>
// or bsvd::device::complex<float|double> (reinterpreted, as in svd.cuh).
//
// Work split (MAGMA-BLAS §4.1: one device function, the team's size a
// parameter of the caller): each member owns the output entries
// i = rank, rank + size, ... and forms their dot products alone, in the
// order of the serial code, so a team of one is bit for bit the CPU twin
// and every output has the same bits whatever the team size. For op N that
// is one row per thread (consecutive threads read consecutive addresses of
// a column: coalesced); for op T / C one column per thread, which in shared
// memory wants lda odd (no bank conflicts). In global memory op T / C
// wants several threads per column and a reduction (MAGMA-BLAS Figs. 5, 9):
// gemv's `lanes` splits each dot product into that many partial sums with
// a fixed combination order, again the same bits for every team.
#pragma once

#include "svd.cuh"
#include "team.cuh"

#include <string.h>

namespace bsvd::device {

enum class op { N, T, C }; // A, A^T, A^H

namespace detail {

// ---- the working scalar, beyond svd.cuh's helpers ----------------------
template <class R> BSVD_DEVICE_HD R wmul(R a, R b) { return a * b; }
template <class R> BSVD_DEVICE_HD complex<R> wmul(complex<R> a, complex<R> b) {
  return {rfma(a.re, b.re, -(a.im * b.im)), rfma(a.re, b.im, a.im * b.re)};
}
template <class R> BSVD_DEVICE_HD R wadd(R a, R b) { return a + b; }
template <class R> BSVD_DEVICE_HD complex<R> wadd(complex<R> a, complex<R> b) {
  return {a.re + b.re, a.im + b.im};
}
// acc += a b (no conjugation)
template <class R> BSVD_DEVICE_HD void mul_acc(R &acc, R a, R b) { acc = rfma(a, b, acc); }
template <class R> BSVD_DEVICE_HD void mul_acc(complex<R> &acc, complex<R> a, complex<R> b) {
  acc.re = rfma(a.re, b.re, acc.re);
  acc.re = rfma(-a.im, b.im, acc.re);
  acc.im = rfma(a.re, b.im, acc.im);
  acc.im = rfma(a.im, b.re, acc.im);
}
template <class R> BSVD_DEVICE_HD R re_(R x) { return x; }
template <class R> BSVD_DEVICE_HD R re_(complex<R> x) { return x.re; }
template <class R> BSVD_DEVICE_HD R im_(R) { return R(0); }
template <class R> BSVD_DEVICE_HD R im_(complex<R> x) { return x.im; }
template <class R> BSVD_DEVICE_HD bool is_zero(R x) { return x == R(0); }
template <class R> BSVD_DEVICE_HD bool is_zero(complex<R> x) {
  return x.re == R(0) && x.im == R(0);
}
template <class R> BSVD_DEVICE_HD R neg_(R x) { return -x; }
template <class R> BSVD_DEVICE_HD complex<R> neg_(complex<R> x) { return {-x.re, -x.im}; }

// Offset of element i of a vector of len entries stored with increment inc
// (BLAS: a negative increment starts from the end).
BSVD_DEVICE_HD long vec_at(int i, int len, int inc) {
  return inc > 0 ? long(i) * inc : long(len - 1 - i) * (-inc);
}

// T's bits as the working type (memcpy: no aliasing of unrelated types).
template <class T> BSVD_DEVICE_HD typename traits<T>::W as_w(T x) {
  typename traits<T>::W w;
  memcpy(&w, &x, sizeof w);
  return w;
}

template <class W, class Team>
BSVD_DEVICE_HD void gemv_w(op trans, int m, int n, W alpha, const W *A, int lda, const W *x,
                           int incx, W beta, W *y, int incy, const Team &team) {
  const int leny = trans == op::N ? m : n, lenx = trans == op::N ? n : m;
  const bool beta0 = is_zero(beta);
  for (int o = team.rank(); o < leny; o += team.size()) {
    W acc = zero<W>();
    if (trans == op::N) {
      for (int j = 0; j < n; ++j) mul_acc(acc, A[o + long(j) * lda], x[vec_at(j, lenx, incx)]);
    } else {
      const W *col = A + long(o) * lda;
      if (trans == op::C)
        for (int i = 0; i < m; ++i) dot_acc(acc, col[i], x[vec_at(i, lenx, incx)]);
      else
        for (int i = 0; i < m; ++i) mul_acc(acc, col[i], x[vec_at(i, lenx, incx)]);
    }
    W &yo = y[vec_at(o, leny, incy)];
    W r = wmul(alpha, acc);
    if (!beta0) mul_acc(r, beta, yo);
    yo = r;
  }
  team.sync();
}

// Whether a team's members can exchange registers by warp shuffles
// (block_team); other teams (serial_team, a host test's) take the path
// that forms the same partial sums one after another.
template <class Team, class = void> struct has_shuffle { static constexpr bool value = false; };
template <class Team> struct has_shuffle<Team, decltype(void(Team::kShuffle))> {
  static constexpr bool value = Team::kShuffle;
};

#if defined(__CUDA_ARCH__)
template <class R> __device__ __forceinline__ R shfl_xor_w(unsigned mask, R v, int o) {
  return __shfl_xor_sync(mask, v, o);
}
template <class R>
__device__ __forceinline__ complex<R> shfl_xor_w(unsigned mask, complex<R> v, int o) {
  return {__shfl_xor_sync(mask, v.re, o), __shfl_xor_sync(mask, v.im, o)};
}
#endif

// y = alpha op(A) x + beta y for op T / C with each output's dot product
// split over g lanes (g a power of two, 2 ... 32; MAGMA-BLAS §4.1's
// several threads per column): partial p sums the rows p, p + g, ... in
// ascending order, and the partials combine as a butterfly -- at offset
// o = g/2, ..., 1 partial p becomes p + (p ^ o) -- after which all g hold
// the same bits. A block team gives each column to g consecutive lanes of a
// warp (consecutive rows: coalesced reads of the column) and shuffles;
// any other team gives each column to one member, which forms the g
// partials and the butterfly in the same order: the same bits.
template <class W, class Team>
BSVD_DEVICE_HD void gemv_split_w(op trans, int m, int n, W alpha, const W *A, int lda, const W *x,
                                 int incx, W beta, W *y, int incy, int g, const Team &team) {
  const bool beta0 = is_zero(beta);
  auto finish = [&](int c, W acc) {
    W &yo = y[vec_at(c, n, incy)];
    W r = wmul(alpha, acc);
    if (!beta0) mul_acc(r, beta, yo);
    yo = r;
  };
  auto partial = [&](const W *col, int p) {
    W acc = zero<W>();
    if (trans == op::C)
      for (int i = p; i < m; i += g) dot_acc(acc, col[i], x[vec_at(i, m, incx)]);
    else
      for (int i = p; i < m; i += g) mul_acc(acc, col[i], x[vec_at(i, m, incx)]);
    return acc;
  };
#if defined(__CUDA_ARCH__)
  constexpr bool kShuffle = has_shuffle<Team>::value;
#else
  constexpr bool kShuffle = false;
#endif
  if constexpr (kShuffle) {
#if defined(__CUDA_ARCH__)
    const int r = team.rank(), lane = r & (g - 1), groups = team.size() / g;
    const unsigned mask = g == 32 ? 0xffffffffu : ((1u << g) - 1u) << ((r & 31) & ~(g - 1));
    for (int c = r / g; c < n; c += groups) {
      W acc = partial(A + long(c) * lda, lane);
      for (int o = g >> 1; o > 0; o >>= 1) acc = wadd(acc, shfl_xor_w(mask, acc, o));
      if (lane == 0) finish(c, acc);
    }
#endif
  } else {
    for (int c = team.rank(); c < n; c += team.size()) {
      W part[32], next[32];
      for (int p = 0; p < g; ++p) part[p] = partial(A + long(c) * lda, p);
      for (int o = g >> 1; o > 0; o >>= 1) {
        for (int p = 0; p < g; ++p) next[p] = wadd(part[p], part[p ^ o]);
        for (int p = 0; p < g; ++p) part[p] = next[p];
      }
      finish(c, part[0]);
    }
  }
  team.sync();
}

// A += alpha x y^H. Each member updates rows rank, rank + size, ... of
// every column (coalesced, and no two members write one entry).
template <class W, class Team> BSVD_DEVICE_HD void gerc_w(int m, int n, W alpha, const W *x,
                                                          int incx, const W *y, int incy, W *A,
                                                          int lda, const Team &team) {
  for (int j = 0; j < n; ++j) {
    const W c = wmul(alpha, conj_(y[vec_at(j, n, incy)]));
    if (is_zero(c)) continue;
    W *col = A + long(j) * lda;
    for (int i = team.rank(); i < m; i += team.size()) mul_acc(col[i], x[vec_at(i, m, incx)], c);
  }
  team.sync();
}

// ||x||_2 of len entries at stride inc > 0 without overflow or underflow:
// the largest |component| first, then the sum of squares of the entries
// scaled by the power of two 2^-e that brings it into [1, 2) (exact, so
// the only rounding is the sum's). Two reductions over the team.
template <class W, class Team>
BSVD_DEVICE_HD typename traits<W>::R nrm2_w(int len, const W *x, int inc, const Team &team) {
  using R = typename traits<W>::R;
  R big = R(0);
  for (int i = team.rank(); i < len; i += team.size()) {
    const R a = amax(x[long(i) * inc]);
    big = a > big ? a : big;
  }
  big = team.max(big);
  if (!(big > R(0)) || !(big <= maxfin<R>())) return big; // 0, Inf or NaN
  const int e = rilogb(big);
  R ssq = R(0);
  for (int i = team.rank(); i < len; i += team.size())
    ssq += abs2(pow2_scale<W, R>(x[long(i) * inc], -e));
  ssq = team.sum(ssq);
  return pow2_scale<R, R>(rsqrt_(ssq), e);
}

} // namespace detail

// The lanes an op T / C dot product of `rows` entries is split over: a
// warp's 32 once there are 32 rows, else the next power of two (the rule
// of the batched GEMV, plan::gemv_lanes, and of gels's reflectors).
BSVD_DEVICE_HD constexpr int split_lanes(int rows) {
  int g = 1;
  while (g < 32 && g < rows) g *= 2;
  return g;
}

// y = alpha op(A) x + beta y; op(A) is m x n (N), or A^T / A^H of the m x n
// A (T, C): y has m entries for N, n for T and C. BLAS's edges (reference
// xGEMV, which the public bsvd_<p>gemv_* promise): m = 0 or n = 0, or
// alpha = 0 and beta = 1, return with y untouched; alpha = 0 scales y by
// beta without reading A or x (so NaN there does not reach y).
//
// lanes (op T / C only; ignored for op N): 1, each output's dot product
// in row order by one member; 2, 4, ... 32 (other values round down to
// one of these), split over that many partial sums combined by a
// butterfly (detail::gemv_split_w) -- other bits than 1 gives, the same
// for every team.
template <class T, class Team = serial_team>
BSVD_DEVICE_HD void gemv(op trans, int m, int n, T alpha, const T *A, int lda, const T *x, int incx,
                         T beta, T *y, int incy, const Team &team = {}, int lanes = 1) {
  using W = typename detail::traits<T>::W;
  using R = typename detail::traits<T>::R;
  static_assert(sizeof(W) == sizeof(T), "T must be layout-compatible with the working type");
  if (m <= 0 || n <= 0) return; // (every member returns: no write, no barrier needed)
  const W a = detail::as_w(alpha), b = detail::as_w(beta);
  if (detail::is_zero(a)) {
    if (detail::re_(b) == R(1) && detail::im_(b) == R(0)) return;
    const int leny = trans == op::N ? m : n;
    W *yw = reinterpret_cast<W *>(y);
    for (int o = team.rank(); o < leny; o += team.size()) {
      W &yo = yw[detail::vec_at(o, leny, incy)];
      yo = detail::is_zero(b) ? detail::zero<W>() : detail::wmul(b, yo);
    }
    team.sync();
    return;
  }
  int g = 1; // lanes as a power of two in [1, 32], rounded down
  while (g < 32 && 2 * g <= lanes) g *= 2;
  if (trans != op::N && g > 1)
    detail::gemv_split_w(trans, m, n, a, reinterpret_cast<const W *>(A), lda,
                         reinterpret_cast<const W *>(x), incx, b, reinterpret_cast<W *>(y), incy, g,
                         team);
  else
    detail::gemv_w(trans, m, n, a, reinterpret_cast<const W *>(A), lda,
                   reinterpret_cast<const W *>(x), incx, b, reinterpret_cast<W *>(y), incy, team);
}

// A = A + alpha x y^H (x has m entries, y n; for real T, GER).
template <class T, class Team = serial_team>
BSVD_DEVICE_HD void gerc(int m, int n, T alpha, const T *x, int incx, const T *y, int incy, T *A,
                         int lda, const Team &team = {}) {
  using W = typename detail::traits<T>::W;
  if (m <= 0 || n <= 0) return;
  detail::gerc_w(m, n, detail::as_w(alpha), reinterpret_cast<const W *>(x), incx,
                 reinterpret_cast<const W *>(y), incy, reinterpret_cast<W *>(A), lda, team);
}

} // namespace bsvd::device
