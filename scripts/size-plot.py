#!/usr/bin/env python3
"""The plot of docs/perf/gram.md from `bsvd bench` JSON rows (random
matrices, with vectors): left, ms per 1000 matrices against n for bsvd (the
default path and the Gram preconditioning, precondition = 2), MAGMA's
batched Jacobi SVD (its times from a JSON of {"d": {n: ms}, "s": {...}},
measured outside this repository), cuSOLVER's gesvdaStrided (marked where it
fails T2) and looped gesvdj; right, the fraction of the precision's peak
(no tensor cores: FP64 33.5, FP32 66.9 TFLOP/s) that bsvd's counted flop
model reaches (tools/bench/bench.hpp: blocked_flops, gram_pre_flops).

  scripts/size-plot.py OUT.png MAGMA.json BENCH.json [BENCH.json ...]
"""
import json
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PEAK = {"d": 33.5e12, "s": 66.9e12}
LINES = [("bsvd-cuda", "bsvd (default)", "-o"), ("bsvd-cuda-gramev", "bsvd, precondition = 2", "-s"),
         ("magma", "MAGMA batched Jacobi", "--^"), ("cusolver-gesvdaStrided", "cuSOLVER gesvdaStrided", ":x"),
         ("cusolver-gesvdj-loop", "cuSOLVER gesvdj, looped", ":v")]


def blocked_flops(m, n, nb, vectors, sweeps):
    # tools/bench/cmd_bench.cpp, blocked_flops (real precisions)
    m, n = max(m, n), min(m, n)
    nblk = (n + nb - 1) // nb
    k = float(n) if nblk <= 1 else 2.0 * nb
    pairs = 1.0 if nblk <= 1 else 0.5 * nblk * (nblk - 1)
    gram = m * k * (k + 1)
    evd = (k - 1) * (k / 2) * 3 * 6 * k + 4 * k ** 3
    update = 2.0 * (m + (n if vectors else 0)) * k * k
    return sweeps * pairs * (gram + evd + update)


def gram_pre_flops(m, n, vectors):
    # tools/bench/cmd_bench.cpp, gram_pre_flops (real precisions)
    m, n = max(m, n), min(m, n)
    return 4.0 * m * n * n + 14.0 * n ** 3 + (2.0 * n ** 3 if vectors else 0)


def main():
    out, magma_path, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
    magma = json.load(open(magma_path))
    rows = [r for p in paths for r in json.load(open(p))]
    precs = [p for p in ("d", "s") if any(r["precision"] == p for r in rows)]
    fig, axes = plt.subplots(len(precs), 2, figsize=(11, 4 * len(precs)), squeeze=False)
    for i, p in enumerate(precs):
        ax, fx = axes[i]
        for solver, name, style in LINES:
            if solver == "magma":
                pts = sorted((int(n), ms) for n, ms in magma.get(p, {}).items())
                fails = []
            else:
                sel = [r for r in rows if r["precision"] == p and r["solver"] == solver and r["ms"] > 0
                       and r["m"] == r["n"]]
                pts = sorted((r["n"], r["ms"] * 1000.0 / r["batch"]) for r in sel)
                fails = [(r["n"], r["ms"] * 1000.0 / r["batch"]) for r in sel if not r["pass"]]
            if not pts:
                continue
            ax.plot([x for x, _ in pts], [y for _, y in pts], style, label=name)
            if fails:
                ax.plot([x for x, _ in fails], [y for _, y in fails], "o", mfc="none", mec="red", ms=11)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("n (n x n, random)")
        ax.set_ylabel("ms per 1000 matrices")
        ax.set_title(f"{p}: time (red circle: fails T1-T4)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        for solver, name, style in LINES[:2]:
            pts = []
            for r in rows:
                if r["precision"] != p or r["solver"] != solver or r["ms"] <= 0 or r["m"] != r["n"]:
                    continue
                mean = re.search(r"mean sweeps ([0-9.]+)", r["note"])
                if not mean or "fused" in r["note"]:
                    continue
                f = blocked_flops(r["m"], r["n"], 16, r["vectors"], float(mean.group(1)))
                if solver == "bsvd-cuda-gramev":
                    f += gram_pre_flops(r["m"], r["n"], r["vectors"])
                pts.append((r["n"], f * r["batch"] / (r["ms"] * 1e-3) / PEAK[p]))
            pts.sort()
            if pts:
                fx.plot([x for x, _ in pts], [100 * y for _, y in pts], style, label=name)
        fx.set_xscale("log", base=2)
        fx.set_xlabel("n")
        fx.set_ylabel(f"% of the {'FP64' if p == 'd' else 'FP32'} peak (counted flops)")
        fx.set_title(f"{p}: rate from the flop model")
        fx.grid(True, alpha=0.3)
        fx.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
