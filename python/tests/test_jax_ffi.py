"""bsvd.svd on JAX arrays through the XLA FFI call (bsvd/_jax.py,
src/jax_ffi.cpp): eager and jax.jit results by the T1-T4 ratios, vmap,
gradients against jax.numpy.linalg.svd and check_grads, info, errors. Every
test runs on jax's CPU and, when jax sees one and bsvd has the CUDA backend,
on its GPU. Skipped without jax or without the FFI handlers in the build."""
import os
import warnings

# JAX would otherwise take 75 % of the GPU memory at its first use.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import bsvd  # noqa: E402
from helpers import assert_ratios, random_matrix, unit_roundoff  # noqa: E402

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from jax.test_util import check_grads  # noqa: E402

from bsvd import _jax  # noqa: E402

if not _jax.available():
    pytest.skip("bsvd was built without the JAX FFI handlers", allow_module_level=True)


def _devices():
    devs = [pytest.param(jax.devices("cpu")[0], id="cpu")]
    try:
        gpu = jax.devices("gpu")[0]
    except RuntimeError:
        gpu = None
    mark = pytest.mark.skipif(gpu is None or not bsvd.cuda_available(),
                              reason="jax sees no GPU, or bsvd without the CUDA backend")
    devs.append(pytest.param(gpu, id="gpu", marks=mark))
    return devs


DEVICES = _devices()
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


@pytest.fixture(autouse=True, scope="module")
def x64():
    """float64 / complex128 need jax_enable_x64 (restored afterwards)."""
    old = bool(jax.config.read("jax_enable_x64"))
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", old)


def _put(A, device):
    return jax.device_put(A, device)


def _np(a):
    return np.asarray(a)


def _on(a, device):
    assert isinstance(a, jax.Array)
    assert list(a.devices()) == [device]


