// The Gram preconditioning on the CPU (gram.cpp): the twin of cuda-gram.
#pragma once

#include "cpu_internal.hpp"

namespace bsvd::detail::cpu {

// Scratch of solve_gram_preconditioned for a working mw x nw matrix (with
// `inner` bytes for the solve of W V0: the _with form).
template <class T> size_t gram_scratch_bytes(int mw, int nw, bool vectors, const Config &cfg);
template <class T> size_t gram_scratch_bytes_with(int mw, int nw, bool vectors, size_t inner);

// Matrix b of batch from its working matrix W (mw x nw: A, or A^H when
// trans, scaled by 2^escale): V0 from the single-precision Gram matrix's
// eigenvectors, W V0 solved by the configured iteration (unpreconditioned),
// the results into batch. Returns the inner solve's path.
template <class T> int solve_gram_preconditioned(const Batch<T> &batch, int b, const Config &cfg,
                                                 const T *W, int mw, int nw, bool trans, int escale,
                                                 void *scratch, OrderingCache &cache);

} // namespace bsvd::detail::cpu
