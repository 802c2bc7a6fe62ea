"""bsvd.hsvd, bsvd.hsvd_batch: the hyperbolic SVD (J-SVD) over
bsvd_<p>gehsvj_strided_batched (docs/hsvd.md). The eigenvalue front end
bsvd.eigh_factored is in _eigh.py.

For G (m x n, m >= n) and a signature J = diag(j_1 ... j_n), j = +-1:

    G = U @ diag(S) @ Vh,   U^H U = I,   Vh @ J @ Vh^H = Jout

with Jout = diag(signs), the signature in the output order: the +1 columns
first. The library takes J partitioned (nplus leading +1 entries); a +-1
vector is partitioned here by a stable permutation perm of G's columns
(+1 columns first, each side in its original order), and Vh is given back
in the caller's column order, so that the reconstruction needs no
permutation and G[..., perm] = U @ diag(S) @ Vh[..., perm] is the
partitioned form.

The library solves on the GPU where one is visible (its plan's paths,
docs/hsvd.md), else on the CPU (backend= chooses). Inputs are host
arrays (NumPy, or anything numpy.asarray takes: lists, CPU tensors, JAX CPU
arrays), whose results are NumPy arrays, or CUDA arrays (PyTorch, CuPy,
JAX), whose results are arrays of the same library on the same device. The
arrangement around the solve (the signature's permutation, the transposes)
is NumPy code, so a CUDA array makes one round trip through host memory: a
copy of G out, the results back. The library's device-pointer path itself
(bsvd_?gehsvj_strided_batched on device memory) has no such copy.
"""
from __future__ import annotations

import math
import warnings
from typing import Any, NamedTuple

import numpy as np

from . import _bsvd
from ._args import (DEFAULT_BACKEND, DEFAULT_ORDERING, _is_int, check_flag,
                    options, promote, stacklevel)
from ._frameworks import REAL_OF, adapt

# Imported by bsvd on first use, when the package is complete.
from . import Info, _raise_status, _report  # noqa: E402


class HSVDResult(NamedTuple):
    """U (..., m, n), S (..., n), Vh (..., n, n), signs (..., n), perm
    (..., n): G = U @ diag(S) @ Vh and Vh @ diag(j) @ Vh^H = diag(signs),
    j the signature in G's column order; perm: the columns of G in the
    output order (+1 columns first)."""
    U: Any
    S: Any
    Vh: Any
    signs: Any
    perm: Any


class HSVDInfoResult(NamedTuple):
    """HSVDResult and the per-matrix HSVDInfo (return_info=True)."""
    U: Any
    S: Any
    Vh: Any
    signs: Any
    perm: Any
    info: Any


class HSVDValues(NamedTuple):
    """compute_uv=False: S (..., n) and signs (..., n), the sign of each
    value's side (+1 values first, each side descending)."""
    S: Any
    signs: Any


class HSVDValuesInfo(NamedTuple):
    """HSVDValues and the per-matrix HSVDInfo (return_info=True)."""
    S: Any
    signs: Any
    info: Any


class HyperbolicBreakdownWarning(UserWarning):
    """Some matrices violate the existence condition of the HSVD,
    rank(G) = rank(G J G^H) (info == -2): two columns of opposite signs
    stayed parallel with equal norms. Their S, U, Vh are the last iterate,
    not an HSVD."""


class HSVDInfo(Info):
    """Info of an HSVD call: info 0 converged, > 0 not converged within
    max_sweeps, -1 NaN or Inf in G, -2 the rank condition failed
    (HyperbolicBreakdownWarning); sweeps and path as Info's."""

    __slots__ = ()

    @property
    def breakdown(self):
        """Boolean array: True where the rank condition failed (info == -2)."""
        return self.info == _bsvd.INFO_HYPERBOLIC_BREAKDOWN

    def __repr__(self):
        return super().__repr__()[:-1] + f", breakdown={int(np.count_nonzero(self.breakdown))})"


# ---------------------------------------------------------------------------
# arguments

def _to_host(ad, x):
    """A CUDA array of PyTorch, CuPy or JAX as a NumPy array."""
    if ad.name == "torch":
        return x.cpu().numpy()
    if ad.name == "cupy":
        return ad.cp.asnumpy(x)
    return np.asarray(x)


