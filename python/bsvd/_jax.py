"""bsvd.svd for JAX arrays: the XLA FFI call "bsvd_svd" (python/src/jax_ffi.cpp)
through jax.ffi.ffi_call, so the same code runs eagerly, under jax.jit, vmap
and grad, on the CPU (the blocking library call on host buffers) and on
CUDA GPUs (the library's _async form on XLA's stream, workspace from XLA's
scratch allocator: no host synchronization).

Layout: XLA hands the handler row-major buffers; the column-major library
reads row-major A as A^T without a copy (trans "T" in bsvd/__init__.py's
_reduced), which gives U = conj(V1) and Vh = U1^T for A^T = U1 S V1^H: the
handler writes the library's U into Vh1 (k, n) and its V into U1 (k, m), and
U = U1^T (conjugated for complex) here.

vmap: ffi_call with vmap_method="broadcast_all". The op is natively batched
over any leading dimensions, so a vmapped call is one call with the mapped
axis moved to the front. With its one operand, "expand_dims" would do the
same (the two differ only in how unbatched operands are broadcast);
"broadcast_all" says what the handler supports: all batch dimensions full
size. Nested vmap adds leading dimensions again.

Gradients: jax.custom_jvp on the reduced SVD, the forward-mode form of the
derivative bsvd.torch.svd_backward uses (reverse mode is JAX's transpose of
it), with the same safe inverse for repeated singular values.

Reporting (NaN, non-convergence): info is an output of the call. Outside
any transformation, bsvd.svd reads it for the warnings / NonFiniteError as
for other arrays (check=None: for CPU arrays, not for GPU arrays, whose call
is stream-ordered); under jit, vmap or grad the values are not known while
tracing, so nothing is reported by default (return_info gives the info
array), and check=True / check_finite=True raise a ValueError at trace
time instead of being silently dropped.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

import bsvd as _pkg
from . import _bsvd, _frameworks
from ._args import option_values, promote

TARGET = "bsvd_svd"

_ad = _frameworks._get(_frameworks.JaxAdapter)
_Tracer = _frameworks.jax_tracer_type()
_registered = False


def available():
    """Whether this build has the FFI handlers (jax found when it was built)."""
    return hasattr(_bsvd, "jax_ffi_targets")


def _register():
    """Registers the handlers with XLA on first use (importing bsvd must not
    import jax)."""
    global _registered
    if not _registered:
        for platform, capsule in _bsvd.jax_ffi_targets().items():
            jax.ffi.register_ffi_target(TARGET, capsule, platform=platform)
        _registered = True


def _flatten_info(info):
    return (info.info, info.sweeps, info.path), None


# Info holds arrays: a pytree node, so that jit / vmap return it.
jax.tree_util.register_pytree_node(_pkg.Info, _flatten_info, lambda _, c: _pkg.Info(*c))


class Config(NamedTuple):
    """The call's static attributes: vectors, and the value of every option
    in the library's table order (bsvd._args.OPTION_NAMES), checked."""
    vectors: bool
    values: tuple

    def attrs(self):
        return {"vectors": np.bool_(self.vectors),
                "options": np.asarray(self.values, dtype=np.float64)}


def _mT(a):
    return jnp.swapaxes(a, -1, -2)


def _mH(a):
    return jnp.conj(_mT(a))


def _call(A, cfg):
    """The FFI call: (U (..., m, k), S, Vh (..., k, n), info, sweeps, path);
    without vectors U and Vh are empty placeholders."""
    _register()
    *b, m, n = A.shape
    b, k = tuple(b), min(m, n)
    real = jnp.finfo(A.dtype).dtype
    i32 = jax.ShapeDtypeStruct(b, jnp.int32)
    vec = (lambda s: jax.ShapeDtypeStruct(s if cfg.vectors else (0,), A.dtype))
    out = (jax.ShapeDtypeStruct(b + (k,), real), vec(b + (k, n)), vec(b + (k, m)), i32, i32, i32)
    S, Vh1, U1, info, sweeps, path = jax.ffi.ffi_call(
        TARGET, out, vmap_method="broadcast_all")(A, **cfg.attrs())
    if not cfg.vectors:
        return U1, S, Vh1, info, sweeps, path
    U = _mT(U1)
    if jnp.iscomplexobj(A):
        U = jnp.conj(U)
    return U, S, Vh1, info, sweeps, path


