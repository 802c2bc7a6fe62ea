"""bsvd.cond, bsvd.norm and bsvd.matrix_norm: the condition number and the
matrix norms that are functions of the singular values (2, -2, nuclear)
from one bsvd.svdvals call, with numpy.linalg's signatures (torch.linalg's
names accepted too); every other order is the caller's library's own
function (they need no SVD), so one call site serves all orders.
"""
from __future__ import annotations

import numpy as np

from . import _xp
from ._lstsq import _svdvals

_SVD_ORDS = (2, -2, "nuc")


def _is_svd_ord(ord):
    return isinstance(ord, str) and ord == "nuc" or (
        not isinstance(ord, str) and ord is not None and ord in (2, -2))


def cond(x, p=None, **options):
    """The condition number of each matrix of x (..., m, n), as
    numpy.linalg.cond (torch.linalg.cond for tensors). p None, 2: s_1 /
    s_min; -2: s_min /
    s_1, from one bsvd.svdvals call (any shape (..., m, n)). Other p (1,
    -1, inf, -inf, 'fro': square matrices) are delegated to the library's
    own cond (NumPy, PyTorch, JAX; they invert A, no SVD); CuPy has none:
    NotImplementedError.

    NumPy-API arrays follow NumPy: a NaN ratio (a zero matrix) becomes inf
    unless the matrix holds NaN; an empty matrix raises LinAlgError. Tensors
    follow torch: the plain ratio (inf for a singular matrix, NaN for a zero
    one) and zeros for an empty input. options: bsvd.svd's keywords (for p
    None, 2, -2).
    """
    where = "bsvd.cond"
    lib = _xp.library(x)
    ops = _xp.namespace(lib)
    x = ops.asarray(x)
    if not (p is None or _is_svd_ord(p) and p != "nuc"):
        if lib == "numpy":
            return _xp.NP_COND(x, p)
        if lib == "cupy":
            raise NotImplementedError(f"{where}: p={p!r} for CuPy arrays: CuPy has no cond; "
                                      "bsvd computes p None, 2 and -2")
        return ops.linalg().cond(x, p)
    shape = tuple(x.shape)
    if len(shape) < 2:
        raise np.linalg.LinAlgError(f"{where}: x must have at least 2 dimensions (..., m, n), "
                                    f"got shape {shape}")
    empty = shape[-1] * shape[-2] == 0
    if lib == "torch":
        if empty or x.numel() == 0:
            name = _xp.compute_dtype(ops, (ops.dtype_name(x),), where)
            from ._frameworks import REAL_OF
            return ops.zeros(shape[:-2], REAL_OF[name], x)
        s = _svdvals(x, options, where)
        return s[..., -1] / s[..., 0] if p == -2 else s[..., 0] / s[..., -1]
    if empty and np.prod(shape) == 0:
        raise np.linalg.LinAlgError(f"{where}: cond is not defined on empty arrays")
    s = _svdvals(x, options, where)
    with np.errstate(all="ignore"):
        r = s[..., -1] / s[..., 0] if p == -2 else s[..., 0] / s[..., -1]
    # NumPy's rule: 0/0 (a zero matrix) is inf, unless x itself held NaN.
    xp = ops.xp
    nan = ops.isnan(r) & ~ops.any(ops.isnan(x), axis=(-2, -1))
    r = ops.where(nan, xp.asarray(np.inf, dtype=r.dtype), r)
    if lib == "numpy" and r.ndim == 0:
        return r[()]  # a NumPy scalar for one matrix, as numpy.linalg.cond
    return r


