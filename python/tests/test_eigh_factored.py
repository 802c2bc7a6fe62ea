"""bsvd.eigh_factored (CPU): the eigenpairs of H = G J G^H from the
hyperbolic SVD of G, against numpy.linalg.eigh of the formed H and against
constructed eigenvalues. docs/hsvd.md."""
import numpy as np
import pytest

import bsvd
from helpers import unit_roundoff
from hsvd_helpers import constructed, is_complex

DTYPES = ["float32", "float64", "complex64", "complex128"]


@pytest.fixture
def rng():
    return np.random.default_rng(3636)


def _H(G, J):
    W = G.astype(np.complex128 if is_complex(G.dtype) else np.float64)
    return (W * np.asarray(J, float)) @ np.conj(np.swapaxes(W, -1, -2))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,n,nplus", [(8, 5, 2), (6, 6, 3), (7, 3, 3), (5, 4, 0)])
def test_against_numpy_eigh(rng, dtype, m, n, nplus):
    G = rng.standard_normal((3, m, n))
    if is_complex(dtype):
        G = G + 1j * rng.standard_normal(G.shape)
    G = G.astype(dtype)
    J = np.where(np.arange(n) < nplus, 1, -1)
    H = _H(G, J)
    ref = np.linalg.eigvalsh(H)
    w, v = bsvd.eigh_factored(G, nplus)
    assert w.shape == (3, m) and v.shape == (3, m, m)
    assert w.dtype == np.finfo(G.dtype).dtype and v.dtype == G.dtype
    assert np.all(np.diff(w, axis=-1) >= 0)
    u = unit_roundoff(dtype)
    scale = np.abs(ref).max(axis=-1, keepdims=True)
    assert np.abs(w - ref).max() / (scale.min() * m * u) < 100
    # eigenpairs: H v = v diag(w), v unitary
    R = H @ v - v * w[..., None, :]
    assert np.abs(R).max() / (scale.min() * m * u) < 100
    VV = np.conj(np.swapaxes(v, -1, -2)) @ v
    assert np.abs(VV - np.eye(m)).max() / (m * u) < 30
    # the factor's part alone
    wf, vf = bsvd.eigh_factored(G, nplus, full=False)
    assert wf.shape == (3, n) and vf.shape == (3, m, n)
    Rf = H @ vf - vf * wf[..., None, :]
    assert np.abs(Rf).max() / (scale.min() * m * u) < 100
    np.testing.assert_array_equal(bsvd.eigh_factored(G, nplus, eigvals_only=True), w)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_constructed_eigenvalues(rng, dtype):
    """G = Q diag(sigma) V^-1 (V J-unitary): H = G J G^H has the eigenvalues
    +sigma^2 (the +1 side) and -sigma^2 (the -1 side), known exactly."""
    m, n, nplus = 9, 6, 4
    G, sig = constructed(rng, 5, m, n, nplus, dtype, phi_max=1.0)
    lam = np.sort(np.concatenate([sig[:, :nplus] ** 2, -sig[:, nplus:] ** 2,
                                  np.zeros((5, m - n))], axis=-1), axis=-1)
    w = bsvd.eigh_factored(G, nplus, eigvals_only=True)
    kappa = np.linalg.norm(bsvd.hsvd(G, nplus).Vh, 2, axis=(-2, -1)) ** 2
    ratio = np.abs(w - lam).max(axis=-1) / (n * unit_roundoff(dtype) * kappa)
    assert ratio.max() < 30, ratio


def test_definite_without_signature(rng):
    """J = I when no signature is given: the eigenvalues of G G^H, the
    squared singular values."""
    G = rng.standard_normal((4, 7, 3))
    w, v = bsvd.eigh_factored(G)
    ref = np.linalg.eigvalsh(G @ np.swapaxes(G, -1, -2))
    np.testing.assert_allclose(w, ref, atol=1e-13 * np.abs(ref).max())
    assert np.all(w[:, :4] == 0) and np.all(w[:, 4:] > 0)
    S = bsvd.svd(G, compute_uv=False)
    np.testing.assert_allclose(w[:, 4:], (S ** 2)[:, ::-1], rtol=1e-14)


def test_signs_form_matches_nplus_form(rng):
    G = rng.standard_normal((2, 6, 4))
    sg = np.array([-1, 1, -1, 1])
    w, v = bsvd.eigh_factored(G, signs=sg)
    ref = np.linalg.eigvalsh(_H(G, sg))
    np.testing.assert_allclose(w, ref, atol=1e-13 * np.abs(ref).max())
    w2 = bsvd.eigh_factored(G[..., [1, 3, 0, 2]], 2, eigvals_only=True)
    np.testing.assert_array_equal(w, w2)


def test_graded_small_eigenvalues(rng):
    """G = B D, B well conditioned, D graded over 3 decades (the factor
    L |D|^(1/2) of a pivoted symmetric indefinite factorization has this
    form): the small eigenvalues of H = G J G^T to relative accuracy, which
    numpy.linalg.eigh of the formed H in the same precision loses.
    Reference: eigh in float64 of the float32 factor's H (about 1e-10
    relative on these)."""
    m = n = 6
    B = rng.standard_normal((10, m, n))
    D = 10.0 ** -np.array([0, 3, 1, 2.5, 0.5, 2])
    G = (B * D).astype(np.float32)
    J = np.array([1, 1, 1, -1, -1, -1])
    H = _H(G, J)
    ref = np.linalg.eigvalsh(H)
    w = bsvd.eigh_factored(G, 3, eigvals_only=True).astype(float)
    small = np.argsort(np.abs(ref), axis=-1)[:, :2]

    def rel(x):
        return np.abs(np.take_along_axis(x - ref, small, -1)) / \
            np.abs(np.take_along_axis(ref, small, -1))

    ours = rel(w).max()
    theirs = rel(np.linalg.eigvalsh(H.astype(np.float32)).astype(float)).max()
    assert ours < 30 * n * 2.0 ** -24, ours
    assert theirs > 100 * ours, (theirs, ours)  # the test tells the two apart


@pytest.mark.parametrize("shape", [(0, 4, 3), (5, 0), (2, 0, 0)])
def test_empty(shape):
    G = np.zeros(shape)
    m = shape[-1 - 1]
    w, v = bsvd.eigh_factored(G)
    assert w.shape == shape[:-2] + (m,) and v.shape == shape[:-2] + (m, m)
    if v.size:
        np.testing.assert_array_equal(v, np.broadcast_to(np.eye(m), v.shape))
        assert np.all(w == 0)


def test_info_and_errors(rng):
    x = rng.standard_normal(4)
    G = np.stack([x, x], axis=1)
    with pytest.warns(bsvd.HyperbolicBreakdownWarning):
        w, info = bsvd.eigh_factored(G, 1, eigvals_only=True, return_info=True)
    assert info.info == -2
    res = bsvd.eigh_factored(rng.standard_normal((2, 4, 2)), 1, return_info=True)
    assert isinstance(res, bsvd.EighInfoResult) and res.info.info.tolist() == [0, 0]
    with pytest.raises(TypeError, match="unexpected argument"):
        bsvd.eigh_factored(G, 1, UPLO="L")
    with pytest.raises(TypeError, match="full"):
        bsvd.eigh_factored(G, 1, full=None)
    with pytest.raises(ValueError, match="m >= n"):
        bsvd.eigh_factored(G.T, 1)
