"""NumPy's and SciPy's own SVD tests, from the installed numpy and scipy,
run against bsvd: numpy.linalg.svd / svdvals (and the module global that
pinv, matrix_rank, cond and norm call) and scipy.linalg's svd / svdvals are
replaced by bsvd's, as a user swapping in bsvd would. bsvd.svd and
bsvd.svdvals take NumPy's signature as they are; SciPy's takes a thin
adapter (_scipy_svd below) for its LAPACK-only arguments.

Tests left out (each checks a LAPACK detail, not SVD semantics) are listed
in DESELECTED with the reason; python/README.md repeats the list."""
import os

import numpy as np
import pytest

import bsvd

tl = pytest.importorskip("numpy.linalg.tests.test_linalg")
tml = pytest.importorskip("numpy.matrixlib.tests.test_matrix_linalg")


@pytest.fixture(autouse=True)
def _bsvd_as_numpy_and_scipy(monkeypatch):
    import numpy.linalg._linalg as nla
    for mod in (np.linalg, nla):
        monkeypatch.setattr(mod, "svd", bsvd.svd)
        monkeypatch.setattr(mod, "svdvals", bsvd.svdvals)
    if _td is not None:
        monkeypatch.setattr(_td, "svd", _scipy_svd)
        monkeypatch.setattr(_td, "svdvals", _scipy_svdvals)
    # The test must reach bsvd, not LAPACK: a patch that does not take is a
    # failure here rather than a silent pass.
    assert np.linalg.svd is bsvd.svd and nla.svd is bsvd.svd


# ---- NumPy: numpy/linalg/tests/test_linalg.py, numpy/matrixlib/tests ----

class TestNumpySVD(tl.TestSVD):
    pass


class TestNumpySVDHermitian(tl.TestSVDHermitian):
    pass


class TestNumpyPinv(tl.TestPinv):
    pass


class TestNumpyPinvHermitian(tl.TestPinvHermitian):
    pass


class TestNumpyCond(tl.TestCond):
    pass


class TestNumpyMatrixRank(tl.TestMatrixRank):
    pass


class TestNumpyNormDouble(tl.TestNormDouble):
    pass


class TestNumpyNormSingle(tl.TestNormSingle):
    pass


class TestNumpyNormInt64(tl.TestNormInt64):
    pass


class TestNumpySVDMatrix(tml.TestSVDMatrix):
    pass


class TestNumpyCondMatrix(tml.TestCondMatrix):
    pass


class TestNumpyPinvMatrix(tml.TestPinvMatrix):
    pass


def test_numpy_pinv_rtol_arg():
    tl.test_pinv_rtol_arg()


def test_numpy_reduced_rank():
    tl.test_reduced_rank()


def test_numpy_empty_matrix_rank():
    tl.test_empty_matrix_rank()


# ---- SciPy: scipy/linalg/tests/test_decomp.py --------------------------------

try:
    import scipy.linalg.tests.test_decomp as _td
except ImportError:  # scipy (or its tests) not installed: the SciPy classes skip
    _td = None


def _scipy_svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
               lapack_driver="gesdd"):
    """scipy.linalg.svd's signature over bsvd.svd. overwrite_a is a
    permission (bsvd never writes its input); lapack_driver picks a LAPACK
    routine, which bsvd does not use. check_finite maps to bsvd's (a
    ValueError before any result is returned)."""
    r = bsvd.svd(a, full_matrices=full_matrices, compute_uv=compute_uv, check_finite=check_finite)
    return tuple(r) if compute_uv else r


def _scipy_svdvals(a, overwrite_a=False, check_finite=True):
    return bsvd.svdvals(a, check_finite=check_finite)


# Tests of a LAPACK detail, not of the SVD: skipped, each with its reason.
DESELECTED = {
    "test_degenerate": "checks the validation of lapack_driver (a LAPACK routine name), an "
                       "argument of scipy's signature that bsvd does not have",
    "test_gesdd_nan_error_message": "with check_finite=False, expects the error that LAPACK "
                                    "gesdd raises on NaN; bsvd's documented NaN policy returns "
                                    "NaN for that matrix with info -1 and a NonFiniteWarning "
                                    "(check_finite=True raises: test_scipy_check_finite_raises)",
    "test_overwrite": "(SciPy 1.18) asserts that overwrite_a=True does overwrite an F-ordered "
                      "input, i.e. that LAPACK reused its memory; bsvd never writes its input "
                      "(overwrite_a is a permission in scipy's documentation)",
    "test_svd_gesdd_nofegfault": "expects the ValueError of LAPACK's 32-bit workspace limit for "
                                 "a 4799 x 53130 matrix; bsvd has no such limit and would "
                                 "compute the SVD (hours on the CPU)",
}
_SLOW = {
    "test_crash_2609": "a 1500 x 2800 svdvals, a smoke test: 67 s on 2 cores on the CPU "
                       "backend; run with BSVD_SLOW_TESTS=1",
}


def _lapack_detail(name):
    return pytest.mark.skip(reason="LAPACK detail: " + DESELECTED[name])


_slow = pytest.mark.skipif(not os.environ.get("BSVD_SLOW_TESTS"), reason=_SLOW["test_crash_2609"])

if _td is not None:
    class TestScipySVD_GESDD(_td.TestSVD_GESDD):
        @_lapack_detail("test_degenerate")
        def test_degenerate(self):
            pass

        @_lapack_detail("test_overwrite")
        def test_overwrite(self):
            pass

    class TestScipySVD_GESVD(_td.TestSVD_GESVD):
        @_lapack_detail("test_degenerate")
        def test_degenerate(self):
            pass

        @_lapack_detail("test_overwrite")
        def test_overwrite(self):
            pass

    class TestScipySVDVals(_td.TestSVDVals):
        @_slow
        def test_crash_2609(self):
            super().test_crash_2609()

    @_lapack_detail("test_gesdd_nan_error_message")
    def test_scipy_gesdd_nan_error_message():
        _td.test_gesdd_nan_error_message()

    @_lapack_detail("test_svd_gesdd_nofegfault")
    def test_scipy_svd_gesdd_nofegfault():
        _td.test_svd_gesdd_nofegfault()

    def test_scipy_check_finite_raises():
        """SciPy's default check_finite=True: a ValueError naming NaN, as
        scipy.linalg.svd raises; check_finite=False: NaN results."""
        A = np.eye(2)
        A[0, 0] = np.nan
        with pytest.raises(ValueError, match="NaN"):
            _td.svd(A)
        with pytest.warns(bsvd.NonFiniteWarning):
            s = _td.svdvals(A, check_finite=False)
        assert np.isnan(s).all()
