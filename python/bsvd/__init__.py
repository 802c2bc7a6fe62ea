"""bsvd: batched singular value decomposition (one-sided Jacobi) on CPUs and
CUDA GPUs, for NumPy, PyTorch, CuPy and JAX arrays, with the conventions of
numpy.linalg.svd (and torch.linalg.svd for tensors).

    U, S, Vh = bsvd.svd(A)          # A: (..., m, n); A = U[..., :k] @ diag(S) @ Vh[..., :k, :]
    res = bsvd.svd(A, full_matrices=False); res.U, res.S, res.Vh
    S = bsvd.svdvals(A)
    Us, Ss, Vhs = bsvd.svd_batch([A1, A2, A3])   # matrices of different shapes
    U, S, Vh, signs, perm = bsvd.hsvd(G, nplus)   # hyperbolic SVD, J = diag(I, -I)
    w, v = bsvd.eigh_factored(G, nplus)           # eigenpairs of G J G^H
    U, S, Vh, rank = bsvd.truncate(res, rtol=1e-8)   # rank cut by a tolerance
    x, residuals, rank, s = bsvd.lstsq(A, B)          # minimum-norm least squares
    bsvd.pinv(A); bsvd.matrix_rank(A); bsvd.cond(A); bsvd.matrix_norm(A, 2)

NumPy arrays (and CPU tensors) run on the CPU backend; CUDA arrays of
PyTorch, CuPy and JAX run on the CUDA backend on their own device and on the
caller's current stream, and the outputs are arrays of the caller's library
on that device. See python/README.md.
"""
from __future__ import annotations

import math
import sys
import warnings
from typing import Any, NamedTuple

import numpy as np

from ._loading import cuda_library_hint

try:
    from . import _bsvd
except ImportError as e:  # (a CUDA library missing: say what to install)
    hint = cuda_library_hint(str(e))
    if hint is None:
        raise
    raise ImportError(hint) from e
from ._args import (BACKEND_ROW, DEFAULT_BACKEND, DEFAULT_MAX_SWEEPS, DEFAULT_ORDERING,
                    DEFAULT_VARIANT, OPTION_NAMES, PATH_NAMES, AccuracyWarning, check_flag,
                    check_mode, device_option, layout, option_values, options, promote,
                    set_devices, stacklevel)
from ._frameworks import LETTER, REAL_OF, adapt

__all__ = [
    "svd", "svdvals", "svd_batch", "plan", "SVDResult", "SVDInfoResult", "Info",
    "ConvergenceWarning", "NonFiniteWarning", "NonFiniteError", "AccuracyWarning",
    "BackendUnavailableError", "DeviceError", "cuda_available", "cuda_status", "cuda_built",
    "__version__",
    "hsvd", "hsvd_batch", "HSVDResult", "HSVDInfoResult", "HSVDValues", "HSVDValuesInfo",
    "HSVDInfo", "HyperbolicBreakdownWarning", "eigh_factored", "EighResult", "EighInfoResult",
    "truncate", "TruncatedSVD", "lstsq", "LstsqResult", "pinv", "matrix_rank", "cond", "norm",
    "matrix_norm",
]

__version__ = _bsvd.version()


class SVDResult(NamedTuple):
    """U, S, Vh (numpy.linalg.svd's SVDResult): A = U @ diag(S) @ Vh."""
    U: Any
    S: Any
    Vh: Any


class SVDInfoResult(NamedTuple):
    """U, S, Vh and the per-matrix Info (return_info=True)."""
    U: Any
    S: Any
    Vh: Any
    info: Any


class ConvergenceWarning(UserWarning):
    """Some matrices did not converge within max_sweeps (info > 0): their
    results are returned but are NOT converged, so they miss the accuracy
    contract (S and the vectors may be off by far more than rounding)."""


class NonFiniteWarning(RuntimeWarning):
    """Some matrices hold NaN or Inf (info == -1); their S, U, Vh are NaN."""


class NonFiniteError(np.linalg.LinAlgError):
    """check_finite=True and a matrix holds NaN or Inf. A LinAlgError, so a
    ValueError as well (what numpy.linalg and scipy.linalg raise)."""


class BackendUnavailableError(RuntimeError):
    """The requested backend is not built into bsvd, or no GPU is visible."""


class DeviceError(RuntimeError):
    """A CUDA call inside the library failed."""


