"""examples/hsvd/graded_eigen.py: the eigenvalues of graded symmetric
indefinite matrices by bsvd.eigh_factored, checked against a 50-digit
reference (the example exits 1 when bsvd's relative errors are above the
rounding level). Skipped without SciPy or mpmath
(python/requirements-dev.txt)."""
import pathlib
import re
import subprocess
import sys

import pytest

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "hsvd" / "graded_eigen.py"


def test_graded_eigen_example():
    pytest.importorskip("scipy")
    pytest.importorskip("mpmath")
    r = subprocess.run([sys.executable, str(EXAMPLE), "--batch", "8", "--n", "10", "--grade", "7"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.rstrip().endswith("OK")
    # The point of the example: eigh loses the small eigenvalues, bsvd keeps them.
    worst = dict(re.findall(r"(numpy\.linalg\.eigh|bsvd\.eigh_factored)\s+worst (\S+),", r.stdout))
    assert float(worst["bsvd.eigh_factored"]) < 1e-12
    assert float(worst["numpy.linalg.eigh"]) > 1e3 * float(worst["bsvd.eigh_factored"])
