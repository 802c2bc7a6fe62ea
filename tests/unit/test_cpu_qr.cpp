// Householder QR, the CPU twin of the GPU QR preprocessing (src/cpu/qr.cpp):
// A = Q R to rounding, Q unitary, R upper triangular with the LAPACK sign
// convention; zero and single columns; a huge and a tiny matrix.
#include "test_cpu_helpers.hpp"

#include "cpu/qr.hpp"

#include <random>

using namespace bsvd_cpu_test;

namespace {

template <class T> class CpuQr : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(CpuQr, Types);

using LD = long double;
template <class T> std::complex<LD> wide(T x) { return {LD(std::real(x)), LD(std::imag(x))}; }

template <class T> void check_qr(int m, int n, const std::vector<T> &A, double scale) {
  const double u = uroff<T>();
  std::vector<T> Y = A, tau(n);
  bsvd::detail::householder_qr(m, n, Y.data(), m, tau.data());
  // Q explicitly: Q I (m x m), then A - Q R and I - Q^H Q.
  std::vector<T> Q(size_t(m) * m, T(0));
  for (int i = 0; i < m; ++i) Q[i + size_t(i) * m] = T(1);
  bsvd::detail::apply_householder_q(m, n, Y.data(), m, tau.data(), m, Q.data(), m);
  LD rn = 0, an = 0, on = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      std::complex<LD> s = 0;
      for (int r = 0; r <= std::min(j, n - 1); ++r)
        s += wide(Q[i + size_t(r) * m]) * wide(Y[r + size_t(j) * m]);
      rn += std::norm(s - wide(A[i + size_t(j) * m]));
      an += std::norm(wide(A[i + size_t(j) * m]));
    }
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < m; ++i) {
      std::complex<LD> s = 0;
      for (int r = 0; r < m; ++r) s += std::conj(wide(Q[r + size_t(i) * m])) * wide(Q[r + size_t(j) * m]);
      on += std::norm(s - LD(i == j));
    }
  EXPECT_LE(double(std::sqrt(rn)), 10.0 * m * u * double(std::sqrt(an)) + 1e-300 * scale);
  EXPECT_LE(double(std::sqrt(on)), 10.0 * m * u);
  // the diagonal of R is real (LAPACK: beta real)
  for (int j = 0; j < n; ++j) EXPECT_EQ(std::imag(Y[j + size_t(j) * m]), R_t<T>(0));
}

TYPED_TEST(CpuQr, FactorsAndQIsUnitary) {
  using T = TypeParam;
  std::mt19937_64 g(5);
  std::normal_distribution<double> d;
  for (auto [m, n] : std::vector<std::pair<int, int>>{{1, 1}, {5, 1}, {6, 6}, {40, 7}, {90, 33}}) {
    for (double scale : {1.0, 1e30, 1e-30}) {
      if (scale != 1.0 && std::is_same_v<R_t<T>, float>) continue;
      SCOPED_TRACE(testing::Message() << m << "x" << n << " scale " << scale);
      std::vector<T> A(size_t(m) * n);
      for (auto &a : A) {
        if constexpr (std::is_same_v<T, R_t<T>>) a = T(d(g) * scale);
        else a = T(R_t<T>(d(g) * scale), R_t<T>(d(g) * scale));
      }
      if (n >= 3) // a zero column: tau = 0 there
        for (int i = 0; i < m; ++i) A[i + size_t(2) * m] = T(0);
      check_qr<T>(m, n, A, scale);
    }
  }
}

} // namespace
