#!/usr/bin/env python3
"""The SVDs inside neural-network optimizers, with bsvd: the orthogonalized
update of Muon (the polar factor U V^T of each layer's momentum, which is
also the update of Shampoo without accumulation), against the Newton-Schulz
iterations Muon uses for it; and GaLore's low-rank gradient projection (the
top-r singular vectors of each layer's gradient).

Muon (Jordan et al. 2024; Liu et al. 2025, "Muon is scalable for LLM
training"). For a weight W (m x n) with momentum M, the step is
W -= lr * sqrt(max(1, m/n)) * O, where O = U V^T from M = U diag(s) V^T:
every singular value of the update set to one. Muon approximates O with
five steps of the quintic Newton-Schulz iteration

    X_0 = M / ||M||_F,  X_{k+1} = a X_k + (b A_k + c A_k^2) X_k,  A_k = X_k X_k^T,
    (a, b, c) = (3.4445, -4.7750, 2.0315),

which maps every singular value into about [0.7, 1.2] rather than to 1:
cheap (matrix products, in bfloat16) but not the polar factor. The classical
cubic iteration X_{k+1} = X_k (3 I - X_k^T X_k) / 2 (Higham, Functions of
Matrices, Sec. 8.3) does converge to it, slowly for small singular values.
bsvd gives the exact O for all layers of a model in one batched call
(bsvd.svd_batch: the layers' shapes differ).

GaLore (Zhao et al. 2024). Every T steps, P = the top-r left singular
vectors of the gradient G (m <= n; else the right ones); Adam runs on the
projected r x n gradient P^T G and the step is W -= lr * alpha * P N.
The top-r triplets here are the leading ones of bsvd's full SVD, cut by
bsvd.truncate(max_rank=r).

    python3 examples/muon/muon.py             # CPU, NumPy: the checks and a small MLP (seconds)
    python3 examples/muon/muon.py --gpu --json out.json   # the GPU measurement (README.md)

The CPU run asserts that bsvd's polar factors equal scipy.linalg.polar's
and are orthogonal to rounding (and reports how far Newton-Schulz is from
them), that GaLore's projector captures exactly the top-r energy, and that
a teacher-student MLP trained with each optimizer reduces its loss; it ends
with OK.
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

NS5 = (3.4445, -4.7750, 2.0315)


# ---------------------------------------------------------------------------
# the orthogonalizations (NumPy or PyTorch arrays, batched over leading axes)

def mT(x):
    return x.swapaxes(-1, -2)


def fro(x):
    return ((x * x).sum((-2, -1))) ** 0.5


def polar_svd(G, svd):
    """O = U V^T, the polar factor, from a reduced SVD."""
    U, _, Vh = svd(G)
    return U @ Vh


def newton_schulz5(G, steps=5):
    """Muon's quintic Newton-Schulz: about U V^T (singular values in ~[0.7, 1.2])."""
    a, b, c = NS5
    X = G / (fro(G)[..., None, None] + 1e-7)
    tall = G.shape[-2] > G.shape[-1]
    if tall:  # iterate on the wide form: the Gram matrix X X^T is the small one
        X = mT(X)
    for _ in range(steps):
        A = X @ mT(X)
        X = a * X + (b * A + c * (A @ A)) @ X
    return mT(X) if tall else X


def newton_schulz3(G, steps):
    """The cubic Newton-Schulz iteration for the polar factor (converges for
    ||X_0||_2 < sqrt(3); ||G||_F scaling ensures it)."""
    X = G / fro(G)[..., None, None]
    tall = G.shape[-2] > G.shape[-1]
    if tall:
        X = mT(X)
    for _ in range(steps):
        X = 1.5 * X - 0.5 * (X @ mT(X)) @ X
    return mT(X) if tall else X


def polar_error(O, O_ref):
    """||O - O_ref||_F / ||O_ref||_F per matrix."""
    return fro(O - O_ref) / fro(O_ref)


def orth_error(O):
    """||O^T O - I||_F / sqrt(k) on the small side (k = min(m, n))."""
    m, n = O.shape[-2:]
    G = mT(O) @ O if m >= n else O @ mT(O)
    k = min(m, n)
    eye = np.eye(k) if isinstance(O, np.ndarray) else __import__("torch").eye(
        k, dtype=O.dtype, device=O.device)
    return fro(G - eye) / math.sqrt(k)


