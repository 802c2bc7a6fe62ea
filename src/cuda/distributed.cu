// One large matrix across GPUs: the GPU engine of the distributed solve
// (core/distributed.hpp; docs/multi-gpu.md, "One large matrix").
//
// One host thread drives every device. Each device has a stream, two
// halves of G (A: the step's blocks, updated in place; B: the inner solve's
// Û, then the next step's blocks, after which the halves swap) and of V
// (A: the step's, B: the update's result), the inner solve's V̂, S, info
// and sweeps, the pairs' rotations Q and its own workspace (so the inner
// call, on one of two sets of pointers, replays a kept CUDA graph). A step enqueues on every stream, without waiting on the
// host: the inner solve of the k pairs (cuda_gesvj, Exec::kAsync; its Û
// goes to the B half of G), the rotations (a kernel: identity, unsorted or
// as it is; the rotated pairs counted into a device counter), a rotated
// pair's new columns Û Σ into the A half (a kernel), V's update (cuBLAS).
// The exchange orders the streams with events: a device waits for the
// updates of the devices it receives from, copies their G blocks into its
// B half (within the device, or peer to peer), and the halves swap; a
// device's next step waits for the copies that read its results. The host
// waits once a sweep, for the count.
#include "../core/backends.hpp"
#include "../core/distributed.hpp"
#include "common/gemm.hpp"
#include "common/handles.hpp"
#include "common/ws_layout.hpp"

#include <algorithm>
#include <complex>
#include <cstdint>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime.h>

namespace bsvd::detail {
namespace {

// A CUDA error as an exception, caught at the entry point.
struct CudaFailure : std::runtime_error {
  bsvd_status_t status;
  CudaFailure(const std::string &what, bsvd_status_t s) : std::runtime_error(what), status(s) {}
};
void ok(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return;
  cudaGetLastError();
  throw CudaFailure(std::string(what) + ": " + cudaGetErrorString(e),
                    e == cudaErrorMemoryAllocation ? BSVD_STATUS_ALLOC_FAILED
                                                   : BSVD_STATUS_DEVICE_ERROR);
}
void ok(cublasStatus_t s, const char *what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw CudaFailure(std::string(what) + ": cuBLAS status " + std::to_string(int(s)),
                      BSVD_STATUS_DEVICE_ERROR);
}

// Q of each pair from its V̂ (dist::pair_rotation, the twin), one block
// per pair; the rotated pairs added to *total. C = 2 for complex: (re, im).
template <class R, int C> __global__ void rotation_kernel(int pw, const int *info,
                                                          const int *sweeps, const R *Vhat, R *Q,
                                                          int *to, unsigned long long *total) {
  extern __shared__ int row[]; // pw rows, then pw "seen" flags
  int *seen = row + pw;
  __shared__ int perm;
  const int q = blockIdx.x;
  const int64_t pp = int64_t(pw) * pw;
  const R *v = Vhat + q * pp * C;
  R *out = Q + q * pp * C;
  const bool rotated = dist::pair_rotated(info[q], sweeps[q]) != 0;
  if (threadIdx.x == 0) {
    perm = 1;
    if (rotated) atomicAdd(total, 1ull);
  }
  for (int j = threadIdx.x; j < pw; j += blockDim.x) seen[j] = 0;
  __syncthreads();
  if (!rotated) {
    for (int64_t e = threadIdx.x; e < pp; e += blockDim.x) {
      out[e * C] = (e % pw) == (e / pw) ? R(1) : R(0);
      if (C == 2) out[e * C + 1] = R(0);
    }
    for (int j = threadIdx.x; j < pw; j += blockDim.x) to[q * pw + j] = j;
    return;
  }
  for (int j = threadIdx.x; j < pw; j += blockDim.x) {
    const R *vj = v + int64_t(j) * pw * C;
    int r = 0;
    R best = R(-1);
    for (int i = 0; i < pw; ++i) {
      const R a = C == 2 ? hypot(vj[i * C], vj[i * C + 1]) : fabs(vj[i]);
      if (a > best) {
        best = a;
        r = i;
      }
    }
    row[j] = r;
    if (atomicAdd(&seen[r], 1) != 0) perm = 0;
  }
  __syncthreads();
  for (int j = threadIdx.x; j < pw; j += blockDim.x) to[q * pw + j] = perm ? row[j] : j;
  for (int j = 0; j < pw; ++j) {
    const int64_t dst = int64_t(perm ? row[j] : j) * pw * C, from = int64_t(j) * pw * C;
    for (int i = threadIdx.x; i < pw * C; i += blockDim.x) out[dst + i] = v[from + i];
  }
}

// A rotated pair's new columns: G's column to[j] = Û's column j (in the B
// half) times kept_value(sigma_j); block (j, pair).
template <class R, int C> __global__ void take_columns(int64_t mw, int pw, const int *info,
                                                       const int *sweeps, const int *to, const R *S,
                                                       const R *U, R *G) {
  const int j = blockIdx.x, q = blockIdx.y;
  if (!dist::pair_rotated(info[q], sweeps[q])) return;
  const int64_t c = int64_t(q) * pw;
  const R s = dist::kept_value(S[c + j], S[c], pw);
  const R *u = U + (c + j) * mw * C;
  R *g = G + (c + to[c + j]) * mw * C;
  for (int64_t i = threadIdx.x; i < mw * C; i += blockDim.x) g[i] = u[i] * s;
}

// V's step-0 columns: column c of the device's buffer is column
// first[c / w] + c % w of the identity (np rows; V zeroed before).
template <class R, int C>
__global__ void identity_kernel(int cols, int w, int64_t np, const int *first, R *V) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c < cols) V[(int64_t(first[c / w]) + c % w + int64_t(c) * np) * C] = R(1);
}

