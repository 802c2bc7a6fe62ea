"""PyTorch for bsvd: the ops torch.ops.bsvd.svd and torch.ops.bsvd.svdvals
(torch.library custom ops with fake implementations and autograd) behind
bsvd.svd / bsvd.svdvals on tensors, and the differentiable drop-ins
``bsvd.torch.svd(A)`` for ``torch.linalg.svd(A)`` (full_matrices=True by
default, as torch) and ``bsvd.torch.svdvals``.

The ops compute the reduced SVD (bsvd.svd completes U and Vh for
full_matrices with torch.linalg.qr outside them):

    bsvd::svd(Tensor A, bool details, bool report, bool check_finite,
              bool warn, int stream, <every option of the library's table,
              in its order: int backend, int ordering, ..., float tol, ...>)
        -> (U (..., m, k), S (..., k), Vh (..., k, n), info (...) int32,
            sweeps (...) int32, path (...) int32 on the CPU; with details
            False sweeps and path are (0,) on A's device)
    bsvd::svdvals(the same arguments) -> (S, info, sweeps, path)

details: sweeps and path (return_info); report: warn / raise for NaN and
non-convergence as bsvd.svd's check; stream: -1 for the current stream, else
a handle; the rest: bsvd_options_t's fields (bsvd._args.OPTIONS). CUDA tensors on the current
stream: the outputs, info and the workspace come from torch's caching
allocator on the tensor's device and the solve is only enqueued on
torch.cuda.current_stream() (the library's _async form), so the op runs in
torch.compile graphs and torch.cuda.graph captures and returns before the
GPU has finished (with report it waits). CPU tensors and an explicit
stream: the blocking call.

The backward is the standard derivative of the reduced SVD (the one
torch.linalg.svd uses): the off-diagonal terms
(J_ij s_j + s_i K_ij) / (s_j^2 - s_i^2) with J = skew(U^H gU),
K = skew(V^H gV), the diagonal through gS, the complex gauge term
Im(diag(U^H gU)) / S, and the (I - U U^H) gU S^-1 and S^-1 gVh (I - V V^H)
terms when m != n.

Repeated singular values: the off-diagonal term is evaluated as
1/2 (J + K)_ij / (s_j - s_i) + 1/2 (J - K)_ij / (s_j + s_i), with the safe
inverse (0 where |s_j - s_i| <= 8 k eps s_1) on the first part, which is 0/0
at a repeated value for a loss that does not depend on the choice of basis
inside its subspace. So the gradient stays finite (torch's is NaN/Inf there),
and it is exact for losses of S, of projectors U_B U_B^H / V_B V_B^H onto
whole blocks of equal values, and of anything that sees repeated values only
through those. For other basis-invariant losses (e.g. a function of
U diag(S) Vh) the limit of that 0/0 is not determined by the first
derivatives at the point and the part it would contribute is left out: the
gradient is finite but not exact there. A loss that depends on the basis
inside a repeated value's subspace has no gradient at all. Terms with S^-1
remain infinite for zero singular values when gU or gVh reach them, as in
torch.

As in torch, for complex inputs the loss must be invariant under the phase
of each singular-vector pair (U[:, i] e^{i phi}, Vh[i, :] e^{-i phi});
gradients of a loss that is not are meaningless.
"""
import torch

import bsvd as _bsvd_pkg
from . import _bsvd as _native
from . import _frameworks
from ._args import (BACKEND_ROW, OPTION_NAMES, OPTIONS, check_mode, check_tol, make_options,
                    option_values, promote, stream_handle)

__all__ = ["svd", "svdvals", "svd_backward"]


def _safe_inv(D, guard):
    """1 / D where |D| > guard, else 0."""
    close = D.abs() <= guard
    return torch.where(close, torch.zeros_like(D), 1.0 / torch.where(close, torch.ones_like(D), D))


