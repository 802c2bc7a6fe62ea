// `bsvd bench --hsvd`: the hyperbolic SVD on the GPU (docs/hsvd.md) against
// the SVD of the same matrices and against what a user would otherwise do
// for the eigenvalues of H = G J G^H: form H (two cuBLAS products,
// H = G+ G+^H - G- G-^H, no TF32) and call a cuSOLVER eigensolver. One
// process, device data, J = diag(I_nplus, -I), nplus = n / 2:
//   bsvd-cuda                bsvd_?gehsvj (the reference of "vs bsvd")
//   bsvd-cuda-svd            bsvd_?gesvj of the same G (the issue's 1.3x)
//   cusolver-syevjBatched    H formed, then syevjBatched / heevjBatched (m <= 32)
//   cusolver-XsyevBatched    H formed, then cusolverDnXsyevBatched
//   cusolver-syevd-loop      H formed, then one syevd / heevd per matrix
//                            (a subset timed and scaled, as the gesvd loop)
// Accuracy on the first c.check_sample matrices, in units of n u:
//   t1  HSVD rows: ||G - U S V^H||_1 / (||G||_1 kappa(V)); SVD row: its T1
//   t2  HSVD rows: max(||U^H U - I||_1, ||V^H J V - J||_1 / kappa(V));
//       eigensolver rows: ||Q^H Q - I||_1 of the eigenvectors
//   t3  the eigenvalues of H against LAPACK's (double, H formed in double)
//       over ||G||_2^2 (kappa(V) for the HSVD rows)
// with kappa(V) = ||V||_2^2 (V^-1 = J V^H J). --grade D scales column j of
// every G by 10^(-D j / (n - 1)): the note then gives each row's largest
// relative error of an eigenvalue, against bsvd's CPU HSVD of the same G
// in the wider precision (s, c only): where Jacobi on the factor keeps the
// small eigenvalues' relative accuracy and an eigensolver on H cannot.
#include "bench_gpu.cuh"
#include "bench_large_check.cuh" // cuda_type

#include <cublas_v2.h>

namespace bsvd::cli {

namespace {

using namespace gpu_bench;

template <class T> constexpr cudaDataType real_type() { return cuda_type<real_t<T>>(); }

// The eigensolvers by precision (the Hermitian ones for c, z).
template <class T> struct Ev;
#define EV_TRAITS(T, CT, SY, P)                                                                    \
  template <> struct Ev<T> {                                                                       \
    using C = CT;                                                                                  \
    using R = real_t<T>;                                                                           \
    static cusolverStatus_t jb_size(cusolverDnHandle_t h, cusolverEigMode_t jz, int n, const C *A, \
                                    const R *W, int *lw, syevjInfo_t p, int b) {                   \
      return cusolverDn##P##SY##evjBatched_bufferSize(h, jz, CUBLAS_FILL_MODE_LOWER, n, A, n, W,   \
                                                      lw, p, b);                                   \
    }                                                                                              \
    static cusolverStatus_t jb(cusolverDnHandle_t h, cusolverEigMode_t jz, int n, C *A, R *W,      \
                               C *w, int lw, int *info, syevjInfo_t p, int b) {                    \
      return cusolverDn##P##SY##evjBatched(h, jz, CUBLAS_FILL_MODE_LOWER, n, A, n, W, w, lw, info, \
                                           p, b);                                                  \
    }                                                                                              \
    static cusolverStatus_t d_size(cusolverDnHandle_t h, cusolverEigMode_t jz, int n, const C *A,  \
                                   const R *W, int *lw) {                                          \
      return cusolverDn##P##SY##evd_bufferSize(h, jz, CUBLAS_FILL_MODE_LOWER, n, A, n, W, lw);     \
    }                                                                                              \
    static cusolverStatus_t d(cusolverDnHandle_t h, cusolverEigMode_t jz, int n, C *A, R *W, C *w, \
                              int lw, int *info) {                                                 \
      return cusolverDn##P##SY##evd(h, jz, CUBLAS_FILL_MODE_LOWER, n, A, n, W, w, lw, info);       \
    }                                                                                              \
  };
EV_TRAITS(float, float, sy, S)
EV_TRAITS(double, double, sy, D)
EV_TRAITS(std::complex<float>, cuComplex, he, C)
EV_TRAITS(std::complex<double>, cuDoubleComplex, he, Z)
#undef EV_TRAITS

