"""The application examples (examples/enkf, tebd, muon, blr) in their CPU
default: each is run as a user runs it, in a subprocess, and must exit 0
with its domain check printed and OK last:

- enkf: the LETKF's analysis error below the observation error and far
  below the free run's, falling; bsvd's analysis equal to NumPy's and to
  the observation-space form's;
- tebd: the transverse-field Ising chains' energies within 1e-6 of the
  free-fermion E_0;
- muon: polar factors equal to scipy.linalg.polar's, GaLore's projector on
  the exact top-r subspace, the MLP's loss falling under each optimizer;
- blr: every recompressed block within eps, the BLR sum within 3 eps of
  the dense one.

BLAS threads are pinned to one: the examples' matrices are small, and on a
shared two-core machine threaded BLAS calls on them only contend (bsvd
threads over the batch itself). The --gpu modes must skip cleanly where no
CUDA device (or no PyTorch) is present."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

import bsvd

ROOT = pathlib.Path(__file__).resolve().parents[2] / "examples"
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
           XLA_PYTHON_CLIENT_PREALLOCATE="false")


def run(name, *args, timeout=120):
    r = subprocess.run([sys.executable, str(ROOT / name / f"{name}.py"), *args],
                       capture_output=True, text=True, timeout=timeout, env=ENV)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def last_line(out):
    return out.rstrip().splitlines()[-1]


def test_enkf():
    out = run("enkf")
    assert last_line(out) == "OK", out
    m = re.search(r"analysis RMSE (\S+) -> (\S+) \(second-half mean\)", out)
    first, late = float(m.group(1)), float(m.group(2))
    free = float(re.search(r"free run (\S+): True", out).group(1))
    assert late < 1.0 and late < 0.3 * free and late < first  # sigma_o = 1
    assert re.search(r"max \|Xa_obs - Xa_ens\| = (\S+)", out)


def test_tebd():
    pytest.importorskip("scipy")
    out = run("tebd")
    assert last_line(out) == "OK", out
    errs = [float(e) for e in re.findall(r"exact E_0 = \S+, relative error (\S+),", out)]
    assert len(errs) == 3 and max(errs) < 1e-6


def test_muon():
    pytest.importorskip("scipy")
    out = run("muon")
    assert last_line(out) == "OK", out
    bsvd_err = [float(e) for e in re.findall(r"\|O - polar\| bsvd (\S+),", out)]
    ns_err = [float(e) for e in re.findall(r"Newton-Schulz quintic x5 (\S+),", out)]
    assert bsvd_err and max(bsvd_err) < 1e-11
    assert min(ns_err) > 1e-2  # Muon's iteration is not the polar factor (by design)


def test_blr():
    out = run("blr")
    assert last_line(out) == "OK", out
    m = re.search(r"worst block error .*? = (\S+) \(eps (\S+)\); BLR A \+ B against dense "
                  r"A \+ B: (\S+) ", out)
    blk, eps, glob = (float(g) for g in m.groups())
    assert blk <= eps * (1 + 1e-6) and glob <= 3 * eps


def _gpu_present():
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available() and bsvd.cuda_available()


@pytest.mark.skipif(_gpu_present(), reason="a GPU is present: --gpu would run the measurement")
@pytest.mark.parametrize("name", ["enkf", "tebd", "muon", "blr"])
def test_gpu_mode_skips_without_a_gpu(name):
    out = run(name, "--gpu", timeout=60)
    assert out.startswith("SKIP"), out