def to_device(a, origin):
    """A NumPy result as an array of the input's library on its device
    (origin from host_matrices; None: a host input, a is returned)."""
    if origin is None or a is None:
        return a
    ad, dev, x = origin
    if ad.name == "torch":
        return ad.torch.from_numpy(np.ascontiguousarray(a)).to(x.device)
    if ad.name == "cupy":
        with ad.cp.cuda.Device(dev[1]):
            return ad.cp.asarray(a)
    return ad.jax.device_put(a, next(iter(x.devices())))


def host_matrices(G, where):
    """G as a NumPy array (..., m, n) with m >= n in a dtype the library
    takes (integer and bool input promoted to float64, float16 to float32),
    its dtype name, and its origin: None for a host array, else what
    to_device needs to give the results back on G's device."""
    ad, x = adapt(G)
    x = ad.prepare(x)
    dev = ad.device(x)
    origin = None
    if dev[0] == "cuda":
        origin = (ad, dev, x)
        ad, x = adapt(_to_host(ad, x))
    shape = tuple(ad.shape(x))
    if len(shape) < 2:
        raise ValueError(f"{where}: expected an array of at least 2 dimensions (..., m, n), "
                         f"got shape {shape}")
    x, name = promote(ad, x, where)
    if not isinstance(x, np.ndarray):
        x = np.asarray(x)
    m, n = shape[-2:]
    if m < n:
        raise ValueError(f"{where}: G has shape {shape}: the hyperbolic SVD needs m >= n (a tall "
                         "or square factor, J acting on its n columns)")
    return x, name, origin


def _int_array(val, what, where):
    a = np.asarray(val)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{where}: {what} must be an int or an array of ints, got {val!r}")
    return a.astype(np.int64)


def signature(nplus, signs, bshape, n, where, default_plus=False):
    """(nplus (bshape) int32, perm (bshape + (n,)) or None, out_signs
    (bshape + (n,)) int8). perm is None for the nplus form (the identity).
    default_plus: neither given means J = I (nplus = n); otherwise that is a
    TypeError."""
    if nplus is not None and signs is not None:
        raise TypeError(f"{where}: pass nplus or signs, not both")
    perm = None
    if signs is not None:
        s = np.asarray(signs)
        if s.dtype.kind not in "iuf" or s.ndim == 0:
            raise TypeError(f"{where}: signs must be an array of +1 and -1 (shape (n,) or "
                            f"(..., n)), got {signs!r}")
        if not np.all((s == 1) | (s == -1)):
            raise ValueError(f"{where}: signs must hold only +1 and -1")
        try:
            s = np.broadcast_to(s, bshape + (n,))
        except ValueError:
            raise ValueError(f"{where}: signs of shape {s.shape} does not match the batch "
                             f"{bshape} and n = {n} (expected (n,) or (..., n))") from None
        neg = s < 0
        perm = np.argsort(neg, axis=-1, kind="stable")
        np_ = n - np.count_nonzero(neg, axis=-1)
    elif nplus is not None:
        if _is_int(nplus):
            np_ = np.full(bshape, int(nplus), np.int64)
        else:
            a = _int_array(nplus, "nplus", where)
            try:
                np_ = np.broadcast_to(a, bshape)
            except ValueError:
                raise ValueError(f"{where}: nplus of shape {a.shape} does not match the batch "
                                 f"shape {bshape} (one per matrix, or one int)") from None
        bad = (np_ < 0) | (np_ > n)
        if np.any(bad):
            raise ValueError(f"{where}: nplus must be in 0 ... n = {n}, got "
                             f"{int(np.asarray(np_)[bad].flat[0])}")
    elif default_plus:
        np_ = np.full(bshape, n, np.int64)
    else:
        raise TypeError(f"{where}: the signature is missing: pass nplus (the number of leading "
                        "+1 entries of J, an int or one per matrix) or signs (a +-1 vector)")
    np_ = np.array(np.broadcast_to(np_, bshape), dtype=np.int32)  # ascontiguousarray: ndim >= 1
    out = np.where(np.arange(n) < np_[..., None], 1, -1).astype(np.int8)
    return np_, perm, out