// H_b = G_b J G_b^H for `count` matrices (m x n, packed; H m x m, packed).
template <class T>
void form_h(cublasHandle_t bh, int m, int n, int nplus, const T *G, T *H, int count) {
  const cublasComputeType_t ct =
      std::is_same_v<real_t<T>, float> ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_64F_PEDANTIC;
  const T one(1), minus(-1), zero(0);
  const long long sG = (long long)m * n, sH = (long long)m * m;
  if (nplus == 0) BENCH_CUDA(cudaMemsetAsync(H, 0, size_t(sH) * count * sizeof(T)));
  if (nplus > 0)
    BENCH_BLAS(cublasGemmStridedBatchedEx(bh, CUBLAS_OP_N, CUBLAS_OP_C, m, m, nplus, &one, G,
                                          cuda_type<T>(), m, sG, G, cuda_type<T>(), m, sG, &zero, H,
                                          cuda_type<T>(), m, sH, count, ct, CUBLAS_GEMM_DEFAULT));
  if (nplus < n)
    BENCH_BLAS(cublasGemmStridedBatchedEx(bh, CUBLAS_OP_N, CUBLAS_OP_C, m, m, n - nplus, &minus,
                                          G + (long long)nplus * m, cuda_type<T>(), m, sG,
                                          G + (long long)nplus * m, cuda_type<T>(), m, sG, &one, H,
                                          cuda_type<T>(), m, sH, count, ct, CUBLAS_GEMM_DEFAULT));
}

using W64 = std::complex<double>;

// The references of a checked matrix: H's eigenvalues (ascending, from H
// formed in double) and ||G||_2^2; the wider solver's signed values for
// --grade (s, c).
struct Reference {
  std::vector<double> lambda;
  double g2 = 0;
  std::vector<double> fine; // ascending; empty: none
};

template <class T> std::vector<double> signed_squares(const real_t<T> *S, int m, int n, int nplus) {
  std::vector<double> l(size_t(m), 0.0);
  for (int j = 0; j < n; ++j) l[j] = (j < nplus ? 1.0 : -1.0) * double(S[j]) * double(S[j]);
  std::sort(l.begin(), l.end());
  return l;
}

template <class T> Reference reference(const T *G, int m, int n, int nplus, bool grade) {
  using D = std::conditional_t<is_complex<T>::value, W64, double>;
  Reference r;
  std::vector<D> Gd(size_t(m) * n), H(size_t(m) * m);
  for (size_t i = 0; i < Gd.size(); ++i) Gd[i] = D(G[i]);
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < m; ++i) {
      D x = 0;
      for (int k = 0; k < n; ++k) {
        D y = Gd[i + size_t(k) * m];
        if constexpr (is_complex<T>::value)
          y *= std::conj(Gd[j + size_t(k) * m]);
        else
          y *= Gd[j + size_t(k) * m];
        x += k < nplus ? y : -y;
      }
      H[i + size_t(j) * m] = x;
    }
  r.lambda.resize(size_t(m));
  testing::reference_hermitian_eigenvalues<D>(m, H.data(), m, r.lambda.data());
  std::vector<double> gs(static_cast<size_t>(n));
  testing::reference_singular_values<D>(m, n, Gd.data(), m, gs.data());
  r.g2 = gs.empty() ? 0 : gs[0] * gs[0];
  if (grade && std::is_same_v<real_t<T>, float>) {
    std::vector<double> S(static_cast<size_t>(n));
    std::vector<int> np{nplus};
    int info = 0;
    bsvd_options_t o = default_options();
    o.backend = BSVD_BACKEND_CPU;
    if (gehsvj_strided_batched<D>(Job::Values, m, n, np.data(), Gd.data(), m, 0, S.data(), n,
                                  nullptr, m, 0, nullptr, n, 0, &info, nullptr, 1, o) == 0 &&
        info == 0)
      r.fine = signed_squares<D>(S.data(), m, n, nplus);
  }
  return r;
}

// Largest |l_i - ref_i| / scale and, over the nonzero ref_i, the largest
// relative error.
void eig_errors(const std::vector<double> &l, const std::vector<double> &ref, double scale,
                double &abs_ratio, double &rel) {
  for (size_t i = 0; i < l.size() && i < ref.size(); ++i) {
    abs_ratio = std::max(abs_ratio, std::abs(l[i] - ref[i]) / scale);
    if (ref[i] != 0) rel = std::max(rel, std::abs(l[i] - ref[i]) / std::abs(ref[i]));
  }
}

