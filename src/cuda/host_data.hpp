// Host-resident data on the cuda backend (host_data.cu): the blocking
// call's copies in and out, at once or streamed in chunks.
#pragma once

#include "call.hpp"

namespace bsvd::detail::exec {

// The GPU's matrices of a host batch packed into the staging region of ws
// (the call's layout L), copied in, solved on `stream`, copied out and
// unpacked into the caller's arrays; the CPU group solved on the host
// meanwhile. Returns when the results are written.
template <class T> bsvd_status_t run_host_data(const Batch<T> &batch, const plan::Plan &p,
                                               const CallLayout &L, cudaStream_t stream,
                                               unsigned char *ws, int *path);

// Whether a blocking call on this host batch streams through the GPU in
// chunks (more than two, and no workspace of the caller's; decision 0018).
template <class T> bool host_streams(const Batch<T> &batch, const void *workspace);

// The call in chunks: each planned, laid out and allocated as a call of its
// own on one of two slots (the call's stream and a pooled one).
template <class T> bsvd_status_t run_host_streamed(const Batch<T> &batch, const Config &cfg,
                                                   cudaStream_t stream, int *path);

} // namespace bsvd::detail::exec