def hsvd_options(backend, tol, max_sweeps, ordering, num_threads, name, where):
    """The native Options of an HSVD call (every option checked; variant,
    block size and preconditioning are not options of the HSVD)."""
    # Host data: no stream, so no adapter is asked for one.
    kw = dict(backend=backend, tol=tol, max_sweeps=max_sweeps, ordering=ordering,
              num_threads=num_threads)
    return options(kw, ("cpu", 0), None, name, where)


# ---------------------------------------------------------------------------
# the solve

def solve(x, name, nplus, perm, compute_uv, opts, where):
    """The HSVD of a NumPy batch x (..., m, n) in a supported dtype, with
    nplus (batch shape, int32) and perm (None or batch + (n,)): (U, S, Vh,
    info, sweeps, path), U and Vh None without compute_uv, Vh in x's column
    order."""
    *bshape, m, n = x.shape
    bshape = tuple(bshape)
    batch = math.prod(bshape)
    if batch > 2**31 - 1:
        raise ValueError(f"{where}: batch of {batch} matrices is more than the library's int")
    rname = REAL_OF[name]
    S = np.zeros(bshape + (n,), rname)
    info, sweeps, path = (np.zeros(bshape, np.int32) for _ in range(3))
    # The library's U (m x n) and V (n x n) column-major: Ut[b] holds U^T,
    # Vt[b] holds V^T, row-major.
    Ut = np.zeros(bshape + (n, m), name) if compute_uv else None
    Vt = np.zeros(bshape + (n, n), name) if compute_uv else None
    if batch > 0 and n > 0:
        if perm is not None:
            x = np.take_along_axis(x, perm[..., None, :], axis=-1)
        # G column-major, as the signature acts on G's columns: G^T row-major.
        Gt = np.ascontiguousarray(np.swapaxes(x, -1, -2)).reshape(batch, n, m)
        St = S.reshape(batch, n)
        Ub = Ut.reshape(batch, n, m) if compute_uv else None
        Vb = Vt.reshape(batch, n, n) if compute_uv else None
        st, msg = _bsvd.hsvd_strided(Gt, m, n, nplus.reshape(batch), m, m * n, St, n, Ub, m,
                                     m * n, Vb, n, n * n, info.reshape(batch),
                                     sweeps.reshape(batch), path.reshape(batch), batch, opts)
        if st:
            _raise_status(st, msg, where)
    if not compute_uv:
        return None, S, None, info, sweeps, path
    U = np.swapaxes(Ut, -1, -2)
    Vh = Vt if name.startswith("float") else np.conjugate(Vt, out=Vt)  # Vh = conj(V^T)
    if perm is not None and batch > 0 and n > 0:
        inv = np.argsort(perm, axis=-1)
        Vh = np.take_along_axis(Vh, inv[..., None, :], axis=-1)
    return U, S, Vh, info, sweeps, path


def report(info, max_sweeps, check_finite, warn, where):
    """Warnings (NonFiniteError for check_finite) for the matrices that did
    not converge, held NaN / Inf or broke down."""
    count = info.size
    nc = int(np.count_nonzero(info > 0))
    nf = int(np.count_nonzero(info == _bsvd.INFO_NONFINITE))
    if nc or nf:
        _report(nc, nf, count, max_sweeps, check_finite, warn, where)
    nb = int(np.count_nonzero(info == _bsvd.INFO_HYPERBOLIC_BREAKDOWN))
    if nb and warn:
        warnings.warn(
            f"{where}: {nb} of {count} matrices violate rank(G) = rank(G J G^H) (info -2): two "
            "columns of opposite signs stayed parallel with equal norms, so their results are "
            "the last iterate, not a hyperbolic SVD", HyperbolicBreakdownWarning,
            stacklevel=stacklevel())