class Info:
    """Per-matrix results of a call, shaped like the batch: A.shape[:-2],
    or (len(list),) for svd_batch. NumPy arrays for host data (and
    svd_batch, an explicit stream); JAX arrays for JAX input (bsvd._jax);
    for the stream-ordered device calls
    (CUDA tensors of PyTorch, CuPy arrays: see bsvd.svd's check) info and
    sweeps are int32 arrays of the caller's library on the device, written
    when the stream passes the call (read them after it: no wait is made),
    and path a NumPy array (the plan, known when the call returns). Inside
    torch.compile, torch tensors (path on the CPU).

    info    int32: 0 converged; > 0 not converged within max_sweeps (the
            result is returned but not accurate); -1 NaN or Inf in the input.
    sweeps  int32: sweeps used.
    path    int32: the solver path taken (see PATH_NAMES / path_names); for
            the stream-ordered calls the planned path (a matrix that holds
            NaN or Inf keeps its planned path).
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
        path = _host(self.path)
        f = np.vectorize(lambda p: PATH_NAMES.get(int(p), str(int(p))), otypes=[object])
        return f(path) if path.size else path.astype(object)

    def __repr__(self):
        info, sweeps = _host(self.info), _host(self.sweeps)  # device arrays: waits
        n = info.size
        nc = int(np.count_nonzero(info > 0))
        nf = int(np.count_nonzero(info == _bsvd.INFO_NONFINITE))
        ms = int(sweeps.max()) if n else 0
        return (f"bsvd.Info(matrices={n}, not_converged={nc}, nonfinite={nf}, "
                f"max_sweeps_used={ms})")


def _host(a):
    """A NumPy copy of an array of any of the libraries (waits for a device
    array's stream)."""
    if isinstance(a, np.ndarray):
        return a
    if hasattr(a, "detach"):  # torch
        return a.detach().cpu().numpy()
    if hasattr(a, "get"):  # cupy
        return a.get()
    return np.asarray(a)


def cuda_available() -> bool:
    """True when the CUDA backend is built in, a GPU is visible and the
    current GPU can run this build (compute capability 8.0 or newer with a
    kernel image for it). When False, :func:`cuda_status` says why."""
    return bool(_bsvd.cuda_available())


def cuda_status() -> str:
    """Why :func:`cuda_available` is False, as one sentence ("" when it is
    True): the extension was built without CUDA, no GPU is visible, or the
    current GPU -- named with its compute capability and the CUDA
    architectures this build holds -- is older than compute capability 8.0
    or has no kernel image in the build."""
    return str(_bsvd.cuda_status())


def cuda_built() -> bool:
    """True when the extension was compiled with the CUDA backend."""
    return bool(_bsvd.cuda_built())


# ---------------------------------------------------------------------------
# errors and warnings

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
    """Warnings (or NonFiniteError for check_finite) from the native layer's
    counts: nc matrices of count did not converge, nf held NaN or Inf.
    Called only when nc or nf is non-zero."""
    if nf:
        msg = (f"{where}: {nf} of {count} matrices contain NaN or Inf; "
               "their singular values and vectors are NaN")
        if check_finite:
            raise NonFiniteError(msg)
        if warn:
            warnings.warn(msg, NonFiniteWarning, stacklevel=stacklevel())
    if nc and warn:
        warnings.warn(
            f"{where}: {nc} of {count} matrices did not converge within "
            f"max_sweeps={max_sweeps or DEFAULT_MAX_SWEEPS} sweeps: their results are NOT "
            "converged and may be far from the SVD (raise max_sweeps; return_info=True "
            "shows which, info > 0)", ConvergenceWarning, stacklevel=stacklevel())


# ---------------------------------------------------------------------------
# the public functions

# The keywords of svd, svdvals and svd_batch beside the arrays and flags:
# every option of the library's table (OPTION_NAMES; None: its default),
# and the call's own.
_OPTION_DEFAULTS = dict(dict.fromkeys(OPTION_NAMES), backend=DEFAULT_BACKEND,
                        ordering=DEFAULT_ORDERING, variant=DEFAULT_VARIANT, block_size=0,
                        num_threads=0, check_finite=False, warn=True, check=None, stream=None,
                        devices=None)


def svd(A, full_matrices=True, compute_uv=True, hermitian=False, *, tol=None, max_sweeps=None,
        backend=DEFAULT_BACKEND, return_info=False, check_finite=False, warn=True, check=None,
        ordering=DEFAULT_ORDERING, variant=DEFAULT_VARIANT, block_size=0, eig_sweeps=None,
        num_threads=0, stream=None, precondition=None, devices=None, qr=None, pair_solver=None,
        wcycle_blocks=None, wcycle_sweeps=None, subset_by_index=None, subset_by_value=None):
    """Singular value decomposition of a stack of matrices, as
    numpy.linalg.svd (torch.linalg.svd for tensors).

    A: an array of shape (..., m, n) of NumPy, PyTorch, CuPy or JAX (or any
    object with DLPack or __cuda_array_interface__, or nested lists / a list
    of same-shape arrays, stacked as NumPy does). Matrices of different
    shapes: bsvd.svd_batch.

    Returns SVDResult(U, S, Vh) (a named tuple; torch tensors give
    torch.return_types.linalg_svd) with A = U @ diag(S) @ Vh, S real,
    non-negative and descending, Vh = V^H, in the caller's library on the
    caller's device. full_matrices=True (the default, as NumPy): U (..., m,
    m), Vh (..., n, n), the reduced factors completed by an orthonormal basis
    of their complement (Householder QR in the caller's library; that part
    is not unique); False: U (..., m, k), Vh (..., k, n), k = min(m, n).
    compute_uv=False returns S alone. return_info=True appends an Info
    (per-matrix info, sweeps, path): SVDInfoResult(U, S, Vh, info), or (S,
    info).

    hermitian: accepted for NumPy compatibility; the SVD is computed from
    all of A as for any matrix (NumPy's eigh path reads only the lower
    triangle).

    Integer and bool input is promoted to float64 (PyTorch: the default
    dtype; JAX: its default float); float16 / bfloat16 are computed and
    returned in float32; other dtypes raise TypeError.

    tol: rotation threshold (None or 0: sqrt(max(m, 16)) * eps); values above 64
    unit roundoffs of the precision give an AccuracyWarning naming the loss,
    values outside [0, 1) a ValueError. max_sweeps: None = 80; matrices that
    do not converge within it give a ConvergenceWarning (their results are
    not converged). backend: 'auto' (the array's device), 'cpu' or 'cuda'
    ('cuda' also takes host arrays: copied to the GPU and back).
    check_finite=True raises bsvd.NonFiniteError (a numpy LinAlgError and
    ValueError) when a matrix holds NaN/Inf; by default its outputs are NaN,
    its info -1, and a NonFiniteWarning is issued (warn=False silences the
    warnings). ordering, variant, block_size, eig_sweeps, num_threads, qr,
    pair_solver, wcycle_blocks, wcycle_sweeps: the library's options
    (bsvd_options_t's fields of the same names, include/bsvd/bsvd.h; enums
    by name, e.g. pair_solver="gram"; None: the library's default;
    bsvd._args.OPTIONS lists each with its range). stream:
    CUDA stream (an int handle or an object with .cuda_stream / .ptr);
    default: PyTorch's or CuPy's current stream. precondition: QR with
    column pivoting before the Jacobi iteration (True always, False
    never), or "gram" (2): Jacobi on A V0 for the Gram matrix's
    eigenvectors V0 formed in single precision (fewer sweeps on
    well-conditioned matrices; docs/design/gram.md); None (auto): on a
    GPU, batches of matrices with 128 or more columns and much work per
    shape (200 matrices of 128^2, 25 of 256^2, one of 1024^2 and more)
    take the Gram route where a test on
    their Gram matrices predicts a gain, the others QR-preconditioning by
    a cost rule; values only (compute_uv=False, svdvals) of float32
    matrices with 64 to 160 columns and float64 with 32 to 96 take the
    bidiagonal route on an H100 / H200 (docs/design/bidiag.md). For high
    relative accuracy of tiny singular values on the GPU pass False. devices: the GPUs that share a host batch on the cuda
    backend (None: the current one; "all"; an ordinal or a list of them;
    docs/multi-gpu.md): NumPy and other host arrays only (torch tensors
    and JAX arrays refuse it); device arrays stay on their GPU.

    Device arrays (CUDA tensors, CuPy arrays) on the current stream (stream
    None): the call only enqueues the work and returns without waiting for
    the GPU (it may be captured in a CUDA graph, and runs inside
    torch.compile); the results are ready when the stream passes the call.
    NaN / non-convergence is then not reported unless asked: check=True
    waits for the solve and warns / raises as for host data (check_finite=
    True implies it); or read the info array of return_info=True, which
    stays on the device. check: None (the default) = report for host data
    only, True = always (a device call waits), False = never. An explicit
    stream and svd_batch block (return when the results are written) as
    host calls do.

    JAX arrays go through an XLA FFI call (bsvd._jax), eagerly and inside
    jax.jit, vmap and grad; on a GPU it is enqueued on XLA's stream. Inside
    a transformation nothing is reported (check=True / check_finite=True
    raise ValueError when traced); return_info gives the info array.

    Torch tensors go through the op torch.ops.bsvd.svd (bsvd.torch), which
    is differentiable, has a fake (meta) implementation and works under
    torch.compile(fullgraph=True).

    subset_by_index=(lo, hi): only the singular values lo ... hi (0-based,
    both included, 0 = the largest) and their vectors: U (..., m, c), S
    (..., c), Vh (..., c, n), c = hi - lo + 1 (full_matrices does not
    apply). subset_by_value=(vl, vu): those in the interval (vl, vu], 0 <=
    vl < vu (vu may be inf); c is the most any matrix of the stack has, and
    a matrix with fewer has zeros after its own (S > 0 counts them). The
    library's gesvdx (include/bsvd/blas.h): bidiagonal reduction, bisection
    and inverse iteration, LAPACK xGESVDX's method, for a few triplets of
    each of many matrices (the full SVD is faster by the default route).
    These calls block, are not differentiable (a torch tensor that requires
    grad raises) and cannot be traced by jax.jit; the solver options (tol,
    max_sweeps, ordering, ...) do not apply, backend and num_threads do
    (backend='cuda' wants CUDA arrays: host arrays are not copied to the
    GPU for these calls).
    With return_info, the Info's sweeps are 0 and its path -1 (gesvdx is
    not one of the plan's paths).
    """
    full_matrices = check_flag(full_matrices, "full_matrices", "bsvd.svd")
    compute_uv = check_flag(compute_uv, "compute_uv", "bsvd.svd")
    where = "bsvd.svd" if compute_uv else "bsvd.svdvals"
    check_flag(hermitian, "hermitian", where)
    return_info = check_flag(return_info, "return_info", where)
    check_finite = check_flag(check_finite, "check_finite", where)
    kw = dict(tol=tol, max_sweeps=max_sweeps, backend=backend, ordering=ordering,
              variant=variant, block_size=block_size, eig_sweeps=eig_sweeps,
              num_threads=num_threads, precondition=precondition, qr=qr,
              pair_solver=pair_solver, wcycle_blocks=wcycle_blocks,
              wcycle_sweeps=wcycle_sweeps, check_finite=check_finite,
              warn=check_flag(warn, "warn", where), check=check_mode(check, check_finite, where),
              stream=stream, devices=device_option(devices, where))
    torch = sys.modules.get("torch")
    if kw["devices"][0] != 0:
        _host_devices_only(A, where)
    if subset_by_index is not None or subset_by_value is not None:
        return _svd_subset(A, compute_uv, subset_by_index, subset_by_value, return_info, kw,
                           where)
    if torch is not None and isinstance(A, torch.Tensor):
        from . import torch as bt
        return bt._svd(A, full_matrices, compute_uv, return_info, kw, where)
    jax = sys.modules.get("jax")
    if jax is not None and isinstance(A, jax.Array) and _jax_ffi(A, where):
        from . import _jax
        return _jax.svd(A, full_matrices, compute_uv, return_info, kw, where)
    wrap = None
    if isinstance(A, np.ndarray) and type(A) is not np.ndarray:
        wrap = A.__array_wrap__  # as numpy.linalg: U and Vh keep the subclass
    elif isinstance(A, (list, tuple)):
        A = _stack_list(A, where)
    ad, U, S, Vh, info = _solve(A, compute_uv, return_info, kw, where)
    if not compute_uv:
        return (S, info) if return_info else S
    if full_matrices:
        U, Vh = _complete_pair(ad, U, Vh)
    if wrap is not None:
        U, Vh = wrap(U), wrap(Vh)
    if return_info:
        return SVDInfoResult(U, S, Vh, info)
    return ad.result(U, S, Vh, SVDResult)


def _svd_subset(A, compute_uv, by_index, by_value, return_info, kw, where):
    """svd with subset_by_index / subset_by_value (bsvd._subset)."""
    from ._subset import svd_subset
    if kw["devices"][0] != 0:
        raise ValueError(f"{where}: devices= does not apply to subset_by_index / subset_by_value "
                         "(one GPU solves the batch)")
    if isinstance(A, (list, tuple)):
        A = _stack_list(A, where)
    U, S, Vh, info, _ = svd_subset(A, compute_uv, by_index, by_value, kw, where)
    inf = None
    if return_info:
        inf = Info(info, np.zeros(info.shape, np.int32), np.full(info.shape, -1, np.int32))
    if not compute_uv:
        return (S, inf) if return_info else S
    if return_info:
        return SVDInfoResult(U, S, Vh, inf)
    return adapt(A)[0].result(U, S, Vh, SVDResult)


def _host_devices_only(A, where):
    """devices= reaches the library through the array paths of _solve and
    svd_batch; the torch op and the JAX FFI call carry no such option."""
    for mod, kind in (("torch", "Tensor"), ("jax", "Array")):
        lib = sys.modules.get(mod)
        if lib is not None and isinstance(A, getattr(lib, kind)):
            raise TypeError(f"{where}: devices= is not supported for {mod} arrays (pass a NumPy "
                            "array, e.g. A.numpy(), for a host batch over several GPUs)")


def _jax_ffi(A, where):
    """Whether a JAX array (or tracer) goes through the XLA FFI call
    (bsvd._jax); False: this build has no FFI handlers (jax was not found
    when it was built) and a concrete array takes the DLPack path, eager
    only."""
    if hasattr(_bsvd, "jax_ffi_targets"):
        return True
    from ._frameworks import jax_tracer_type
    if isinstance(A, jax_tracer_type()):
        raise TypeError(f"{where}: this bsvd was built without its JAX FFI handlers (jax was not "
                        "importable when it was built), so it cannot be called inside jax.jit, "
                        "vmap or grad; reinstall bsvd with jax installed")
    return False


def svdvals(A, **kwargs):
    """Singular values only of A (..., m, n): S (..., k), descending, as
    numpy.linalg.svdvals (and (S, Info) with return_info=True). Options as
    svd()."""
    for bad in ("compute_uv", "full_matrices"):
        if bad in kwargs:
            raise TypeError(f"bsvd.svdvals: unexpected argument {bad!r}")
    return svd(A, compute_uv=False, **kwargs)


def svd_batch(matrices, full_matrices=True, compute_uv=True, *, return_info=False,
              subset_by_index=None, subset_by_value=None, **kwargs):
    """SVD of a list of 2-D matrices of different shapes (one dtype, one
    library and device) in one variable-size call: SVDResult of lists
    (U_i, S_i, Vh_i as svd() gives them, full or reduced by full_matrices;
    a list of S with compute_uv=False;
    an Info of shape (len,) appended with return_info=True). Options as
    svd(); subset_by_index / subset_by_value as svd()'s, each matrix's
    lists with its own count of values (hi must be below every non-empty
    matrix's min(m, n))."""
    from ._batch import svd_list
    where = "bsvd.svd_batch"
    if not isinstance(matrices, (list, tuple)):
        raise TypeError(f"{where}: expects a list of 2-D arrays, got {type(matrices).__name__}")
    kw = dict(_OPTION_DEFAULTS)
    unknown = set(kwargs) - set(kw)
    if unknown:
        raise TypeError(f"{where}: unexpected argument {sorted(unknown)[0]!r}")
    kw.update(kwargs)
    kw["check_finite"] = check_flag(kw["check_finite"], "check_finite", where)
    kw["warn"] = check_flag(kw["warn"], "warn", where)
    kw["check"] = check_mode(kw["check"], kw["check_finite"], where)
    kw["devices"] = device_option(kw["devices"], where)
    if kw["devices"][0] != 0:
        for a in matrices:
            _host_devices_only(a, where)
    compute_uv = check_flag(compute_uv, "compute_uv", where)
    return_info = check_flag(return_info, "return_info", where)
    if subset_by_index is not None or subset_by_value is not None:
        return _svd_list_subset(list(matrices), compute_uv, subset_by_index, subset_by_value,
                                return_info, kw, where)
    return svd_list(list(matrices), check_flag(full_matrices, "full_matrices", where),
                    compute_uv, return_info, kw)


def _svd_list_subset(mats, compute_uv, by_index, by_value, return_info, kw, where):
    """svd_batch with subset_by_index / subset_by_value (bsvd._subset)."""
    from ._subset import svd_list_subset
    if kw["devices"][0] != 0:
        raise ValueError(f"{where}: devices= does not apply to subset_by_index / subset_by_value "
                         "(one GPU solves the batch)")
    (Us, Ss, Vhs), info = svd_list_subset(mats, compute_uv, by_index, by_value, kw, where)
    inf = None
    if return_info:
        inf = Info(info, np.zeros(info.shape, np.int32), np.full(info.shape, -1, np.int32))
    if not compute_uv:
        return (Ss, inf) if return_info else Ss
    return SVDInfoResult(Us, Ss, Vhs, inf) if return_info else SVDResult(Us, Ss, Vhs)


_PRECISIONS = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}


