#!/usr/bin/env python3
"""Ensemble data assimilation with bsvd: a local ensemble transform Kalman
filter (LETKF, Hunt, Kostelich & Szunyogh 2007) on a two-dimensional
Lorenz-96 channel, with one SVD per grid point per analysis step, all grid
points in one batched call.

The model. x[j, i] on an ny x nx grid: each latitude row j is a Lorenz-96
ring in i (periodic), and neighbouring rows are coupled by diffusion with
walls at j = 0 and ny - 1 (no flux), so a point's neighbours in both
directions carry information about it:

    dx/dt = (x[i+1] - x[i-2]) x[i-1] - x[i] + F + kappa (x[j+1] - 2 x[j] + x[j-1])

integrated by RK4 with dt = 0.05 (the usual "6 hours" of Lorenz-96), F = 8.

Observations. Every `stride`-th point in both directions, with Gaussian
errors of standard deviation sigma_o, every analysis step.

The analysis (LETKF). At grid point g the local observations within the
localization cutoff enter with their errors' inverse variances tapered by
the Gaspari-Cohn function (R-localization). With Yb the k ensemble
perturbations in observation space, rho the multiplicative inflation and

    C = sqrt(rho / (k - 1)) R_loc^(-1/2) Yb        (p_loc x k, one per grid point)
    d = R_loc^(-1/2) (y - mean(H xb))

the LETKF's ensemble-space analysis (Hunt et al., eqs. 20-24) is

    P_a = rho/(k-1) (I + C^T C)^(-1)
    w_mean = sqrt(rho/(k-1)) (I + C^T C)^(-1) C^T d
    W = sqrt(rho) (I + C^T C)^(-1/2)
    xa_j = mean(xb) + Xb (w_mean + W[:, j])

and the SVD C = U diag(s) V^T gives every matrix function of C^T C at once:
(I + C^T C)^(-1) = I + V diag(1/(1+s^2) - 1) V^T, (I + C^T C)^(-1/2) = I +
V diag((1+s^2)^(-1/2) - 1) V^T. That is the "ens" form: one p_loc x k SVD
per grid point.

The "obs" form is the same analysis in observation space, the setting of
the W-cycle SVD paper's application (its Sec. V-F: one SVD per grid point of
an ocean model, square matrices of order 50 to 1024): the SVD of the
p_loc x p_loc matrix S = I + C C^T (= R^(-1/2) (H P H^T + R) R^(-1/2) with
P inflated), S = U diag(lam) U^T, gives w_mean = sqrt(rho/(k-1)) C^T S^(-1) d
and W = sqrt(rho) (I + C^T U diag(g(lam)) U^T C) with
g(lam) = ((lam)^(-1/2) - 1) / (lam - 1) = -1 / (sqrt(lam) (1 + sqrt(lam))).
Both forms give the same analysis (checked); the obs form costs far more
when p_loc > k and is here to mirror the paper's matrix sizes.

    python3 examples/enkf/enkf.py                 # CPU, NumPy: 40 x 8 grid, 20 members (seconds)
    python3 examples/enkf/enkf.py --gpu --json out.json   # the GPU measurement (README.md)

The CPU run asserts that the analysis error falls below the observation
error and far below the free run's, and that bsvd's analysis equals
numpy.linalg.svd's and the obs form's; it ends with OK.
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

DT = 0.05
FORCING = 8.0


# ---------------------------------------------------------------------------
# the model: Lorenz-96 rings coupled in y, walls at the first and last row

def tendency(ops, x, kappa):
    # Lorenz-96 advection and damping along i (the last axis, periodic).
    adv = (ops.roll(x, -1, -1) - ops.roll(x, 2, -1)) * ops.roll(x, 1, -1)
    # Diffusion along j with no-flux walls: the missing neighbour is the row itself.
    up = ops.cat([x[..., 1:, :], x[..., -1:, :]], -2)
    down = ops.cat([x[..., :1, :], x[..., :-1, :]], -2)
    return adv - x + FORCING + kappa * (up + down - 2 * x)


def rk4(ops, x, kappa, steps=1):
    for _ in range(steps):
        k1 = tendency(ops, x, kappa)
        k2 = tendency(ops, x + 0.5 * DT * k1, kappa)
        k3 = tendency(ops, x + 0.5 * DT * k2, kappa)
        k4 = tendency(ops, x + DT * k3, kappa)
        x = x + DT / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return x


# ---------------------------------------------------------------------------
# observations and localization (host, once)

def gaspari_cohn(r):
    """The fifth-order piecewise rational taper of Gaspari & Cohn (1999,
    eq. 4.10) at r = distance / half-width: 1 at 0, 0 from r = 2 on."""
    r = np.abs(r)
    out = np.zeros_like(r)
    a = r <= 1
    b = (r > 1) & (r < 2)
    ra, rb = r[a], r[b]
    out[a] = -0.25 * ra**5 + 0.5 * ra**4 + 0.625 * ra**3 - 5 / 3 * ra**2 + 1
    out[b] = (rb**5 / 12 - 0.5 * rb**4 + 0.625 * rb**3 + 5 / 3 * rb**2 - 5 * rb + 4
              - 2 / (3 * rb))
    return out


def network(ny, nx, stride, halfwidth):
    """The observed points (flat indices) and, for every grid point, its
    local observations: idx (N, p_max) into the observation vector, padded
    with the index p_obs (a zero row appended in the analysis), and their
    taper weights w (N, p_max), 0 on the padding. Sorted by distance."""
    obs_j, obs_i = np.meshgrid(np.arange(0, ny, stride), np.arange(0, nx, stride), indexing="ij")
    obs_flat = (obs_j * nx + obs_i).ravel()
    obs_number = -np.ones(ny * nx, dtype=np.int64)
    obs_number[obs_flat] = np.arange(obs_flat.size)
    cut = int(math.ceil(2 * halfwidth))
    dj, di = np.meshgrid(np.arange(-cut, cut + 1), np.arange(-cut, cut + 1), indexing="ij")
    dist = np.hypot(dj, di).ravel()
    keep = gaspari_cohn(dist / halfwidth) > 0
    dj, di, dist = dj.ravel()[keep], di.ravel()[keep], dist[keep]
    order = np.argsort(dist, kind="stable")
    dj, di, dist = dj[order], di[order], dist[order]
    gj, gi = np.meshgrid(np.arange(ny), np.arange(nx), indexing="ij")
    cj = gj.ravel()[:, None] + dj[None, :]                 # (N, offsets)
    ci = (gi.ravel()[:, None] + di[None, :]) % nx          # periodic in i
    inside = (cj >= 0) & (cj < ny)                          # walls in j
    num = np.where(inside, obs_number[np.clip(cj, 0, ny - 1) * nx + ci], -1)
    valid = num >= 0
    p_max = int(valid.sum(1).max())
    first = np.argsort(~valid, axis=1, kind="stable")[:, :p_max]   # valid ones first, by distance
    idx = np.take_along_axis(num, first, 1)
    w = np.take_along_axis(np.broadcast_to(gaspari_cohn(dist / halfwidth), num.shape), first, 1)
    pad = idx < 0
    idx[pad] = obs_flat.size
    w = np.where(pad, 0.0, w)
    return obs_flat, idx, w, valid.sum(1)


# ---------------------------------------------------------------------------
# the analysis

class Analysis:
    """The LETKF analysis of one step for every grid point; `solver` is the
    batched decomposition (an SVD engine, or eigh as LETKF codes use it)."""

    def __init__(self, ops, obs_flat, idx, w, sigma_o, rho, form):
        self.ops = ops
        self.obs = ops.index(obs_flat)
        self.idx = ops.index(idx)
        self.sw = ops.asarray(np.sqrt(w) / sigma_o)      # R_loc^(-1/2) per local obs
        self.rho = rho
        self.form = form

    def local(self, E, yo):
        """C (N, p_max, k) and d (N, p_max) from the forecast ensemble E (k, N)."""
        ops = self.ops
        k = E.shape[0]
        Y = E[:, self.obs]                                  # (k, p_obs)
        ym = Y.mean(0)
        Yp = (Y - ym).swapaxes(0, 1)                        # (p_obs, k)
        Yp = ops.cat([Yp, ops.zeros((1, k))], 0)           # the padding's zero row
        d = ops.cat([yo - ym, ops.zeros((1,))], 0)
        C = Yp[self.idx] * (self.sw * math.sqrt(self.rho / (k - 1)))[..., None]
        return C, d[self.idx] * self.sw

    def weights(self, C, d, solver):
        """w_mean (N, k) and W (N, k, k) of every grid point."""
        ops = self.ops
        k = C.shape[-1]
        c1, c2 = math.sqrt(self.rho / (k - 1)), math.sqrt(self.rho)
        Ct = C.swapaxes(-1, -2)
        eye = ops.eye(k)
        if self.form == "ens":
            s, V = solver(C)                                # (N, r), (N, k, r)
            s2 = s * s
            a = (Ct @ d[..., None])[..., 0]                 # C^T d
            f1 = 1 / (1 + s2) - 1
            Va = (V.swapaxes(-1, -2) @ a[..., None])[..., 0]
            w_mean = c1 * (a + (V @ (f1 * Va)[..., None])[..., 0])
            f2 = 1 / ops.sqrt(1 + s2) - 1
            W = c2 * (eye + (V * f2[..., None, :]) @ V.swapaxes(-1, -2))
        else:
            S = ops.eye(C.shape[-2]) + C @ Ct               # (N, p, p), symmetric positive definite
            U, lam = solver(S)
            z = (U.swapaxes(-1, -2) @ d[..., None])[..., 0] / lam
            w_mean = c1 * (Ct @ (U @ z[..., None]))[..., 0]
            CU = Ct @ U                                     # (N, k, p)
            rl = ops.sqrt(lam)
            g = -1 / (rl * (1 + rl))
            W = c2 * (eye + (CU * g[..., None, :]) @ CU.swapaxes(-1, -2))
        return w_mean, W

    def __call__(self, E, yo, solver):
        """The analysis ensemble (k, N) from the forecast E (k, N)."""
        xm = E.mean(0)
        Xp = (E - xm).swapaxes(0, 1)                        # (N, k)
        C, d = self.local(E, yo)
        w_mean, W = self.weights(C, d, solver)
        T = w_mean[..., None] + W                           # (N, k, k): column j -> member j
        return (xm[:, None] + (Xp[:, None, :] @ T)[:, 0, :]).swapaxes(0, 1)


# ---------------------------------------------------------------------------
# the decompositions: the SVD by each engine, and eigh as the LETKF codes do it

def svd_solver(form, svd):
    """ens: (s, V) of C; obs: (U, lam) of S, whose SVD is its eigendecomposition."""
    if form == "ens":
        def solve(C):
            _, s, Vh = svd(C)
            return s, Vh.swapaxes(-1, -2)
    else:
        def solve(S):
            U, lam, _ = svd(S)
            return U, lam
    return solve


def eigh_solver(form, eigh, ops):
    if form == "ens":
        def solve(C):
            lam, Q = eigh(C.swapaxes(-1, -2) @ C)           # C^T C = V diag(s^2) V^T
            return ops.sqrt(ops.clip0(lam)), Q
    else:
        def solve(S):
            lam, Q = eigh(S)
            return Q, lam
    return solve


def engines(ops, form, with_jax=False):
    """name -> solver for this array library (the first is bsvd)."""
    out = {"bsvd": svd_solver(form, lambda A: bsvd.svd(A, full_matrices=False))}
    if ops.name == "numpy":
        out["numpy.linalg.svd"] = svd_solver(form, lambda A: np.linalg.svd(A, full_matrices=False))
        out["numpy.linalg.eigh"] = eigh_solver(form, np.linalg.eigh, ops)
    else:
        t = ops.t
        out["torch.linalg.svd"] = svd_solver(form, lambda A: t.linalg.svd(A, full_matrices=False))
        out["torch.linalg.eigh"] = eigh_solver(form, t.linalg.eigh, ops)
        if with_jax:
            import jax.numpy as jnp

            def jax_svd(A):
                res = jnp.linalg.svd(benchutil.to_jax(A), full_matrices=False)
                res = [r.block_until_ready() for r in res]
                return tuple(benchutil.to_torch(r) for r in res)
            out["jax.numpy.linalg.svd"] = svd_solver(form, jax_svd)
    return out


# ---------------------------------------------------------------------------
# experiment

class Experiment:
    def __init__(self, ops, args, seed=0):
        self.ops, self.args = ops, args
        rng = np.random.default_rng(seed)
        ny, nx, k = args.ny, args.nx, args.members
        self.N = ny * nx
        # The truth and the initial ensemble: states of the model's attractor,
        # each spun up from its own random start (a climatological ensemble,
        # whose mean is far from the truth).
        x0 = FORCING + rng.standard_normal((k + 1, ny, nx))
        x0 = ops.host(rk4(ops, ops.asarray(x0), args.kappa, steps=args.spinup))
        self.truth0 = x0[0]
        self.ens0 = x0[1:].reshape(k, self.N)
        self.obs_flat, idx, w, self.p_loc = network(ny, nx, args.stride, args.loc)
        self.analysis = Analysis(ops, self.obs_flat, idx, w, args.sigma_o, args.infl, args.form)
        self.rng = rng

    def truth_and_obs(self, cycles):
        """The truth after each analysis interval and its noisy observations."""
        ops, a = self.ops, self.args
        x = ops.asarray(self.truth0)
        truth, obs = [], []
        for _ in range(cycles):
            x = rk4(ops, x, a.kappa, steps=a.interval)
            xt = ops.host(x).ravel()
            truth.append(xt)
            obs.append(xt[self.obs_flat] + a.sigma_o * self.rng.standard_normal(self.obs_flat.size))
        return np.array(truth), np.array(obs)

    def forecast(self, E):
        a = self.args
        X = E.reshape(E.shape[0], a.ny, a.nx)
        return rk4(self.ops, X, a.kappa, steps=a.interval).reshape(E.shape[0], self.N)

    def run(self, truth, obs, solver, free=True):
        """Cycles of forecast + analysis; the RMSE of the analysis mean, of the
        free run's mean (the same ensemble, no analyses) and the spread."""
        ops = self.ops
        E = ops.asarray(self.ens0)
        F = ops.asarray(self.ens0)
        rmse_a, rmse_f, rmse_free, spread = [], [], [], []
        for c in range(len(truth)):
            E = self.forecast(E)
            rmse_f.append(rms(ops.host(E.mean(0)) - truth[c]))
            E = self.analysis(E, ops.asarray(obs[c]), solver)
            rmse_a.append(rms(ops.host(E.mean(0)) - truth[c]))
            spread.append(float(np.sqrt(ops.host(((E - E.mean(0)) ** 2).mean(0)).mean())))
            if free:
                F = self.forecast(F)
                rmse_free.append(rms(ops.host(F.mean(0)) - truth[c]))
        return E, dict(analysis=rmse_a, forecast=rmse_f, free=rmse_free, spread=spread)