def checked_call(G, nplus, signs, compute_uv, kw, where, default_plus=False):
    """Arguments checked, the solve, the report: (x, U, S, Vh, out_signs,
    perm or None, HSVDInfo, origin), NumPy arrays (origin: host_matrices')."""
    x, name, origin = host_matrices(G, where)
    *bshape, m, n = x.shape
    bshape = tuple(bshape)
    nplus_arr, perm, out_signs = signature(nplus, signs, bshape, n, where, default_plus)
    check_finite = check_flag(kw["check_finite"], "check_finite", where)
    warn = check_flag(kw["warn"], "warn", where)
    opts = hsvd_options(kw["backend"], kw["tol"], kw["max_sweeps"], kw["ordering"],
                        kw["num_threads"], name, where)
    U, S, Vh, info, sweeps, path = solve(x, name, nplus_arr, perm, compute_uv, opts, where)
    report(info, kw["max_sweeps"], check_finite, warn, where)
    return x, U, S, Vh, out_signs, perm, HSVDInfo(info, sweeps, path), origin


_KW = dict(tol=None, max_sweeps=None, backend=DEFAULT_BACKEND, check_finite=False, warn=True,
           ordering=DEFAULT_ORDERING, num_threads=0)


def hsvd(G, nplus=None, *, signs=None, compute_uv=True, tol=None, max_sweeps=None,
         backend=DEFAULT_BACKEND, return_info=False, check_finite=False, warn=True,
         ordering=DEFAULT_ORDERING, num_threads=0):
    """Hyperbolic SVD of a stack of matrices G (..., m, n), m >= n, with the
    signature J = diag(j), j a +-1 vector over G's columns:

        G = U @ diag(S) @ Vh,   U^H U = I,   Vh @ diag(j) @ Vh^H = diag(signs)

    (docs/hsvd.md). The eigenvalues of H = G J G^H are signs * S**2 (and
    m - n zeros) with eigenvectors U: bsvd.eigh_factored.

    The signature, one of:
      nplus  J = diag(I_nplus, -I_(n-nplus)): an int, or one per matrix
             (an array of the batch shape, or broadcastable to it);
      signs  the +-1 diagonal of J, shape (n,) (shared) or (..., n) (per
             matrix). The columns are partitioned by a stable permutation
             perm (+1 columns first); Vh is returned in G's column order, so
             G = U @ diag(S) @ Vh holds as written, and
             G[..., perm] = U @ diag(S) @ Vh[..., perm] is the partitioned form.

    Returns HSVDResult(U (..., m, n), S (..., n), Vh (..., n, n), signs
    (..., n) int8, perm (..., n)); S real, non-negative, the +1 side first
    and each side descending, signs the +-1 of each value (J in the output
    order), perm the columns of G in that order (arange(n) for the nplus
    form). Vh is J-unitary (V = Vh^H is the V of the C API). compute_uv=False:
    HSVDValues(S, signs). return_info=True appends an HSVDInfo (info 0, >0
    not converged, -1 NaN/Inf, -2 the rank condition rank(G) = rank(G J G^H)
    failed; sweeps, path).

    Host arrays (NumPy, or what numpy.asarray takes) give NumPy results;
    CUDA arrays (PyTorch, CuPy, JAX) give results of their library on their
    device, through one round trip in host memory. Integer and bool input is promoted to float64, float16 to
    float32. Options as bsvd.svd's (tol, max_sweeps, backend, check_finite,
    warn, ordering, num_threads); NaN / Inf give a NonFiniteWarning (info
    -1, outputs NaN), non-convergence a ConvergenceWarning, a breakdown a
    HyperbolicBreakdownWarning (warn=False silences them).
    """
    where = "bsvd.hsvd"
    compute_uv = check_flag(compute_uv, "compute_uv", where)
    return_info = check_flag(return_info, "return_info", where)
    kw = dict(tol=tol, max_sweeps=max_sweeps, backend=backend, check_finite=check_finite,
              warn=warn, ordering=ordering, num_threads=num_threads)
    x, U, S, Vh, out_signs, perm, info, origin = checked_call(G, nplus, signs, compute_uv, kw,
                                                              where)
    S, out_signs = to_device(S, origin), to_device(out_signs, origin)
    if not compute_uv:
        return HSVDValuesInfo(S, out_signs, info) if return_info else HSVDValues(S, out_signs)
    n = x.shape[-1]
    if perm is None:
        perm = np.broadcast_to(np.arange(n), x.shape[:-2] + (n,)).copy()
    U, Vh, perm = to_device(U, origin), to_device(Vh, origin), to_device(perm, origin)
    if return_info:
        return HSVDInfoResult(U, S, Vh, out_signs, perm, info)
    return HSVDResult(U, S, Vh, out_signs, perm)


