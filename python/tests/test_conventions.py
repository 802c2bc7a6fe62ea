"""bsvd.svd as a drop-in for numpy.linalg.svd: signature, defaults, result
types, dtype promotion, layouts and shapes NumPy takes, option checks, the
tol bound and the NaN / convergence policy. Accuracy by T1-T4 (helpers)."""
import warnings

import numpy as np
import pytest

import bsvd
from helpers import assert_ratios, random_matrix


@pytest.fixture
def rng():
    return np.random.default_rng(34)


def _same_shapes_as_numpy(A, **kw):
    ours = bsvd.svd(A, **kw)
    ref = np.linalg.svd(A, **kw)
    if kw.get("compute_uv", True):
        assert [x.shape for x in ours] == [x.shape for x in ref]
        assert [x.dtype for x in ours] == [x.dtype for x in ref]
    else:
        assert ours.shape == ref.shape and ours.dtype == ref.dtype
    return ours


def _check_full(A, res):
    """A = U[..., :k] S Vh[..., :k, :] and full U, Vh unitary (T1-T4 on the
    reduced part, orthogonality of the completed part)."""
    U, S, Vh = res
    A = np.asarray(A)
    m, n = A.shape[-2:]
    k = min(m, n)
    if A.size:
        assert_ratios(A, U[..., :k], S, Vh[..., :k, :])
    eps = np.finfo(S.dtype).eps
    for Q, r in ((U, m), (np.swapaxes(Vh, -1, -2).conj(), n)):
        G = np.swapaxes(Q, -1, -2).conj() @ Q
        assert np.abs(G - np.eye(r)).max(initial=0) < 30 * max(r, 1) * eps


# ---- signature and result types -----------------------------------------

def test_named_result_and_defaults(rng):
    A = random_matrix(rng, (2, 5, 3), np.float64)
    res = bsvd.svd(A)
    assert isinstance(res, bsvd.SVDResult) and isinstance(res, tuple)
    U, S, Vh = res
    assert res.U is U and res.S is S and res.Vh is Vh
    assert U.shape == (2, 5, 5) and Vh.shape == (2, 3, 3)  # full_matrices=True, as NumPy
    _check_full(A, res)
    r = bsvd.svd(A, False)  # positional full_matrices, as numpy.linalg.svd(a, False)
    assert r.U.shape == (2, 5, 3)
    S2 = bsvd.svd(A, True, False)  # positional compute_uv
    assert isinstance(S2, np.ndarray) and S2.shape == (2, 3)
    U, S, Vh, info = bsvd.svd(A, return_info=True)
    assert isinstance(info, bsvd.Info)
    r = bsvd.svd(A, return_info=True)
    assert isinstance(r, bsvd.SVDInfoResult) and r.info.converged.all()


def test_old_positional_options_are_refused(rng):
    # tol, max_sweeps, backend, ... are keyword-only: a tol passed in the
    # third position lands on hermitian and is refused, not misread.
    with pytest.raises(TypeError, match="hermitian"):
        bsvd.svd(np.eye(3), False, True, 1e-10)
    with pytest.raises(TypeError):
        bsvd.svd(np.eye(3), False, True, False, 1e-10)


@pytest.mark.parametrize("shape", [(4, 6), (6, 4), (3, 3), (2, 3, 5, 4), (1, 1), (1, 5), (5, 1),
                                   (0, 3), (3, 0), (0, 0), (0, 2, 2), (2, 0, 3), (2, 3, 0)])
@pytest.mark.parametrize("full", [True, False])
def test_shapes_and_dtypes_as_numpy(rng, shape, full):
    for dt in (np.float32, np.complex128):
        A = random_matrix(rng, shape, dt)
        res = _same_shapes_as_numpy(A, full_matrices=full)
        _check_full(A, res) if full else None
        _same_shapes_as_numpy(A, compute_uv=False)


