// Test matrices with prescribed singular values: the six families of
// MAGMA-SVD Table 1 and the edge cases of docs/accuracy.md (Test matrices).
#pragma once

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

namespace bsvd::testing {

enum class Family { Random, Arith, Cluster0, Cluster1, Logrand, Geo };

const char *family_name(Family f);
bool parse_family(const std::string &name, Family &f);
std::vector<Family> all_families();

// Default condition number of the non-random families: 1e5 for s and c,
// 1e10 for d and z (MAGMA-SVD Sec. 10.1).
template <class T> double default_kappa();

// k singular values of a family, descending, sigma_1 = 1 (Random: empty,
// the matrix has uniform random entries instead). Logrand pins both ends
// (sigma_1 = 1, sigma_k = 1/kappa; the k - 2 others log-uniform from the
// seed), so every non-random family has kappa_2 = kappa exactly; k = 1
// gives {1} for every family.
std::vector<double> family_sigma(Family f, int k, double kappa, uint64_t seed);

// A = U diag(sigma) V^H (m x n, column-major, leading dimension lda) with
// U, V random orthogonal / unitary (Householder QR of a Gaussian matrix),
// built in double precision and rounded to T. For Family::Random the
// entries are uniform in [-1, 1) (real and imaginary parts for complex).
// sigma_out (optional) receives the prescribed values (empty for Random).
template <class T> void generate(Family f, int m, int n, double kappa, uint64_t seed, T *A, int lda,
                                 std::vector<double> *sigma_out = nullptr);

// The exact factors behind generate() for a non-random family:
// A = U diag(sigma) V^H with U m x k and V n x k (k = min(m, n)) column-major
// with leading dimensions m and n, in double (D = double) or double complex
// (D = std::complex<double>) precision. generate<T> forms this product in D
// and rounds it to T. Throws std::invalid_argument for Family::Random.
template <class D> void generate_factors(Family f, int m, int n, double kappa, uint64_t seed,
                                         std::vector<D> &U, std::vector<double> &sigma,
                                         std::vector<D> &V);

// A Haar-distributed m x k matrix with orthonormal columns (0 <= k <= m),
// D = double or std::complex<double>: Householder QR of a matrix of standard
// normal entries, each column of Q multiplied by the sign (phase) of the
// corresponding diagonal entry of R. Deterministic from the seed.
template <class D> void haar_orthonormal(int m, int k, uint64_t seed, D *Q, int ldq);

enum class Edge {
  Zero, // all zeros
  Identity, // ones on the diagonal
  RankDeficient, // rank min(m, n) / 2 (at least 1), exact zeros beyond
  Overflow, // logrand family scaled so that max |a_ij| ~ 0.01 * max finite / sqrt(mn)
  Underflow, // logrand family scaled so that max |a_ij| ~ 1e3 * min normal
  Nan, // a random matrix with one NaN entry
  Inf, // a random matrix with one +Inf entry
  TinyColumns // a random matrix with every third column (1, 4, 7, ...) scaled by
  // 2^-10 sqrt(min normal): inner products between those columns are
  // subnormal (Jacobi's rotation phase and stopping test near underflow)
};
const char *edge_name(Edge e);
bool parse_edge(const std::string &name, Edge &e);
std::vector<Edge> all_edges();

// Rank-deficient: U diag(sigma) V^H with rank r = max(1, min(m, n) / 2) and
// sigma arithmetic from 1 down to 0.1. Nan / Inf: entry (seed-chosen) of a
// Random-family matrix gets a NaN / +Inf real part.
template <class T> void generate_edge(Edge e, int m, int n, uint64_t seed, T *A, int lda);

} // namespace bsvd::testing