def plan(shape, dtype="float64", compute_uv=True, **options) -> str:
    """The plan bsvd would run for a batch, as text: which path each matrix
    takes (cuda-fused, cuda-blocked, cuda-qr, cuda-qrcp, cpu-...) and the
    parameters of each group -- the table `bsvd plan` prints. Nothing is
    solved.

    shape: (batch, m, n) for a uniform batch, or a list of (m, n) pairs for
    a variable-size one. dtype: float32, float64, complex64 or complex128
    (or their names). compute_uv=False plans a values-only call. options:
    the library's options as svd() takes them (backend, ordering, variant,
    block_size, tol, max_sweeps, eig_sweeps, num_threads, qr, pair_solver,
    precondition, wcycle_blocks, wcycle_sweeps); the backend is resolved as
    for host arrays ("auto": the GPU when one is visible)."""
    where = "bsvd.plan"
    unknown = set(options) - set(OPTION_NAMES)
    if unknown:
        raise TypeError(f"{where}: unexpected argument {sorted(unknown)[0]!r}")
    try:
        name = np.dtype(dtype).name
        p = _PRECISIONS[name]
    except (KeyError, TypeError):
        raise ValueError(f"{where}: dtype must be one of {', '.join(_PRECISIONS)}, got {dtype!r}") from None
    if isinstance(shape, tuple) and len(shape) == 3 and all(isinstance(x, (int, np.integer)) for x in shape):
        batch, m, n = (int(x) for x in shape)
        if min(batch, m, n) < 0:
            raise ValueError(f"{where}: sizes must be non-negative, got {shape!r}")
        ms, ns = [m] * batch, [n] * batch
    else:
        try:
            ms, ns = [int(a) for a, _ in shape], [int(b) for _, b in shape]
        except (TypeError, ValueError):
            raise ValueError(f"{where}: shape must be (batch, m, n) or a list of (m, n) pairs, "
                             f"got {shape!r}") from None
    values = option_values(options, None, name, where)
    return _bsvd.explain(p, bool(compute_uv), ms, ns, _bsvd.Options(list(values), 0))


