// The single-matrix building blocks of the CPU backend (jacobi.hpp):
// hermitian_jacobi_evd, jacobi_unblocked and jacobi_blocked on their own.
#include "test_cpu_helpers.hpp"

#include "core/inner_sweeps.hpp"
#include "core/ordering.hpp"

#include <random>

using namespace bsvd_cpu_test;
using bsvd::detail::make_ordering;
using bsvd::detail::Ordering;

namespace {

using LD = long double;

template <class T> struct Wide { using type = LD; };
template <class R> struct Wide<std::complex<R>> { using type = std::complex<LD>; };
template <class T> using wide_t = typename Wide<T>::type;

template <class T> wide_t<T> wide(T x) {
  if constexpr (std::is_same_v<T, R_t<T>>)
    return LD(x);
  else
    return wide_t<T>(LD(x.real()), LD(x.imag()));
}
template <class W> W cj(W x) {
  if constexpr (std::is_same_v<W, LD>)
    return x;
  else
    return std::conj(x);
}

template <class T> T rnd(std::mt19937_64 &g) {
  std::normal_distribution<double> d;
  if constexpr (std::is_same_v<T, R_t<T>>)
    return T(d(g));
  else
    return T(R_t<T>(d(g)), R_t<T>(d(g)));
}

// C = X^H Y (long double), X: m x p (ldx), Y: m x q (ldy). Result p x q.
template <class T>
std::vector<wide_t<T>> xhy(int m, int p, int q, const T *X, int ldx, const T *Y, int ldy) {
  std::vector<wide_t<T>> C(size_t(p) * q);
  for (int j = 0; j < q; ++j)
    for (int i = 0; i < p; ++i) {
      wide_t<T> s = 0;
      for (int r = 0; r < m; ++r)
        s += cj(wide(X[r + size_t(i) * ldx])) * wide(Y[r + size_t(j) * ldy]);
      C[i + size_t(j) * p] = s;
    }
  return C;
}

// max |I - X^H X| for X m x n.
template <class T> double orth_err(int m, int n, const T *X, int ldx) {
  const auto C = xhy(m, n, n, X, ldx, X, ldx);
  double e = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      e = std::max(e, double(std::abs(C[i + size_t(j) * n] - wide_t<T>(i == j ? 1 : 0))));
  return e;
}

template <class T> double off_frob(int k, const T *G, int ldg) {
  LD s = 0;
  for (int j = 0; j < k; ++j)
    for (int i = 0; i < k; ++i)
      if (i != j) s += std::norm(wide(G[i + size_t(j) * ldg]));
  return double(std::sqrt(s));
}

template <class T> class CpuKernels : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(CpuKernels, Types);

// Random Hermitian test matrices: PSD Gram matrices B^H B and indefinite
// (B + B^H) / 2.
template <class T> std::vector<T> hermitian(int k, bool psd, std::mt19937_64 &g) {
  std::vector<T> B(size_t(k) * k), G(size_t(k) * k);
  for (T &x : B) x = rnd<T>(g);
  for (int j = 0; j < k; ++j)
    for (int i = 0; i <= j; ++i) {
      wide_t<T> s = 0;
      if (psd)
        for (int r = 0; r < k; ++r)
          s += cj(wide(B[r + size_t(i) * k])) * wide(B[r + size_t(j) * k]);
      else
        s = (wide(B[i + size_t(j) * k]) + cj(wide(B[j + size_t(i) * k]))) / LD(2);
      if (i == j) s = wide_t<T>(std::real(s));
      if constexpr (std::is_same_v<T, R_t<T>>) {
        G[i + size_t(j) * k] = T(s);
        G[j + size_t(i) * k] = T(s);
      } else {
        G[i + size_t(j) * k] = T(R_t<T>(s.real()), R_t<T>(s.imag()));
        G[j + size_t(i) * k] = std::conj(G[i + size_t(j) * k]);
      }
    }
  return G;
}

TYPED_TEST(CpuKernels, EvdDiagonalizesAndQUnitary) {
  using T = TypeParam;
  const double u = uroff<T>();
  std::mt19937_64 g(42);
  for (bsvd_ordering_t ord : {BSVD_ORDERING_ROUND_ROBIN, BSVD_ORDERING_ODD_EVEN})
    for (bool psd : {true, false})
      for (int k : {1, 2, 3, 5, 8, 16, 17, 32, 33}) {
        const std::vector<T> G0 = hermitian<T>(k, psd, g);
        std::vector<T> G = G0, Q(size_t(k) * k, T(0));
        for (int i = 0; i < k; ++i) Q[i + size_t(i) * k] = T(1);
        const double tol = std::sqrt(double(k)) * u;
        const long rot =
            bsvd::detail::hermitian_jacobi_evd(k, G.data(), k, Q.data(), k, tol, 0, ord);
        if (k > 1) EXPECT_GT(rot, 0);
        EXPECT_LT(orth_err(k, k, Q.data(), k), 10 * k * u) << "k=" << k;
        // D = Q^H G0 Q: off-diagonal negligible, diagonal = returned G's.
        std::vector<T> G0Q(size_t(k) * k);
        LD nrm = 0;
        for (const T &x : G0) nrm += std::norm(wide(x));
        nrm = std::sqrt(nrm);
        for (int j = 0; j < k; ++j)
          for (int i = 0; i < k; ++i) {
            wide_t<T> s = 0;
            for (int r = 0; r < k; ++r)
              s += wide(G0[i + size_t(r) * k]) * wide(Q[r + size_t(j) * k]);
            if constexpr (std::is_same_v<T, R_t<T>>)
              G0Q[i + size_t(j) * k] = T(s);
            else
              G0Q[i + size_t(j) * k] = T(R_t<T>(s.real()), R_t<T>(s.imag()));
          }
        const auto D = xhy(k, k, k, Q.data(), k, G0Q.data(), k);
        for (int j = 0; j < k; ++j)
          for (int i = 0; i < k; ++i) {
            const double bound = 10.0 * k * u * double(nrm);
            if (i != j)
              EXPECT_LT(double(std::abs(D[i + size_t(j) * k])), bound) << k;
            else
              EXPECT_NEAR(double(std::real(D[i + size_t(i) * k])),
                          double(std::real(wide(G[i + size_t(i) * k]))), bound);
          }
        // The returned G is diagonal to the relative tolerance.
        for (int j = 0; j < k; ++j)
          for (int i = 0; i < k; ++i)
            if (i != j)
              EXPECT_LE(std::abs(G[i + size_t(j) * k]),
                        tol * std::sqrt(std::abs(std::real(G[i + size_t(i) * k]))) *
                            std::sqrt(std::abs(std::real(G[j + size_t(j) * k]))) * 1.0001);
        // A second call finds nothing to do and leaves Q alone.
        std::vector<T> Q2(size_t(k) * k, T(0));
        for (int i = 0; i < k; ++i) Q2[i + size_t(i) * k] = T(1);
        EXPECT_EQ(bsvd::detail::hermitian_jacobi_evd(k, G.data(), k, Q2.data(), k, tol, 0, ord), 0);
        for (int i = 0; i < k * k; ++i) EXPECT_EQ(Q2[i], (i % (k + 1) == 0) ? T(1) : T(0));
      }
}

TYPED_TEST(CpuKernels, EvdOffNormDecreasesPerSweep) {
  using T = TypeParam;
  const double u = uroff<T>();
  std::mt19937_64 g(7);
  for (int k : {4, 16, 31}) {
    std::vector<T> G = hermitian<T>(k, true, g), Q(size_t(k) * k, T(0));
    for (int i = 0; i < k; ++i) Q[i + size_t(i) * k] = T(1);
    double off = off_frob(k, G.data(), k);
    int sweeps = 0;
    for (; sweeps < 30; ++sweeps) {
      const long rot = bsvd::detail::hermitian_jacobi_evd(
          k, G.data(), k, Q.data(), k, std::sqrt(double(k)) * u, 1, BSVD_ORDERING_ROUND_ROBIN);
      if (rot == 0) break;
      const double off2 = off_frob(k, G.data(), k);
      EXPECT_LT(off2, off) << "k=" << k << " sweep " << sweeps;
      off = off2;
    }
    EXPECT_LT(sweeps, 15) << "k=" << k; // quadratic convergence
    EXPECT_LT(orth_err(k, k, Q.data(), k), 10 * k * u);
  }
}

TYPED_TEST(CpuKernels, EvdDiagonalInputNoRotation) {
  using T = TypeParam;
  const int k = 6;
  std::vector<T> G(k * k, T(0)), Q(k * k, T(0));
  for (int i = 0; i < k; ++i) {
    G[i + i * k] = T(R_t<T>(i == 2 ? 0 : i + 1)); // includes a zero diagonal
    Q[i + i * k] = T(1);
  }
  EXPECT_EQ(bsvd::detail::hermitian_jacobi_evd(k, G.data(), k, Q.data(), k, 1e-6, 0,
                                               BSVD_ORDERING_ROUND_ROBIN),
            0);
}

// Unblocked and blocked Jacobi on W directly: converged, columns
// relatively orthogonal to the tolerance, V unitary, W = A V.
template <class T>
// pair_svd: the blocked variant's pairs by one-sided Jacobi (the twin of
// the GPU's shared-memory pair SVD); eig_sweeps: inner sweeps (0 = full).
void check_jacobi(bool blocked, int m, int n, int nb, bsvd_ordering_t ord, uint64_t seed,
                  bool pair_svd = false, int eig_sweeps = 0, int *sweeps = nullptr) {
  const double u = uroff<T>();
  std::mt19937_64 g(seed);
  const int ldw = m + 3;
  std::vector<T> A(size_t(ldw) * n, T(0));
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) A[i + size_t(j) * ldw] = rnd<T>(g);
  if (n >= 3) { // a zero column and two equal columns
    for (int i = 0; i < m; ++i) A[i + size_t(1) * ldw] = T(0);
    for (int i = 0; i < m; ++i) A[i + size_t(2) * ldw] = A[i];
  }
  std::vector<T> W = A, V(size_t(n) * n, T(0));
  for (int i = 0; i < n; ++i) V[i + size_t(i) * n] = T(1);
  const double tol = std::sqrt(double(m)) * u;
  bsvd::detail::SweepStats st;
  if (blocked) {
    const Ordering bo = make_ordering(ord, (n + nb - 1) / nb);
    st = bsvd::detail::jacobi_blocked(m, n, W.data(), ldw, V.data(), n, nb, bo, tol, 40, eig_sweeps,
                                      ord, pair_svd);
  } else {
    st = bsvd::detail::jacobi_unblocked(m, n, W.data(), ldw, V.data(), n, make_ordering(ord, n),
                                        tol, 40);
  }
  EXPECT_TRUE(st.converged);
  EXPECT_GE(st.sweeps, 1);
  if (sweeps) *sweeps = st.sweeps;
  EXPECT_LT(orth_err(n, n, V.data(), n), 20 * n * u);
  const auto C = xhy(m, n, n, W.data(), ldw, W.data(), ldw);
  // The blocked variant's threshold is max(tol, k u), k the pair width
  // (blocked_tol in src/core/rotation.hpp).
  const int kpair = nb >= n ? n : std::min(n, 2 * nb);
  const double otol = blocked ? std::max(tol, double(kpair) * u) : tol;
  // The blocked variant does not count rotations with a column below u
  // max|a_ij| (blocked_null_floor): the zero column and the difference of
  // the equal ones are rounding noise that each update renews, so those
  // pairs are exempt.
  LD amax = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      amax = std::max({amax, LD(std::fabs(std::real(A[i + size_t(j) * ldw]))),
                       LD(std::fabs(std::imag(A[i + size_t(j) * ldw])))});
  const LD null_floor = blocked ? (LD(u) * amax) * (LD(u) * amax) : LD(0);
  for (int q = 0; q < n; ++q)
    for (int p = 0; p < q; ++p) {
      const LD a = std::real(C[p + size_t(p) * n]), b = std::real(C[q + size_t(q) * n]);
      if (std::min(a, b) < null_floor) continue;
      EXPECT_LE(double(std::abs(C[p + size_t(q) * n])), 4 * otol * double(std::sqrt(a * b)))
          << p << "," << q;
    }
  // W = A V up to rounding (relative to ||A||_F).
  LD an = 0, rn = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      wide_t<T> s = 0;
      for (int r = 0; r < n; ++r) s += wide(A[i + size_t(r) * ldw]) * wide(V[r + size_t(j) * n]);
      rn += std::norm(s - wide(W[i + size_t(j) * ldw]));
      an += std::norm(wide(A[i + size_t(j) * ldw]));
    }
  EXPECT_LT(double(std::sqrt(rn / an)), 20 * n * u);
}

