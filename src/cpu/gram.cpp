// The Gram preconditioning (opts.precondition = 2; docs/design/gram.md), the
// CPU twin of the GPU's path cuda-gram (src/cuda/gram/): the same steps,
// with the single-precision eigenvectors from this library's own Jacobi
// eigensolver where the GPU calls cuSOLVER's, so the two agree to the
// accuracy contract, not to the bit.
//
//   F = W 2^-e in single precision (max |f_ij| in [1/2, 1))
//   G = F^H F,  G Q = Q diag(lambda),  V0 = Q, columns by descending lambda
//   V0 <- V0 (3/2 I - V0^H V0 / 2), twice (~1e-7 -> rounding)
//   V0 = I unless max |V0^H V0 - I| <= 1024 u
//   X = W V0 solved as a matrix of its own: X = U_x S V_x^H
//   W = U_x S (V0 V_x)^H
#include "gram.hpp"

#include "jacobi.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <numeric>
#include <vector>

namespace bsvd::detail::cpu {

namespace {

template <class T> struct low_of { using type = float; };
template <class R> struct low_of<std::complex<R>> { using type = std::complex<float>; };

template <class T> struct GramScratch {
  using R = real_of_t<T>;
  using L = typename low_of<T>::type;
  L *F = nullptr, *G = nullptr, *Q = nullptr;
  T *V0 = nullptr, *B1 = nullptr, *B2 = nullptr, *X = nullptr, *Ux = nullptr, *Vx = nullptr;
  R *Sx = nullptr;
  unsigned char *inner = nullptr;
  void carve(Arena &a, int mw, int nw, bool vectors, size_t inner_bytes) {
    F = a.take<L>(size_t(mw) * nw);
    G = a.take<L>(size_t(nw) * nw);
    Q = a.take<L>(size_t(nw) * nw);
    V0 = a.take<T>(size_t(nw) * nw);
    B1 = a.take<T>(size_t(nw) * nw);
    B2 = a.take<T>(size_t(nw) * nw);
    X = a.take<T>(size_t(mw) * nw);
    Sx = a.take<R>(nw);
    if (vectors) {
      Ux = a.take<T>(size_t(mw) * nw);
      Vx = a.take<T>(size_t(nw) * nw);
    }
    inner = a.take<unsigned char>(inner_bytes);
  }
};

// C = op(A) B (m x n, inner dimension k; op = conjugate transpose when ct).
template <class T> void product(bool ct, int m, int n, int k, const T *A, int lda, const T *B,
                                int ldb, T *C, int ldc) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      T s(0);
      for (int p = 0; p < k; ++p)
        s += (ct ? conj_(A[p + int64_t(i) * lda]) : A[i + int64_t(p) * lda]) *
             B[p + int64_t(j) * ldb];
      C[i + int64_t(j) * ldc] = s;
    }
}

} // namespace

template <class T> size_t gram_scratch_bytes_with(int mw, int nw, bool vectors, size_t inner) {
  Arena dry;
  GramScratch<T> L;
  L.carve(dry, mw, nw, vectors, inner);
  return dry.used();
}

template <class T> size_t gram_scratch_bytes(int mw, int nw, bool vectors, const Config &cfg) {
  return gram_scratch_bytes_with<T>(mw, nw, vectors,
                                    solve_one_scratch_bytes<T>(mw, nw, vectors, inner_config(cfg)));
}

