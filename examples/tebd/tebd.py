#!/usr/bin/env python3
"""Ground states of transverse-field Ising chains by imaginary-time TEBD on
matrix product states, with every bond of a Trotter layer, in every chain,
truncated by one batched SVD and bsvd.truncate.

The model. An open chain of L spins,

    H = -J sum_i Z_i Z_{i+1} - h sum_i X_i,

for several fields h at once (a scan across the critical point h = J, the
use a phase-diagram study makes of TEBD). Its ground-state energy is known
exactly from the free-fermion solution: with M the L x L bidiagonal matrix
of h on the diagonal and J above it, E_0 = -(sum of the singular values of
M) (Pfeuty 1970; Lieb, Schultz & Mattis 1961).

The method. The state is a matrix product state in Vidal's form, kept as
B_i = Gamma_i Lambda_i (right-canonical tensors) and the bond singular
values Lambda_i. Imaginary-time evolution exp(-tau H) by the second-order
Trotter split H = H_even + H_odd (half a step on the even bonds, a step on
the odd, half on the even) drives a random product state to the ground
state. A bond update (Hastings' inverse-free form, 2009):

    Phi   = G (B_i B_{i+1})                  (the two-site gate applied)
    theta = Lambda_{i-1} Phi  =  X diag(s) Y    (SVD; a (2 chi) x (2 chi) matrix)
    cut: keep the r <= chi largest s with discarded weight
         sqrt(s_{r+1}^2 + ...) <= cut * ||s||          (bsvd.truncate, norm="fro")
    B_{i+1} = Y[:r],  B_i = Phi Y[:r]^T / ||s_r||,  Lambda_i = s_r / ||s_r||

The bonds of one layer do not touch, so all of them, in all chains, form
one batch: every MPS tensor is stored padded to chi x 2 x chi (zeros
beyond its bond dimension), every theta is a (2 chi) x (2 chi) matrix, and
the zero padding gives zero singular values that the cut removes.

    python3 examples/tebd/tebd.py              # CPU: L = 16, chi = 16, h = 0.5, 1, 1.5 (seconds)
    python3 examples/tebd/tebd.py --gpu --json out.json   # the GPU measurement (README.md)

The CPU run asserts each chain's energy against E_0 (relative error below
1e-6) and ends with OK.
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

PAULI_X = np.array([[0.0, 1.0], [1.0, 0.0]])
PAULI_Z = np.array([[1.0, 0.0], [0.0, -1.0]])


def exact_energy(L, J, h):
    """E_0 of the open chain from its free-fermion modes: minus the sum of
    the singular values of the bidiagonal (h on the diagonal, J above)."""
    M = np.diag(np.full(L, float(h))) + np.diag(np.full(L - 1, float(J)), 1)
    return -np.linalg.svd(M, compute_uv=False).sum()


def bond_hamiltonians(L, J, hs):
    """h_b (chains, L-1, 4, 4) with sum_b h_b = H: the field of a site is
    shared by its bonds (an end site has one)."""
    ZZ = np.kron(PAULI_Z, PAULI_Z)
    XI, IX = np.kron(PAULI_X, np.eye(2)), np.kron(np.eye(2), PAULI_X)
    out = np.empty((len(hs), L - 1, 4, 4))
    for c, h in enumerate(hs):
        for b in range(L - 1):
            wl = 1.0 if b == 0 else 0.5
            wr = 1.0 if b + 1 == L - 1 else 0.5
            out[c, b] = -J * ZZ - h * (wl * XI + wr * IX)
    return out


def gates(hb, tau):
    """exp(-tau h_b) as (chains, bonds, 2, 2, 2, 2) [s', t', s, t]."""
    w, v = np.linalg.eigh(hb)
    G = (v * np.exp(-tau * w)[..., None, :]) @ np.swapaxes(v, -1, -2)
    return G.reshape(hb.shape[:-2] + (2, 2, 2, 2))


class MPS:
    """B (chains, L, chi, 2, chi) and Lam (chains, L+1, chi): Lam[:, i] sits
    on the bond left of site i; Lam[:, 0] and Lam[:, L] are the trivial
    boundaries (1, 0, 0, ...)."""

    def __init__(self, ops, chains, L, chi):
        # The product state |+ + ... +> (every X = +1). H commutes with the
        # parity prod_i X_i and this state is even, so the evolution stays in
        # the even sector, where the ground state is: the time to converge
        # is set by the gap to the lowest even excitation (two fermion modes),
        # not by the near-degeneracy of the two sectors for h < J or by the
        # one-mode gap ~ pi/L at h = J.
        B = np.zeros((chains, L, chi, 2, chi))
        B[:, :, 0, :, 0] = 1 / math.sqrt(2)
        lam = np.zeros((chains, L + 1, chi))
        lam[:, :, 0] = 1.0
        self.ops, self.L, self.chi = ops, L, chi
        self.B, self.Lam = ops.asarray(B), ops.asarray(lam)
        self.discarded = 0.0


def layer(mps, G, bonds, svd, cut):
    """Apply the gates G (chains, len(bonds), 2, 2, 2, 2) to the given bonds
    (non-touching) of every chain: one batched SVD."""
    ops, chi = mps.ops, mps.chi
    b = ops.index(bonds)
    Bi, Bj = mps.B[:, b], mps.B[:, b + 1]                     # (c, n, chi, 2, chi)
    Phi = ops.einsum("cnasb,cnbtd->cnastd", Bi, Bj)
    Phi = ops.einsum("cnuvst,cnastd->cnauvd", G, Phi)
    theta = mps.Lam[:, b][..., :, None, None, None] * Phi
    c, n = theta.shape[:2]
    M = theta.reshape(c * n, 2 * chi, 2 * chi)
    U, S, Vh = svd(M)
    # The rank cut: at most chi kept, the discarded weight below cut * ||s||.
    _, S, Vh, rank = bsvd.truncate(None, S, Vh, rtol=cut, max_rank=chi, norm="fro")
    r = S.shape[-1]
    norm = ops.sqrt((S * S).sum(-1))
    S = S / norm[:, None]
    # B_{i+1} = Y (padded back to chi rows), B_i = Phi Y^T / norm.
    Y = ops.cat([Vh, ops.zeros((c * n, chi - r, 2 * chi))], 1) if r < chi else Vh
    Bi_new = (Phi.reshape(c * n, 2 * chi, 2 * chi) @ Y.swapaxes(-1, -2)) / norm[:, None, None]
    mps.B[:, b] = Bi_new.reshape(c, n, chi, 2, chi)
    mps.B[:, b + 1] = Y.reshape(c, n, chi, 2, chi)
    lam = ops.cat([S, ops.zeros((c * n, chi - r))], 1) if r < chi else S
    mps.Lam[:, b + 1] = lam.reshape(c, n, chi)
    return rank


def trotter_step(mps, G_half_even, G_odd, svd, cut):
    L = mps.L
    even, odd = np.arange(0, L - 1, 2), np.arange(1, L - 1, 2)
    layer(mps, G_half_even, even, svd, cut)
    layer(mps, G_odd, odd, svd, cut)
    return layer(mps, G_half_even, even, svd, cut)


def energies(mps, hb):
    """<psi|H|psi> / <psi|psi> per chain, by exact contraction of the MPS
    (transfer matrices from both ends; no canonical form assumed)."""
    ops = mps.ops
    B = mps.B
    c, L, chi = B.shape[0], mps.L, mps.chi
    e0 = np.zeros((chi, chi))
    e0[0, 0] = 1.0
    left = [ops.asarray(np.broadcast_to(e0, (c, chi, chi)).copy())]
    for i in range(L - 1):
        left.append(ops.einsum("cab,casd,cbse->cde", left[-1], B[:, i], B[:, i]))
    right = [None] * (L + 1)
    right[L] = ops.asarray(np.broadcast_to(e0, (c, chi, chi)).copy())
    for i in range(L - 1, 0, -1):
        right[i] = ops.einsum("casd,cbse,cde->cab", B[:, i], B[:, i], right[i + 1])
    norm = ops.einsum("cab,casd,cbse,cde->c", left[0], B[:, 0], B[:, 0], right[1])
    h4 = ops.asarray(hb.reshape(c, L - 1, 2, 2, 2, 2))
    E = 0
    for i in range(L - 1):
        two = ops.einsum("casd,cdte->caste", B[:, i], B[:, i + 1])    # the two sites, ket
        Ht = ops.einsum("cuvst,caste->cauve", h4[:, i], two)
        E = E + ops.einsum("cab,cauve,cbuvf,cef->c", left[i], Ht, two, right[i + 2])
    return ops.host(E / norm)


def schedule(steps):
    """(tau, steps) stages: most of the imaginary time at tau = 0.1 to reach
    the ground state (the error falls as exp(-gap * time)), then smaller
    steps to remove the Trotter error (O(tau^2))."""
    first = max(1, int(0.6 * steps))
    rest = max(1, (steps - first) // 4)
    return [(0.1, first)] + [(t, rest) for t in (0.05, 0.02, 0.01, 0.005)]


def evolve(ops, args, svd, hs, report=None):
    mps = MPS(ops, len(hs), args.L, args.chi)
    hb = bond_hamiltonians(args.L, args.J, hs)
    even, odd = np.arange(0, args.L - 1, 2), np.arange(1, args.L - 1, 2)
    ranks = None
    for tau, n in schedule(args.steps):
        Ge = ops.asarray(gates(hb[:, even], tau / 2))
        Go = ops.asarray(gates(hb[:, odd], tau))
        for _ in range(n):
            ranks = trotter_step(mps, Ge, Go, svd, args.cut)
        if report:
            report(tau, mps, hb)
    return mps, hb, ranks


def svd_engines(ops, with_jax=False):
    """name -> f(M): (U, S, Vh) of the reduced SVD, in the array's library."""
    out = {"bsvd": lambda M: bsvd.svd(M, full_matrices=False)}
    if ops.name == "numpy":
        out["numpy.linalg.svd"] = lambda M: np.linalg.svd(M, full_matrices=False)
    else:
        t = ops.t
        out["torch.linalg.svd"] = lambda M: t.linalg.svd(M, full_matrices=False)
        if with_jax:
            import jax.numpy as jnp

            def jax_svd(M):
                res = jnp.linalg.svd(benchutil.to_jax(M), full_matrices=False)
                return tuple(benchutil.to_torch(r.block_until_ready()) for r in res)
            out["jax.numpy.linalg.svd"] = jax_svd
    return out