def svd_backward(gU, gS, gVh, U, S, Vh):
    """Gradient with respect to A of the reduced SVD A = U diag(S) Vh, given
    the gradients gU, gS, gVh of U, S, Vh (any of them may be None)."""
    if gU is None and gS is None and gVh is None:
        return None
    m = U.shape[-2]
    n = Vh.shape[-1]
    k = S.shape[-1]
    if gU is None and gVh is None:
        # Singular values only: gA = U diag(gS) Vh.
        return (U * gS.unsqueeze(-2).to(U.dtype)) @ Vh
    is_complex = U.is_complex()

    def skew(X):
        return X - X.mH

    UhgU = skew(U.mH @ gU) if gU is not None else None
    VhgV = skew(Vh @ gVh.mH) if gVh is not None else None

    # Off-diagonal part: (J_ij s_j + s_i K_ij) / (s_j^2 - s_i^2), J = skew(U^H gU),
    # K = skew(V^H gV), written as
    #   1/2 (J + K)_ij / (s_j - s_i)  +  1/2 (J - K)_ij / (s_j + s_i)
    # (the same number). The second term is finite for repeated values; the
    # first is 0/0 there for a basis-invariant loss and is taken as 0.
    eps = torch.finfo(S.dtype).eps
    smax = S.amax(dim=-1, keepdim=True).unsqueeze(-1) if k else S.new_zeros(())
    guard = 8.0 * eps * max(k, 1) * smax
    Sr = S.unsqueeze(-2)  # s_j
    Sc = S.unsqueeze(-1)  # s_i
    Fm = _safe_inv(Sr - Sc, guard)  # includes the diagonal (-> 0)
    Fp = _safe_inv(Sr + Sc, guard)
    offdiag = ~torch.eye(k, dtype=torch.bool, device=S.device)
    Fp = Fp * offdiag
    if gU is not None and gVh is not None:
        inner = 0.5 * ((UhgU + VhgV) * Fm + (UhgU - VhgV) * Fp)
    elif gU is not None:
        inner = 0.5 * UhgU * (Fm + Fp)
    else:
        inner = 0.5 * VhgV * (Fm - Fp)
    if gS is not None:
        inner = inner + torch.diag_embed(gS).to(inner.dtype)
    if is_complex and gU is not None:
        # Gauge term: diag(U^H gU - gU^H U) / (2 S) (purely imaginary).
        inner = inner + torch.diag_embed(UhgU.diagonal(dim1=-2, dim2=-1) / (2 * S))

    if m > k and gU is not None:
        gA = U @ inner
        gUSinv = gU / Sr
        gA = gA + gUSinv - U @ (U.mH @ gUSinv)
        gA = gA @ Vh
    elif n > k and gVh is not None:
        gA = inner @ Vh
        SinvgVh = gVh / Sc
        gA = gA + SinvgVh - (SinvgVh @ Vh.mH) @ Vh
        gA = U @ gA
    else:
        gA = U @ inner @ Vh
    return gA


# ---- the ops -------------------------------------------------------------------

CURRENT_STREAM = -1  # the op's stream argument: torch.cuda.current_stream()
_TOL_ROW = OPTION_NAMES.index("tol")
_MAX_SWEEPS_ROW = OPTION_NAMES.index("max_sweeps")

_ad = _frameworks._get(_frameworks.TorchAdapter)
_REAL = {torch.complex64: torch.float32, torch.complex128: torch.float64}
_SUPPORTED = (torch.float32, torch.float64, torch.complex64, torch.complex128)
_HAVE_OPS = all(hasattr(torch.library, f) for f in ("custom_op", "register_fake"))
_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None) or (lambda: False)

# The ops' arguments: the call's own, then every option of the library's
# table in its order (an option added there is an argument here).
_SCHEMA = ("(Tensor A, bool details, bool report, bool check_finite, bool warn, int stream, "
           + ", ".join(f"{'float' if o.kind == 'real' else 'int'} {o.name}" for o in OPTIONS)
           + ")")
