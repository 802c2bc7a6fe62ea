// The host side of the distributed solve (core/distributed.hpp) and its CPU
// twin: the same driver with threads as devices, plain loops for the GEMMs
// and the CPU solver for the pairs.
#include "../core/distributed.hpp"
#include "../core/backends.hpp"
#include "../core/split.hpp"
#include "cpu_internal.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

namespace bsvd::detail::dist {

template <class T> bool prepare(const Batch<T> &b, Host<T> &h) {
  using R = real_of_t<T>;
  const int m = b.dims.rows(0), n = b.dims.cols(0);
  const T *A = b.A.ptr(0);
  const int64_t lda = b.A.ldm(0);
  R amax = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      const T x = A[i + j * lda];
      if (!cpu::finite_(x)) return false;
      amax = std::max(amax, cpu::maxpart_(x));
    }
  if (amax == R(0)) return false;
  h.trans = m < n;
  h.mw = std::max(m, n);
  h.nw = std::min(m, n);
  h.escale = cpu::prescale_exponent(amax, h.mw, h.nw);
  if (!h.trans && h.escale == 0) {
    h.W = A;
    h.ldw = lda;
    return true;
  }
  h.owned.assign(size_t(h.mw) * h.nw, T(0));
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      const T x = cpu::ldexp_(A[i + j * lda], h.escale);
      if (h.trans)
        h.owned[size_t(j) + size_t(i) * h.mw] = cpu::conj_(x);
      else
        h.owned[size_t(i) + size_t(j) * h.mw] = x;
    }
  h.W = h.owned.data();
  h.ldw = h.mw;
  return true;
}

Config inner_config(const Config &cfg, const Settings &s) {
  Config c = cfg; // its tolerance too: the pairs have the matrix's mw rows
  c.max_sweeps = s.inner_sweeps > 0 ? s.inner_sweeps : kDefaultMaxSweeps;
  // A capped solve needs U Σ = G_p V̂ before convergence: the QRCP
  // preconditioning (Jacobi on R^H, U = Q V_R, V = P U_R) gives that only
  // when converged (the twin stopped "converged" with T2 3e14), so it is
  // off then, the automatic choice included. The Gram one (2) rotates
  // every pair by single-precision eigenvectors first, a rotation even of
  // an orthogonal pair whose columns have close norms: the outer iteration
  // never stopped (80 sweeps in the twin); always off.
  if (s.inner_sweeps > 0 || c.precondition == 2) c.precondition = -1;
  return c;
}

template <class T>
void finish(const Batch<T> &b, const Layout &L, const Host<T> &h, T *G, T *V, const Outcome &o) {
  using R = real_of_t<T>;
  const int np = L.padded(), mw = h.mw, nw = h.nw;
  int cols = np;
  std::vector<T> Vc;
  if (V) {
    // A padding column of V is e_r with r >= nw (its G column is zero and
    // never rotates); every other column is zero in those rows.
    cols = 0;
    Vc.resize(size_t(nw) * nw);
    for (int c = 0; c < np; ++c) {
      const T *vc = V + int64_t(c) * np;
      bool pad = false;
      for (int r = nw; r < np && !pad; ++r) pad = vc[r] != T(0);
      if (pad) continue;
      if (cols == nw) throw std::logic_error("dist::finish: fewer padding columns than padded");
      if (cols != c) std::memmove(G + int64_t(cols) * mw, G + int64_t(c) * mw, sizeof(T) * mw);
      std::memcpy(Vc.data() + size_t(cols) * nw, vc, sizeof(T) * nw);
      ++cols;
    }
    if (cols != nw) throw std::logic_error("dist::finish: more padding columns than padded");
  }
  // Without vectors every column is kept: the padding is exactly zero, and
  // the stable descending sort puts it after the nw columns of A.
  std::vector<R> mant(static_cast<size_t>(cols));
  std::vector<int> expo(static_cast<size_t>(cols)), perm(static_cast<size_t>(cols));
  const int cb = completion_width<T>(mw, nw, true);
  std::vector<T> cand(V ? completion_work(mw, nw, cb) : 0);
  cpu::finish_columns(b, 0, mw, cols, G, V ? Vc.data() : nullptr, h.trans, h.escale,
                      finish_null_ratio<R>(L.pair_cols()), cb, mant.data(), expo.data(),
                      perm.data(), cand.data());
  b.info[0] = o.converged ? 0 : 1;
  if (b.sweeps) b.sweeps[0] = o.sweeps;
}

