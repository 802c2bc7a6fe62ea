"""bsvd with NumPy arrays on the CPU backend (what CI runs)."""
import os
import re
import warnings

import numpy as np
import pytest

import bsvd
from helpers import assert_ratios, random_matrix

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
REAL = {np.float32: np.float32, np.float64: np.float64,
        np.complex64: np.float32, np.complex128: np.float64}


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (8, 8), (2, 3, 6, 4), (2, 3, 4, 6),
                                   (1, 7), (7, 1), (1, 1), (33, 17), (17, 33), (4, 64, 64)])
def test_shapes_and_accuracy(rng, dtype, shape):
    A = random_matrix(rng, shape, dtype)
    U, S, Vh = bsvd.svd(A, full_matrices=False)
    *b, m, n = shape
    k = min(m, n)
    assert isinstance(U, np.ndarray) and isinstance(S, np.ndarray) and isinstance(Vh, np.ndarray)
    assert U.shape == (*b, m, k) and S.shape == (*b, k) and Vh.shape == (*b, k, n)
    assert U.dtype == dtype and Vh.dtype == dtype and S.dtype == REAL[dtype]
    assert_ratios(A, U, S, Vh)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(10, 24, 16), (10, 16, 24), (3, 20, 20)])
def test_ill_conditioned(rng, dtype, shape):
    cond = 1e5 if dtype in (np.float32, np.complex64) else 1e10
    A = random_matrix(rng, shape, dtype, cond=cond)
    U, S, Vh = bsvd.svd(A, full_matrices=False)
    assert_ratios(A, U, S, Vh)


def test_matches_numpy_singular_values(rng):
    A = random_matrix(rng, (6, 9, 7), np.float64)
    S = bsvd.svdvals(A)
    S_np = np.linalg.svd(A, compute_uv=False)
    assert np.max(np.abs(S - S_np) / S_np[..., :1]) < 1e-13


@pytest.mark.parametrize("dtype", DTYPES)
def test_compute_uv_false_and_svdvals(rng, dtype):
    A = random_matrix(rng, (3, 6, 5), dtype)
    S1 = bsvd.svd(A, compute_uv=False)
    S2 = bsvd.svdvals(A)
    _, S3, _ = bsvd.svd(A, full_matrices=False)
    assert S1.shape == (3, 5) and S1.dtype == REAL[dtype]
    u = np.finfo(REAL[dtype]).eps
    assert np.max(np.abs(S1 - S2)) <= 10 * u * S3.max()
    assert np.max(np.abs(S1 - S3)) <= 10 * u * S3.max()


# ---- layouts: the transposed view, column-major input, copies --------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("make", [
    lambda A: np.asfortranarray(A),                    # column-major per matrix ("N")
    lambda A: np.swapaxes(np.ascontiguousarray(np.swapaxes(A, -1, -2)), -1, -2),  # same, batched
    lambda A: A[..., ::2, :],                           # row stride 2n
    lambda A: A[..., :, :4],                            # ld > n
    lambda A: A[::-1],                                  # negative batch stride: copy
    lambda A: A[..., ::-1, :],                          # negative row stride: copy
    lambda A: np.moveaxis(A, 0, 1),                     # batch dims not mergeable: copy
    lambda A: A[..., ::2, ::2],                         # neither layout: copy
], ids=["fortran", "batched-colmajor", "row-step", "ld>n", "neg-batch", "neg-row",
        "moved-batch", "both-steps"])
def test_non_contiguous(rng, dtype, make):
    base = random_matrix(rng, (3, 2, 10, 6), dtype)
    A = make(base)
    assert not A.flags.c_contiguous or A.ndim == 2
    U, S, Vh = bsvd.svd(A, full_matrices=False)
    assert U.shape[:-1] == A.shape[:-1] and Vh.shape[-1] == A.shape[-1]
    assert_ratios(np.ascontiguousarray(A), U, S, Vh)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_column_major_wide_and_tall(rng, dtype):
    for shape in [(4, 9, 5), (4, 5, 9)]:
        A = np.asfortranarray(random_matrix(rng, shape, dtype).transpose(2, 1, 0)).transpose(2, 1, 0)
        U, S, Vh = bsvd.svd(A, full_matrices=False)
        assert_ratios(np.ascontiguousarray(A), U, S, Vh)


