// Host-resident data on the cuda backend (backend.cu calls in here): the
// GPU's matrices packed into the staging region, copied in, solved, copied
// out and unpacked; a large batch streamed through the GPU in chunks
// (docs/design/flow.md, "Host data in chunks"; decision 0018).
#include "host_data.hpp"

#include "../core/overrides.hpp"
#include "common/side_stream.hpp"
#include "facts.hpp"
#include "host_copy.hpp"

#include <algorithm>
#include <complex>
#include <cstring>
#include <vector>

namespace bsvd::detail::exec {

// ---- host-resident data: pack, copy in, solve, copy out --------------------
// The packed batch of the GPU's matrices: the host copies and the
// device-visible description (kb; hb: the same with host-visible sizes).
template <class T> struct Packed {
  using R = real_of_t<T>;
  bool pinned = false; // page-locked host copies (the streamed chunks)
  cuda::PackTotals<T> tot;
  std::vector<int> fm, fn; // sizes
  std::vector<int> fnplus; // the HSVD's signatures (hb.nplus; kb.nplus is their device copy)
  cuda::HostBytes host; // the host copies:
  T *A = nullptr, *U = nullptr, *V = nullptr;
  R *S = nullptr;
  int *info = nullptr, *sweeps = nullptr;
  T *dA = nullptr, *dU = nullptr, *dV = nullptr;
  R *dS = nullptr;
  int *dinfo = nullptr, *dsweeps = nullptr;
  Batch<T> kb, hb;
};

// Whether the GPU's matrices of a host batch are all of it, of one size, and
// one contiguous block of an operand (ld = rows unless rows is 0, matrix b
// at b x size): then the packed copy is one block copy.
template <class T, class P> bool one_block(const Batch<T> &batch, const CallLayout &L,
                                           const Operand<P> &op, int rows, int64_t size) {
  return L.gpu.size() == size_t(batch.count) && batch.dims.uniform() && !op.array && !op.ldv &&
         size > 0 && (rows == 0 || op.ld == rows) && op.stride == size;
}

// Packs the GPU's matrices (L.gpu) of the caller's host batch and copies
// them, and for a variable-size batch their pointer arrays and sizes, to the
// workspace (on the stream). A uniform batch is packed as a strided one.
template <class T> bsvd_status_t pack_in(const Batch<T> &batch, const CallLayout &L,
                                         unsigned char *ws, Packed<T> &pk, cudaStream_t stream) {
  using R = real_of_t<T>;
  using cuda::ws_align;
  const size_t nf = L.gpu.size();
  pk.tot = cuda::pack_totals(batch, L.gpu);
  pk.fm.resize(nf);
  pk.fn.resize(nf);
  unsigned char *stage = ws + L.off_stage;
  pk.dA = reinterpret_cast<T *>(stage);
  pk.dS = reinterpret_cast<R *>(stage + ws_align(pk.tot.a * sizeof(T)));
  pk.dU = reinterpret_cast<T *>(reinterpret_cast<unsigned char *>(pk.dS) +
                                ws_align(pk.tot.s * sizeof(R)));
  pk.dV = reinterpret_cast<T *>(reinterpret_cast<unsigned char *>(pk.dU) +
                                ws_align(pk.tot.u * sizeof(T)));
  const size_t ba = ws_align(pk.tot.a * sizeof(T)), bu = ws_align(pk.tot.u * sizeof(T)),
               bv = ws_align(pk.tot.v * sizeof(T)), bs = ws_align(pk.tot.s * sizeof(R)),
               bi = ws_align(nf * sizeof(int));
  BSVD_CUDA_TRY(pk.host.reserve(ba + bu + bv + bs + 2 * bi, pk.pinned));
  unsigned char *h = pk.host.data();
  pk.A = reinterpret_cast<T *>(h);
  pk.U = reinterpret_cast<T *>(h + ba);
  pk.V = reinterpret_cast<T *>(h + ba + bu);
  pk.S = reinterpret_cast<R *>(h + ba + bu + bv);
  pk.info = reinterpret_cast<int *>(h + ba + bu + bv + bs);
  pk.sweeps = reinterpret_cast<int *>(h + ba + bu + bv + bs + bi);
  const bool uniform = batch.dims.uniform();
  // Pointer arrays (device addresses) and ld arrays (max(size, 1)): only a
  // variable-size batch needs them.
  unsigned char *arr = ws + L.off_arrays;
  std::vector<unsigned char> host(uniform ? 0 : L.bytes_arrays, 0);
  size_t oa = 0, os = 0, ou = 0, ov = 0;
  for (size_t i = 0; i < nf; ++i) {
    const int b = L.gpu[i];
    pk.fm[i] = batch.dims.rows(b);
    pk.fn[i] = batch.dims.cols(b);
  }
  if (one_block(batch, L, batch.A, batch.dims.m, int64_t(batch.dims.m) * batch.dims.n)) {
    cuda::copy_bytes(pk.A, batch.A.base, pk.tot.a * sizeof(T));
  } else {
    for (size_t i = 0; i < nf; ++i) {
      const int b = L.gpu[i], m = pk.fm[i], n = pk.fn[i];
      const T *src = batch.A.ptr(b);
      const int lda = batch.A.ldm(b);
      if (size_t(m) * n == 0) continue; // (nothing to copy; its A may be NULL)
      if (lda == m)
        std::memcpy(&pk.A[oa], src, size_t(m) * n * sizeof(T));
      else
        for (int j = 0; j < n; ++j)
          std::memcpy(&pk.A[oa + size_t(j) * m], src + size_t(j) * lda, size_t(m) * sizeof(T));
      oa += size_t(m) * n;
    }
  }
  if (!uniform) {
    const T **pA = reinterpret_cast<const T **>(host.data());
    R **pS = reinterpret_cast<R **>(host.data() + nf * sizeof(void *));
    T **pU = reinterpret_cast<T **>(host.data() + 2 * nf * sizeof(void *));
    T **pV = reinterpret_cast<T **>(host.data() + 3 * nf * sizeof(void *));
    int *im = reinterpret_cast<int *>(host.data() + 4 * nf * sizeof(void *));
    int *in = im + nf;
    oa = 0;
    for (size_t i = 0; i < nf; ++i) {
      const cuda::PackSizes z = cuda::pack_sizes(pk.fm[i], pk.fn[i], batch.vectors);
      pA[i] = pk.dA + oa;
      pS[i] = pk.dS + os;
      pU[i] = pk.dU + ou;
      pV[i] = pk.dV + ov;
      im[i] = std::max(pk.fm[i], 1);
      in[i] = std::max(pk.fn[i], 1);
      oa += z.a;
      os += z.s;
      ou += z.u;
      ov += z.v;
    }
    BSVD_CUDA_TRY(
        cudaMemcpyAsync(arr, host.data(), L.bytes_arrays, cudaMemcpyHostToDevice, stream));
  }
  if (pk.tot.a)
    BSVD_CUDA_TRY(
        cudaMemcpyAsync(pk.dA, pk.A, pk.tot.a * sizeof(T), cudaMemcpyHostToDevice, stream));
  int *dm = reinterpret_cast<int *>(arr + 4 * nf * sizeof(void *));
  int *dn = dm + nf;
  pk.dinfo = dn + nf;
  pk.dsweeps = pk.dinfo + nf;
  Batch<T> &kb = pk.kb;
  kb = Batch<T>{};
  kb.vectors = batch.vectors;
  kb.count = int(nf);
  kb.info = pk.dinfo;
  kb.sweeps = pk.dsweeps;
  if (uniform) { // the packed batch, strided: ld = rows (A, U) or n (V)
    const int m = batch.dims.m, n = batch.dims.n, k = std::min(m, n);
    kb.dims.m = m;
    kb.dims.n = n;
    kb.A.base = pk.dA;
    kb.A.stride = int64_t(m) * n;
    kb.A.ld = std::max(m, 1);
    kb.S.base = pk.dS;
    kb.S.stride = k;
    kb.U.base = pk.dU;
    kb.U.stride = batch.vectors ? int64_t(m) * k : 0;
    kb.U.ld = std::max(m, 1);
    kb.V.base = pk.dV;
    kb.V.stride = batch.vectors ? int64_t(n) * k : 0;
    kb.V.ld = std::max(n, 1);
  } else {
    kb.A.array = reinterpret_cast<const T *const *>(arr);
    kb.A.ldv = dm;
    kb.S.array = reinterpret_cast<R *const *>(arr + nf * sizeof(void *));
    kb.U.array = reinterpret_cast<T *const *>(arr + 2 * nf * sizeof(void *));
    kb.U.ldv = dm;
    kb.V.array = reinterpret_cast<T *const *>(arr + 3 * nf * sizeof(void *));
    kb.V.ldv = dn;
    // Exact sizes in a separate upload: an ld of 1 with 0 rows would read as 1 row.
    int *dsz = pk.dsweeps + nf;
    std::vector<int> sz(2 * nf);
    std::copy(pk.fm.begin(), pk.fm.end(), sz.begin());
    std::copy(pk.fn.begin(), pk.fn.end(), sz.begin() + long(nf));
    BSVD_CUDA_TRY(
        cudaMemcpyAsync(dsz, sz.data(), 2 * nf * sizeof(int), cudaMemcpyHostToDevice, stream));
    kb.dims.mv = dsz;
    kb.dims.nv = dsz + nf;
  }
  pk.hb = kb;
  if (!uniform) {
    pk.hb.dims.mv = pk.fm.data();
    pk.hb.dims.nv = pk.fn.data();
  }
  if (batch.nplus) {
    pk.fnplus.resize(nf);
    for (size_t i = 0; i < nf; ++i) pk.fnplus[i] = batch.nplus[L.gpu[i]];
    int *dnplus = reinterpret_cast<int *>(ws + L.off_nplus);
    BSVD_CUDA_TRY(cuda::upload(dnplus, pk.fnplus, stream));
    pk.kb.nplus = dnplus;
    pk.hb.nplus = pk.fnplus.data();
  }
  return BSVD_STATUS_SUCCESS;
}

// Copies the packed results back to the host copies (on the stream).
template <class T> bsvd_status_t copy_out(Packed<T> &pk, cudaStream_t stream) {
  using R = real_of_t<T>;
  const size_t nf = pk.fm.size();
  if (pk.tot.s)
    BSVD_CUDA_TRY(
        cudaMemcpyAsync(pk.S, pk.dS, pk.tot.s * sizeof(R), cudaMemcpyDeviceToHost, stream));
  if (pk.tot.u)
    BSVD_CUDA_TRY(
        cudaMemcpyAsync(pk.U, pk.dU, pk.tot.u * sizeof(T), cudaMemcpyDeviceToHost, stream));
  if (pk.tot.v)
    BSVD_CUDA_TRY(
        cudaMemcpyAsync(pk.V, pk.dV, pk.tot.v * sizeof(T), cudaMemcpyDeviceToHost, stream));
  BSVD_CUDA_TRY(
      cudaMemcpyAsync(pk.info, pk.dinfo, nf * sizeof(int), cudaMemcpyDeviceToHost, stream));
  BSVD_CUDA_TRY(
      cudaMemcpyAsync(pk.sweeps, pk.dsweeps, nf * sizeof(int), cudaMemcpyDeviceToHost, stream));
  return BSVD_STATUS_SUCCESS;
}

// Unpacks the GPU's results into the caller's arrays (after the stream).
template <class T> void unpack(const Batch<T> &batch, const CallLayout &L, const Packed<T> &pk) {
  using R = real_of_t<T>;
  const size_t nf = L.gpu.size();
  const int m0 = batch.dims.m, n0 = batch.dims.n, k0 = std::min(m0, n0);
  const bool bs = one_block(batch, L, batch.S, 0, k0);
  const bool bu = batch.vectors && one_block(batch, L, batch.U, m0, int64_t(m0) * k0);
  const bool bv = batch.vectors && one_block(batch, L, batch.V, n0, int64_t(n0) * k0);
  if (bs) cuda::copy_bytes(batch.S.base, pk.S, pk.tot.s * sizeof(R));
  if (bu) cuda::copy_bytes(batch.U.base, pk.U, pk.tot.u * sizeof(T));
  if (bv) cuda::copy_bytes(batch.V.base, pk.V, pk.tot.v * sizeof(T));
  size_t os = 0, ou = 0, ov = 0;
  for (size_t i = 0; i < nf; ++i) {
    const int b = L.gpu[i];
    const int m = pk.fm[i], n = pk.fn[i], k = std::min(m, n);
    const cuda::PackSizes s = cuda::pack_sizes(m, n, batch.vectors);
    if (k > 0 && !bs) std::memcpy(batch.S.ptr(b), &pk.S[os], size_t(k) * sizeof(R));
    if (batch.vectors && k > 0) {
      T *U = batch.U.ptr(b);
      T *V = batch.V.ptr(b);
      const int ldu = batch.U.ldm(b), ldv = batch.V.ldm(b);
      for (int j = 0; j < k; ++j) {
        if (!bu) std::memcpy(U + size_t(j) * ldu, &pk.U[ou + size_t(j) * m], size_t(m) * sizeof(T));
        if (!bv) std::memcpy(V + size_t(j) * ldv, &pk.V[ov + size_t(j) * n], size_t(n) * sizeof(T));
      }
    }
    batch.info[b] = pk.info[i];
    if (batch.sweeps) batch.sweeps[b] = pk.sweeps[i];
    os += s.s;
    ou += s.u;
    ov += s.v;
  }
}

// The CPU group's matrices of a host batch (if any), solved in the
// caller's memory (h: their sub-batch, its paths).
template <class T> bsvd_status_t solve_host_cpu_group(const Batch<T> &batch, const plan::Plan &p,
                                                      cuda::HostSubBatch<T> &h) {
  const Group *cg = cpu_group(p);
  if (!cg) return BSVD_STATUS_SUCCESS;
  for (int b : cg->index) {
    h.A.push_back(batch.A.ptr(b));
    h.S.push_back(batch.S.ptr(b));
    h.U.push_back(batch.vectors ? batch.U.ptr(b) : nullptr);
    h.V.push_back(batch.vectors ? batch.V.ptr(b) : nullptr);
    h.m.push_back(batch.dims.rows(b));
    h.n.push_back(batch.dims.cols(b));
    h.lda.push_back(batch.A.ldm(b));
    h.ldu.push_back(batch.vectors ? batch.U.ldm(b) : 1);
    h.ldv.push_back(batch.vectors ? batch.V.ldm(b) : 1);
    if (batch.nplus) h.nplus.push_back(batch.nplus[b]);
  }
  h.describe(batch.vectors);
  BSVD_TRY_STATUS(cuda::solve_on_cpu(h.batch, p.cfg, h.path.data()));
  for (size_t i = 0; i < cg->index.size(); ++i) {
    const int b = cg->index[i];
    batch.info[b] = h.info[i];
    if (batch.sweeps) batch.sweeps[b] = h.sweeps[i];
  }
  return BSVD_STATUS_SUCCESS;
}

template <class T> bsvd_status_t run_host_data(const Batch<T> &batch, const plan::Plan &p,
                                               const CallLayout &L, cudaStream_t stream,
                                               unsigned char *ws, int *path) {
  Packed<T> pk;
  if (L.ngpu > 0) {
    BSVD_TRY_STATUS(pack_in(batch, L, ws, pk, stream));
    BSVD_TRY_STATUS(run_groups(p, L, pk.kb, pk.hb, ws, stream));
    BSVD_TRY_STATUS(copy_out(pk, stream));
  }
  // The CPU part works directly on the caller's host memory meanwhile.
  cuda::HostSubBatch<T> h;
  if (const bsvd_status_t st = solve_host_cpu_group(batch, p, h)) {
    cudaStreamSynchronize(stream);
    return st;
  }
  BSVD_CUDA_TRY(cudaStreamSynchronize(stream));
  unpack(batch, L, pk);
  if (path)
    report_paths(
        p, [&](int b) { return batch.info[b]; }, h.path, path);
  return BSVD_STATUS_SUCCESS;
}

// ---- host-resident data in chunks -------------------------------------------
// A large host batch streams through the GPU in chunks of consecutive
// matrices on two streams: while one chunk is copied in, solved and copied
// out on its slot's stream, the host packs the next one into the other
// slot's page-locked copy, and a slot's results are unpacked when it comes
// round again. Each chunk is a call of its own (plan, layout, workspace).
// The chunks: at least 64 MiB of A (PCIe moves that in ~2.5 ms, long
// against a copy's start) and 128 matrices (fewer leave the blocked path's
// GPU half-used). Measured on the H100 with vectors, host data, against
// the batch copied at once: d 4000 x 256^2 2.21 s in chunks of 512
// matrices against 4.64 s, d 1000 x 512^2 3.42 s in chunks of 128 against
// 6.63 s; 2048-matrix chunks at 64^2 and 64 MiB ones at 16^2 stream as
// fast as the link. A compute-bound batch of fewer, larger matrices loses
// a little (d 1000 x 256^2 values: 0.374 s in chunks of 125 against 0.340
// s at once). BSVD_HOST_CHUNK sets the bytes alone (0: never streamed).
// Decision 0018 (docs/design/decisions/).
namespace {

struct ChunkRule {
  size_t bytes = size_t(64) << 20;
  int matrices = 128;
};
ChunkRule chunk_rule() {
  const long o = current_overrides().host_chunk;
  return o < 0 ? ChunkRule{} : ChunkRule{size_t(o), 1};
}

template <class T> size_t a_bytes(const Batch<T> &batch, int b) {
  return size_t(batch.dims.rows(b)) * size_t(batch.dims.cols(b)) * sizeof(T);
}

// The first matrix of each chunk, and batch.count last.
template <class T> std::vector<int> chunk_starts(const Batch<T> &batch, const ChunkRule &r) {
  std::vector<int> starts{0};
  size_t acc = 0;
  for (int b = 0; b < batch.count; ++b) {
    acc += a_bytes(batch, b);
    if (acc >= r.bytes && b + 1 - starts.back() >= r.matrices && b + 1 < batch.count) {
      starts.push_back(b + 1);
      acc = 0;
    }
  }
  starts.push_back(batch.count);
  return starts;
}

// Whether a blocking call on host data streams: more than two chunks, and
// no workspace of the caller's (sized for the call at once, so used so).
template <class T> bool streams(const Batch<T> &batch, const void *workspace, const ChunkRule &r) {
  if (workspace || r.bytes == 0 || batch.count < 3 * r.matrices) return false;
  if (batch.dims.uniform()) return size_t(batch.count) * a_bytes(batch, 0) > 2 * r.bytes;
  size_t total = 0;
  for (int b = 0; b < batch.count && total <= 2 * r.bytes; ++b) total += a_bytes(batch, b);
  return total > 2 * r.bytes;
}

template <class T> struct Slot {
  cudaStream_t stream = nullptr;
  int first = 0;
  bool busy = false;
  Batch<T> sub;
  plan::Plan p;
  CallLayout L;
  Packed<T> pk;
  cuda::HostSubBatch<T> cpu;
  DeviceBuffer ws;
  size_t ws_bytes = 0;
};

} // namespace

template <class T> bool host_streams(const Batch<T> &batch, const void *workspace) {
  return streams(batch, workspace, chunk_rule());
}

template <class T> bsvd_status_t run_host_streamed(const Batch<T> &batch, const Config &cfg,
                                                   cudaStream_t stream, int *path) {
  const std::vector<int> starts = chunk_starts(batch, chunk_rule());
  cuda::PooledStream side;
  BSVD_CUDA_TRY(cuda::SideStreamPool::acquire(side));
  struct Release {
    cuda::PooledStream &s;
    ~Release() { cuda::SideStreamPool::release(s); }
  } release{side};
  // The side slot starts after the caller's earlier work, as the call would.
  BSVD_CUDA_TRY(cudaEventRecord(side.event, stream));
  BSVD_CUDA_TRY(cudaStreamWaitEvent(side.stream, side.event, 0));
  Slot<T> slots[2];
  slots[0].stream = stream;
  slots[1].stream = side.stream;
  auto finish = [&](Slot<T> &s) -> bsvd_status_t {
    if (!s.busy) return BSVD_STATUS_SUCCESS;
    s.busy = false;
    BSVD_CUDA_TRY(cudaStreamSynchronize(s.stream));
    if (s.L.ngpu > 0) unpack(s.sub, s.L, s.pk);
    if (path)
      report_paths(
          s.p, [&](int b) { return s.sub.info[b]; }, s.cpu.path, path + s.first);
    return BSVD_STATUS_SUCCESS;
  };
  for (size_t c = 0; c + 1 < starts.size(); ++c) {
    Slot<T> &s = slots[c % 2];
    BSVD_TRY_STATUS(finish(s));
    s.first = starts[c];
    s.sub = slice(batch, s.first, starts[c + 1] - starts[c]);
    s.p = cuda::call_plan(plan::shapes_of(s.sub), cfg);
    s.L = call_layout(s.p, s.sub, 0);
    if (s.L.total > s.ws_bytes) {
      if (s.ws.ptr) BSVD_CUDA_TRY(cudaFreeAsync(s.ws.ptr, s.stream));
      s.ws.ptr = nullptr;
      BSVD_CUDA_TRY(cudaMallocAsync(&s.ws.ptr, s.L.total, s.stream));
      s.ws.stream = s.stream;
      s.ws_bytes = s.L.total;
    }
    unsigned char *ws = static_cast<unsigned char *>(s.ws.ptr);
    s.pk.pinned = true;
    s.busy = true;
    if (s.L.ngpu > 0) {
      BSVD_TRY_STATUS(pack_in(s.sub, s.L, ws, s.pk, s.stream));
      BSVD_TRY_STATUS(run_groups(s.p, s.L, s.pk.kb, s.pk.hb, ws, s.stream));
      BSVD_TRY_STATUS(copy_out(s.pk, s.stream));
    }
    s.cpu = cuda::HostSubBatch<T>{};
    BSVD_TRY_STATUS(solve_host_cpu_group(s.sub, s.p, s.cpu));
  }
  BSVD_TRY_STATUS(finish(slots[(starts.size() - 1) % 2])); // the older chunk first
  BSVD_TRY_STATUS(finish(slots[starts.size() % 2]));
  return BSVD_STATUS_SUCCESS;
}

#define BSVD_INSTANTIATE(T)                                                                        \
  template bsvd_status_t run_host_data<T>(const Batch<T> &, const plan::Plan &,                    \
                                          const CallLayout &, cudaStream_t, unsigned char *,       \
                                          int *);                                                  \
  template bool host_streams<T>(const Batch<T> &, const void *);                                   \
  template bsvd_status_t run_host_streamed<T>(const Batch<T> &, const Config &, cudaStream_t,      \
                                              int *);
BSVD_INSTANTIATE(float)
BSVD_INSTANTIATE(double)
BSVD_INSTANTIATE(std::complex<float>)
BSVD_INSTANTIATE(std::complex<double>)
#undef BSVD_INSTANTIATE

} // namespace bsvd::detail::exec
