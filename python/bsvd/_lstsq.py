"""bsvd.lstsq, bsvd.pinv and bsvd.matrix_rank: least squares, the
pseudo-inverse and the numerical rank of stacks of matrices from one batched
call of bsvd.svd(A, full_matrices=False), for NumPy, PyTorch, CuPy and JAX
arrays, with numpy.linalg's conventions (torch.linalg's for tensors).

Everything around the SVD is a handful of the caller's own array
operations (_xp.py), so it runs where the SVD runs: NumPy on the CPU
backend, CUDA tensors and CuPy / JAX arrays on their GPU (on the caller's
stream: nothing waits, except where a result's shape depends on the data,
as torch.linalg.lstsq and numpy.linalg.lstsq also wait there).

The solution is LAPACK gelsd's, the minimum-norm least-squares solution:

    A = U diag(s) V^H  (reduced),   r = #{i : s_i > rcond * s_1}
    x = V diag(1/s_1, ..., 1/s_r, 0, ..., 0) U^H b

right for any rank; singular values at or below the cut are treated as
zero, exactly as gelsd does ("S(i) <= RCOND*S(1) are treated as zero").
"""
from __future__ import annotations

import inspect
import math
import numbers
from typing import Any, NamedTuple

import numpy as np

from . import _bsvd, _xp
from ._frameworks import REAL_OF

DRIVERS = ("gelsd", "gelss", "gelsy", "gels")


class _NoValueType:
    """numpy.linalg.pinv tells rtol=None (the array API's default) from rtol
    not given (NumPy's 1e-15); this marks "not given"."""

    def __repr__(self):
        return "<no value>"


_NoValue = _NoValueType()


class LstsqResult(NamedTuple):
    """numpy.linalg.lstsq's results (x, residuals, rank, s); for torch
    tensors bsvd.lstsq returns torch.return_types.linalg_lstsq (solution,
    residuals, rank, singular_values) instead."""
    x: Any
    residuals: Any
    rank: Any
    s: Any


class _TorchLstsq(NamedTuple):
    # torch.return_types.linalg_lstsq's fields, for a torch without it.
    solution: Any
    residuals: Any
    rank: Any
    singular_values: Any


_SVD_OPTIONS = None


def _svd_options(options, where):
    """The keywords of bsvd.svd that the functions here pass on (tol,
    max_sweeps, backend, check, warn, ...); anything else is refused with
    the caller's name, not bsvd.svd's."""
    global _SVD_OPTIONS
    if _SVD_OPTIONS is None:
        from . import svd
        skip = {"A", "full_matrices", "compute_uv", "hermitian", "return_info"}
        _SVD_OPTIONS = frozenset(inspect.signature(svd).parameters) - skip
    for key in options:
        if key not in _SVD_OPTIONS:
            raise TypeError(f"{where}: unexpected argument {key!r}")
    return options


def _reduced_svd(A, options, where):
    from . import svd
    return svd(A, full_matrices=False, **_svd_options(options, where))


def _svdvals(A, options, where):
    from . import svdvals
    return svdvals(A, **_svd_options(options, where))


def _wrap_of(x):
    """numpy.linalg returns the input's ndarray subclass (np.matrix): its
    __array_wrap__, or None."""
    if isinstance(x, np.ndarray) and type(x) is not np.ndarray:
        return x.__array_wrap__
    return None


def _one(ops, x, where, argname="A"):
    """(ops, array, wrap) of one input, in a dtype bsvd computes in."""
    wrap = _wrap_of(x) if ops.name == "numpy" else None
    x = ops.asarray(x)
    if len(x.shape) < 2:
        raise np.linalg.LinAlgError(
            f"{where}: {argname} must have at least 2 dimensions (..., m, n), got shape "
            f"{tuple(x.shape)}")
    name = _xp.compute_dtype(ops, (ops.dtype_name(x),), where)
    return ops.astype(x, name), name, wrap


def _check_tol(value, argname, where):
    """A tolerance: a real number >= 0, or an array of them (NumPy arrays
    are checked here; device arrays are taken as they are: checking would
    wait for the device)."""
    if value is None:
        return None
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        if not value >= 0:  # also refuses NaN
            raise ValueError(f"{where}: {argname} must be >= 0, got {value}")
        return float(value)
    if isinstance(value, bool) or isinstance(value, (str, bytes)):
        raise TypeError(f"{where}: {argname} must be a real number or an array of them, not "
                        f"{type(value).__name__}")
    if isinstance(value, (np.ndarray, list, tuple)):
        arr = np.asarray(value)
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"{where}: {argname} must be real, got dtype {arr.dtype}")
        if arr.size and not (arr >= 0).all():
            raise ValueError(f"{where}: {argname} must be >= 0 (and not NaN)")
    return value


def _tol_array(ops, value, like):
    """A tolerance as something that broadcasts against the batch (...,)
    with a trailing axis for the singular values: a number, or an array
    (..., 1) in the caller's library."""
    if isinstance(value, float):
        return value
    if ops.name == "torch":
        t = ops.t
        v = value if isinstance(value, t.Tensor) else t.as_tensor(value)
        return v.to(device=like.device, dtype=like.dtype)[..., None]
    return ops.asarray(value).astype(like.dtype)[..., None]


def _cut(ops, S, rtol, atol):
    """keep = s_i > max(atol, rtol * s_1) per matrix: the singular values
    that count (S descending; s_1 of an empty S is 0)."""
    smax = S[..., :1] if S.shape[-1] else S
    tol = rtol * smax if not (isinstance(rtol, float) and rtol == 0.0) else smax * 0
    if atol is not None and not (isinstance(atol, float) and atol == 0.0):
        tol = ops.maximum(tol, atol)
    return S > tol


def _inverse_values(ops, S, keep):
    """1/s_i where kept, else 0. The inner where keeps 1/0 out of both the
    values and (for torch autograd) the gradient of the dropped ones."""
    one = S * 0 + 1
    return ops.where(keep, 1 / ops.where(keep, S, one), S * 0)


def _concrete_int(x):
    """int(x), or None where the value is not known yet (a JAX tracer)."""
    try:
        return int(x)
    except Exception:  # jax.errors.ConcretizationTypeError and its kin
        return None


# ---------------------------------------------------------------------------
# lstsq

def _driver(driver, where):
    if driver is None:
        return "gelsd"
    if driver not in DRIVERS:
        raise ValueError(f"{where}: driver must be one of {', '.join(DRIVERS)} or None, got "
                         f"{driver!r}")
    return driver


def _rcond(rcond, torch, name, m, n, where):
    """The cut ratio: None -> eps * max(m, n) (NumPy's and torch's default);
    a negative value means machine precision for NumPy-API arrays (as
    numpy.linalg.lstsq documents, after LAPACK) and is refused for tensors
    (torch documents no meaning for it)."""
    eps = _xp.eps(name)
    if rcond is None:
        return eps * max(m, n)
    if isinstance(rcond, bool) or not isinstance(rcond, numbers.Real):
        raise TypeError(f"{where}: rcond must be a real number or None, not "
                        f"{type(rcond).__name__}")
    if rcond != rcond:
        raise ValueError(f"{where}: rcond must be a number, got NaN")
    if rcond < 0:
        if torch:
            raise ValueError(f"{where}: rcond must be >= 0 (None: eps * max(m, n)), got {rcond}")
        return eps
    return float(rcond)


def _pair(A, B, where):
    """(ops, A, B, wrap): both inputs in one library (and, for tensors and
    CuPy arrays, on one device)."""
    la, lb = _xp.library(A), _xp.library(B)
    if la != lb:
        raise TypeError(f"{where}: B is a {lb} array but A is a {la} array: pass both in one "
                        "array library (and on one device)")
    ops = _xp.namespace(la)
    wrap = _wrap_of(B) if la == "numpy" else None
    A, B = ops.asarray(A), ops.asarray(B)
    if la in ("torch", "cupy") and ops.device(A) != ops.device(B):
        raise ValueError(f"{where}: B is on {ops.device(B)} but A is on {ops.device(A)}: "
                         "move B to A's device")
    return ops, A, B, wrap


def _shapes(ops, A, B, where):
    """(m, n, vector, batch shape): the vector case by the library's rule
    (NumPy >= 2: B 1-D; torch: B with one dimension fewer than A)."""
    a_shape, b_shape = tuple(A.shape), tuple(B.shape)
    if len(a_shape) < 2:
        raise np.linalg.LinAlgError(
            f"{where}: A must have at least 2 dimensions (..., m, n), got shape {a_shape}")
    m, n = a_shape[-2:]
    if ops.name == "torch":
        diff = len(a_shape) - len(b_shape)
        if diff not in (0, 1):
            raise ValueError(f"{where}: B must have as many dimensions as A (right-hand sides "
                             f"(..., m, k)) or one fewer (vectors (..., m)); got A {a_shape}, "
                             f"B {b_shape}")
        vector = diff == 1
    else:
        if len(b_shape) == 0:
            raise np.linalg.LinAlgError(f"{where}: B must be (m,) or (..., m, k), got a scalar")
        vector = len(b_shape) == 1
    rows = b_shape[-1] if vector else b_shape[-2]
    if rows != m:
        raise np.linalg.LinAlgError(
            f"{where}: Incompatible dimensions: B has {rows} rows but A has {m} (A {a_shape}, "
            f"B {b_shape})")
    b_batch = b_shape[:-1] if vector else b_shape[:-2]
    try:
        batch = np.broadcast_shapes(a_shape[:-2], b_batch)
    except ValueError:
        raise np.linalg.LinAlgError(f"{where}: the batch dimensions of A {a_shape[:-2]} and B "
                                    f"{b_batch} do not broadcast") from None
    return m, n, vector, batch


def lstsq(A, B, rcond=None, *, driver=None, check_finite=False, **options):
    """Least-squares solutions of A x = B for a stack of matrices: the
    minimum-norm x minimizing ||B - A x||_2, for any rank of A, as
    numpy.linalg.lstsq (LAPACK gelsd), batched, on the CPU and CUDA
    backends; torch.linalg.lstsq's conventions for tensors.

        x, residuals, rank, s = bsvd.lstsq(A, B)          # NumPy, CuPy, JAX
        sol = bsvd.lstsq(A_t, B_t); sol.solution           # torch tensors

    A: (..., m, n); B: (m,) or (..., m, k) (NumPy's rule since NumPy 2:
    only a 1-D B is a vector; torch: B of one dimension fewer than A,
    (..., m), is the vector case); batch dimensions broadcast. One
    bsvd.svd(A, full_matrices=False) call, then
    x = V diag(1/s_i for s_i > rcond * s_1, else 0) U^H B in the caller's
    library, on its device.

    rcond: singular values s_i <= rcond * s_1 count as zero. None (default):
    eps * max(m, n) of the computing dtype. Negative: machine precision for
    NumPy-API arrays (numpy.linalg.lstsq's documented -1); a ValueError for
    tensors. driver: 'gelsd' (default, on the GPU too, where torch has only
    'gels'), 'gelss' (the same SVD solution), 'gelsy' (the same solution;
    for tensors only solution and rank are filled, as torch does);
    'gels' (Householder QR or LQ and a triangular solve, one batched
    bsvd gels call: A of full rank only -- a matrix whose triangular factor
    has an exact zero pivot raises numpy.linalg.LinAlgError; nearly rank
    deficient A give what the tiny pivot implies, as LAPACK's gels; rank
    and singular values are empty arrays, as torch's gels; not
    differentiable, not traceable by JAX). check_finite: raise
    bsvd.NonFiniteError (a ValueError) naming A or B when either holds NaN
    or Inf (waits for device arrays). options: bsvd.svd's keywords (tol,
    max_sweeps, backend, warn, check, ...).

    Returns, NumPy-API arrays: LstsqResult(x, residuals, rank, s) (a tuple
    as numpy returns). x: (..., n) or (..., n, k). residuals: the squared
    2-norms of the columns of B - A x, (k,) ((1,) for a 1-D B) when m > n,
    else empty (0,); for one matrix (A and B at most 2-D) they are filled
    only when rank == n, else empty, as NumPy; for a stack they are filled
    per matrix, NaN where that matrix has rank < n (what NumPy's own
    stacked kernel returns). rank: int32 (a NumPy scalar for one matrix).
    s: (..., min(m, n)), descending. Promotion as numpy.linalg (integer
    input as float64, float32 with float32 stays float32, complex if either
    is); the x of an np.matrix B is a matrix.

    Torch tensors: torch.return_types.linalg_lstsq(solution, residuals,
    rank, singular_values) with torch's rules: A and B of one dtype and
    device; residuals (..., k) when m > n and every matrix has rank n
    ('gelsy': never), else empty; rank (int64, the batch's shape) for
    'gelsd', 'gelss', 'gelsy', else empty; singular_values for 'gelsd' and
    'gelss', else empty. Differentiable (through bsvd.svd's backward) where
    A has full rank.

    Non-finite input: no exception unless check_finite. A matrix of A that
    holds NaN or Inf gets NaN x and s, rank 0 and NaN residuals (stacks),
    with bsvd.svd's NonFiniteWarning on host arrays; a NaN in B makes NaN
    only the x and residuals of its matrix. The rest of the batch is
    unaffected. m == 0 gives x = 0; k == 0 gives empty x and residuals.
    """
    where = "bsvd.lstsq"
    ops, A, B, wrap = _pair(A, B, where)
    torch = ops.name == "torch"
    driver = _driver(driver, where)
    m, n, vector, batch = _shapes(ops, A, B, where)
    na, nb = ops.dtype_name(A), ops.dtype_name(B)
    if torch and na != nb:
        raise TypeError(f"{where}: B has dtype {nb} but A has {na}: torch.linalg.lstsq takes "
                        "them in one dtype (B.to(A.dtype))")
    name = _xp.compute_dtype(ops, (na, nb), where)
    A, B = ops.astype(A, name), ops.astype(B, name)
    rc = _rcond(rcond, torch, name, m, n, where)
    if check_finite:
        from . import NonFiniteError
        for argname, X in (("A", A), ("B", B)):
            if not ops.isfinite_all(X):
                raise NonFiniteError(f"{where}: {argname} contains NaN or Inf")
    one_matrix = len(A.shape) == 2 and len(B.shape) <= 2
    if vector:
        B = B[..., None]
    if driver == "gels":
        X, res = _gels(ops, A, B, m, n, tuple(batch), name, options, where)
        return _gels_result(ops, A, X, res, vector, wrap, name)
    k = min(m, n)

    U, S, Vh = _reduced_svd(A, options, where)
    keep = _cut(ops, S, rc, None)
    with np.errstate(invalid="ignore", over="ignore"):  # NaN / Inf in B: its column is NaN
        C = ops.mH(U) @ B                               # (..., k, nrhs)
        X = ops.mH(Vh) @ (_inverse_values(ops, S, keep)[..., None] * C)
    rank = ops.count(keep)
    if tuple(rank.shape) != tuple(batch):
        rank = ops.broadcast_to(rank, batch)
        S = ops.broadcast_to(S, tuple(batch) + (k,))
    rname = REAL_OF[name]

    if torch:
        return _torch_result(ops, A, B, X, S, rank, m, n, vector, driver, rname)
    res = _residuals(ops, A, B, X, rank, m, n, one_matrix, rname)
    if one_matrix and ops.name == "numpy":
        rank = np.int32(rank)
    else:
        rank = ops.to_int(rank, "int32")
    if vector:
        X = X[..., 0]
    if wrap is not None:
        X, res = wrap(X), wrap(res)
    return LstsqResult(X, res, rank, S)


def _gels(ops, A, B, m, n, batch, name, options, where):
    """driver='gels': x (..., n, k) and, when m > n, the residuals (..., k)
    from one bsvd_<p>gels_strided_batched call (Householder QR or LQ and a
    triangular solve, python/src/gels.cpp); raises LinAlgError naming the
    matrices whose triangular factor has a zero pivot (rank deficient).

    The library solves op(M) X = B with M column-major, by the QR of M
    when M is tall (its fast path: a warp per column in each reflector's
    GEMV): for m >= n, M = A (the C-contiguous (..., n, m) array A^T) with
    op N; for m < n, M = A^H (the C-contiguous (..., m, n) array conj(A))
    with op C, the minimum-norm problem. B goes in as its transpose
    (..., k, max(m, n)), zero-padded: each right-hand side a contiguous
    column of ldb = max(m, n) entries, the rows X needs."""
    from . import _OPTION_DEFAULTS, _host, _prepared, _raise_status
    from ._args import check_mode, device_option
    from ._frameworks import jax_tracer_type
    import sys
    torch = ops.name == "torch"
    if torch and (A.requires_grad or B.requires_grad) and ops.t.is_grad_enabled():
        raise NotImplementedError(f"{where}: driver='gels' is not differentiable; use "
                                  "driver='gelsd' (the default) or call it under torch.no_grad()")
    if "jax" in sys.modules and any(isinstance(x, jax_tracer_type()) for x in (A, B)):
        raise TypeError(f"{where}: driver='gels' cannot be traced (jax.jit, vmap, grad): it "
                        "calls the library eagerly; use driver='gelsd' (the default)")
    kw = dict(_OPTION_DEFAULTS)
    kw.update(options)
    kw["check"] = check_mode(kw["check"], False, where)
    kw["devices"] = device_option(kw["devices"], where)
    k, big = int(B.shape[-1]), max(m, n)
    cplx = name.startswith("complex")
    A = ops.broadcast_to(A, batch + (m, n))
    Bt = ops.moveaxis(ops.broadcast_to(B, batch + (m, k)), -1, -2)
    tall = m >= n
    if torch:
        t = ops.t
        M = A.mT if tall else (t.conj_physical(A) if cplx else A)
        pad = t.zeros(batch + (k, big - m), dtype=A.dtype, device=A.device)
        M, Bp = M.contiguous(), t.cat([Bt, pad], -1).contiguous()
    else:
        xp = ops.xp
        M = ops.moveaxis(A, -1, -2) if tall else (xp.conj(A) if cplx else A)
        Bp = xp.concatenate([Bt, xp.zeros(batch + (k, big - m), dtype=name)], axis=-1)
        if ops.name != "jax":  # (a JAX array's buffer is always C-contiguous)
            M, Bp = xp.ascontiguousarray(M), xp.ascontiguousarray(Bp)
    count = math.prod(batch)
    if count > 2**31 - 1:
        raise ValueError(f"{where}: a batch of {count} matrices is more than the library's int")
    ad, M, _, device, opts = _prepared(M, kw, where)
    Bp = ad.prepare(Bp)
    Af = ad.empty(tuple(M.shape), name, device)
    X = ad.empty(tuple(Bp.shape), name, device)
    if count > 0:
        dinfo = ad.empty((count,), "int32", device)
        ad.sync_input(M)
        ad.sync_input(Bp)
        ex = ad.export
        op, lm, ln = (_bsvd.OP_N, m, n) if tall else (_bsvd.OP_C, n, m)
        st, msg = _bsvd.gels_strided(ex(M), ex(Bp), ex(Af), ex(X), op, lm, ln, k, max(big, 1),
                                     ex(dinfo), count, opts)
        _raise_status(st, msg, where)
        info = _host(ad.finish(dinfo, (count,))).reshape(count)
        bad = np.flatnonzero(info > 0)
        if bad.size:
            raise np.linalg.LinAlgError(
                f"{where}: driver='gels' needs A of full rank, but {bad.size} of {count} "
                f"matrices are rank deficient (the first, matrix {int(bad[0])} of the flattened "
                f"batch, has a zero pivot at {int(info[bad[0]])}); driver='gelsd' (the default) "
                "solves any rank")
    X = ad.finish(X, tuple(Bp.shape))
    Xs = ops.moveaxis(X[..., :n], -1, -2)
    res = None
    if m > n:
        with np.errstate(invalid="ignore", over="ignore"):
            res = ops.reduce_sum(ops.abs2(X[..., n:m]), -1)
    return Xs, res


def _gels_result(ops, A, X, res, vector, wrap, name):
    """lstsq's results for driver='gels': x and the residuals (when m > n;
    A has full rank, or _gels raised); no rank or singular values (empty),
    as torch.linalg.lstsq's gels."""
    rname = REAL_OF[name]
    if vector:
        X = X[..., 0]
    if ops.name == "torch":
        t = ops.t
        empty_real = t.empty(0, dtype=getattr(t, rname), device=A.device)
        fields = (X, res if res is not None else empty_real,
                  t.empty(0, dtype=t.int64, device=A.device), empty_real)
        cls = getattr(t.return_types, "linalg_lstsq", None)
        return cls(fields) if cls is not None else _TorchLstsq(*fields)
    if res is None:
        res = ops.zeros((0,), rname, A)
    rank = ops.zeros((0,), "int32", A)
    if wrap is not None:
        X, res = wrap(X), wrap(res)
    return LstsqResult(X, res, rank, ops.zeros((0,), rname, A))


def _residuals(ops, A, B, X, rank, m, n, one_matrix, rname):
    """NumPy's residuals: sum |B - A x|^2 over the rows when m > n, for
    one matrix only when rank == n (else empty); per matrix for stacks,
    NaN where rank < n. The columns of B - A x directly: ||B||^2 - ||U^H
    B||^2 would cancel."""
    if m <= n:
        return ops.zeros((0,), rname, A)
    with np.errstate(invalid="ignore", over="ignore"):
        res = ops.reduce_sum(ops.abs2(B - A @ X), -2)
    if one_matrix:
        r = _concrete_int(rank)
        if r is not None:
            return res if r == n else ops.zeros((0,), rname, A)
    full = rank[..., None] == n
    return ops.where(full, res, res * math.nan)


def _torch_result(ops, A, B, X, S, rank, m, n, vector, driver, rname):
    """torch.linalg.lstsq's fields per driver: residuals when m > n and
    every matrix has rank n (not for 'gelsy'); rank for the rank-revealing
    drivers; singular values for the SVD drivers."""
    t = ops.t
    empty_real = t.empty(0, dtype=getattr(t, rname), device=A.device)
    res = empty_real
    if m > n and driver != "gelsy" and bool((rank == n).all()):
        res = ops.abs2(B - A @ X).sum(dim=-2)
    if driver not in ("gelsd", "gelss", "gelsy"):
        rank = t.empty(0, dtype=t.int64, device=A.device)
    else:
        rank = rank.to(t.int64)
    if driver not in ("gelsd", "gelss"):
        S = empty_real
    if vector:
        X = X[..., 0]
    cls = getattr(t.return_types, "linalg_lstsq", None)
    fields = (X, res, rank, S)
    return cls(fields) if cls is not None else _TorchLstsq(*fields)


# ---------------------------------------------------------------------------
# pinv and matrix_rank

def _rtol_default(rtol, atol, name, m, n):
    """The relative tolerance when none is given: eps * max(m, n), or 0
    where a positive atol is given (torch's and the array API's rule)."""
    if rtol is not None:
        return rtol
    if isinstance(atol, float) and atol > 0 or atol is not None and not isinstance(atol, float):
        return 0.0
    return _xp.eps(name) * max(m, n)


def pinv(A, rcond=None, hermitian=False, *, rtol=_NoValue, atol=None, **options):
    """The Moore-Penrose pseudo-inverse of a stack of matrices, from one
    bsvd.svd call: A+ = V diag(1/s_i for s_i > tol, else 0) U^H, as
    numpy.linalg.pinv (torch.linalg.pinv for tensors).

    A: (..., m, n) -> (..., n, m), in the caller's library on its device.
    tol = max(atol, rtol * s_1) per matrix, singular values <= tol dropped.
    rcond: NumPy's name for rtol (both given: ValueError, as NumPy). rtol
    not given: NumPy-API arrays 1e-15 (NumPy's default), tensors eps *
    max(m, n); rtol=None: eps * max(m, n) (the array API's default); either
    way 0 when a positive atol is given (torch's rule). rcond, rtol and atol
    may be arrays that broadcast against the batch; negative or NaN values
    are a ValueError (NumPy arrays and numbers are checked). hermitian:
    accepted for compatibility; the SVD of the whole of A is used (NumPy's
    eigh path reads one triangle). options: bsvd.svd's keywords.
    Differentiable for tensors of full rank (through bsvd.svd's backward).
    A matrix with NaN or Inf gives a NaN pseudo-inverse, the rest of the
    batch unaffected.
    """
    where = "bsvd.pinv"
    ops = _xp.namespace(_xp.library(A))
    A, name, wrap = _one(ops, A, where)
    m, n = A.shape[-2:]
    if rcond is not None and rtol is not _NoValue:
        raise ValueError(f"{where}: `rtol` and `rcond` can't be both set.")
    if rcond is not None:
        rtol = rcond
    atol = _check_tol(atol, "atol", where)
    if rtol is _NoValue:
        rtol = 1e-15 if ops.name != "torch" and atol is None else None
    rtol = _check_tol(rtol, "rcond" if rcond is not None else "rtol", where)
    rtol = _rtol_default(rtol, atol, name, m, n)

    U, S, Vh = _reduced_svd(A, options, where)
    keep = _cut(ops, S, _tol_array(ops, rtol, S), None if atol is None else
                _tol_array(ops, atol, S))
    P = ops.mH(Vh) @ (_inverse_values(ops, S, keep)[..., None] * ops.mH(U))
    return wrap(P) if wrap is not None else P


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None, atol=None, **options):
    """The numerical rank of a stack of matrices: the number of singular
    values above max(atol, rtol * s_1), as numpy.linalg.matrix_rank
    (torch.linalg.matrix_rank for tensors), from one bsvd.svdvals call.

    tol: NumPy's absolute threshold (then rtol and atol must not be given:
    ValueError, as NumPy). rtol: default eps * max(m, n), or 0 when a
    positive atol is given (torch's rule). Tolerances may be arrays that
    broadcast against the batch; negative or NaN ones are a ValueError.
    hermitian: accepted; the SVD of all of A is used. A of fewer than 2
    dimensions (NumPy-API arrays): 1 unless all zero, as NumPy. Returns an
    integer array of the batch's shape (intp; int64 for tensors; a NumPy
    integer for one matrix). A matrix holding NaN has rank 0 (its singular
    values are NaN) with bsvd.svd's NonFiniteWarning on host arrays.
    options: bsvd.svd's keywords.
    """
    where = "bsvd.matrix_rank"
    ops = _xp.namespace(_xp.library(A))
    if tol is not None and (rtol is not None or atol is not None):
        raise ValueError(f"{where}: `tol` and `rtol` can't be both set.")
    if ops.name != "torch":
        x = ops.asarray(A)
        if len(x.shape) < 2:
            return int(not bool(ops.xp.all(x == 0)))
    A, name, _ = _one(ops, A, where)
    m, n = A.shape[-2:]
    if tol is not None:
        atol, rtol = _check_tol(tol, "tol", where), 0.0
    else:
        atol = _check_tol(atol, "atol", where)
        rtol = _rtol_default(_check_tol(rtol, "rtol", where), atol, name, m, n)
    S = _svdvals(A, options, where)
    keep = _cut(ops, S, _tol_array(ops, rtol, S), None if atol is None else
                _tol_array(ops, atol, S))
    return ops.count(keep)
