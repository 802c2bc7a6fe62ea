"""NumPy -> bsvd run -> NumPy round trip (see numpy_roundtrip.sh)."""
import subprocess
import sys

import numpy as np

bsvd, tmp = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(2026)
K = 30.0
failures = []


def run(path, out, *extra):
    r = subprocess.run([bsvd, "run", path, "-o", out, "--backend", "cpu", *extra],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"bsvd run failed ({r.returncode}): {r.stderr}")
    print(r.stdout.strip())
    return r.stdout


def ratios(A, U, S, V, u):
    """T1 and T2 of docs/accuracy.md for one matrix, in units of u."""
    m, n = A.shape
    k = min(m, n)
    R = A.astype(np.complex256 if np.iscomplexobj(A) else np.longdouble)
    rec = (U.astype(R.dtype) * S.astype(np.longdouble)) @ V.astype(R.dtype).conj().T
    norm1 = lambda X: np.abs(X).sum(axis=0).max() if X.size else 0.0
    t1 = norm1(R - rec) / (n * norm1(R)) / u
    t2u = norm1(np.eye(k) - U.astype(R.dtype).conj().T @ U.astype(R.dtype)) / m / u
    t2v = norm1(np.eye(k) - V.astype(R.dtype).conj().T @ V.astype(R.dtype)) / n / u
    return float(t1), float(t2u), float(t2v)


cases = [(np.float64, 20, 9, 7), (np.float32, 10, 16, 16), (np.complex128, 5, 12, 30),
         (np.complex64, 5, 33, 8), (np.float64, 3, 1, 40), (np.float64, 4, 100, 3)]
for dtype, batch, m, n in cases:
    A = rng.standard_normal((batch, m, n))
    if np.issubdtype(dtype, np.complexfloating):
        A = A + 1j * rng.standard_normal((batch, m, n))
    A = A.astype(dtype)
    name = f"{np.dtype(dtype).name}_{batch}x{m}x{n}"
    np.save(f"{tmp}/{name}.npy", A)
    out = f"{tmp}/{name}"
    run(f"{tmp}/{name}.npy", out)
    U, S, V = (np.load(f"{out}/{x}.npy") for x in "USV")
    info = np.load(f"{out}/info.npy")
    k = min(m, n)
    assert U.shape == (batch, m, k) and S.shape == (batch, k) and V.shape == (batch, n, k), (U.shape, S.shape, V.shape)
    assert U.dtype == A.dtype and V.dtype == A.dtype, (U.dtype, A.dtype)
    u = np.finfo(dtype).eps / 2
    worst = max(max(ratios(A[b], U[b], S[b], V[b], u)) for b in range(batch))
    ref = np.linalg.svd(A.astype(np.complex128 if np.iscomplexobj(A) else np.float64), compute_uv=False)
    t3 = np.abs(S - ref).max() / (ref[:, :1].max() * u * k)
    print(f"  {name}: worst T1/T2 {worst:.3g} u, T3 {t3:.3g} u, info {set(info.tolist())}")
    if worst >= K or t3 >= K or (info != 0).any() or (np.diff(S, axis=1) > 0).any():
        failures.append(name)

# One NaN matrix in a batch: its info is -1, the others are untouched.
A = rng.standard_normal((5, 8, 6))
A[2, 3, 4] = np.nan
np.save(f"{tmp}/nan.npy", A)
summary = run(f"{tmp}/nan.npy", f"{tmp}/nan")
info = np.load(f"{tmp}/nan/info.npy")
U, S, V = (np.load(f"{tmp}/nan/{x}.npy") for x in "USV")
ok = info.tolist() == [0, 0, -1, 0, 0] and np.isnan(S[2]).all() and "1 non-finite" in summary
for b in (0, 1, 3, 4):
    ok = ok and max(ratios(A[b], U[b], S[b], V[b], np.finfo(float).eps / 2)) < K
print(f"  nan batch: info {info.tolist()} -> {'ok' if ok else 'WRONG'}")
if not ok:
    failures.append("nan batch")

# Values only: S alone, equal to the S of the full run.
A = rng.standard_normal((4, 10, 10))
np.save(f"{tmp}/vo.npy", A)
run(f"{tmp}/vo.npy", f"{tmp}/vo", "--values-only")
S = np.load(f"{tmp}/vo/S.npy")
ref = np.linalg.svd(A, compute_uv=False)
if np.abs(S - ref).max() > 30 * np.finfo(float).eps * ref.max():
    failures.append("values-only")

print("1 passed, 0 failed" if not failures else f"0 passed, 1 failed: {failures}")
sys.exit(1 if failures else 0)
