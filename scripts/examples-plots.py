#!/usr/bin/env python3
"""The plots and tables of docs/perf/examples.md from the JSON that the
application examples' --gpu modes write (examples/run_gpu_bench.sh):
{"meta": {...}, "rows": [{"example", "case", "engine", "device", "what",
"ms", ...}]}.

    scripts/examples-plots.py --table FILE.json ...        # Markdown tables to stdout
    scripts/examples-plots.py [--out docs/perf/img] FILE.json ...   # and the PNGs

For every (case, what) group of rows the reference is bsvd's row ("bsvd",
else the first engine whose name starts with "bsvd"); each other row's "bsvd speed-up" is
its time over that one (above 1: bsvd is faster). A row timed on a slice of
the batch and scaled says so; an EnKF step of a baseline is the measured
rest of the step plus the baseline's decomposition ("composed"). PNGs:
examples-<example>.png (times per engine, log scale) and, for the EnKF,
examples-enkf-rmse.png (the analysis error by cycle). Plotting needs
matplotlib; --table does not.
"""
from __future__ import annotations

import argparse
import json
import os
from collections import OrderedDict

ORDER = ("enkf", "tebd", "muon", "blr")
TITLES = {
    "enkf": "EnKF (LETKF), time per analysis step and per batched decomposition",
    "tebd": "TEBD, the SVDs of one Trotter layer and one step",
    "muon": "Muon / GaLore, orthogonalizing and projecting all layers' gradients",
    "blr": "BLR, compressing the blocks and recompressing A + B",
}


def load(paths):
    """example -> (meta, rows), the last file of an example winning."""
    out = {}
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        ex = d["meta"]["example"]
        out[ex] = (d["meta"], d["rows"])
    return OrderedDict((k, out[k]) for k in ORDER if k in out)


def groups(rows):
    g = OrderedDict()
    for r in rows:
        g.setdefault((r["case"], r.get("what", "")), []).append(r)
    return g


def reference(rs):
    """bsvd's row of a group: "bsvd" itself, else the first bsvd variant."""
    gpu = [r for r in rs if r["device"] == "cuda" and r["ms"] is not None]
    for r in gpu:
        if r["engine"] == "bsvd":
            return r
    return next((r for r in gpu if r["engine"].startswith("bsvd")), None)


def fmt_ms(ms):
    return f"{ms:.3g}" if ms < 1000 else f"{ms:,.0f}"


def note(r):
    parts = []
    if "scaled_from" in r:
        parts.append(f"slice of {r['scaled_from']}, scaled")
    if r.get("composed"):
        parts.append("rest of step + decomposition")
    # Labels without "|": they sit in Markdown table cells.
    for key, label in (("polar_err", "polar factor error"), ("orth_err", "orthogonality error"),
                       ("energy_shortfall", "energy short of the top r"),
                       ("max_dev_from_bsvd", "analysis off bsvd's by"),
                       ("max_dev_S_from_bsvd", "S off bsvd's by")):
        if r.get(key) is not None:
            parts.append(f"{label} {r[key]:.1e}")
    return "; ".join(parts)


def table(data):
    for ex, (meta, rows) in data.items():
        print(f"\n### {ex}: {TITLES.get(ex, ex)}\n")
        print(f"{meta.get('device', '?')}; " + ", ".join(
            f"{k} {v}" for k, v in meta.get("versions", {}).items()) + "\n")
        print("| case | what | engine | device | ms | bsvd speed-up | note |")
        print("|---|---|---|---|---|---|---|")
        for (case, what), rs in groups(rows).items():
            ref = reference(rs)
            for r in rs:
                if r["ms"] is None:  # the engine failed; its error is the note
                    print(f"| {case} | {what} | {r['engine']} | {r['device']} | failed | – "
                          f"| {r.get('error', '').replace('|', '/')} |")
                    continue
                up = ("–" if ref is None or r is ref or r["engine"] == "rest of step"
                      else f"{r['ms'] / ref['ms']:.2f}×")
                print(f"| {case} | {what} | {r['engine']} | {r['device']} | {fmt_ms(r['ms'])} "
                      f"| {up} | {note(r)} |")


