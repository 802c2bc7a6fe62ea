"""bsvd.svd's subset_by_index / subset_by_value: selected singular triplets
through the library's gesvdx (bsvd_<p>gesvdx_strided_batched, include/
bsvd/blas.h): each matrix reduced to bidiagonal form, the bidiagonal's
values by bisection and its vectors by inverse iteration, turned into A's
by the reduction's reflectors -- the method of LAPACK's xGESVDX.

Arrays stay in the caller's library and on its device (NumPy, PyTorch,
CuPy, JAX through DLPack); the call blocks until the results are written.
The index range is 0-based and counts from the largest value; a value
interval (vl, vu] holds a different number of values per matrix, so a
stack's results have room for the most any matrix has, and a matrix with
fewer has zeros after its own (its S entries are then 0, which a value in
(vl, vu] with vl >= 0 never is).
"""
from __future__ import annotations

import math
import numbers
import sys

import numpy as np

from . import _bsvd
from ._args import layout, options
from ._frameworks import REAL_OF


def _index_range(subset, k, where):
    try:
        lo, hi = subset
    except (TypeError, ValueError):
        raise TypeError(f"{where}: subset_by_index must be a pair (lo, hi) of ints, got "
                        f"{subset!r}") from None
    for v in (lo, hi):
        if not isinstance(v, numbers.Integral) or isinstance(v, bool):
            raise TypeError(f"{where}: subset_by_index must be a pair (lo, hi) of ints, got "
                            f"{subset!r}")
    lo, hi = int(lo), int(hi)
    if not 0 <= lo <= hi < max(k, 1):
        raise ValueError(f"{where}: subset_by_index = ({lo}, {hi}) must satisfy 0 <= lo <= hi < "
                         f"min(m, n) = {k} (0 = the largest value)")
    return lo, hi


def _value_range(subset, where):
    try:
        lo, hi = subset
        lo, hi = float(lo), float(hi)
    except (TypeError, ValueError):
        raise TypeError(f"{where}: subset_by_value must be a pair (vl, vu) of numbers, got "
                        f"{subset!r}") from None
    if not (lo >= 0 and hi > lo):
        raise ValueError(f"{where}: subset_by_value = ({lo}, {hi}) must satisfy 0 <= vl < vu "
                         "(the values in (vl, vu]; vu may be inf)")
    return lo, hi


def _check_traceable(A, where):
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(A, torch.Tensor):
        if A.requires_grad and torch.is_grad_enabled():
            raise NotImplementedError(f"{where}: subset_by_index / subset_by_value are not "
                                      "differentiable; call it under torch.no_grad() or on "
                                      "A.detach()")
    from ._frameworks import jax_tracer_type
    if "jax" in sys.modules and isinstance(A, jax_tracer_type()):
        raise TypeError(f"{where}: subset_by_index / subset_by_value cannot be traced (jax.jit, "
                        "vmap, grad): their result's shape depends on the data; call it eagerly")


def _report_nonfinite(info, rng, kw, where):
    """bsvd.svd's warning (or NonFiniteError with check_finite) for the
    matrices that held NaN or Inf, with what their outputs are: NaN values
    and zero vectors for an index range, no values (count 0) for a value
    interval."""
    import warnings
    from . import NonFiniteError, NonFiniteWarning
    from ._args import stacklevel
    nf = int(np.count_nonzero(info == _bsvd.INFO_NONFINITE))
    if not nf:
        return
    what = ("their singular values are NaN and their vectors zero" if rng == _bsvd.RANGE_INDEX
            else "they have no values in the interval (count 0)")
    msg = f"{where}: {nf} of {info.size} matrices contain NaN or Inf; {what}"
    if kw["check_finite"]:
        raise NonFiniteError(msg)
    if kw["warn"]:
        warnings.warn(msg, NonFiniteWarning, stacklevel=stacklevel())


