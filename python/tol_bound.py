#!/usr/bin/env python3
"""Measures the largest rotation threshold (bsvd.svd's tol) that keeps the
accuracy contract (T1-T4 below 30, python/tests/helpers.py), on the
backend the arrays run on (NumPy: the CPU backend).

For each precision and each tol = c * u (u the unit roundoff), the worst
T1, T2 (U and V) and T3 over random and ill-conditioned batches of several
shapes; then, in float64, the relative error of S and the orthogonality of
U and V for large tol (the loss AccuracyWarning names). Results:
docs/perf/python.md, "The tol bound".

    python3 python/tol_bound.py
"""
import os
import sys
import warnings

import numpy as np

# The installed bsvd, not the source folder next to this file.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
import bsvd  # noqa: E402

sys.path.insert(0, os.path.join(_here, "tests"))
from helpers import ratios, random_matrix  # noqa: E402

SHAPES = [(4, 4), (8, 8), (32, 32), (64, 48), (48, 64), (128, 128), (384, 384), (400, 40)]


def main():
    warnings.simplefilter("ignore", bsvd.AccuracyWarning)
    rng = np.random.default_rng(0)
    print("worst T1, T2 (max of U and V), T3 over shapes", SHAPES, "(batches of 3-8, random and "
          "ill-conditioned: cond 1e3 in s/c, 1e8 in d/z)")
    print(f"{'dtype':>10} {'tol/u':>6} {'T1':>6} {'T2':>7} {'T3':>6}")
    for dt in (np.float32, np.float64, np.complex64, np.complex128):
        u = 2.0 ** -24 if dt in (np.float32, np.complex64) else 2.0 ** -53
        cond = 1e3 if dt in (np.float32, np.complex64) else 1e8
        for c in (1, 16, 32, 64, 128, 256, 1024):
            w = dict(t1=0.0, t2=0.0, t3=0.0)
            for shape in SHAPES:
                for cd in (None, cond):
                    b = 3 if shape[0] > 200 else 8
                    A = random_matrix(rng, (b,) + shape, dt, cond=cd)
                    U, S, Vh = bsvd.svd(A, full_matrices=False, tol=c * u)
                    r = ratios(A, U, S, Vh)
                    w["t1"] = max(w["t1"], r["t1"])
                    w["t2"] = max(w["t2"], r["t2u"], r["t2v"])
                    w["t3"] = max(w["t3"], r["t3"])
            print(f"{np.dtype(dt).name:>10} {c:>6} {w['t1']:6.1f} {w['t2']:7.1f} {w['t3']:6.1f}",
                  flush=True)
    print("\nfloat64, 8 random n x n matrices: max |S - S_lapack| / s1, max ||I - U^T U||_1, "
          "max ||I - V^T V||_1")
    for n in (8, 64, 256):
        A = rng.standard_normal((8, n, n))
        Sr = np.linalg.svd(A, compute_uv=False)
        for tol in (1e-14, 1e-10, 1e-6, 1e-4, 1e-2, 0.1, 0.5):
            U, S, Vh = bsvd.svd(A, full_matrices=False, tol=tol)
            es = np.max(np.abs(S - Sr) / Sr[..., :1])
            ou = np.abs(np.eye(n) - np.swapaxes(U, -1, -2) @ U).sum(-2).max()
            ov = np.abs(np.eye(n) - Vh @ np.swapaxes(Vh, -1, -2)).sum(-2).max()
            print(f"  n={n:3d} tol={tol:7.0e}  S {es:8.1e}  U {ou:8.1e}  V {ov:8.1e}", flush=True)


if __name__ == "__main__":
    main()
