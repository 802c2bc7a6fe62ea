"""T1-T4 accuracy ratios (docs/accuracy.md) for the Python tests, in NumPy.

Every ratio is in units of u, the unit roundoff of the input precision, and
passes below LIMIT. Singular vectors are never compared element by element.
"""
import numpy as np

LIMIT = 30.0


def unit_roundoff(dtype):
    return 2.0 ** -24 if np.dtype(dtype) in (np.float32, np.complex64) else 2.0 ** -53


def _wide(dtype):
    return np.clongdouble if np.iscomplexobj(np.zeros(0, dtype)) else np.longdouble


def _norm1(X):
    """Matrix 1-norm (max column sum) of the last two axes."""
    return np.abs(X).sum(axis=-2).max(axis=-1) if X.shape[-1] and X.shape[-2] else np.zeros(X.shape[:-2])


def ratios(A, U, S, Vh, S_ref=None):
    """Worst T1, T2 (U and V), T3 over the batch and T4 (bool) for numpy
    arrays A (..., m, n), U (..., m, k), S (..., k), Vh (..., k, n)."""
    A = np.asarray(A)
    dtype = A.dtype
    u = unit_roundoff(dtype)
    W = _wide(dtype)
    m, n = A.shape[-2:]
    k = min(m, n)
    Aw = A.astype(W)
    Uw = np.asarray(U).astype(W)
    Vhw = np.asarray(Vh).astype(W)
    Sw = np.asarray(S).astype(np.longdouble)
    R = Aw - Uw @ (Sw[..., :, None].astype(W) * Vhw)
    nA = _norm1(Aw)
    nA = np.where(nA > 0, nA, 1)
    t1 = _norm1(R) / (max(n, 1) * nA * u)
    I = np.eye(k, dtype=W)
    t2u = _norm1(I - np.swapaxes(Uw, -1, -2).conj() @ Uw) / (max(m, 1) * u)
    t2v = _norm1(I - Vhw @ np.swapaxes(Vhw, -1, -2).conj()) / (max(n, 1) * u)
    if S_ref is None:
        A64 = A.astype(np.complex128 if np.iscomplexobj(A) else np.float64)
        S_ref = np.linalg.svd(A64, compute_uv=False)
    S_ref = np.asarray(S_ref).astype(np.longdouble)
    s1 = S_ref[..., :1].max(axis=-1) if k else np.ones(A.shape[:-2])
    s1 = np.where(s1 > 0, s1, 1)
    t3 = np.sqrt(((Sw - S_ref) ** 2).sum(axis=-1)) / (max(k, 1) * s1 * u)
    t4 = bool(np.all(Sw >= 0) and np.all(np.diff(Sw, axis=-1) <= 0))
    worst = lambda t: float(np.max(t)) if np.size(t) else 0.0  # noqa: E731
    return dict(t1=worst(t1), t2u=worst(t2u), t2v=worst(t2v), t3=worst(t3), t4=t4)


def assert_ratios(A, U, S, Vh, limit=LIMIT, S_ref=None):
    r = ratios(A, U, S, Vh, S_ref=S_ref)
    assert r["t4"], f"T4 failed (S not non-negative descending): {r}"
    for key in ("t1", "t2u", "t2v", "t3"):
        assert r[key] < limit, f"{key} = {r[key]:.3g} >= {limit}: {r}"
    return r


def random_matrix(rng, shape, dtype, cond=None):
    """Random (..., m, n) matrices; with cond, singular values geometric from
    1 to 1/cond (A = Q1 diag(s) Q2^H)."""
    cplx = np.iscomplexobj(np.zeros(0, dtype))

    def gauss(shp):
        x = rng.standard_normal(shp)
        if cplx:
            x = x + 1j * rng.standard_normal(shp)
        return x

    if cond is None:
        return gauss(shape).astype(dtype)
    *b, m, n = shape
    k = min(m, n)
    Q1 = np.linalg.qr(gauss((*b, m, k)))[0]
    Q2 = np.linalg.qr(gauss((*b, n, k)))[0]
    s = cond ** (-np.arange(k) / max(k - 1, 1))
    A = (Q1 * s[..., None, :]) @ np.swapaxes(Q2, -1, -2).conj()
    return A.astype(dtype)