def gradient_like(rng, count, m, n, cond, dtype=np.float64):
    """count m x n matrices with singular values decaying from 1 to 1/cond
    (geometrically) in random singular bases: the spread of layer
    gradients, with a well-defined polar factor (full rank)."""
    k = min(m, n)
    s = np.geomspace(1.0, 1.0 / cond, k)
    U = np.linalg.qr(rng.standard_normal((count, m, k)))[0]
    V = np.linalg.qr(rng.standard_normal((count, n, k)))[0]
    return ((U * s) @ mT(V)).astype(dtype)


def top_r(G, r, svd):
    """GaLore's projector: the top-r left singular vectors (m <= n) or right
    ones (m > n) of each G, from the reduced SVD cut to rank r."""
    U, S, Vh, _ = bsvd.truncate(svd(G), max_rank=r)
    return U if G.shape[-2] <= G.shape[-1] else mT(Vh)


def top_r_subset(G, r):
    """The same projector from the top r triplets alone (bsvd's selected
    triplets: subset_by_index)."""
    U, S, Vh = bsvd.svd(G, subset_by_index=(0, r - 1))
    return U if G.shape[-2] <= G.shape[-1] else mT(Vh)


# ---------------------------------------------------------------------------
# a small teacher-student MLP (NumPy, manual backpropagation)

class MLP:
    def __init__(self, sizes, rng, scale=1.0):
        self.W = [rng.standard_normal((o, i)) * scale / math.sqrt(i)
                  for i, o in zip(sizes[:-1], sizes[1:])]

    def forward(self, x):
        acts = [x]
        for i, W in enumerate(self.W):
            x = x @ W.T
            if i < len(self.W) - 1:
                x = np.maximum(x, 0.0)
            acts.append(x)
        return acts

    def grads(self, x, y):
        acts = self.forward(x)
        err = acts[-1] - y
        loss = float((err * err).mean())
        g = 2 * err / err.size
        out = [None] * len(self.W)
        for i in range(len(self.W) - 1, -1, -1):
            out[i] = g.T @ acts[i]
            if i:
                g = (g @ self.W[i]) * (acts[i] > 0)
        return loss, out


class Muon:
    def __init__(self, lr, orth, beta=0.95):
        self.lr, self.orth, self.beta, self.M = lr, orth, beta, None

    def step(self, W, G):
        if self.M is None:
            self.M = [np.zeros_like(g) for g in G]
        upd = []
        for i, g in enumerate(G):
            self.M[i] = self.beta * self.M[i] + g
            upd.append(g + self.beta * self.M[i])       # Nesterov momentum
        for w, o in zip(W, self.orth(upd)):            # all layers at once
            w -= self.lr * math.sqrt(max(1.0, w.shape[0] / w.shape[1])) * o


class GaLoreAdam:
    def __init__(self, lr, rank, every, svd_list, alpha=0.25, b1=0.9, b2=0.999):
        self.lr, self.r, self.every, self.svd_list = lr, rank, every, svd_list
        self.alpha, self.b1, self.b2, self.t = alpha, b1, b2, 0
        self.P = self.m = self.v = None

    def step(self, W, G):
        if self.t % self.every == 0:
            self.P = self.svd_list(G, self.r)
            if self.m is None:
                self.m = [None] * len(G)
                self.v = [None] * len(G)
        self.t += 1
        for i, (w, g, P) in enumerate(zip(W, G, self.P)):
            left = g.shape[0] <= g.shape[1]
            R = P.T @ g if left else g @ P                 # the projected gradient
            if self.m[i] is None or self.m[i].shape != R.shape:
                self.m[i], self.v[i] = np.zeros_like(R), np.zeros_like(R)
            self.m[i] = self.b1 * self.m[i] + (1 - self.b1) * R
            self.v[i] = self.b2 * self.v[i] + (1 - self.b2) * R * R
            mh = self.m[i] / (1 - self.b1 ** self.t)
            vh = self.v[i] / (1 - self.b2 ** self.t)
            N = mh / (np.sqrt(vh) + 1e-8)
            w -= self.lr * self.alpha * (P @ N if left else N @ P.T)