def test_readonly_and_byteswapped_input(rng):
    A = random_matrix(rng, (5, 4), np.float64)
    B = np.broadcast_to(A, (3, 5, 4))  # read-only, batch stride 0: copied
    U, S, Vh = bsvd.svd(B, full_matrices=False)
    assert_ratios(np.ascontiguousarray(B), U, S, Vh)
    C = A.astype(">f8")
    U, S, Vh = bsvd.svd(C, full_matrices=False)
    assert_ratios(A, U, S, Vh)


def test_nested_list_is_one_matrix():
    U, S, Vh = bsvd.svd([[3.0, 0.0], [0.0, 4.0], [0.0, 0.0]])
    assert U.shape == (3, 3) and np.allclose(S, [4.0, 3.0])


# ---- edge sizes -------------------------------------------------------------

@pytest.mark.parametrize("shape", [(0, 4, 3), (2, 0, 3), (2, 3, 0), (0, 0), (5, 0)])
def test_empty(shape):
    A = np.zeros(shape)
    U, S, Vh, info = bsvd.svd(A, full_matrices=False, return_info=True)
    *b, m, n = shape
    k = min(m, n)
    assert U.shape == (*b, m, k) and S.shape == (*b, k) and Vh.shape == (*b, k, n)
    assert info.info.shape == tuple(b) and info.converged.all()


def test_zero_and_identity(rng):
    A = np.zeros((2, 6, 4))
    A[1, :4, :4] = np.eye(4)
    U, S, Vh = bsvd.svd(A, full_matrices=False)
    assert np.all(S[0] == 0) and np.allclose(S[1], 1)
    assert_ratios(A, U, S, Vh)


# ---- full_matrices ---------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2, 7, 4), (2, 4, 7), (5, 5), (3, 0)])
def test_full_matrices(rng, dtype, shape):
    A = random_matrix(rng, shape, dtype)
    U, S, Vh = bsvd.svd(A, full_matrices=True)
    *b, m, n = shape
    k = min(m, n)
    assert U.shape == (*b, m, m) and Vh.shape == (*b, n, n)
    tol = 100 * np.finfo(REAL[dtype]).eps * max(m, n, 1)
    assert np.abs(np.swapaxes(U, -1, -2).conj() @ U - np.eye(m)).max(initial=0) < tol
    assert np.abs(Vh @ np.swapaxes(Vh, -1, -2).conj() - np.eye(n)).max(initial=0) < tol
    Ur, Sr, Vhr = bsvd.svd(A, full_matrices=False)
    assert np.abs(U[..., :k] - Ur).max(initial=0) < tol and np.abs(Vh[..., :k, :] - Vhr).max(initial=0) < tol
    if k:
        assert_ratios(A, U[..., :k], S, Vh[..., :k, :])


# ---- variable-size batches (bsvd.svd_batch) ----------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_list_input(rng, dtype):
    shapes = [(5, 3), (3, 5), (8, 8), (1, 6), (6, 1), (20, 11)]
    mats = [random_matrix(rng, s, dtype) for s in shapes]
    mats[2] = np.asfortranarray(mats[2])     # column-major: copied
    mats[5] = random_matrix(rng, (20, 22), dtype)[:, :11]  # ld > n
    Us, Ss, Vhs, info = bsvd.svd_batch(mats, full_matrices=False, return_info=True)
    assert len(Us) == len(Ss) == len(Vhs) == len(mats)
    assert info.info.shape == (len(mats),) and info.converged.all()
    for A, U, S, Vh in zip(mats, Us, Ss, Vhs):
        k = min(A.shape)
        assert U.shape == (A.shape[0], k) and S.shape == (k,) and Vh.shape == (k, A.shape[1])
        assert_ratios(A, U, S, Vh)
    Ss2 = bsvd.svd_batch(mats, compute_uv=False)
    for S, S2 in zip(Ss, Ss2):
        assert np.allclose(S, S2, rtol=0, atol=20 * np.finfo(REAL[dtype]).eps * S.max())


def test_list_with_empty_and_full_matrices(rng):
    mats = [random_matrix(rng, (4, 2), np.float64), np.zeros((0, 3)), random_matrix(rng, (2, 5), np.float64)]
    Us, Ss, Vhs = bsvd.svd_batch(mats)  # full_matrices=True by default
    assert [u.shape for u in Us] == [(4, 4), (0, 0), (2, 2)]
    assert [v.shape for v in Vhs] == [(2, 2), (3, 3), (5, 5)]
    assert_ratios(mats[0], Us[0][:, :2], Ss[0], Vhs[0])


def test_empty_list():
    assert bsvd.svd_batch([]) == ([], [], [])
    S, info = bsvd.svd_batch([], compute_uv=False, return_info=True)
    assert S == [] and info.info.size == 0


def test_list_errors(rng):
    with pytest.raises(TypeError, match="one dtype"):
        bsvd.svd_batch([np.ones((2, 2)), np.ones((2, 2), np.float32)])
    with pytest.raises(ValueError, match="2-D"):
        bsvd.svd_batch([np.ones((2, 2)), np.ones((2, 2, 2))])
    with pytest.raises(TypeError, match="list of 2-D arrays"):
        bsvd.svd_batch(np.ones((2, 2, 2)))
    with pytest.raises(TypeError, match="unexpected argument 'hermitian'"):
        bsvd.svd_batch([np.ones((2, 2))], hermitian=True)


# ---- info, NaN, convergence ------------------------------------------------

def test_return_info(rng):
    A = random_matrix(rng, (2, 3, 10, 7), np.float64)
    U, S, Vh, info = bsvd.svd(A, full_matrices=False, return_info=True)
    assert isinstance(info, bsvd.Info)
    assert info.info.shape == (2, 3) and info.sweeps.shape == (2, 3) and info.path.shape == (2, 3)
    assert info.converged.all() and (info.sweeps > 0).all()
    assert set(info.path_names.ravel()) <= {"cpu-unblocked", "cpu-blocked"}
    assert "matrices=6" in repr(info)
    S2, info2 = bsvd.svdvals(A, return_info=True)
    assert info2.converged.all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_matrix_in_batch(rng, dtype):
    A = random_matrix(rng, (4, 6, 5), dtype)
    A[1, 2, 3] = np.nan
    A[3, 0, 0] = np.inf
    with pytest.warns(bsvd.NonFiniteWarning, match="2 of 4"):
        U, S, Vh, info = bsvd.svd(A, full_matrices=False, return_info=True)
    assert list(info.info) == [0, -1, 0, -1]
    assert list(info.nonfinite) == [False, True, False, True]
    assert np.isnan(S[1]).all() and np.isnan(U[1]).all() and np.isnan(Vh[1]).all()
    good = [0, 2]
    assert_ratios(A[good], U[good], S[good], Vh[good])
    with pytest.raises(ValueError, match="NaN or Inf"):
        bsvd.svd(A, check_finite=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bsvd.svd(A, warn=False)


def test_not_converged_warning(rng):
    A = random_matrix(rng, (3, 32, 32), np.float64)
    with pytest.warns(bsvd.ConvergenceWarning, match="3 of 3 matrices did not converge") as rec:
        U, S, Vh, info = bsvd.svd(A, full_matrices=False, max_sweeps=1, return_info=True)
    assert rec[0].filename == __file__  # points at the caller's line
    assert (info.info > 0).all() and not info.converged.any()
    assert (info.sweeps == 1).all()


# The native layer keeps info and returns counts (docs/perf/python.md,
# "Per-call overhead"): the warnings must not depend on return_info.

def test_not_converged_warning_without_return_info(rng):
    A = random_matrix(rng, (4, 32, 32), np.float64)
    A[2] = np.eye(32)  # converges in one sweep
    with pytest.warns(bsvd.ConvergenceWarning, match="3 of 4 matrices did not converge") as rec:
        U, S, Vh = bsvd.svd(A, full_matrices=False, max_sweeps=1)
    assert rec[0].filename == __file__
    with pytest.warns(bsvd.ConvergenceWarning, match="3 of 4"):
        bsvd.svdvals(A, max_sweeps=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bsvd.svd(A, max_sweeps=1, warn=False)
        bsvd.svd(A, full_matrices=False)  # converges: no warning


def test_nan_and_not_converged_together(rng):
    A = random_matrix(rng, (5, 24, 24), np.float32)
    A[0, 3, 3] = np.nan
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        S = bsvd.svdvals(A, max_sweeps=1)
    got = sorted((r.category.__name__, str(r.message).split(": ")[1][:6]) for r in rec)
    assert got == [("ConvergenceWarning", "4 of 5"), ("NonFiniteWarning", "1 of 5")]
    assert np.isnan(S[0]).all() and np.isfinite(S[1:]).all()
    with pytest.raises(ValueError, match="1 of 5 matrices contain NaN"):
        bsvd.svd(A, check_finite=True, warn=False)


def test_info_arrays_are_per_call(rng):
    """Info of one call is not changed by the next (the native layer reuses
    its buffers and hands out copies)."""
    A = random_matrix(rng, (3, 6, 6), np.float64)
    B = A.copy()
    A[1, 0, 0] = np.nan
    with pytest.warns(bsvd.NonFiniteWarning):
        _, info_a = bsvd.svdvals(A, return_info=True)
    B[0, 0, 0] = np.inf
    with pytest.warns(bsvd.NonFiniteWarning):
        _, info_b = bsvd.svdvals(B, return_info=True)
    assert list(info_a.info) == [0, -1, 0] and list(info_b.info) == [-1, 0, 0]
    assert info_a.info.dtype == np.int32 and info_a.path.dtype == np.int32
    assert list(info_a.path_names) == ["cpu-lapack", "trivial", "cpu-lapack"]


def test_list_input_reports(rng):
    mats = [random_matrix(rng, (20, 20), np.float64), random_matrix(rng, (3, 5), np.float64),
            random_matrix(rng, (30, 24), np.float64)]
    mats[1][0, 0] = np.nan
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        Us, Ss, Vhs, info = bsvd.svd_batch(mats, full_matrices=False, max_sweeps=1, return_info=True)
    got = sorted((r.category.__name__, str(r.message).split(": ")[1][:6]) for r in rec)
    assert got == [("ConvergenceWarning", "2 of 3"), ("NonFiniteWarning", "1 of 3")]
    assert all(r.filename == __file__ for r in rec)
    assert info.info.shape == (3,) and info.info[1] == -1 and (info.info[[0, 2]] > 0).all()
    assert (info.sweeps[[0, 2]] == 1).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Ss = bsvd.svd_batch(mats, compute_uv=False, max_sweeps=1, warn=False)
    assert np.isnan(Ss[1]).all()


def test_native_summary():
    """_bsvd.svd_strided: (status, message, not converged, non-finite, info,
    sweeps, path); the arrays only with details=True."""
    from bsvd import _bsvd
    A = np.random.default_rng(0).standard_normal((3, 16, 16))
    A[1, 0, 0] = np.nan
    S = np.empty((3, 16))
    opts = bsvd._args.options(dict(backend="cpu", max_sweeps=1), ("cpu", 0), None)
    st, msg, nc, nf, info, sweeps, path = _bsvd.svd_strided(
        A, 16, 16, 16, 256, S, 16, None, 1, 0, None, 1, 0, 3, opts, False)
    assert (st, msg, nc, nf) == (0, "", 2, 1) and info is None and sweeps is None and path is None
    st, msg, nc, nf, info, sweeps, path = _bsvd.svd_strided(
        A, 16, 16, 16, 256, S, 16, None, 1, 0, None, 1, 0, 3, opts, True)
    assert (st, nc, nf) == (0, 2, 1)
    assert (info[[0, 2]] > 0).all() and info[1] == -1
    assert list(sweeps[[0, 2]]) == [1, 1] and path.shape == (3,)
    st, msg, nc, nf, info, sweeps, path = _bsvd.svd_strided(
        A, 16, 16, 15, 256, S, 16, None, 1, 0, None, 1, 0, 3, opts, True)
    assert st == -5 and "lda" in msg and info is None


# ---- options ---------------------------------------------------------------

@pytest.mark.parametrize("kw", [dict(ordering="odd-even"), dict(variant="unblocked"),
                                dict(variant="blocked", block_size=8), dict(num_threads=1),
                                dict(tol=1e-15), dict(tol=0), dict(max_sweeps=60), dict(backend="cpu"),
                                dict(variant="blocked", eig_sweeps=1),
                                dict(variant="blocked", eig_sweeps=2),
                                dict(variant="blocked", eig_sweeps=-1),
                                dict(precondition=True), dict(precondition=1, variant="blocked"),
                                dict(precondition=False), dict(precondition=-1),
                                dict(precondition=None), dict(precondition="gram"),
                                dict(precondition=2, variant="blocked")])
def test_options(rng, kw):
    A = random_matrix(rng, (4, 40, 24), np.float64)
    U, S, Vh = bsvd.svd(A, full_matrices=False, **kw)
    assert_ratios(A, U, S, Vh)


def _read_mtx(path):
    # Matrix Market coordinate real general (the repository's data/matrices)
    with open(path) as f:
        lines = [ln for ln in f if not ln.startswith("%")]
    m, n, _ = map(int, lines[0].split())
    A = np.zeros((m, n))
    for ln in lines[1:]:
        i, j, v = ln.split()
        A[int(i) - 1, int(j) - 1] = float(v)
    return A


def test_precondition_takes_fewer_sweeps():
    # dwt_193 (SuiteSparse) converges slowly; QR with column pivoting first
    # (precondition=True) takes about half the sweeps (19 -> 9 on the CPU:
    # docs/perf/raw/precondition-sweeps-cpu-2026-11-22.txt), with the same
    # accuracy.
    path = os.path.join(os.path.dirname(__file__), "..", "..", "data", "matrices", "dwt_193.mtx")
    A = _read_mtx(path)
    U, S, Vh, info = bsvd.svd(A, variant="blocked", precondition=True, return_info=True)
    U0, S0, Vh0, info0 = bsvd.svd(A, variant="blocked", precondition=False, return_info=True)
    assert_ratios(A, U, S, Vh)
    assert_ratios(A, U0, S0, Vh0)
    assert int(info.sweeps) < 0.75 * int(info0.sweeps)


def test_gram_precondition_takes_fewer_sweeps(rng):
    # A random matrix: Jacobi on A V0 for the Gram matrix's eigenvectors V0
    # needs a third of the sweeps (docs/design/gram.md).
    A = random_matrix(rng, (2, 96, 96), np.float64)
    U, S, Vh, info = bsvd.svd(A, variant="blocked", precondition="gram", return_info=True)
    U0, S0, Vh0, info0 = bsvd.svd(A, variant="blocked", precondition=-1, return_info=True)
    assert_ratios(A, U, S, Vh)
    assert int(info.sweeps.max()) + 4 <= int(info0.sweeps.min())


# ---- errors ----------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.longdouble, np.clongdouble, "datetime64[s]", "U3"])
def test_bad_dtype(dtype):
    if np.dtype(dtype) in (np.dtype(np.float64), np.dtype(np.complex128)):
        pytest.skip("long double is double on this platform")
    with pytest.raises(TypeError, match="unsupported dtype|cannot use"):
        bsvd.svd(np.ones((3, 3)).astype(dtype))


def test_float16_upcast(rng):
    A = random_matrix(rng, (2, 5, 4), np.float32).astype(np.float16)
    U, S, Vh = bsvd.svd(A, full_matrices=False)
    assert U.dtype == np.float32 and S.dtype == np.float32
    assert_ratios(A.astype(np.float32), U, S, Vh)


@pytest.mark.parametrize("A", [np.ones(3), np.float64(1.0)])
def test_bad_ndim(A):
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        bsvd.svd(A, full_matrices=False)


@pytest.mark.parametrize("kw, exc, match", [
    (dict(backend="gpu"), ValueError, "backend"),
    (dict(ordering="spiral"), ValueError, "ordering"),
    (dict(variant="fast"), ValueError, "variant"),
    (dict(tol=2.0), ValueError, "tol"),
    (dict(tol=float("nan")), ValueError, "tol"),
    (dict(max_sweeps=-1), ValueError, "max_sweeps"),
    (dict(tol=-1e-3), ValueError, "tol"),
    (dict(tol="1e-8"), TypeError, "tol"),
    (dict(num_threads=1.5), TypeError, "num_threads"),
    (dict(num_threads=-1), ValueError, "num_threads"),
    (dict(max_sweeps=2.0), TypeError, "max_sweeps"),
    (dict(block_size=-2), ValueError, "block_size"),
    (dict(eig_sweeps=-2), ValueError, "eig_sweeps"),
    (dict(eig_sweeps=1.0), TypeError, "eig_sweeps"),
    (dict(full_matrices="no"), TypeError, "full_matrices"),
    (dict(compute_uv=None), TypeError, "compute_uv"),
    (dict(hermitian=1e-8), TypeError, "hermitian"),
    (dict(return_info="yes"), TypeError, "return_info"),
    (dict(check_finite=2), TypeError, "check_finite"),
    (dict(warn=None), TypeError, "warn"),
    (dict(stream="default"), TypeError, "stream"),
    (dict(precondition=3), ValueError, "precondition"),
    (dict(precondition="always"), ValueError, "precondition"),
])
def test_bad_options(kw, exc, match):
    with pytest.raises(exc, match=match):
        bsvd.svd(np.ones((3, 3)), **kw)


def test_object_input():
    with pytest.raises(TypeError):
        bsvd.svd(np.array([[object(), 1]], dtype=object))
    with pytest.raises(TypeError):
        bsvd.svd("not a matrix")


@pytest.mark.skipif(bsvd.cuda_available(), reason="a GPU is visible")
def test_cuda_backend_unavailable():
    with pytest.raises(bsvd.BackendUnavailableError):
        bsvd.svd(np.ones((3, 3)), backend="cuda")


def test_cuda_status_says_why():
    """cuda_status() is empty exactly when cuda_available(), else the reason,
    which a cuda call repeats."""
    status = bsvd.cuda_status()
    assert isinstance(status, str)
    if bsvd.cuda_available():
        assert status == ""
        return
    assert status
    with pytest.raises(bsvd.BackendUnavailableError, match=re.escape(status)):
        bsvd.svd(np.ones((3, 3)), backend="cuda")


def test_native_layer_checks_bounds():
    """The native layer refuses layouts that would read outside the arrays."""
    from bsvd import _bsvd
    A = np.ones((2, 3, 3))
    S = np.empty((2, 3))
    info = np.empty(2, np.int32)
    opts = bsvd._args.options(dict(backend="cpu"), ("cpu", 0), None)
    with pytest.raises(ValueError, match="too small"):
        _bsvd.gesvj_strided(A, 3, 3, 3, 9, S, 3, None, 1, 0, None, 1, 0, info, None, None, 3, opts)
    with pytest.raises(ValueError, match="too small"):
        _bsvd.gesvj_strided(A, 3, 4, 3, 9, S, 3, None, 1, 0, None, 1, 0, info, None, None, 2, opts)
    with pytest.raises(TypeError):
        _bsvd.gesvj_strided(A, 3, 3, 3, 9, S.astype(np.float32), 3, None, 1, 0, None, 1, 0,
                            info, None, None, 2, opts)
    st, msg = _bsvd.gesvj_strided(A, 3, 3, 2, 9, S, 3, None, 1, 0, None, 1, 0, info, None, None, 2, opts)
    assert st == -5 and "lda" in msg  # the library's own message
    with pytest.raises(ValueError, match="argument 5"):
        bsvd._raise_status(st, msg)


def test_version():
    assert isinstance(bsvd.__version__, str) and bsvd.__version__
    assert isinstance(bsvd.cuda_built(), bool)


# ---- names (the library's tables: bsvd_<enum>_string / _from_string) -------

def test_path_names_cover_every_path():
    # Every bsvd_path_t, cuda-tiny (9) included, has its library name.
    assert bsvd.PATH_NAMES == {0: "trivial", 1: "cpu-unblocked", 2: "cpu-blocked",
                               3: "cuda-fused", 4: "cuda-blocked", 5: "cuda-qr",
                               6: "cuda-pair-evd", 7: "cuda-pair-svd", 8: "cuda-qrcp",
                               9: "cuda-tiny", 10: "cpu-lapack", 11: "cuda-gram",
                               12: "cuda-devices", 13: "cuda-bidiag"}
    info = bsvd.Info(np.zeros(3, np.int32), np.zeros(3, np.int32), np.array([8, 3, 99], np.int32))
    assert list(info.path_names) == ["cuda-qrcp", "cuda-fused", "99"]


@pytest.mark.parametrize("enum", ["job", "backend", "ordering", "variant", "pair_solver", "path",
                                  "status_code"])
def test_native_names_round_trip(enum):
    from bsvd import _bsvd
    name_of = getattr(_bsvd, f"{enum}_string")
    value_of = getattr(_bsvd, f"{enum}_from_string")
    names = bsvd._args._enum_names(name_of)
    assert names and len(set(names.values())) == len(names)
    for v, s in names.items():
        assert value_of(s) == v
        assert value_of(s.replace("-", "_")) == v
    assert name_of(-1) is None and name_of(len(names)) is None
    assert value_of("no such name") is None


def test_ordering_names_take_underscores(rng):
    A = random_matrix(rng, (2, 12, 8), np.float64)
    S1 = bsvd.svd(A, compute_uv=False, ordering="odd_even")
    S2 = bsvd.svd(A, compute_uv=False, ordering="odd-even")
    np.testing.assert_array_equal(S1, S2)
    with pytest.raises(ValueError, match="'round-robin', 'odd-even', 'row-parallel' or "
                                         "'column-parallel', got 'spiral'"):
        bsvd.svd(A, ordering="spiral")


def test_plan_describes_the_call():
    text = bsvd.plan((10, 64, 32), dtype=np.float32, backend="cpu")
    assert "plan: 10 matrices, precision s" in text
    assert "64 x 32" in text and "cpu-lapack" in text
    text = bsvd.plan([(8, 8), (100, 50)], compute_uv=False, backend="cpu", variant="blocked")
    assert "2 matrices" in text and "S only" in text and "cpu-blocked" in text
    with pytest.raises(ValueError, match="dtype"):
        bsvd.plan((1, 2, 2), dtype=np.int8)
    with pytest.raises(ValueError, match="shape"):
        bsvd.plan("2x2")
    with pytest.raises(ValueError, match="non-negative"):
        bsvd.plan((1, -2, 2))