def hsvd_batch(matrices, nplus=None, *, signs=None, compute_uv=True, return_info=False,
               **kwargs):
    """HSVD of a list of 2-D matrices of different shapes (m_i >= n_i):
    nplus a list of ints (or one int for all), or signs a list of +-1
    vectors (n_i each). Matrices of one shape and dtype are solved in one
    strided call. Returns HSVDResult of lists (HSVDValues with
    compute_uv=False), and an HSVDInfo of shape (len,) with return_info=True.
    Options as hsvd()."""
    where = "bsvd.hsvd_batch"
    if not isinstance(matrices, (list, tuple)):
        raise TypeError(f"{where}: expects a list of 2-D arrays, got {type(matrices).__name__}")
    unknown = set(kwargs) - set(_KW)
    if unknown:
        raise TypeError(f"{where}: unexpected argument {sorted(unknown)[0]!r}")
    kw = dict(_KW, **kwargs)
    compute_uv = check_flag(compute_uv, "compute_uv", where)
    return_info = check_flag(return_info, "return_info", where)
    count = len(matrices)
    if nplus is not None and signs is not None:
        raise TypeError(f"{where}: pass nplus or signs, not both")
    per = signs if signs is not None else nplus
    if per is None:
        raise TypeError(f"{where}: the signature is missing: pass nplus (a list of ints, or an "
                        "int) or signs (a list of +-1 vectors)")
    if signs is not None or not _is_int(per):
        if not isinstance(per, (list, tuple, np.ndarray)) or len(per) != count:
            what = "signs" if signs is not None else "nplus"
            raise ValueError(f"{where}: {what} must be a list of {count} entries, one per "
                             "matrix" + ("" if signs is not None else " (or one int)"))
    else:
        per = [per] * count
    if isinstance(per, np.ndarray):
        per = list(per)
    xs = [host_matrices(a, where) for a in matrices]
    for i, (x, _, _) in enumerate(xs):
        if x.ndim != 2:
            raise ValueError(f"{where}: matrices of a list must be 2-D, matrix {i} has shape "
                             f"{x.shape}")
    groups = {}
    for i, (x, name, _) in enumerate(xs):
        groups.setdefault((x.shape, name), []).append(i)
    outs = [None] * count
    infos = np.zeros((3, count), np.int32)
    for (shape, name), idx in groups.items():
        stack = np.stack([xs[i][0] for i in idx])
        sig = [np.asarray(per[i]) for i in idx]
        want = (shape[1],) if signs is not None else ()
        for i, s in zip(idx, sig):
            if s.shape != want:
                raise ValueError(f"{where}: the signature of matrix {i} has shape {s.shape}, "
                                 f"expected {want}")
        g_np, g_s = (None, np.stack(sig)) if signs is not None else (np.stack(sig), None)
        x, U, S, Vh, out_signs, perm, info, _ = checked_call(stack, g_np, g_s, compute_uv, kw,
                                                              where)
        if perm is None:
            perm = np.broadcast_to(np.arange(shape[1]), (len(idx), shape[1]))
        for j, i in enumerate(idx):
            back = [U[j], S[j], Vh[j], out_signs[j], perm[j].copy()] if compute_uv \
                else [S[j], out_signs[j]]
            outs[i] = tuple(to_device(a, xs[i][2]) for a in back)
        infos[:, idx] = info.info, info.sweeps, info.path
    fields = list(zip(*outs)) if count else [[]] * (5 if compute_uv else 2)
    fields = [list(f) for f in fields]
    if compute_uv:
        res = fields + [HSVDInfo(*infos)] if return_info else fields
        return (HSVDInfoResult if return_info else HSVDResult)(*res)
    res = fields + [HSVDInfo(*infos)] if return_info else fields
    return (HSVDValuesInfo if return_info else HSVDValues)(*res)