namespace {

// C (m x n) = op(A) (m x k) B (k x n), op = conjugate transpose or none;
// column-major, plain loops (the twin's sizes are small).
template <class T> void gemm(bool conj_a, int m, int n, int k, const T *A, int lda, const T *B,
                             int ldb, T *C, int ldc) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      T s(0);
      for (int l = 0; l < k; ++l)
        s += (conj_a ? cpu::conj_(A[l + int64_t(i) * lda]) : A[i + int64_t(l) * lda]) *
             B[l + int64_t(j) * ldb];
      C[i + int64_t(j) * ldc] = s;
    }
}

template <class T> class CpuEngine {
  using R = real_of_t<T>;

public:
  CpuEngine(const Layout &L, bool vectors, const Config &inner)
      : L_(L), vec_(vectors), inner_(inner), dev_(size_t(L.devices)) {
    if (inner_.variant == BSVD_VARIANT_AUTO) inner_.variant = BSVD_VARIANT_UNBLOCKED;
    inner_.exec = Exec::kBlocking;
    const size_t gcols = size_t(L.device_cols()), pw = size_t(L.pair_cols());
    Batch<T> xb = pair_batch(dev_[0]);
    ws_bytes_ = cpu_workspace_bytes(xb, inner_, 1);
    for (Dev &d : dev_) {
      d.GA.assign(size_t(L.mw) * gcols, T(0));
      d.GB.assign(d.GA.size(), T(0));
      if (vec_) {
        d.VA.assign(size_t(L.padded()) * gcols, T(0));
        d.VB.assign(d.VA.size(), T(0));
      }
      d.Vx.assign(pw * pw * size_t(L.pairs), T(0));
      d.Q = d.Vx;
      d.Sx.assign(pw * size_t(L.pairs), R(0));
      d.info.assign(size_t(L.pairs), 0);
      d.sweeps.assign(size_t(L.pairs), 0);
      d.ws.reset(new unsigned char[ws_bytes_ + 64]);
    }
  }

  void load(const T *W, int64_t ldw) {
    const int w = L_.width, np = L_.padded();
    for (int blk = 0; blk < L_.blocks(); ++blk) {
      const Place p = place_of(L_, 0, blk);
      Dev &d = dev_[size_t(p.device)];
      for (int j = 0; j < w; ++j) {
        const int src = blk * w + j, dst = p.col + j;
        if (src < L_.nw)
          std::copy(W + src * ldw, W + src * ldw + L_.mw, d.GA.data() + int64_t(dst) * L_.mw);
        if (vec_) d.VA[size_t(src) + size_t(dst) * np] = T(1);
      }
    }
  }

  void rotate() {
    std::vector<bsvd_status_t> st(size_t(L_.devices), BSVD_STATUS_SUCCESS);
    run_on_workers(L_.devices, [&](int dev) {
      try { // (a worker must not throw out of its function)
        st[size_t(dev)] = rotate_on(dev_[size_t(dev)]);
      } catch (...) {
        st[size_t(dev)] = BSVD_STATUS_INTERNAL_ERROR;
      }
    });
    for (bsvd_status_t s : st)
      if (s != BSVD_STATUS_SUCCESS) throw std::runtime_error("dist: an inner solve failed");
  }

  void exchange(const std::vector<Move> &moves) {
    const int64_t w = L_.width;
    for (const Move &mv : moves) {
      const Dev &s = dev_[size_t(mv.from.device)];
      Dev &d = dev_[size_t(mv.to.device)];
      std::memcpy(d.GB.data() + mv.to.col * int64_t(L_.mw),
                  s.GA.data() + mv.from.col * int64_t(L_.mw), sizeof(T) * w * L_.mw);
      if (vec_)
        std::memcpy(d.VA.data() + mv.to.col * int64_t(L_.padded()),
                    s.VB.data() + mv.from.col * int64_t(L_.padded()), sizeof(T) * w * L_.padded());
    }
    for (Dev &d : dev_) d.GA.swap(d.GB); // the next step's G
  }

  long rotations() {
    long sum = 0;
    for (Dev &d : dev_) {
      sum += d.count;
      d.count = 0;
    }

    return sum;
  }

  void gather(T *G, int64_t ldg, T *V, int64_t ldv) const {
    const int w = L_.width;
    for (int blk = 0; blk < L_.blocks(); ++blk) {
      const Place p = place_of(L_, 0, blk);
      const Dev &d = dev_[size_t(p.device)];
      for (int j = 0; j < w; ++j) {
        const int64_t dst = blk * w + j, src = p.col + j;
        std::copy_n(d.GA.data() + src * L_.mw, L_.mw, G + dst * ldg);
        if (vec_) std::copy_n(d.VA.data() + src * L_.padded(), L_.padded(), V + dst * ldv);
      }
    }
  }

private:
  struct Dev {
    std::vector<T> GA, GB, VA, VB, Vx, Q;
    std::vector<R> Sx;
    std::vector<int> info, sweeps;
    std::unique_ptr<unsigned char[]> ws;
    long count = 0;
  };

  // The device's k pairs as a strided batch: the inner solve of G_p, its
  // U written to G's B half (overwritten by the exchange's copies).
  Batch<T> pair_batch(Dev &d) const {
    const int pw = L_.pair_cols(), mw = L_.mw;
    const int64_t pp = int64_t(pw) * pw, gp = int64_t(mw) * pw;
    return strided_batch<T>(BSVD_JOB_VECTORS, mw, pw, d.GA.data(), mw, gp, d.Sx.data(), pw,
                            d.GB.data(), mw, gp, d.Vx.data(), pw, pp, d.info.data(),
                            d.sweeps.data(), L_.pairs);
  }

  bsvd_status_t rotate_on(Dev &d) {
    const int pw = L_.pair_cols(), mw = L_.mw, np = L_.padded();
    const int64_t pp = int64_t(pw) * pw;
    if (bsvd_status_t s = cpu_gesvj(pair_batch(d), inner_, d.ws.get(), ws_bytes_ + 64, 1, nullptr))
      return s;
    std::vector<int> to(static_cast<size_t>(pw));
    for (int q = 0; q < L_.pairs; ++q) {
      const int64_t off = int64_t(q) * pw;
      const long rotated = pair_rotated(d.info[size_t(q)], d.sweeps[size_t(q)]);
      d.count += rotated;
      T *Q = d.Q.data() + q * pp;
      pair_rotation(pw, rotated, d.Vx.data() + q * pp, Q, to.data());
      if (rotated) // G_p <- Û Σ in Q's column order (Û in the B half)
        for (int j = 0; j < pw; ++j) {
          const T *u = d.GB.data() + (off + j) * mw;
          T *g = d.GA.data() + (off + to[size_t(j)]) * mw;
          const R s = kept_value(d.Sx[size_t(off + j)], d.Sx[size_t(off)], pw);
          for (int i = 0; i < mw; ++i) g[i] = u[i] * s;
        }
      if (vec_)
        gemm(false, np, pw, pw, d.VA.data() + off * np, np, Q, pw, d.VB.data() + off * np, np);
    }
    return BSVD_STATUS_SUCCESS;
  }

  Layout L_;
  bool vec_;
  Config inner_;
  std::vector<Dev> dev_;
  size_t ws_bytes_ = 0;
};

} // namespace

