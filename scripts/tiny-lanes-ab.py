#!/usr/bin/env python3
"""The register tier's A/B table (docs/perf/tiny.md): one thread per matrix,
the lanes variant and the fused kernel, from gpu-check.sh's `lanes` part.

  scripts/tiny-lanes-ab.py DIR [PREFIX] [--plot PNG]
                                # reads DIR/PREFIXbench-P-lanes-MODE.json
Prints a markdown table per precision: ms of each, lanes / best other, and
the winner; rows whose check failed are marked. --plot draws lanes / fused
against n, a panel per precision, a line per batch (matplotlib).
"""
import json
import os
import sys

MODES = ("thread", "lanes", "fused")


def load(path):
    rows = {}
    if not os.path.exists(path):
        return rows
    for r in json.load(open(path)):
        if r.get("solver") != "bsvd-cuda":
            continue
        rows[(r["n"], r["batch"])] = r
    return rows


def plot(png, tables):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    precs = [p for p in tables if tables[p]["lanes"] and tables[p]["fused"]]
    fig, axes = plt.subplots(1, len(precs), figsize=(4.2 * len(precs), 3.6), squeeze=False)
    for ax, p in zip(axes[0], precs):
        lanes, fused = tables[p]["lanes"], tables[p]["fused"]
        for batch in sorted({k[1] for k in lanes}):
            ns = sorted(k[0] for k in lanes if k[1] == batch and k in fused)
            ax.plot(ns, [lanes[(n, batch)]["ms"] / fused[(n, batch)]["ms"] for n in ns], "o-",
                    ms=3, label=f"{batch:,} matrices")
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.set_title(f"{p}: lanes / fused kernel (time)")
        ax.set_xlabel("n (n x n, U S V written)")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("< 1: the lanes variant is faster")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main():
    args = sys.argv[1:]
    png = None
    if "--plot" in args:
        i = args.index("--plot")
        png = args[i + 1]
        del args[i:i + 2]
    d = args[0]
    pre = args[1] if len(args) > 1 else ""
    tables = {}
    for p in "dszc":
        data = {m: load(os.path.join(d, f"{pre}bench-{p}-lanes-{m}.json")) for m in MODES}
        tables[p] = data
        keys = sorted(set().union(*[set(v) for v in data.values()]))
        if not keys:
            continue
        print(f"\n## {p}\n")
        print("| n | batch | thread ms | lanes ms | fused ms | lanes / best other | best |")
        print("|---|---|---|---|---|---|---|")
        for k in keys:
            ms = {}
            cells = []
            for m in MODES:
                r = data[m].get(k)
                if r is None:
                    cells.append("—")
                    continue
                ms[m] = r["ms"]
                cells.append(f"{r['ms']:.4g}" + ("" if r.get("pass", True) else " FAIL"))
            other = [ms[m] for m in ("thread", "fused") if m in ms]
            ratio = f"{ms['lanes'] / min(other):.2f}" if "lanes" in ms and other else "—"
            best = min(ms, key=ms.get) if ms else "—"
            print(f"| {k[0]} | {k[1]} | " + " | ".join(cells) + f" | {ratio} | {best} |")
    if png:
        plot(png, tables)


if __name__ == "__main__":
    main()
