#!/usr/bin/env python3
"""Relative accuracy of the small singular values of graded matrices: the cpu
backend's default path (LAPACK xGESDD), its Jacobi solver (variant
unblocked) and numpy.linalg.svd, against mpmath's SVD at 50 digits.

Graded: A = B D (columns) or D B (rows), B standard normal 16 x 16,
D = diag(1 ... 1e-14), so sigma_min / sigma_1 ~ 1e-15 and a normwise
accurate method may lose every digit of the small values; the printed
measure is max_i |s_i - s_ref_i| / s_ref_i. Needs mpmath (pip install mpmath).

  PYTHONPATH=<bsvd install> python3 scripts/graded-accuracy.py
"""
import mpmath
import numpy as np

import bsvd

mpmath.mp.dps = 50
rng = np.random.default_rng(3)
n = 16
worst = {"bsvd default (cpu-lapack)": 0.0, "bsvd variant=unblocked": 0.0, "numpy": 0.0}
for trial in range(4):
    B = rng.standard_normal((n, n))
    D = np.logspace(0, -14, n)
    A = (B * D[None, :]) if trial % 2 == 0 else (D[:, None] * B)
    ref = np.array(sorted((float(x) for x in mpmath.svd_r(mpmath.matrix(A.tolist()),
                                                           compute_uv=False)), reverse=True))
    got = {
        "bsvd default (cpu-lapack)":
            bsvd.svd(A[None], full_matrices=False, compute_uv=False, backend="cpu")[0],
        "bsvd variant=unblocked":
            bsvd.svd(A[None], full_matrices=False, compute_uv=False, backend="cpu",
                     variant="unblocked")[0],
        "numpy": np.linalg.svd(A, compute_uv=False),
    }
    for k, s in got.items():
        worst[k] = max(worst[k], float(np.max(np.abs(s - ref) / ref)))
print("max_i |s_i - s_ref_i| / s_ref_i, 4 graded 16 x 16 (2 column-, 2 row-graded, 1 ... 1e-14):")
for k, v in worst.items():
    print(f"  {k:26s} {v:.2e}  ({v / 2**-53:.3g} u)")