SHAPES = [(6, 4), (4, 6), (5, 5), (3, 7, 5), (2, 2, 4, 6), (1, 1), (0, 4, 3), (2, 0, 3),
          (2, 3, 0)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_eager_and_jit(device, dtype, shape):
    A_np = random_matrix(np.random.default_rng(1), shape, dtype)
    A = _put(A_np, device)
    eager = bsvd.svd(A, full_matrices=False)
    jitted = jax.jit(lambda a: bsvd.svd(a, full_matrices=False))(A)
    assert type(eager) is bsvd.SVDResult
    k = min(shape[-2:])
    real = np.finfo(dtype).dtype
    for res in (eager, jitted):
        U, S, Vh = res
        assert U.shape == shape[:-1] + (k,) and Vh.shape == shape[:-2] + (k, shape[-1])
        assert S.shape == shape[:-2] + (k,)
        assert U.dtype == dtype and Vh.dtype == dtype and S.dtype == real
        for t in res:
            _on(t, device)
        assert_ratios(A_np, _np(U), _np(S), _np(Vh))
    for a, b in zip(eager, jitted):  # one handler, the same bits
        np.testing.assert_array_equal(_np(a), _np(b))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
@pytest.mark.parametrize("shape", [(3, 6, 4), (3, 4, 6), (2, 0, 3), (2, 3, 0)], ids=str)
def test_full_matrices(device, dtype, shape):
    A_np = random_matrix(np.random.default_rng(2), shape, dtype)
    A = _put(A_np, device)
    m, n = shape[-2:]
    k = min(m, n)
    for U, S, Vh in (bsvd.svd(A), jax.jit(bsvd.svd)(A)):
        assert U.shape == shape[:-1] + (m,) and Vh.shape == shape[:-2] + (n, n)
        U, S, Vh = _np(U), _np(S), _np(Vh)
        tol = 30 * max(m, n, 1) * unit_roundoff(dtype)
        UhU = np.swapaxes(U, -1, -2).conj() @ U
        VhV = Vh @ np.swapaxes(Vh, -1, -2).conj()
        np.testing.assert_allclose(UhU, np.broadcast_to(np.eye(m), U.shape), atol=tol)
        np.testing.assert_allclose(VhV, np.broadcast_to(np.eye(n), Vh.shape), atol=tol)
        assert_ratios(A_np, U[..., :k], S, Vh[..., :k, :])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_values_only(device, dtype):
    A_np = random_matrix(np.random.default_rng(3), (4, 9, 5), dtype)
    A = _put(A_np, device)
    S_ref = np.linalg.svd(A_np.astype(np.complex128), compute_uv=False)
    tol = 30 * 5 * unit_roundoff(dtype)
    for S in (bsvd.svdvals(A), bsvd.svd(A, compute_uv=False), jax.jit(bsvd.svdvals)(A)):
        _on(S, device)
        assert np.all(np.abs(_np(S) - S_ref).max(axis=-1) <= tol * S_ref[..., 0])


@pytest.mark.parametrize("device", DEVICES)
def test_return_info_and_promotion(device):
    A = _put(np.arange(24, dtype=np.int32).reshape(2, 3, 4) % 7, device)
    res = bsvd.svd(A, full_matrices=False, return_info=True)
    assert type(res) is bsvd.SVDInfoResult and res.S.dtype == np.float64  # x64: float64
    for res in (res, jax.jit(lambda a: bsvd.svd(a, return_info=True))(A)):
        info = res.info
        assert isinstance(info, bsvd.Info)
        for a in (info.info, info.sweeps, info.path):
            assert isinstance(a, jax.Array) and a.shape == (2,) and a.dtype == np.int32
            _on(a, device)
        assert np.all(_np(info.info) == 0) and np.all(_np(info.sweeps) >= 0)
        assert all(p in bsvd.PATH_NAMES.values() for p in info.path_names)
    S, info = bsvd.svdvals(_put(np.ones((3, 2), np.float16), device), return_info=True)
    assert S.dtype == np.float32 and info.info.shape == ()


@pytest.mark.parametrize("device", DEVICES)
def test_lowered_to_the_ffi_call(device):
    A = _put(np.ones((2, 3, 3)), device)
    text = jax.jit(bsvd.svd).lower(A).as_text()
    assert "bsvd_svd" in text


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_vmap(device, dtype):
    A_np = random_matrix(np.random.default_rng(4), (3, 5, 6, 4), dtype)
    A = _put(A_np, device)
    svd = lambda a: bsvd.svd(a, full_matrices=False)  # noqa: E731
    for U, S, Vh in (jax.vmap(svd)(A), jax.vmap(svd, in_axes=1, out_axes=1)(A),
                     jax.vmap(jax.vmap(svd))(A), jax.jit(jax.vmap(jax.vmap(svd)))(A)):
        assert U.shape == (3, 5, 6, 4)
        assert_ratios(A_np, _np(U), _np(S), _np(Vh))
    # the info and the Info pytree under vmap
    res = jax.vmap(lambda a: bsvd.svd(a, return_info=True))(A)
    assert res.info.info.shape == (3, 5) and np.all(_np(res.info.info) == 0)
    S = jax.vmap(bsvd.svdvals, in_axes=2)(A)  # a row axis mapped: 6 batches of (3, 5, 4)
    S_ref = np.linalg.svd(np.moveaxis(A_np, 2, 0).astype(np.complex128), compute_uv=False)
    np.testing.assert_allclose(_np(S), S_ref, atol=200 * unit_roundoff(dtype) * S_ref.max())


# ---- gradients ---------------------------------------------------------------

def _loss_S(svd):
    def loss(a):
        S = svd(a, compute_uv=False)
        return jnp.sum(S ** 2 * jnp.arange(1.0, S.shape[-1] + 1.0))
    return loss


def _loss_factors(U, S, Vh):
    """A loss of U, S and Vh that does not depend on the sign / phase of a
    singular-vector pair, nor on the basis inside a repeated value's
    subspace below the first: the top projector U_1 U_1^H, S, |Vh[0, :]|."""
    P = U[..., :1] @ jnp.conj(jnp.swapaxes(U[..., :1], -1, -2))
    return (jnp.sum(jnp.abs(P) ** 2 * jnp.arange(P.shape[-1])) + jnp.sum(S ** 3)
            + jnp.sum(jnp.abs(Vh[..., 0, :]) ** 4 * jnp.arange(Vh.shape[-1])))


def _loss_vectors(svd):
    return lambda a: _loss_factors(*svd(a, full_matrices=False))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("shape", [(2, 5, 3), (2, 3, 5), (2, 4, 4)], ids=str)
def test_grad_against_jax(device, dtype, shape):
    A = _put(random_matrix(np.random.default_rng(5), shape, dtype), device)
    for make in (_loss_S, _loss_vectors):
        g = jax.grad(make(bsvd.svd))(A)
        g_ref = jax.grad(make(jnp.linalg.svd))(A)
        _on(g, device)
        np.testing.assert_allclose(_np(g), _np(g_ref), rtol=1e-9, atol=1e-9)
        gj = jax.jit(jax.grad(make(bsvd.svd)))(A)
        np.testing.assert_allclose(_np(gj), _np(g_ref), rtol=1e-9, atol=1e-9)
        # forward mode: the JVP itself
        dA = _put(random_matrix(np.random.default_rng(6), shape, dtype), device)
        t = jax.jvp(make(bsvd.svd), (A,), (dA,))[1]
        t_ref = jax.jvp(make(jnp.linalg.svd), (A,), (dA,))[1]
        np.testing.assert_allclose(_np(t), _np(t_ref), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_check_grads(device, dtype):
    A = _put(random_matrix(np.random.default_rng(7), (5, 3), dtype), device)
    check_grads(_loss_vectors(bsvd.svd), (A,), order=1, modes=("fwd", "rev"))
    check_grads(_loss_S(bsvd.svd), (A,), order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("device", DEVICES)
def test_vmap_of_grad(device):
    A = _put(random_matrix(np.random.default_rng(8), (4, 5, 3), np.float64), device)
    g = jax.vmap(jax.grad(_loss_vectors(bsvd.svd)))(A)
    g_ref = jax.vmap(jax.grad(_loss_vectors(jnp.linalg.svd)))(A)
    np.testing.assert_allclose(_np(g), _np(g_ref), rtol=1e-9, atol=1e-9)


def test_repeated_values_match_torch_backward():
    """At a repeated singular value the gradient is finite and is the one of
    bsvd.torch.svd_backward (the same safe inverse), for a loss that sees
    the repeated pair only through its block."""
    torch = pytest.importorskip("torch")
    from bsvd.torch import svd_backward
    rng = np.random.default_rng(9)
    Q1 = np.linalg.qr(rng.standard_normal((5, 3)))[0]
    Q2 = np.linalg.qr(rng.standard_normal((3, 3)))[0]
    A = jnp.asarray((Q1 * np.array([2.0, 1.0, 1.0])) @ Q2.T)  # s = 2, 1, 1
    g = _np(jax.grad(_loss_vectors(bsvd.svd))(A))
    assert np.all(np.isfinite(g))
    factors = bsvd.svd(A, full_matrices=False)
    grads = jax.grad(_loss_factors, argnums=(0, 1, 2))(*factors)
    t = lambda x: torch.from_numpy(_np(x).copy())  # noqa: E731
    g_torch = svd_backward(*map(t, grads), *map(t, factors))
    np.testing.assert_allclose(g, g_torch.numpy(), rtol=1e-10, atol=1e-10)


# ---- info, reporting and errors ----------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_not_converged(device):
    A = _put(random_matrix(np.random.default_rng(10), (3, 40, 40), np.float64), device)
    cpu = device.platform == "cpu"
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res = bsvd.svd(A, max_sweeps=1, return_info=True)
    # host data reports by default; a GPU call is stream-ordered and does not
    assert any(issubclass(x.category, bsvd.ConvergenceWarning) for x in w) == cpu
    assert np.all(_np(res.info.info) > 0) and np.all(_np(res.info.sweeps) == 1)
    with pytest.warns(bsvd.ConvergenceWarning):
        bsvd.svd(A, max_sweeps=1, check=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # under jit: nothing reported, info returned
        info = jax.jit(lambda a: bsvd.svd(a, max_sweeps=1, return_info=True).info)(A)
    assert np.all(_np(info.info) > 0)


@pytest.mark.parametrize("device", DEVICES)
def test_nonfinite(device):
    A_np = random_matrix(np.random.default_rng(11), (3, 5, 4), np.complex128)
    A_np[1, 2, 3] = np.nan
    A = _put(A_np, device)
    if device.platform == "cpu":
        with pytest.warns(bsvd.NonFiniteWarning):
            res = bsvd.svd(A, return_info=True)
    else:
        res = bsvd.svd(A, return_info=True)
    assert list(_np(res.info.info)) == [0, -1, 0]
    assert np.all(np.isnan(_np(res.S)[1])) and np.all(np.isfinite(_np(res.S)[[0, 2]]))
    with pytest.raises(bsvd.NonFiniteError):
        bsvd.svd(A, check_finite=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        info = jax.jit(lambda a: bsvd.svdvals(a, return_info=True)[1])(A)
    assert list(_np(info.info)) == [0, -1, 0]
    with pytest.raises(ValueError, match="inside jax.jit"):
        jax.jit(lambda a: bsvd.svd(a, check_finite=True))(A)
    with pytest.raises(ValueError, match="inside jax.jit"):
        jax.jit(lambda a: bsvd.svd(a, check=True))(A)


@pytest.mark.parametrize("kw, exc, match", [
    (dict(tol=-1.0), ValueError, "tol"),
    (dict(ordering="nope"), ValueError, "ordering"),
    (dict(variant="nope"), ValueError, "variant"),
    (dict(backend="nope"), ValueError, "backend"),
    (dict(max_sweeps=1.5), TypeError, "max_sweeps"),
    (dict(block_size=-2), ValueError, "block_size"),
    (dict(precondition=3), ValueError, "precondition"),
    (dict(stream=1), ValueError, "stream"),
])
def test_bad_options(kw, exc, match):
    A = jnp.ones((3, 2))
    with pytest.raises(exc, match=match):
        bsvd.svd(A, **kw)
    with pytest.raises(exc, match=match):
        jax.jit(lambda a: bsvd.svd(a, **kw))(A)


def test_bad_input():
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        bsvd.svd(jnp.ones(3))
    with pytest.raises(TypeError, match="unsupported dtype"):
        bsvd.svd(jnp.ones((2, 2), dtype=jnp.float8_e4m3fn))


@pytest.mark.parametrize("device", DEVICES)
def test_options_reach_the_library(device):
    """tol and max_sweeps reach the handler: a loose tol takes fewer sweeps,
    max_sweeps caps them (variant unblocked on the CPU: auto may take LAPACK,
    which reports no sweeps)."""
    A = _put(random_matrix(np.random.default_rng(12), (4, 30, 30), np.float64), device)
    variant = "unblocked" if device.platform == "cpu" else "auto"
    base = bsvd.svd(A, return_info=True, variant=variant)
    with pytest.warns(bsvd.AccuracyWarning):
        loose = bsvd.svd(A, return_info=True, tol=1e-4, variant=variant)
    assert np.all(_np(loose.info.sweeps) <= _np(base.info.sweeps))
    assert np.any(_np(loose.info.sweeps) < _np(base.info.sweeps))
    capped = bsvd.svd(A, max_sweeps=2, return_info=True, warn=False, variant=variant)
    assert np.all(_np(capped.info.sweeps) <= 2)
    path = bsvd.svd(A, return_info=True, variant=variant).info.path_names
    assert (path == "cpu-unblocked").all() if device.platform == "cpu" else \
        not any(p.startswith("cpu") for p in path)
