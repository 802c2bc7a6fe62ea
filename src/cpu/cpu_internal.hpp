// Private helpers of the CPU backend (src/cpu only): scalar traits, the
// level-1 kernels (dot products, squared norms, plane rotations), a bump
// allocator over caller-provided scratch, a per-worker cache of orderings,
// and the workspace-taking variants of the routines declared in jacobi.hpp.
//
// The public routines of jacobi.hpp allocate their own temporaries and wrap
// the *_impl variants below; solve_one / cpu_gesvj call the *_impl variants
// with scratch carved from the caller's workspace, so that a batch solve
// allocates nothing per matrix except (once per distinct size and worker)
// the ordering tables.
#pragma once

#include "jacobi.hpp"

#include "../core/rotation.hpp"
#include "../plan/tuning.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <type_traits>

namespace bsvd::detail::cpu {

// ---- scalar traits ----------------------------------------------------------
template <class T> struct is_cplx : std::false_type {};
template <class R> struct is_cplx<std::complex<R>> : std::true_type {};
template <class T> inline constexpr bool is_cplx_v = is_cplx<T>::value;

template <class R> inline R conj_(R x) { return x; }
template <class R> inline std::complex<R> conj_(std::complex<R> x) { return std::conj(x); }

template <class R> inline R real_(R x) { return x; }
template <class R> inline R real_(std::complex<R> x) { return x.real(); }

// |x|^2 without a square root.
template <class R> inline R abs2_(R x) { return x * x; }
template <class R> inline R abs2_(std::complex<R> x) {
  return x.real() * x.real() + x.imag() * x.imag();
}

// Largest magnitude of the real components (|x| for real x, max(|re|,|im|)
// for complex x): within a factor sqrt(2) of |x|, and what matters for the
// exponent range of the squares that the Jacobi method forms.
template <class R> inline R maxpart_(R x) { return std::fabs(x); }
template <class R> inline R maxpart_(std::complex<R> x) {
  return std::max(std::fabs(x.real()), std::fabs(x.imag()));
}

// gamma / |gamma| for the rotation of a pair (ag = |gamma| > 0): exact +-1
// for real gamma; for complex gamma unit_phase (rotation.hpp), which keeps
// |e| = 1 when gamma lies near the underflow threshold.
template <class R> inline R phase_(R g, R ag) { return g / ag; }
template <class R> inline std::complex<R> phase_(std::complex<R> g, R ag) {
  R er, ei;
  unit_phase(g.real(), g.imag(), ag, er, ei);
  return {er, ei};
}

template <class R> inline bool finite_(R x) { return std::isfinite(x); }
template <class R> inline bool finite_(std::complex<R> x) {
  return std::isfinite(x.real()) && std::isfinite(x.imag());
}

template <class T> inline T nan_() {
  using R = real_of_t<T>;
  if constexpr (is_cplx_v<T>)
    return T(std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::quiet_NaN());
  else
    return std::numeric_limits<R>::quiet_NaN();
}

// x * 2^e exactly (as long as the result is a normal number), for scalars
// of either kind.
template <class R> inline R ldexp_(R x, int e) { return std::ldexp(x, e); }
template <class R> inline std::complex<R> ldexp_(std::complex<R> x, int e) {
  return std::complex<R>(std::ldexp(x.real(), e), std::ldexp(x.imag(), e));
}

// ---- level-1 kernels ----------------------------------------------------------
// Inner products are accumulated in the working precision (as the GPU
// kernels do) with four independent partial sums: the error bound is that of
// pairwise summation of depth 2 followed by sequential sums of length m/4,
// slightly better than a single running sum, and the loop pipelines.

// sum |x_i|^2 over m entries of a column.
template <class T> inline real_of_t<T> nrm2sq(int m, const T *x) {
  using R = real_of_t<T>;
  const R *r = reinterpret_cast<const R *>(x);
  const int len = is_cplx_v<T> ? 2 * m : m;
  R s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int i = 0;
  for (; i + 3 < len; i += 4) {
    s0 += r[i] * r[i];
    s1 += r[i + 1] * r[i + 1];
    s2 += r[i + 2] * r[i + 2];
    s3 += r[i + 3] * r[i + 3];
  }
  for (; i < len; ++i) s0 += r[i] * r[i];
  return (s0 + s1) + (s2 + s3);
}

// x^H y over m entries.
template <class T> inline T dotc(int m, const T *x, const T *y) {
  using R = real_of_t<T>;
  if constexpr (is_cplx_v<T>) {
    const R *a = reinterpret_cast<const R *>(x);
    const R *b = reinterpret_cast<const R *>(y);
    // conj(a) * b = (ar br + ai bi) + i (ar bi - ai br)
    R re0 = 0, re1 = 0, im0 = 0, im1 = 0;
    int i = 0;
    for (; i + 1 < m; i += 2) {
      const R ar0 = a[2 * i], ai0 = a[2 * i + 1], br0 = b[2 * i], bi0 = b[2 * i + 1];
      const R ar1 = a[2 * i + 2], ai1 = a[2 * i + 3], br1 = b[2 * i + 2], bi1 = b[2 * i + 3];
      re0 += ar0 * br0 + ai0 * bi0;
      im0 += ar0 * bi0 - ai0 * br0;
      re1 += ar1 * br1 + ai1 * bi1;
      im1 += ar1 * bi1 - ai1 * br1;
    }
    for (; i < m; ++i) {
      const R ar = a[2 * i], ai = a[2 * i + 1], br = b[2 * i], bi = b[2 * i + 1];
      re0 += ar * br + ai * bi;
      im0 += ar * bi - ai * br;
    }
    return T(re0 + re1, im0 + im1);
  } else {
    R s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int i = 0;
    for (; i + 3 < m; i += 4) {
      s0 += x[i] * y[i];
      s1 += x[i + 1] * y[i + 1];
      s2 += x[i + 2] * y[i + 2];
      s3 += x[i + 3] * y[i + 3];
    }
    for (; i < m; ++i) s0 += x[i] * y[i];
    return (s0 + s1) + (s2 + s3);
  }
}

// The plane rotation of rotation.hpp in its tangent form (HBJ eq. 4.1):
//   x' = c (x - te y),   y' = c (y + conj(te) x)
// with te = t conj(e) for the columns of a one-sided step (a_p' = c a_p -
// s conj(e) a_q, a_q' = s e a_p + c a_q, s = c t), and te = t e for the rows
// of the two-sided update (J^H G). With swap the results are stored
// exchanged (x slot receives y', y slot receives x'): the 2x2 sorting.
template <class T>
inline void rotate(int len, T *x, int incx, T *y, int incy, real_of_t<T> c, T te, bool swap) {
  const T tc = conj_(te);
  if (incx == 1 && incy == 1) {
    if (swap) {
      for (int i = 0; i < len; ++i) {
        const T a = x[i], b = y[i];
        x[i] = c * (b + tc * a);
        y[i] = c * (a - te * b);
      }
    } else {
      for (int i = 0; i < len; ++i) {
        const T a = x[i], b = y[i];
        x[i] = c * (a - te * b);
        y[i] = c * (b + tc * a);
      }
    }
    return;
  }
  for (int i = 0; i < len; ++i) {
    T &xa = x[int64_t(i) * incx];
    T &yb = y[int64_t(i) * incy];
    const T a = xa, b = yb;
    const T na = c * (a - te * b), nb = c * (b + tc * a);
    xa = swap ? nb : na;
    yb = swap ? na : nb;
  }
}

// ---- column norms without overflow -----------------------------------------
// 2^e as a scale factor applied with at most two exact multiplications when
// scaling up (e > 0) -- no rounding can occur -- and with one when 2^e is a
// normal number. Used by the column norm below.
template <class R> struct Pow2 {
  R f1 = 1, f2 = 1;
  explicit Pow2(int e) {
    const R one = 1;
    if (std::ldexp(one, e) <= std::numeric_limits<R>::max() &&
        std::ldexp(one, e) >= std::numeric_limits<R>::min()) {
      f1 = std::ldexp(one, e);
    } else {
      f1 = std::ldexp(one, e / 2);
      f2 = std::ldexp(one, e - e / 2);
    }
  }
};

// ||x|| as mant * 2^expo (HBJ Appendix A in its sequential form): with
// M = max_i |x_i|, ex = ilogb(M), the scaled entries x_i 2^-ex have magnitude
// < 2, so their squares neither overflow (sum < 8m) nor lose anything that
// matters to underflow (only entries below 2^-500 M). r = sqrt(sum) >= 1.
// When unit != null it receives x / ||x|| = (x 2^-ex) / r.
template <class T> void scaled_norm(int m, const T *x, real_of_t<T> &mant, int &expo, T *unit) {
  using R = real_of_t<T>;
  R mx = 0;
  for (int i = 0; i < m; ++i) mx = std::max(mx, maxpart_(x[i]));
  if (mx == R(0)) {
    mant = 0;
    expo = 0;
    return;
  }
  const int ex = std::ilogb(mx);
  const Pow2<R> sc(-ex);
  R s0 = 0, s1 = 0;
  for (int i = 0; i < m; ++i) {
    const T y = x[i] * sc.f1 * sc.f2;
    if constexpr (is_cplx_v<T>) {
      s0 += y.real() * y.real();
      s1 += y.imag() * y.imag();
    } else {
      s0 += y * y;
    }
  }
  const R r = std::sqrt(s0 + s1);
  if (unit)
    for (int i = 0; i < m; ++i) unit[i] = (x[i] * sc.f1 * sc.f2) / r;
  int e2 = 0;
  mant = std::frexp(r, &e2); // r = mant 2^e2, mant in [0.5, 1)
  expo = ex + e2;
}

// ---- scratch carving --------------------------------------------------------
// Bump allocator over a caller's buffer; with a null base it only measures
// (the dry run that sizes the scratch). Every block starts at a multiple of
// 64 bytes from the base, so it has the base's alignment (at least alignof(T)
// of the solve, which covers R and int).
class Arena {
public:
  explicit Arena(void *base = nullptr) : base_(static_cast<unsigned char *>(base)) {}
  template <class U> U *take(size_t count) {
    const size_t at = (used_ + 63) / 64 * 64;
    const size_t bytes = mul_sat(count, sizeof(U));
    used_ = add_sat(at, bytes);
    return base_ ? reinterpret_cast<U *>(base_ + at) : nullptr;
  }
  size_t used() const { return used_; }