_NARGS = 5 + len(OPTIONS)  # the arguments after A


def _ordered(device, backend, stream):
    """Whether the op takes the stream-ordered call: a CUDA tensor on the
    cuda backend and the current stream."""
    return device[0] == "cuda" and backend == _native.BACKEND_CUDA and stream == CURRENT_STREAM


def _check_input(A, where):
    if A.dim() < 2:
        raise ValueError(f"{where}: expected an array of at least 2 dimensions (..., m, n), "
                         f"got shape {tuple(A.shape)}")
    if A.dtype not in _SUPPORTED:
        raise TypeError(f"{where}: the op takes float32, float64, complex64 and complex128 "
                        f"tensors, got {A.dtype} (bsvd.svd promotes the others)")


def _impl(A, vectors, details, report, check_finite, warn, stream, *values, op=True):
    """The ops' implementation (CPU and CUDA): (U, S, Vh, info, sweeps,
    path), U and Vh None without vectors; op False (a direct call): sweeps
    and path None without details, where the op returns empty tensors.
    values: every option, in the table's order (option_values)."""
    where = "bsvd.svd" if vectors else "bsvd.svdvals"
    _check_input(A, where)
    name = _ad.dtype_name(A)
    device = _ad.device(A)
    check_tol(values[_TOL_ROW], name, where)  # the AccuracyWarning of a large tol, at run time
    backend = values[BACKEND_ROW]
    ordered = _ordered(device, backend, stream)
    if stream == CURRENT_STREAM:
        cuda = device[0] == "cuda" and backend == _native.BACKEND_CUDA
        handle = _ad.stream(device) if cuda else 0
    else:
        handle = stream
    opts = make_options(values, handle)
    kw = dict(max_sweeps=values[_MAX_SWEEPS_ROW], check_finite=check_finite, warn=warn)
    # The blocking call gives info only with details: always asked here.
    U, S, Vh, info, sweeps, path = _bsvd_pkg._reduced(
        _ad, A, name, device, opts, vectors, details or not ordered, ordered, report, kw, where)
    dev = A.device
    if not ordered:  # NumPy arrays of the blocking call
        info = torch.from_numpy(info).to(dev)
        sweeps = torch.from_numpy(sweeps).to(dev) if details else None
    path = torch.from_numpy(path) if details else None
    if not op:
        return U, S, Vh, info, sweeps, path
    if sweeps is None:
        sweeps = torch.empty((0,), dtype=torch.int32, device=dev)
    if path is None:  # on A's device: a CUDA graph of torch.compile keeps no CPU output
        path = torch.empty((0,), dtype=torch.int32, device=dev)
    return U, S, Vh, info, sweeps, path


def _fake(A, vectors, details):
    """Outputs of the ops' shapes, dtypes, devices and strides (U is the
    transpose of a (..., k, m) buffer, as _impl makes it)."""
    _check_input(A, "bsvd.svd" if vectors else "bsvd.svdvals")
    b = tuple(A.shape[:-2])
    m, n = A.shape[-2], A.shape[-1]
    k = torch.sym_min(m, n)
    S = A.new_empty(b + (k,), dtype=_REAL.get(A.dtype, A.dtype))
    info = A.new_empty(b, dtype=torch.int32)
    sweeps = A.new_empty(b if details else (0,), dtype=torch.int32)
    path = (torch.empty(b, dtype=torch.int32, device="cpu") if details
            else A.new_empty((0,), dtype=torch.int32))
    if not vectors:
        return S, info, sweeps, path
    U = A.new_empty(b + (k, m)).mT
    Vh = A.new_empty(b + (k, n))
    return U, S, Vh, info, sweeps, path


def _setup_context(ctx, inputs, output):
    U, S, Vh = output[:3]
    ctx.save_for_backward(U, S, Vh)
    ctx.set_materialize_grads(False)  # gradients of unused outputs stay None


