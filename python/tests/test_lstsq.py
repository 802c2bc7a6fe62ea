"""bsvd.lstsq, pinv, matrix_rank, cond, norm and matrix_norm against
numpy.linalg on random full-rank and rank-deficient batches of several
shapes and all four dtypes; the edge cases (zero matrices, NaN in one
matrix of a batch, 0-size, no right-hand sides); argument errors; the same
functions on JAX arrays (CPU here), PyTorch tensors (CPU, autograd) and on
the GPU (torch, CuPy, JAX CUDA arrays) where those are installed / visible.
NumPy's and SciPy's own tests of these functions: test_suites_lstsq.py."""
import os
import warnings

import numpy as np
import pytest

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import bsvd  # noqa: E402

DTYPES = ["float32", "float64", "complex64", "complex128"]
SHAPES = [(7, 4), (4, 7), (5, 5), (1, 3), (3, 1), (12, 12)]
needs_gpu = pytest.mark.skipif(not bsvd.cuda_available(),
                               reason="needs the CUDA backend and a visible GPU")


def _tol(dtype):
    """Relative tolerance for solutions of problems with cond <= 100: a
    few hundred units of roundoff of the precision."""
    return 2e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-11


def _random(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _matrices(rng, batch, m, n, rank, dtype):
    """(batch, m, n) matrices of the given rank with singular values from
    1 to 1e-2 (cond 100 on their range), exact zeros beyond the rank."""
    k = min(m, n)
    U = np.linalg.qr(_random(rng, (batch, m, k), "complex128" if np.dtype(dtype).kind == "c"
                             else "float64"))[0]
    V = np.linalg.qr(_random(rng, (batch, n, k), "complex128" if np.dtype(dtype).kind == "c"
                             else "float64"))[0]
    s = np.zeros(k)
    s[:rank] = np.logspace(0, -2, rank) if rank else []
    return ((U * s) @ np.conj(np.swapaxes(V, -1, -2))).astype(dtype)


def _ref_lstsq(A, B, rcond=None):
    """numpy.linalg.lstsq matrix by matrix (it takes one at a time), in
    float64 / complex128, with the default rcond of A's own precision."""
    wide = np.complex128 if np.iscomplexobj(A) or np.iscomplexobj(B) else np.float64
    if rcond is None:
        rcond = np.finfo(np.asarray(A).dtype).eps * max(np.shape(A)[-2:])
    A, B = np.asarray(A, wide), np.asarray(B, wide)
    xs, ranks = [], []
    for a, b in zip(A.reshape((-1,) + A.shape[-2:]), B.reshape((-1,) + B.shape[-2:])):
        x, _, r, _ = np.linalg.lstsq(a, b, rcond=rcond)
        xs.append(x)
        ranks.append(r)
    return (np.array(xs).reshape(A.shape[:-2] + (A.shape[-1], B.shape[-1])),
            np.array(ranks).reshape(A.shape[:-2]))


def _close(x, ref, dtype):
    scale = max(np.abs(ref).max(), 1.0) if ref.size else 1.0
    np.testing.assert_allclose(x, ref, rtol=0, atol=_tol(dtype) * scale)


# ---------------------------------------------------------------------------
# lstsq, NumPy

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("deficient", [False, True])
def test_lstsq_matches_numpy(dtype, shape, deficient):
    rng = np.random.default_rng(hash((dtype, shape, deficient)) % 2**32)
    m, n = shape
    k = min(m, n)
    rank = max(k - 2, 0) if deficient else k
    A = _matrices(rng, 4, m, n, rank, dtype)
    B = _random(rng, (4, m, 3), dtype)
    x, res, r, s = bsvd.lstsq(A, B)
    assert x.shape == (4, n, 3) and x.dtype == np.dtype(dtype)
    assert r.shape == (4,) and r.dtype == np.int32
    assert s.shape == (4, k) and s.dtype == np.dtype(dtype).type(0).real.dtype
    ref_x, _ = _ref_lstsq(A, B)
    _close(x, ref_x, dtype)
    np.testing.assert_array_equal(r, rank)
    np.testing.assert_allclose(s, np.linalg.svd(A.astype(ref_x.dtype), compute_uv=False),
                               rtol=0, atol=_tol(dtype))
    if m > n:  # a stack: per-matrix residuals, NaN where rank < n
        assert res.shape == (4, 3)
        if rank == n:
            want = (np.abs(B - A.astype(ref_x.dtype) @ ref_x) ** 2).sum(axis=-2)
            np.testing.assert_allclose(res, want, rtol=_tol(dtype) * 10, atol=_tol(dtype))
        else:
            assert np.isnan(res).all()
    else:
        assert res.shape == (0,)


@pytest.mark.parametrize("dtype", DTYPES)
def test_lstsq_one_matrix_conventions(dtype):
    """One matrix: NumPy's scalar np.int32 rank, residuals (1,) for a 1-D
    b and (k,) for a 2-D b when rank == n and m > n, else (0,)."""
    rng = np.random.default_rng(1)
    A = _random(rng, (6, 3), dtype)
    b = _random(rng, (6,), dtype)
    x, res, r, s = bsvd.lstsq(A, b)
    ex, eres, er, es = np.linalg.lstsq(A, b)
    assert type(r) is np.int32 and r == er == 3
    assert x.shape == ex.shape == (3,) and res.shape == eres.shape == (1,)
    _close(x, ex, dtype)
    np.testing.assert_allclose(res, eres, rtol=_tol(dtype) * 10)
    Bm = _random(rng, (6, 2), dtype)
    x, res, r, s = bsvd.lstsq(A, Bm)
    assert x.shape == (3, 2) and res.shape == (2,)
    A[:, 2] = A[:, 1]  # rank 2 < n: residuals empty, as NumPy
    x, res, r, s = bsvd.lstsq(A, Bm)
    ex, eres, er, es = np.linalg.lstsq(A, Bm)
    assert r == er == 2 and res.shape == eres.shape == (0,)
    _close(x, ex, dtype)


def test_lstsq_rcond():
    """rcond cuts s_i <= rcond * s_1; a negative rcond is machine precision
    (numpy.linalg.lstsq's documented -1); None is eps * max(m, n)."""
    s = np.array([1.0, 1e-3, 1e-9, 5e-16])  # eps = 2.2e-16 < 5e-16 < 4 eps
    A = np.diag(s)
    b = np.ones(4)
    for rcond, rank in [(None, 3), (1e-4, 2), (1e-2, 1), (-1, 4), (0.0, 4)]:
        x, _, r, _ = bsvd.lstsq(A, b, rcond=rcond)
        assert r == rank, rcond
        np.testing.assert_allclose(x[:rank], 1 / s[:rank], rtol=1e-12)
        assert (x[rank:] == 0).all()


def test_lstsq_broadcast():
    """NumPy >= 2's rule: a 1-D B is a vector; otherwise B is (..., m, k)
    and the batch dimensions broadcast."""
    rng = np.random.default_rng(2)
    A = rng.standard_normal((3, 5, 4))
    b = rng.standard_normal(5)
    x, res, r, s = bsvd.lstsq(A, b)
    assert x.shape == (3, 4) and res.shape == (3, 1) and r.shape == (3,)
    _close(x, _ref_lstsq(A, np.broadcast_to(b[:, None], (3, 5, 1)))[0][..., 0], "float64")
    B = rng.standard_normal((5, 2))
    x, _, r, s = bsvd.lstsq(A, B)
    assert x.shape == (3, 4, 2)
    _close(x, _ref_lstsq(A, np.broadcast_to(B, (3, 5, 2)))[0], "float64")
    B = rng.standard_normal((2, 1, 5, 2))
    x, res, r, s = bsvd.lstsq(A[0], B)
    assert x.shape == (2, 1, 4, 2) and r.shape == (2, 1) and s.shape == (2, 1, 4)
    _close(x, _ref_lstsq(np.broadcast_to(A[0], (2, 1, 5, 4)), B)[0], "float64")


def test_lstsq_promotion():
    """numpy.linalg's promotion: integer input as float64, float32 with
    float32 stays float32, complex if either is."""
    A = np.array([[1, 2], [3, 4], [5, 7]])
    assert bsvd.lstsq(A, np.array([1, 2, 3]))[0].dtype == np.float64
    assert bsvd.lstsq(A.astype(np.float32), np.ones(3, np.float32))[0].dtype == np.float32
    assert bsvd.lstsq(A.astype(np.float32), np.ones(3, np.complex64))[0].dtype == np.complex64
    assert bsvd.lstsq(A.astype(np.float32), np.ones(3))[0].dtype == np.float64
    x = bsvd.lstsq(A.tolist(), [1, 2, 3])[0]  # lists, as NumPy takes them
    _close(x, np.linalg.lstsq(A, [1, 2, 3])[0], "float64")


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix
def test_lstsq_matrix_subclass():
    A = np.matrix([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]])
    b = np.matrix([[1.0], [2.0], [3.0]])
    x, res, _, _ = bsvd.lstsq(A, b)
    assert type(x) is np.matrix and type(res) is np.matrix


