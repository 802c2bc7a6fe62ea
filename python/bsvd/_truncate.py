"""bsvd.truncate: the rank cut of an SVD by a tolerance on the singular
values, for the results of bsvd.svd (any array library) and bsvd.svd_batch
(lists).

The cut keeps, for each matrix, the leading r triplets where r is the
smallest rank whose truncation error E_r is at most tol:

    norm="2":   E_r = s_{r+1}                          (= ||A - A_r||_2)
    norm="fro": E_r = sqrt(s_{r+1}^2 + ... + s_k^2)    (= ||A - A_r||_F)
    tol = max(atol, rtol * ||A||)   (||A||_2 = s_1, ||A||_F = sqrt(sum s_i^2))

and at most max_rank of them. Because S is descending, E_r is
non-increasing in r, so r is the number of E_0 ... E_{k-1} above tol: one
comparison and one sum per batch, no loop over matrices and no sort.

The operations are written once against a tiny namespace shim (NumPy,
CuPy, JAX: the NumPy API; PyTorch: its own names), so device arrays stay
on their device and nothing here imports a library the caller did not.
"""
from __future__ import annotations

import math
import numbers
from typing import Any, NamedTuple

import numpy as np

NORMS = ("2", "fro")


class TruncatedSVD(NamedTuple):
    """U (..., m, r), S (..., r), Vh (..., r, n) and rank (...): r is the
    largest rank kept over the batch; entries beyond a matrix's own rank are
    zero, so U @ diag(S) @ Vh is each matrix's truncation as it stands."""
    U: Any
    S: Any
    Vh: Any
    rank: Any


class _Torch:
    def __init__(self, torch):
        self.t = torch

    def flip(self, x):
        return self.t.flip(x, dims=(-1,))

    def cumsum(self, x):
        return self.t.cumsum(x, dim=-1)

    def sqrt(self, x):
        return self.t.sqrt(x)

    def arange(self, k, like):
        return self.t.arange(k, device=like.device)

    def minimum(self, a, b):
        return self.t.clamp(a, max=b)

    def maximum(self, a, b):
        return self.t.clamp(a, min=b)

    def count(self, mask):
        return mask.sum(dim=-1)


class _NumpyLike:
    def __init__(self, xp):
        self.xp = xp

    def flip(self, x):
        return self.xp.flip(x, axis=-1)

    def cumsum(self, x):
        return self.xp.cumsum(x, axis=-1)

    def sqrt(self, x):
        return self.xp.sqrt(x)

    def arange(self, k, like):
        return self.xp.arange(k)

    def minimum(self, a, b):
        return self.xp.minimum(a, b)

    def maximum(self, a, b):
        return self.xp.maximum(a, b)

    def count(self, mask):
        return mask.sum(axis=-1)


def _namespace(S):
    mod = type(S).__module__.split(".")[0]
    if mod == "torch":
        import torch
        return _Torch(torch)
    if mod == "cupy":
        import cupy
        return _NumpyLike(cupy)
    if mod in ("jax", "jaxlib"):
        import jax.numpy as jnp
        return _NumpyLike(jnp)
    return _NumpyLike(np)


def _concrete_max(rank):
    """max(rank) as a Python int, or None where it is not known while
    tracing (inside jax.jit / vmap)."""
    if math.prod(rank.shape) == 0:
        return 0
    try:
        return int(rank.max())
    except Exception:  # a JAX tracer: no value until the program runs
        return None


def _check(rtol, atol, max_rank, norm):
    for name, v in (("rtol", rtol), ("atol", atol)):
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"bsvd.truncate: {name} must be a real number or None, not "
                            f"{type(v).__name__}")
        if not v >= 0:  # also refuses NaN
            raise ValueError(f"bsvd.truncate: {name} must be >= 0, got {v}")
    if max_rank is not None:
        if isinstance(max_rank, bool) or not isinstance(max_rank, numbers.Integral):
            raise TypeError(f"bsvd.truncate: max_rank must be an int or None, not "
                            f"{type(max_rank).__name__}")
        if max_rank < 0:
            raise ValueError(f"bsvd.truncate: max_rank must be >= 0, got {max_rank}")
    if norm not in NORMS:
        raise ValueError(f"bsvd.truncate: norm must be one of {NORMS}, got {norm!r}")