// ||X^H Y - Z||_1 for m x n X, Y (leading dimension m), Z = diag(z).
template <class T>
double gram_gap(int m, int n, const T *X, const T *Y, const std::vector<double> &z) {
  double worst = 0;
  for (int j = 0; j < n; ++j) {
    double col = 0;
    for (int i = 0; i < n; ++i) {
      std::conditional_t<is_complex<T>::value, W64, double> x = 0;
      for (int k = 0; k < m; ++k) {
        if constexpr (is_complex<T>::value)
          x += std::conj(W64(X[k + size_t(i) * m])) * W64(Y[k + size_t(j) * m]);
        else
          x += double(X[k + size_t(i) * m]) * double(Y[k + size_t(j) * m]);
      }
      col += std::abs(x - (i == j ? z[size_t(i)] : 0.0));
    }
    worst = std::max(worst, col);
  }
  return worst;
}

std::string rel_note(double rel, bool have) {
  if (!have) return "";
  char b[64];
  std::snprintf(b, sizeof b, "graded: max rel eig err %.2g", rel);
  return b;
}

struct Ctx {
  const BenchCase &c;
  int nplus;
  bool grade;
  std::string dev;
  const std::vector<Reference> &ref;
  std::vector<BenchRow> &rows;
};

// The HSVD row: its time, and its accuracy on the sample.
template <class T> void run_hsvd(const Ctx &x, const T *hA, const T *dA) {
  using R = real_t<T>;
  const BenchCase &c = x.c;
  const int m = c.m, n = c.n, batch = c.batch, np = x.nplus;
  BenchRow row;
  row.solver = "bsvd-cuda";
  row.device = x.dev;
  row.c = c;
  DevBuf<R> dS(size_t(batch) * n);
  DevBuf<T> dU(c.vectors ? size_t(batch) * m * n : 0), dV(c.vectors ? size_t(batch) * n * n : 0);
  DevBuf<int> dinfo(batch), dsweeps(batch);
  const std::vector<int> nplus(size_t(batch), np);
  bsvd_options_t o = default_options();
  o.backend = BSVD_BACKEND_CUDA;
  bsvd_status_t st = 0;
  auto body = [&] {
    st = gehsvj_strided_batched<T>(c.vectors ? Job::Vectors : Job::Values, m, n, nplus.data(), dA,
                                   m, (int64_t)m * n, dS.p, n, dU.p, m, (int64_t)m * n, dV.p, n,
                                   (int64_t)n * n, dinfo.p, dsweeps.p, batch, o);
  };
  row.ms = time_events(c.reps, nullptr, body);
  if (st != 0) {
    row.ms = 0;
    row.note = std::string("failed: ") + bsvd_last_error();
    x.rows.push_back(row);
    return;
  }
  const int sample = std::min(c.check_sample, batch);
  std::vector<R> S(size_t(sample) * n);
  std::vector<T> U(c.vectors ? size_t(sample) * m * n : 0),
      V(c.vectors ? size_t(sample) * n * n : 0);
  std::vector<int> info(static_cast<size_t>(batch)), sweeps(static_cast<size_t>(batch));
  BENCH_CUDA(cudaMemcpy(S.data(), dS.p, S.size() * sizeof(R), cudaMemcpyDeviceToHost));
  if (c.vectors) {
    BENCH_CUDA(cudaMemcpy(U.data(), dU.p, U.size() * sizeof(T), cudaMemcpyDeviceToHost));
    BENCH_CUDA(cudaMemcpy(V.data(), dV.p, V.size() * sizeof(T), cudaMemcpyDeviceToHost));
  }
  BENCH_CUDA(cudaMemcpy(info.data(), dinfo.p, info.size() * sizeof(int), cudaMemcpyDeviceToHost));
  BENCH_CUDA(
      cudaMemcpy(sweeps.data(), dsweeps.p, sweeps.size() * sizeof(int), cudaMemcpyDeviceToHost));
  const double nu = n * double(detail::unit_roundoff<R>());
  double rel = 0;
  bool bad = false;
  for (int b = 0; b < batch; ++b) {
    row.max_sweeps = std::max(row.max_sweeps, sweeps[size_t(b)]);
    bad = bad || info[size_t(b)] != 0;
  }
  for (int b = 0; b < sample; ++b) {
    const T *G = hA + size_t(b) * m * n;
    double kappa = 1;
    if (c.vectors) {
      const T *Ub = U.data() + size_t(b) * m * n, *Vb = V.data() + size_t(b) * n * n;
      std::vector<double> sv(static_cast<size_t>(n)), one(static_cast<size_t>(n), 1.0),
          sig(static_cast<size_t>(n));
      testing::reference_singular_values<T>(n, n, Vb, n, sv.data());
      kappa = n > 0 ? sv[0] * sv[0] : 1;
      for (int j = 0; j < n; ++j) sig[size_t(j)] = j < np ? 1.0 : -1.0;
      // V^H J V: J V as a copy with the minus rows negated.
      std::vector<T> JV(Vb, Vb + size_t(n) * n);
      for (int j = 0; j < n; ++j)
        for (int i = np; i < n; ++i) JV[i + size_t(j) * n] = -JV[i + size_t(j) * n];
      const double orth = gram_gap<T>(m, n, Ub, Ub, one);
      const double junit = gram_gap<T>(n, n, Vb, JV.data(), sig) / kappa;
      row.t2 = std::max(row.t2, std::max(orth, junit) / nu);
      double r1 = 0, g1 = 0;
      for (int j = 0; j < n; ++j) {
        double cr = 0, cg = 0;
        for (int i = 0; i < m; ++i) {
          std::conditional_t<is_complex<T>::value, W64, double> y = 0;
          for (int k = 0; k < n; ++k) {
            if constexpr (is_complex<T>::value)
              y += W64(Ub[i + size_t(k) * m]) * double(S[size_t(b) * n + k]) *
                   std::conj(W64(Vb[j + size_t(k) * n]));
            else
              y += double(Ub[i + size_t(k) * m]) * double(S[size_t(b) * n + k]) *
                   double(Vb[j + size_t(k) * n]);
          }
          cr += std::abs(y - decltype(y)(G[i + size_t(j) * m]));
          cg += std::abs(decltype(y)(G[i + size_t(j) * m]));
        }
        r1 = std::max(r1, cr);
        g1 = std::max(g1, cg);
      }
      row.t1 = std::max(row.t1, g1 > 0 ? r1 / (g1 * kappa * nu) : 0.0);
    }
    const Reference &rf = x.ref[size_t(b)];
    const std::vector<double> l = signed_squares<T>(S.data() + size_t(b) * n, m, n, np);
    double a = 0, dummy = 0;
    eig_errors(l, rf.lambda, rf.g2 * kappa * nu, a, dummy);
    row.t3 = std::max(row.t3, a);
    if (!rf.fine.empty()) eig_errors(l, rf.fine, 1, dummy, rel);
  }
  row.pass = !bad && row.t1 < 30 && row.t2 < 30 && row.t3 < 30;
  row.note = rel_note(rel, x.grade && !x.ref.empty() && !x.ref[0].fine.empty());
  if (bad) row.note += (row.note.empty() ? "" : "; ") + std::string("info != 0");
  x.rows.push_back(row);
}