def test_lstsq_zero_matrices():
    A = np.zeros((2, 4, 3))
    x, res, r, s = bsvd.lstsq(A, np.ones((2, 4, 2)))
    assert (x == 0).all() and (r == 0).all() and (s == 0).all()
    assert np.isnan(res).all()  # rank 0 < n: NaN per matrix in a stack
    x, res, r, s = bsvd.lstsq(A[0], np.ones(4))
    assert (x == 0).all() and r == 0 and res.shape == (0,)


def test_lstsq_nan_in_one_matrix():
    """A matrix of A with NaN: its x and s are NaN, its rank 0, its
    residuals NaN, with a NonFiniteWarning; the others are as without it.
    A NaN or Inf in B spoils only its own column of x and residuals."""
    rng = np.random.default_rng(3)
    A = rng.standard_normal((3, 6, 4))
    B = rng.standard_normal((3, 6, 2))
    clean = bsvd.lstsq(A, B)
    A[1, 2, 3] = np.nan
    with pytest.warns(bsvd.NonFiniteWarning):
        x, res, r, s = bsvd.lstsq(A, B)
    assert np.isnan(x[1]).all() and np.isnan(s[1]).all() and r[1] == 0 and np.isnan(res[1]).all()
    for i in (0, 2):
        np.testing.assert_array_equal(x[i], clean.x[i])
        assert r[i] == 4 and np.isfinite(res[i]).all()
    A[1, 2, 3] = 0.0
    B[2, 0, 1] = np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error", bsvd.NonFiniteWarning)  # A is finite: no warning
        x, res, r, s = bsvd.lstsq(A, B)
    assert np.isnan(x[2, :, 1]).all() and np.isnan(res[2, 1]) and r[2] == 4
    assert np.isfinite(x[:2]).all() and np.isfinite(x[2, :, 0]).all()
    with pytest.raises(bsvd.NonFiniteError, match="B contains NaN or Inf"):
        bsvd.lstsq(A, B, check_finite=True)