template <class T> int solve_gram_preconditioned(const Batch<T> &batch, int b, const Config &cfg,
                                                 const T *W, int mw, int nw, bool trans, int escale,
                                                 void *scratch, OrderingCache &cache) {
  using R = real_of_t<T>;
  using L = typename low_of<T>::type;
  const bool vec = batch.vectors;
  Arena arena(scratch);
  GramScratch<T> P;
  P.carve(arena, mw, nw, vec, solve_one_scratch_bytes<T>(mw, nw, vec, inner_config(cfg)));
  const size_t nn = size_t(nw) * nw, mn = size_t(mw) * nw;

  // F, G = F^H F and its eigenvectors (until converged, round-robin).
  R amax = 0;
  for (size_t e = 0; e < mn; ++e) amax = std::max(amax, maxpart_(W[e]));
  const int e2 = amax > R(0) ? std::ilogb(amax) + 1 : 0;
  for (size_t e = 0; e < mn; ++e) P.F[e] = L(ldexp_(W[e], -e2));
  product(true, nw, nw, mw, P.F, mw, P.F, mw, P.G, nw);
  for (size_t e = 0; e < nn; ++e) P.Q[e] = L(0);
  for (int j = 0; j < nw; ++j) P.Q[j + int64_t(j) * nw] = L(1);
  hermitian_jacobi_evd(nw, P.G, nw, P.Q, nw, double(unit_roundoff<float>()), 0,
                       BSVD_ORDERING_ROUND_ROBIN);
  std::vector<int> ord(static_cast<size_t>(nw));
  std::iota(ord.begin(), ord.end(), 0);
  std::stable_sort(ord.begin(), ord.end(), [&](int x, int y) {
    return std::real(P.G[x + int64_t(x) * nw]) > std::real(P.G[y + int64_t(y) * nw]);
  });
  bool ok = true;
  for (int c = 0; c < nw; ++c)
    for (int r = 0; r < nw; ++r) {
      const L q = P.Q[r + int64_t(ord[size_t(c)]) * nw];
      ok = ok && std::isfinite(std::abs(q));
      P.V0[r + int64_t(c) * nw] = T(q);
    }
  if (!ok)
    for (int c = 0; c < nw; ++c)
      for (int r = 0; r < nw; ++r) P.V0[r + int64_t(c) * nw] = r == c ? T(1) : T(0);

  // Two Newton-Schulz steps, then the check.
  for (int step = 0; step < 2; ++step) {
    product(true, nw, nw, nw, P.V0, nw, P.V0, nw, P.B1, nw);
    for (int c = 0; c < nw; ++c)
      for (int r = 0; r < nw; ++r) {
        T &x = P.B1[r + int64_t(c) * nw];
        x = (r == c ? T(1.5) : T(0)) - x * R(0.5);
      }
    product(false, nw, nw, nw, P.V0, nw, P.B1, nw, P.B2, nw);
    std::copy(P.B2, P.B2 + nn, P.V0);
  }
  product(true, nw, nw, nw, P.V0, nw, P.V0, nw, P.B1, nw);
  const R tol = R(1024) * unit_roundoff<R>();
  for (int c = 0; c < nw && ok; ++c)
    for (int r = 0; r < nw && ok; ++r)
      ok = std::abs(P.B1[r + int64_t(c) * nw] - (r == c ? T(1) : T(0))) <= tol;
  if (!ok)
    for (int c = 0; c < nw; ++c)
      for (int r = 0; r < nw; ++r) P.V0[r + int64_t(c) * nw] = r == c ? T(1) : T(0);

  // X = W V0, solved as a matrix of its own.
  product(false, mw, nw, nw, W, mw, P.V0, nw, P.X, mw);
  int info = 0, sweeps = 0;
  const Batch<T> xb = strided_batch(vec ? BSVD_JOB_VECTORS : BSVD_JOB_VALUES, mw, nw, P.X, mw, 0,
                                    P.Sx, 0, P.Ux, mw, 0, P.Vx, nw, 0, &info, &sweeps, 1);
  const int path = solve_one_impl(xb, 0, inner_config(cfg), reinterpret_cast<T *>(P.inner), cache);

  R *S = batch.S.ptr(b);
  for (int j = 0; j < nw; ++j) S[j] = std::ldexp(P.Sx[j], -escale);
  if (vec) {
    // W's left vectors U_x: U (V when trans); its right ones V0 V_x.
    T *Ls = trans ? batch.V.ptr(b) : batch.U.ptr(b);
    T *Rs = trans ? batch.U.ptr(b) : batch.V.ptr(b);
    const int ldl = trans ? batch.V.ldm(b) : batch.U.ldm(b);
    const int ldr = trans ? batch.U.ldm(b) : batch.V.ldm(b);
    for (int j = 0; j < nw; ++j)
      std::copy(P.Ux + int64_t(j) * mw, P.Ux + int64_t(j + 1) * mw, Ls + int64_t(j) * ldl);
    product(false, nw, nw, nw, P.V0, nw, P.Vx, nw, Rs, ldr);
  }
  batch.info[b] = info;
  if (batch.sweeps) batch.sweeps[b] = sweeps;
  return path;
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template size_t gram_scratch_bytes_with<T>(int, int, bool, size_t);                              \
  template size_t gram_scratch_bytes<T>(int, int, bool, const Config &);                           \
  template int solve_gram_preconditioned<T>(const Batch<T> &, int, const Config &, const T *, int, \
                                            int, bool, int, void *, OrderingCache &);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail::cpu
