"""The library's option table from Python: every row is a keyword of
bsvd.svd, svdvals, svd_batch and plan, checked from the table's range
before the call (TypeError for a wrong type, ValueError naming it for a
value outside its range), and reaches the library."""
import inspect

import numpy as np
import pytest

import bsvd
from bsvd import _args
from helpers import assert_ratios, random_matrix


def test_every_row_is_a_keyword():
    names = set(_args.OPTION_NAMES)
    assert names >= {"backend", "ordering", "variant", "block_size", "tol", "max_sweeps",
                     "eig_sweeps", "num_threads", "qr", "pair_solver", "precondition",
                     "wcycle_blocks", "wcycle_sweeps"}
    for fn in (bsvd.svd,):
        params = set(inspect.signature(fn).parameters)
        assert names <= params, f"{fn.__name__} lacks {sorted(names - params)}"
    assert names <= set(bsvd._OPTION_DEFAULTS)  # svd_batch's keywords
    assert [o.name for o in _args.OPTIONS][:3] == ["backend", "ordering", "variant"]


def _bad_values(row):
    """(value, exception) pairs every row must refuse."""
    if row.kind == "enum":
        return [("no-such-name", ValueError), (1.5, ValueError)]
    if row.kind == "real":
        return [(row.lo - 1, ValueError), (float("nan"), ValueError), ("x", TypeError)]
    out = [(int(row.lo) - 1, ValueError), (1.5, TypeError), (True, TypeError)]
    if row.hi < 2**31 - 1:
        out.append((int(row.hi) + 1, ValueError))
    if row.name == "precondition":  # its aliases take True / False
        out = [v for v in out if v[0] is not True] + [("always", ValueError)]
    return out


@pytest.mark.parametrize("row", _args.OPTIONS, ids=lambda r: r.name)
def test_every_row_is_checked(row):
    A = np.ones((2, 3, 3))
    for value, exc in _bad_values(row):
        with pytest.raises(exc, match=row.name):
            bsvd.svd(A, **{row.name: value})
        with pytest.raises(exc, match=row.name):
            bsvd.svd_batch([A[0]], **{row.name: value})
        with pytest.raises(exc, match=row.name):
            bsvd.plan((2, 3, 3), **{row.name: value})


@pytest.mark.parametrize("row", _args.OPTIONS, ids=lambda r: r.name)
def test_every_row_takes_its_range(row):
    """The range's ends (and None, the default) are accepted and solve, on
    the CPU; the cuda backend is left out where no GPU is visible."""
    rng = np.random.default_rng(5)
    A = random_matrix(rng, (3, 12, 8), np.float64)
    values = [None]
    if row.kind == "enum":
        values += list(row.names)
    elif row.kind == "real":
        values += [row.lo, 4e-15]
    else:
        values += [int(row.lo), min(int(row.hi), 3)]
    for v in values:
        kw = {row.name: v}
        if row.name == "backend":
            if v == "cuda" and not bsvd.cuda_available():
                continue
        else:
            kw["backend"] = "cpu"
        if row.name == "wcycle_blocks" or row.name == "wcycle_sweeps":
            kw["variant"] = "blocked"
        U, S, Vh = bsvd.svd(A, full_matrices=False, warn=False, **kw)
        if row.name not in ("max_sweeps",):  # max_sweeps 0 is the default; 1..3 may stop early
            assert_ratios(A, U, S, Vh)
        if kw.get("backend") == "cpu":
            assert "cpu" in bsvd.plan(A.shape, **kw)


def test_new_rows_reach_the_library():
    """pair_solver, qr and the W-cycle options, which the keywords did not
    carry before the table: the CPU's blocked variant with the pair-SVD
    solver, and a W-cycle the library refuses with another ordering."""
    rng = np.random.default_rng(6)
    A = random_matrix(rng, (4, 40, 32), np.float64)
    U, S, Vh, info = bsvd.svd(A, full_matrices=False, backend="cpu", variant="blocked",
                              block_size=4, pair_solver="svd", return_info=True)
    assert set(info.path_names.ravel()) == {"cpu-blocked"}
    assert_ratios(A, U, S, Vh)
    U, S, Vh = bsvd.svd(A, full_matrices=False, backend="cpu", variant="blocked", block_size=4,
                        wcycle_blocks=2, wcycle_sweeps=2)
    assert_ratios(A, U, S, Vh)
    with pytest.raises(ValueError, match="wcycle_blocks"):
        bsvd.svd(A, backend="cpu", variant="blocked", wcycle_blocks=2, ordering="odd-even")
    S2 = bsvd.svdvals(A, backend="cpu", qr=-1, pair_solver="gram", variant="blocked",
                      block_size=4)
    assert np.allclose(S2, S, rtol=1e-12, atol=0)


def test_checked_options_are_not_confused():
    """A value equal to an accepted one but of another type (1.0, True for
    1) is refused after the accepted one was checked (option_values keeps
    its results)."""
    A = np.ones((2, 3, 3))
    bsvd.svd(A, max_sweeps=1, num_threads=1, warn=False)
    for kw in (dict(max_sweeps=True), dict(num_threads=1.0), dict(max_sweeps=1.0)):
        with pytest.raises(TypeError, match=list(kw)[0]):
            bsvd.svd(A, warn=False, **kw)
