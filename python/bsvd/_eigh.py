"""bsvd.eigh_factored: eigenvalues and eigenvectors of Hermitian matrices
given as factors, H = G J G^H, by the hyperbolic SVD of G (_hsvd.py),
without forming H.

G = U diag(S) Vh with Vh J Vh^H = Jout gives H = U diag(S) Jout diag(S) U^H:
the eigenvalues of H are signs * S**2 (and m - n zeros), the eigenvectors
the columns of U. One-sided Jacobi works on G, so the small eigenvalues
keep their relative accuracy where G is well conditioned after a column
scaling (docs/hsvd.md, "Accuracy"); an eigensolver on the formed H resolves
them only to about u * ||H||.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ._args import check_flag
from ._hsvd import _KW, checked_call, to_device


class EighResult(NamedTuple):
    """eigenvalues (..., k) ascending and eigenvectors (..., m, k), as
    numpy.linalg.eigh's EighResult: H @ v[..., j] = w[j] * v[..., j]."""
    eigenvalues: Any
    eigenvectors: Any


class EighInfoResult(NamedTuple):
    """EighResult and the per-matrix HSVDInfo (return_info=True)."""
    eigenvalues: Any
    eigenvectors: Any
    info: Any


def eigh_factored(G, nplus=None, *, signs=None, eigvals_only=False, full=True,
                  return_info=False, **options):
    """Eigenvalues (ascending, as numpy.linalg.eigh) and eigenvectors of the
    Hermitian matrices H = G @ J @ G^H (..., m, m) given by their factors G
    (..., m, n), m >= n, and signature J, without forming H.

    The signature as bsvd.hsvd takes it: nplus (J = diag(I_nplus,
    -I_(n-nplus)), an int or one per matrix) or signs (the +-1 diagonal of
    J, (n,) or (..., n), in G's column order). Neither: J = I, the positive
    semidefinite H = G G^H.

    full=True (the default): all m eigenvalues (..., m), the n of the
    factor and m - n zeros, and eigenvectors (..., m, m) (for the zeros an
    orthonormal basis of the complement of the others; not unique),
    numpy.linalg.eigh's shapes. full=False: the n eigenvalues that come
    from the factor (..., n) and their eigenvectors (..., m, n); for
    m == n both are the same.

    Returns EighResult(eigenvalues, eigenvectors); eigvals_only=True
    returns the eigenvalues alone (the vectors are not computed).
    return_info=True appends the HSVDInfo (a tuple (w, info) with
    eigvals_only). Options and warnings as bsvd.hsvd's; arrays as
    bsvd.hsvd takes them (results in G's library and device), the
    eigenvalues in the real dtype of G.
    """
    where = "bsvd.eigh_factored"
    eigvals_only = check_flag(eigvals_only, "eigvals_only", where)
    full = check_flag(full, "full", where)
    return_info = check_flag(return_info, "return_info", where)
    unknown = set(options) - set(_KW)
    if unknown:
        raise TypeError(f"{where}: unexpected argument {sorted(unknown)[0]!r}")
    kw = dict(_KW, **options)
    x, U, S, _, out_signs, _, info, origin = checked_call(G, nplus, signs, not eigvals_only, kw,
                                                          where, default_plus=True)
    *bshape, m, n = x.shape
    bshape = tuple(bshape)
    w = out_signs * (S * S)  # int8 * real keeps the real dtype
    if full and m > n:
        w = np.concatenate([w, np.zeros(bshape + (m - n,), w.dtype)], axis=-1)
        if U is not None:
            U = np.concatenate([U, _complement(U, m, n, bshape)], axis=-1)
    order = np.argsort(w, axis=-1, kind="stable")
    w = to_device(np.take_along_axis(w, order, axis=-1), origin)
    if eigvals_only:
        return (w, info) if return_info else w
    v = to_device(np.take_along_axis(U, order[..., None, :], axis=-1), origin)
    return EighInfoResult(w, v, info) if return_info else EighResult(w, v)


def _complement(U, m, n, bshape):
    """(..., m, m - n): orthonormal columns orthogonal to U's n columns."""
    if n == 0:
        return np.broadcast_to(np.eye(m, dtype=U.dtype), bshape + (m, m)).copy()
    if U.size == 0:
        return np.zeros(bshape + (m, m - n), U.dtype)
    return np.linalg.qr(U, mode="complete")[0][..., n:]