// The eigensolver rows on H formed from the device G.
template <class T>
void run_eig(const Ctx &x, const T *dA, cusolverDnHandle_t h, cublasHandle_t bh, int kind) {
  using C = typename Ev<T>::C;
  using R = real_t<T>;
  const BenchCase &c = x.c;
  const int m = c.m, n = c.n, np = x.nplus;
  BenchRow row;
  row.solver = kind == 0   ? "cusolver-syevjBatched"
               : kind == 1 ? "cusolver-XsyevBatched"
                           : "cusolver-syevd-loop";
  row.device = x.dev;
  row.c = c;
  if (kind == 0 && m > 32) {
    row.note = "skipped: syevjBatched needs m <= 32";
    x.rows.push_back(row);
    return;
  }
  const int count = kind == 2 ? loop_subset(c) : c.batch;
  const cusolverEigMode_t jz = c.vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  DevBuf<T> dH(size_t(count) * m * m);
  DevBuf<R> dW(size_t(count) * m);
  DevBuf<int> dinfo(count);
  std::function<void()> solve;
  syevjInfo_t jp = nullptr;
  cusolverDnParams_t xp = nullptr;
  std::vector<unsigned char> host_ws;
  int lw = 0;
  size_t dev_bytes = 0, host_bytes = 0;
  if (kind == 0) {
    BENCH_SOLVER(cusolverDnCreateSyevjInfo(&jp));
    BENCH_SOLVER(Ev<T>::jb_size(h, jz, m, (const C *)dH.p, dW.p, &lw, jp, count));
  } else if (kind == 1) {
    BENCH_SOLVER(cusolverDnCreateParams(&xp));
    BENCH_SOLVER(cusolverDnXsyevBatched_bufferSize(h, xp, jz, CUBLAS_FILL_MODE_LOWER, m,
                                                   cuda_type<T>(), dH.p, m, real_type<T>(), dW.p,
                                                   cuda_type<T>(), &dev_bytes, &host_bytes, count));
    host_ws.resize(std::max<size_t>(host_bytes, 1));
  } else {
    BENCH_SOLVER(Ev<T>::d_size(h, jz, m, (const C *)dH.p, dW.p, &lw));
  }
  DevBuf<unsigned char> work(std::max<size_t>(kind == 1 ? dev_bytes : size_t(lw) * sizeof(T), 1));
  auto body = [&] {
    form_h<T>(bh, m, n, np, dA, dH.p, count);
    if (kind == 0)
      BENCH_SOLVER(Ev<T>::jb(h, jz, m, (C *)dH.p, dW.p, (C *)work.p, lw, dinfo.p, jp, count));
    else if (kind == 1)
      BENCH_SOLVER(cusolverDnXsyevBatched(h, xp, jz, CUBLAS_FILL_MODE_LOWER, m, cuda_type<T>(),
                                          dH.p, m, real_type<T>(), dW.p, cuda_type<T>(), work.p,
                                          dev_bytes, host_ws.data(), host_bytes, dinfo.p, count));
    else
      for (int b = 0; b < count; ++b)
        BENCH_SOLVER(Ev<T>::d(h, jz, m, (C *)dH.p + size_t(b) * m * m, dW.p + size_t(b) * m,
                              (C *)work.p, lw, dinfo.p + b));
  };
  if (kind == 2)
    time_loop_subset(row, c, count, nullptr, body);
  else
    row.ms = time_events(c.reps, nullptr, body);
  const int sample = std::min(c.check_sample, count);
  std::vector<R> W(size_t(sample) * m);
  std::vector<T> Q(c.vectors ? size_t(sample) * m * m : 0);
  std::vector<int> info(static_cast<size_t>(count));
  BENCH_CUDA(cudaMemcpy(W.data(), dW.p, W.size() * sizeof(R), cudaMemcpyDeviceToHost));
  if (c.vectors)
    BENCH_CUDA(cudaMemcpy(Q.data(), dH.p, Q.size() * sizeof(T), cudaMemcpyDeviceToHost));
  BENCH_CUDA(cudaMemcpy(info.data(), dinfo.p, info.size() * sizeof(int), cudaMemcpyDeviceToHost));
  const double nu = n * double(detail::unit_roundoff<R>());
  double rel = 0;
  const std::vector<double> one(size_t(m), 1.0);
  for (int b = 0; b < sample; ++b) {
    std::vector<double> l(W.begin() + size_t(b) * m, W.begin() + size_t(b + 1) * m);
    const Reference &rf = x.ref[size_t(b)];
    double a = 0, dummy = 0;
    eig_errors(l, rf.lambda, rf.g2 * nu, a, dummy);
    row.t3 = std::max(row.t3, a);
    if (!rf.fine.empty()) eig_errors(l, rf.fine, 1, dummy, rel);
    if (c.vectors) {
      const T *Qb = Q.data() + size_t(b) * m * m;
      row.t2 = std::max(row.t2, gram_gap<T>(m, m, Qb, Qb, one) / nu);
    }
  }
  const bool bad = std::any_of(info.begin(), info.end(), [](int i) { return i != 0; });
  row.pass = !bad && row.t2 < 30 && row.t3 < 30;
  std::string note = row.note;
  const std::string rn = rel_note(rel, x.grade && !x.ref.empty() && !x.ref[0].fine.empty());
  if (!rn.empty()) note += (note.empty() ? "" : "; ") + rn;
  if (bad) note += (note.empty() ? "" : "; ") + std::string("info != 0");
  row.note = note;
  if (jp) cusolverDnDestroySyevjInfo(jp);
  if (xp) cusolverDnDestroyParams(xp);
  x.rows.push_back(row);
}