# ---------------------------------------------------------------------------
# the work

def _is_array(a):
    return hasattr(a, "shape") and hasattr(a, "dtype") or hasattr(a, "__cuda_array_interface__") \
        or hasattr(a, "__dlpack__")


def _stack_list(A, where):
    """A list input is one array, as NumPy takes it (nested lists, or
    same-shape arrays stacked along a new first axis). Arrays of a library
    other than NumPy are not stacked behind the caller's back."""
    for a in A:
        if _is_array(a) and not isinstance(a, (np.ndarray, np.generic)):
            raise TypeError(f"{where}: a list of {type(a).__module__}.{type(a).__name__} arrays: "
                            "stack them in their library (e.g. torch.stack) for one batch, or "
                            "use bsvd.svd_batch(list) for matrices of different shapes")
    return A


def _complete(ad, Q, rows, k, batch_shape, name, device):
    """(..., rows, k) orthonormal columns -> (..., rows, rows)."""
    if k == rows:
        return Q
    if k == 0:
        return ad.eye(rows, batch_shape, name, device)
    full = ad.qr_complete(Q)
    return ad.cat_last(Q, full[..., :, k:])


def _complete_pair(ad, U, Vh):
    """full_matrices: U (..., m, k) -> (..., m, m), Vh (..., k, n) -> (..., n, n)."""
    shape = ad.shape(U)
    m, k = int(shape[-2]), int(shape[-1])
    n = int(ad.shape(Vh)[-1])
    bshape = tuple(map(int, shape[:-2]))
    name = ad.dtype_name(U)
    device = ad.device(U)
    U = _complete(ad, U, m, k, bshape, name, device)
    Vh = ad.mH(_complete(ad, ad.mH(Vh), n, k, bshape, name, device))
    return U, Vh


