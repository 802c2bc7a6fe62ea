"""bsvd run --nplus (see hsvd_run.sh)."""
import subprocess
import sys

import numpy as np

bsvd, tmp = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(36)


def run(*args, rc=0):
    r = subprocess.run([bsvd, "run", *args, "--backend", "cpu"], capture_output=True, text=True)
    if r.returncode != rc:
        raise SystemExit(f"bsvd run {' '.join(args)}: exit {r.returncode}, expected {rc}: "
                         f"{r.stdout}{r.stderr}")
    return r.stdout + r.stderr


def norm1(X):
    return np.abs(X).sum(axis=-2).max(axis=-1)


for dtype, batch, m, n, nplus, order in [("f8", 6, 9, 5, 2, "C"), ("f4", 4, 7, 7, 3, "F"),
                                         ("c16", 3, 8, 4, 1, "C"), ("c8", 3, 6, 3, 0, "C")]:
    G = rng.standard_normal((batch, m, n))
    if dtype.startswith("c"):
        G = G + 1j * rng.standard_normal(G.shape)
    G = np.asarray(G.astype(dtype), order=order)
    f = f"{tmp}/g_{dtype}.npy"
    np.save(f, G)
    out = f"{tmp}/out_{dtype}"
    text = run(f, "-o", out, "--nplus", str(nplus))
    print(text.strip())
    assert f"hsvd nplus {nplus};" in text, text
    U, S, V = (np.load(f"{out}/{x}.npy") for x in "USV")
    info = np.load(f"{out}/info.npy")
    assert U.shape == (batch, m, n) and S.shape == (batch, n) and V.shape == (batch, n, n)
    assert np.all(info == 0), info
    u = np.finfo(G.dtype).eps / 2
    W = np.clongdouble if dtype.startswith("c") else np.longdouble
    Gw, Uw, Vw = G.astype(W), U.astype(W), V.astype(W)
    J = np.where(np.arange(n) < nplus, 1.0, -1.0)
    kappa = np.linalg.norm(V.astype(complex), 2, axis=(-2, -1)) ** 2
    VJV = np.conj(np.swapaxes(Vw, -1, -2)) @ (Vw * J[:, None])
    r_j = norm1(VJV - np.diag(J)) / (n * u * kappa)
    r_u = norm1(np.conj(np.swapaxes(Uw, -1, -2)) @ Uw - np.eye(n)) / (n * u)
    R = Gw - (Uw * S.astype(np.longdouble)[:, None, :]) @ np.conj(np.swapaxes(Vw, -1, -2))
    r_r = norm1(R) / (norm1(Gw) * n * u * kappa)
    for name, r in (("J-unitarity", r_j), ("orthogonality", r_u), ("residual", r_r)):
        assert r.max() < 30, f"{dtype}: {name} ratio {r.max():.3g}"
    # each side descending, and +-S^2 the nonzero eigenvalues of G J G^H
    assert np.all(np.diff(S[:, :nplus]) <= 0) and np.all(np.diff(S[:, nplus:]) <= 0)
    G64 = G.astype(complex)
    ev = np.linalg.eigvalsh((G64 * J) @ np.conj(np.swapaxes(G64, -1, -2)))
    ev = np.sort(np.stack([e[np.argsort(np.abs(e))[m - n:]] for e in ev]), axis=-1)
    lam = np.sort(J * S.astype(float) ** 2, axis=-1)
    err = np.abs(lam - ev).max(axis=-1) / (np.linalg.norm(G64, 2, axis=(-2, -1)) ** 2 * n * u
                                           * kappa)
    assert err.max() < 30, f"{dtype}: eigenvalue ratio {err.max():.3g}"
    # values only: the same S
    run(f, "-o", f"{out}_v", "--nplus", str(nplus), "--values-only")
    Sv = np.load(f"{out}_v/S.npy")
    assert np.allclose(Sv, S, rtol=100 * u, atol=0)

# A breakdown matrix (G = [x, x], J = diag(1, -1)) among good ones.
x = rng.standard_normal(5)
G = np.stack([rng.standard_normal((5, 2)), np.stack([x, x], axis=1)])
np.save(f"{tmp}/bd.npy", G)
text = run(f"{tmp}/bd.npy", "-o", f"{tmp}/bd", "--nplus", "1")
assert "1 hyperbolic breakdown" in text and "0 non-finite" in text, text
assert np.load(f"{tmp}/bd/info.npy").tolist() == [0, -2]

# Misuse: exit 2 with the reason.
np.save(f"{tmp}/wide.npy", rng.standard_normal((2, 3, 5)))
for args, words in [((f"{tmp}/wide.npy", "--nplus", "1"), "m >= n"),
                    ((f"{tmp}/bd.npy", "--nplus", "3"), "nplus"),
                    ((f"{tmp}/bd.npy", "--nplus", "1", "--residuals"), "--residuals"),
                    ((f"{tmp}/bd.npy", "--nplus", "-1"), "nplus")]:
    text = run(*args, "-o", f"{tmp}/bad", rc=2)
    print(text.strip())
    assert words in text, (args, text)
np.save(f"{tmp}/a.npy", rng.standard_normal((2, 3, 2)))
mtx = f"{tmp}/a.mtx"
with open(mtx, "w") as fh:
    fh.write("%%MatrixMarket matrix array real general\n2 1\n1.0\n2.0\n")
text = run(mtx, "-o", f"{tmp}/bad", "--nplus", "1", rc=2)
assert ".npy" in text, text
print("hsvd_run: OK")
