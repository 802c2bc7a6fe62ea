"""PyTorch autograd for bsvd: ``bsvd.torch.svd(A)`` is a differentiable
drop-in for ``torch.linalg.svd(A)`` (full_matrices=True by default, as
torch).

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
from __future__ import annotations

import torch

import bsvd as _bsvd_pkg

__all__ = ["svd", "svdvals", "svd_backward"]


def _safe_inv(D, guard):
    """1 / D where |D| > guard, else 0."""
    close = D.abs() <= guard
    return torch.where(close, torch.zeros_like(D), 1.0 / torch.where(close, torch.ones_like(D), D))


def svd_backward(gU, gS, gVh, U, S, Vh):
    """Gradient with respect to A of the reduced SVD A = U diag(S) Vh, given
    the gradients of U, S, Vh (any of them may be None)."""
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


class _SVD(torch.autograd.Function):
    @staticmethod
    def forward(ctx, A, kw, full_matrices, holder):
        ad, U, S, Vh, info = _bsvd_pkg._solve(A.detach(), True, True, kw, "bsvd.torch.svd")
        holder.append(info)
        ctx.save_for_backward(U, S, Vh)
        ctx.set_materialize_grads(False)
        if full_matrices:
            U, Vh = _bsvd_pkg._complete_pair(ad, U, Vh)
        return U, S, Vh

    @staticmethod
    def backward(ctx, gU, gS, gVh):
        U, S, Vh = ctx.saved_tensors
        # full_matrices=True: as torch.linalg.svd, the gradients of the
        # completed columns U[..., k:] and rows Vh[..., k:, :] are ignored
        # (that basis is not unique, so no loss may depend on it).
        k = S.shape[-1]
        if gU is not None and gU.shape[-1] != k:
            gU = gU[..., :k]
        if gVh is not None and gVh.shape[-2] != k:
            gVh = gVh[..., :k, :]
        return svd_backward(gU, gS, gVh, U, S, Vh), None, None, None


_DEFAULTS = dict(_bsvd_pkg._OPTION_DEFAULTS)


def _svd_autograd(A, full_matrices=True, compute_uv=True, return_info=False, **kwargs):
    kw = dict(_DEFAULTS)
    unknown = set(kwargs) - set(kw)
    if unknown:
        raise TypeError(f"bsvd.torch.svd: unexpected argument {sorted(unknown)[0]!r}")
    kw.update(kwargs)
    if A.dim() < 2:
        raise ValueError(f"bsvd.torch.svd: expected at least 2 dimensions (..., m, n), got shape {tuple(A.shape)}")
    if A.dtype in (torch.float16, torch.bfloat16):
        A = A.float()
    holder = []
    U, S, Vh = _SVD.apply(A, kw, bool(full_matrices), holder)
    if not compute_uv:
        return (S, holder[0]) if return_info else S
    if return_info:
        return _bsvd_pkg.SVDInfoResult(U, S, Vh, holder[0])
    return torch.return_types.linalg_svd((U, S, Vh))


def svd(A, full_matrices=True, compute_uv=True, **kwargs):
    """Differentiable bsvd.svd for a torch tensor, a drop-in for
    torch.linalg.svd: torch.return_types.linalg_svd (U, S, Vh), and
    SVDInfoResult (U, S, Vh, info) with return_info=True. full_matrices=True
    (the default, as torch) completes U and Vh; as in torch, the gradients
    of the completed part are ignored. Options as bsvd.svd."""
    return _svd_autograd(A, full_matrices=full_matrices, compute_uv=compute_uv, **kwargs)


def svdvals(A, **kwargs):
    """Differentiable singular values (the backward needs the vectors, so
    they are computed too, as torch.linalg.svdvals does under autograd)."""
    return _svd_autograd(A, full_matrices=False, compute_uv=False, **kwargs)
