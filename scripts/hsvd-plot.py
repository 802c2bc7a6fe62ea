#!/usr/bin/env python3
"""The plot and the table of docs/perf/hsvd.md from `bsvd bench --hsvd`
JSON rows (tools/bench/bench_hsvd.cu): per precision and case, bsvd's
hyperbolic SVD against bsvd's SVD of the same matrices and cuSOLVER's
batched eigensolvers on the formed H = G J G^H. The plot shows each
solver's time over the HSVD's (above 1: the HSVD is faster; the dashed line
at 1/1.3 is the issue's bound for the SVD; looped syevd is in the table
only); the table goes to stdout as Markdown: times in ms and those ratios.

  scripts/hsvd-plot.py OUT.png BENCH.json [BENCH.json ...]
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SOLVERS = [("bsvd-cuda", "bsvd HSVD"), ("bsvd-cuda-svd", "bsvd SVD of G"),
           ("cusolver-syevjBatched", "H formed + syevjBatched"),
           ("cusolver-XsyevBatched", "H formed + XsyevBatched"),
           ("cusolver-syevd-loop", "H formed + syevd, looped")]
PLOTTED = SOLVERS[:4]


def load(paths):
    rows = []
    for p in paths:
        rows += json.load(open(p))
    return rows


def main():
    out, paths = sys.argv[1], sys.argv[2:]
    rows = load(paths)
    precs = [p for p in "dscz" if any(r["precision"] == p for r in rows)]
    fig, axes = plt.subplots(1, len(precs), figsize=(4.2 * len(precs), 4), squeeze=False)
    print("| p | batch × m × n | " + " | ".join(lbl for _, lbl in SOLVERS) + " |")
    print("|---|---|" + "---|" * len(SOLVERS))
    for ax, p in zip(axes[0], precs):
        cases = []
        for r in rows:
            key = (r["batch"], r["m"], r["n"])
            if r["precision"] == p and key not in cases:
                cases.append(key)
        ms = {(r["solver"], (r["batch"], r["m"], r["n"])): r["ms"] for r in rows
              if r["precision"] == p}
        width = 0.6 / len(PLOTTED)
        marks = "o^sv"
        for i, (s, lbl) in enumerate(PLOTTED[1:]):
            xs = [c + (i - (len(PLOTTED) - 2) / 2) * width for c in range(len(cases))]
            ys = [(ms.get((s, k), 0) / ms[("bsvd-cuda", k)])
                  if ms.get((s, k), 0) and ms.get(("bsvd-cuda", k), 0) else float("nan")
                  for k in cases]
            ax.plot(xs, ys, marks[i], ms=7, ls="none", label=lbl)
        ax.axhline(1, color="k", lw=0.8)
        ax.axhline(1 / 1.3, color="gray", lw=0.8, ls="--")
        ax.set_yscale("log")
        ax.set_ylim(0.2, 4)
        ax.set_xticks(range(len(cases)))
        ax.set_xticklabels([f"{b}×{m}²" if m == n else f"{b}×{m}×{n}" for b, m, n in cases],
                           rotation=30, fontsize=8)
        ax.set_title(f"{p}: time / bsvd HSVD's (H100)", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        for k in cases:
            h = ms.get(("bsvd-cuda", k), 0)
            cells = []
            for s, _ in SOLVERS:
                t = ms.get((s, k), 0)
                if not t:
                    cells.append("–")
                elif s == "bsvd-cuda" or not h:
                    cells.append(f"{t:.3g}")
                else:
                    cells.append(f"{t:.3g} ({t / h:.2f}×)")
            print(f"| {p} | {k[0]} × {k[1]} × {k[2]} | " + " | ".join(cells) + " |")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
