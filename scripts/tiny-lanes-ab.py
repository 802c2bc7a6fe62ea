#!/usr/bin/env python3
"""The register tier's A/B table (docs/perf/tiny.md): one thread per matrix,
the lanes variant and the fused kernel, from gpu-check.sh's `lanes` part.

  scripts/tiny-lanes-ab.py DIR [PREFIX]   # reads DIR/PREFIXbench-P-lanes-MODE.json
Prints a markdown table per precision: ms of each, lanes / best other, and
the winner; rows whose check failed are marked.
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


def main():
    d = sys.argv[1]
    pre = sys.argv[2] if len(sys.argv) > 2 else ""
    for p in "dszc":
        data = {m: load(os.path.join(d, f"{pre}bench-{p}-lanes-{m}.json")) for m in MODES}
        keys = sorted(set().union(*[set(v) for v in data.values()]))
        if not keys:
            continue
        print(f"\n### {p}\n")
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


if __name__ == "__main__":
    main()
