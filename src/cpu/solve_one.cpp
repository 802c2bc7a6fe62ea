// The complete solve of one matrix of a batch (jacobi.hpp, solve_one):
//   (a) NaN / Inf anywhere -> info = BSVD_INFO_NONFINITE, S, U, V = NaN;
//   (b) empty -> nothing to do;
//   (c) m < n -> work on W = A^H (and swap the factors at the end);
//   (d) exact power-of-two scaling of badly scaled input;
//   (e) V = I, the unblocked or blocked one-sided Jacobi on W -- or, with
//       opts.precondition = 1, QR with column pivoting W P = Q R and the
//       whole solve of R^H as its own matrix (solve_preconditioned); with
//       opts.precondition = 2, the solve of W V0 for the Gram matrix's
//       eigenvectors V0 (solve_gram_preconditioned, gram.cpp); or, on the
//       LAPACK path, xGESDD on W (solve_lapack), finished there;
//   (f) sigma_j = ||w_j|| (scaled, overflow/underflow-safe), u_j = w_j /
//       sigma_j, null columns of U completed, descending stable sort,
//       scaling undone, outputs written with their leading dimensions.
#include "cpu_internal.hpp"
#include "gram.hpp"
#include "lapack.hpp"
#include "qr.hpp"

#include <algorithm>
#include <cfloat>
#include <cstdint>
#include <vector>