  static size_t mul_sat(size_t a, size_t b) {
    if (a != 0 && b > SIZE_MAX / a) return SIZE_MAX;
    return a * b;
  }
  static size_t add_sat(size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }

private:
  unsigned char *base_;
  size_t used_ = 0;
};

// ---- orderings cached per worker -------------------------------------------------
// One solve needs at most three tables (the column or block ordering and the
// inner eigensolver's for 2nb and for the narrower last pair). Entries live in
// a deque (stable references); trim() before each solve keeps the cache
// bounded for variable-size batches with many distinct sizes.
class OrderingCache {
public:
  const Ordering &get(bsvd_ordering_t kind, int n) {
    for (const Entry &e : entries_)
      if (e.kind == kind && e.r == 1 && e.ord.n == n) return e.ord;
    entries_.push_back(Entry{kind, 1, 1, make_ordering(kind, n)});
    return entries_.back().ord;
  }
  // The block ordering of a blocked solve over nblk blocks: the two-level
  // one (make_wcycle_ordering) when cfg asks for it, else cfg.ordering's.
  const Ordering &blocks(const Config &cfg, int nblk) {
    const int r = wcycle_r(nblk, cfg.wcycle_blocks);
    if (r == 1) return get(cfg.ordering, nblk);
    for (const Entry &e : entries_)
      if (e.r == r && e.E == cfg.wcycle_sweeps && e.ord.n == nblk) return e.ord;
    entries_.push_back(Entry{BSVD_ORDERING_ROUND_ROBIN, r, cfg.wcycle_sweeps,
                             make_wcycle_ordering(nblk, r, cfg.wcycle_sweeps)});
    return entries_.back().ord;
  }
  void trim(size_t keep = 8) {
    while (entries_.size() > keep) entries_.pop_front();
  }

private:
  struct Entry {
    bsvd_ordering_t kind;
    int r, E; // (make_wcycle_ordering's; r = 1: make_ordering's)
    Ordering ord;
  };
  std::deque<Entry> entries_;
};

// ---- workspace-taking variants ---------------------------------------------------
// Unblocked: norms (carried squared norms) and anchor (see the .cpp) hold n
// reals each.
template <class T> SweepStats unblocked_impl(int m, int n, T *W, int ldw, T *V, int ldv,
                                             const Ordering &ord, real_of_t<T> tol, int max_sweeps,
                                             real_of_t<T> *norms, real_of_t<T> *anchor);

// Hyperbolic: the same two arrays (jacobi_hyperbolic.cpp).
template <class T> HyperbolicStats hyperbolic_impl(int m, int n, int nplus, T *W, int ldw, T *V,
                                                   int ldv, const Ordering &ord, real_of_t<T> tol,
                                                   int max_sweeps, real_of_t<T> *norms,
                                                   real_of_t<T> *anchor);

// The blocked hyperbolic solver (jacobi_hyperbolic_blocked.cpp) with the
// caller's ordering cache (a worker's, kept across its matrices).
template <class T>
HyperbolicStats hyperbolic_blocked_impl(int m, int n, int nplus, T *W, int ldw, T *V, int ldv,
                                        int nb, bsvd_ordering_t ordering, double tol,
                                        int max_sweeps, int eig_sweeps, OrderingCache &cache);

struct EvdCount {
  long applied = 0; // rotations that passed the threshold test
  long proper = 0; // of those, the ones with cos != 1 (HBJ Sec. 4.3 step 4)
  long significant = 0; // of those, the ones that count for the stopping
      // rule (blocked_counts: pair and null floors)
};

// blocked_tol, blocked_noise_floor, blocked_null_floor, blocked_counts:
// src/core/rotation.hpp (shared with the GPU).

// Scratch of one k x k eigensolve: one record per pair of a step.
template <class T> struct EvdWork {
  int *p = nullptr, *q = nullptr;
  real_of_t<T> *c = nullptr, *anew = nullptr, *bnew = nullptr;
  T *te = nullptr;
  void carve(Arena &a, int kmax) {
    const size_t h = size_t(kmax) / 2 + 1;
    p = a.take<int>(h);
    q = a.take<int>(h);
    c = a.take<real_of_t<T>>(h);
    anew = a.take<real_of_t<T>>(h);
    bnew = a.take<real_of_t<T>>(h);
    te = a.take<T>(h);
  }
};

template <class T> EvdCount evd_impl(int k, T *G, int ldg, T *Q, int ldq, real_of_t<T> tol,
                                     real_of_t<T> null_floor, int sweeps, const Ordering &ord,
                                     const EvdWork<T> &ws);

// Scratch of the blocked solver; kmax = largest pair width (<= n).
template <class T> struct BlockedWork {
  T *G = nullptr, *Q = nullptr, *row = nullptr;
  T *pair = nullptr; // m x kmax copy of a pair (pair-SVD variant only)
  int *cols = nullptr, *perm = nullptr;
  real_of_t<T> *eig = nullptr;
  EvdWork<T> evd;
  // pair_rows: rows of the pair copy (0: none).
  void carve(Arena &a, int kmax, int pair_rows = 0) {
    if (pair_rows > 0) pair = a.take<T>(size_t(pair_rows) * kmax);
    G = a.take<T>(size_t(kmax) * kmax);
    Q = a.take<T>(size_t(kmax) * kmax);
    row = a.take<T>(kmax);
    cols = a.take<int>(kmax);
    perm = a.take<int>(kmax);
    eig = a.take<real_of_t<T>>(kmax);
    evd.carve(a, kmax);
  }
};

// Largest pair width of the blocked solver for n columns in blocks of nb.
inline int blocked_kmax(int n, int nb) {
  if (nb <= 0 || nb >= n) return n;
  return std::min(n, 2 * nb);
}

template <class T> SweepStats blocked_impl(int m, int n, T *W, int ldw, T *V, int ldv, int nb,
                                           const Ordering &block_ord, real_of_t<T> tol,
                                           int max_sweeps, int eig_sweeps,
                                           bsvd_ordering_t eig_ordering, OrderingCache &cache,
                                           const BlockedWork<T> &ws, bool pair_svd = false);

// Scratch bytes of one solve for the given configuration (the exact layout
// of solve_one_impl; its base must be aligned to alignof(T)), and the solve
// itself with a per-worker ordering cache. lapack: the matrix takes the
// LAPACK path (lapack.hpp; the planner's plan::cpu_lapack), with the Jacobi
// solver as its fallback, so its scratch covers both.
// ---- one matrix's results without a sweep -----------------------------------
// Matrix b held NaN or Inf: S and the leading k = min(m, n) columns of U and
// V are NaN.
template <class T> void fill_nonfinite(const Batch<T> &batch, int b, int m, int n) {
  using R = real_of_t<T>;
  const int k = std::min(m, n);
  R *S = batch.S.ptr(b);
  for (int j = 0; j < k; ++j) S[j] = std::numeric_limits<R>::quiet_NaN();
  if (batch.vectors) {
    T *U = batch.U.ptr(b);
    T *V = batch.V.ptr(b);
    const int ldu = batch.U.ldm(b), ldv = batch.V.ldm(b);
    for (int j = 0; j < k; ++j) {
      for (int i = 0; i < m; ++i) U[i + int64_t(j) * ldu] = nan_<T>();
      for (int i = 0; i < n; ++i) V[i + int64_t(j) * ldv] = nan_<T>();
    }
  }
}

// Matrix b is all zeros: S = 0, U and V the leading k identity columns.
template <class T> void fill_zero(const Batch<T> &batch, int b, int m, int n) {
  const int k = std::min(m, n);
  real_of_t<T> *S = batch.S.ptr(b);
  for (int j = 0; j < k; ++j) S[j] = 0;
  if (batch.vectors) {
    T *U = batch.U.ptr(b);
    T *V = batch.V.ptr(b);
    const int ldu = batch.U.ldm(b), ldv = batch.V.ldm(b);
    for (int j = 0; j < k; ++j) {
      for (int i = 0; i < m; ++i) U[i + int64_t(j) * ldu] = i == j ? T(1) : T(0);
      for (int i = 0; i < n; ++i) V[i + int64_t(j) * ldv] = i == j ? T(1) : T(0);
    }
  }
}

// The exact power-of-two prescaling of an mw x nw working matrix whose
// largest real component is amax > 0: the exponent e to scale W by 2^e
// (and S back by 2^-e), 0 inside the window [lo, hi]:
//   hi: every squared column norm, Gram entry and carried norm is bounded
//       by ||W||_F^2 <= 2 mw nw M^2 (2 for complex entries); keeping that
//       below max/4 leaves room for the sums alpha + t|gamma|. So
//       hi = sqrt(max / (8 mw nw)).
//   lo: entries down to u M matter to the result; their squares must not
//       underflow: (u M)^2 >= min_normal, so lo = sqrt(min_normal) / u.
// Outside the window, M becomes 2^0 <= M' < 2^1 (also exact, unless the
// true singular values themselves lie outside the normal range).
template <class R> int prescale_exponent(R amax, int mw, int nw) {
  const double u = double(unit_roundoff<R>());
  const double lo = std::sqrt(double(std::numeric_limits<R>::min())) / u;
  const double hi =
      std::sqrt(double(std::numeric_limits<R>::max())) / std::sqrt(8.0 * double(mw) * double(nw));
  return double(amax) < lo || double(amax) > hi ? -std::ilogb(amax) : 0;
}

template <class T>
size_t solve_one_scratch_bytes(int m, int n, bool vectors, const Config &cfg, bool lapack = false);

template <class T> int solve_one_impl(const Batch<T> &batch, int b, const Config &cfg, T *scratch,
                                      OrderingCache &cache, bool lapack = false);

// The configuration of a preconditioned solve's inner matrix (R^H, or
// W V0): the call's, unpreconditioned.
inline Config inner_config(const Config &cfg) {
  Config c = cfg;
  c.precondition = -1;
  return c;
}

// Effective block width of the blocked variant: the rule both backends
// share (plan::block_width), at most n.
inline int effective_nb(const Config &cfg, int n) {
  return std::max(1, std::min(plan::block_width(cfg.block_size), n));
}

} // namespace bsvd::detail::cpu