def train(opt, sizes, steps, rng_seed=0, batch=256):
    rng = np.random.default_rng(rng_seed)
    teacher = MLP(sizes, rng, scale=1.5)
    student = MLP(sizes, rng, scale=0.5)
    losses = []
    for _ in range(steps):
        x = rng.standard_normal((batch, sizes[0]))
        y = teacher.forward(x)[-1]
        loss, G = student.grads(x, y)
        losses.append(loss)
        opt.step(student.W, G)
    return losses


# ---------------------------------------------------------------------------
# CPU: the assertions

def cpu_main(args):
    import scipy.linalg

    rng = np.random.default_rng(3)
    ok = True
    print("Polar factors O = U V^T of gradient-like matrices (singular values 1 ... 1/cond):")
    svd64 = lambda A: bsvd.svd(A, full_matrices=False)  # noqa: E731
    shapes = [(64, 64), (128, 32), (32, 128)]
    for m, n in shapes:
        G = gradient_like(rng, 8, m, n, args.cond)
        ref = np.stack([scipy.linalg.polar(g)[0] for g in G])
        O = polar_svd(G, svd64)
        e_b, o_b = polar_error(O, ref).max(), orth_error(O).max()
        e_5, o_5 = [f(newton_schulz5(G)).max() for f in (lambda X: polar_error(X, ref), orth_error)]
        ns3 = newton_schulz3(G, args.ns3_steps)
        e_3, o_3 = polar_error(ns3, ref).max(), orth_error(ns3).max()
        print(f"  8 x {m} x {n}, cond {args.cond:g}: |O - polar| bsvd {e_b:.1e}, "
              f"Newton-Schulz quintic x5 {e_5:.2f}, cubic x{args.ns3_steps} {e_3:.1e}; "
              f"|O^T O - I| bsvd {o_b:.1e}, quintic {o_5:.2f}, cubic {o_3:.1e}")
        ok &= e_b < 1e-11 and o_b < 1e-13
    # The same in single precision, the precision of training.
    G = gradient_like(rng, 8, 64, 64, 100.0, np.float32)
    O = polar_svd(G, svd64)
    ref = np.stack([scipy.linalg.polar(g.astype(np.float64))[0] for g in G])
    e32, o32 = polar_error(O.astype(np.float64), ref).max(), orth_error(O).max()
    print(f"  float32 8 x 64 x 64, cond 100: |O - polar| {e32:.1e}, |O^T O - I| {o32:.1e}")
    ok &= e32 < 1e-4 and o32 < 1e-5

    # All layers of a model in one call: shapes differ, so svd_batch.
    def orth_bsvd(Ms):
        Us, _, Vhs = bsvd.svd_batch(Ms, full_matrices=False)
        return [U @ Vh for U, Vh in zip(Us, Vhs)]

    def orth_ns5(Ms):
        return [newton_schulz5(M) for M in Ms]

    def galore_proj(Gs, r):
        # every layer's top r triplets in one variable-size call
        Us, _, Vhs = bsvd.svd_batch(Gs, subset_by_index=(0, r - 1))
        return [U if G.shape[0] <= G.shape[1] else Vh.T for G, U, Vh in zip(Gs, Us, Vhs)]

    # GaLore's projector: exactly the top-r subspace.
    Gs = [gradient_like(rng, 1, m, n, args.cond)[0] for m, n in shapes]
    Ps = galore_proj(Gs, args.rank)
    for G, P in zip(Gs, Ps):
        s = np.linalg.svd(G, compute_uv=False)
        left = G.shape[0] <= G.shape[1]
        got = np.linalg.norm(P.T @ G if left else G @ P) ** 2 / np.linalg.norm(G) ** 2
        want = (s[:args.rank] ** 2).sum() / (s ** 2).sum()
        orth = np.abs(P.T @ P - np.eye(args.rank)).max()
        print(f"  GaLore projector of a {G.shape[0]} x {G.shape[1]} gradient, r = {args.rank}: "
              f"captured energy {got:.12f} (top-{args.rank} {want:.12f}), |P^T P - I| {orth:.1e}")
        ok &= abs(got - want) < 1e-12 and orth < 1e-13

    sizes = [32, 64, 64, 16]
    print(f"Teacher-student MLP {sizes}, {args.steps} steps, batch 256, MSE loss:")
    runs = {
        "Muon, bsvd polar (exact)": Muon(args.lr, orth_bsvd),
        "Muon, Newton-Schulz x5": Muon(args.lr, orth_ns5),
        f"GaLore-Adam r={args.rank}, bsvd": GaLoreAdam(args.galore_lr, args.rank, 50, galore_proj),
    }
    for name, opt in runs.items():
        t0 = time.perf_counter()
        losses = train(opt, sizes, args.steps)
        first, last = losses[0], np.mean(losses[-10:])
        print(f"  {name:<28} loss {first:.4f} -> {last:.4f} ({last / first:.3f} of the start) "
              f"in {time.perf_counter() - t0:.1f} s")
        ok &= last < 0.25 * first
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


