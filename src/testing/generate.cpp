// Test matrices with prescribed singular values (MAGMA-SVD Table 1) and the
// edge cases of docs/accuracy.md (Test matrices).
//
// Everything is deterministic from the seed and independent of the standard
// library's distributions: std::mt19937_64 (its output sequence is fixed by
// the standard), uniforms from its top 53 bits, normals by Box-Muller. Each
// ingredient of a matrix draws from its own stream (seed mixed with a stream
// number by splitmix64), so e.g. family_sigma(f, k, kappa, seed) is exactly
// the sigma that generate(f, ..., seed) uses.
#include "testing/generate.hpp"

#include "testing/scalar_impl.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

namespace bsvd::testing {

using detail::conj_;
using detail::wide_t;

namespace {

enum Stream : uint64_t {
  kStreamSigma = 1,
  kStreamU = 2,
  kStreamV = 3,
  kStreamEntries = 4,
  kStreamPosition = 5
};

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t stream_seed(uint64_t seed, uint64_t stream) {
  return splitmix64(splitmix64(seed) ^ (stream * 0xd1b54a32d192ed03ULL));
}

class Rng {
public:
  explicit Rng(uint64_t seed) : g_(seed) {}
  uint64_t bits() { return g_(); }
  // [0, 1) in steps of 2^-53.
  double uniform01() { return static_cast<double>(g_() >> 11) * 0x1.0p-53; }
  // [-1, 1): exact, 2u - 1 on the 2^-53 grid.
  double uniform_pm1() { return 2.0 * uniform01() - 1.0; }
  // Standard normal, Box-Muller (both values used).
  double gauss() {
    if (have_spare_) {
      have_spare_ = false;
      return spare_;
    }
    const double u1 = 1.0 - uniform01(); // (0, 1]: log is finite
    const double u2 = uniform01();
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double t = 2.0 * 3.14159265358979323846 * u2;
    spare_ = r * std::sin(t);
    have_spare_ = true;
    return r * std::cos(t);
  }
  template <class D> D gauss_scalar() {
    if constexpr (detail::is_complex_v<D>) {
      const double re = gauss();
      const double im = gauss();
      return D(re, im);
    } else {
      return gauss();
    }
  }
  template <class D> D uniform_scalar() {
    if constexpr (detail::is_complex_v<D>) {
      const double re = uniform_pm1();
      const double im = uniform_pm1();
      return D(re, im);
    } else {
      return uniform_pm1();
    }
  }

private:
  std::mt19937_64 g_;
  double spare_ = 0;
  bool have_spare_ = false;
};

void check_dims(int m, int n, int lda) {
  if (m < 0 || n < 0 || lda < std::max(1, m))
    throw std::invalid_argument("bsvd::testing::generate: bad m, n or lda");
}

// A = U diag(sigma) V^H (r = sigma.size() columns of U and V), in D.
template <class D> std::vector<D> form_product(int m, int n, const std::vector<D> &U,
                                               const std::vector<double> &sigma,
                                               const std::vector<D> &V) {
  const int r = static_cast<int>(sigma.size());
  std::vector<D> A(static_cast<size_t>(m) * n, D(0));
  for (int j = 0; j < n; ++j) {
    D *a = A.data() + static_cast<size_t>(j) * m;
    for (int l = 0; l < r; ++l) {
      const D c = sigma[l] * conj_(V[j + static_cast<size_t>(l) * n]);
      const D *u = U.data() + static_cast<size_t>(l) * m;
      for (int i = 0; i < m; ++i) a[i] += u[i] * c;
    }
  }
  return A;
}

template <class T>
void store(int m, int n, const std::vector<wide_t<T>> &W, T *A, int lda, double scale = 1.0) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      A[i + static_cast<size_t>(j) * lda] =
          detail::convert_<T>(W[i + static_cast<size_t>(j) * m] * scale);
}

template <class T> void fill_random(int m, int n, uint64_t seed, T *A, int lda) {
  Rng rng(stream_seed(seed, kStreamEntries));
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      A[i + static_cast<size_t>(j) * lda] = detail::convert_<T>(rng.uniform_scalar<wide_t<T>>());
}

std::vector<double> arith_sigma(int k, double kappa) {
  std::vector<double> s(k);
  for (int i = 0; i < k; ++i)
    s[i] = k == 1 ? 1.0 : 1.0 - (double(i) / (k - 1)) * (1.0 - 1.0 / kappa);
  return s;
}

// U diag(sigma) V^H with sigma.size() columns, Haar factors from the seed.
template <class D> void factors_for_sigma(int m, int n, uint64_t seed, std::vector<double> sigma,
                                          std::vector<D> &U, std::vector<double> &sigma_out,
                                          std::vector<D> &V) {
  const int r = static_cast<int>(sigma.size());
  U.assign(static_cast<size_t>(m) * r, D(0));
  V.assign(static_cast<size_t>(n) * r, D(0));
  haar_orthonormal<D>(m, r, stream_seed(seed, kStreamU), U.data(), std::max(1, m));
  haar_orthonormal<D>(n, r, stream_seed(seed, kStreamV), V.data(), std::max(1, n));
  sigma_out = std::move(sigma);
}

template <class T> void scaled_logrand(int m, int n, uint64_t seed, T *A, int lda, double target) {
  using D = wide_t<T>;
  std::vector<D> U, V;
  std::vector<double> sigma;
  generate_factors<D>(Family::Logrand, m, n, default_kappa<T>(), seed, U, sigma, V);
  const std::vector<D> W = form_product(m, n, U, sigma, V);
  double amax = 0;
  for (const D &w : W) amax = std::max(amax, std::abs(w));
  store(m, n, W, A, lda, amax > 0 ? target / amax : 0.0);
}

} // namespace

