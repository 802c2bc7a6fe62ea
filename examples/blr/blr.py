#!/usr/bin/env python3
"""Block low-rank (BLR) matrices with bsvd: compress the off-diagonal
blocks of a boundary-element kernel matrix by truncated SVD, add two BLR
matrices, and recompress the sum's blocks (QR + one small SVD per block,
every block's size different, in one bsvd.svd_batch call).

The matrices. N points on the unit sphere (a Fibonacci lattice), ordered by
recursive coordinate bisection into clusters of b consecutive points, so
that the blocks of consecutive indices are compact patches. A is the
single-layer Laplace kernel 1/(4 pi |x - y|) (the matrix of a boundary
element method); B is the exponential kernel exp(-|x - y| / l). In BLR
form (Amestoy et al. 2015) the diagonal blocks are dense and every
off-diagonal block is a low-rank product X Y^T with the rank its content
needs: near patches large, far ones small.

Compression. Each off-diagonal block K_ij = U diag(s) V^T keeps the
smallest rank r with sqrt(s_{r+1}^2 + ...) <= eps ||K_ij||_F: X = U_r diag(s_r),
Y = V_r (one batched SVD of all blocks, cut by bsvd.truncate(norm="fro")).

Addition and recompression. A block of C = A + B is [X_A X_B] [Y_A Y_B]^T,
of rank k = k_A + k_B, which overstates the sum's rank. The standard
recompression (Hackbusch, Hierarchical Matrices, Sec. 2.6; Bebendorf 2008):

    X = Q_x R_x, Y = Q_y R_y        (thin QR, b x k)
    R_x R_y^T = U diag(s) V^T        (k x k: the small SVD)
    keep r with sqrt(s_{r+1}^2 + ...) <= eps ||s||,   X' = Q_x U_r diag(s_r),  Y' = Q_y V_r

and X' Y'^T is within eps ||X Y^T||_F of X Y^T. The k x k cores have a
different k in every block: bsvd.svd_batch solves the list in one call;
the usual code loops over the blocks (a LAPACK call each), or pads every
core to the largest k for a uniform batched call.

    python3 examples/blr/blr.py               # CPU: N = 1024, b = 64 (seconds)
    python3 examples/blr/blr.py --gpu --json out.json   # the GPU measurement (README.md)

The CPU run asserts that every recompressed block is within eps of the
sum's low-rank form, that the BLR sum is within 3 eps of the dense A + B,
and that the one-call, per-block and padded routes agree; it ends with OK.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

import bsvd

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchutil  # noqa: E402


# ---------------------------------------------------------------------------
# geometry and kernels

def sphere_points(n):
    """The Fibonacci lattice: n nearly uniform points on the unit sphere."""
    i = np.arange(n) + 0.5
    z = 1 - 2 * i / n
    r = np.sqrt(1 - z * z)
    phi = math.pi * (3 - math.sqrt(5)) * i
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], 1)


def bisection_order(x, leaf):
    """A permutation that puts x into clusters of `leaf` consecutive points:
    split at the median of the widest coordinate, recursively (n = leaf * 2^l)."""
    def rec(idx):
        if idx.size <= leaf:
            return [idx]
        p = x[idx]
        axis = int(np.argmax(p.max(0) - p.min(0)))
        order = idx[np.argsort(p[:, axis], kind="stable")]
        half = order.size // 2
        return rec(order[:half]) + rec(order[half:])
    return np.concatenate(rec(np.arange(x.shape[0])))


def kernel_blocks(ops, x, b, kind, ell, h):
    """The (nb, nb, b, b) blocks of the kernel on the ordered points x, one
    block row at a time (the differences of a whole row of blocks are
    nb b^2 x 3 numbers)."""
    X = ops.asarray(x)
    nb = X.shape[0] // b
    P = X.reshape(nb, b, 3)
    rows = []
    for i in range(nb):
        r = ops.sqrt(((P[i][None, :, None, :] - P[:, None, :, :]) ** 2).sum(-1))  # (nb, b, b)
        if kind == "laplace":
            # 1/(4 pi r); the singular diagonal gets the value at half the mean spacing.
            rows.append(1 / (4 * math.pi * (r + (r == 0) * (h / 2))))
        else:
            rows.append(ops.exp(-r / ell))
    return ops.stack(rows, 0)


# ---------------------------------------------------------------------------
# BLR compression, addition, recompression

def offdiag(nb):
    i, j = np.nonzero(~np.eye(nb, dtype=bool))
    return i, j


def compress(ops, K, eps, svd):
    """The off-diagonal blocks as X (nblk, b, R), Y (nblk, b, R), padded to
    the largest rank R with zero columns, and the ranks (nblk,)."""
    i, j = offdiag(K.shape[0])
    blocks = K[ops.index(i), ops.index(j)]             # (nblk, b, b)
    U, S, Vh, rank = bsvd.truncate(svd(blocks), rtol=eps, norm="fro")
    return U * S[..., None, :], Vh.swapaxes(-1, -2), rank


def recompress_exact(ops, X, Y, eps, svd_list):
    """Per block, X_i (b, k_i), Y_i (b, k_i): thin QR of both, one small SVD
    of every k_i x k_i core in one svd_list call, the cut. Returns the
    lists X'_i, Y'_i and the ranks."""
    QR = [(ops.linalg.qr(x), ops.linalg.qr(y)) for x, y in zip(X, Y)]
    cores = [Rx @ Ry.swapaxes(-1, -2) for (_, Rx), (_, Ry) in QR]
    U, S, Vh = svd_list(cores)
    _, S, Vh, ranks = bsvd.truncate(U, S, Vh, rtol=eps, norm="fro")  # lists: exact ranks
    Xn, Yn = [], []
    for ((Qx, _), (Qy, _)), u, s, vh, r in zip(QR, U, S, Vh, ranks):
        Xn.append(Qx @ (u[:, :r] * s[:r]))
        Yn.append(Qy @ vh[:r].swapaxes(-1, -2))
    return Xn, Yn, ranks


def recompress_padded(ops, X, Y, eps, svd):
    """The same on padded arrays (nblk, b, K): one batched QR, one batched
    SVD of the K x K cores (zero columns give zero singular values, which
    the cut removes)."""
    Qx, Rx = ops.linalg.qr(X)
    Qy, Ry = ops.linalg.qr(Y)
    U, S, Vh, rank = bsvd.truncate(svd(Rx @ Ry.swapaxes(-1, -2)), rtol=eps, norm="fro")
    return Qx @ (U * S[..., None, :]), Qy @ Vh.swapaxes(-1, -2), rank


def unpad(X, ranks):
    return [X[i][:, :int(r)] for i, r in enumerate(ranks)]


def stack_sum(XA, YA, kA, XB, YB, kB):
    """The blocks of A + B as lists [X_A X_B], [Y_A Y_B] of exact widths."""
    X = [np.concatenate([XA[i][:, :kA[i]], XB[i][:, :kB[i]]], 1) for i in range(len(kA))]
    Y = [np.concatenate([YA[i][:, :kA[i]], YB[i][:, :kB[i]]], 1) for i in range(len(kA))]
    return X, Y


def cpu_main(args):
    ops = benchutil.NumpyOps()
    x = sphere_points(args.n)
    x = x[bisection_order(x, args.b)]
    h = math.sqrt(4 * math.pi / args.n)
    KA = kernel_blocks(ops, x, args.b, "laplace", args.ell, h)
    KB = kernel_blocks(ops, x, args.b, "exp", args.ell, h)
    nb = KA.shape[0]
    eps = args.eps
    svd = lambda A: bsvd.svd(A, full_matrices=False)  # noqa: E731
    XA, YA, kA = compress(ops, KA, eps, svd)
    XB, YB, kB = compress(ops, KB, eps, svd)
    nblk = kA.size
    X, Y = stack_sum(XA, YA, kA, XB, YB, kB)
    k = np.array([a.shape[1] for a in X])
    print(f"BLR, N = {args.n} points on the sphere, blocks {args.b} x {args.b} ({nb} x {nb}), "
          f"eps {eps:g}: {nblk} low-rank blocks; ranks A {kA.min()}-{kA.max()}, "
          f"B {kB.min()}-{kB.max()}, A + B before recompression {k.min()}-{k.max()}")

    svd_list = lambda L: bsvd.svd_batch(L, full_matrices=False)  # noqa: E731

    def loop_list(L):
        res = [np.linalg.svd(c, full_matrices=False) for c in L]
        return [r[0] for r in res], [r[1] for r in res], [r[2] for r in res]

    timings = {}
    out = {}
    for name, fn in (("bsvd.svd_batch (one call)", svd_list),
                     ("numpy.linalg.svd per block", loop_list)):
        t0 = time.perf_counter()
        out[name] = recompress_exact(ops, X, Y, eps, fn)
        timings[name] = time.perf_counter() - t0
        # The small SVDs alone.
        cores = [np.linalg.qr(a)[1] @ np.linalg.qr(b)[1].T for a, b in zip(X, Y)]
        t0 = time.perf_counter()
        fn(cores)
        timings[name + " svd"] = time.perf_counter() - t0
    Xn, Yn, ranks = out["bsvd.svd_batch (one call)"]
    ranks = np.array(ranks)

    # The padded route: every block padded to the largest k.
    K = int(k.max())
    Xp = np.zeros((nblk, args.b, K))
    Yp = np.zeros((nblk, args.b, K))
    for i in range(nblk):
        Xp[i, :, :k[i]] = X[i]
        Yp[i, :, :k[i]] = Y[i]
    t0 = time.perf_counter()
    Xq, Yq, rank_p = recompress_padded(ops, Xp, Yp, eps, svd)
    t_pad = time.perf_counter() - t0

    # Errors: each block against its unrecompressed sum, the whole against dense A + B.
    blk_err = np.array([np.linalg.norm(X[i] @ Y[i].T - Xn[i] @ Yn[i].T)
                        / np.linalg.norm(X[i] @ Y[i].T) for i in range(nblk)])
    pad_dev = max(np.abs(Xq[i] @ Yq[i].T - Xn[i] @ Yn[i].T).max() for i in range(nblk))
    loop_ranks = np.array(out["numpy.linalg.svd per block"][2])
    i_idx, j_idx = offdiag(nb)
    C = KA + KB
    err2 = 0.0
    for t in range(nblk):
        err2 += np.linalg.norm(C[i_idx[t], j_idx[t]] - Xn[t] @ Yn[t].T) ** 2
    glob = math.sqrt(err2) / np.linalg.norm(C)
    print(f"  recompressed ranks {ranks.min()}-{ranks.max()}: {k.sum()} -> {ranks.sum()} columns "
          f"({ranks.sum() / k.sum():.2f} of the stacked sum)")
    print(f"  worst block error |XY^T - X'Y'^T|_F / |XY^T|_F = {blk_err.max():.2e} (eps {eps:g}); "
          f"BLR A + B against dense A + B: {glob:.2e} (bound 3 eps)")
    one = "bsvd.svd_batch (one call)"
    print(f"  recompression of {nblk} blocks: bsvd.svd_batch {1e3 * timings[one]:.1f} ms "
          f"(its small SVDs {1e3 * timings[one + ' svd']:.1f} ms), "
          f"numpy.linalg.svd per block {1e3 * timings['numpy.linalg.svd per block']:.1f} ms "
          f"({1e3 * timings['numpy.linalg.svd per block svd']:.1f} ms), padded to {K} "
          f"{1e3 * t_pad:.1f} ms; padded and per-block routes agree: ranks "
          f"{bool(np.array_equal(rank_p, ranks) and np.array_equal(loop_ranks, ranks))}, "
          f"max |difference| {pad_dev:.1e}")
    ok = (blk_err.max() <= eps * (1 + 1e-6) and glob <= 3 * eps
          and np.array_equal(rank_p, ranks) and np.array_equal(loop_ranks, ranks)
          and ranks.sum() < k.sum())
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


# ---------------------------------------------------------------------------
# GPU: the measurement

def gpu_main(args):
    torch = benchutil.torch_cuda()
    if torch is None:
        print("SKIP: the --gpu mode needs PyTorch with a CUDA device")
        return 0
    if not bsvd.cuda_available():
        print("SKIP: bsvd was built without the CUDA backend or sees no GPU")
        return 0
    jax = benchutil.jax_gpu() if not args.no_jax else None
    ops = benchutil.TorchOps(torch)
    sync = torch.cuda.synchronize
    rows = []
    x = sphere_points(args.n)
    x = x[bisection_order(x, args.b)]
    h = math.sqrt(4 * math.pi / args.n)
    eps = args.eps
    svd = lambda A: bsvd.svd(A, full_matrices=False)  # noqa: E731
    KA = kernel_blocks(ops, x, args.b, "laplace", args.ell, h)
    jax_svd = None
    if jax is not None:
        import jax.numpy as jnp

        def jax_svd(A):
            res = jnp.linalg.svd(benchutil.to_jax(A.contiguous()), full_matrices=False)
            return tuple(benchutil.to_torch(r.block_until_ready()) for r in res)
    rows += time_compression(torch, ops, KA, args, svd, jax_svd)
    XA, YA, kA = compress(ops, KA, eps, svd)
    nblk = kA.shape[0]
    del KA
    KB = kernel_blocks(ops, x, args.b, "exp", args.ell, h)
    XB, YB, kB = compress(ops, KB, eps, svd)
    del KB
    kA, kB = kA.cpu().numpy(), kB.cpu().numpy()
    k = kA + kB
    X = [torch.cat([XA[i][:, :kA[i]], XB[i][:, :kB[i]]], 1) for i in range(nblk)]
    Y = [torch.cat([YA[i][:, :kA[i]], YB[i][:, :kB[i]]], 1) for i in range(nblk)]
    Kmax = int(k.max())
    Xp = torch.zeros((nblk, args.b, Kmax), dtype=torch.float64, device="cuda")
    Yp = torch.zeros_like(Xp)
    for i in range(nblk):
        Xp[i, :, :k[i]] = X[i]
        Yp[i, :, :k[i]] = Y[i]
    Qx, Rx = torch.linalg.qr(Xp)
    Qy, Ry = torch.linalg.qr(Yp)
    cores_p = (Rx @ Ry.mT).contiguous()
    cores = [cores_p[i, :k[i], :k[i]].contiguous() for i in range(nblk)]
    case_r = f"recompress N{args.n} b{args.b}"
    meta_k = dict(batch=nblk, k_min=int(k.min()), k_max=Kmax)
    # The small SVDs: one variable-size call, a padded uniform call, a loop.
    ref_rank = bsvd.truncate(bsvd.svd_batch(cores, full_matrices=False), rtol=eps, norm="fro").rank
    small = {
        "bsvd.svd_batch": (lambda cnt: (lambda: bsvd.svd_batch(cores[:cnt], full_matrices=False))),
        "bsvd padded": (lambda cnt: (lambda: svd(cores_p[:cnt]))),
        "torch.linalg.svd padded": (lambda cnt: (lambda: torch.linalg.svd(cores_p[:cnt],
                                                                          full_matrices=False))),
        "torch.linalg.svd per block": (lambda cnt: (lambda: [torch.linalg.svd(
            c, full_matrices=False) for c in cores[:cnt]])),
    }
    if jax is not None:
        small["jax.numpy.linalg.svd padded"] = lambda cnt: (lambda: jax_svd(cores_p[:cnt]))
    for name, make in small.items():
        with benchutil.guard(rows, "blr", case_r, name, "cuda", what="small svd"):
            res = benchutil.time_scaled(make, nblk, sync, budget_s=args.budget,
                                        probe=max(1, nblk // 64),
                                        allow_scale=not name.startswith("bsvd"))
            rows.append(benchutil.row("blr", case_r, name, "cuda", res, what="small svd", **meta_k))
    cores_h = [c.cpu().numpy() for c in cores]
    with benchutil.guard(rows, "blr", case_r, "numpy.linalg.svd per block", "cpu"):
        res = benchutil.time_scaled(lambda cnt: (lambda: [np.linalg.svd(c, full_matrices=False)
                                                          for c in cores_h[:cnt]]),
                                    nblk, lambda: None, budget_s=args.budget, probe=16)
        rows.append(benchutil.row("blr", case_r, "numpy.linalg.svd per block", "cpu", res,
                                  what="small svd", **meta_k))
    # The whole recompression (QR, SVD, cut, products), batched over the
    # padded blocks or block by block as a per-block code does it.
    whole = {
        "bsvd padded": lambda cnt: (lambda: recompress_padded(ops, Xp[:cnt], Yp[:cnt], eps, svd)),
        "torch.linalg.svd padded": lambda cnt: (lambda: recompress_padded(
            ops, Xp[:cnt], Yp[:cnt], eps, lambda A: torch.linalg.svd(A, full_matrices=False))),
        "torch.linalg.svd per block": lambda cnt: (lambda: recompress_exact(
            ops, X[:cnt], Y[:cnt], eps, lambda L: _per_block(torch, L))),
    }
    for name, make in whole.items():
        with benchutil.guard(rows, "blr", case_r, name, "cuda", what="recompress"):
            res = benchutil.time_scaled(make, nblk, sync, budget_s=args.budget,
                                        probe=max(1, nblk // 64),
                                        allow_scale=not name.startswith("bsvd"))
            rows.append(benchutil.row("blr", case_r, name, "cuda", res, what="recompress",
                                      **meta_k))
    Xn, Yn, ranks = recompress_exact(ops, X, Y, eps,
                                     lambda L: bsvd.svd_batch(L, full_matrices=False))
    worst = max((torch.linalg.matrix_norm(X[i] @ Y[i].T - Xn[i] @ Yn[i].T)
                 / torch.linalg.matrix_norm(X[i] @ Y[i].T)).item() for i in range(0, nblk, 7))
    print(f"GPU BLR N = {args.n}, b = {args.b}: {nblk} blocks, k {k.min()}-{Kmax} -> ranks "
          f"{min(ranks)}-{max(ranks)}; worst block error (every 7th block) {worst:.2e}, "
          f"eps {eps:g}")
    benchutil.print_rows(rows, keys=("case", "engine", "device", "what", "ms"))
    meta = benchutil.meta("blr", n=args.n, b=args.b, eps=eps, ell=args.ell,
                          k=[int(k.min()), Kmax], ranks=[int(min(ranks)), int(max(ranks))],
                          dtype="float64")
    benchutil.write_json(args.json, rows, meta)
    rank_p = recompress_padded(ops, Xp, Yp, eps, svd)[2].tolist()
    ok = worst <= eps * (1 + 1e-6) and list(ranks) == list(ref_rank) == rank_p
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


def time_compression(torch, ops, K, args, svd, jax_svd):
    """Rows: the SVD of every off-diagonal block of K by each engine."""
    sync = torch.cuda.synchronize
    i_idx, j_idx = offdiag(K.shape[0])
    blocks = K[ops.index(i_idx), ops.index(j_idx)].contiguous()
    nblk = blocks.shape[0]
    case = f"compress N{args.n} b{args.b}"
    comp = {"bsvd": svd, "torch.linalg.svd": lambda A: torch.linalg.svd(A, full_matrices=False)}
    if jax_svd is not None:
        comp["jax.numpy.linalg.svd"] = jax_svd
    rows = []
    for name, f in comp.items():
        with benchutil.guard(rows, "blr", case, name, "cuda", what="compress"):
            res = benchutil.time_scaled(lambda cnt, f=f: (lambda: f(blocks[:cnt])), nblk, sync,
                                        budget_s=args.budget, probe=max(1, nblk // 64),
                                        allow_scale=not name.startswith("bsvd"))
            rows.append(benchutil.row("blr", case, name, "cuda", res, what="compress", batch=nblk,
                                      m=args.b, n=args.b))
    Bh = blocks.cpu().numpy()
    with benchutil.guard(rows, "blr", case, "numpy.linalg.svd", "cpu", what="compress"):
        res = benchutil.time_scaled(
            lambda cnt: (lambda: np.linalg.svd(Bh[:cnt], full_matrices=False)), nblk,
            lambda: None, budget_s=args.budget, probe=4)
        rows.append(benchutil.row("blr", case, "numpy.linalg.svd", "cpu", res, what="compress",
                                  batch=nblk, m=args.b, n=args.b))
    return rows


def _per_block(torch, L):
    res = [torch.linalg.svd(c, full_matrices=False) for c in L]
    return [r[0] for r in res], [r[1] for r in res], [r[2] for r in res]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpu", action="store_true", help="time bsvd against the baselines on the GPU")
    ap.add_argument("--json", help="--gpu: write the rows here")
    ap.add_argument("--n", type=int, help="points (b times a power of two)")
    ap.add_argument("--b", type=int, help="block size")
    ap.add_argument("--eps", type=float, default=1e-8,
                    help="relative Frobenius tolerance per block")
    ap.add_argument("--ell", type=float, default=0.5, help="length of the exponential kernel")
    ap.add_argument("--budget", type=float, default=4.0, help="--gpu: seconds per timed engine")
    ap.add_argument("--no-jax", action="store_true")
    args = ap.parse_args(argv)
    small = dict(n=1024, b=64)
    large = dict(n=16384, b=256)
    for key, val in (large if args.gpu else small).items():
        if getattr(args, key) is None:
            setattr(args, key, val)
    return gpu_main(args) if args.gpu else cpu_main(args)


if __name__ == "__main__":
    raise SystemExit(main())
