#!/usr/bin/env python3
"""Sweeps of bsvd's blocked CPU solver on the SuiteSparse matrices, as given
and after QR preprocessing with column pivoting (HBJ Sec. 2, eqs. 2.1-2.2):

  A  = the matrix (its transpose when m < n), as the library solves it now;
  RT = R^T of A P = Q R (square n x n; Jacobi on R^T, so A's U = Q V_x and
       A's V = P U_x);
  LT = for numerical rank k < n: R's first k rows R_0 = L Q' (LQ), Jacobi on
       L^T (k x k). For k = n this is the second QR of the LAPACK xGEJSV
       scheme (R^T = Q_2 L^T).

Prints one row per matrix (sweeps, and Jacobi steps = sweeps x steps per
sweep with the block width 16: what the GPU's critical path counts) and the
largest steps over the batch for each form. Needs NumPy, SciPy and a built
bsvd CLI (--bsvd PATH). Usage:
  scripts/precondition_sweeps.py --bsvd build/bsvd [--min-cols 65] [names...]
"""
import argparse, os, subprocess, sys, tempfile

import numpy as np
import scipy.io
import scipy.linalg as sl


def sweeps(bsvd, X, tmp, tag):
    path = os.path.join(tmp, tag + ".npy")
    np.save(path, np.ascontiguousarray(X)[None])
    out = os.path.join(tmp, "out_" + tag)
    subprocess.run([bsvd, "run", path, "--backend", "cpu", "--variant", "blocked",
                    "--block-size", "16", "-o", out], check=True, capture_output=True)
    return int(np.load(os.path.join(out, "sweeps.npy"))[0])


def steps_per_sweep(n, nb=16):
    blocks = -(-n // nb)
    return 1 if blocks <= 1 else blocks + (blocks & 1) - 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bsvd", required=True)
    ap.add_argument("--dir", default=os.path.join(os.path.dirname(__file__), "..", "data", "matrices"))
    ap.add_argument("--min-cols", type=int, default=65)
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    names = a.names or sorted(f[:-4] for f in os.listdir(a.dir) if f.endswith(".mtx"))
    u = np.finfo(np.float64).eps / 2
    worst = {"A": 0, "RT": 0, "LT": 0}
    print(f"{'matrix':18s} {'m':>5s} {'n':>5s} {'rank':>5s}  sweeps A / RT / LT   steps A / RT / LT")
    with tempfile.TemporaryDirectory() as tmp:
        for nm in names:
            A = scipy.io.mmread(os.path.join(a.dir, nm + ".mtx"))
            A = np.asarray(A.todense() if hasattr(A, "todense") else A, dtype=np.float64)
            if A.shape[0] < A.shape[1]:
                A = A.T
            m, n = A.shape
            if n < a.min_cols:
                continue
            _, R, _ = sl.qr(A, pivoting=True, mode="economic")
            d = np.abs(np.diag(R))
            k = int(np.sum(d > max(m, n) * u * d[0])) if d[0] > 0 else 0
            k = max(k, 1)
            L = np.linalg.qr(R[:k, :].T)[1]  # R_0^T = Q' L^T: L^T is k x k
            s = {"A": sweeps(a.bsvd, A, tmp, "A"), "RT": sweeps(a.bsvd, R.T, tmp, "RT"),
                 "LT": sweeps(a.bsvd, L, tmp, "LT")}
            st = {"A": s["A"] * steps_per_sweep(n), "RT": s["RT"] * steps_per_sweep(n),
                  "LT": s["LT"] * steps_per_sweep(k)}
            for f in worst:
                worst[f] = max(worst[f], st[f])
            print(f"{nm:18s} {m:5d} {n:5d} {k:5d}  {s['A']:6d} {s['RT']:4d} {s['LT']:4d}"
                  f"   {st['A']:7d} {st['RT']:5d} {st['LT']:5d}", flush=True)
    print(f"largest steps over the batch: A {worst['A']}, RT {worst['RT']}, LT {worst['LT']}")


if __name__ == "__main__":
    sys.exit(main())