def _info(bshape, info, sweeps, path):
    """The Info of a call: the native layer's per-matrix arrays (NumPy),
    or zeros where nothing was solved (an empty batch or k = 0)."""
    if info is None:
        return Info(np.zeros(bshape, np.int32), np.zeros(bshape, np.int32),
                    np.zeros(bshape, np.int32))
    return Info(info.reshape(bshape), sweeps.reshape(bshape), path.reshape(bshape))


def _prepared(A, kw, where):
    """A as a uniform batch the library can take: (adapter, the array of
    at least 2 dimensions in a supported dtype, its dtype name, its device,
    the call's options)."""
    ad, x = adapt(A)
    x = ad.prepare(x)
    shape = ad.shape(x)
    if len(shape) < 2:
        raise ValueError(f"{where}: expected an array of at least 2 dimensions (..., m, n), "
                         f"got shape {tuple(shape)}")
    x, name = promote(ad, x, where)
    device = ad.device(x)
    return ad, x, name, device, options(kw, device, ad, name, where)


def _solve(A, compute_uv, return_info, kw, where):
    """The reduced SVD of a uniform batch (NumPy, CuPy, JAX and other
    arrays; torch tensors go through bsvd.torch's op): (adapter, U (..., m,
    k), S, Vh (..., k, n), Info or None); U and Vh are None without
    compute_uv."""
    ad, x, name, device, opts = _prepared(A, kw, where)
    set_devices(opts, kw["devices"])
    ordered = _stream_ordered(ad, device, opts, kw["stream"])
    report = kw["check"] if kw["check"] is not None else not ordered
    U, S, Vh, info, sweeps, path = _reduced(ad, x, name, device, opts, compute_uv, return_info,
                                            ordered, report, kw, where)
    inf = Info(info, sweeps, path) if return_info else None
    return ad, U, S, Vh, inf


