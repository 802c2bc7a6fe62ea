#!/usr/bin/env python3
"""A Markdown table of an A/B pair of `bsvd bench --json` files: the bsvd
row of each case (precision, family, batch x m x n) in both, their times
and the ratio A/B (> 1: B is faster), the accuracy verdict of each (T1-T4
on the checked sample), and B's note (the path, mean sweeps).

    scripts/ab-table.py A.json B.json [A2.json B2.json ...] [--labels a,b]
"""
import json
import sys


def rows(path):
    out = {}
    for r in json.load(open(path)):
        if r.get("solver") != "bsvd-cuda":
            continue
        out[(r["precision"], r.get("family", "?"), r["batch"], r["m"], r["n"])] = r
    return out


def main(argv):
    labels = ["A", "B"]
    if "--labels" in argv:
        i = argv.index("--labels")
        labels = argv[i + 1].split(",")
        argv = argv[:i] + argv[i + 2:]
    if len(argv) < 2 or len(argv) % 2:
        sys.exit(__doc__)
    print(f"| case | family | {labels[0]} ms | {labels[1]} ms | {labels[0]} / {labels[1]} "
          f"| T1–T4 | {labels[1]}: path |")
    print("|---|---|---|---|---|---|---|")
    for a_path, b_path in zip(argv[0::2], argv[1::2]):
        a, b = rows(a_path), rows(b_path)
        for key in sorted(set(a) & set(b), key=lambda k: (k[0], k[1], k[3] * k[4], k[2])):
            p, fam, batch, m, n = key
            ra, rb = a[key], b[key]
            ok = "pass" if ra.get("pass") and rb.get("pass") else "FAIL"
            shape = f"{m}²" if m == n else f"{m} × {n}"
            print(f"| {p} {batch} × {shape} | {fam} | {ra['ms']:.2f} | {rb['ms']:.2f} | "
                  f"{ra['ms'] / rb['ms']:.2f} | {ok} | {rb.get('note', '')} |")


if __name__ == "__main__":
    main(sys.argv[1:])