const char *family_name(Family f) {
  switch (f) {
  case Family::Random: return "random";
  case Family::Arith: return "arith";
  case Family::Cluster0: return "cluster0";
  case Family::Cluster1: return "cluster1";
  case Family::Logrand: return "logrand";
  case Family::Geo: return "geo";
  }
  return "?";
}

bool parse_family(const std::string &name, Family &f) {
  for (Family g : all_families())
    if (name == family_name(g)) {
      f = g;
      return true;
    }
  return false;
}

std::vector<Family> all_families() {
  return {Family::Random,   Family::Arith,   Family::Cluster0,
          Family::Cluster1, Family::Logrand, Family::Geo};
}

template <> double default_kappa<float>() { return 1e5; }
template <> double default_kappa<std::complex<float>>() { return 1e5; }
template <> double default_kappa<double>() { return 1e10; }
template <> double default_kappa<std::complex<double>>() { return 1e10; }

std::vector<double> family_sigma(Family f, int k, double kappa, uint64_t seed) {
  if (f == Family::Random || k <= 0) return {};
  if (k == 1) return {1.0};
  std::vector<double> s(k);
  const double inv = 1.0 / kappa;
  switch (f) {
  case Family::Random: break;
  case Family::Arith: s = arith_sigma(k, kappa); break;
  case Family::Cluster0:
    std::fill(s.begin(), s.end(), inv);
    s[0] = 1.0;
    break;
  case Family::Cluster1:
    std::fill(s.begin(), s.end(), 1.0);
    s[k - 1] = inv;
    break;
  case Family::Logrand: {
    // log(sigma_i) uniform on [log(1/kappa), 0]; the end points are pinned
    // (sigma_1 = 1, sigma_k = 1/kappa) so kappa_2(A) is exactly kappa.
    Rng rng(stream_seed(seed, kStreamSigma));
    const double lo = std::log(inv);
    s[0] = 1.0;
    s[k - 1] = inv;
    for (int i = 1; i < k - 1; ++i) s[i] = std::exp(lo * rng.uniform01());
    std::sort(s.begin(), s.end(), [](double a, double b) { return a > b; });
    break;
  }
  case Family::Geo:
    for (int i = 0; i < k; ++i) s[i] = std::pow(kappa, -double(i) / (k - 1));
    break;
  }
  return s;
}