def svd_subset(A, compute_uv, by_index, by_value, kw, where):
    """(U (..., m, c), S (..., c), Vh (..., c, n), info, ns): U, Vh None
    without compute_uv; info and ns NumPy int32 arrays shaped as the batch."""
    from . import _host, _prepared, _raise_status
    if (by_index is None) == (by_value is None):
        raise ValueError(f"{where}: give one of subset_by_index and subset_by_value")
    _check_traceable(A, where)
    ad, x, name, device, opts = _prepared(A, kw, where)
    shape = ad.shape(x)
    m, n = int(shape[-2]), int(shape[-1])
    bshape = tuple(map(int, shape[:-2]))
    batch = math.prod(bshape)
    k = min(m, n)
    if batch > 2**31 - 1:
        raise ValueError(f"{where}: batch of {batch} matrices is more than the library's int")
    lo = hi = 0
    vl = vu = 0.0
    if by_index is not None:
        lo, hi = _index_range(by_index, k, where)
        rng, c = _bsvd.RANGE_INDEX, (hi - lo + 1 if k else 0)
    else:
        vl, vu = _value_range(by_value, where)
        rng, c = _bsvd.RANGE_VALUE, k
    S = ad.empty(bshape + (c,), REAL_OF[name], device)
    Ub = Vhb = None
    if compute_uv:
        Ub = ad.empty(bshape + (c, m), name, device)   # U^T (or conj(U)^T)
        Vhb = ad.empty(bshape + (c, n), name, device)  # Vh (or conj(Vh))
    ns = np.zeros(bshape, np.int32)
    info = np.zeros(bshape, np.int32)
    trans = "N"
    if batch > 0 and k > 0:
        lay = layout(ad, x, bshape, m, n, batch)
        if lay is None:
            x = ad.contiguous(x)
            lay = layout(ad, x, bshape, m, n, batch)
        trans, ld, stride = lay
        M, N = (n, m) if trans == "T" else (m, n)
        libU, libV = ((Vhb, Ub) if trans == "T" else (Ub, Vhb)) if compute_uv else (None, None)
        dns = ad.empty((batch,), "int32", device)
        dinfo = ad.empty((batch,), "int32", device)
        ad.sync_input(x)
        ex = ad.export
        st, msg = _bsvd.gesvdx_strided(
            ex(x), M, N, ld, stride, rng, vl, vu, lo, hi, ex(dns), ex(S), max(c, 1),
            None if libU is None else ex(libU), max(M, 1), M * c,
            None if libV is None else ex(libV), max(N, 1), N * c, ex(dinfo), c, batch, opts)
        _raise_status(st, msg, where)
        # (finish: a JAX device buffer becomes a JAX array NumPy can read)
        ns = _host(ad.finish(dns, (batch,))).reshape(bshape).astype(np.int32)
        info = _host(ad.finish(dinfo, (batch,))).reshape(bshape).astype(np.int32)
        _report_nonfinite(info, rng, kw, where)
    full = c
    if rng == _bsvd.RANGE_VALUE:
        c = int(ns.max()) if ns.size else 0  # the room the stack needs
    # entries beyond a matrix's own count (value range) are not written:
    # zeroed here
    keep = np.arange(c) < ns[..., None] if rng == _bsvd.RANGE_VALUE else None
    S = _zero_beyond(ad.finish(S, bshape + (full,))[..., :c], keep)
    if not compute_uv:
        return None, S, None, info, ns
    Ub = _zero_beyond(ad.finish(Ub, bshape + (full, m))[..., :c, :], keep, 1)
    Vh = _zero_beyond(ad.finish(Vhb, bshape + (full, n))[..., :c, :], keep, 1)
    if batch > 0 and k > 0 and name.startswith("complex"):
        # as bsvd.svd's _reduced: row-major A is A^T column-major
        if trans == "T":
            Ub = ad.conj_(Ub)
        else:
            Vh = ad.conj_(Vh)
    return ad.mT(Ub), S, Vh, info, ns


def _zero_beyond(X, keep, trailing=0):
    """X with its entries zeroed where keep (a NumPy bool array of the batch
    shape + (c,)) is False; trailing: axes of X after that one."""
    if keep is None or keep.all():
        return X
    mask = keep.reshape(keep.shape + (1,) * trailing)
    mod = type(X).__module__.split(".")[0]
    if mod == "torch":
        import torch
        return torch.where(torch.as_tensor(mask, device=X.device), X, torch.zeros((), dtype=X.dtype,
                                                                                  device=X.device))
    if mod == "cupy":
        import cupy
        with X.device:
            return cupy.where(cupy.asarray(mask), X, 0)
    if mod in ("jax", "jaxlib"):
        import jax.numpy as jnp
        return jnp.where(mask, X, 0)
    return np.where(mask, X, 0)