@pytest.mark.parametrize("a_shape,b_shape,x_shape,res_shape", [
    ((0, 3), (0, 2), (3, 2), (0,)),
    ((4, 0), (4, 2), (0, 2), (2,)),
    ((4, 3), (4, 0), (3, 0), (0,)),
    ((0, 0), (0,), (0,), (0,)),
    ((0, 5, 3), (0, 5, 2), (0, 3, 2), (0, 2)),
    ((2, 4, 0), (2, 4, 1), (2, 0, 1), (2, 1)),
])
def test_lstsq_empty(a_shape, b_shape, x_shape, res_shape):
    """0-size problems and B without columns: x = 0 of the right shape;
    with n = 0 the residuals are B's squared column norms, as NumPy."""
    A = np.ones(a_shape)
    B = np.ones(b_shape)
    x, res, r, s = bsvd.lstsq(A, B)
    assert x.shape == x_shape and (x == 0).all()
    assert res.shape == res_shape
    if a_shape[-1] == 0 and a_shape[-2] > 0:
        np.testing.assert_array_equal(res, a_shape[-2])
    assert s.shape == a_shape[:-2] + (min(a_shape[-2:]),)
    if min(a_shape[-2:]) == 0:
        assert (np.asarray(r) == 0).all()
    if len(a_shape) == 2:
        e = np.linalg.lstsq(A, B)
        assert e[0].shape == x.shape and e[1].shape == res.shape and e[2] == r