// The SVD of the same G (device data): time and T1-T3 as bsvd bench's rows.
template <class T> void run_svd(const Ctx &x, const T *hA, const T *dA) {
  using R = real_t<T>;
  const BenchCase &c = x.c;
  const int m = c.m, n = c.n, batch = c.batch;
  BenchRow row;
  row.solver = "bsvd-cuda-svd";
  row.device = x.dev;
  row.c = c;
  DevBuf<R> dS(size_t(batch) * n);
  DevBuf<T> dU(c.vectors ? size_t(batch) * m * n : 0), dV(c.vectors ? size_t(batch) * n * n : 0);
  DevBuf<int> dinfo(batch);
  bsvd_options_t o = default_options();
  o.backend = BSVD_BACKEND_CUDA;
  auto body = [&] {
    gesvj_strided_batched<T>(c.vectors ? Job::Vectors : Job::Values, m, n, dA, m, (int64_t)m * n,
                             dS.p, n, dU.p, m, (int64_t)m * n, dV.p, n, (int64_t)n * n, dinfo.p,
                             nullptr, batch, o);
  };
  row.ms = time_events(c.reps, nullptr, body);
  fetch_and_check<T>(row, c, hA, dS, dU, size_t(m) * n, m, dV, size_t(n) * n, n,
                     std::min(c.check_sample, batch));
  x.rows.push_back(row);
}