namespace bsvd::detail {
namespace cpu {

namespace {

// Every scratch array of one solve, carved in a fixed order; the same
// function sizes the scratch (null base) and lays it out.
template <class T> struct SolveLayout {
  using R = real_of_t<T>;
  T *W = nullptr, *V = nullptr, *cand = nullptr;
  R *norms = nullptr, *anchor = nullptr; // unblocked
  BlockedWork<T> blk; // blocked
  R *mant = nullptr; // sigma_j = mant_j * 2^expo_j
  int *expo = nullptr, *perm = nullptr;

  // mw >= nw: working dimensions. kmax = 0: unblocked.
  void carve(Arena &a, int mw, int nw, bool vectors, int kmax, bool pair_svd) {
    W = a.take<T>(size_t(mw) * nw);
    if (vectors) {
      V = a.take<T>(size_t(nw) * nw);
      cand = a.take<T>(completion_work(mw, nw, completion_width<T>(mw, nw, kmax > 0)));
    }
    if (kmax > 0)
      blk.carve(a, kmax, pair_svd ? mw : 0);
    else {
      norms = a.take<R>(nw);
      anchor = a.take<R>(nw);
    }
    mant = a.take<R>(nw);
    expo = a.take<int>(nw);
    perm = a.take<int>(nw);
  }
};

bool use_blocked(const Config &cfg) { return cfg.variant == BSVD_VARIANT_BLOCKED; }

// Whether the solve of a working matrix of nw columns starts with the QR
// preconditioning: opts.precondition = 1 (auto is off here; the cuda
// backend's auto rule weighs GPU costs: plan::qrcp_auto; a
// single column gains nothing).
bool use_precondition(const Config &cfg, int nw) { return cfg.precondition == 1 && nw >= 2; }

// Whether it starts with the Gram preconditioning (opts.precondition = 2,
// gram.cpp).
bool use_gram(const Config &cfg, int nw) { return cfg.precondition == 2 && nw >= 2; }

// Scratch of a preconditioned solve: W (then the reflectors), tau, the
// pivots, X = R^H, X's S, U, V and the scratch of X's own solve.
template <class T> struct PreLayout {
  using R = real_of_t<T>;
  T *W = nullptr, *tau = nullptr, *X = nullptr, *Ux = nullptr, *Vx = nullptr;
  R *Sx = nullptr;
  int *perm = nullptr;
  T *inner = nullptr;

  void carve(Arena &a, int mw, int nw, bool vectors, size_t inner_bytes) {
    W = a.take<T>(size_t(mw) * nw);
    tau = a.take<T>(nw);
    perm = a.take<int>(nw);
    X = a.take<T>(size_t(nw) * nw);
    Sx = a.take<R>(nw);
    if (vectors) {
      Ux = a.take<T>(size_t(nw) * nw);
      Vx = a.take<T>(size_t(nw) * nw);
    }
    inner = reinterpret_cast<T *>(a.take<unsigned char>(inner_bytes));
  }
};

// kmax of the layout for a working n (0 = unblocked).
int layout_kmax(const Config &cfg, int nw) {
  return use_blocked(cfg) ? std::max(1, blocked_kmax(nw, effective_nb(cfg, nw))) : 0;
}

template <class T> size_t layout_bytes(int mw, int nw, bool vectors, int kmax, bool pair_svd) {
  Arena dry;
  SolveLayout<T> L;
  L.carve(dry, mw, nw, vectors, kmax, pair_svd);
  return dry.used();
}

template <class T> size_t pre_layout_bytes(int mw, int nw, bool vectors, size_t inner_bytes) {
  Arena dry;
  PreLayout<T> L;
  L.carve(dry, mw, nw, vectors, inner_bytes);
  return dry.used();
}

} // namespace

template <class T> int solve_one_impl(const Batch<T> &batch, int b, const Config &cfg, T *scratch,
                                      OrderingCache &cache, bool lapack);

namespace {

// (e'') The LAPACK path: W = Uw S Vw^H by xGESDD (W is A, or A^H when
// trans, scaled by 2^escale). Not transposed: U = Uw, written in place by
// LAPACK, V = VT^H; transposed: V = Uw, U = VT^H. No sweeps: sweeps = 0,
// info = 0. Returns false when LAPACK did not converge; nothing the caller
// reads has been finished then (the Jacobi solve rewrites every output).
template <class T> bool solve_lapack(const Batch<T> &batch, int b, const LapackLayout<T> &L, int mw,
                                     int nw, bool trans, int escale) {
  const bool vec = batch.vectors;
  T *Uw = nullptr, *Vo = nullptr;
  int lduw = 1, ldvo = 1;
  if (vec) {
    Uw = trans ? batch.V.ptr(b) : batch.U.ptr(b);
    lduw = trans ? batch.V.ldm(b) : batch.U.ldm(b);
    Vo = trans ? batch.U.ptr(b) : batch.V.ptr(b);
    ldvo = trans ? batch.U.ldm(b) : batch.V.ldm(b);
  }
  real_of_t<T> *S = batch.S.ptr(b);
  if (lapack_gesdd(mw, nw, vec, L, S, Uw, lduw) != 0) return false;
  if (escale != 0)
    for (int j = 0; j < nw; ++j) S[j] = std::ldexp(S[j], -escale);
  if (vec)
    for (int j = 0; j < nw; ++j)
      for (int i = 0; i < nw; ++i) Vo[i + int64_t(j) * ldvo] = conj_(L.VT[j + int64_t(i) * nw]);
  batch.info[b] = 0;
  if (batch.sweeps) batch.sweeps[b] = 0;
  return true;
}

// (e') The QR preconditioning (HBJ Sec. 2, eqs. 2.1-2.2; LAPACK xGEJSV):
// W P = Q R with column pivoting (householder_qr_pivoted), X = R^H solved
// as a matrix of its own -- the same solve_one_impl, unpreconditioned, with
// its own default tolerance (for nw rows), scaling, null-column completion
// and sort -- X = U_x S V_x^H. Then R = V_x S U_x^H and
// W = (Q [V_x; 0]) S (P U_x)^H: W's left vectors are Q [V_x; 0], its right
// ones P U_x (row perm[i] of P U_x is row i of U_x). W (mw x nw) in P.W
// holds A (A^H when trans) scaled by 2^escale. The twin of the GPU's path
// cuda-qrcp (src/cuda/qr/).
template <class T> int solve_preconditioned(const Batch<T> &batch, int b, const Config &cfg,
                                            const PreLayout<T> &P, int mw, int nw, bool trans,
                                            int escale, OrderingCache &cache) {
  using R = real_of_t<T>;
  householder_qr_pivoted(mw, nw, P.W, mw, P.tau, P.perm);
  // R's rows kept for R^H (qrcp_rank, rotation.hpp)
  const int kr = qrcp_rank<R>(nw, [&](int j) { return R(std::abs(P.W[j + int64_t(j) * mw])); });
  for (int c = 0; c < nw; ++c)
    for (int r = 0; r < nw; ++r)
      P.X[r + int64_t(c) * nw] = r >= c && c < kr ? conj_(P.W[c + int64_t(r) * mw]) : T(0);
  const bool vec = batch.vectors;
  int info = 0, sweeps = 0;
  const Batch<T> xb = strided_batch(vec ? BSVD_JOB_VECTORS : BSVD_JOB_VALUES, nw, nw, P.X, nw, 0,
                                    P.Sx, 0, P.Ux, nw, 0, P.Vx, nw, 0, &info, &sweeps, 1);
  const int path = solve_one_impl(xb, 0, inner_config(cfg), P.inner, cache);

  R *S = batch.S.ptr(b);
  for (int j = 0; j < nw; ++j) S[j] = std::ldexp(P.Sx[j], -escale);
  if (vec) {
    // Q side: U (V when trans), mw rows; the other side nw rows.
    T *Qs = trans ? batch.V.ptr(b) : batch.U.ptr(b);
    T *Os = trans ? batch.U.ptr(b) : batch.V.ptr(b);
    const int ldq = trans ? batch.V.ldm(b) : batch.U.ldm(b);
    const int ldo = trans ? batch.U.ldm(b) : batch.V.ldm(b);
    for (int j = 0; j < nw; ++j) {
      T *q = Qs + int64_t(j) * ldq;
      for (int i = 0; i < mw; ++i) q[i] = i < nw ? P.Vx[i + int64_t(j) * nw] : T(0);
      T *o = Os + int64_t(j) * ldo;
      for (int i = 0; i < nw; ++i) o[P.perm[i]] = P.Ux[i + int64_t(j) * nw];
    }
    apply_householder_q(mw, nw, P.W, mw, P.tau, nw, Qs, ldq);
  }
  batch.info[b] = info;
  if (batch.sweeps) batch.sweeps[b] = sweeps;
  return path;
}

} // namespace

// solve_one's step (f); declared in jacobi.hpp.
template <class T> void finish_columns(const Batch<T> &batch, int b, int mw, int nw, T *W, T *Vw,
                                       bool trans, int escale, real_of_t<T> null_ratio,
                                       int completion_b, real_of_t<T> *mant, int *expo, int *perm,
                                       T *cand) {
  using R = real_of_t<T>;
  const int m = batch.dims.rows(b), n = batch.dims.cols(b);
  const int k = std::min(m, n);
  const bool vec = batch.vectors;
  // sigma_j = ||w_j|| = mant_j 2^expo_j; u_j in place of w_j.
  //
  // Numerically null columns: ||w_j|| < u sigma_max. Their direction is not
  // determined by the data in this precision (a perturbation of A of size
  // u ||A|| can turn it anywhere), and it may not even be orthogonal to the
  // other columns: the iteration skips pairs whose squared norm underflowed
  // to zero (seen on rank-deficient SuiteSparse matrices, Erdos971: columns
  // of norm 1e-162 left unrotated, ||I - U^H U|| ~ 0.03). Their U columns are
  // therefore completed to an orthonormal set; sigma_j keeps its computed
  // value (below u sigma_max, within T3's tolerance), and the residual
  // changes by at most 2 sigma_j per column. The prescaling of (d) keeps
  // u sigma_max >= sqrt(min_normal), so every column above the threshold had
  // a normal squared norm throughout the iteration.
  for (int j = 0; j < nw; ++j) {
    T *wj = W + int64_t(j) * mw;
    scaled_norm(mw, wj, mant[j], expo[j], vec ? wj : nullptr);
  }
  if (vec) {
    int jmax = 0;
    for (int j = 1; j < nw; ++j)
      if (mant[j] != R(0) && (mant[jmax] == R(0) || expo[j] > expo[jmax] ||
                              (expo[j] == expo[jmax] && mant[j] > mant[jmax])))
        jmax = j;
    std::vector<char> null(size_t(nw), 0);
    bool any_null = false;
    for (int j = 0; j < nw; ++j) {
      // ||w_j|| / sigma_max, 0 when it underflows.
      const R ratio =
          mant[j] == R(0) ? R(0) : std::ldexp(mant[j] / mant[jmax], expo[j] - expo[jmax]);
      null[j] = ratio < null_ratio;
      any_null = any_null || null[j];
    }
    if (any_null) complete_basis(mw, nw, W, null.data(), completion_b, cand);
  }

  // Descending stable sort of (mant, expo) pairs: exact comparison, no
  // overflow or underflow of the keys.
  for (int j = 0; j < nw; ++j) perm[j] = j;
  std::stable_sort(perm, perm + nw, [mant, expo](int a, int c) {
    if (mant[a] == R(0) || mant[c] == R(0)) return mant[a] > mant[c];
    if (expo[a] != expo[c]) return expo[a] > expo[c];
    return mant[a] > mant[c];
  });

  R *S = batch.S.ptr(b);
  for (int j = 0; j < k; ++j) {
    const int pj = perm[j];
    S[j] = std::ldexp(mant[pj], expo[pj] - escale);
  }
  if (vec) {
    // W (mw x nw) now holds Uw, Vw (nw x nw) the right vectors of W.
    // Not transposed: U = Uw, V = Vw. Transposed (W = A^H): U = Vw, V = Uw.
    T *U = batch.U.ptr(b);
    T *V = batch.V.ptr(b);
    const int ldu = batch.U.ldm(b), ldv = batch.V.ldm(b);
    const T *Ufrom = trans ? Vw : W;
    const T *Vfrom = trans ? W : Vw;
    const int ldUf = trans ? nw : mw, ldVf = trans ? mw : nw;
    for (int j = 0; j < k; ++j) {
      const int pj = perm[j];
      for (int i = 0; i < m; ++i) U[i + int64_t(j) * ldu] = Ufrom[i + int64_t(pj) * ldUf];
      for (int i = 0; i < n; ++i) V[i + int64_t(j) * ldv] = Vfrom[i + int64_t(pj) * ldVf];
    }
  }
}

template <class T> int solve_one_impl(const Batch<T> &batch, int b, const Config &cfg, T *scratch,
                                      OrderingCache &cache, bool lapack) {
  using R = real_of_t<T>;
  const int m = batch.dims.rows(b), n = batch.dims.cols(b);
  const int k = std::min(m, n);
  const T *A = batch.A.ptr(b);
  const int lda = batch.A.ldm(b);
  const bool vec = batch.vectors;
  auto set_result = [&](int info, int sweeps) {
    batch.info[b] = info;
    if (batch.sweeps) batch.sweeps[b] = sweeps;
  };

  // (b) empty: nothing to compute or write.
  if (m <= 0 || n <= 0) {
    set_result(0, 0);
    return BSVD_PATH_TRIVIAL;
  }
  // (a) non-finite input.
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      if (!finite_(A[i + int64_t(j) * lda])) {
        fill_nonfinite(batch, b, m, n);
        set_result(BSVD_INFO_NONFINITE, 0);
        return BSVD_PATH_TRIVIAL;
      }

  const bool blocked = use_blocked(cfg);
  const int path = blocked ? BSVD_PATH_CPU_BLOCKED : BSVD_PATH_CPU_UNBLOCKED;
  // (c) working matrix W (mw x nw, mw >= nw): A, or A^H when m < n.
  const bool trans = m < n;
  const int mw = trans ? n : m, nw = k;
  const int kmax = layout_kmax(cfg, nw);
  const bool pre = !lapack && use_precondition(cfg, nw);
  const bool gram = !lapack && use_gram(cfg, nw);
  Arena arena(scratch);
  SolveLayout<T> L;
  PreLayout<T> PL;
  LapackLayout<T> LL;
  T *GW = nullptr; // the Gram preconditioning's W, then its scratch
  void *GS = nullptr;
  if (lapack)
    LL.carve(arena, mw, nw, vec);
  else if (gram) {
    GW = arena.take<T>(size_t(mw) * nw);
    GS = arena.take<unsigned char>(gram_scratch_bytes<T>(mw, nw, vec, cfg));
  } else if (pre)
    PL.carve(arena, mw, nw, vec, cpu::solve_one_scratch_bytes<T>(nw, nw, vec, inner_config(cfg)));
  else
    L.carve(arena, mw, nw, vec, kmax, cfg.pair_solver == BSVD_PAIR_SVD_SM);
  T *W = lapack ? LL.W : gram ? GW : pre ? PL.W : L.W;
  R amax = 0;
  if (!trans) {
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        const T x = A[i + int64_t(j) * lda];
        W[i + int64_t(j) * mw] = x;
        amax = std::max(amax, maxpart_(x));
      }
  } else {
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        const T x = A[i + int64_t(j) * lda];
        W[j + int64_t(i) * mw] = conj_(x);
        amax = std::max(amax, maxpart_(x));
      }
  }

