/* bsvd from C: the SVD of a batch of matrices whose singular values are
 * known, checked by the accuracy contract (docs/accuracy.md): T1 the
 * reconstruction, T2 the orthogonality of U and V, T3 the singular values
 * against the known ones (relative to the largest), T4 their order, each as a ratio to k u with k = 30.
 * Prints one line per check and "ok" or "FAILED"; exit status 1 on failure.
 * Build against the installed package: examples/c/CMakeLists.txt, or
 *   cc svd_batch.c $(pkg-config --cflags --libs bsvd) -lm */
#include <bsvd/bsvd.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { M = 40, N = 24, K = 24, BATCH = 50 };

/* Deterministic uniform numbers in [-1, 1): the example needs no seeding. */
static double rnd(unsigned long long *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*s >> 11) / 4503599627370496.0 - 1.0;
}

/* X (rows x cols, column-major) := H X with H = I - 2 v vᵀ / vᵀv: one random
 * orthogonal factor, so that A = H1 diag(sigma) H2 has singular values sigma. */
static void reflect_rows(double *X, int rows, int cols, unsigned long long *s) {
  double v[M], vv = 0;
  for (int i = 0; i < rows; ++i) {
    v[i] = rnd(s);
    vv += v[i] * v[i];
  }
  for (int j = 0; j < cols; ++j) {
    double d = 0;
    for (int i = 0; i < rows; ++i) d += v[i] * X[i + j * rows];
    for (int i = 0; i < rows; ++i) X[i + j * rows] -= 2 * d / vv * v[i];
  }
}

/* max over columns of the column sums of |X| (X: rows x cols, ld rows) */
static double norm1(const double *X, int rows, int cols) {
  double best = 0;
  for (int j = 0; j < cols; ++j) {
    double c = 0;
    for (int i = 0; i < rows; ++i) c += fabs(X[i + j * rows]);
    if (c > best) best = c;
  }
  return best;
}

/* ‖I − QᵀQ‖₁ for Q rows x K */
static double orth1(const double *Q, int rows) {
  double G[K * K];
  for (int j = 0; j < K; ++j)
    for (int i = 0; i < K; ++i) {
      double d = 0;
      for (int r = 0; r < rows; ++r) d += Q[r + i * rows] * Q[r + j * rows];
      G[i + j * K] = (i == j) - d;
    }
  return norm1(G, K, K);
}

int main(void) {
  static double A[BATCH * M * N], S[BATCH * K], U[BATCH * M * K], V[BATCH * N * K];
  static double sigma[BATCH * K], R[M * N];
  int info[BATCH], sweeps[BATCH];
  unsigned long long seed = 2024;

  /* A_b = H1 diag(sigma_b) H2ᵀ, sigma_b geometric from 1 down to 1e-6. */
  for (int b = 0; b < BATCH; ++b) {
    double *Ab = A + (size_t)b * M * N;
    memset(Ab, 0, sizeof(double) * M * N);
    for (int i = 0; i < K; ++i) {
      sigma[b * K + i] = pow(1e-6, (double)i / (K - 1)) * (1 + b);
      Ab[i + i * M] = sigma[b * K + i];
    }
    reflect_rows(Ab, M, N, &seed);
    /* right factor: reflect the rows of Aᵀ, i.e. transpose, reflect, transpose */
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) R[j + i * N] = Ab[i + j * M];
    reflect_rows(R, N, M, &seed);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) Ab[i + j * M] = R[j + i * N];
  }

  bsvd_options_t opts;
  bsvd_options_init(&opts); /* backend auto: the GPU when there is one */
  bsvd_status_t st =
      bsvd_dgesvj_strided_batched(BSVD_JOB_VECTORS, M, N, A, M, (int64_t)M * N, S, K, U, M,
                                  (int64_t)M * K, V, N, (int64_t)N * K, info, sweeps, BATCH, &opts);
  if (st != 0) {
    fprintf(stderr, "bsvd: %s: %s\n", bsvd_status_string(st), bsvd_last_error());
    return 1;
  }

  const double ku = 30 * DBL_EPSILON / 2;
  double t1 = 0, t2u = 0, t2v = 0, t3 = 0;
  int sorted = 1, converged = 0;
  for (int b = 0; b < BATCH; ++b) {
    const double *Ab = A + (size_t)b * M * N, *Sb = S + b * K;
    const double *Ub = U + (size_t)b * M * K, *Vb = V + (size_t)b * N * K;
    converged += info[b] == 0;
    for (int j = 0; j < N; ++j) /* R = A − U S Vᵀ */
      for (int i = 0; i < M; ++i) {
        double r = Ab[i + j * M];
        for (int l = 0; l < K; ++l) r -= Ub[i + l * M] * Sb[l] * Vb[j + l * N];
        R[i + j * M] = r;
      }
    t1 = fmax(t1, norm1(R, M, N) / (N * norm1(Ab, M, N)) / ku);
    t2u = fmax(t2u, orth1(Ub, M) / M / ku);
    t2v = fmax(t2v, orth1(Vb, N) / N / ku);
    double e = 0, scale = sigma[b * K];
    for (int i = 0; i < K; ++i) {
      e += pow((Sb[i] - sigma[b * K + i]) / scale, 2);
      if (i > 0 && Sb[i] > Sb[i - 1]) sorted = 0;
    }
    t3 = fmax(t3, sqrt(e) / K / ku);
  }
  int ok = converged == BATCH && sorted && t1 < 1 && t2u < 1 && t2v < 1 && t3 < 1;
  printf("bsvd %s, C API: %d matrices of %d x %d, %d converged\n", bsvd_version(), BATCH, M, N,
         converged);
  printf("T1 reconstruction  %.3g\nT2 orthogonality U %.3g, V %.3g\n", t1, t2u, t2v);
  printf("T3 singular values %.3g\nT4 sorted %s\n", t3, sorted ? "yes" : "no");
  printf("(ratios to 30 u; each must be < 1)\n%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
