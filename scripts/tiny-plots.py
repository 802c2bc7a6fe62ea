#!/usr/bin/env python3
"""Plots and the table of docs/perf/tiny.md from the bench JSON rows of the
register tier (scripts/gpu-check.sh, part tiny): for each precision, time
per call against the batch size for every n of the rows (2 ... 32), the
library's route now (auto) beside the route without the tier
(BSVD_TINY_MAX_DIM=0).

  scripts/tiny-plots.py RAW_DIR PREFIX IMG_DIR   (prints the markdown table)
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

raw, prefix, img = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(img, exist_ok=True)
rows = {}
for p in "sdcz":
    for cap in ("auto", "0"):
        f = os.path.join(raw, f"{prefix}bench-{p}-tiny-{cap}.json")
        if os.path.exists(f):
            for r in json.load(open(f)):
                rows[(p, cap, r["batch"], r["n"])] = r
batches = [1, 10, 100, 1000, 10000, 100000, 1000000]
sizes = sorted({k[3] for k in rows})
for p in "sdcz":
    if not any(k[0] == p for k in rows):
        continue
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for n in sizes:
        xs = [b for b in batches if (p, "auto", b, n) in rows and (p, "0", b, n) in rows]
        if not xs:
            continue
        line, = ax.plot(xs, [rows[(p, "auto", b, n)]["ms"] for b in xs], "-o", ms=3,
                        label=f"n={n}")
        ax.plot(xs, [rows[(p, "0", b, n)]["ms"] for b in xs], "--", color=line.get_color(),
                lw=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("matrices per call")
    ax.set_ylabel("ms per call (U, S, V)")
    ax.set_title(f"{p}: solid = route with the register tier, dashed = without (H100)")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(True, which="both", lw=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(img, f"batch-sweep-{p}.png"), dpi=110)
    plt.close(fig)

print("| p | n | " + " | ".join(f"{b:g}" for b in batches) + " |")
print("|---|---|" + "---|" * len(batches))
for p in "sdcz":
    for n in sizes:
        cells = []
        for b in batches:
            a, f = rows.get((p, "auto", b, n)), rows.get((p, "0", b, n))
            if not a or not f:
                cells.append("")
                continue
            ok = "" if a["pass"] else " FAIL"
            cells.append(f"{a['ms']:.3g} / {f['ms']:.3g}{ok}")
        if any(cells):
            print(f"| {p} | {n} | " + " | ".join(cells) + " |")