template <class D> void haar_orthonormal(int m, int k, uint64_t seed, D *Q, int ldq) {
  if (k < 0 || m < k || ldq < std::max(1, m))
    throw std::invalid_argument("bsvd::testing::haar_orthonormal: bad m, k or ldq");
  if (k == 0) return;
  Rng rng(seed);
  const size_t M = static_cast<size_t>(m);
  std::vector<D> A(M * k);
  for (auto &a : A) a = rng.gauss_scalar<D>();

  // Householder QR, LAPACK's xLARFG convention: H_j = I - tau_j v_j v_j^H,
  // H_j^H a_j = beta_j e_1 with beta_j real, v_j(0) = 1 (stored implicitly).
  std::vector<D> tau(k, D(0));
  std::vector<D> phase(k, D(1)); // sign of R_jj (real) for the sign fix
  for (int j = 0; j < k; ++j) {
    D *x = A.data() + j * M + j; // rows j..m-1 of column j
    const int len = m - j;
    double xnorm2 = 0;
    for (int i = 1; i < len; ++i) xnorm2 += std::norm(x[i]);
    const D alpha = x[0];
    if (xnorm2 == 0 && detail::imag_(alpha) == 0) {
      tau[j] = D(0); // H = I, R_jj = alpha
      const double a = detail::real_(alpha);
      phase[j] = D(a < 0 ? -1.0 : 1.0);
      continue;
    }
    const double ar = detail::real_(alpha);
    const double beta = -std::copysign(std::sqrt(std::norm(alpha) + xnorm2), ar);
    tau[j] = (D(beta) - alpha) / beta;
    const D scal = D(1) / (alpha - D(beta));
    for (int i = 1; i < len; ++i) x[i] *= scal;
    x[0] = D(beta);
    phase[j] = D(beta < 0 ? -1.0 : 1.0);
    // Apply H_j^H = I - conj(tau) v v^H to the trailing columns.
    for (int c = j + 1; c < k; ++c) {
      D *y = A.data() + c * M + j;
      D w = y[0];
      for (int i = 1; i < len; ++i) w += conj_(x[i]) * y[i];
      w *= conj_(tau[j]);
      y[0] -= w;
      for (int i = 1; i < len; ++i) y[i] -= x[i] * w;
    }
  }

  // Q = H_0 H_1 ... H_{k-1} [I; 0], accumulated backwards.
  std::vector<D> W(M * k, D(0));
  for (int j = 0; j < k; ++j) W[j * M + j] = D(1);
  for (int j = k - 1; j >= 0; --j) {
    if (tau[j] == D(0)) continue;
    const D *v = A.data() + j * M + j;
    const int len = m - j;
    for (int c = j; c < k; ++c) {
      D *y = W.data() + c * M + j;
      D w = y[0];
      for (int i = 1; i < len; ++i) w += conj_(v[i]) * y[i];
      w *= tau[j];
      y[0] -= w;
      for (int i = 1; i < len; ++i) y[i] -= v[i] * w;
    }
  }
  // Sign fix: Q D with D = diag(sign(R_jj)) makes R's diagonal positive, and
  // the Q of a QR with positive diagonal of a Gaussian matrix is Haar.
  for (int j = 0; j < k; ++j)
    for (int i = 0; i < m; ++i) Q[i + static_cast<size_t>(j) * ldq] = W[i + j * M] * phase[j];
}

template <class D> void generate_factors(Family f, int m, int n, double kappa, uint64_t seed,
                                         std::vector<D> &U, std::vector<double> &sigma,
                                         std::vector<D> &V) {
  if (f == Family::Random)
    throw std::invalid_argument(
        "bsvd::testing::generate_factors: the random family has no factors");
  if (m < 0 || n < 0) throw std::invalid_argument("bsvd::testing::generate_factors: bad m or n");
  const int k = std::min(m, n);
  factors_for_sigma<D>(m, n, seed, family_sigma(f, k, kappa, seed), U, sigma, V);
}

template <class T> void generate(Family f, int m, int n, double kappa, uint64_t seed, T *A, int lda,
                                 std::vector<double> *sigma_out) {
  check_dims(m, n, lda);
  if (f == Family::Random) {
    fill_random(m, n, seed, A, lda);
    if (sigma_out) sigma_out->clear();
    return;
  }
  using D = wide_t<T>;
  std::vector<D> U, V;
  std::vector<double> sigma;
  generate_factors<D>(f, m, n, kappa, seed, U, sigma, V);
  store(m, n, form_product(m, n, U, sigma, V), A, lda);
  if (sigma_out) *sigma_out = std::move(sigma);
}