def _one(U, S, Vh, rtol, atol, max_rank, norm):
    ns = _namespace(S)
    k = S.shape[-1]
    if norm == "2":
        err = S  # E_r = s_{r+1}: S itself, shifted by one index
        ref = S[..., :1]
    else:
        # tail[..., r] = sqrt(s_{r+1}^2 + ... + s_k^2), summed from the
        # small end (no cancellation).
        tail = ns.sqrt(ns.flip(ns.cumsum(ns.flip(S * S))))
        err = tail
        ref = tail[..., :1]
    tol = ref * rtol if rtol else ref * 0
    if atol:
        tol = ns.maximum(tol, atol)
    rank = ns.count(err > tol)
    if max_rank is not None:
        rank = ns.minimum(rank, max_rank)
    r = _concrete_max(rank)
    if r is None:  # traced: keep the static width (max_rank or k), mask only
        r = k if max_rank is None else min(k, max_rank)
    keep = ns.arange(r, S) < rank[..., None]  # (..., r)
    S_t = S[..., :r] * keep
    U_t = None if U is None else U[..., :, :r] * keep[..., None, :]
    Vh_t = None if Vh is None else Vh[..., :r, :] * keep[..., :, None]
    return TruncatedSVD(U_t, S_t, Vh_t, rank)


def truncate(U, S=None, Vh=None, *, rtol=None, atol=None, max_rank=None, norm="2"):
    """The rank cut of an SVD: keep each matrix's leading triplets whose
    truncation error is above the tolerance, at most max_rank.

        res = bsvd.svd(A, full_matrices=False)
        U, S, Vh, rank = bsvd.truncate(res, rtol=1e-8)           # or truncate(U, S, Vh, ...)
        U, S, Vh, rank = bsvd.truncate(res, atol=1e-6, norm="fro", max_rank=64)

    The first argument is the result of bsvd.svd (or any (U, S, Vh)
    tuple), or U itself with S and Vh following; U or Vh may be None (a cut
    of S and one factor). For each matrix the kept rank r is the smallest
    with truncation error at most tol = max(atol, rtol * ||A||):

        norm="2"   (default): s_{r+1} <= tol, the spectral-norm error (s_1 = ||A||_2);
        norm="fro":  sqrt(s_{r+1}^2 + ... + s_k^2) <= tol, the Frobenius-norm
                     error (the "discarded weight" of tensor-network codes),
                     ||A||_F = sqrt(sum s_i^2);

    then r = min(r, max_rank). With neither rtol nor atol, tol = 0: the
    exact zeros are cut (and max_rank, if given, applies).

    Returns TruncatedSVD(U, S, Vh, rank): U[..., :, :R], S[..., :R],
    Vh[..., :R, :] with R the largest rank in the batch, and the entries
    beyond each matrix's own rank set to zero (so U @ (S[..., None] * Vh)
    is every matrix's truncation without further masking); rank holds the
    ranks, an integer array of the batch's shape in the caller's library
    (0-d for one matrix). Works with NumPy, PyTorch, CuPy and JAX arrays
    on their device; reading R waits for a device array's stream (the kept
    width depends on the data). Inside jax.jit the ranks are not known while tracing:
    R is then max_rank (or k) and only the mask applies. Lists (the
    results of bsvd.svd_batch) give lists: each matrix cut to its own rank
    exactly, rank a list of ints.
    """
    if S is None and Vh is None and isinstance(U, tuple):
        if len(U) not in (3, 4):
            raise TypeError("bsvd.truncate: pass an SVD result (U, S, Vh) or U, S, Vh")
        U, S, Vh = U[0], U[1], U[2]
    if S is None:
        raise TypeError("bsvd.truncate: S is required (pass the SVD result, or U, S, Vh)")
    _check(rtol, atol, max_rank, norm)
    if isinstance(S, list):
        n = len(S)
        Us = [None] * n if U is None else list(U)
        Vhs = [None] * n if Vh is None else list(Vh)
        if len(Us) != n or len(Vhs) != n:
            raise ValueError("bsvd.truncate: U, S and Vh lists must have one entry per matrix")
        outs = [_one(u, s, v, rtol, atol, max_rank, norm) for u, s, v in zip(Us, S, Vhs)]
        return TruncatedSVD(None if U is None else [o.U for o in outs], [o.S for o in outs],
                            None if Vh is None else [o.Vh for o in outs],
                            [int(o.rank) for o in outs])
    if getattr(S, "ndim", 0) < 1:
        raise ValueError("bsvd.truncate: S must have at least one dimension (..., k)")
    return _one(U, S, Vh, rtol, atol, max_rank, norm)