def svd_list_subset(mats, compute_uv, by_index, by_value, kw, where):
    """bsvd.svd_batch with a subset: ((U, S, Vh), info), lists U_i (m, c_i),
    S_i (c_i,), Vh_i (c_i, n) with each matrix's own count c_i (U, Vh None
    without compute_uv) and the NumPy info array. One variable-size gesvdx
    call."""
    from . import _host, _raise_status
    from ._batch import adapt_list
    if (by_index is None) == (by_value is None):
        raise ValueError(f"{where}: give one of subset_by_index and subset_by_value")
    count = len(mats)
    for a in mats:
        _check_traceable(a, where)
    if count == 0:
        return ([], [], []) if compute_uv else (None, [], None), np.zeros(0, np.int32)
    ad, xs, name, device = adapt_list(mats, where)
    opts = options(kw, device, ad, name, where)
    shapes = [tuple(int(s) for s in ad.shape(x)) for x in xs]
    kmax = max(min(m, n) for m, n in shapes)
    lo = hi = 0
    vl = vu = 0.0
    if by_index is not None:
        lo, hi = _index_range(by_index, kmax, where)
        for i, (m, n) in enumerate(shapes):
            if 0 < min(m, n) <= hi:
                raise ValueError(f"{where}: subset_by_index = ({lo}, {hi}) must satisfy hi < "
                                 f"min(m, n) = {min(m, n)} for matrix {i} ({m} x {n})")
        rng, cols = _bsvd.RANGE_INDEX, hi - lo + 1
    else:
        vl, vu = _value_range(by_value, where)
        rng, cols = _bsvd.RANGE_VALUE, -1
    # Every matrix described to the library as A^T (row-major A), as
    # svd_batch does: the library's U (n x c) is Vh's buffer, its V (m x c)
    # U's (U^T row-major).
    Ms, Ns, lds, offS, offU, offV, ldus, ldvs, dims = [], [], [], [], [], [], [], [], []
    tS = tU = tV = 0
    for i, (m, n) in enumerate(shapes):
        k = min(m, n)
        c = (cols if cols >= 0 else k) if k else 0
        ld = max(n, 1)
        if k > 0:
            lay = layout(ad, xs[i], (), m, n, 1)
            if lay is None or lay[0] != "T":
                xs[i] = ad.contiguous(xs[i])
                lay = layout(ad, xs[i], (), m, n, 1)
            ld = lay[1]
        dims.append((m, n, c, tS, tU, tV))
        Ms.append(n), Ns.append(m), lds.append(ld)
        offS.append(tS), offU.append(tV), offV.append(tU)
        ldus.append(max(n, 1)), ldvs.append(max(m, 1))
        tS, tU, tV = tS + c, tU + c * m, tV + c * n
    Sf = ad.empty((max(tS, 1),), REAL_OF[name], device)
    Ubf = Vhf = None
    if compute_uv:
        Ubf = ad.empty((max(tU, 1),), name, device)
        Vhf = ad.empty((max(tV, 1),), name, device)
    dns = ad.empty((count,), "int32", device)
    dinfo = ad.empty((count,), "int32", device)
    for x in xs:
        ad.sync_input(x)
    ex = ad.export
    libU, libV = (Vhf, Ubf) if compute_uv else (None, None)
    st, msg = _bsvd.gesvdx_vbatched(
        [ex(x) for x in xs], Ms, Ns, lds, rng, vl, vu, lo, hi, ex(dns), ex(Sf), offS,
        None if libU is None else ex(libU), ldus, offU, None if libV is None else ex(libV), ldvs,
        offV, ex(dinfo), cols, opts)
    _raise_status(st, msg, where)
    ns = _host(ad.finish(dns, (count,))).reshape(count).astype(np.int32)
    info = _host(ad.finish(dinfo, (count,))).reshape(count).astype(np.int32)
    _report_nonfinite(info, rng, kw, where)
    Sf = ad.finish(Sf, (max(tS, 1),))
    Ss = [ad.flat_slice(Sf, d[3], d[3] + int(c), (int(c),)) for d, c in zip(dims, ns)]
    if not compute_uv:
        return (None, Ss, None), info
    Ubf = ad.finish(Ubf, (max(tU, 1),))
    Vhf = ad.finish(Vhf, (max(tV, 1),))
    if name.startswith("complex") and tU > 0:
        Ubf = ad.conj_(Ubf)  # U = conj(V1) for A^T = U1 S V1^H
    Us, Vhs = [], []
    for (m, n, c, s0, u0, v0), got in zip(dims, ns):
        got = int(got)
        # the library's columns 0 ... got - 1 of room c: rows of U^T and Vh
        Us.append(ad.mT(ad.flat_slice(Ubf, u0, u0 + c * m, (c, m))[:got]))
        Vhs.append(ad.flat_slice(Vhf, v0, v0 + c * n, (c, n))[:got])
    return (Us, Ss, Vhs), info