template <class T> class CudaEngine {
  using R = real_of_t<T>;
  static constexpr int C = sizeof(T) / sizeof(R);

public:
  CudaEngine(const dist::Layout &L, bool vectors, const Config &inner)
      : L_(L), vec_(vectors), inner_(inner) {
    inner_.exec = Exec::kAsync;
  }

  // Streams, events and buffers on each device (the destructor releases
  // what was made before a failure).
  void init(const std::vector<int> &ids) {
    dev_.resize(ids.size());
    enable_peers(ids);
    const dist::Layout &L = L_;
    const int64_t mw = L.mw, np = L.padded(), cols = L.device_cols(), pw = L.pair_cols();
    const int64_t pp = pw * pw;
    for (size_t i = 0; i < dev_.size(); ++i) {
      Dev &d = dev_[i];
      d.id = ids[i];
      on(d);
      ok(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking), "cudaStreamCreate");
      ok(cudaEventCreateWithFlags(&d.updated, cudaEventDisableTiming), "cudaEventCreate");
      ok(cudaEventCreateWithFlags(&d.copied, cudaEventDisableTiming), "cudaEventCreate");
      ok(cudaMallocHost(&d.host_count, sizeof(unsigned long long)), "cudaMallocHost");
      // One allocation: GA GB (VA VB) Vx Q Sx info sweeps to count first.
      cuda::WsCursor c;
      const size_t oGA = c.take(sizeof(T) * mw * cols), oGB = c.take(sizeof(T) * mw * cols);
      const size_t oVA = vec_ ? c.take(sizeof(T) * np * cols) : 0;
      const size_t oVB = vec_ ? c.take(sizeof(T) * np * cols) : 0;
      const size_t oVx = c.take(sizeof(T) * pp * L.pairs), oQ = c.take(sizeof(T) * pp * L.pairs);
      const size_t oSx = c.take(sizeof(R) * pw * L.pairs), oInfo = c.take(sizeof(int) * L.pairs);
      const size_t oSweeps = c.take(sizeof(int) * L.pairs);
      const size_t oTo = c.take(sizeof(int) * size_t(pw) * L.pairs);
      const size_t oCount = c.take(sizeof(unsigned long long));
      const size_t oFirst = c.take(sizeof(int) * 2 * L.pairs);
      char *base = nullptr;
      ok(cudaMalloc(&base, c.used), "cudaMalloc of the distributed solve's buffers");
      d.base = base;
      d.GA = reinterpret_cast<T *>(base + oGA);
      d.GB = reinterpret_cast<T *>(base + oGB);
      d.VA = vec_ ? reinterpret_cast<T *>(base + oVA) : nullptr;
      d.VB = vec_ ? reinterpret_cast<T *>(base + oVB) : nullptr;
      d.Vx = reinterpret_cast<T *>(base + oVx);
      d.Q = reinterpret_cast<T *>(base + oQ);
      d.sweeps = reinterpret_cast<int *>(base + oSweeps);
      d.to = reinterpret_cast<int *>(base + oTo);
      d.Sx = reinterpret_cast<R *>(base + oSx);
      d.info = reinterpret_cast<int *>(base + oInfo);
      d.count = reinterpret_cast<unsigned long long *>(base + oCount);
      d.first = reinterpret_cast<int *>(base + oFirst);
      // The inner solve's own workspace: with it the call's key repeats
      // (two sets of pointers, as G's halves swap), so it replays a kept
      // graph (docs/design/async.md).
      d.ws_bytes = cuda_workspace_bytes(pair_batch(d), inner_);
      if (d.ws_bytes)
        ok(cudaMalloc(&d.ws, d.ws_bytes), "cudaMalloc of the inner solve's workspace");
      ok(cudaMemsetAsync(d.count, 0, sizeof(unsigned long long), d.stream), "cudaMemsetAsync");
    }
  }

  ~CudaEngine() {
    for (Dev &d : dev_) {
      if (d.id < 0) continue;
      cudaSetDevice(d.id);
      if (d.stream) cudaStreamSynchronize(d.stream);
      cudaFree(d.base);
      cudaFree(d.ws);
      cudaFreeHost(d.host_count);
      if (d.updated) cudaEventDestroy(d.updated);
      if (d.copied) cudaEventDestroy(d.copied);
      if (d.stream) cudaStreamDestroy(d.stream);
    }
    cudaGetLastError();
  }
  CudaEngine(const CudaEngine &) = delete;
  CudaEngine &operator=(const CudaEngine &) = delete;

  void load(const T *W, int64_t ldw) {
    const int w = L_.width;
    const int64_t mw = L_.mw, np = L_.padded(), cols = L_.device_cols();
    std::vector<std::vector<int>> first(dev_.size(), std::vector<int>(size_t(2 * L_.pairs)));
    for (Dev &d : dev_) {
      on(d);
      ok(cudaMemsetAsync(d.GA, 0, sizeof(T) * mw * cols, d.stream), "cudaMemsetAsync");
      if (vec_) ok(cudaMemsetAsync(d.VA, 0, sizeof(T) * np * cols, d.stream), "cudaMemsetAsync");
    }
    for (int blk = 0; blk < L_.blocks(); ++blk) {
      const dist::Place p = dist::place_of(L_, 0, blk);
      Dev &d = dev_[size_t(p.device)];
      first[size_t(p.device)][size_t(p.col / w)] = blk * w;
      const int real = std::min(w, L_.nw - blk * w);
      if (real <= 0) continue;
      on(d);
      ok(cudaMemcpy2DAsync(d.GA + int64_t(p.col) * mw, sizeof(T) * mw, W + int64_t(blk) * w * ldw,
                           sizeof(T) * ldw, sizeof(T) * mw, size_t(real), cudaMemcpyHostToDevice,
                           d.stream),
         "copying the matrix to a device");
    }
    if (!vec_) return;
    for (size_t i = 0; i < dev_.size(); ++i) {
      Dev &d = dev_[i];
      on(d);
      ok(cudaMemcpyAsync(d.first, first[i].data(), sizeof(int) * first[i].size(),
                         cudaMemcpyHostToDevice, d.stream),
         "cudaMemcpyAsync");
      identity_kernel<R, C><<<unsigned((cols + 255) / 256), 256, 0, d.stream>>>(
          int(cols), w, np, d.first, reinterpret_cast<R *>(d.VA));
      ok(cudaGetLastError(), "the identity kernel");
      // (first[] is a host vector freed on return: wait for the copy)
      ok(cudaStreamSynchronize(d.stream), "cudaStreamSynchronize");
    }
  }

  void rotate() {
    const int pw = L_.pair_cols(), k = L_.pairs;
    const int64_t mw = L_.mw, np = L_.padded(), pp = int64_t(pw) * pw;
    const cudaDataType t = cuda::data_type(precision_of<T>());
    const T one(1), zero(0);
    for (Dev &d : dev_) {
      on(d);
      if (bsvd_status_t s = cuda_gesvj(pair_batch(d), inner_, d.stream, d.ws, d.ws_bytes, nullptr))
        throw CudaFailure(std::string("the inner solve: ") + bsvd_last_error(), s);
      rotation_kernel<R, C><<<unsigned(k), 256, 2 * sizeof(int) * size_t(pw), d.stream>>>(
          pw, d.info, d.sweeps, reinterpret_cast<const R *>(d.Vx), reinterpret_cast<R *>(d.Q), d.to,
          d.count);
      ok(cudaGetLastError(), "the pairs' rotations");
      take_columns<R, C><<<dim3(unsigned(pw), unsigned(k)), 256, 0, d.stream>>>(
          mw, pw, d.info, d.sweeps, d.to, d.Sx, reinterpret_cast<const R *>(d.GB),
          reinterpret_cast<R *>(d.GA));
      ok(cudaGetLastError(), "the pairs' new columns");
      cublasHandle_t h = nullptr;
      if (const cublasStatus_t st = cuda::cublas_handle(&h))
        throw CudaFailure(std::string("cublasCreate returned ") + cuda::cublas_status_name(st),
                          BSVD_STATUS_DEVICE_ERROR);
      ok(cublasSetStream(h, d.stream), "cublasSetStream");
      if (vec_)
        ok(cuda::gemm_strided(h, t, false, int(np), pw, pw, &one, d.VA, int(np), np * pw, d.Q, pw,
                              pp, &zero, d.VB, int(np), np * pw, k),
           "the update of V");
      ok(cudaEventRecord(d.updated, d.stream), "cudaEventRecord");
    }
  }

  void exchange(const std::vector<dist::Move> &moves) {
    const size_t g = dev_.size();
    // reads[s][d]: device d reads device s's results (its A half of G,
    // B half of V) this step.
    std::vector<std::vector<char>> reads(g, std::vector<char>(g, 0));
    for (const dist::Move &m : moves) reads[size_t(m.from.device)][size_t(m.to.device)] = 1;
    const int64_t w = L_.width, mw = L_.mw, np = L_.padded();
    for (size_t di = 0; di < g; ++di) {
      Dev &d = dev_[di];
      on(d);
      for (size_t si = 0; si < g; ++si)
        if (si != di && reads[si][di])
          ok(cudaStreamWaitEvent(d.stream, dev_[si].updated, 0), "wait");
      for (const dist::Move &m : moves) {
        if (size_t(m.to.device) != di) continue;
        const Dev &s = dev_[size_t(m.from.device)];
        copy(d, d.GB + m.to.col * mw, s, s.GA + m.from.col * mw, sizeof(T) * w * mw);
        if (vec_) copy(d, d.VA + m.to.col * np, s, s.VB + m.from.col * np, sizeof(T) * w * np);
      }
      ok(cudaEventRecord(d.copied, d.stream), "cudaEventRecord");
    }
    for (size_t si = 0; si < g; ++si) {
      Dev &s = dev_[si];
      on(s);
      for (size_t di = 0; di < g; ++di)
        if (di != si && reads[si][di])
          ok(cudaStreamWaitEvent(s.stream, dev_[di].copied, 0), "wait");
    }
    for (Dev &d : dev_) std::swap(d.GA, d.GB); // the next step's G
  }

  long rotations() {
    for (Dev &d : dev_) {
      on(d);
      ok(cudaMemcpyAsync(d.host_count, d.count, sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                         d.stream),
         "cudaMemcpyAsync");
      ok(cudaMemsetAsync(d.count, 0, sizeof(unsigned long long), d.stream), "cudaMemsetAsync");
    }
    long sum = 0;
    for (Dev &d : dev_) {
      on(d);
      ok(cudaStreamSynchronize(d.stream), "the outer sweep");
      sum += long(*d.host_count);
    }
    return sum;
  }

  void gather(T *G, int64_t ldg, T *V, int64_t ldv) {
    const int64_t w = L_.width, mw = L_.mw, np = L_.padded();
    for (int blk = 0; blk < L_.blocks(); ++blk) {
      const dist::Place p = dist::place_of(L_, 0, blk);
      Dev &d = dev_[size_t(p.device)];
      on(d);
      ok(cudaMemcpy2DAsync(G + blk * w * ldg, sizeof(T) * ldg, d.GA + p.col * mw, sizeof(T) * mw,
                           sizeof(T) * mw, size_t(w), cudaMemcpyDeviceToHost, d.stream),
         "copying the result to the host");
      if (vec_)
        ok(cudaMemcpy2DAsync(V + blk * w * ldv, sizeof(T) * ldv, d.VA + p.col * np, sizeof(T) * np,
                             sizeof(T) * np, size_t(w), cudaMemcpyDeviceToHost, d.stream),
           "copying the result to the host");
    }
    for (Dev &d : dev_) {
      on(d);
      ok(cudaStreamSynchronize(d.stream), "copying the result to the host");
    }
  }