const char *edge_name(Edge e) {
  switch (e) {
  case Edge::Zero: return "zero";
  case Edge::Identity: return "identity";
  case Edge::RankDeficient: return "rankdef";
  case Edge::Overflow: return "overflow";
  case Edge::Underflow: return "underflow";
  case Edge::Nan: return "nan";
  case Edge::Inf: return "inf";
  case Edge::TinyColumns: return "tinycols";
  }
  return "?";
}

bool parse_edge(const std::string &name, Edge &e) {
  for (Edge g : all_edges())
    if (name == edge_name(g)) {
      e = g;
      return true;
    }
  return false;
}

std::vector<Edge> all_edges() {
  return {Edge::Zero,      Edge::Identity, Edge::RankDeficient, Edge::Overflow,
          Edge::Underflow, Edge::Nan,      Edge::Inf,           Edge::TinyColumns};
}

template <class T> void generate_edge(Edge e, int m, int n, uint64_t seed, T *A, int lda) {
  check_dims(m, n, lda);
  using R = detail::real_t<T>;
  const int k = std::min(m, n);
  auto zero_fill = [&] {
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) A[i + static_cast<size_t>(j) * lda] = T(0);
  };
  switch (e) {
  case Edge::Zero: zero_fill(); return;
  case Edge::Identity:
    zero_fill();
    for (int i = 0; i < k; ++i) A[i + static_cast<size_t>(i) * lda] = T(1);
    return;
  case Edge::RankDeficient: {
    if (k == 0) return;
    using D = wide_t<T>;
    const int r = std::max(1, k / 2);
    std::vector<D> U, V;
    std::vector<double> sigma;
    factors_for_sigma<D>(m, n, seed, arith_sigma(r, 10.0), U, sigma, V);
    store(m, n, form_product(m, n, U, sigma, V), A, lda);
    return;
  }
  case Edge::Overflow: {
    const double mn = double(m) * double(n);
    const double target =
        1e-2 * double(std::numeric_limits<R>::max()) / std::sqrt(std::max(mn, 1.0));
    scaled_logrand(m, n, seed, A, lda, target);
    return;
  }
  case Edge::Underflow:
    scaled_logrand(m, n, seed, A, lda, 1e3 * double(std::numeric_limits<R>::min()));
    return;
  case Edge::TinyColumns: {
    fill_random(m, n, seed, A, lda);
    const R small = std::sqrt(std::numeric_limits<R>::min()) * R(1.0 / 1024);
    for (int j = 1; j < n; j += 3)
      for (int i = 0; i < m; ++i) A[i + static_cast<size_t>(j) * lda] *= small;
    return;
  }
  case Edge::Nan:
  case Edge::Inf: {
    fill_random(m, n, seed, A, lda);
    if (m == 0 || n == 0) return;
    Rng rng(stream_seed(seed, kStreamPosition));
    const uint64_t p = rng.bits() % (uint64_t(m) * uint64_t(n));
    const size_t i = p % m, j = p / m;
    const R bad =
        e == Edge::Nan ? std::numeric_limits<R>::quiet_NaN() : std::numeric_limits<R>::infinity();
    T &a = A[i + j * lda];
    if constexpr (detail::is_complex_v<T>)
      a = T(bad, a.imag());
    else
      a = bad;
    return;
  }
  }
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template void generate<T>(Family, int, int, double, uint64_t, T *, int, std::vector<double> *);  \
  template void generate_edge<T>(Edge, int, int, uint64_t, T *, int);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

template void generate_factors<double>(Family, int, int, double, uint64_t, std::vector<double> &,
                                       std::vector<double> &, std::vector<double> &);
template void generate_factors<std::complex<double>>(Family, int, int, double, uint64_t,
                                                     std::vector<std::complex<double>> &,
                                                     std::vector<double> &,
                                                     std::vector<std::complex<double>> &);
template void haar_orthonormal<double>(int, int, uint64_t, double *, int);
template void haar_orthonormal<std::complex<double>>(int, int, uint64_t, std::complex<double> *,
                                                     int);

} // namespace bsvd::testing
