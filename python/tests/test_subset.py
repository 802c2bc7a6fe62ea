"""bsvd.svd's subset_by_index / subset_by_value (the library's gesvdx):
the triplets against NumPy's full SVD by scaled ratios (A v_j - s_j u_j,
the orthogonality of U and V, the values), row- and column-major and
complex input, a stack whose value interval holds a different count per
matrix (zeros after each matrix's own), NaN isolation, argument errors;
then the same calls on PyTorch, CuPy and JAX arrays where those are
installed -- on the CPU, and on the GPU where one is visible."""
import os

import numpy as np
import pytest

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import bsvd  # noqa: E402
from helpers import LIMIT, random_matrix, unit_roundoff  # noqa: E402

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def check_triplets(A, U, S, Vh, lo):
    """Scaled ratios (units of max(m, n) u ||A||) of the triplets lo ...
    against NumPy's SVD in double: values, residual and orthogonality."""
    A, U, S, Vh = (None if x is None else np.asarray(x) for x in (A, U, S, Vh))
    m, n = A.shape[-2:]
    u = unit_roundoff(A.dtype)
    ref = np.linalg.svd(A.astype(np.complex128 if np.iscomplexobj(A) else np.float64),
                        compute_uv=False)
    c = S.shape[-1]
    nrm = ref[..., :1]
    p = max(m, n)
    assert np.all(np.abs(S - ref[..., lo:lo + c]) < LIMIT * p * u * nrm), (S, ref[..., lo:lo + c])
    if U is None:
        return
    W = np.clongdouble if np.iscomplexobj(A) else np.longdouble
    V = np.swapaxes(Vh, -1, -2).conj().astype(W)
    R = A.astype(W) @ V - U.astype(W) * S[..., None, :]
    res = np.sqrt((np.abs(R) ** 2).sum(axis=-2)).max(axis=-1) / (nrm[..., 0] * p * u)
    assert np.all(res < LIMIT), res
    for X in (U.astype(W), V):
        G = np.swapaxes(X, -1, -2).conj() @ X - np.eye(c)
        assert np.abs(G).max() / (p * u) < LIMIT if G.size else True


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 9, 6), (2, 6, 9), (1, 40, 40), (2, 1, 1)])
def test_index_range(dtype, shape):
    rng = np.random.default_rng(3)
    A = random_matrix(rng, shape, dtype, cond=1e3)
    k = min(shape[-2:])
    lo, hi = k // 3, min(k - 1, k // 3 + 2)
    for a in (A, np.asfortranarray(A.transpose(0, 2, 1)).transpose(0, 2, 1)):  # C and F order
        U, S, Vh = bsvd.svd(a, subset_by_index=(lo, hi), backend="cpu")
        assert U.shape == shape[:-1] + (hi - lo + 1,) and Vh.shape == (shape[0], hi - lo + 1,
                                                                       shape[-1])
        assert U.dtype == dtype and S.dtype == np.zeros(0, dtype).real.dtype
        check_triplets(A, U, S, Vh, lo)
        S2 = bsvd.svdvals(a, subset_by_index=(lo, hi), backend="cpu")
        check_triplets(A, None, S2, None, lo)


def test_value_range_counts_per_matrix():
    rng = np.random.default_rng(5)
    s = np.array([[8.0, 4.0, 2.0, 1.0, 0.5], [8.0, 6.0, 5.0, 3.0, 0.5], [9.0, 7.0, 0.9, 0.8, 0.1]])
    Q1 = np.linalg.qr(rng.standard_normal((3, 7, 5)))[0]
    Q2 = np.linalg.qr(rng.standard_normal((3, 5, 5)))[0]
    A = (Q1 * s[:, None, :]) @ np.swapaxes(Q2, -1, -2)
    U, S, Vh = bsvd.svd(A, subset_by_value=(1.5, 6.5), backend="cpu")
    counts = (S > 0).sum(axis=-1)
    assert counts.tolist() == [2, 3, 0] and S.shape == (3, 3)
    want = [[4.0, 2.0], [6.0, 5.0, 3.0], []]
    for b in range(3):
        c = counts[b]
        assert np.allclose(S[b, :c], want[b], rtol=1e-12)
        assert np.all(S[b, c:] == 0) and np.all(U[b, :, c:] == 0) and np.all(Vh[b, c:] == 0)
        if c:
            assert np.allclose(A[b] @ Vh[b, :c].T, U[b, :, :c] * S[b, :c], atol=1e-12)
    assert bsvd.svdvals(A, subset_by_value=(20, np.inf), backend="cpu").shape == (3, 0)


def test_nan_matrix_is_reported_and_isolated():
    rng = np.random.default_rng(9)
    A = random_matrix(rng, (3, 8, 5), np.float64, cond=10)
    A[1, 2, 3] = np.nan
    with pytest.warns(bsvd.NonFiniteWarning):
        U, S, Vh = bsvd.svd(A, subset_by_index=(0, 1), backend="cpu")
    assert np.isnan(S[1]).all() and not np.isnan(S[[0, 2]]).any()
    with pytest.raises(bsvd.NonFiniteError):
        bsvd.svd(A, subset_by_index=(0, 1), backend="cpu", check_finite=True)
    _, inf = bsvd.svdvals(A, subset_by_index=(0, 1), backend="cpu", return_info=True, warn=False)
    assert inf.info.tolist() == [0, -1, 0]
    with pytest.warns(bsvd.NonFiniteWarning, match="no values"):
        S = bsvd.svdvals(A, subset_by_value=(0.0, np.inf), backend="cpu")
    assert np.all(S[1] == 0) and np.all(S[[0, 2]] > 0)