template <class T>
bsvd_status_t cpu_gesvj_distributed(const Batch<T> &b, const Config &cfg, const Settings &s) {
  Host<T> h;
  if (!prepare(b, h)) {
    // NaN / Inf or zeros: the one-matrix solver's answer, without a sweep.
    std::vector<T> scratch(
        cpu::solve_one_scratch_bytes<T>(b.dims.rows(0), b.dims.cols(0), b.vectors, cfg) /
            sizeof(T) +
        8);
    solve_one(b, 0, cfg, scratch.data());
    return BSVD_STATUS_SUCCESS;
  }
  const Layout L = make_layout(h.mw, h.nw, s.devices, s.pair_cols);
  CpuEngine<T> e(L, b.vectors, inner_config(cfg, s));
  e.load(h.W, h.ldw);
  const int max_sweeps = cfg.max_sweeps > 0 ? cfg.max_sweeps : kDefaultMaxSweeps;
  const Outcome o = iterate(e, L, max_sweeps);
  const int np = L.padded();
  std::vector<T> G(size_t(h.mw) * np), V(b.vectors ? size_t(np) * np : 0);
  e.gather(G.data(), h.mw, V.data(), np);
  finish(b, L, h, G.data(), b.vectors ? V.data() : nullptr, o);
  return BSVD_STATUS_SUCCESS;
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template bool prepare<T>(const Batch<T> &, Host<T> &);                                           \
  template void finish<T>(const Batch<T> &, const Layout &, const Host<T> &, T *, T *,             \
                          const Outcome &);                                                        \
  template bsvd_status_t cpu_gesvj_distributed<T>(const Batch<T> &, const Config &,                \
                                                  const Settings &);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail::dist