def rms(x):
    return float(np.sqrt(np.mean(np.square(x))))


# ---------------------------------------------------------------------------
# CPU: the assertion

def cpu_main(args):
    ops = benchutil.NumpyOps()
    exp = Experiment(ops, args)
    truth, obs = exp.truth_and_obs(args.cycles)
    solvers = engines(ops, args.form)
    t0 = time.perf_counter()
    _, hist = exp.run(truth, obs, solvers["bsvd"])
    t_run = time.perf_counter() - t0
    a, free = np.array(hist["analysis"]), np.array(hist["free"])
    p = exp.p_loc
    print(f"LETKF on a {args.ny} x {args.nx} Lorenz-96 channel: {args.members} members, "
          f"{exp.obs_flat.size} observations (sigma_o {args.sigma_o}), "
          f"{p.min()}-{p.max()} local observations per point, {args.cycles} cycles, "
          f"form {args.form}: {exp.N} SVDs of up to {exp.analysis.idx.shape[1]} x {args.members} "
          f"per analysis, in {t_run:.2f} s")
    for c in sorted(set([0, 1, 2, 4, 9, 19, 39, 79, args.cycles - 1]) & set(range(args.cycles))):
        print(f"  cycle {c + 1:3d}: analysis RMSE {a[c]:.3f}  forecast {hist['forecast'][c]:.3f}  "
              f"free run {free[c]:.3f}  spread {hist['spread'][c]:.3f}")
    late = a[args.cycles // 2:].mean()
    late_free = free[args.cycles // 2:].mean()
    print(f"  mean over the second half: analysis {late:.3f}, free run {late_free:.3f}, "
          f"observation error {args.sigma_o:.3f}")

    # One analysis by every engine and both forms, from the same forecast.
    E = exp.forecast(ops.asarray(exp.ens0))
    yo = obs[0]
    timing = {}
    ref = None
    for name, solver in solvers.items():
        t0 = time.perf_counter()
        Xa = exp.analysis(E, yo, solver)
        timing[name] = time.perf_counter() - t0
        ref = Xa if ref is None else ref
        dev = np.abs(Xa - ref).max()
        print(f"  one analysis with {name:<18} {1e3 * timing[name]:7.1f} ms, "
              f"max |Xa - Xa_bsvd| = {dev:.1e}")
    other = "obs" if args.form == "ens" else "ens"
    alt = Analysis(ops, exp.obs_flat, exp.analysis.idx, (exp.analysis.sw * args.sigma_o) ** 2,
                   args.sigma_o, args.infl, other)
    Xa_alt = alt(E, yo, engines(ops, other)["bsvd"])
    dev_form = np.abs(Xa_alt - ref).max()
    print(f"  the {other} form (SVD of the {alt.idx.shape[1]}-square S = I + C C^T per point): "
          f"max |Xa_{other} - Xa_{args.form}| = {dev_form:.1e}")
    dev_engine = max(np.abs(exp.analysis(E, yo, s) - ref).max() for s in solvers.values())

    falls = a[-1] < 0.25 * a[0] and late < a[:3].mean()
    ok = (late < args.sigma_o and late < 0.3 * late_free and falls
          and dev_engine < 1e-9 and dev_form < 1e-9)
    print(f"analysis RMSE {a[0]:.3f} -> {late:.3f} (second-half mean): below sigma_o "
          f"{args.sigma_o}: {late < args.sigma_o}, below 0.3 x free run {late_free:.3f}: "
          f"{late < 0.3 * late_free}, falling: {falls}")
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
    rows = []
    budget = args.budget
    exp = Experiment(ops, args)
    truth, obs = exp.truth_and_obs(args.cycles)
    p = exp.p_loc
    t0 = time.perf_counter()
    _, hist = exp.run(truth, obs, engines(ops, "ens")["bsvd"], free=True)
    torch.cuda.synchronize()
    print(f"GPU LETKF, {args.ny} x {args.nx} grid ({exp.N} points), {args.members} members, "
          f"{exp.obs_flat.size} observations, {p.min()}-{p.max()} local per point: "
          f"{args.cycles} cycles with bsvd (ens form) in {time.perf_counter() - t0:.1f} s; "
          f"analysis RMSE {hist['analysis'][0]:.3f} -> {hist['analysis'][-1]:.3f}, "
          f"free run {hist['free'][-1]:.3f}")

    E = exp.forecast(ops.asarray(exp.ens0))
    yo = ops.asarray(obs[0])
    sync = torch.cuda.synchronize
    host_ops = benchutil.NumpyOps()
    for form in args.forms:
        an = Analysis(ops, exp.obs_flat, exp.analysis.idx.cpu().numpy(),
                      (exp.analysis.sw.cpu().numpy() * args.sigma_o) ** 2, args.sigma_o,
                      args.infl, form)
        C, d = an.local(E, yo)
        A = C if form == "ens" else torch.eye(C.shape[-2], dtype=C.dtype, device=C.device) + \
            C @ C.swapaxes(-1, -2)
        m, n = A.shape[-2:]
        case = f"{form} {args.ny}x{args.nx} k{args.members}"
        # The rest of the step (forecast, gathers, products): the step with the
        # decomposition replaced by its stored result.
        solvers = engines(ops, form, with_jax=jax is not None)
        stored = solvers["bsvd"](A)
        rest = benchutil.time_call(lambda: an(exp.forecast(E), yo, lambda _: stored), sync,
                                   reps=5, budget_s=budget)
        rows.append(benchutil.row("enkf", case, "rest of step", "cuda", rest, batch=exp.N, m=m,
                                  n=n, what="rest"))
        full = benchutil.time_call(lambda: an(exp.forecast(E), yo, solvers["bsvd"]), sync,
                                   reps=5, budget_s=budget)
        rows.append(benchutil.row("enkf", case, "bsvd", "cuda", full, batch=exp.N, m=m, n=n,
                                  what="step"))
        Xa_ref = ops.host(an(E, yo, solvers["bsvd"]))
        for name, solver in solvers.items():
            with benchutil.guard(rows, "enkf", case, name, "cuda", what="decomposition"):
                res = benchutil.time_scaled(lambda cnt, s=solver: (lambda: s(A[:cnt])), exp.N, sync,
                                            budget_s=budget, probe=max(1, exp.N // 64),
                                            allow_scale=name != "bsvd")
                dev = float(np.abs(ops.host(an(E, yo, solver)) - Xa_ref).max()) \
                    if "scaled_from" not in res else None
                rows.append(benchutil.row("enkf", case, name, "cuda", res, batch=exp.N, m=m, n=n,
                                          what="decomposition", max_dev_from_bsvd=dev))
                step = {"ms": rest["ms"] + res["ms"], "reps": res["reps"]}
                if "scaled_from" in res:
                    step["scaled_from"] = res["scaled_from"]
                if name != "bsvd":
                    rows.append(benchutil.row("enkf", case, name, "cuda", step, batch=exp.N,
                                              m=m, n=n, what="step", composed=True))
        # The exact local matrices (p_loc rows, or p_loc square), not padded:
        # one variable-size call, as the paper's batch of different sizes.
        pl = exp.p_loc
        exact = [A[g, :pl[g]] if form == "ens" else A[g, :pl[g], :pl[g]] for g in range(exp.N)]
        with benchutil.guard(rows, "enkf", case, "bsvd.svd_batch (exact sizes)", "cuda"):
            res = benchutil.time_scaled(
                lambda cnt: (lambda: bsvd.svd_batch(exact[:cnt], full_matrices=False)), exp.N, sync,
                budget_s=budget, allow_scale=False)
            rows.append(benchutil.row("enkf", case, "bsvd.svd_batch (exact sizes)", "cuda", res,
                                      batch=exp.N, m=m, n=n, what="decomposition"))
        # The CPU as the field runs it: LAPACK through NumPy on the host.
        Ah = A.cpu().numpy()
        for name, solver in engines(host_ops, form).items():
            if name == "bsvd" and not args.cpu_bsvd:
                continue
            with benchutil.guard(rows, "enkf", case, name, "cpu", what="decomposition"):
                res = benchutil.time_scaled(lambda cnt, s=solver: (lambda: s(Ah[:cnt])), exp.N,
                                            lambda: None, budget_s=budget,
                                            probe=max(1, exp.N // 256))
                rows.append(benchutil.row("enkf", case, name, "cpu", res, batch=exp.N, m=m, n=n,
                                          what="decomposition"))
    benchutil.print_rows(rows, keys=("case", "engine", "device", "what", "ms"))
    meta = benchutil.meta("enkf", grid=[args.ny, args.nx], members=args.members,
                          observations=int(exp.obs_flat.size), p_loc=[int(p.min()), int(p.max())],
                          loc_halfwidth=args.loc, sigma_o=args.sigma_o, inflation=args.infl,
                          dtype="float64", rmse=hist)
    benchutil.write_json(args.json, rows, meta)
    ok = hist["analysis"][-1] < args.sigma_o and hist["analysis"][-1] < 0.3 * hist["free"][-1]
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpu", action="store_true", help="time bsvd against the baselines on the GPU")
    ap.add_argument("--json", help="--gpu: write the rows here")
    ap.add_argument("--nx", type=int)
    ap.add_argument("--ny", type=int)
    ap.add_argument("--members", type=int, help="ensemble size k")
    ap.add_argument("--stride", type=int, help="observe every stride-th point in i and j")
    ap.add_argument("--loc", type=float,
                    help="Gaspari-Cohn half-width (grid points); cutoff twice that")
    ap.add_argument("--infl", type=float, default=1.05, help="multiplicative inflation rho")
    ap.add_argument("--sigma-o", type=float, default=1.0, help="observation error (std)")
    ap.add_argument("--kappa", type=float, default=0.5, help="diffusion between rows")
    ap.add_argument("--cycles", type=int)
    ap.add_argument("--interval", type=int, default=1, help="model steps (dt 0.05) per analysis")
    ap.add_argument("--spinup", type=int, default=300)
    ap.add_argument("--form", choices=("ens", "obs"), default="ens")
    ap.add_argument("--forms", default="ens,obs", help="--gpu: the forms to time")
    ap.add_argument("--budget", type=float, default=4.0, help="--gpu: seconds per timed engine")
    ap.add_argument("--no-jax", action="store_true")
    ap.add_argument("--cpu-bsvd", action="store_true", help="--gpu: also time bsvd's CPU backend")
    args = ap.parse_args(argv)
    # CPU: small and quick. GPU: sizes after the paper's per-point matrices (README.md).
    small = dict(nx=40, ny=8, members=20, stride=1, loc=2.0, cycles=30)
    large = dict(nx=64, ny=32, members=64, stride=1, loc=5.0, cycles=30)
    for key, val in (large if args.gpu else small).items():
        if getattr(args, key) is None:
            setattr(args, key, val)
    args.forms = [f for f in args.forms.split(",") if f]
    return gpu_main(args) if args.gpu else cpu_main(args)


if __name__ == "__main__":
    raise SystemExit(main())