@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def _svd(A, cfg):
    return _call(A, cfg)


def _safe_inv(D, guard):
    """1 / D where |D| > guard, else 0 (bsvd.torch._safe_inv)."""
    close = jnp.abs(D) <= guard
    return jnp.where(close, 0.0, 1.0 / jnp.where(close, 1.0, D))


def svd_jvp(U, S, Vh, dA):
    """(dU, dS, dVh) of the reduced SVD A = U diag(S) Vh for a tangent dA.

    With dP = U^H dA V, dS = Re diag(dP), and
      dU = U (Om_U + i Im diag(dP) / S) + (I - U U^H) dA V S^-1
      dV = V Om_V + (I - V V^H) dA^H U S^-1
    where off the diagonal (dP S + S dP^H)_ij / (s_j^2 - s_i^2) = Om_U and
    (S dP + dP^H S)_ij / (s_j^2 - s_i^2) = Om_V are evaluated as
      1/2 (dP + dP^H)_ij / (s_j - s_i) +- 1/2 (dP - dP^H)_ij / (s_j + s_i)
    with the safe inverse on both (0 where the difference is below
    8 k eps s_1), as bsvd.torch.svd_backward: its transpose is that
    backward, so gradients are finite at repeated values and exact for
    losses of S and of projectors onto whole blocks of equal values."""
    k = S.shape[-1]
    cdt = U.dtype
    V = _mH(Vh)
    dP = _mH(U) @ dA @ V
    dS = jnp.real(jnp.diagonal(dP, axis1=-2, axis2=-1))
    eps = jnp.finfo(S.dtype).eps
    smax = jnp.max(S, axis=-1, keepdims=True)[..., None] if k else 0.0
    guard = 8.0 * eps * max(k, 1) * smax
    Sr = S[..., None, :]  # s_j
    Sc = S[..., :, None]  # s_i
    off = ~jnp.eye(k, dtype=bool)
    Fm = _safe_inv(Sr - Sc, guard)  # 0 on the diagonal
    Fp = jnp.where(off, _safe_inv(Sr + Sc, guard), 0.0)
    sym = 0.5 * (dP + _mH(dP))
    skew = 0.5 * (dP - _mH(dP))
    om_u = sym * Fm.astype(cdt) + skew * Fp.astype(cdt)
    om_v = sym * Fm.astype(cdt) - skew * Fp.astype(cdt)
    if jnp.iscomplexobj(dP):
        # The phase of each pair goes to U: i Im(dP_ii) / s_i (selected, not
        # multiplied by the identity: an infinite 1/s_i must stay on the
        # diagonal).
        phase = jnp.diagonal(skew, axis1=-2, axis2=-1) / S.astype(cdt)
        om_u = om_u + jnp.where(jnp.eye(k, dtype=bool), phase[..., None, :], 0)
    dU = U @ om_u
    dV = V @ om_v
    m, n = U.shape[-2], Vh.shape[-1]
    if m > k:
        dAV = dA @ V
        dU = dU + (dAV - U @ (_mH(U) @ dAV)) / Sr.astype(cdt)
    if n > k:
        dAhU = _mH(dA) @ U
        dV = dV + (dAhU - V @ (Vh @ dAhU)) / Sr.astype(cdt)
    return dU, dS, _mH(dV)