  if (amax == R(0)) {
    // All-zero matrix: S = 0, U and V the leading identity columns; no
    // sweep is run (sweeps = 0), info = 0.
    fill_zero(batch, b, m, n);
    set_result(0, 0);
    return lapack ? int(BSVD_PATH_CPU_LAPACK) : path;
  }

  // (d) Exact scaling by a power of two when max |a_ij| = M (largest real
  // component) lies outside the window of prescale_exponent: W scaled by
  // 2^escale, S scaled back at the end.
  const int escale = prescale_exponent(amax, mw, nw);
  if (escale != 0)
    for (int j = 0; j < nw; ++j)
      for (int i = 0; i < mw; ++i) W[i + int64_t(j) * mw] = ldexp_(W[i + int64_t(j) * mw], escale);

  if (lapack) {
    if (solve_lapack(batch, b, LL, mw, nw, trans, escale)) return BSVD_PATH_CPU_LAPACK;
    return solve_one_impl(batch, b, cfg, scratch, cache, false);
  }
  if (pre) return solve_preconditioned(batch, b, cfg, PL, mw, nw, trans, escale, cache);
  if (gram) return solve_gram_preconditioned(batch, b, cfg, W, mw, nw, trans, escale, GS, cache);

  // (e) the Jacobi iteration.
  T *Vw = nullptr;
  if (vec) {
    Vw = L.V;
    for (int j = 0; j < nw; ++j)
      for (int i = 0; i < nw; ++i) Vw[i + int64_t(j) * nw] = i == j ? T(1) : T(0);
  }
  const R tol = resolve_tol<R>(cfg.tol, mw);
  const int max_sweeps = cfg.max_sweeps > 0 ? cfg.max_sweeps : kDefaultMaxSweeps;
  SweepStats st;
  if (blocked) {
    // cfg.ordering orders both the block pairs and the inner eigensolver;
    // the block pairs by the two-level ordering when cfg.wcycle_blocks asks.
    const int nb = effective_nb(cfg, nw);
    const Ordering &bo = cache.blocks(cfg, (nw + nb - 1) / nb);
    st = blocked_impl(mw, nw, W, mw, Vw, nw, nb, bo, tol, max_sweeps, cfg.eig_sweeps, cfg.ordering,
                      cache, L.blk, cfg.pair_solver == BSVD_PAIR_SVD_SM);
  } else {
    const Ordering &o = cache.get(cfg.ordering, nw);
    st = unblocked_impl(mw, nw, W, mw, Vw, nw, o, tol, max_sweeps, L.norms, L.anchor);
  }

