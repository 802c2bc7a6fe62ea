"""Eigenvalues of a batch of graded symmetric indefinite matrices by the
hyperbolic SVD (bsvd.eigh_factored), against numpy.linalg.eigh and a
50-digit reference (mpmath).

Each H = D A D (n x n) has A symmetric indefinite and well conditioned
(eigenvalues +-[1, 2]) and D = diag(10^0 ... 10^-grade) in a random order:
the scaling of a Hessian block whose coordinates have very different units. Its
eigenvalues span about 2 * grade decades. An eigensolver on H (numpy's
LAPACK xSYEVD) gets each eigenvalue to about u * ||H||, so the small ones
lose most of their digits. bsvd factors H = G J G^T on the CPU (the
Bunch-Kaufman LDL^T of scipy.linalg.ldl, its 2 x 2 pivots diagonalized:
G = L Q |Lambda|^(1/2), J = sign(Lambda)) and runs one-sided Jacobi on G:
G's columns carry the grading and L Q is well conditioned, so every
eigenvalue keeps its relative accuracy (docs/hsvd.md, "Accuracy").

    python3 examples/hsvd/graded_eigen.py [--batch 16] [--n 8] [--grade 6]

Needs numpy, scipy and the bsvd package; mpmath for the reference (pip
install mpmath). Prints the worst relative error of the smallest-magnitude
eigenvalues of each method and ends with OK when bsvd's are at the
rounding level.
"""
import argparse
import sys
import time

import numpy as np
import scipy.linalg

import bsvd


def graded_batch(rng, batch, n, grade):
    """H (batch, n, n): H = D A D with A = Q diag(+-[1, 2]) Q^T and D the
    scales 10^0 ... 10^-grade in a random order."""
    H = np.empty((batch, n, n))
    d = 10.0 ** -np.linspace(0.0, grade, n)
    for b in range(batch):
        Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
        lam = rng.uniform(1.0, 2.0, n) * np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
        A = (Q * lam) @ Q.T
        db = rng.permutation(d)  # LAPACK's tridiagonalization copes with grading in order only
        Hb = db[:, None] * A * db[None, :]
        H[b] = (Hb + Hb.T) / 2  # exactly symmetric
    return H


def factor(H):
    """G (n x n) and the +-1 signs with H = G diag(signs) G^T: the LDL^T
    of scipy.linalg.ldl (Bunch-Kaufman, LAPACK xSYTRF), whose block
    diagonal D has 1 x 1 and 2 x 2 pivots; each 2 x 2 pivot is
    diagonalized (D_k = Q_k Lambda_k Q_k^T), so G = L Q |Lambda|^(1/2) and
    signs = sign(Lambda)."""
    L, D, _ = scipy.linalg.ldl(H, lower=True)
    n = H.shape[0]
    Q = np.eye(n)
    lam = np.diag(D).copy()
    k = 0
    while k < n:
        if k + 1 < n and D[k + 1, k] != 0.0:
            w, q = np.linalg.eigh(D[k:k + 2, k:k + 2])
            lam[k:k + 2] = w
            Q[k:k + 2, k:k + 2] = q
            k += 2
        else:
            k += 1
    if np.any(lam == 0.0):
        raise ValueError("singular H: a zero pivot")
    return (L @ Q) * np.sqrt(np.abs(lam)), np.sign(lam)


def reference(H, digits=50):
    """Eigenvalues of each float64 H (taken as exact), ascending, from
    mpmath's Jacobi eigensolver at `digits` decimal digits."""
    import mpmath
    mpmath.mp.dps = digits
    out = np.empty(H.shape[:-1])
    for b in range(H.shape[0]):
        E = mpmath.eigsy(mpmath.matrix(H[b].tolist()), eigvals_only=True)
        out[b] = sorted(float(e) for e in E)
    return out


def smallest_rel_error(w, ref, count):
    """Worst relative error of the `count` smallest-magnitude eigenvalues."""
    idx = np.argsort(np.abs(ref), axis=-1)[:, :count]
    r = np.take_along_axis(ref, idx, -1)
    e = np.take_along_axis(w, idx, -1)
    return np.abs(e - r) / np.abs(r)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--grade", type=float, default=6.0,
                    help="D spans 10^0 ... 10^-grade (eigenvalues about twice as many decades)")
    ap.add_argument("--seed", type=int, default=36)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    H = graded_batch(rng, args.batch, args.n, args.grade)

    t0 = time.perf_counter()
    factors = [factor(h) for h in H]
    G = np.stack([f[0] for f in factors])
    signs = np.stack([f[1] for f in factors])
    t1 = time.perf_counter()
    w_bsvd, info = bsvd.eigh_factored(G, signs=signs, eigvals_only=True, return_info=True)
    t2 = time.perf_counter()
    w_np = np.linalg.eigvalsh(H)
    print(f"{args.batch} matrices {args.n} x {args.n}, D over {args.grade:g} decades; LDL^T "
          f"factors {1e3 * (t1 - t0):.1f} ms, bsvd.eigh_factored {1e3 * (t2 - t1):.1f} ms, "
          f"sweeps <= {int(info.sweeps.max())}")

    try:
        ref = reference(H)
    except ImportError:
        print("mpmath not installed (pip install mpmath): no reference, no check")
        return 0
    mags = np.abs(ref)
    print(f"|eigenvalues| from {mags.min():.2e} to {mags.max():.2e}")
    count = max(1, args.n // 4)
    u = np.finfo(np.float64).eps / 2
    e_np = smallest_rel_error(w_np, ref, count)
    e_bs = smallest_rel_error(w_bsvd, ref, count)
    e_all = np.abs(w_bsvd - ref) / np.abs(ref)
    print(f"relative error of the {count} smallest-magnitude eigenvalues of each matrix:")
    print(f"  numpy.linalg.eigh       worst {e_np.max():.2e}, median {np.median(e_np):.2e}")
    print(f"  bsvd.eigh_factored      worst {e_bs.max():.2e}, median {np.median(e_bs):.2e}")
    print(f"bsvd, every eigenvalue:   worst {e_all.max():.2e} ({e_all.max() / u:.1f} u)")
    # What bounds bsvd's relative error (with kappa(V)): the condition of G
    # after its columns are scaled to unit norm. Bunch-Kaufman's partial
    # pivoting leaves L less well conditioned than complete pivoting would.
    kap = max(np.linalg.cond(g / np.linalg.norm(g, axis=0)) for g in G)
    print(f"worst condition of G with unit columns: {kap:.1e} (the relative error is about "
          "u times this, or better)")
    print(f"matrix with the smallest eigenvalue: reference {ref.flat[mags.argmin()]:.16e}")
    print(f"                          numpy.linalg.eigh {w_np.flat[mags.argmin()]:.16e}")
    print(f"                          bsvd.eigh_factored {w_bsvd.flat[mags.argmin()]:.16e}")
    ok = np.all(info.info == 0) and e_all.max() < 1000 * args.n * u
    print("OK" if ok else "FAILED: bsvd's relative errors are above the rounding level")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
