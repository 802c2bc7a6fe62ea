"""Test matrices with known hyperbolic singular values and the accuracy
ratios of docs/hsvd.md ("Accuracy"), in NumPy (extended precision for the
residuals)."""
import numpy as np

from helpers import unit_roundoff

LIMIT = 30.0


def is_complex(dtype):
    return np.iscomplexobj(np.zeros(0, dtype))


def _gauss(rng, shape, cplx):
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if cplx else x


def j_unitary(rng, n, nplus, phi_max, cplx):
    """A random J-unitary V (V^H J V = J, J = diag(I_nplus, -I_(n-nplus)))
    in float64 / complex128: 4n random plane rotations within a side and
    hyperbolic rotations across it (|phi| <= phi_max), then a unitary
    diagonal of phases (complex)."""
    V = np.eye(n, dtype=complex if cplx else float)
    for _ in range(4 * n):
        if n < 2:
            break
        p, q = sorted(rng.choice(n, 2, replace=False))
        R = np.eye(n, dtype=V.dtype)
        if (p < nplus) == (q < nplus):
            c, s = np.cos(t := rng.uniform(0, 2 * np.pi)), np.sin(t)
            R[p, p], R[p, q], R[q, p], R[q, q] = c, -s, s, c
        else:
            phi = rng.uniform(-phi_max, phi_max)
            c, s = np.cosh(phi), np.sinh(phi)
            R[p, p], R[p, q], R[q, p], R[q, q] = c, s, s, c
        V = V @ R
    if cplx:
        V = V * np.exp(1j * rng.uniform(0, 2 * np.pi, n))
    return V


def constructed(rng, batch, m, n, nplus, dtype, phi_max=1.0, sigma=None):
    """(G (batch, m, n) of dtype, sigma (batch, n) float64): G = Q diag(sigma)
    V^-1 with Q Haar (m x n orthonormal) and V J-unitary, so that the
    hyperbolic singular values are sigma (the first nplus on the +1 side)."""
    cplx = is_complex(dtype)
    G = np.empty((batch, m, n), complex if cplx else float)
    sig = np.empty((batch, n))
    J = np.diag(np.where(np.arange(n) < nplus, 1.0, -1.0))
    for b in range(batch):
        Q = np.linalg.qr(_gauss(rng, (m, n), cplx))[0]
        V = j_unitary(rng, n, nplus, phi_max, cplx)
        s = rng.uniform(0.1, 1.0, n) if sigma is None else sigma
        sig[b] = s
        Vinv = J @ V.conj().T @ J
        G[b] = (Q * s) @ Vinv
    return G.astype(dtype), sig


def sorted_sides(sig, nplus):
    """sigma sorted as the library returns S: the +1 side, then the -1 side,
    each descending."""
    return np.concatenate([-np.sort(-sig[..., :nplus], axis=-1),
                           -np.sort(-sig[..., nplus:], axis=-1)], axis=-1)


def _wide(dtype):
    return np.clongdouble if is_complex(dtype) else np.longdouble


def _norm1(X):
    return np.abs(X).sum(axis=-2).max(axis=-1)


def hsvd_ratios(G, U, S, Vh, J, S_ref=None):
    """Worst J-unitarity, orthogonality, residual (and values) ratios over
    the batch (docs/hsvd.md): Vh J Vh^H = Jout is checked with Jout =
    diag(J's sorted signs); J (n,) or (batch, n) in G's column order."""
    dtype = G.dtype
    u = unit_roundoff(dtype)
    W = _wide(dtype)
    m, n = G.shape[-2:]
    Gw, Uw, Vw = G.astype(W), U.astype(W), Vh.astype(W)
    Sw = S.astype(np.longdouble)
    J = np.broadcast_to(np.asarray(J, float), G.shape[:-2] + (n,))
    Jout = -np.sort(-J, axis=-1)
    kappa = np.linalg.norm(Vh.astype(np.complex128 if is_complex(dtype) else float), 2,
                           axis=(-2, -1)) ** 2
    VJV = (Vw * J[..., None, :].astype(W)) @ np.conj(np.swapaxes(Vw, -1, -2))
    t_j = _norm1(VJV - np.eye(n) * Jout[..., None, :]) / (n * u * kappa)
    t_u = _norm1(np.conj(np.swapaxes(Uw, -1, -2)) @ Uw - np.eye(n)) / (n * u)
    R = Gw - (Uw * Sw[..., None, :].astype(W)) @ Vw
    t_r = _norm1(R) / (_norm1(Gw) * n * u * kappa)
    out = dict(j=float(t_j.max()), u=float(t_u.max()), r=float(t_r.max()))
    if S_ref is not None:
        smax = np.max(S_ref, axis=-1)
        t_v = np.max(np.abs(Sw - S_ref), axis=-1) / (smax * n * u * kappa)
        out["v"] = float(t_v.max())
    return out


def assert_hsvd(G, res, J, S_ref=None, limit=LIMIT):
    r = hsvd_ratios(G, res.U, res.S, res.Vh, J, S_ref)
    for key, val in r.items():
        assert val < limit, f"{key} ratio {val:.3g} >= {limit}: {r}"
    return r