@_svd.defjvp
def _svd_jvp_rule(cfg, primals, tangents):
    A, = primals
    dA, = tangents
    # The vectors are needed for dS too (svdvals computes them under AD).
    U, S, Vh, info, sweeps, path = _svd(A, cfg._replace(vectors=True))
    dU, dS, dVh = svd_jvp(U, S, Vh, dA)
    zero = np.zeros(np.shape(info), jax.dtypes.float0)
    if not cfg.vectors:
        U = Vh = jnp.zeros((0,), A.dtype)
        dU = dVh = jnp.zeros((0,), A.dtype)
    return (U, S, Vh, info, sweeps, path), (dU, dS, dVh, zero, zero, zero)


def _complete(Q, rows, k):
    """(..., rows, k) orthonormal columns -> (..., rows, rows): Q and an
    orthonormal basis of its complement by QR (no gradient flows into that
    part, as in bsvd.torch and torch.linalg.svd)."""
    if k == rows:
        return Q
    if k == 0:
        return jnp.broadcast_to(jnp.eye(rows, dtype=Q.dtype), Q.shape[:-2] + (rows, rows))
    full = jnp.linalg.qr(jax.lax.stop_gradient(Q), mode="complete")[0]
    return jnp.concatenate([Q, full[..., :, k:]], axis=-1)


@functools.partial(jax.jit, static_argnums=(1, 2))
def _run(A, cfg, full_matrices):
    """The reduced SVD and, for full_matrices, the completion: one jitted
    function, so an eager call is one dispatch (cached per shape and
    options)."""
    U, S, Vh, info, sweeps, path = _svd(A, cfg)
    if cfg.vectors and full_matrices:
        m, n, k = U.shape[-2], Vh.shape[-1], S.shape[-1]
        U = _complete(U, m, k)
        Vh = _mH(_complete(_mH(Vh), n, k))
    return U, S, Vh, info, sweeps, path


def _device(x):
    """("cpu" | "cuda", id) of a concrete array, None while tracing."""
    if isinstance(x, _Tracer):
        return None
    return _ad.device(x)


def svd(A, full_matrices, compute_uv, return_info, kw, where):
    """bsvd.svd / svdvals on a JAX array (the arguments checked there, the
    options in kw)."""
    if kw["stream"] is not None:
        raise ValueError(f"{where}: stream= is not supported for JAX arrays: the call runs on "
                         "XLA's stream (leave stream=None)")
    if A.ndim < 2:
        raise ValueError(f"{where}: expected an array of at least 2 dimensions (..., m, n), "
                         f"got shape {tuple(A.shape)}")
    x, name = promote(_ad, A, where)
    device = _device(x)
    # Checked against the device where it is known; "auto" is resolved by
    # the handler of the platform XLA lowers for.
    cfg = Config(bool(compute_uv), option_values(kw, device, name, where))
    U, S, Vh, info, sweeps, path = _run(x, cfg, bool(full_matrices))
    report = kw["check"]
    if report is None:  # host data reports; a GPU call is stream-ordered
        report = device is not None and device[0] == "cpu"
    if report:
        if isinstance(info, _Tracer):
            raise ValueError(
                f"{where}: check=True / check_finite=True read the per-matrix info on the host, "
                "which cannot be done inside jax.jit, vmap or grad (the values are not known "
                "while tracing): call with return_info=True and use info.info (0 converged, > 0 "
                "not converged, -1 NaN / Inf), or call outside the transformation")
        host = np.asarray(info)  # waits for the call
        nc = int(np.count_nonzero(host > 0))
        nf = int(np.count_nonzero(host == _bsvd.INFO_NONFINITE))
        if nc or nf:
            _pkg._report(nc, nf, host.size, kw["max_sweeps"], kw["check_finite"], kw["warn"],
                         where)
    inf = _pkg.Info(info, sweeps, path) if return_info else None
    if not compute_uv:
        return (S, inf) if return_info else S
    if return_info:
        return _pkg.SVDInfoResult(U, S, Vh, inf)
    return _pkg.SVDResult(U, S, Vh)
