#!/usr/bin/env python3
"""The plot of docs/perf/multi-gpu.md from `bsvd bench --devices` JSON rows:
per case, the device-resident solve on one GPU (bsvd-cuda), the host-data
call on one GPU (bsvd-cuda-host) and over the listed GPUs
(bsvd-cuda-host-devices), one bar group per case and file.

  scripts/multi-gpu-plot.py OUT.png LABEL=FILE.json [LABEL=FILE.json ...]
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SOLVERS = [("bsvd-cuda", "device data, 1 GPU"), ("bsvd-cuda-host", "host data, 1 GPU"),
           ("bsvd-cuda-host-devices", "host data, the GPUs listed")]


def main():
    out, runs = sys.argv[1], [a.split("=", 1) for a in sys.argv[2:]]
    groups = []  # (label, {solver: ms})
    for label, path in runs:
        rows = json.load(open(path))
        cases = []
        for r in rows:
            key = f"{r['precision']} {r['batch']}x{r['m']}x{r['n']}"
            if key not in cases:
                cases.append(key)
        for key in cases:
            ms = {r["solver"]: r["ms"] for r in rows
                  if f"{r['precision']} {r['batch']}x{r['m']}x{r['n']}" == key and r["ms"] > 0}
            groups.append((f"{key}\n{label}", ms))
    fig, ax = plt.subplots(figsize=(1.9 * len(groups) + 1, 4))
    width = 0.8 / len(SOLVERS)
    for j, (solver, name) in enumerate(SOLVERS):
        xs = [i + (j - 1) * width for i in range(len(groups))]
        ys = [g[1].get(solver, 0) / 1e3 for g in groups]
        ax.bar(xs, ys, width, label=name)
        for x, y in zip(xs, ys):
            if y:
                ax.text(x, y, f"{y:.2f}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(groups)), [g[0] for g in groups], fontsize=8)
    ax.set_ylabel("s per call (median)")
    ax.set_title("bsvd over several H100s: host data with vectors (copies included)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