def _backward(ctx, gU, gS, gVh, ginfo, gsweeps, gpath):
    U, S, Vh = ctx.saved_tensors
    return (svd_backward(gU, gS, gVh, U, S, Vh),) + (None,) * _NARGS


class _SVDFunction(torch.autograd.Function):
    """The op's autograd without torch.library (torch < 2.4: eager only)."""
    @staticmethod
    def forward(ctx, A, *args):
        out = _impl(A.detach(), True, *args)
        ctx.save_for_backward(*out[:3])
        ctx.set_materialize_grads(False)
        ctx.mark_non_differentiable(*out[3:])
        return out

    @staticmethod
    def backward(ctx, gU, gS, gVh, *rest):
        return _backward(ctx, gU, gS, gVh, *rest)


def _svd_kernel(A, *args):
    return tuple(_impl(A, True, *args))


def _svdvals_kernel(A, *args):
    _, S, _, info, sweeps, path = _impl(A, False, *args)
    return S, info, sweeps, path


if _HAVE_OPS:
    _svd_def = torch.library.custom_op(
        "bsvd::svd", _svd_kernel, mutates_args=(),
        schema=_SCHEMA + " -> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)")
    _svdvals_def = torch.library.custom_op(
        "bsvd::svdvals", _svdvals_kernel, mutates_args=(),
        schema=_SCHEMA + " -> (Tensor, Tensor, Tensor, Tensor)")
    _svd_def.register_fake(lambda A, details, *args: _fake(A, True, details))
    _svdvals_def.register_fake(lambda A, details, *args: _fake(A, False, details))
    _svd_def.register_autograd(_backward, setup_context=_setup_context)
    _svd_op = torch.ops.bsvd.svd.default
    _svdvals_op = torch.ops.bsvd.svdvals.default
else:
    _svd_op = _SVDFunction.apply
    _svdvals_op = _svdvals_kernel


def _plain_eager_check():
    """A check that a call may run the ops' implementation directly: plain
    eager execution, where the op would only add its dispatch (about a
    third of the host time of a stream-ordered call). The op stays for
    autograd, torch.compile and fake tensors, tracing, functorch transforms,
    __torch_function__ / __torch_dispatch__ modes and tensor subclasses.
    None (always the op) where this torch lacks a query."""
    C = torch._C
    try:
        fmode, dstack = C._is_torch_function_mode_enabled, C._len_torch_dispatch_stack
        wrapped, tracing = C._functorch.is_functorch_wrapped_tensor, C._get_tracing_state
    except AttributeError:
        return None
    grad = torch.is_grad_enabled

    def plain(x):
        return (type(x) is torch.Tensor and not (x.requires_grad and grad())
                and not _compiling() and not fmode() and dstack() == 0 and not wrapped(x)
                and tracing() is None)
    return plain


_plain_eager = _plain_eager_check() or (lambda x: False)


def _op_args(A, compute_uv=True, return_info=False, **kwargs):
    """(op, args) of the op call bsvd.svd makes for a tensor A already in a
    supported dtype (for torch.library.opcheck and tests)."""
    kw = dict(_bsvd_pkg._OPTION_DEFAULTS)
    kw.update(kwargs)
    kw["check"] = check_mode(kw["check"], kw["check_finite"], "bsvd.svd")
    args = _args(A, _ad.dtype_name(A), _ad.device(A), return_info, kw, "bsvd.svd")
    return (_svd_op if compute_uv else _svdvals_op), (A,) + args


def _args(x, name, device, return_info, kw, where):
    vals = option_values(kw, device, name, where, warn_tol=False)
    stream = CURRENT_STREAM if kw["stream"] is None else stream_handle(kw["stream"], where)
    report = kw["check"] if kw["check"] is not None else not _ordered(device, vals[BACKEND_ROW],
                                                                       stream)
    return (return_info, report, kw["check_finite"], kw["warn"], stream) + vals


# ---- bsvd.svd on tensors -----------------------------------------------------------