# ---------------------------------------------------------------------------
# GPU: the measurement

MODELS = {
    # name: (d_model, layers): attention Q, K, V, O (d x d) and the MLP's
    # up (4d x d) and down (d x 4d) per layer, as in GPT-2.
    "gpt2-small": (768, 12),
    "small": (256, 6),
}


def model_shapes(d, layers):
    return {(d, d): 4 * layers, (4 * d, d): layers, (d, 4 * d): layers}


def gpu_main(args):
    torch = benchutil.torch_cuda()
    if torch is None:
        print("SKIP: the --gpu mode needs PyTorch with a CUDA device")
        return 0
    if not bsvd.cuda_available():
        print("SKIP: bsvd was built without the CUDA backend or sees no GPU")
        return 0
    jax = benchutil.jax_gpu() if not args.no_jax else None
    sync = torch.cuda.synchronize
    rng = np.random.default_rng(0)
    rows = []
    ok = True
    for model in args.models:
        d, layers = MODELS[model]
        groups = {}
        for (m, n), count in model_shapes(d, layers).items():
            G = gradient_like(rng, count, m, n, args.cond)
            groups[(m, n)] = torch.as_tensor(G, device="cuda")        # float64, for the reference
        ref = {k: polar_svd(G, lambda A: bsvd.svd(A, full_matrices=False))
               for k, G in groups.items()}
        G32 = {k: G.float() for k, G in groups.items()}
        total = sum(G.shape[0] for G in G32.values())
        case = f"{model} ({total} matrices)"

        def over_groups(fn, dtype=None):
            return lambda: {k: fn(G if dtype is None else G.to(dtype)) for k, G in G32.items()}

        engines = {
            "bsvd": over_groups(lambda G: polar_svd(G, lambda A: bsvd.svd(A, full_matrices=False))),
            "bsvd svd_batch": lambda: bsvd.svd_batch([g for G in G32.values() for g in G],
                                                     full_matrices=False),
            "torch.linalg.svd": over_groups(lambda G: polar_svd(
                G, lambda A: torch.linalg.svd(A, full_matrices=False))),
            "Newton-Schulz x5 bf16": over_groups(newton_schulz5, torch.bfloat16),
            "Newton-Schulz x5 fp32": over_groups(newton_schulz5),
        }
        if jax is not None:
            import jax.numpy as jnp

            def jax_polar(G):
                U, _, Vh = jnp.linalg.svd(benchutil.to_jax(G.contiguous()), full_matrices=False)
                return benchutil.to_torch((U @ Vh).block_until_ready())
            engines["jax.numpy.linalg.svd"] = over_groups(jax_polar)
        for name, fn in engines.items():
            with benchutil.guard(rows, "muon", case, name, "cuda", what="orthogonalize"):
                res = benchutil.time_call(fn, sync, reps=5, budget_s=args.budget)
                extra = {}
                if name != "bsvd svd_batch":
                    out = fn()
                    errs = [polar_error(out[k].double(), ref[k]).max().item() for k in out]
                    orths = [orth_error(out[k].double()).max().item() for k in out]
                    extra = dict(polar_err=max(errs), orth_err=max(orths))
                rows.append(benchutil.row("muon", case, name, "cuda", res, what="orthogonalize",
                                          dtype="float32", **extra))
        # NumPy on the host, the CPU's way (LAPACK gesdd per matrix), per
        # shape group (a slice, scaled, where a group would not fit), summed.
        with benchutil.guard(rows, "muon", case, "numpy.linalg.svd", "cpu", what="orthogonalize"):
            host = {"ms": 0.0, "reps": 0}
            for (m, n), G in G32.items():
                Gh = G.cpu().numpy()
                res = benchutil.time_scaled(
                    lambda cnt, Gh=Gh: (lambda: polar_svd(Gh[:cnt], lambda A: np.linalg.svd(
                        A, full_matrices=False))), Gh.shape[0], lambda: None,
                    budget_s=args.budget / len(G32), probe=1)
                host["ms"] += res["ms"]
                host["reps"] = max(host["reps"], res["reps"])
                if "scaled_from" in res:
                    host["scaled_from"] = host.get("scaled_from", 0) + res["scaled_from"]
            rows.append(benchutil.row("muon", case, "numpy.linalg.svd", "cpu", host,
                                      what="orthogonalize", dtype="float32"))
        # GaLore's refresh: the top-r subspace of every layer's gradient.
        r = args.galore_rank or d // 4
        gal = {
            "bsvd": over_groups(lambda G: top_r(G, r, lambda A: bsvd.svd(A, full_matrices=False))),
            "bsvd subset_by_index": over_groups(lambda G: top_r_subset(G, r)),
            "torch.linalg.svd": over_groups(lambda G: top_r(
                G, r, lambda A: torch.linalg.svd(A, full_matrices=False))),
            "torch.svd_lowrank (niter 2)": over_groups(
                lambda G: torch.svd_lowrank(G if G.shape[-2] <= G.shape[-1] else mT(G),
                                            q=r + 8, niter=2)[0][..., :r]),
        }
        for name, fn in gal.items():
            with benchutil.guard(rows, "muon", f"{case} r{r}", name, "cuda", what="galore"):
                res = benchutil.time_call(fn, sync, reps=5, budget_s=args.budget)
                out = fn()
                # Captured energy of the top r, against the exact top-r energy.
                lost = 0.0
                for k, P in out.items():
                    G = G32[k].double()
                    Gw = G if G.shape[-2] <= G.shape[-1] else mT(G)
                    got = (fro(mT(P.double()) @ Gw) ** 2) / fro(Gw) ** 2
                    s = bsvd.svdvals(Gw)
                    want = (s[..., :r] ** 2).sum(-1) / (s ** 2).sum(-1)
                    lost = max(lost, (want - got).max().item())
                rows.append(benchutil.row("muon", f"{case} r{r}", name, "cuda", res, what="galore",
                                          dtype="float32", energy_shortfall=lost))
        ok &= all(r_.get("polar_err", math.inf) < 1e-3 for r_ in rows
                  if r_["engine"] == "bsvd" and r_.get("what") == "orthogonalize"
                  and r_["case"] == case)
    benchutil.print_rows(rows, keys=("case", "engine", "device", "what", "ms"))
    meta = benchutil.meta("muon", models={m: MODELS[m] for m in args.models}, cond=args.cond)
    benchutil.write_json(args.json, rows, meta)
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpu", action="store_true", help="time bsvd against the baselines on the GPU")
    ap.add_argument("--json", help="--gpu: write the rows here")
    ap.add_argument("--cond", type=float, default=1e3, help="condition of the test gradients")
    ap.add_argument("--ns3-steps", type=int, default=30)
    ap.add_argument("--steps", type=int, default=300, help="CPU: MLP training steps")
    ap.add_argument("--lr", type=float, default=0.02, help="Muon learning rate")
    ap.add_argument("--galore-lr", type=float, default=0.02)
    ap.add_argument("--rank", type=int, default=8, help="CPU: GaLore rank")
    ap.add_argument("--galore-rank", type=int, help="--gpu: GaLore rank (default d/4)")
    ap.add_argument("--models", default="small,gpt2-small", help="--gpu: " + ", ".join(MODELS))
    ap.add_argument("--budget", type=float, default=4.0, help="--gpu: seconds per timed engine")
    ap.add_argument("--no-jax", action="store_true")
    args = ap.parse_args(argv)
    args.models = [m for m in args.models.split(",") if m]
    return gpu_main(args) if args.gpu else cpu_main(args)


if __name__ == "__main__":
    raise SystemExit(main())
