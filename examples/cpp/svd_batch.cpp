// bsvd from C++: bsvd::svd on a batch of complex matrices whose singular
// values are known, checked by the accuracy contract (docs/accuracy.md): T1
// the reconstruction, T2 the orthogonality of U and V, T3 the singular values
// against the known ones (relative to the largest), T4 their order, each as a
// ratio to k u with k = 30. Prints the ratios and "ok" or "FAILED"; exit
// status 1 on failure. Build against the installed package:
// examples/cpp/CMakeLists.txt.
#include <bsvd/svd.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

namespace {

using T = std::complex<double>;
constexpr int M = 30, N = 30, K = 30, BATCH = 40;

// Column-major rows x cols, and its 1-norm (largest column sum of |x|).
struct Mat {
  int rows, cols;
  std::vector<T> a;
  Mat(int r, int c) : rows(r), cols(c), a(size_t(r) * c) {}
  T &operator()(int i, int j) { return a[i + size_t(j) * rows]; }
  double norm1() const {
    double best = 0;
    for (int j = 0; j < cols; ++j) {
      double c = 0;
      for (int i = 0; i < rows; ++i) c += std::abs(a[i + size_t(j) * rows]);
      best = std::max(best, c);
    }
    return best;
  }
};

// X := H X with the unitary reflector H = I - 2 v vᴴ / vᴴv of a random v:
// A = H1 diag(sigma) H2 then has the singular values sigma.
void reflect_rows(Mat &X, std::mt19937_64 &g) {
  std::normal_distribution<double> d;
  std::vector<T> v(X.rows);
  double vv = 0;
  for (auto &x : v) {
    x = T(d(g), d(g));
    vv += std::norm(x);
  }
  for (int j = 0; j < X.cols; ++j) {
    T s = 0;
    for (int i = 0; i < X.rows; ++i) s += std::conj(v[i]) * X(i, j);
    for (int i = 0; i < X.rows; ++i) X(i, j) -= 2.0 / vv * s * v[i];
  }
}

// ‖I − QᴴQ‖₁ for the rows x K block of Q starting at q.
double orth1(const T *q, int rows) {
  Mat G(K, K);
  for (int j = 0; j < K; ++j)
    for (int i = 0; i < K; ++i) {
      T d = 0;
      for (int r = 0; r < rows; ++r) d += std::conj(q[r + i * rows]) * q[r + j * rows];
      G(i, j) = T(i == j) - d;
    }
  return G.norm1();
}

} // namespace

int main() {
  std::mt19937_64 g(7);
  std::vector<T> A(size_t(BATCH) * M * N);
  std::vector<double> sigma(size_t(BATCH) * K);
  for (int b = 0; b < BATCH; ++b) { // sigma: 1, then arithmetic down to 1e-8
    Mat Ab(M, N), At(N, M);
    for (int i = 0; i < K; ++i) Ab(i, i) = sigma[b * K + i] = 1 - (1 - 1e-8) * i / (K - 1);
    reflect_rows(Ab, g);
    for (int i = 0; i < M; ++i) // right factor: reflect the rows of Aᴴ
      for (int j = 0; j < N; ++j) At(j, i) = std::conj(Ab(i, j));
    reflect_rows(At, g);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) A[b * M * N + i + j * M] = std::conj(At(j, i));
  }

  bsvd::Result<T> r;
  if (bsvd_status_t st = bsvd::svd(bsvd::Job::Vectors, M, N, A.data(), BATCH, r)) {
    std::fprintf(stderr, "bsvd: %s: %s\n", bsvd_status_string(st), bsvd_last_error());
    return 1;
  }

  const double ku = 30 * std::numeric_limits<double>::epsilon() / 2;
  double t1 = 0, t2u = 0, t2v = 0, t3 = 0;
  bool sorted = true;
  int converged = 0;
  for (int b = 0; b < BATCH; ++b) {
    const T *U = &r.U[size_t(b) * M * K], *V = &r.V[size_t(b) * N * K];
    const double *S = &r.S[size_t(b) * K];
    converged += r.info[b] == 0;
    Mat Ab(M, N), R(M, N);
    std::copy_n(&A[size_t(b) * M * N], M * N, Ab.a.begin());
    for (int j = 0; j < N; ++j) // R = A − U S Vᴴ
      for (int i = 0; i < M; ++i) {
        T x = Ab(i, j);
        for (int l = 0; l < K; ++l) x -= U[i + l * M] * S[l] * std::conj(V[j + l * N]);
        R(i, j) = x;
      }
    t1 = std::max(t1, R.norm1() / (N * Ab.norm1()) / ku);
    t2u = std::max(t2u, orth1(U, M) / M / ku);
    t2v = std::max(t2v, orth1(V, N) / N / ku);
    double e = 0;
    for (int i = 0; i < K; ++i) {
      e += std::pow(S[i] - sigma[b * K + i], 2);
      sorted = sorted && (i == 0 || S[i] <= S[i - 1]);
    }
    t3 = std::max(t3, std::sqrt(e) / K / ku);
  }
  bool ok = converged == BATCH && sorted && t1 < 1 && t2u < 1 && t2v < 1 && t3 < 1;
  std::printf("bsvd %s, C++ API: %d complex matrices of %d x %d, %d converged\n", bsvd_version(),
              BATCH, M, N, converged);
  std::printf("T1 reconstruction  %.3g\nT2 orthogonality U %.3g, V %.3g\n", t1, t2u, t2v);
  std::printf("T3 singular values %.3g\nT4 sorted %s\n", t3, sorted ? "yes" : "no");
  std::printf("(ratios to 30 u; each must be < 1)\n%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