def _complete(Q, rows, k):
    """(..., rows, k) orthonormal columns -> (..., rows, rows): Q and an
    orthonormal basis of its complement (no gradient flows into that part,
    as in torch.linalg.svd)."""
    if k == rows:
        return Q
    if k == 0:
        e = torch.eye(rows, dtype=Q.dtype, device=Q.device)
        return e.expand(tuple(Q.shape[:-2]) + (rows, rows)).clone()
    full = torch.linalg.qr(Q.detach(), mode="complete")[0]
    return torch.cat([Q, full[..., :, k:]], dim=-1)


def _info(info, sweeps, path):
    """The Info of return_info: NumPy arrays for CPU tensors (as for NumPy
    input); info and sweeps stay on the GPU for CUDA tensors (no wait);
    tensors throughout while traced (torch.compile, fake tensors)."""
    if _compiling() or type(info) is not torch.Tensor or type(path) is not torch.Tensor:
        return _bsvd_pkg.Info(info, sweeps, path)
    if info.device.type == "cpu":
        info, sweeps = info.numpy(), sweeps.numpy()
    return _bsvd_pkg.Info(info, sweeps, path.numpy())


def _svd(A, full_matrices, compute_uv, return_info, kw, where):
    """bsvd.svd / bsvd.svdvals for a torch tensor (the arguments checked
    there, the options in kw): the op call and the completion of U and Vh
    for full_matrices. Traced by torch.compile (no graph break)."""
    if A.dim() < 2:
        raise ValueError(f"{where}: expected an array of at least 2 dimensions (..., m, n), "
                         f"got shape {tuple(A.shape)}")
    x = A.resolve_conj().resolve_neg()  # no-ops without the bits (and traceable)
    x, name = promote(_ad, x, where)
    device = _ad.device(x)
    args = _args(x, name, device, return_info, kw, where)
    if _plain_eager(x):
        U, S, Vh, info, sweeps, path = _impl(x, compute_uv, *args, op=False)
    elif compute_uv or (x.requires_grad and torch.is_grad_enabled()):
        U, S, Vh, info, sweeps, path = _svd_op(x, *args)
    else:
        S, info, sweeps, path = _svdvals_op(x, *args)
    inf = _info(info, sweeps, path) if return_info else None
    if not compute_uv:
        return (S, inf) if return_info else S
    if full_matrices:
        m, k = U.shape[-2], U.shape[-1]
        n = Vh.shape[-1]
        U = _complete(U, m, k)
        Vh = _complete(Vh.mH, n, k).mH
    if return_info:
        return _bsvd_pkg.SVDInfoResult(U, S, Vh, inf)
    return torch.return_types.linalg_svd((U, S, Vh))


def svd(A, full_matrices=True, compute_uv=True, **kwargs):
    """Differentiable bsvd.svd for a torch tensor A (..., m, n), a drop-in
    for torch.linalg.svd: torch.return_types.linalg_svd (U, S, Vh), and
    SVDInfoResult (U, S, Vh, info) with return_info=True. full_matrices=True
    (the default, as torch) completes U and Vh; as in torch, the gradients
    of the completed part are ignored. compute_uv=False returns S alone.
    Options as bsvd.svd."""
    if not isinstance(A, torch.Tensor):
        raise TypeError(f"bsvd.torch.svd: expects a torch.Tensor, got {type(A).__name__}")
    return _bsvd_pkg.svd(A, full_matrices, compute_uv, **kwargs)


def svdvals(A, **kwargs):
    """Differentiable singular values of the tensor A (under autograd the
    vectors are computed too, for the backward, as torch.linalg.svdvals
    does). Options as bsvd.svd."""
    if not isinstance(A, torch.Tensor):
        raise TypeError(f"bsvd.torch.svdvals: expects a torch.Tensor, got {type(A).__name__}")
    return _bsvd_pkg.svdvals(A, **kwargs)