def cpu_main(args):
    ops = benchutil.NumpyOps()
    hs = args.fields
    exact = np.array([exact_energy(args.L, args.J, h) for h in hs])
    engines = svd_engines(ops)

    def report(tau, mps, hb):
        err = np.abs(energies(mps, hb) - exact) / np.abs(exact)
        print(f"  after the tau = {tau:<5} stage, relative energy error per chain: "
              + ", ".join(f"{e:.1e}" for e in err))
    t0 = time.perf_counter()
    mps, hb, ranks = evolve(ops, args, engines["bsvd"], hs, report)
    t_evolve = time.perf_counter() - t0
    E = energies(mps, hb)
    steps = sum(n for _, n in schedule(args.steps))
    nb = len(range(0, args.L - 1, 2))
    print(f"TEBD, transverse-field Ising chains L = {args.L}, J = {args.J}, chi <= {args.chi}, "
          f"cut {args.cut:g} (discarded weight {args.cut**2:g}), {steps} second-order steps "
          f"in {t_evolve:.1f} s: {3 * steps} batched SVDs of {len(hs) * nb} matrices "
          f"{2 * args.chi} x {2 * args.chi}")
    for i, h in enumerate(hs):
        print(f"  h = {h:4.2f}: E = {E[i]:.10f}, exact E_0 = {exact[i]:.10f}, relative error "
              f"{abs(E[i] - exact[i]) / abs(exact[i]):.2e}, largest bond kept "
              f"{int(np.max(ranks.reshape(len(hs), -1)[i]))}")

    # One more step from the same state with each SVD: the same energies.
    even, odd = np.arange(0, args.L - 1, 2), np.arange(1, args.L - 1, 2)
    Ge, Go = gates(hb[:, even], 0.0025), gates(hb[:, odd], 0.005)
    B0, L0 = mps.B.copy(), mps.Lam.copy()
    after = {}
    for name, svd in engines.items():
        mps.B, mps.Lam = B0.copy(), L0.copy()
        t0 = time.perf_counter()
        trotter_step(mps, Ge, Go, svd, args.cut)
        after[name] = (energies(mps, hb), time.perf_counter() - t0)
    dev = np.abs(after["bsvd"][0] - after["numpy.linalg.svd"][0]).max()
    print(f"  one step: bsvd {1e3 * after['bsvd'][1]:.1f} ms, numpy.linalg.svd "
          f"{1e3 * after['numpy.linalg.svd'][1]:.1f} ms; max |E_bsvd - E_numpy| = {dev:.1e}")
    err = np.abs(E - exact) / np.abs(exact)
    ok = bool(np.all(err < args.tol)) and dev < 1e-10
    print(f"worst relative energy error {err.max():.2e} (tolerance {args.tol:g})")
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


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
    hs = args.fields
    exact = np.array([exact_energy(args.L, args.J, h) for h in hs])
    engines = svd_engines(ops, with_jax=jax is not None)
    sync = torch.cuda.synchronize
    t0 = time.perf_counter()
    mps, hb, ranks = evolve(ops, args, engines["bsvd"], hs)
    sync()
    t_evolve = time.perf_counter() - t0
    E = energies(mps, hb)
    err = np.abs(E - exact) / np.abs(exact)
    steps = sum(n for _, n in schedule(args.steps))
    print(f"GPU TEBD: {len(hs)} chains of L = {args.L}, chi <= {args.chi}, {steps} steps with "
          f"bsvd in {t_evolve:.1f} s; worst relative energy error {err.max():.2e}")

    # One Trotter step from the converged state, per engine; the SVD stage
    # alone on the layer's batch too (slow baselines: a slice, scaled).
    rows = []
    chi = args.chi
    even, odd = np.arange(0, args.L - 1, 2), np.arange(1, args.L - 1, 2)
    Ge = ops.asarray(gates(hb[:, even], 0.005 / 2))
    Go = ops.asarray(gates(hb[:, odd], 0.005))
    b = ops.index(even)
    Phi = ops.einsum("cnasb,cnbtd->cnastd", mps.B[:, b], mps.B[:, b + 1])
    M = (mps.Lam[:, b][..., :, None, None, None] * Phi).reshape(-1, 2 * chi, 2 * chi).contiguous()
    batch = M.shape[0]
    case = f"L{args.L} chi{chi} x{len(hs)}"
    snapshot = (mps.B.clone(), mps.Lam.clone())

    def one_step(svd):
        mps.B, mps.Lam = snapshot[0].clone(), snapshot[1].clone()
        trotter_step(mps, Ge, Go, svd, args.cut)

    S_ref = ops.host(engines["bsvd"](M)[1])
    for name, svd in engines.items():
        with benchutil.guard(rows, "tebd", case, name, "cuda", what="svd"):
            res = benchutil.time_scaled(lambda cnt, f=svd: (lambda: f(M[:cnt])), batch, sync,
                                        budget_s=args.budget, probe=max(1, batch // 32),
                                        allow_scale=name != "bsvd")
            dev = None
            if "scaled_from" not in res:
                dev = float(np.abs(ops.host(svd(M)[1]) - S_ref).max())
            rows.append(benchutil.row("tebd", case, name, "cuda", res, what="svd", batch=batch,
                                      m=2 * chi, n=2 * chi, max_dev_S_from_bsvd=dev))
            if "scaled_from" not in res:  # a whole step: three layers and the contractions
                st = benchutil.time_call(lambda f=svd: one_step(f), sync, reps=3,
                                         budget_s=args.budget)
                rows.append(benchutil.row("tebd", case, name, "cuda", st, what="step",
                                          batch=batch, m=2 * chi, n=2 * chi))
    # The same matrices at their exact sizes (2 r_left) x (2 r_right), the
    # bond dimensions the cut left, as one variable-size call.
    r_left = ops.host((mps.Lam[:, b] > 0).sum(-1)).ravel()
    r_right = ops.host((mps.Lam[:, b + 2] > 0).sum(-1)).ravel()
    theta = M.reshape(-1, chi, 2, 2, chi)
    mats = [theta[i, :rl, :, :, :rr].reshape(2 * rl, 2 * rr).contiguous()
            for i, (rl, rr) in enumerate(zip(r_left, r_right))]
    with benchutil.guard(rows, "tebd", case, "bsvd.svd_batch (exact sizes)", "cuda", what="svd"):
        res = benchutil.time_call(lambda: bsvd.svd_batch(mats, full_matrices=False), sync,
                                  reps=3, budget_s=args.budget)
        rows.append(benchutil.row("tebd", case, "bsvd.svd_batch (exact sizes)", "cuda", res,
                                  what="svd", batch=batch, m=2 * chi, n=2 * chi,
                                  bond_max=int(max(r_left.max(), r_right.max()))))
    Mh = M.cpu().numpy()
    with benchutil.guard(rows, "tebd", case, "numpy.linalg.svd", "cpu", what="svd"):
        res = benchutil.time_scaled(
            lambda cnt: (lambda: np.linalg.svd(Mh[:cnt], full_matrices=False)), batch,
            lambda: None, budget_s=args.budget, probe=max(1, batch // 64))
        rows.append(benchutil.row("tebd", case, "numpy.linalg.svd", "cpu", res, what="svd",
                                  batch=batch, m=2 * chi, n=2 * chi))
    benchutil.print_rows(rows, keys=("case", "engine", "device", "what", "ms"))
    meta = benchutil.meta("tebd", L=args.L, chi=chi, J=args.J, fields=list(hs), cut=args.cut,
                          steps=steps, energy=[float(e) for e in E],
                          exact=[float(e) for e in exact], dtype="float64")
    benchutil.write_json(args.json, rows, meta)
    ok = bool(np.all(err < args.gpu_tol))
    print(f"worst relative energy error {err.max():.2e} (tolerance {args.gpu_tol:g})")
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpu", action="store_true", help="time bsvd against the baselines on the GPU")
    ap.add_argument("--json", help="--gpu: write the rows here")
    ap.add_argument("--L", type=int, help="sites per chain (even)")
    ap.add_argument("--chi", type=int, help="largest bond dimension")
    ap.add_argument("--chains", type=int, help="fields h spread over [0.5, 1.5]")
    ap.add_argument("--J", type=float, default=1.0)
    ap.add_argument("--cut", type=float,
                    help="relative Frobenius cut: discarded weight below cut^2 (1e-6; --gpu 1e-8)")
    ap.add_argument("--steps", type=int, help="Trotter steps in all (five tau stages)")
    ap.add_argument("--tol", type=float, default=1e-6, help="CPU: relative energy tolerance")
    ap.add_argument("--gpu-tol", type=float, default=1e-3, help="--gpu: relative energy tolerance")
    ap.add_argument("--budget", type=float, default=4.0, help="--gpu: seconds per timed engine")
    ap.add_argument("--no-jax", action="store_true")
    args = ap.parse_args(argv)
    small = dict(L=16, chi=16, chains=3, steps=150, cut=1e-6)
    large = dict(L=64, chi=32, chains=16, steps=150, cut=1e-8)
    for key, val in (large if args.gpu else small).items():
        if getattr(args, key) is None:
            setattr(args, key, val)
    args.fields = list(np.linspace(0.5, 1.5, args.chains)) if args.chains > 1 else [1.0]
    return gpu_main(args) if args.gpu else cpu_main(args)


if __name__ == "__main__":
    raise SystemExit(main())