def plot(data, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    os.makedirs(outdir, exist_ok=True)
    for ex, (meta, rows) in data.items():
        # Rows with a time; the EnKF's "rest of step" is in the table only.
        gs = [(k, [r for r in rs if r["engine"] != "rest of step" and r["ms"] is not None])
              for k, rs in groups(rows).items()]
        gs = [(k, rs) for k, rs in gs if rs]
        fig, axes = plt.subplots(1, len(gs), figsize=(3.6 * len(gs) + 1, 4.2), squeeze=False)
        for ax, ((case, what), rs) in zip(axes[0], gs):
            ref = reference(rs)
            labels = [f"{r['engine']}" + (" (CPU)" if r["device"] == "cpu" else "") for r in rs]
            ms = [r["ms"] for r in rs]
            colors = ["tab:blue" if r["engine"].startswith("bsvd") else
                      ("tab:gray" if r["device"] == "cpu" else "tab:orange") for r in rs]
            hatch = ["//" if "scaled_from" in r or r.get("composed") else "" for r in rs]
            bars = ax.barh(range(len(rs)), ms, color=colors, hatch=hatch)
            ax.set_xscale("log")
            # At least a decade on the axis, the shortest bar visible, and no
            # minor tick labels (they collide on a short log range).
            lo, hi = min(ms) / 2, max(ms) * 3
            ax.set_xlim(lo, max(hi, 10 * lo))
            ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
            ax.set_yticks(range(len(rs)))
            ax.set_yticklabels(labels, fontsize=7)
            ax.invert_yaxis()
            ax.set_title(f"{case}\n{what}", fontsize=8)
            ax.set_xlabel("ms (log)", fontsize=8)
            if ref is not None:
                for b, r in zip(bars, rs):
                    if r is not ref:
                        ax.text(b.get_width(), b.get_y() + b.get_height() / 2,
                                f" {r['ms'] / ref['ms']:.2g}×", va="center", fontsize=7)
            ax.grid(axis="x", alpha=0.3)
        fig.suptitle(f"{TITLES.get(ex, ex)} ({meta.get('device', '?')}; "
                     "hatched: scaled or composed)", fontsize=9)
        fig.tight_layout()
        path = os.path.join(outdir, f"examples-{ex}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        print(f"wrote {path}")
        if ex == "enkf" and meta.get("rmse"):
            h = meta["rmse"]
            fig, ax = plt.subplots(figsize=(5.5, 3.6))
            c = range(1, len(h["analysis"]) + 1)
            ax.plot(c, h["analysis"], label="analysis (LETKF, bsvd)")
            ax.plot(c, h["forecast"], label="forecast", ls="--")
            if h.get("free"):
                ax.plot(c, h["free"], label="free run (no assimilation)")
            ax.plot(c, h["spread"], label="ensemble spread", ls=":")
            ax.axhline(meta.get("sigma_o", 1.0), color="k", lw=0.8, label="observation error")
            ax.set_yscale("log")
            ax.set_xlabel("analysis cycle")
            ax.set_ylabel("RMSE against the truth")
            g = meta.get("grid", ["?", "?"])
            ax.set_title(f"{g[0]} x {g[1]} Lorenz-96 channel, {meta.get('members')} members",
                         fontsize=9)
            ax.legend(fontsize=7)
            ax.grid(alpha=0.3)
            fig.tight_layout()
            path = os.path.join(outdir, "examples-enkf-rmse.png")
            fig.savefig(path, dpi=110)
            plt.close(fig)
            print(f"wrote {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--table", action="store_true", help="the tables only (no matplotlib)")
    ap.add_argument("--out", default="docs/perf/img")
    args = ap.parse_args()
    data = load(args.files)
    table(data)
    if not args.table:
        plot(data, args.out)


if __name__ == "__main__":
    main()