def test_empty_puts_identity_as_numpy():
    U, S, Vh = bsvd.svd(np.empty((4, 0)))
    np.testing.assert_array_equal(U, np.eye(4))
    assert Vh.shape == (0, 0) and S.shape == (0,)
    U, S, Vh = bsvd.svd(np.empty((2, 0, 3)))
    np.testing.assert_array_equal(Vh, np.broadcast_to(np.eye(3), (2, 3, 3)))


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint16, np.bool_])
def test_integer_and_bool_promoted_to_float64(dtype):
    A = (np.arange(12).reshape(4, 3) % 5).astype(dtype)
    res = _same_shapes_as_numpy(A)
    assert res.U.dtype == np.float64 and res.S.dtype == np.float64
    np.testing.assert_allclose(res.S, np.linalg.svd(A, compute_uv=False), rtol=1e-13, atol=1e-13)
    assert bsvd.svdvals(A).dtype == np.float64


def test_python_lists_as_numpy(rng):
    U, S, Vh = bsvd.svd([[1, 2], [3, 4]])
    assert U.dtype == np.float64
    np.testing.assert_allclose(S, np.linalg.svd([[1, 2], [3, 4]], compute_uv=False), rtol=1e-14)
    mats = [random_matrix(rng, (4, 3), np.float64) for _ in range(3)]
    res = bsvd.svd(mats)  # same-shape arrays: one stacked (3, 4, 3) array
    assert res.S.shape == (3, 3) and res.U.shape == (3, 4, 4)
    _check_full(np.stack(mats), res)
    with pytest.raises(ValueError, match="svd_batch"):
        bsvd.svd([np.ones((2, 2)), np.ones((3, 2))])


def test_hermitian_accepted(rng):
    B = random_matrix(rng, (3, 5, 5), np.complex128)
    H = B + np.swapaxes(B, -1, -2).conj()
    res = bsvd.svd(H, hermitian=True)
    _check_full(H, res)
    np.testing.assert_allclose(res.S, np.linalg.svd(H, compute_uv=False, hermitian=True),
                               rtol=0, atol=1e-13 * res.S.max())


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix itself
def test_subclass_kept_for_vectors_as_numpy():
    A = np.matrix([[1.0, 2.0], [3.0, 5.0]])
    U, S, Vh = bsvd.svd(A)
    assert type(U) is np.matrix and type(Vh) is np.matrix and type(S) is np.ndarray
    assert np.allclose(U @ np.diag(S) @ Vh, A)


# ---- layouts ---------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda r: r.random((4, 5))[::-4],            # (1, 5), negative stride on a length-1 axis
    lambda r: r.random((3, 1, 5))[::-3],         # (1, 1, 5)
    lambda r: r.random((4, 5))[:, ::-5],         # (4, 1)
    lambda r: r.random((6, 4, 5))[::-2, ::-1, ::-1],  # negative strides everywhere: copied
    lambda r: np.asfortranarray(r.random((3, 4, 5))),
    lambda r: r.random((5, 4)).T,                # column-major view
    lambda r: np.broadcast_to(r.random((4, 3)), (2, 4, 3)),  # zero batch stride, read-only
    lambda r: r.random((2, 1, 4, 3))[:, :, ::2],  # length-1 batch axis, row step
    lambda r: r.random((3, 6))[:, None, :],      # (3, 1, 6) from a new axis
], ids=["neg-len1-row", "neg-len1-batch", "neg-len1-col", "neg-all", "fortran", "transposed",
        "broadcast", "len1-batch-step", "newaxis"])
def test_layouts(make):
    A = make(np.random.default_rng(5))
    _check_full(A, bsvd.svd(A))
    S = bsvd.svdvals(A)
    np.testing.assert_allclose(S, np.linalg.svd(A, compute_uv=False), rtol=0,
                               atol=1e-13 * max(S.max(initial=0), 1))


def test_readonly_and_unaligned(rng):
    A = random_matrix(rng, (3, 6, 4), np.float64)
    A.flags.writeable = False
    _check_full(A, bsvd.svd(A))
    buf = np.zeros(A.nbytes + 1, np.uint8)[1:]  # an unaligned float64 array
    B = buf.view(np.float64).reshape(A.shape)
    B[...] = A
    assert not B.flags.aligned
    _check_full(B, bsvd.svd(B))
    assert (A == B).all()  # input untouched


# ---- options -----------------------------------------------------------------

def test_tol_bound_warns_and_names_the_loss(rng):
    A = random_matrix(rng, (2, 16, 16), np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bsvd.svd(A, tol=64 * 2.0 ** -53)   # at the bound: no warning
        bsvd.svd(A.astype(np.float32), tol=3e-6)
    for tol in (1e-13, 1e-4, 0.5):
        with pytest.warns(bsvd.AccuracyWarning, match="orthogonal only to about 0.3") as rec:
            bsvd.svd(A, tol=tol)
        assert rec[0].filename == __file__
    with pytest.warns(bsvd.AccuracyWarning, match="float32"):
        bsvd.svdvals(A.astype(np.float32), tol=1e-5)
    for bad in (1.0, 2.0, -1e-9, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="tol"):
            bsvd.svd(A, tol=bad)


def test_tol_at_the_bound_keeps_the_contract(rng):
    # The bound (64 u) measured on the CPU backend: T2 about 0.3 tol/u.
    for dt, u in ((np.float64, 2.0 ** -53), (np.complex64, 2.0 ** -24)):
        A = random_matrix(rng, (4, 48, 40), dt)
        U, S, Vh = bsvd.svd(A, full_matrices=False, tol=64 * u)
        assert_ratios(A, U, S, Vh)


def test_max_sweeps_warning_says_not_converged(rng):
    A = random_matrix(rng, (2, 24, 24), np.float64)
    with pytest.warns(bsvd.ConvergenceWarning, match="NOT converged"):
        res = bsvd.svd(A, max_sweeps=1, return_info=True)
    assert (res.info.info > 0).all()


def test_nan_policy(rng):
    A = random_matrix(rng, (3, 4, 4), np.float64)
    A[1, 0, 0] = np.nan
    with pytest.warns(bsvd.NonFiniteWarning):
        U, S, Vh, info = bsvd.svd(A, return_info=True)
    assert np.isnan(S[1]).all() and np.isnan(U[1]).all() and np.isnan(Vh[1]).all()
    assert list(info.info) == [0, -1, 0] and np.isfinite(S[[0, 2]]).all()
    with pytest.raises(bsvd.NonFiniteError, match="NaN") as exc:
        bsvd.svd(A, check_finite=True)
    assert isinstance(exc.value, np.linalg.LinAlgError) and isinstance(exc.value, ValueError)


def test_svdvals_refuses_svd_only_arguments():
    with pytest.raises(TypeError, match="compute_uv"):
        bsvd.svdvals(np.eye(2), compute_uv=True)
    with pytest.raises(TypeError):
        bsvd.svdvals(np.eye(2), sweeps=3)


def test_svd_batch(rng):
    mats = [random_matrix(rng, s, np.complex64) for s in ((5, 3), (2, 6), (4, 4))]
    res = bsvd.svd_batch(mats)
    assert isinstance(res, bsvd.SVDResult) and len(res.U) == 3
    for A, U, S, Vh in zip(mats, *res):
        assert U.shape == (A.shape[0],) * 2 and Vh.shape == (A.shape[1],) * 2
        _check_full(A, (U, S, Vh))
    Ss = bsvd.svd_batch(mats, compute_uv=False)
    assert [s.shape for s in Ss] == [(3,), (2,), (4,)]
    ints = bsvd.svd_batch([np.eye(2, dtype=int), np.ones((3, 2), dtype=int)], full_matrices=False)
    assert ints.S[1].dtype == np.float64 and np.allclose(ints.S[1], [np.sqrt(6), 0])