template <class T>
bool bench_hsvd_t(const BenchCase &c, std::vector<T> A, std::vector<BenchRow> &rows) {
  BenchRow fail;
  fail.solver = "bsvd-cuda";
  fail.c = c;
  if (c.m < c.n) {
    fail.note = "skipped: the hyperbolic SVD needs m >= n";
    rows.push_back(fail);
    return true;
  }
  const int m = c.m, n = c.n, np = n / 2;
  const bool grade = c.hsvd_grade > 0;
  if (grade)
    for (int b = 0; b < c.batch; ++b)
      for (int j = 0; j < n; ++j) {
        const double d = std::pow(10.0, -c.hsvd_grade * j / std::max(n - 1, 1));
        for (int i = 0; i < m; ++i) {
          T &a = A[size_t(b) * m * n + i + size_t(j) * m];
          a = a * real_t<T>(d);
        }
      }
  try {
    cudaDeviceProp prop{};
    BENCH_CUDA(cudaGetDeviceProperties(&prop, 0));
    std::vector<Reference> ref;
    for (int b = 0; b < std::min(c.check_sample, c.batch); ++b)
      ref.push_back(reference<T>(A.data() + size_t(b) * m * n, m, n, np, grade));
    const Ctx x{c, np, grade, prop.name, ref, rows};
    DevBuf<T> dA(A.size());
    BENCH_CUDA(cudaMemcpy(dA.p, A.data(), A.size() * sizeof(T), cudaMemcpyHostToDevice));
    run_hsvd<T>(x, A.data(), dA.p);
    run_svd<T>(x, A.data(), dA.p);
    cusolverDnHandle_t h = nullptr;
    cublasHandle_t bh = nullptr;
    BENCH_SOLVER(cusolverDnCreate(&h));
    BENCH_BLAS(cublasCreate(&bh));
    for (int kind = 0; kind < 3; ++kind) {
      try {
        run_eig<T>(x, dA.p, h, bh, kind);
      } catch (const CudaFail &f) {
        BenchRow r;
        r.solver = kind == 0   ? "cusolver-syevjBatched"
                   : kind == 1 ? "cusolver-XsyevBatched"
                               : "cusolver-syevd-loop";
        r.device = prop.name;
        r.c = c;
        r.note = "failed: " + f.what;
        rows.push_back(r);
      }
    }
    cublasDestroy(bh);
    cusolverDnDestroy(h);
  } catch (const CudaFail &f) {
    fail.note = "failed: " + f.what;
    rows.push_back(fail);
    return false;
  }
  return true;
}

} // namespace

bool bench_gpu_hsvd(const BenchCase &c, const void *A, std::vector<BenchRow> &rows) {
  const size_t count = size_t(c.batch) * c.m * c.n;
  auto go = [&](auto tag) {
    using T = decltype(tag);
    const T *p = static_cast<const T *>(A);
    return bench_hsvd_t<T>(c, std::vector<T>(p, p + count), rows);
  };
  switch (c.precision) {
  case 's': return go(float());
  case 'd': return go(double());
  case 'c': return go(std::complex<float>());
  default: return go(std::complex<double>());
  }
}

} // namespace bsvd::cli