  // (f) finish.
  const R null_ratio = finish_null_ratio<R>(blocked ? blocked_kmax(nw, effective_nb(cfg, nw)) : 1);
  finish_columns(batch, b, mw, nw, W, Vw, trans, escale, null_ratio,
                 completion_width<T>(mw, nw, blocked), L.mant, L.expo, L.perm, L.cand);
  set_result(st.converged ? 0 : 1, st.sweeps);
  return path;
}

} // namespace cpu

namespace cpu {
template <class T>
size_t solve_one_scratch_bytes(int m, int n, bool vectors, const Config &cfg, bool lapack) {
  const int mw = std::max(m, n), nw = std::min(m, n);
  if (mw <= 0 || nw <= 0) return 0;
  if (lapack)
    return std::max(lapack_layout_bytes<T>(mw, nw, vectors),
                    solve_one_scratch_bytes<T>(m, n, vectors, cfg, false));
  if (use_gram(cfg, nw)) {
    Arena dry;
    dry.take<T>(size_t(mw) * nw);
    dry.take<unsigned char>(gram_scratch_bytes<T>(mw, nw, vectors, cfg));
    return dry.used();
  }
  if (use_precondition(cfg, nw))
    return pre_layout_bytes<T>(mw, nw, vectors,
                               solve_one_scratch_bytes<T>(nw, nw, vectors, inner_config(cfg)));
  return layout_bytes<T>(mw, nw, vectors, layout_kmax(cfg, nw),
                         cfg.pair_solver == BSVD_PAIR_SVD_SM);
}
} // namespace cpu