@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
def test_svd_batch_lists(dtype):
    """svd_batch with a subset: one variable-size call, each matrix's own
    count, the same triplets as svd on the matrix alone."""
    rng = np.random.default_rng(13)
    shapes = [(9, 7), (5, 12), (0, 3), (20, 20)]
    mats = [random_matrix(rng, s, dtype, cond=50) for s in shapes]
    U, S, Vh = bsvd.svd_batch(mats, subset_by_index=(1, 2), backend="cpu")
    for A, u, s, vh in zip(mats, U, S, Vh):
        if min(A.shape) == 0:
            assert s.shape == (0,) and u.shape == (A.shape[0], 0) and vh.shape == (0, A.shape[1])
            continue
        check_triplets(A[None], u[None], s[None], vh[None], 1)
        u1, s1, vh1 = bsvd.svd(A, subset_by_index=(1, 2), backend="cpu")
        assert np.allclose(s, s1, rtol=1e-5) and np.allclose(np.abs(u), np.abs(u1), atol=1e-4)
    Sv, info = bsvd.svd_batch(mats, compute_uv=False, subset_by_value=(0.1, np.inf),
                              backend="cpu", return_info=True)
    for A, s in zip(mats, Sv):
        ref = np.linalg.svd(A.astype(np.complex128), compute_uv=False) if A.size else np.zeros(0)
        assert s.shape == ((ref > 0.1).sum(),)
        check_triplets(A[None], None, np.asarray(s)[None], None, 0) if s.size else None
    assert info.info.tolist() == [0, 0, 0, 0] and info.path.tolist() == [-1] * 4
    with pytest.raises(ValueError, match="matrix 0"):
        bsvd.svd_batch(mats, subset_by_index=(0, 7), backend="cpu")


def test_argument_errors():
    A = np.ones((4, 3))
    for bad, exc in [((0, 3), ValueError), ((2, 1), ValueError), ((-1, 0), ValueError),
                     ((0.5, 1), TypeError), (3, TypeError)]:
        with pytest.raises(exc):
            bsvd.svd(A, subset_by_index=bad, backend="cpu")
    for bad, exc in [((-1, 1), ValueError), ((2, 1), ValueError), ((1, 1), ValueError),
                     ((np.nan, 1), ValueError), ("ab", TypeError)]:
        with pytest.raises(exc):
            bsvd.svd(A, subset_by_value=bad, backend="cpu")
    with pytest.raises(ValueError, match="one of"):
        bsvd.svd(A, subset_by_index=(0, 1), subset_by_value=(0, 1))


def _devices():
    out = [("numpy", "cpu")]
    try:
        import torch
        out.append(("torch", "cpu"))
        if torch.cuda.is_available() and bsvd.cuda_available():
            out.append(("torch", "cuda"))
    except ImportError:
        pass
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() > 0 and bsvd.cuda_available():
            out.append(("cupy", "cuda"))
    except Exception:
        pass
    try:
        import jax
        out.append(("jax", "cpu"))
        if any(d.platform == "gpu" for d in jax.devices()) and bsvd.cuda_available():
            out.append(("jax", "cuda"))
    except Exception:
        pass
    return out


def _to(lib, dev, A):
    if lib == "numpy":
        return A
    if lib == "torch":
        import torch
        return torch.as_tensor(A, device=dev)
    if lib == "cupy":
        import cupy
        return cupy.asarray(A)
    import jax
    d = [x for x in jax.devices() if (x.platform == "gpu") == (dev == "cuda")]
    return jax.device_put(A, d[0]) if d else pytest.skip("no such JAX device")


@pytest.mark.parametrize("lib,dev", _devices())
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])  # (JAX: no x64 by default)
def test_array_libraries(lib, dev, dtype):
    """Results in the caller's library and on its device, by the same
    ratios; on a GPU also a matrix beyond shared memory (the blocked GEBRD)."""
    rng = np.random.default_rng(11)
    shapes = [(4, 30, 20), (1, 300, 160)] if dev == "cuda" else [(4, 30, 20)]
    for shape in shapes:
        A = random_matrix(rng, shape, dtype, cond=100)
        x = _to(lib, dev, A)
        U, S, Vh = bsvd.svd(x, subset_by_index=(1, 3))
        assert type(U).__module__.split(".")[0] == type(x).__module__.split(".")[0]
        h = [bsvd._host(t) for t in (U, S, Vh)]
        check_triplets(A, *h, 1)
        Sv = bsvd._host(bsvd.svdvals(x, subset_by_value=(0.05, 0.5)))
        ref = np.linalg.svd(A.astype(np.complex128), compute_uv=False)
        want = (ref > 0.05) & (ref <= 0.5)
        assert np.array_equal((Sv > 0).sum(-1), want.sum(-1))


def test_torch_requires_grad_refused():
    torch = pytest.importorskip("torch")
    A = torch.ones(4, 3, dtype=torch.float64, requires_grad=True)
    with pytest.raises(NotImplementedError, match="differentiable"):
        bsvd.svd(A, subset_by_index=(0, 1))
    with torch.no_grad():
        assert bsvd.svdvals(A, subset_by_index=(0, 0)).shape == (1,)
