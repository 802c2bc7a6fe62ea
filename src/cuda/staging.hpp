// Moving a call's data between the caller and the GPU paths (backend.cu):
// the device-visible description of device-resident data, the packing of
// host-resident data into one staging region and back, and the host
// sub-batch that the CPU solves (the matrices no GPU path takes).
#pragma once

#include "../core/backends.hpp"
#include "common/upload.hpp"
#include "common/ws_layout.hpp"
#include "operation.hpp"

#include <algorithm>
#include <cstring>
#include <thread>
#include <type_traits>
#include <vector>

#include <cuda_runtime.h>

namespace bsvd::detail::cuda {

template <class T> bool batch_has_arrays(const Batch<T> &b) {
  return b.A.array || b.S.array || b.U.array || b.V.array || b.A.ldv || b.U.ldv || b.V.ldv ||
         b.dims.mv || b.dims.nv;
}

// Bytes of the device copy of a device-resident batch's pointer and size
// arrays (A, S, U, V pointers; lda, ldu, ldv, m, n).
inline size_t device_arrays_bytes(int count) {
  return ws_align(size_t(count) * (4 * sizeof(void *) + 5 * sizeof(int)));
}

// kb = batch with its pointer and size arrays copied to d (the caller's
// arrays are host memory; the kernels read them on the device).
template <class T> bsvd_status_t upload_arrays(const Batch<T> &batch, unsigned char *d,
                                               size_t bytes, Batch<T> &kb, cudaStream_t stream) {
  const int cnt = batch.count;
  std::vector<unsigned char> host(bytes, 0);
  size_t o = 0;
  auto put_ptrs = [&](auto const &op, auto &dst_array) {
    using P = std::remove_const_t<std::remove_pointer_t<std::decay_t<decltype(dst_array)>>>;
    P *hp = reinterpret_cast<P *>(host.data() + o);
    for (int b = 0; b < cnt; ++b) hp[b] = op.ptr(b);
    dst_array = reinterpret_cast<P *>(d + o);
    o += size_t(cnt) * sizeof(void *);
  };
  put_ptrs(batch.A, kb.A.array);
  put_ptrs(batch.S, kb.S.array);
  if (batch.vectors) {
    put_ptrs(batch.U, kb.U.array);
    put_ptrs(batch.V, kb.V.array);
  } else {
    o += 2 * size_t(cnt) * sizeof(void *);
  }
  auto put_ints = [&](const int *src, const int *&dst) {
    if (src) {
      std::memcpy(host.data() + o, src, size_t(cnt) * sizeof(int));
      dst = reinterpret_cast<const int *>(d + o);
    }
    o += size_t(cnt) * sizeof(int);
  };
  put_ints(batch.A.ldv, kb.A.ldv);
  put_ints(batch.U.ldv, kb.U.ldv);
  put_ints(batch.V.ldv, kb.V.ldv);
  put_ints(batch.dims.mv, kb.dims.mv);
  put_ints(batch.dims.nv, kb.dims.nv);
  BSVD_CUDA_TRY(upload_bytes(d, host.data(), o, stream));
  return BSVD_STATUS_SUCCESS;
}

// ---- host-resident data: the packed batch of the GPU's matrices -----------
// Elements of matrix (m, n) in the packed staging region.
struct PackSizes {
  size_t a, s, u, v;
};
inline PackSizes pack_sizes(int m, int n, bool vectors) {
  const size_t k = size_t(std::min(m, n));
  return {size_t(m) * n, k, vectors ? size_t(m) * k : 0, vectors ? size_t(n) * k : 0};
}
// The packed batch: pointer arrays, sizes, info and sweeps (the array
// region), then the A, S, U, V element regions (the staging region).
inline size_t packed_arrays_bytes(size_t nf) {
  return ws_align(nf * (4 * sizeof(void *) + 6 * sizeof(int)));
}
template <class T> struct PackTotals {
  size_t a = 0, s = 0, u = 0, v = 0;
  size_t stage_bytes() const {
    using R = real_of_t<T>;
    return ws_align(a * sizeof(T)) + ws_align(s * sizeof(R)) + ws_align(u * sizeof(T)) +
           ws_align(v * sizeof(T));
  }
};
template <class T> PackTotals<T> pack_totals(const Batch<T> &batch, const std::vector<int> &gpu) {
  PackTotals<T> t;
  auto add = [&](int m, int n, size_t mult) {
    const PackSizes s = pack_sizes(m, n, batch.vectors);
    t.a += s.a * mult;
    t.s += s.s * mult;
    t.u += s.u * mult;
    t.v += s.v * mult;
  };
  if (batch.dims.uniform())
    add(batch.dims.m, batch.dims.n, gpu.size());
  else
    for (int b : gpu) add(batch.dims.rows(b), batch.dims.cols(b), 1);
  return t;
}

// ---- the CPU's matrices ---------------------------------------------------
inline int cpu_threads(const Config &cfg) {
  if (cfg.num_threads > 0) return cfg.num_threads;
  const unsigned h = std::thread::hardware_concurrency();
  return h ? int(h) : 1;
}

// Solves the host batch hb (pointers in host memory) on the CPU.
template <class T> bsvd_status_t solve_on_cpu(const Batch<T> &hb, const Config &cfg, int *path) {
  const int threads = cpu_threads(cfg);
  if (hb.nplus) return cpu_gehsvj(hb, cfg, threads, path);
  std::vector<unsigned char> ws(cpu_workspace_bytes(hb, cfg, threads));
  return cpu_gesvj(hb, cfg, ws.data(), ws.size(), threads, path);
}

// A host sub-batch (pointer-array form) of some matrices of a call, whose
// pointers are host pointers; info, sweeps and path are compact arrays.
template <class T> struct HostSubBatch {
  using R = real_of_t<T>;
  std::vector<const T *> A;
  std::vector<R *> S;
  std::vector<T *> U, V;
  std::vector<int> lda, ldu, ldv, m, n, nplus, info, sweeps, path; // nplus: the HSVD's
  Batch<T> batch;

  // Describes the matrices added to A ... n above as `batch`.
  void describe(bool vectors) {
    Batch<T> &b = batch;
    b = Batch<T>{};
    b.vectors = vectors;
    b.count = int(A.size());
    b.dims.mv = m.data();
    b.dims.nv = n.data();
    b.A.array = A.data();
    b.A.ldv = lda.data();
    b.S.array = S.data();
    b.U.array = U.data();
    b.U.ldv = ldu.data();
    b.V.array = V.data();
    b.V.ldv = ldv.data();
    if (!nplus.empty()) b.nplus = nplus.data();
    info.assign(b.count, 0);
    sweeps.assign(b.count, 0);
    path.assign(b.count, BSVD_PATH_CPU_UNBLOCKED);
    b.info = info.data();
    b.sweeps = sweeps.data();
  }
};

} // namespace bsvd::detail::cuda