// Elements of T for any T and any Config: the largest byte size over the
// four types and both variants (blocked with the widest pair, k = n, and
// the pair-SVD copy),
// divided by the element size.
namespace {
// Elements of T for the largest solve of an mw x nw working matrix of type
// T: either variant, and preconditioned either way (R^H's solve, or W V0's,
// inside, either variant).
template <class T> size_t scratch_elems(int mw, int nw, bool vectors) {
  size_t bytes = 0, inner = 0;
  for (int kmax : {0, nw}) {
    const bool ps = kmax > 0;
    bytes = std::max(bytes, cpu::layout_bytes<T>(mw, nw, vectors, kmax, ps));
    inner = std::max(inner, cpu::layout_bytes<T>(nw, nw, vectors, kmax, ps));
  }
  const size_t plain = bytes;
  bytes = std::max(bytes, cpu::pre_layout_bytes<T>(mw, nw, vectors, inner));
  cpu::Arena gram; // solve_one_impl's carve for the Gram preconditioning
  gram.take<T>(size_t(mw) * nw);
  gram.take<unsigned char>(cpu::gram_scratch_bytes_with<T>(mw, nw, vectors, plain));
  bytes = std::max(bytes, gram.used());
  return (bytes + sizeof(T) - 1) / sizeof(T);
}
} // namespace

size_t solve_one_scratch(int m, int n, bool vectors) {
  const int mw = std::max(m, n), nw = std::min(m, n);
  if (mw <= 0 || nw <= 0) return 0;
  return std::max({scratch_elems<float>(mw, nw, vectors), scratch_elems<double>(mw, nw, vectors),
                   scratch_elems<std::complex<float>>(mw, nw, vectors),
                   scratch_elems<std::complex<double>>(mw, nw, vectors)});
}

template <class T> int solve_one(const Batch<T> &batch, int b, const Config &cfg, T *scratch) {
  cpu::OrderingCache cache;
  return cpu::solve_one_impl(batch, b, cfg, scratch, cache);
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template int cpu::solve_one_impl<T>(const Batch<T> &, int, const Config &, T *,                  \
                                      cpu::OrderingCache &, bool);                                 \
  template int solve_one<T>(const Batch<T> &, int, const Config &, T *);                           \
  template void cpu::finish_columns<T>(const Batch<T> &, int, int, int, T *, T *, bool, int,       \
                                       real_of_t<T>, int, real_of_t<T> *, int *, int *, T *);      \
  template size_t cpu::solve_one_scratch_bytes<T>(int, int, bool, const Config &, bool);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail
