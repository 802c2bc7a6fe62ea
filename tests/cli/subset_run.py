"""bsvd run --subset-index / --subset-value (see subset_run.sh)."""
import os
import subprocess
import sys

import numpy as np

bsvd, tmp = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(7)
failures = []


def run(path, out, *extra, rc=0):
    r = subprocess.run([bsvd, "run", path, "-o", out, "--backend", "cpu", *extra],
                       capture_output=True, text=True)
    if r.returncode != rc:
        raise SystemExit(f"bsvd run {' '.join(extra)}: exit {r.returncode}, expected {rc}: "
                         f"{r.stderr}")
    return r


for dtype, (b, m, n) in [(np.float64, (5, 30, 20)), (np.complex64, (3, 12, 25)),
                         (np.float32, (4, 40, 40))]:
    A = rng.standard_normal((b, m, n))
    if np.issubdtype(dtype, np.complexfloating):
        A = A + 1j * rng.standard_normal((b, m, n))
    A = A.astype(dtype)
    path = os.path.join(tmp, "a.npy")
    np.save(path, A)
    u = np.finfo(dtype).eps / 2
    ref = np.linalg.svd(A.astype(np.complex128), compute_uv=False)
    k, p = min(m, n), max(m, n)
    # (the interval's ends half-way between matrix 0's values 0, 1 and 3, 4)
    vl, vu = (ref[0, 3] + ref[0, 4]) / 2, (ref[0, 0] + ref[0, 1]) / 2
    for flag, arg in [("--subset-index", "1:4"), ("--subset-value", f"{float(vl)!r}:{float(vu)!r}")]:
        out = os.path.join(tmp, "out")
        run(path, out, flag, arg)
        S, U, V, ns = (np.load(os.path.join(out, f)) for f in ("S.npy", "U.npy", "V.npy",
                                                                   "ns.npy"))
        c = 4 if flag == "--subset-index" else k
        if S.shape != (b, c) or U.shape != (b, m, c) or V.shape != (b, n, c) or ns.shape != (b,):
            failures.append(f"{flag} {dtype.__name__}: shapes {S.shape} {U.shape} {V.shape}")
            continue
        for i in range(b):
            first = 1 if flag == "--subset-index" else int((ref[i] > vu).sum())
            want = 4 if flag == "--subset-index" else int(((ref[i] > vl) & (ref[i] <= vu)).sum())
            if ns[i] != want:
                failures.append(f"{flag} {dtype.__name__} matrix {i}: ns {ns[i]}, want {want}")
            c_i = int(ns[i])
            s, Ui, Vi = S[i, :c_i], U[i, :, :c_i], V[i, :, :c_i]
            nrm = ref[i, 0]
            val = np.abs(s - ref[i, first:first + c_i]).max(initial=0) / (nrm * p * u)
            res = np.abs(A[i].astype(np.complex128) @ Vi - Ui * s).max(initial=0) / (nrm * p * u)
            orth = max(np.abs(X.conj().T @ X - np.eye(c_i)).max(initial=0) for X in (Ui, Vi))
            if not (val < 30 and res < 30 and orth / (p * u) < 30):
                failures.append(f"{flag} {dtype.__name__} matrix {i}: val {val:.3g} res "
                                f"{res:.3g} orth {orth / (p * u):.3g}")
            if np.any(S[i, c_i:] != 0) or np.any(U[i, :, c_i:] != 0):
                failures.append(f"{flag} {dtype.__name__} matrix {i}: not zero after ns")

# Matrix Market input: one file per matrix, S (c,), U (m, c), V (n, c); a
# file with too few values for the index range is skipped (exit 1, its
# summary row says why), the others solved.
def write_mtx(path, A):
    m, n = A.shape
    with open(path, "w") as f:
        f.write(f"%%MatrixMarket matrix coordinate real general\n{m} {n} {m * n}\n")
        for j in range(n):
            for i in range(m):
                f.write(f"{i + 1} {j + 1} {float(A[i, j])!r}\n")


mdir = os.path.join(tmp, "mtx")
os.makedirs(mdir)
mats = {"a": rng.standard_normal((12, 7)), "b": rng.standard_normal((5, 9)),
        "c": rng.standard_normal((3, 2))}
for name, A in mats.items():
    write_mtx(os.path.join(mdir, name + ".mtx"), A)
r = run(mdir, os.path.join(tmp, "mout"), "--subset-index", "1:2", rc=1)
rows = open(os.path.join(tmp, "mout", "summary.tsv")).read()
if "fewer values than --subset-index" not in rows or "skipped" not in r.stderr:
    failures.append(f"mtx: the small file's skip is not reported: {r.stderr!r}")
for name in ("a", "b"):
    A = mats[name]
    S, U, V = (np.load(os.path.join(tmp, "mout", f"{name}.{x}.npy")) for x in "SUV")
    ref = np.linalg.svd(A, compute_uv=False)
    p, nrm = max(A.shape), ref[0]
    if S.shape != (2,) or U.shape != (A.shape[0], 2) or V.shape != (A.shape[1], 2):
        failures.append(f"mtx {name}: shapes {S.shape} {U.shape} {V.shape}")
        continue
    val = np.abs(S - ref[1:3]).max() / (nrm * p * 2.0 ** -53)
    res = np.abs(A @ V - U * S).max() / (nrm * p * 2.0 ** -53)
    if not (val < 30 and res < 30):
        failures.append(f"mtx {name}: val {val:.3g} res {res:.3g}")
if os.path.exists(os.path.join(tmp, "mout", "c.S.npy")):
    failures.append("mtx c: written although skipped")

# usage errors: exit 2, nothing solved
path = os.path.join(tmp, "a.npy")
for extra in (["--subset-index", "3:1"], ["--subset-index", "x"], ["--subset-value", "2:1"],
              ["--subset-index", "0:1", "--subset-value", "0:1"],
              ["--subset-index", "0:1", "--residuals"], ["--subset-index", "0:99"]):
    r = run(path, os.path.join(tmp, "bad"), *extra, rc=2)
    if "subset" not in r.stderr and "iu" not in r.stderr:
        failures.append(f"{extra}: message {r.stderr!r}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("subset_run: ok")