def test_lstsq_errors():
    A = np.ones((4, 3))
    with pytest.raises(np.linalg.LinAlgError, match="Incompatible dimensions: B has 5 rows"):
        bsvd.lstsq(A, np.ones(5))
    with pytest.raises(np.linalg.LinAlgError, match="batch dimensions"):
        bsvd.lstsq(np.ones((2, 4, 3)), np.ones((3, 4, 1)))
    with pytest.raises(np.linalg.LinAlgError, match="A must have at least 2 dimensions"):
        bsvd.lstsq(np.ones(4), np.ones(4))
    with pytest.raises(np.linalg.LinAlgError, match="B must be"):
        bsvd.lstsq(A, 1.0)
    with pytest.raises(ValueError, match="rcond must be a number"):
        bsvd.lstsq(A, np.ones(4), rcond=float("nan"))
    with pytest.raises(TypeError, match="rcond must be a real number"):
        bsvd.lstsq(A, np.ones(4), rcond="1e-3")
    with pytest.raises(ValueError, match="driver must be one of"):
        bsvd.lstsq(A, np.ones(4), driver="gelsx")
    with pytest.raises(TypeError, match="bsvd.lstsq: unexpected argument 'rtol'"):
        bsvd.lstsq(A, np.ones(4), rtol=1e-3)
    with pytest.raises(TypeError, match="unsupported dtype"):
        bsvd.lstsq(A, np.ones(4, dtype=object))
    for drv in ("gelsd", "gelss", "gelsy"):  # the SVD drivers all give gelsd's solution
        x = bsvd.lstsq(A + np.eye(4, 3), np.arange(4.0), driver=drv)[0]
        _close(x, np.linalg.lstsq(A + np.eye(4, 3), np.arange(4.0))[0], "float64")


def test_lstsq_svd_options():
    """bsvd.svd's keywords pass through (here backend and max_sweeps)."""
    rng = np.random.default_rng(4)
    A, B = rng.standard_normal((2, 6, 3)), rng.standard_normal((2, 6, 2))
    x = bsvd.lstsq(A, B, backend="cpu", max_sweeps=40)[0]
    _close(x, _ref_lstsq(A, B)[0], "float64")


# ---------------------------------------------------------------------------
# pinv, matrix_rank, cond, norm, NumPy

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_pinv_matches_numpy(dtype, shape):
    rng = np.random.default_rng(hash((dtype, shape)) % 2**32)
    m, n = shape
    k = min(m, n)
    for rank in {k, max(k - 1, 0)}:
        A = _matrices(rng, 3, m, n, rank, dtype)
        P = bsvd.pinv(A, rtol=None)  # eps * max(m, n) of the dtype (NumPy's 1e-15 is float64's)
        assert P.shape == (3, n, m) and P.dtype == np.dtype(dtype)
        ref = np.linalg.pinv(A.astype(np.complex128 if np.dtype(dtype).kind == "c" else float),
                             rtol=np.finfo(dtype).eps * max(m, n))
        _close(P, ref, dtype)


def test_pinv_tolerances():
    A = np.diag([1.0, 1e-3, 1e-12])
    np.testing.assert_allclose(bsvd.pinv(A), np.linalg.pinv(A))  # NumPy's 1e-15: all kept
    np.testing.assert_allclose(bsvd.pinv(A, rtol=None), np.linalg.pinv(A, rtol=None))
    np.testing.assert_allclose(bsvd.pinv(A, 1e-2), np.diag([1.0, 0, 0]))
    np.testing.assert_allclose(bsvd.pinv(A, rtol=1e-4), np.diag([1.0, 1e3, 0]))
    np.testing.assert_allclose(bsvd.pinv(A, atol=1e-6), np.diag([1.0, 1e3, 0]))
    np.testing.assert_allclose(bsvd.pinv(A, atol=1e-6, rtol=1e-2), np.diag([1.0, 0, 0]))
    As = np.stack([A, A])  # rcond per matrix, broadcast against the stack
    P = bsvd.pinv(As, np.array([1e-2, 1e-4]))
    np.testing.assert_allclose(P, np.linalg.pinv(As, np.array([1e-2, 1e-4])))
    with pytest.raises(ValueError, match="can't be both set"):
        bsvd.pinv(A, 1e-3, rtol=1e-3)
    with pytest.raises(ValueError, match="atol must be >= 0"):
        bsvd.pinv(A, atol=-1.0)
    with pytest.raises(ValueError, match="rtol must be >= 0"):
        bsvd.pinv(A, rtol=float("nan"))
    with pytest.raises(ValueError, match="rcond must be >= 0"):
        bsvd.pinv(As, np.array([1e-2, -1.0]))