private:
  struct Dev {
    int id = -1;
    cudaStream_t stream = nullptr;
    cudaEvent_t updated = nullptr, copied = nullptr;
    char *base = nullptr;
    T *GA = nullptr, *GB = nullptr, *VA = nullptr, *VB = nullptr;
    T *Vx = nullptr, *Q = nullptr;
    R *Sx = nullptr;
    int *info = nullptr, *sweeps = nullptr, *to = nullptr, *first = nullptr;
    unsigned long long *count = nullptr, *host_count = nullptr;
    void *ws = nullptr;
    size_t ws_bytes = 0;
  };

  static void on(const Dev &d) { ok(cudaSetDevice(d.id), "cudaSetDevice"); }

  // The device's k pairs as a strided batch (device data): the inner
  // solve of G_p, its U written to G's B half (overwritten by the
  // exchange's copies).
  Batch<T> pair_batch(const Dev &d) const {
    const int pw = L_.pair_cols(), mw = L_.mw;
    const int64_t pp = int64_t(pw) * pw, gp = int64_t(mw) * pw;
    return strided_batch<T>(BSVD_JOB_VECTORS, mw, pw, d.GA, mw, gp, d.Sx, pw, d.GB, mw, gp, d.Vx,
                            pw, pp, d.info, d.sweeps, L_.pairs);
  }

  // bytes from s's buffer to d's, on d's stream.
  static void copy(const Dev &d, T *dst, const Dev &s, const T *src, size_t bytes) {
    if (d.id == s.id)
      ok(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, d.stream), "a block's copy");
    else
      ok(cudaMemcpyPeerAsync(dst, d.id, src, s.id, bytes, d.stream), "a block's peer copy");
  }

  // Peer access between every two devices that have it (once a process).
  static void enable_peers(const std::vector<int> &ids) {
    static std::mutex mu;
    static std::set<std::pair<int, int>> done;
    std::lock_guard<std::mutex> l(mu);
    for (int a : ids)
      for (int b : ids) {
        if (a == b || done.count({a, b})) continue;
        done.insert({a, b});
        int can = 0;
        if (cudaDeviceCanAccessPeer(&can, a, b) != cudaSuccess || !can) continue;
        ok(cudaSetDevice(a), "cudaSetDevice");
        const cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
        if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
          ok(e, "cudaDeviceEnablePeerAccess");
        cudaGetLastError();
      }
  }

  dist::Layout L_;
  bool vec_;
  Config inner_;
  std::vector<Dev> dev_;
};

} // namespace

