"""bsvd.hsvd and bsvd.hsvd_batch (CPU): accuracy against constructed
hyperbolic singular values and LAPACK eigenvalues, the signature forms,
layouts, edge cases and argument errors. docs/hsvd.md."""
import warnings

import numpy as np
import pytest

import bsvd
from helpers import unit_roundoff
from hsvd_helpers import assert_hsvd, constructed, is_complex, sorted_sides

DTYPES = ["float32", "float64", "complex64", "complex128"]


@pytest.fixture
def rng():
    return np.random.default_rng(36)


def _signs(n, nplus):
    return np.where(np.arange(n) < nplus, 1, -1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,n,nplus", [(9, 6, 3), (6, 6, 2), (12, 5, 4), (7, 4, 1)])
def test_constructed_values(rng, dtype, m, n, nplus):
    G, sig = constructed(rng, 4, m, n, nplus, dtype, phi_max=1.5)
    res = bsvd.hsvd(G, nplus)
    assert res.U.shape == (4, m, n) and res.S.shape == (4, n) and res.Vh.shape == (4, n, n)
    assert res.U.dtype == G.dtype and res.Vh.dtype == G.dtype
    assert res.S.dtype == np.finfo(G.dtype).dtype
    np.testing.assert_array_equal(res.signs, np.broadcast_to(_signs(n, nplus), (4, n)))
    np.testing.assert_array_equal(res.perm, np.broadcast_to(np.arange(n), (4, n)))
    assert_hsvd(G, res, _signs(n, nplus), S_ref=sorted_sides(sig, nplus))


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigenvalues_against_lapack(rng, dtype):
    """+-S^2 against the eigenvalues of G J G^H from LAPACK (numpy eigvalsh)
    in double precision of the same (rounded) input."""
    m, n, nplus = 8, 5, 2
    G = rng.standard_normal((6, m, n))
    if is_complex(dtype):
        G = G + 1j * rng.standard_normal(G.shape)
    G = G.astype(dtype)
    S, signs = bsvd.hsvd(G, nplus, compute_uv=False)
    lam = np.sort(signs * S.astype(float) ** 2, axis=-1)
    J = np.diag(_signs(n, nplus).astype(float))
    G64 = G.astype(np.complex128 if is_complex(dtype) else float)
    ref = np.linalg.eigvalsh(G64 @ J @ np.conj(np.swapaxes(G64, -1, -2)))
    # without the m - n zero eigenvalues of the m x m matrix (ascending kept)
    ref = np.stack([r[np.sort(np.argsort(np.abs(r))[m - n:])] for r in ref])
    V = bsvd.hsvd(G, nplus).Vh
    kappa = np.linalg.norm(V.astype(complex), 2, axis=(-2, -1)) ** 2
    norm2 = np.linalg.norm(G64, 2, axis=(-2, -1)) ** 2
    ratio = np.abs(lam - ref).max(axis=-1) / (norm2 * n * unit_roundoff(dtype) * kappa)
    assert ratio.max() < 30, ratio


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_graded_relative_accuracy(rng, dtype):
    """Column-graded G = B D (B well conditioned, D over 3 decades): each
    value to a few n u relative error, where an eigensolver on the formed
    G J G^H in the same precision resolves the smallest eigenvalues
    (about 1e-6 of the largest) only to about u / 1e-6. Reference: LAPACK
    on G J G^H in float64."""
    m, n, nplus = 10, 6, 3
    B = rng.standard_normal((8, m, n))
    if is_complex(dtype):
        B = B + 1j * rng.standard_normal(B.shape)
    D = 10.0 ** -np.array([0, 3, 1, 2, 0.5, 2.5])
    G = (B * D).astype(dtype)
    S, signs = bsvd.hsvd(G, nplus, compute_uv=False)
    lam = signs * S.astype(float) ** 2
    G64 = G.astype(np.complex128 if is_complex(dtype) else float)
    J = np.diag(_signs(n, nplus).astype(float))
    ref = np.linalg.eigvalsh(G64 @ J @ np.conj(np.swapaxes(G64, -1, -2)))
    ref = np.stack([r[np.argsort(np.abs(r))[m - n:]] for r in ref])
    ref = np.sort(ref, axis=-1)
    lam = np.sort(lam, axis=-1)
    assert np.abs(ref).min() < 1e-5 * np.abs(ref).max()  # graded indeed
    rel = np.abs(lam - ref) / np.abs(ref) / (n * unit_roundoff(dtype))
    assert rel.max() < 30, rel.max()


@pytest.mark.parametrize("dtype", DTYPES)
def test_signs_partition(rng, dtype):
    m, n = 9, 6
    sg = np.array([-1, 1, -1, 1, 1, -1])
    G = rng.standard_normal((3, m, n)).astype(dtype)
    res = bsvd.hsvd(G, signs=sg)
    np.testing.assert_array_equal(res.perm, np.broadcast_to([1, 3, 4, 0, 2, 5], (3, n)))
    np.testing.assert_array_equal(res.signs[0], [1, 1, 1, -1, -1, -1])
    assert_hsvd(G, res, sg)
    # the partitioned form: G[:, perm] = U S Vh[:, perm], the nplus call's
    part = bsvd.hsvd(G[..., res.perm[0]], 3)
    np.testing.assert_allclose(part.S, res.S, rtol=0, atol=0)
    np.testing.assert_allclose(res.Vh[..., res.perm[0]], part.Vh, rtol=0, atol=0)


def test_signs_per_matrix(rng):
    m, n = 6, 4
    sg = np.array([[1, -1, 1, -1], [-1, -1, -1, 1], [1, 1, 1, 1]])
    G = rng.standard_normal((3, m, n))
    res = bsvd.hsvd(G, signs=sg)
    for b in range(3):
        one = bsvd.hsvd(G[b], signs=sg[b])
        np.testing.assert_array_equal(one.perm, res.perm[b])
        np.testing.assert_array_equal(one.S, res.S[b])
        assert_hsvd(G[b:b + 1], res._replace(U=res.U[b:b + 1], S=res.S[b:b + 1],
                                             Vh=res.Vh[b:b + 1]), sg[b])
    assert (res.signs == 1).sum(axis=-1).tolist() == [2, 1, 4]


def test_nplus_per_matrix(rng):
    G = rng.standard_normal((2, 3, 7, 4))
    nplus = np.array([[0, 1, 2], [3, 4, 2]])
    res = bsvd.hsvd(G, nplus)
    assert res.S.shape == (2, 3, 4)
    for i in range(2):
        for j in range(3):
            one = bsvd.hsvd(G[i, j], int(nplus[i, j]))
            np.testing.assert_array_equal(one.S, res.S[i, j])
            assert (res.signs[i, j] == 1).sum() == nplus[i, j]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("side", ["plus", "minus"])
def test_definite_is_the_svd(rng, dtype, side):
    """nplus = n (J = I) or 0 (J = -I): the ordinary SVD, bsvd.svd's values
    (the same unblocked solver on the same column-major G)."""
    G = rng.standard_normal((3, 8, 5)).astype(dtype)
    nplus = 5 if side == "plus" else 0
    res = bsvd.hsvd(G, nplus)
    ref = bsvd.svd(np.asfortranarray(G.transpose(1, 2, 0)).transpose(2, 0, 1), compute_uv=False,
                   variant="unblocked")
    np.testing.assert_allclose(res.S, ref, rtol=4 * unit_roundoff(dtype), atol=0)
    assert np.all(res.signs == (1 if side == "plus" else -1))
    assert_hsvd(G, res, np.full(5, 1 if side == "plus" else -1))


@pytest.mark.parametrize("make", ["fortran", "sliced", "batch_last"])
def test_layouts(rng, make):
    G = rng.standard_normal((4, 10, 5))
    if make == "fortran":
        X = np.asfortranarray(G)
    elif make == "sliced":
        big = np.zeros((4, 20, 10))
        big[:, ::2, ::2] = G
        X = big[:, ::2, ::2]
    else:
        X = np.moveaxis(np.ascontiguousarray(np.moveaxis(G, 0, -1)), -1, 0)
    ref = bsvd.hsvd(G, 2)
    res = bsvd.hsvd(X, 2)
    for a, b in zip(ref, res):
        np.testing.assert_array_equal(a, b)


def test_values_only_matches_vectors(rng):
    G = rng.standard_normal((5, 7, 5)) + 1j * rng.standard_normal((5, 7, 5))
    S, signs = bsvd.hsvd(G, 3, compute_uv=False)
    res = bsvd.hsvd(G, 3)
    np.testing.assert_allclose(S, res.S, rtol=1e-14)
    np.testing.assert_array_equal(signs, res.signs)


def test_integer_and_half_input(rng):
    Gi = rng.integers(-5, 6, (2, 6, 4))
    res = bsvd.hsvd(Gi, 2)
    assert res.S.dtype == np.float64
    ref = bsvd.hsvd(Gi.astype(float), 2)
    np.testing.assert_array_equal(res.S, ref.S)
    assert_hsvd(Gi.astype(float), res, _signs(4, 2))
    h = bsvd.hsvd(Gi.astype(np.float16), 2)
    assert h.S.dtype == np.float32 and h.U.dtype == np.float32


def test_list_input():
    res = bsvd.hsvd([[3.0, 1.0], [1.0, 2.0], [0.0, 1.0]], 1)
    assert res.S.shape == (2,) and res.U.shape == (3, 2) and res.Vh.shape == (2, 2)
    assert res.signs.tolist() == [1, -1] and res.perm.tolist() == [0, 1]


@pytest.mark.parametrize("shape", [(0, 5, 3), (2, 4, 0), (0, 0), (3, 0, 0)])
def test_empty(shape):
    G = np.zeros(shape)
    n = shape[-1]
    res = bsvd.hsvd(G, 0, return_info=True)
    b = shape[:-2]
    assert res.S.shape == b + (n,) and res.U.shape == shape and res.Vh.shape == b + (n, n)
    assert res.info.info.shape == b and res.perm.shape == b + (n,)
    S, signs = bsvd.hsvd(G, signs=np.ones(n), compute_uv=False)
    assert S.shape == b + (n,) and signs.shape == b + (n,)


def test_rank_deficient(rng):
    """A rank-deficient G whose G J G^H keeps the rank: a zero value, the
    rest accurate."""
    x = rng.standard_normal((6, 3))
    G = np.concatenate([x, x[:, :1] + x[:, 1:2]], axis=1)  # column 3 = c0 + c1, same side
    res = bsvd.hsvd(G, 3, return_info=True)
    assert res.info.info == 0
    assert res.S[2] < 1e-14 * res.S[0]
    assert_hsvd(G[None], res._replace(U=res.U[None], S=res.S[None], Vh=res.Vh[None]),
                _signs(4, 3))


def test_nonfinite(rng):
    G = rng.standard_normal((3, 5, 3))
    G[1, 2, 0] = np.nan
    with pytest.warns(bsvd.NonFiniteWarning):
        res = bsvd.hsvd(G, 1, return_info=True)
    assert res.info.info.tolist() == [0, -1, 0]
    assert res.info.nonfinite.tolist() == [False, True, False]
    assert np.all(np.isnan(res.S[1])) and np.all(np.isfinite(res.S[[0, 2]]))
    with pytest.raises(bsvd.NonFiniteError):
        bsvd.hsvd(G, 1, check_finite=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bsvd.hsvd(G, 1, warn=False)


def test_breakdown(rng):
    """G = [x, x] with J = diag(1, -1): G J G^H = 0 while rank(G) = 1, the
    rank condition fails and the pair stays parallel with equal norms."""
    x = rng.standard_normal(5)
    G = np.stack([rng.standard_normal((5, 2)), np.stack([x, x], axis=1)])
    with pytest.warns(bsvd.HyperbolicBreakdownWarning, match="1 of 2"):
        res = bsvd.hsvd(G, 1, return_info=True)
    assert res.info.info.tolist() == [0, -2]
    assert res.info.breakdown.tolist() == [False, True]
    assert "breakdown=1" in repr(res.info)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bsvd.hsvd(G, 1, warn=False)
        # the same columns on one side are an ordinary (rank-1) SVD
        assert bsvd.hsvd(G[1], 2, return_info=True).info.info == 0


def test_not_converged(rng):
    G = rng.standard_normal((2, 8, 6))
    with pytest.warns(bsvd.ConvergenceWarning):
        res = bsvd.hsvd(G, 3, max_sweeps=1, return_info=True)
    assert np.all(res.info.info > 0) and np.all(res.info.sweeps == 1)


def test_return_info_values_only(rng):
    S, signs, info = bsvd.hsvd(rng.standard_normal((2, 4, 3)), 1, compute_uv=False,
                               return_info=True)
    assert isinstance(info, bsvd.HSVDInfo) and info.info.shape == (2,)
    assert info.path_names.tolist() == ["cpu-unblocked"] * 2


def test_jax_cpu_array_input(rng):
    jax = pytest.importorskip("jax")
    G = rng.standard_normal((2, 5, 3))
    # On the CPU device even where JAX's default is a GPU (float32 unless
    # jax_enable_x64): a host array, so NumPy results.
    X = jax.device_put(G.astype(np.float32), jax.devices("cpu")[0])
    res = bsvd.hsvd(X, 1)
    assert isinstance(res.S, np.ndarray) and res.S.dtype == X.dtype
    np.testing.assert_array_equal(res.S, bsvd.hsvd(np.asarray(X), 1).S)


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(), TypeError, "signature is missing"),
    (dict(nplus=1, signs=[1, -1, 1]), TypeError, "not both"),
    (dict(nplus=4), ValueError, "0 ... n = 3"),
    (dict(nplus=-1), ValueError, "0 ... n = 3"),
    (dict(nplus=1.0), TypeError, "nplus must be an int"),
    (dict(nplus=[1, 2, 3]), ValueError, "batch shape"),
    (dict(signs=[1, 0, -1]), ValueError, r"only \+1 and -1"),
    (dict(signs=[1, -1]), ValueError, "does not match"),
    (dict(signs=["a", "b", "c"]), TypeError, "signs must be"),
    (dict(nplus=1, tol=2.0), ValueError, "tol"),
    (dict(nplus=1, backend="gpu"), ValueError, "backend"),
    (dict(nplus=1, compute_uv="yes"), TypeError, "compute_uv"),
    (dict(nplus=1, max_sweeps=-2), ValueError, "max_sweeps"),
])
def test_bad_arguments(rng, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        bsvd.hsvd(rng.standard_normal((2, 5, 3)), **kwargs)


def test_bad_matrices(rng):
    with pytest.raises(ValueError, match="m >= n"):
        bsvd.hsvd(rng.standard_normal((3, 5)), 1)
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        bsvd.hsvd(np.ones(4), 1)
    with pytest.raises(TypeError, match="unsupported dtype"):
        bsvd.hsvd(np.array([["a"]], dtype=object).astype(str), 0)
    with pytest.raises(TypeError):
        bsvd.hsvd(np.ones((3, 2), dtype="datetime64[s]"), 0)


def test_cuda_backend(rng):
    """backend="cuda": the GPU's fused kernel where a GPU is visible (the
    values of the CPU solver within rounding), else BackendUnavailableError."""
    G = rng.standard_normal((2, 5, 3))
    if not bsvd.cuda_available():
        with pytest.raises(bsvd.BackendUnavailableError, match="GPU|CUDA|cuda"):
            bsvd.hsvd(G, 1, backend="cuda")
        return
    gpu = bsvd.hsvd(G, 1, backend="cuda", return_info=True)
    cpu = bsvd.hsvd(G, 1, backend="cpu")
    np.testing.assert_allclose(gpu.S, cpu.S, rtol=1e-12, atol=0)
    assert list(gpu.info.path_names.ravel()) == ["cuda-fused"] * 2
    assert_hsvd(G, gpu, np.array([1, -1, -1]))


@pytest.mark.skipif(not bsvd.cuda_available(), reason="no CUDA GPU visible")
@pytest.mark.parametrize("lib", ["torch", "cupy", "jax"])
def test_cuda_arrays(rng, lib):
    """CUDA arrays in, arrays of the same library on the same device out,
    with the values of the host call."""
    mod = pytest.importorskip(lib)
    G = rng.standard_normal((3, 12, 8)) + 1j * rng.standard_normal((3, 12, 8))
    G = G.astype(np.complex64)  # (JAX without x64 holds complex64)
    if lib == "torch":
        if not mod.cuda.is_available():
            pytest.skip("torch without CUDA")
        dG = mod.asarray(G, device="cuda")
    elif lib == "cupy":
        dG = mod.asarray(G)
    else:
        gpus = [d for d in mod.devices() if d.platform in ("gpu", "cuda")]
        if not gpus:
            pytest.skip("JAX without a GPU")
        dG = mod.device_put(G, gpus[0])

    def host(a):
        return a.cpu().numpy() if lib == "torch" else np.asarray(a.get() if lib == "cupy" else a)

    res = bsvd.hsvd(dG, 3)
    ref = bsvd.hsvd(G, 3)
    for a, b in zip(res, ref):
        assert type(a).__module__.split(".")[0] in (lib, "jaxlib"), type(a)
        np.testing.assert_array_equal(host(a), b)
    w = bsvd.eigh_factored(dG, 3, eigvals_only=True)
    np.testing.assert_array_equal(host(w), bsvd.eigh_factored(G, 3, eigvals_only=True))


def test_batch_list(rng):
    mats = [rng.standard_normal((6, 4)), rng.standard_normal((5, 3)),
            rng.standard_normal((6, 4)), rng.standard_normal((3, 3)) + 0j]
    nplus = [1, 2, 4, 0]
    res = bsvd.hsvd_batch(mats, nplus, return_info=True)
    assert len(res.S) == 4 and res.info.info.shape == (4,)
    for i, (G, k) in enumerate(zip(mats, nplus)):
        one = bsvd.hsvd(G, k)
        for a, b in zip(one, res[:5]):
            np.testing.assert_array_equal(a, b[i])
    sg = [np.array([1, -1, 1, -1]), np.array([-1, 1, 1]), np.ones(4), -np.ones(3)]
    res = bsvd.hsvd_batch(mats, signs=sg)
    for i, G in enumerate(mats):
        np.testing.assert_array_equal(res.perm[i], bsvd.hsvd(G, signs=sg[i]).perm)
        assert_hsvd(G[None], bsvd.HSVDResult(res.U[i][None], res.S[i][None], res.Vh[i][None],
                                               None, None), sg[i])
    S, signs = bsvd.hsvd_batch(mats, 0, compute_uv=False)
    assert [len(s) for s in S] == [4, 3, 4, 3] and all(np.all(s == -1) for s in signs)
    assert bsvd.hsvd_batch([], []) == bsvd.HSVDResult([], [], [], [], [])


def test_batch_list_errors(rng):
    mats = [rng.standard_normal((6, 4)), rng.standard_normal((5, 3))]
    with pytest.raises(TypeError, match="list"):
        bsvd.hsvd_batch(mats[0], 1)
    with pytest.raises(ValueError, match="2 entries"):
        bsvd.hsvd_batch(mats, [1])
    with pytest.raises(ValueError, match="matrix 1 has shape"):
        bsvd.hsvd_batch(mats, signs=[np.ones(4), np.ones(4)])
    with pytest.raises(ValueError, match="2-D"):
        bsvd.hsvd_batch([np.ones((2, 4, 3))], [1])
    with pytest.raises(TypeError, match="unexpected argument"):
        bsvd.hsvd_batch(mats, [1, 1], full_matrices=False)
    with pytest.raises(TypeError, match="signature is missing"):
        bsvd.hsvd_batch(mats)