def test_pinv_edge_cases():
    assert bsvd.pinv(np.zeros((2, 0, 3))).shape == (2, 3, 0)
    assert bsvd.pinv(np.zeros((0, 4, 3))).shape == (0, 3, 4)
    np.testing.assert_array_equal(bsvd.pinv(np.zeros((3, 2))), np.zeros((2, 3)))
    A = np.stack([np.eye(3), np.eye(3)])
    A[0, 1, 1] = np.nan
    with pytest.warns(bsvd.NonFiniteWarning):
        P = bsvd.pinv(A)
    assert np.isnan(P[0]).all()
    np.testing.assert_allclose(P[1], np.eye(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        M = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    assert type(bsvd.pinv(M)) is np.matrix


@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_rank_matches_numpy(dtype):
    rng = np.random.default_rng(5)
    A = np.concatenate([_matrices(rng, 2, 6, 5, r, dtype) for r in range(6)])
    wide = A.astype(np.complex128 if np.dtype(dtype).kind == "c" else float)
    r = bsvd.matrix_rank(A)
    np.testing.assert_array_equal(r, np.repeat(np.arange(6), 2))
    assert r.dtype == np.intp
    np.testing.assert_array_equal(bsvd.matrix_rank(A, tol=0.05),
                                  np.linalg.matrix_rank(wide, tol=0.05))
    np.testing.assert_array_equal(bsvd.matrix_rank(A, rtol=0.05),
                                  np.linalg.matrix_rank(wide, rtol=0.05))
    np.testing.assert_array_equal(bsvd.matrix_rank(A, atol=0.05), bsvd.matrix_rank(A, tol=0.05))


def test_matrix_rank_edge_cases():
    assert bsvd.matrix_rank([1, 0, 0]) == 1 and bsvd.matrix_rank(np.zeros(3)) == 0
    assert bsvd.matrix_rank(2.0) == 1
    assert bsvd.matrix_rank(np.zeros((0, 5, 5))).shape == (0,)
    np.testing.assert_array_equal(bsvd.matrix_rank(np.zeros((3, 0, 5))), [0, 0, 0])
    I = np.eye(4)
    assert bsvd.matrix_rank(I, atol=np.array(2.0)) == 0  # an array tolerance
    with pytest.raises(ValueError, match="can't be both set"):
        bsvd.matrix_rank(I, tol=0.1, rtol=0.1)
    with pytest.raises(ValueError, match="tol must be >= 0"):
        bsvd.matrix_rank(I, tol=-0.1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cond_matches_numpy(dtype):
    rng = np.random.default_rng(6)
    A = _random(rng, (3, 5, 5), dtype)
    wide = A.astype(np.complex128 if np.dtype(dtype).kind == "c" else float)
    for p in (None, 2, -2, 1, -1, np.inf, "fro"):
        c = bsvd.cond(A, p)
        np.testing.assert_allclose(c, np.linalg.cond(wide, p), rtol=_tol(dtype) * 100)
    rect = _random(rng, (2, 6, 3), dtype)
    np.testing.assert_allclose(bsvd.cond(rect), np.linalg.cond(rect.astype(wide.dtype)),
                               rtol=_tol(dtype) * 100)


def test_cond_edge_cases():
    A = np.random.default_rng(7).random((2, 2, 2, 2))
    A[0, 0] = 0
    c = bsvd.cond(A)
    assert c[0, 0] == np.inf and np.isfinite(c[0, 1]) and c.shape == (2, 2)
    assert type(bsvd.cond(np.eye(2))) is np.float64
    with pytest.raises(np.linalg.LinAlgError, match="empty"):
        bsvd.cond(np.zeros((0, 0)))
    with pytest.raises(np.linalg.LinAlgError, match="at least 2 dimensions"):
        bsvd.cond(np.ones(3))


@pytest.mark.parametrize("dtype", DTYPES + ["int64"])
def test_norms_match_numpy(dtype):
    rng = np.random.default_rng(8)
    A = (10 * _random(rng, (2, 3, 4, 5), "complex128" if dtype.startswith("complex")
                      else "float64")).astype(dtype)
    wide = A.astype(np.complex128 if np.dtype(dtype).kind == "c" else float)
    tol = max(_tol(dtype), 1e-11) * 100
    for ord in (2, -2, "nuc", "fro", 1, -1, np.inf, -np.inf):
        for axis in ((-2, -1), (1, 3), (3, 0)):
            for keep in (False, True):
                got = bsvd.norm(A, ord, axis, keep)
                want = np.linalg.norm(wide, ord, axis, keep)
                assert got.shape == want.shape
                np.testing.assert_allclose(got, want, rtol=tol)
        got = bsvd.matrix_norm(A, ord=ord, keepdims=True)
        np.testing.assert_allclose(got, np.linalg.matrix_norm(wide, ord=ord, keepdims=True),
                                   rtol=tol)
    real = np.float64 if dtype == "int64" else np.dtype(dtype).type(0).real.dtype
    assert bsvd.norm(A[0, 0], 2).dtype == bsvd.norm(A[0, 0], "fro").dtype == real
    np.testing.assert_allclose(bsvd.norm(A[0, 0, 0]), np.linalg.norm(wide[0, 0, 0]), rtol=tol)


def test_norm_errors_and_aliases():
    A = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_allclose(bsvd.norm(A, 2, dim=(1, 2), keepdim=True),
                               np.linalg.norm(A, 2, (1, 2), True))
    np.testing.assert_allclose(bsvd.matrix_norm(A, "nuc", dim=(0, 2)),
                               np.linalg.norm(A, "nuc", (0, 2)))
    with pytest.raises(np.exceptions.AxisError):
        bsvd.norm(A, 2, (1, 3))
    with pytest.raises(ValueError, match="Duplicate axes"):
        bsvd.norm(A, 2, (1, 1))
    with pytest.raises(ValueError):
        bsvd.norm(A, 3, (1, 2))  # NumPy's own error for a bad matrix order
    with pytest.raises(np.linalg.LinAlgError, match="at least 2 dimensions"):
        bsvd.matrix_norm(np.ones(3), 2)
    assert bsvd.norm(np.zeros((0, 3)), 2) == 0 and bsvd.norm(np.zeros((0, 3)), "nuc") == 0


# ---------------------------------------------------------------------------
# JAX (its CPU here; the GPU below)

def test_jax_arrays():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    rng = np.random.default_rng(9)
    A = rng.standard_normal((3, 6, 4)).astype(np.float32)
    A[2, :, 3] = A[2, :, 2]  # rank 3
    B = rng.standard_normal((3, 6, 2)).astype(np.float32)
    x, res, r, s = bsvd.lstsq(jnp.asarray(A), jnp.asarray(B))
    assert isinstance(x, jax.Array) and isinstance(r, jax.Array)
    ex, eres, er, es = bsvd.lstsq(A, B)
    np.testing.assert_allclose(np.asarray(x), ex, atol=1e-4)
    np.testing.assert_array_equal(np.asarray(r), er)
    np.testing.assert_allclose(np.asarray(res), eres, rtol=1e-4)
    # pinv's default cut (NumPy's rcond 1e-15) keeps matrix 2's rounding-level
    # value, so its entries reach ~1e6 and the two libraries' products of
    # V diag(1/s) U^H may differ by an ulp there: a tolerance of that scale.
    P = bsvd.pinv(A)
    np.testing.assert_allclose(np.asarray(bsvd.pinv(jnp.asarray(A))), P,
                               atol=1e-4 * max(1.0, float(np.abs(P).max())))
    np.testing.assert_array_equal(np.asarray(bsvd.matrix_rank(jnp.asarray(A))), [4, 4, 3])
    np.testing.assert_allclose(np.asarray(bsvd.cond(jnp.asarray(A[:2]))), bsvd.cond(A[:2]),
                               rtol=1e-4)
    np.testing.assert_allclose(np.asarray(bsvd.matrix_norm(jnp.asarray(A), "nuc")),
                               bsvd.matrix_norm(A, "nuc"), rtol=1e-5)
    # Inside jax.jit the rank is not known while tracing: the residuals of
    # one matrix follow the stacked rule (NaN where rank < n).
    f = jax.jit(lambda a, b: bsvd.lstsq(a, b))
    x1, res1, r1, _ = f(jnp.asarray(A[0]), jnp.asarray(B[0]))
    np.testing.assert_allclose(np.asarray(x1), ex[0], atol=1e-4)
    np.testing.assert_allclose(np.asarray(res1), eres[0], rtol=1e-4)
    with pytest.raises(TypeError, match="B is a numpy array but A is a jax array"):
        bsvd.lstsq(jnp.asarray(A), B)


# ---------------------------------------------------------------------------
# PyTorch (CPU tensors; the GPU below)

def _torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("driver", [None, "gelsd", "gelss", "gelsy"])
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5)])
def test_torch_lstsq_matches_torch_fields(driver, shape):
    """torch.linalg.lstsq's named tuple and which fields each driver fills,
    against torch's own CPU LAPACK drivers (gelsd for driver None, whose
    default on the CPU is gelsy: bsvd's default is gelsd everywhere)."""
    torch = _torch()
    g = torch.Generator().manual_seed(0)
    m, n = shape
    A = torch.randn(3, m, n, dtype=torch.float64, generator=g)
    B = torch.randn(3, m, 2, dtype=torch.float64, generator=g)
    got = bsvd.lstsq(A, B, driver=driver)
    want = torch.linalg.lstsq(A, B, driver=driver or "gelsd")
    assert type(got).__name__ == "linalg_lstsq"
    for f in ("solution", "residuals", "rank", "singular_values"):
        a, b = getattr(got, f), getattr(want, f)
        assert a.shape == b.shape and a.dtype == b.dtype, (f, a.shape, b.shape)
        if a.numel():
            torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-9)
    b1 = B[..., 0]  # torch's vector case: B with one dimension fewer than A
    got, want = bsvd.lstsq(A, b1), torch.linalg.lstsq(A, b1, driver="gelsd")
    assert got.solution.shape == want.solution.shape == (3, n)
    assert got.residuals.shape == want.residuals.shape
    torch.testing.assert_close(got.solution, want.solution)


def test_torch_rank_deficient():
    """Where torch's GPU driver (gels) assumes full rank, bsvd's gelsd
    gives the minimum-norm solution; on the CPU it equals torch's gelsd."""
    torch = _torch()
    g = torch.Generator().manual_seed(1)
    A = torch.randn(4, 8, 5, dtype=torch.float64, generator=g)
    A[:, :, 4] = A[:, :, 0] + A[:, :, 1]
    B = torch.randn(4, 8, 3, dtype=torch.float64, generator=g)
    got = bsvd.lstsq(A, B)
    want = torch.linalg.lstsq(A, B, driver="gelsd")
    assert (got.rank == 4).all() and got.residuals.numel() == 0 == want.residuals.numel()
    torch.testing.assert_close(got.solution, want.solution, rtol=1e-8, atol=1e-8)


def test_torch_errors():
    torch = _torch()
    A = torch.randn(4, 3, dtype=torch.float64)
    with pytest.raises(TypeError, match="B has dtype float32 but A has float64"):
        bsvd.lstsq(A, torch.randn(4, 2))
    with pytest.raises(ValueError, match="rcond must be >= 0"):
        bsvd.lstsq(A, torch.randn(4, 2, dtype=torch.float64), rcond=-1.0)
    with pytest.raises(ValueError, match="as many dimensions as A"):
        bsvd.lstsq(A, torch.randn(1, 1, 4, 2, dtype=torch.float64))
    with pytest.raises(np.linalg.LinAlgError, match="Incompatible dimensions"):
        bsvd.lstsq(A, torch.randn(5, dtype=torch.float64))
    with pytest.raises(TypeError, match="B is a numpy array but A is a torch array"):
        bsvd.lstsq(A, np.ones((4, 2)))


def test_torch_pinv_rank_cond_norm():
    torch = _torch()
    g = torch.Generator().manual_seed(2)
    A = torch.randn(3, 5, 4, dtype=torch.float64, generator=g)
    A[2, :, 3] = 0
    torch.testing.assert_close(bsvd.pinv(A), torch.linalg.pinv(A))
    torch.testing.assert_close(bsvd.pinv(A, atol=0.5, rtol=0.1),
                               torch.linalg.pinv(A, atol=0.5, rtol=0.1))
    assert torch.equal(bsvd.matrix_rank(A), torch.linalg.matrix_rank(A))
    assert torch.equal(bsvd.matrix_rank(A, atol=1.0), torch.linalg.matrix_rank(A, atol=1.0))
    torch.testing.assert_close(bsvd.cond(A[:2]), torch.linalg.cond(A[:2]))
    S = A[:2, :4]
    torch.testing.assert_close(bsvd.cond(S, 1), torch.linalg.cond(S, 1))
    for ord in (2, -2, "nuc", "fro", 1, float("inf")):
        torch.testing.assert_close(bsvd.matrix_norm(A, ord), torch.linalg.matrix_norm(A, ord))
        torch.testing.assert_close(bsvd.norm(A, ord, (0, 2), True),
                                   torch.linalg.norm(A, ord, (0, 2), True))
    assert bsvd.cond(torch.zeros(2, 0, 0)).shape == (2,)


def test_torch_autograd():
    """lstsq and pinv are differentiable (bsvd.svd's backward composed
    with torch's ops): gradcheck on small full-rank problems, real and
    complex, tall, wide and square."""
    torch = _torch()
    g = torch.Generator().manual_seed(3)
    for m, n, dtype in [(5, 3, torch.float64), (3, 5, torch.float64), (4, 4, torch.complex128)]:
        A = torch.randn(2, m, n, dtype=dtype, generator=g).requires_grad_()
        B = torch.randn(2, m, 2, dtype=dtype, generator=g).requires_grad_()
        assert torch.autograd.gradcheck(lambda a, b: bsvd.lstsq(a, b).solution, (A, B))
        assert torch.autograd.gradcheck(lambda a: bsvd.pinv(a), (A,))


# ---------------------------------------------------------------------------
# The GPU: torch, CuPy and JAX CUDA arrays (run where a GPU is visible)

@needs_gpu
def test_gpu_torch():
    torch = _torch()
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    g = torch.Generator().manual_seed(4)
    A = torch.randn(64, 9, 6, dtype=torch.float64, generator=g)
    A[::3, :, 5] = A[::3, :, 0]  # every third matrix of rank 5: torch's gels would be wrong
    B = torch.randn(64, 9, 2, dtype=torch.float64, generator=g)
    want = torch.linalg.lstsq(A, B, driver="gelsd")
    got = bsvd.lstsq(A.cuda(), B.cuda())
    assert got.solution.is_cuda and got.rank.is_cuda
    torch.testing.assert_close(got.solution.cpu(), want.solution, rtol=1e-8, atol=1e-8)
    assert torch.equal(got.rank.cpu(), want.rank)
    torch.testing.assert_close(bsvd.pinv(A.cuda()).cpu(), torch.linalg.pinv(A))
    assert torch.equal(bsvd.matrix_rank(A.cuda()).cpu(), torch.linalg.matrix_rank(A))
    torch.testing.assert_close(bsvd.matrix_norm(A.cuda(), 2).cpu(),
                               torch.linalg.matrix_norm(A, 2))
    torch.testing.assert_close(bsvd.cond(A[1:3, :6].cuda()).cpu(), torch.linalg.cond(A[1:3, :6]))
    with pytest.raises(ValueError, match="move B to A's device"):
        bsvd.lstsq(A.cuda(), B)
    Ag = A[:4, :5, :3].cuda().requires_grad_()
    assert torch.autograd.gradcheck(lambda a: bsvd.pinv(a), (Ag,))


@needs_gpu
def test_gpu_cupy():
    cupy = pytest.importorskip("cupy")
    rng = np.random.default_rng(5)
    A = rng.standard_normal((32, 8, 5))
    A[::4, :, 4] = 0
    B = rng.standard_normal((32, 8, 3))
    x, res, r, s = bsvd.lstsq(cupy.asarray(A), cupy.asarray(B))
    assert isinstance(x, cupy.ndarray)
    ex, eres, er, es = bsvd.lstsq(A, B)
    np.testing.assert_allclose(x.get(), ex, atol=1e-10)
    np.testing.assert_array_equal(r.get(), er)
    np.testing.assert_allclose(res.get(), eres, rtol=1e-10)
    np.testing.assert_allclose(bsvd.pinv(cupy.asarray(A)).get(), bsvd.pinv(A), atol=1e-10)
    np.testing.assert_array_equal(bsvd.matrix_rank(cupy.asarray(A)).get(), bsvd.matrix_rank(A))
    np.testing.assert_allclose(bsvd.norm(cupy.asarray(A), "nuc", (1, 2)).get(),
                               bsvd.norm(A, "nuc", (1, 2)), rtol=1e-12)
    np.testing.assert_allclose(bsvd.cond(cupy.asarray(A[1:3, :5])).get(),
                               bsvd.cond(A[1:3, :5]), rtol=1e-10)


@needs_gpu
def test_gpu_jax():
    jax = pytest.importorskip("jax")
    try:
        dev = jax.devices("gpu")[0]
    except RuntimeError:
        pytest.skip("jax has no GPU backend")
    rng = np.random.default_rng(6)
    A = rng.standard_normal((16, 7, 4)).astype(np.float32)
    B = rng.standard_normal((16, 7, 2)).astype(np.float32)
    x, res, r, s = bsvd.lstsq(jax.device_put(A, dev), jax.device_put(B, dev))
    ex, eres, er, es = bsvd.lstsq(A, B)
    np.testing.assert_allclose(np.asarray(x), ex, atol=1e-4)
    np.testing.assert_array_equal(np.asarray(r), er)
    np.testing.assert_allclose(np.asarray(bsvd.pinv(jax.device_put(A, dev))), bsvd.pinv(A),
                               atol=1e-4)