template <class T> bsvd_status_t cuda_gesvj_distributed(const std::vector<int> &devs,
                                                        const Batch<T> &b, const Config &cfg,
                                                        const dist::Settings &s, int *path) {
  const int current = cuda_current_device();
  dist::Host<T> h;
  if (!dist::prepare(b, h)) // NaN / Inf or zeros: the one-device answer, without a sweep
    return cuda_gesvj_on(devs[0], b, cfg, nullptr, path);
  bsvd_status_t st = BSVD_STATUS_SUCCESS;
  try {
    dist::Settings set = s;
    set.devices = int(devs.size());
    const dist::Layout L = dist::make_layout(h.mw, h.nw, set.devices, set.pair_cols);
    dist::Outcome o;
    const int64_t np = L.padded();
    std::vector<T> G(size_t(h.mw) * size_t(np)), V(b.vectors ? size_t(np * np) : 0);
    {
      CudaEngine<T> e(L, b.vectors, dist::inner_config(cfg, set));
      e.init(devs);
      e.load(h.W, h.ldw);
      o = dist::iterate(e, L, cfg.max_sweeps > 0 ? cfg.max_sweeps : kDefaultMaxSweeps);
      e.gather(G.data(), h.mw, V.data(), np);
    }
    dist::finish(b, L, h, G.data(), b.vectors ? V.data() : nullptr, o);
    if (path) path[0] = BSVD_PATH_CUDA_DEVICES;
  } catch (const CudaFailure &f) {
    set_error("the solve across devices: %s", f.what());
    st = f.status;
  } catch (const std::bad_alloc &) {
    set_error("host allocation failed in the solve across devices");
    st = BSVD_STATUS_ALLOC_FAILED;
  } catch (const std::exception &e) {
    set_error("internal error in the solve across devices: %s", e.what());
    st = BSVD_STATUS_INTERNAL_ERROR;
  }
  if (current >= 0) cudaSetDevice(current);
  return st;
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template bsvd_status_t cuda_gesvj_distributed<T>(const std::vector<int> &, const Batch<T> &,     \
                                                   const Config &, const dist::Settings &, int *);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail
