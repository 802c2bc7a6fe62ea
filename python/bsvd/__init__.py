"""bsvd: batched singular value decomposition (one-sided Jacobi) on CPUs and
CUDA GPUs, for NumPy, PyTorch, CuPy and JAX arrays.

    U, S, Vh = bsvd.svd(A)          # A: (..., m, n); A = U @ diag(S) @ Vh
    S = bsvd.svdvals(A)
    Us, Ss, Vhs = bsvd.svd([A1, A2, A3])   # matrices of different shapes

NumPy arrays (and CPU tensors) run on the CPU backend; CUDA arrays of
PyTorch, CuPy and JAX run on the CUDA backend on their own device and on the
caller's current stream, and the outputs are arrays of the caller's library
on that device. See python/README.md.
"""
from __future__ import annotations

import math
import os
import sys
import warnings

import numpy as np

from . import _bsvd
from ._frameworks import LETTER, REAL_OF, SUPPORTED, UPCAST, adapt

__all__ = [
    "svd", "svdvals", "plan", "Info", "ConvergenceWarning", "NonFiniteWarning",
    "BackendUnavailableError", "DeviceError", "cuda_available", "cuda_built",
    "__version__",
]

__version__ = _bsvd.version()


class ConvergenceWarning(UserWarning):
    """Some matrices did not converge within max_sweeps (info > 0). Their
    results are returned and are usually still useful."""


class NonFiniteWarning(RuntimeWarning):
    """Some matrices hold NaN or Inf (info == -1); their S, U, Vh are NaN."""


class BackendUnavailableError(RuntimeError):
    """The requested backend is not built into bsvd, or no GPU is visible."""


class DeviceError(RuntimeError):
    """A CUDA call inside the library failed."""


def _enum_names(name_of):
    """{value: name} of a C enum, from its bsvd_<enum>_string: counts up
    from 0 until the library has no name (the names are kept in the library
    alone, src/core/names.cpp)."""
    names = {}
    while (s := name_of(len(names))) is not None:
        names[len(names)] = s
    return names


def _enum_values(name_of):
    """{name: value} of a C enum for parsing arguments; '_' may stand for
    '-' (round_robin), as in bsvd_<enum>_from_string."""
    values = {}
    for v, s in _enum_names(name_of).items():
        values[s] = v
        values[s.replace("-", "_")] = v
    return values


def _one_of(name_of):
    """"'a', 'b' or 'c'": the names of a C enum, for messages."""
    names = [repr(s) for s in _enum_names(name_of).values()]
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]


# Path of each matrix (Info.path): {bsvd_path_t value: name}.
PATH_NAMES = _enum_names(_bsvd.path_string)
_BACKENDS = _enum_values(_bsvd.backend_string)
_ORDERINGS = _enum_values(_bsvd.ordering_string)
_VARIANTS = _enum_values(_bsvd.variant_string)
# The defaults of the keyword arguments (the library's defaults).
_DEFAULT_BACKEND = _bsvd.backend_string(_bsvd.BACKEND_AUTO)
_DEFAULT_ORDERING = _bsvd.ordering_string(_bsvd.ORDERING_ROUND_ROBIN)
_DEFAULT_VARIANT = _bsvd.variant_string(_bsvd.VARIANT_AUTO)
_DEFAULT_MAX_SWEEPS = 80  # the library's default (bsvd_options_t::max_sweeps <= 0)


class Info:
    """Per-matrix results of a call (NumPy arrays on the host, shaped like
    the batch: A.shape[:-2], or (len(list),) for a list input).

    info    int32: 0 converged; > 0 not converged within max_sweeps (the
            result is still returned); -1 NaN or Inf in the input.
    sweeps  int32: sweeps used.
    path    int32: the solver path taken (see PATH_NAMES / path_names).
    """

    __slots__ = ("info", "sweeps", "path")

    def __init__(self, info, sweeps, path):
        self.info = info
        self.sweeps = sweeps
        self.path = path

    @property
    def converged(self):
        """Boolean array: True where info == 0."""
        return self.info == 0

    @property
    def nonfinite(self):
        """Boolean array: True where the input held NaN or Inf."""
        return self.info == _bsvd.INFO_NONFINITE

    @property
    def path_names(self):
        """The paths as strings ('cpu-unblocked', 'cuda-fused', ...)."""
        f = np.vectorize(lambda p: PATH_NAMES.get(int(p), str(int(p))), otypes=[object])
        return f(self.path) if self.path.size else self.path.astype(object)

    def __repr__(self):
        n = self.info.size
        nc = int(np.count_nonzero(self.info > 0))
        nf = int(np.count_nonzero(self.nonfinite))
        ms = int(self.sweeps.max()) if n else 0
        return (f"bsvd.Info(matrices={n}, not_converged={nc}, nonfinite={nf}, "
                f"max_sweeps_used={ms})")


def cuda_available() -> bool:
    """True when the CUDA backend is built in and a GPU is visible."""
    return bool(_bsvd.cuda_available())


def cuda_built() -> bool:
    """True when the extension was compiled with the CUDA backend."""
    return bool(_bsvd.cuda_built())


# ---------------------------------------------------------------------------
# errors and warnings

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))


def _stacklevel():
    """Stack level of the first frame outside bsvd (and torch.autograd), so
    that warnings point at the caller's line."""
    level = 1
    f = sys._getframe(1)
    while f is not None:
        fn = f.f_code.co_filename
        if not (fn.startswith(_PKG_DIR) or f"torch{os.sep}autograd" in fn):
            return level
        f = f.f_back
        level += 1
    return level


def _raise_status(status, message, where="bsvd.svd"):
    if status == 0:
        return
    msg = f"{where}: {message or _bsvd.status_string(status)}"
    if status < 0:
        raise ValueError(msg)
    if status == _bsvd.STATUS_BACKEND_UNAVAILABLE:
        raise BackendUnavailableError(msg)
    if status == _bsvd.STATUS_NOT_SUPPORTED:
        raise NotImplementedError(msg)
    if status == _bsvd.STATUS_ALLOC_FAILED:
        raise MemoryError(msg)
    if status == _bsvd.STATUS_DEVICE_ERROR:
        raise DeviceError(msg)
    raise RuntimeError(f"{msg} (status {status}: {_bsvd.status_string(status)})")


def _report(nc, nf, count, max_sweeps, check_finite, warn, where):
    """Warnings (or ValueError for check_finite) from the native layer's
    counts: nc matrices of count did not converge, nf held NaN or Inf.
    Called only when nc or nf is non-zero."""
    if nf:
        msg = (f"{where}: {nf} of {count} matrices contain NaN or Inf; "
               "their singular values and vectors are NaN")
        if check_finite:
            raise ValueError(msg)
        if warn:
            warnings.warn(msg, NonFiniteWarning, stacklevel=_stacklevel())
    if nc and warn:
        warnings.warn(
            f"{where}: {nc} of {count} matrices did not converge within "
            f"max_sweeps={max_sweeps or _DEFAULT_MAX_SWEEPS} sweeps; their results are returned "
            "(usually still useful). Use return_info=True to see which.",
            ConvergenceWarning, stacklevel=_stacklevel())


# ---------------------------------------------------------------------------
# argument handling

def _options(backend, device, tol, max_sweeps, ordering, variant, block_size,
             eig_sweeps, num_threads, stream, ad, precondition=None):
    try:
        b = _BACKENDS[backend]
    except (KeyError, TypeError):
        raise ValueError(f"bsvd.svd: backend must be {_one_of(_bsvd.backend_string)}, got {backend!r}") from None
    if b == _bsvd.BACKEND_AUTO:
        b = _bsvd.BACKEND_CUDA if device[0] == "cuda" else _bsvd.BACKEND_CPU
    if b == _bsvd.BACKEND_CPU and device[0] == "cuda":
        raise ValueError("bsvd.svd: backend='cpu' needs host arrays, but the input is on a CUDA "
                         "device (move it to the host first, or use backend='auto')")
    try:
        o = _ORDERINGS[ordering]
    except (KeyError, TypeError):
        raise ValueError(f"bsvd.svd: ordering must be {_one_of(_bsvd.ordering_string)}, got {ordering!r}") from None
    try:
        v = _VARIANTS[variant]
    except (KeyError, TypeError):
        raise ValueError(f"bsvd.svd: variant must be {_one_of(_bsvd.variant_string)}, got {variant!r}") from None
    if tol is None:
        tol = 0.0
    tol = float(tol)
    if not (tol < 1.0) or math.isnan(tol):
        raise ValueError(f"bsvd.svd: tol = {tol} must be a number below 1 (None: the default sqrt(m)*eps)")
    if max_sweeps is None:
        max_sweeps = 0
    if eig_sweeps is None:
        eig_sweeps = -1  # BSVD_EIG_SWEEPS_AUTO, the library's default
    for name, val, lo in (("max_sweeps", max_sweeps, 0), ("block_size", block_size, 0),
                          ("eig_sweeps", eig_sweeps, -1), ("num_threads", num_threads, 0)):
        if not isinstance(val, (int, np.integer)) or isinstance(val, bool) or val < lo or val > 2**31 - 1:
            what = "a non-negative int" if lo == 0 else "None, -1 (auto) or a non-negative int"
            raise ValueError(f"bsvd.svd: {name} must be {what}, got {val!r}")
    # precondition: None = 0 = the library's choice (auto), True / 1 = always,
    # False / -1 = never (bsvd_options_t.precondition)
    if precondition is None:
        pc = 0
    elif isinstance(precondition, bool):
        pc = 1 if precondition else -1
    elif isinstance(precondition, (int, np.integer)) and int(precondition) in (-1, 0, 1):
        pc = int(precondition)
    else:
        raise ValueError("bsvd.svd: precondition must be None (auto), True / 1 (always) or "
                         f"False / -1 (never), got {precondition!r}")
    if stream is None:
        stream = ad.stream(device) if b == _bsvd.BACKEND_CUDA and device[0] == "cuda" else 0
    else:
        stream = int(getattr(stream, "cuda_stream", getattr(stream, "ptr", stream)))
    return _bsvd.Options(b, o, v, int(block_size), tol, int(max_sweeps), int(eig_sweeps),
                         int(num_threads), stream, pc)


def _dtype(ad, x, where):
    name = ad.dtype_name(x)
    if name in SUPPORTED:
        return x, name
    if name in UPCAST:
        return ad.astype(x, UPCAST[name]), UPCAST[name]
    raise TypeError(f"{where}: unsupported dtype {name}; bsvd takes float32, float64, complex64 "
                    "and complex128 (float16 and bfloat16 are computed in float32)")


def _matrix_layout(m, n, rs, cs):
    """Column-major description of an m x n matrix whose element (i, j) is at
    i*rs + j*cs: ("T", ld) when the memory holds A^T column-major (row-major
    A: cs == 1), ("N", ld) when it holds A column-major (rs == 1); None when
    neither (a copy is needed)."""
    if n <= 1 or cs == 1:
        ld = rs if m > 1 else max(n, 1)
        if ld >= max(1, n):
            return "T", ld
    if m <= 1 or rs == 1:
        ld = cs if n > 1 else max(m, 1)
        if ld >= max(1, m):
            return "N", ld
    return None


def _batch_stride(bshape, bstrides):
    """One stride that walks every batch dimension in C order, or None."""
    dims = [(s, st) for s, st in zip(bshape, bstrides) if s != 1]
    if not dims:
        return 0
    stride = dims[-1][1]
    expected = stride
    for s, st in reversed(dims):
        if st != expected or st < 0:
            return None
        expected = st * s
    return stride


def _layout(ad, x, bshape, m, n, batch):
    st = ad.strides(x)
    if st is None or any(s < 0 for s in st):
        return None
    lay = _matrix_layout(m, n, st[-2], st[-1])
    if lay is None:
        return None
    trans, ld = lay
    N = m if trans == "T" else n
    size = ld * N
    if batch <= 1:
        return trans, ld, size
    bs = _batch_stride(bshape, st[:-2])
    if bs is None or bs < size:
        return None
    return trans, ld, bs


# ---------------------------------------------------------------------------
# the public functions

def svd(A, full_matrices=False, compute_uv=True, tol=None, max_sweeps=None,
        backend=_DEFAULT_BACKEND, return_info=False, *, check_finite=False, warn=True,
        ordering=_DEFAULT_ORDERING, variant=_DEFAULT_VARIANT, block_size=0, eig_sweeps=None,
        num_threads=0, stream=None, precondition=None):
    """Singular value decomposition of a batch of matrices.

    A: an array of shape (..., m, n) of NumPy, PyTorch, CuPy or JAX (or any
    object with DLPack or __cuda_array_interface__), or a list of 2-D arrays
    of different shapes (one dtype and device) for a variable-size batch.

    Returns U (..., m, k), S (..., k), Vh (..., k, n) with k = min(m, n) and
    A = U @ diag(S) @ Vh, S real, non-negative and descending, Vh = V^H
    (the NumPy / PyTorch convention), in the caller's library on the
    caller's device. For a list input: lists U, S, Vh. With
    compute_uv=False only S is returned. With return_info=True an Info
    (per-matrix info, sweeps, path; .converged) is appended.

    full_matrices=True returns U (..., m, m) and Vh (..., n, n): the reduced
    factors completed with an orthonormal basis of the orthogonal complement
    (from a QR factorization in the caller's library; that basis is not
    unique).

    U is a transposed view (each matrix column-major, as torch.linalg.svd
    returns it); S and Vh are C-contiguous.

    tol: rotation threshold (None: sqrt(m) * eps); max_sweeps: None = 80;
    backend: 'auto' (the array's device), 'cpu' or 'cuda' ('cuda' also takes
    host arrays: they are copied to the GPU and back). check_finite=True
    raises ValueError when a matrix holds NaN/Inf (default: a
    NonFiniteWarning, those outputs are NaN); matrices that did not converge
    give a ConvergenceWarning (warn=False silences both). ordering, variant,
    block_size, eig_sweeps, num_threads: the library's options
    (bsvd_options_t; eig_sweeps None = -1 = auto, the library's default).
    stream: CUDA stream (an int handle or an object with .cuda_stream /
    .ptr); default: PyTorch's or CuPy's current stream. precondition: QR
    with column pivoting before the Jacobi iteration (the LAPACK xGEJSV
    scheme; fewer sweeps on slowly converging matrices such as graph and
    sparse matrices, slower on random ones): None (auto: the cuda backend
    decides per call by a cost rule, the cpu backend never), True / 1
    (always), False / -1 (never).

    float16 / bfloat16 inputs are computed and returned in float32; other
    dtypes raise TypeError. A torch tensor that requires grad (with grad
    mode on) goes through bsvd.torch.svd, which is differentiable.
    """
    if isinstance(A, (list, tuple)) and all(_is_array(a) for a in A):  # also []
        return _svd_list(list(A), full_matrices, compute_uv, tol, max_sweeps, backend,
                         return_info, check_finite, warn, ordering, variant, block_size,
                         eig_sweeps, num_threads, stream, precondition)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(A, torch.Tensor) and A.requires_grad and torch.is_grad_enabled():
        from . import torch as bt
        return bt._svd_autograd(A, full_matrices=full_matrices, compute_uv=compute_uv, tol=tol,
                                max_sweeps=max_sweeps, backend=backend, return_info=return_info,
                                check_finite=check_finite, warn=warn, ordering=ordering,
                                variant=variant, block_size=block_size, eig_sweeps=eig_sweeps,
                                num_threads=num_threads, stream=stream,
                                precondition=precondition)
    return _svd_uniform(A, full_matrices, compute_uv, tol, max_sweeps, backend, return_info,
                        check_finite, warn, ordering, variant, block_size, eig_sweeps,
                        num_threads, stream, precondition)


def svdvals(A, tol=None, max_sweeps=None, backend=_DEFAULT_BACKEND, return_info=False, **kwargs):
    """Singular values only: S (..., k), descending (a list for a list input).
    Same options as svd()."""
    return svd(A, compute_uv=False, tol=tol, max_sweeps=max_sweeps, backend=backend,
               return_info=return_info, **kwargs)


_PRECISIONS = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}


def plan(shape, dtype="float64", compute_uv=True, backend="auto", ordering="round-robin",
         variant="auto", block_size=0, precondition=None, num_threads=0) -> str:
    """The plan bsvd would run for a batch, as text: which path each matrix
    takes (cuda-fused, cuda-blocked, cuda-qr, cuda-qrcp, cpu-...) and the
    parameters of each group -- the table `bsvd plan` prints. Nothing is
    solved.

    shape: (batch, m, n) for a uniform batch, or a list of (m, n) pairs for
    a variable-size one. The backend is resolved as for host arrays ("auto":
    the GPU when one is visible)."""
    try:
        p = _PRECISIONS[np.dtype(dtype).name]
    except (KeyError, TypeError):
        raise ValueError(f"bsvd.plan: dtype must be one of {', '.join(_PRECISIONS)}, got {dtype!r}") from None
    if isinstance(shape, tuple) and len(shape) == 3 and all(isinstance(x, (int, np.integer)) for x in shape):
        batch, m, n = (int(x) for x in shape)
        if min(batch, m, n) < 0:
            raise ValueError(f"bsvd.plan: sizes must be non-negative, got {shape!r}")
        ms, ns = [m] * batch, [n] * batch
    else:
        try:
            ms, ns = [int(a) for a, _ in shape], [int(b) for _, b in shape]
        except (TypeError, ValueError):
            raise ValueError("bsvd.plan: shape must be (batch, m, n) or a list of (m, n) pairs, "
                             f"got {shape!r}") from None
    try:
        b = _BACKENDS[backend]
    except (KeyError, TypeError):
        raise ValueError(f"bsvd.plan: backend must be {_one_of(_bsvd.backend_string)}, got {backend!r}") from None
    opts = _options("cpu", ("cpu", 0), None, None, ordering, variant, block_size, None, num_threads,
                    None, None, precondition)
    opts.backend = b
    return _bsvd.explain(p, bool(compute_uv), ms, ns, opts)


def _is_array(a):
    return hasattr(a, "shape") and hasattr(a, "dtype") or hasattr(a, "__cuda_array_interface__") \
        or hasattr(a, "__dlpack__")


def _complete(ad, Q, rows, k, batch_shape, name, device):
    """(..., rows, k) orthonormal columns -> (..., rows, rows)."""
    if k == rows:
        return Q
    if k == 0:
        return ad.eye(rows, batch_shape, name, device)
    full = ad.qr_complete(Q)
    return ad.cat_last(Q, full[..., :, k:])


def _info(bshape, info, sweeps, path):
    """The Info of a call: the native layer's per-matrix arrays (NumPy),
    or zeros where nothing was solved (an empty batch or k = 0)."""
    if info is None:
        return Info(np.zeros(bshape, np.int32), np.zeros(bshape, np.int32),
                    np.zeros(bshape, np.int32))
    return Info(info.reshape(bshape), sweeps.reshape(bshape), path.reshape(bshape))


def _svd_uniform(A, full_matrices, compute_uv, tol, max_sweeps, backend, return_info,
                 check_finite, warn, ordering, variant, block_size, eig_sweeps,
                 num_threads, stream, precondition=None):
    where = "bsvd.svd" if compute_uv else "bsvd.svdvals"
    ad, x = adapt(A)
    x = ad.prepare(x)
    shape = ad.shape(x)
    if len(shape) < 2:
        raise ValueError(f"{where}: expected an array of at least 2 dimensions (..., m, n), "
                         f"got shape {tuple(shape)}")
    x, name = _dtype(ad, x, where)
    device = ad.device(x)
    opts = _options(backend, device, tol, max_sweeps, ordering, variant, block_size,
                    eig_sweeps, num_threads, stream, ad, precondition)
    rname = REAL_OF[name]
    m, n = int(shape[-2]), int(shape[-1])
    bshape = tuple(map(int, shape[:-2]))
    batch = math.prod(bshape)
    k = min(m, n)
    if batch > 2**31 - 1:
        raise ValueError(f"{where}: batch of {batch} matrices is more than the library's int")

    S = ad.empty(bshape + (k,), rname, device)
    Ub = Vhb = None
    if compute_uv:
        Ub = ad.empty(bshape + (k, m), name, device)   # U^T (or conj(U)^T)
        Vhb = ad.empty(bshape + (k, n), name, device)  # Vh (or conj(Vh))
    info = sweeps = path = None
    trans = "T"

    if batch > 0 and k > 0:
        lay = _layout(ad, x, bshape, m, n, batch)
        if lay is None:
            x = ad.contiguous(x)
            lay = _layout(ad, x, bshape, m, n, batch)
        trans, ld, stride = lay
        M, N = (n, m) if trans == "T" else (m, n)
        # The library's U (M x k) and V (N x k), column-major, ld = rows.
        if compute_uv:
            libU, libV = (Vhb, Ub) if trans == "T" else (Ub, Vhb)
        else:
            libU = libV = None
        ad.sync_input(x)
        ex = ad.export
        # info stays in the native layer: it returns the counts of matrices
        # that did not converge (nc) or held NaN/Inf (nf), and the
        # per-matrix arrays only for return_info.
        st, msg, nc, nf, info, sweeps, path = _bsvd.svd_strided(
            ex(x), M, N, ld, stride, ex(S), k,
            None if libU is None else ex(libU), max(M, 1), M * k,
            None if libV is None else ex(libV), max(N, 1), N * k,
            batch, opts, return_info)
        if st:
            _raise_status(st, msg, where)
        if nc or nf:
            _report(nc, nf, batch, max_sweeps, check_finite, warn, where)

    S = ad.finish(S, bshape + (k,))
    if not compute_uv:
        return (S, _info(bshape, info, sweeps, path)) if return_info else S
    Ub = ad.finish(Ub, bshape + (k, m))
    Vh = ad.finish(Vhb, bshape + (k, n))
    if batch > 0 and k > 0 and name.startswith("complex"):
        # Row-major A is A^T column-major: A^T = V1 S U1^H gives
        # A = conj(U1) S V1^T, so U = conj(V1) and Vh = U1^T (trans "T");
        # column-major A gives U = U1, Vh = conj(V1)^T (trans "N").
        if trans == "T":
            Ub = ad.conj_(Ub)
        else:
            Vh = ad.conj_(Vh)
    U = ad.mT(Ub)
    if full_matrices:
        U = _complete(ad, U, m, k, bshape, name, device)
        Vh = ad.mH(_complete(ad, ad.mH(Vh), n, k, bshape, name, device))
    if return_info:
        return U, S, Vh, _info(bshape, info, sweeps, path)
    return U, S, Vh


def _svd_list(mats, full_matrices, compute_uv, tol, max_sweeps, backend, return_info,
              check_finite, warn, ordering, variant, block_size, eig_sweeps, num_threads,
              stream, precondition=None):
    where = "bsvd.svd" if compute_uv else "bsvd.svdvals"
    count = len(mats)
    if count == 0:
        out = ([], [], []) if compute_uv else ([],)
        if return_info:
            out = out + (_info((0,), None, None, None),)
        return out if len(out) > 1 else out[0]
    ad = None
    xs = []
    name = device = None
    for i, a in enumerate(mats):
        ad_i, x = adapt(a)
        if ad is None:
            ad = ad_i
        elif ad_i is not ad:
            raise TypeError(f"{where}: all matrices of a list must be arrays of one library "
                            f"(matrix 0 is {ad.name}, matrix {i} is {ad_i.name})")
        x = ad.prepare(x)
        shp = ad.shape(x)
        if len(shp) != 2:
            raise ValueError(f"{where}: matrices of a list must be 2-D, matrix {i} has shape {tuple(shp)}")
        x, nm = _dtype(ad, x, where)
        dv = ad.device(x)
        if name is None:
            name, device = nm, dv
        elif nm != name:
            raise TypeError(f"{where}: all matrices of a list must have one dtype "
                            f"(matrix 0 is {name}, matrix {i} is {nm})")
        elif dv != device:
            raise ValueError(f"{where}: all matrices of a list must be on one device "
                             f"(matrix 0 is on {device}, matrix {i} on {dv})")
        xs.append(x)
    opts = _options(backend, device, tol, max_sweeps, ordering, variant, block_size,
                    eig_sweeps, num_threads, stream, ad, precondition)
    rname = REAL_OF[name]

    # Every matrix is described to the library as A^T (row-major A,
    # transposed view): inputs that are not row-major are copied.
    dims = []
    Ms, Ns, lds, offS, offU, offV, ldus, ldvs = [], [], [], [], [], [], [], []
    tS = tU = tV = 0
    for i in range(count):
        m, n = (int(s) for s in ad.shape(xs[i]))
        k = min(m, n)
        ld = max(n, 1)
        if k > 0:
            lay = _layout(ad, xs[i], (), m, n, 1)
            if lay is None or lay[0] != "T":
                xs[i] = ad.contiguous(xs[i])
                lay = _layout(ad, xs[i], (), m, n, 1)
            ld = lay[1]
        dims.append((m, n, k, tS, tU, tV))
        Ms.append(n)
        Ns.append(m)
        lds.append(ld)
        offS.append(tS)
        # The library's U (n x k, ld n) is Vh's buffer, its V (m x k, ld m)
        # is U's (U^T row-major).
        offU.append(tV)
        offV.append(tU)
        ldus.append(max(n, 1))
        ldvs.append(max(m, 1))
        tS += k
        tU += k * m
        tV += k * n

    Sf = ad.empty((tS,), rname, device)
    Ubf = Vhf = None
    if compute_uv:
        Ubf = ad.empty((tU,), name, device)
        Vhf = ad.empty((tV,), name, device)
    for x in xs:
        ad.sync_input(x)
    libU, libV = (Vhf, Ubf) if compute_uv else (None, None)
    ex = ad.export
    st, msg, nc, nf, info, sweeps, path = _bsvd.svd_vbatched(
        [ex(x) for x in xs], Ms, Ns, lds, ex(Sf), offS,
        None if libU is None else ex(libU), ldus, offU,
        None if libV is None else ex(libV), ldvs, offV, opts, return_info)
    if st:
        _raise_status(st, msg, where)
    if nc or nf:
        _report(nc, nf, count, max_sweeps, check_finite, warn, where)

    Sf = ad.finish(Sf, (tS,))
    Ss = [ad.flat_slice(Sf, d[3], d[3] + d[2], (d[2],)) for d in dims]
    out = (Ss,)
    if compute_uv:
        Ubf = ad.finish(Ubf, (tU,))
        Vhf = ad.finish(Vhf, (tV,))
        if name.startswith("complex") and tU > 0:
            Ubf = ad.conj_(Ubf)  # U = conj(V1) for A^T = U1 S V1^H
        Us, Vhs = [], []
        for (m, n, k, s0, u0, v0) in dims:
            U = ad.mT(ad.flat_slice(Ubf, u0, u0 + k * m, (k, m)))
            Vh = ad.flat_slice(Vhf, v0, v0 + k * n, (k, n))
            if full_matrices:
                U = _complete(ad, U, m, k, (), name, device)
                Vh = ad.mH(_complete(ad, ad.mH(Vh), n, k, (), name, device))
            Us.append(U)
            Vhs.append(Vh)
        out = (Us, Ss, Vhs)
    if return_info:
        out = out + (_info((count,), info, sweeps, path),)
    return out if len(out) > 1 else out[0]


def __getattr__(name):
    # bsvd.torch is imported on first use (it imports torch).
    if name == "torch":
        import importlib
        return importlib.import_module(".torch", __name__)
    raise AttributeError(f"module 'bsvd' has no attribute {name!r}")