def _stream_ordered(ad, device, opts, stream):
    """Whether a call takes the stream-ordered form (enqueue only): device
    arrays of a library with a current stream (PyTorch, CuPy), the cuda
    backend, and no explicit stream (an explicit stream keeps the
    documented blocking contract: results usable on any stream)."""
    return (ad.stream_ordered and device[0] == "cuda" and stream is None
            and opts.values[BACKEND_ROW] == _bsvd.BACKEND_CUDA)


def _reduced(ad, x, name, device, opts, compute_uv, details, ordered, report, kw, where):
    """The reduced SVD of x (..., m, n), already in a supported dtype:
    (U (..., m, k), S, Vh (..., k, n), info, sweeps, path), U and Vh None
    without compute_uv; info, sweeps and path shaped as the batch.

    Blocking (ordered False): info, sweeps, path NumPy arrays with details,
    else None. Stream-ordered: only enqueued on opts.stream; info an int32
    array of the caller's library on the device (always), sweeps too with
    details (else None), path a NumPy array with details (else None).
    report: warn / raise (check_finite) for matrices that held NaN or did not
    converge (a stream-ordered call waits for the solve to read info)."""
    shape = ad.shape(x)
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
    solve = batch > 0 and k > 0
    if ordered:
        make = ad.empty if solve else ad.zeros
        info = make(bshape, "int32", device)
        if details:
            sweeps = make(bshape, "int32", device)
            path = np.zeros(bshape, np.int32)
    elif details and not solve:
        info, sweeps, path = (np.zeros(bshape, np.int32) for _ in range(3))
    trans = "T"

    if solve:
        lay = layout(ad, x, bshape, m, n, batch)
        if lay is None:
            x = ad.contiguous(x)
            lay = layout(ad, x, bshape, m, n, batch)
        if lay is None:  # a C-contiguous array always has a layout
            raise RuntimeError(f"{where}: internal error: no layout for strides {ad.strides(x)}")
        trans, ld, stride = lay
        M, N = (n, m) if trans == "T" else (m, n)
        # The library's U (M x k) and V (N x k), column-major, ld = rows.
        if compute_uv:
            libU, libV = (Vhb, Ub) if trans == "T" else (Ub, Vhb)
        else:
            libU = libV = None
        ad.sync_input(x)
        ex = ad.export

        def outs():  # fresh each call: a DLPack capsule can be consumed once
            return (ex(x), M, N, ld, stride, ex(S), k,
                    None if libU is None else ex(libU), max(M, 1), M * k,
                    None if libV is None else ex(libV), max(N, 1), N * k)

        if ordered:
            # Workspace from the caller's allocator on the caller's stream
            # (torch's caching allocator, CuPy's pool: reused only after
            # the stream passes this call; a CUDA graph keeps it in its pool).
            dev_id = device[1] if device[0] == "cuda" else -1
            st, msg, wbytes = _bsvd.workspace_size(LETTER[name], compute_uv, M, N, batch, opts,
                                                   dev_id)
            if st:
                _raise_status(st, msg, where)
            ws = ad.empty((wbytes,), "uint8", device) if wbytes else None
            def per_matrix():
                return (ex(info), None if sweeps is None else ex(sweeps),
                        None if path is None else path.reshape(-1))

            st, msg = _bsvd.svd_strided_async(*outs(), *per_matrix(),
                                              None if ws is None else ex(ws), batch, opts)
            if st == _bsvd.STATUS_NOT_SUPPORTED and not (
                    device[0] == "cuda" and _bsvd.stream_capturing(opts.stream, dev_id)):
                # The plan solves some matrices on the host (an ordering other
                # than round-robin beyond the one-kernel solver, a block size
                # beyond the GPU's), which the _async form refuses: outside a
                # CUDA graph capture, the blocking call (it waits).
                st, msg = _bsvd.gesvj_strided(*outs(), *per_matrix(), batch, opts)
            if st:
                _raise_status(st, msg, where)
            if report:
                st, msg, nc, nf = _bsvd.info_counts(ex(info), batch, opts.stream)
                if st:
                    _raise_status(st, msg, where)
                if nc or nf:
                    _report(nc, nf, batch, kw["max_sweeps"], kw["check_finite"], kw["warn"], where)
        else:
            # info stays in the native layer: it returns the counts of
            # matrices that did not converge (nc) or held NaN/Inf (nf), and
            # the per-matrix arrays only with details.
            st, msg, nc, nf, info, sweeps, path = _bsvd.svd_strided(*outs(), batch, opts, details)
            if st:
                _raise_status(st, msg, where)
            if report and (nc or nf):
                _report(nc, nf, batch, kw["max_sweeps"], kw["check_finite"], kw["warn"], where)
            if details:
                info, sweeps, path = (a.reshape(bshape) for a in (info, sweeps, path))

    S = ad.finish(S, bshape + (k,))
    if not compute_uv:
        return None, S, None, info, sweeps, path
    Ub = ad.finish(Ub, bshape + (k, m))
    Vh = ad.finish(Vhb, bshape + (k, n))
    if solve and name.startswith("complex"):
        # Row-major A is A^T column-major: A^T = V1 S U1^H gives
        # A = conj(U1) S V1^T, so U = conj(V1) and Vh = U1^T (trans "T");
        # column-major A gives U = U1, Vh = conj(V1)^T (trans "N").
        if trans == "T":
            Ub = ad.conj_(Ub)
        else:
            Vh = ad.conj_(Vh)
    return ad.mT(Ub), S, Vh, info, sweeps, path


# The hyperbolic SVD and its eigenvalue front end (they use the classes above).
from ._hsvd import (HSVDInfo, HSVDInfoResult, HSVDResult, HSVDValues,  # noqa: E402
                    HSVDValuesInfo, HyperbolicBreakdownWarning, hsvd, hsvd_batch)
from ._eigh import EighInfoResult, EighResult, eigh_factored  # noqa: E402
# The rank cut of an SVD by a tolerance (pure Python, any array library).
from ._truncate import TruncatedSVD, truncate  # noqa: E402
# Least squares, pseudo-inverse, rank, condition number and the SVD matrix
# norms on bsvd.svd (pure Python, any array library).
from ._lstsq import LstsqResult, lstsq, matrix_rank, pinv  # noqa: E402
from ._norms import cond, matrix_norm, norm  # noqa: E402


def __getattr__(name):
    # bsvd.torch is imported on first use (it imports torch).
    if name == "torch":
        import importlib
        return importlib.import_module(".torch", __name__)
    raise AttributeError(f"module 'bsvd' has no attribute {name!r}")
