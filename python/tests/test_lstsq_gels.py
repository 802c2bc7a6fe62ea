"""bsvd.lstsq(driver='gels'): the batched Householder QR / LQ solve of the
library (bsvd_<p>gels_*) from Python, for NumPy, PyTorch, CuPy and JAX
arrays: the solutions and residuals of numpy.linalg.lstsq on full-rank
problems (tall, wide, square; one right-hand side or several; broadcast
batches), torch.linalg.lstsq's gels fields, a rank-deficient matrix as a
LinAlgError that names it, NaN confined to its matrix, the empty shapes,
and the refusals (autograd, JAX tracing)."""
import os

import numpy as np
import pytest

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import bsvd  # noqa: E402

DTYPES = ["float32", "float64", "complex64", "complex128"]
needs_gpu = pytest.mark.skipif(not bsvd.cuda_available(),
                               reason="needs the CUDA backend and a visible GPU")


def _random(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _well_conditioned(rng, shape, dtype):
    """Random matrices whose leading diagonal is raised by max(m, n):
    condition numbers below 3, so gels and gelsd agree to roundoff."""
    A = _random(rng, shape, dtype)
    m, n = shape[-2:]
    i = np.arange(min(m, n))
    A[..., i, i] += max(m, n)
    return A


def _ref(A, B):
    """numpy.linalg.lstsq matrix by matrix in double precision: x, and the
    squared residual norms."""
    wide = np.complex128 if np.iscomplexobj(A) or np.iscomplexobj(B) else np.float64
    A, B = np.asarray(A, wide), np.asarray(B, wide)
    xs, rs = [], []
    flatA = A.reshape((-1,) + A.shape[-2:])
    flatB = B.reshape((-1,) + B.shape[-2:])
    for a, b in zip(flatA, flatB):
        x, r, _, _ = np.linalg.lstsq(a, b, rcond=None)
        xs.append(x)
        rs.append(np.sum(np.abs(b - a @ x) ** 2, axis=0))
    shape = A.shape[:-2]
    return (np.array(xs).reshape(shape + (A.shape[-1], B.shape[-1])),
            np.array(rs).reshape(shape + (B.shape[-1],)))


def _tol(dtype):
    return 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,n,k", [(9, 4, 2), (4, 9, 3), (6, 6, 1), (40, 33, 2), (33, 40, 1)])
def test_gels_matches_numpy(dtype, m, n, k):
    rng = np.random.default_rng(m * 100 + n)
    A = _well_conditioned(rng, (5, m, n), dtype)
    B = _random(rng, (5, m, k), dtype)
    x, res, rank, s = bsvd.lstsq(A, B, driver="gels")
    want_x, want_r = _ref(A, B)
    assert x.dtype == np.dtype(dtype) and x.shape == (5, n, k)
    scale = max(np.abs(want_x).max(), 1.0)
    np.testing.assert_allclose(x, want_x, rtol=0, atol=_tol(dtype) * scale * max(m, n))
    if m > n:
        assert res.shape == (5, k)
        np.testing.assert_allclose(res, want_r, rtol=_tol(dtype) * max(m, n) * 10)
    else:
        assert res.shape == (0,)
    assert rank.shape == (0,) and s.shape == (0,)
    # the same solution as the default SVD driver, for full-rank A
    x2 = bsvd.lstsq(A, B)[0]
    np.testing.assert_allclose(x, x2, rtol=0, atol=_tol(dtype) * scale * max(m, n))


def test_gels_vector_broadcast_and_inputs_untouched():
    rng = np.random.default_rng(1)
    A = _well_conditioned(rng, (3, 1, 8, 5), "float64")
    B = _random(rng, (4, 8, 2), "float64")
    A0, B0 = A.copy(), B.copy()
    x, res, _, _ = bsvd.lstsq(A, B, driver="gels")
    assert x.shape == (3, 4, 5, 2) and res.shape == (3, 4, 2)
    np.testing.assert_array_equal(A, A0)
    np.testing.assert_array_equal(B, B0)
    want, _ = _ref(np.broadcast_to(A, (3, 4, 8, 5)), np.broadcast_to(B, (3, 4, 8, 2)))
    np.testing.assert_allclose(x, want, atol=1e-12)
    # one matrix, a 1-D b: numpy.linalg.lstsq's shapes
    x1, r1, _, _ = bsvd.lstsq(A[0, 0], B[0, :, 0], driver="gels")
    assert x1.shape == (5,) and r1.shape == (1,)
    np.testing.assert_allclose(x1, np.linalg.lstsq(A[0, 0], B[0, :, 0], rcond=None)[0],
                               atol=1e-12)


def test_gels_rank_deficient_raises_and_nan_stays_in_its_matrix():
    rng = np.random.default_rng(2)
    A = _well_conditioned(rng, (6, 7, 4), "float64")
    B = _random(rng, (6, 7, 1), "float64")
    A[4, :, 2] = 0  # rank 3: the QR's third pivot is exactly zero
    with pytest.raises(np.linalg.LinAlgError, match="1 of 6 matrices are rank deficient.*"
                       "matrix 4.*zero pivot at 3.*gelsd"):
        bsvd.lstsq(A, B, driver="gels")
    A[4, :, 2] = 1.0
    A[4, :, 2] += np.arange(7)
    A[1, 3, 0] = np.nan
    x, res, _, _ = bsvd.lstsq(A, B, driver="gels")
    assert np.isnan(x[1]).all() and np.isnan(res[1]).all()
    good = [0, 2, 3, 4, 5]
    want, _ = _ref(A[good], B[good])
    np.testing.assert_allclose(x[good], want, atol=1e-12)


@pytest.mark.parametrize("a_shape,b_shape,x_shape", [
    ((0, 3), (0, 2), (3, 2)), ((3, 0), (3, 2), (0, 2)), ((2, 4, 3), (2, 4, 0), (2, 3, 0)),
    ((0, 4, 3), (0, 4, 1), (0, 3, 1))])
def test_gels_empty(a_shape, b_shape, x_shape):
    x, res, _, _ = bsvd.lstsq(np.ones(a_shape), np.ones(b_shape), driver="gels")
    assert x.shape == x_shape
    assert not np.any(x)


def _torch():
    return pytest.importorskip("torch")


def test_gels_torch_fields_and_refusals():
    torch = _torch()
    g = torch.Generator().manual_seed(3)
    A = torch.randn(4, 8, 5, dtype=torch.float64, generator=g) + 8 * torch.eye(8, 5)
    B = torch.randn(4, 8, 2, dtype=torch.float64, generator=g)
    got = bsvd.lstsq(A, B, driver="gels")
    want = torch.linalg.lstsq(A, B, driver="gels")
    torch.testing.assert_close(got.solution, want.solution)
    torch.testing.assert_close(got.residuals, want.residuals)
    assert got.rank.numel() == 0 and got.singular_values.numel() == 0
    with pytest.raises(NotImplementedError, match="not differentiable"):
        bsvd.lstsq(A.clone().requires_grad_(), B, driver="gels")
    with torch.no_grad():
        bsvd.lstsq(A.clone().requires_grad_(), B, driver="gels")


def test_gels_jax_tracing_refused():
    jax = pytest.importorskip("jax")
    A = np.eye(4, 3, dtype=np.float32) * 4
    B = np.ones((4, 1), np.float32)
    with pytest.raises(TypeError, match="cannot be traced"):
        jax.jit(lambda a, b: bsvd.lstsq(a, b, driver="gels")[0])(A, B)
    x = bsvd.lstsq(jax.numpy.asarray(A), jax.numpy.asarray(B), driver="gels")[0]
    np.testing.assert_allclose(np.asarray(x), np.linalg.lstsq(A, B, rcond=None)[0], atol=1e-6)


@needs_gpu
def test_gels_gpu_torch_cupy_jax():
    rng = np.random.default_rng(7)
    A = _well_conditioned(rng, (64, 40, 12), "float64")
    B = _random(rng, (64, 40, 3), "float64")
    want_x, want_r = _ref(A, B)
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        got = bsvd.lstsq(torch.from_numpy(A).cuda(), torch.from_numpy(B).cuda(), driver="gels")
        assert got.solution.is_cuda
        np.testing.assert_allclose(got.solution.cpu().numpy(), want_x, atol=1e-11)
        np.testing.assert_allclose(got.residuals.cpu().numpy(), want_r, rtol=1e-9)
        Ac = torch.from_numpy(A.astype(np.complex64)).cuda()
        Bc = torch.from_numpy(B.astype(np.complex64)).cuda()
        gc = bsvd.lstsq(Ac, Bc, driver="gels").solution
        wc = torch.linalg.lstsq(Ac.cpu(), Bc.cpu(), driver="gels").solution
        torch.testing.assert_close(gc.cpu(), wc, rtol=1e-4, atol=1e-4)
    try:
        import cupy
    except ImportError:
        cupy = None
    if cupy is not None:
        x, res, _, _ = bsvd.lstsq(cupy.asarray(A), cupy.asarray(B), driver="gels")
        assert isinstance(x, cupy.ndarray)
        np.testing.assert_allclose(x.get(), want_x, atol=1e-11)
        np.testing.assert_allclose(res.get(), want_r, rtol=1e-9)
    try:
        import jax
        dev = jax.devices("gpu")[0]
    except (ImportError, RuntimeError):
        dev = None
    if dev is not None:
        x, res, _, _ = bsvd.lstsq(jax.device_put(A.astype(np.float32), dev),
                                  jax.device_put(B.astype(np.float32), dev), driver="gels")
        assert list(x.devices())[0].platform in ("gpu", "cuda")
        np.testing.assert_allclose(np.asarray(x), want_x, atol=1e-4)