def norm(x, ord=None, axis=None, keepdims=False, *, dim=None, keepdim=None, dtype=None,
         **options):
    """Matrix and vector norms of x with numpy.linalg.norm's signature (ord,
    axis, keepdims; torch.linalg.norm's names dim, keepdim and dtype taken
    too, dtype casting x first): the matrix norms ord=2 (s_1), -2 (s_min)
    and 'nuc' (sum of s) of the matrices over two axes (axis a pair, or
    None for a 2-D x) from one bsvd.svdvals call;
    every other case (vector norms, 'fro', 1, -1, inf, -inf, bad orders and
    axes) is the library's own norm (numpy.linalg.norm, torch.linalg.norm,
    cupy.linalg.norm, jax.numpy.linalg.norm), with its results and errors.
    Integer input computes in float64 (the default float), as NumPy.
    options: bsvd.svd's keywords (for 2, -2, 'nuc').
    """
    where = "bsvd.norm"
    lib = _xp.library(x)
    ops = _xp.namespace(lib)
    if dim is not None:
        if axis is not None:
            raise TypeError(f"{where}: pass axis or dim, not both")
        axis = dim
    if keepdim is not None:
        keepdims = keepdim
    x = ops.asarray(x)
    if dtype is not None:
        x = x.to(dtype) if lib == "torch" else x.astype(dtype)
    if isinstance(axis, list):
        axis = tuple(axis)
    two = axis is None and len(x.shape) == 2 or isinstance(axis, tuple) and len(axis) == 2
    if not (_is_svd_ord(ord) and two):
        if lib == "torch":
            return ops.t.linalg.norm(x, ord, axis, keepdims)
        fn = _xp.NP_NORM if lib == "numpy" else ops.linalg().norm
        return fn(x, ord, axis, keepdims)
    nd = len(x.shape)
    rc = (0, 1) if axis is None else axis
    try:
        r, c = (int(a) for a in rc)
    except (TypeError, ValueError):
        raise TypeError(f"{where}: axis must be None, an int or a pair of ints, got {axis!r}") \
            from None
    for a in (r, c):
        if not -nd <= a < nd:
            raise np.exceptions.AxisError(a, nd)
    r, c = r % nd, c % nd
    if r == c:
        raise ValueError(f"{where}: Duplicate axes given.")
    y = ops.moveaxis(x, (r, c), (-2, -1))
    s = _svdvals(y, options, where)
    k = s.shape[-1]
    if ord == "nuc":
        ret = ops.reduce_sum(s, -1)
    elif ord == 2:
        ret = s[..., 0] if k else ops.reduce_sum(s, -1)  # an empty matrix: 0, as NumPy
    else:
        if not k:
            raise ValueError(f"{where}: ord=-2 of an empty matrix (no singular values)")
        ret = s[..., -1]
    if keepdims:
        shape = list(x.shape)
        shape[r] = shape[c] = 1
        ret = ret.reshape(tuple(shape))
    if lib == "numpy" and ret.ndim == 0:
        return ret[()]
    return ret


def matrix_norm(x, ord="fro", dim=(-2, -1), keepdim=False, *, keepdims=None, dtype=None,
                **options):
    """The matrix norm of each matrix of a stack, as numpy.linalg.matrix_norm
    (x, keepdims, ord) and torch.linalg.matrix_norm (A, ord, dim, keepdim,
    dtype): ord 2, -2 and 'nuc' from the singular values (one bsvd.svdvals
    call), 'fro', 1, -1, inf, -inf by the library's own norm. x: (..., m,
    n) (at least 2 dimensions). options: bsvd.svd's keywords.
    """
    where = "bsvd.matrix_norm"
    if keepdims is not None:
        keepdim = keepdims
    if len(getattr(x, "shape", np.shape(x))) < 2:
        raise np.linalg.LinAlgError(f"{where}: x must have at least 2 dimensions (..., m, n), "
                                    f"got shape {tuple(np.shape(x))}")
    if isinstance(dim, list):
        dim = tuple(dim)
    if not (isinstance(dim, tuple) and len(dim) == 2):
        raise ValueError(f"{where}: dim must be a pair of axes, got {dim!r}")
    return norm(x, ord, dim, keepdim, dtype=dtype, **options)
