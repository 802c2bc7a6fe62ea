// The operation declared once, implemented per backend (src/cpu, src/cuda).
// Arguments are already validated by the API layer (src/core/api.cpp).
#pragma once

#include "batch.hpp"
#include "blas_batch.hpp"
#include "distributed.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace bsvd::detail {

// ---- cpu backend (src/cpu) -------------------------------------------------
// Workspace in bytes for the batch with `threads` worker threads.
template <class T>
size_t cpu_workspace_bytes(const Batch<T> &batch, const Config &cfg, int threads);

// Solves every matrix of the batch. workspace: at least cpu_workspace_bytes.
// path (may be null): per-matrix bsvd_path_t.
template <class T> bsvd_status_t cpu_gesvj(const Batch<T> &batch, const Config &cfg,
                                           void *workspace, size_t workspace_bytes, int threads,
                                           int *path);

// The hyperbolic SVD of every matrix (docs/hsvd.md): batch.nplus[b] the
// number of +1 entries of matrix b's signature; every matrix has m >= n.
// The solver allocates its own scratch (per worker). path:
// BSVD_PATH_CPU_UNBLOCKED or _BLOCKED (or TRIVIAL) per matrix.
template <class T>
bsvd_status_t cpu_gehsvj(const Batch<T> &batch, const Config &cfg, int threads, int *path);

// ---- cuda backend (src/cuda; a stub returning BACKEND_UNAVAILABLE when the
// library is built without CUDA) ----------------------------------------------
// A GPU is visible and the current one can run this build (compute
// capability 8.0 or newer, a kernel image: cuda::device_supported).
bool cuda_available();
// Why cuda_available() is false, one sentence ("" when it is true): no
// CUDA in this build, no GPU visible, or the current GPU (named, with its
// compute capability and the architectures built) unsupported.
std::string cuda_status_reason();

// Where the batch's matrices live: 0 host, 1 device, -1 mixed (an error).
// `arg` receives the 1-based argument position of the first operand that
// disagrees with A when mixed. Host-only builds always report host.
template <class T> int cuda_locate(const Batch<T> &batch, int *arg);

template <class T> size_t cuda_workspace_bytes(const Batch<T> &batch, const Config &cfg);

// The plan of the call as text (plan::explain), with the workspace of
// host-resident (loc 0) or device-resident (loc 1) data.
template <class T> std::string cuda_explain(const Batch<T> &batch, const Config &cfg, int loc);

// cfg.exec says whether the call blocks or only enqueues (Exec, batch.hpp).
// batch.nplus set: the hyperbolic SVD (cpu_gehsvj's contract), on the
// paths that have it (plan::hyperbolic_settings), the rest on the CPU.
template <class T> bsvd_status_t cuda_gesvj(const Batch<T> &batch, const Config &cfg, void *stream,
                                            void *workspace, size_t workspace_bytes, int *path);

// The CUDA devices the process sees (0 without CUDA), and this thread's
// current one (-1 without CUDA).
int cuda_device_count();
int cuda_current_device();

// A blocking cuda_gesvj of host data on device `dev`, made current for this
// thread (a thread of its own in a split call, core/split.hpp), on `stream`
// (null: a stream of the library's on that device), without a workspace.
template <class T> bsvd_status_t cuda_gesvj_on(int dev, const Batch<T> &batch, const Config &cfg,
                                               void *stream, int *path);

// Matrix 0 of the batch (host data) solved across the devices `devs` by
// the distributed algorithm (core/distributed.hpp; s.devices is ignored:
// one per entry of devs, which may repeat a device). path[0] (may be
// null): BSVD_PATH_CUDA_DEVICES, or the one-device path that answered a
// NaN / Inf or zero matrix.
template <class T> bsvd_status_t cuda_gesvj_distributed(const std::vector<int> &devs,
                                                        const Batch<T> &batch, const Config &cfg,
                                                        const dist::Settings &s, int *path);

// ---- batched GEMV and GEBRD (bsvd.h, "Batched BLAS and LAPACK"; the
// bidiagonal route's building blocks) ----------------------------------------
// cpu: host data, `threads` workers over the batch (src/cpu/blas.cpp).
// cuda: device data of the current device, one thread block per matrix
// (src/cuda/bidiag/); cfg.exec says whether the call waits for the stream.
// The stub returns BACKEND_UNAVAILABLE. Arguments are checked already.
template <class T> bsvd_status_t cpu_gemv(const GemvBatch<T> &b, int threads);
template <class T> bsvd_status_t cpu_gebrd(const GebrdBatch<T> &b, int threads);
template <class T> bsvd_status_t cuda_gemv(const GemvBatch<T> &b, void *stream, Exec exec);
template <class T> bsvd_status_t cuda_gebrd(const GebrdBatch<T> &b, void *stream, Exec exec);
// Selected triplets (gesvdx), the same split (src/cpu/gesvdx.cpp,
// src/cuda/bidiag/gesvdx.cu).
template <class T> bsvd_status_t cpu_gesvdx(const GesvdxBatch<T> &b, int threads);
template <class T> bsvd_status_t cuda_gesvdx(const GesvdxBatch<T> &b, void *stream, Exec exec);
// Batched TRSV, the same split (src/cpu/blas.cpp, src/cuda/bidiag/trsv.cu).
template <class T> bsvd_status_t cpu_trsv(const TrsvBatch<T> &b, int threads);
template <class T> bsvd_status_t cuda_trsv(const TrsvBatch<T> &b, void *stream, Exec exec);
// Batched GELS, the same split (src/cpu/blas.cpp, src/cuda/bidiag/gels.cu).
template <class T> bsvd_status_t cpu_gels(const GelsBatch<T> &b, int threads);
template <class T> bsvd_status_t cuda_gels(const GelsBatch<T> &b, void *stream, Exec exec);
// GELSD's solve step after the SVD, the same split (src/cpu/blas.cpp,
// src/cuda/bidiag/gels.cu), and the cuda backend's stream-ordered scratch
// for the SVD's U and V (cudaMallocAsync / cudaFreeAsync on stream).
template <class T> bsvd_status_t cpu_gelsd_apply(const GelsdBatch<T> &b, int threads);
template <class T> bsvd_status_t cuda_gelsd_apply(const GelsdBatch<T> &b, void *stream, Exec exec);
bsvd_status_t cuda_scratch_alloc(void **p, size_t bytes, void *stream);
bsvd_status_t cuda_scratch_free(void *p, void *stream);

// Where one pointer lives: 1 device (or managed) memory, 0 host, -2 null.
// Host-only builds (and no visible GPU): 0 for every non-null pointer.
int cuda_memory_space(const void *p);

// Thread-local error detail (bsvd_last_error).
void set_error(const char *fmt, ...);
void clear_error();

} // namespace bsvd::detail