TYPED_TEST(CpuKernels, UnblockedDirect) {
  using T = TypeParam;
  for (bsvd_ordering_t ord : {BSVD_ORDERING_ROUND_ROBIN, BSVD_ORDERING_ODD_EVEN})
    for (auto [m, n] : std::vector<std::pair<int, int>>{{1, 1}, {5, 1}, {4, 4}, {30, 17}, {64, 64}})
      check_jacobi<T>(false, m, n, 0, ord, 11 + m * 7 + n);
}

TYPED_TEST(CpuKernels, BlockedDirect) {
  using T = TypeParam;
  for (bsvd_ordering_t ord : {BSVD_ORDERING_ROUND_ROBIN, BSVD_ORDERING_ODD_EVEN})
    for (int nb : {1, 2, 5, 16, 40})
      for (auto [m, n] : std::vector<std::pair<int, int>>{{1, 1}, {6, 4}, {30, 17}, {50, 40}})
        check_jacobi<T>(true, m, n, nb, ord, 23 + m + nb);
}

// The pair-SVD twin: the same contract; and, since one-sided rotations of
// the pair are the two-sided rotations of its Gram matrix in exact
// arithmetic, sweep counts close to the Gram variant's.
TYPED_TEST(CpuKernels, BlockedPairSvdDirect) {
  using T = TypeParam;
  for (bsvd_ordering_t ord : {BSVD_ORDERING_ROUND_ROBIN, BSVD_ORDERING_ODD_EVEN})
    for (int nb : {1, 2, 5, 16, 40})
      for (auto [m, n] : std::vector<std::pair<int, int>>{{1, 1}, {6, 4}, {30, 17}, {50, 40}})
        for (int es : {0, 1}) check_jacobi<T>(true, m, n, nb, ord, 29 + m + nb, true, es);
  for (int nb : {4, 8, 16}) {
    int s_gram = 0, s_svd = 0;
    check_jacobi<T>(true, 120, 70, nb, BSVD_ORDERING_ROUND_ROBIN, 5 + nb, false, 1, &s_gram);
    check_jacobi<T>(true, 120, 70, nb, BSVD_ORDERING_ROUND_ROBIN, 5 + nb, true, 1, &s_svd);
    EXPECT_LE(std::abs(s_gram - s_svd), 2) << "nb " << nb;
  }
}

