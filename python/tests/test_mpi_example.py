"""examples/mpi/svd_mpi.py under mpirun with 2 ranks: each rank solves its
slice of a batch with bsvd.svd and writes it into the shared outputs; the
result must match one bsvd.svd call (the example checks and exits 1 on a
mismatch). Skipped without mpirun or mpi4py (python/requirements-dev.txt)."""
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "mpi" / "svd_mpi.py"


def test_svd_mpi_example(tmp_path):
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        pytest.skip("no mpirun (Debian: openmpi-bin)")
    pytest.importorskip("mpi4py")
    # Open MPI refuses root without these (CI runs as root): for this run only.
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none")
    A = np.random.default_rng(1).standard_normal((37, 9, 6))
    np.save(tmp_path / "a.npy", A)
    out = tmp_path / "out"
    r = subprocess.run([mpirun, "-n", "2", "--oversubscribe", sys.executable, str(EXAMPLE),
                        str(tmp_path / "a.npy"), str(out)],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "on 2 ranks" in r.stdout
    S, U, Vh = (np.load(out / f) for f in ("S.npy", "U.npy", "Vh.npy"))
    assert S.shape == (37, 6) and U.shape == (37, 9, 6) and Vh.shape == (37, 6, 6)
    assert np.allclose(U @ (S[..., None] * Vh), A, atol=1e-12)