TYPED_TEST(CpuKernels, UnblockedSingleColumnOneSweep) {
  using T = TypeParam;
  std::vector<T> W = {T(3), T(4)};
  const auto st = bsvd::detail::jacobi_unblocked(
      2, 1, W.data(), 2, (T *)nullptr, 1, make_ordering(BSVD_ORDERING_ROUND_ROBIN, 1), 1e-7, 40);
  EXPECT_TRUE(st.converged);
  EXPECT_EQ(st.sweeps, 1);
  EXPECT_EQ(W[0], T(3));
}

// InnerSweepRule (src/core/inner_sweeps.hpp) on count sequences shaped as
// measured: a random matrix's count sits at its peak and then collapses (no
// switch); a stalling one falls by a few percent per sweep below its peak
// (two inner sweeps after two stalled sweeps, and for good); one stalled
// sweep followed by a collapse is not a stall.
TEST(InnerSweepRule, SwitchesOnlyOnStalls) {
  using bsvd::detail::InnerSweepRule;
  auto run = [](std::initializer_list<long> counts) {
    InnerSweepRule r;
    std::vector<int> out;
    for (long c : counts) {
      r.after_sweep(c);
      out.push_back(r.sweeps());
    }
    return out;
  };
  EXPECT_EQ(run({246016, 246016, 246016, 245313, 214662, 118626, 18968, 20}),
            (std::vector<int>{1, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(run({122412, 119688, 118844, 117879, 50, 1}), (std::vector<int>{1, 1, 2, 2, 2, 2}));
  // At the peak (not below 0.98 of it): saturated, not stalled.
  EXPECT_EQ(run({1000, 990, 985, 981}), (std::vector<int>{1, 1, 1, 1}));
  // Stalled once (900 > 0.8 * 1000, below the peak), then a collapse, then
  // stalled once more: never two stalled sweeps in a row.
  EXPECT_EQ(run({1000, 900, 500, 450}), (std::vector<int>{1, 1, 1, 1}));
  EXPECT_EQ(bsvd::detail::inner_sweep_cap(BSVD_EIG_SWEEPS_AUTO, InnerSweepRule{}, 60), 1);
  EXPECT_EQ(bsvd::detail::inner_sweep_cap(0, InnerSweepRule{}, 60), 60);
  EXPECT_EQ(bsvd::detail::inner_sweep_cap(3, InnerSweepRule{}, 60), 3);
}

} // namespace

namespace {

// unit_phase (rotation.hpp): |e| = 1 to a few u wherever gamma lies, and
// exactly re / |gamma|, im / |gamma| above the rescaling threshold (the
// bits the solvers had before the rule).
template <class R> void check_unit_phase() {
  const R u = bsvd::detail::unit_roundoff<R>();
  const R mn = std::numeric_limits<R>::min();
  std::mt19937_64 g(7);
  std::uniform_real_distribution<double> d(-1, 1);
  double worst = 0;
  for (R scale : {R(1), R(1e-3), mn * R(1e6), mn * R(64), mn, mn / R(1024),
                  std::numeric_limits<R>::denorm_min() * R(5)}) {
    for (int t = 0; t < 200; ++t) {
      const R re = R(d(g)) * scale, im = R(d(g)) * scale;
      const R ag = std::abs(std::complex<R>(re, im));
      if (!(ag > R(0))) continue;
      R er, ei;
      bsvd::detail::unit_phase(re, im, ag, er, ei);
      const double m1 = std::fabs(std::hypot(double(er), double(ei)) - 1.0) / double(u);
      worst = std::max(worst, m1);
      if (std::max(std::fabs(re), std::fabs(im)) >= bsvd::detail::phase_rescale_below<R>()) {
        EXPECT_EQ(er, re / ag);
        EXPECT_EQ(ei, im / ag);
      }
    }
  }
  EXPECT_LT(worst, 4.0) << "|e| - 1 in u";
}

TEST(RotationHelpers, UnitPhaseStaysUnitNearUnderflow) {
  check_unit_phase<float>();
  check_unit_phase<double>();
}

// above_underflow_noise: the floor is 4 max(m, 2^15) u min_normal, far below
// any product of normal column norms, and grows with m beyond 2^15 rows.
TEST(RotationHelpers, UnderflowNoiseFloor) {
  using bsvd::detail::above_underflow_noise;
  const float fmn = std::numeric_limits<float>::min();
  const double dmn = std::numeric_limits<double>::min();
  EXPECT_TRUE(above_underflow_noise(fmn, 100)); // a normal |gamma|
  EXPECT_TRUE(above_underflow_noise(dmn, 100));
  const float ff = 4.0f * 32768.0f * fmn * bsvd::detail::unit_roundoff<float>();
  EXPECT_FALSE(above_underflow_noise(ff, 100)); // at the floor: noise
  EXPECT_TRUE(above_underflow_noise(ff * 2.0f, 100));
  EXPECT_FALSE(above_underflow_noise(ff * 2.0f, 1 << 17)); // 4x the rows: 4x the floor
  EXPECT_FALSE(above_underflow_noise(0.0, 1));
}

} // namespace
