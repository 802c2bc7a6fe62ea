#!/usr/bin/env python3
"""Results tables and plots for docs/perf/ from `bsvd bench --json` files.

    scripts/perf-pages.py [INPUT ...] [--page PAGE ...] [--img DIR] [--no-plots]
                          [--plot-solvers A,B] [--check] [--print SPEC]

INPUT is a JSON file written by `bsvd bench --json FILE` (a list of rows:
solver, device, precision, batch, m, n, family, vectors, reps, ms, t1, t2,
t3, sorted, pass, max_sweeps, gflops, note), or LABEL=FILE: the same file
with its plain bsvd rows (solver bsvd-cuda or bsvd-cpu) renamed LABEL, so
that two builds' runs of the same cases become two solvers of one table
(before=raw/ab-before.json after=raw/ab-after.json). Without INPUT it reads
docs/perf/raw/*.json in name order. A later row of the same case and
solver replaces an earlier one, so name raw files so that name order is
date order (bench-d-blocked-h100-2026-11-25.json).

Tables. Each page (default: docs/perf/*.md) may hold blocks

    <!-- perf-table:NAME key=value ... -->
    ...
    <!-- /perf-table:NAME -->

(docs/perf/README.md excepted) whose body the script rewrites from the rows
that the keys select:
  kind=cases   (default) one row per case, one column per solver; the first
               solver is the base, the others show ms (their time over the
               base's); failed accuracy checks are named in the cell; the
               base row's path and sweeps (the mean its note gives, else
               "max N", the batch's most)
  kind=ab      one row per case, columns a and b (a=before b=after by
               default), their ratio b / a, and the geometric mean
  solvers=     comma list, in column order (cases: default every solver of
               the selected rows, bsvd first)
  precision= family= batch= m= n= device=   filters (comma lists; device
               is a substring of the row's device)
  source=      comma list of raw files (as the table's "Rows:" line names
               them, raw/NAME.json; shell patterns allowed): the table's
               rows come from these only, so a later run of the same cases
               in another file does not rewrite a table measured apart
               (each table of a page says which run it shows)
A block that no row matches is left as it is (with a message), so a page
can hold tables of several runs. --check rewrites nothing and exits 1 when
a page is out of date. --print SPEC prints one table for SPEC (the keys
above) to stdout, e.g. the A/B table of a commit message:

    scripts/perf-pages.py before=a.json after=b.json --print "kind=ab"

Plots (matplotlib, when installed; otherwise skipped with a message), into
--img (default docs/perf/img/), per precision and family:
  time-P-FAMILY.png    time of one call against n (square cases), one line
                       per solver and batch size, log-log;
  ratio-P-FAMILY.png   each incumbent's time over bsvd's per case (> 1:
                       bsvd is faster), log scale.

Standard library only, plus matplotlib for the plots.
"""

from __future__ import annotations

import argparse
import fnmatch
import glob
import json
import math
import os
import re
import sys
from collections import OrderedDict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PERF = os.path.join(ROOT, "docs", "perf")
BASE_SOLVERS = ("bsvd-cuda", "bsvd-cpu")  # the plain bsvd rows of the bench
PASS_BOUND = 30.0  # T1-T3 pass below this many units of u (docs/accuracy.md)

BLOCK = re.compile(
    r"(?P<open><!--\s*perf-table:(?P<name>[\w.-]+)(?P<spec>[^>]*?)-->)"
    r"(?P<body>.*?)"
    r"(?P<close><!--\s*/perf-table:(?P=name)\s*-->)",
    re.DOTALL,
)


# ---- rows --------------------------------------------------------------------
def shown(path: str) -> str:
    """A path as the messages show it: relative to the repository when inside it."""
    full = os.path.abspath(path)
    return os.path.relpath(full, ROOT) if full.startswith(ROOT + os.sep) else path


def num(x) -> float:
    """A JSON number, or NaN for null (the bench writes NaN ratios as null)."""
    return float("nan") if x is None else float(x)


def load_rows(inputs: list[str], given: tuple = ()) -> list[dict]:
    """The bench rows of the inputs; a file of the raw/ folder that holds no
    row list is skipped, one named on the command line (given) refused."""
    rows = []
    for item in inputs:
        label, path = None, item
        if "=" in item and not os.path.exists(item):
            label, path = item.split("=", 1)
        with open(path) as f:
            data = json.load(f)
        if not isinstance(data, list):
            if label is None and item not in given:
                continue  # another script's JSON in raw/ (e.g. bench-cpu-numpy.py's)
            raise SystemExit(f"{path}: not a list of bench rows")
        for r in data:
            r = dict(r)
            full = os.path.abspath(path)
            r["source"] = (
                os.path.relpath(full, PERF) if full.startswith(PERF + os.sep) else path
            )
            if label and r.get("solver") in BASE_SOLVERS:
                r["solver"] = label
                r["label"] = True  # one build's bsvd rows (A/B), not an incumbent
            rows.append(r)
    return rows


def case_key(r: dict) -> tuple:
    return (
        r["precision"],
        r["family"],
        int(r["batch"]),
        int(r["m"]),
        int(r["n"]),
        bool(r.get("vectors", True)),
    )


def case_label(key: tuple) -> str:
    p, fam, batch, m, n, vectors = key
    if m == 0 and n == 0:  # bench --mtx: one mixed-size batch
        shape = f"{batch} matrices ({fam})"
    elif m == n:
        shape = f"{batch} × {m}²"
    else:
        shape = f"{batch} × {m}×{n}"
    extra = "" if fam in ("random", "mtx") else f" {fam}"
    return f"{p} {shape}{extra}{'' if vectors else ', values'}"


def latest(rows: list[dict]) -> OrderedDict[tuple, dict]:
    """(case, solver) -> the last row given for it."""
    out: OrderedDict = OrderedDict()
    for r in rows:
        out[(case_key(r), r["solver"])] = r
    return out


def select(rows: list[dict], spec: dict) -> list[dict]:
    def ok(r, key, conv=str):
        if key not in spec:
            return True
        return conv(r[key]) in [conv(v) for v in spec[key].split(",")]

    out = []
    for r in rows:
        if not (
            ok(r, "precision")
            and ok(r, "family")
            and ok(r, "batch", int)
            and ok(r, "m", int)
            and ok(r, "n", int)
        ):
            continue
        if (
            "device" in spec
            and spec["device"].lower() not in str(r.get("device", "")).lower()
        ):
            continue
        if "source" in spec and not any(
            fnmatch.fnmatch(r["source"], pat) for pat in spec["source"].split(",")
        ):
            continue
        out.append(r)
    return out


# ---- cells -------------------------------------------------------------------
def fmt_ms(ms: float) -> str:
    if not ms > 0:
        return "—"
    if ms >= 1000:
        return f"{ms:.0f}"
    if ms >= 100:
        return f"{ms:.1f}"
    if ms >= 1:
        return f"{ms:.2f}"
    return f"{ms:.3f}"


def fmt_ratio(x: float) -> str:
    if not (x > 0 and math.isfinite(x)):
        return "—"
    return f"{x:.0f}×" if x >= 100 else f"{x:.1f}×" if x >= 10 else f"{x:.2f}×"


def accuracy(r: dict) -> str:
    """'' when the row passes T1-T4, else what failed."""
    if r.get("pass", True):
        return ""
    bad = [
        f"{t.upper()} {num(r.get(t)):.2g} u"
        if math.isfinite(num(r.get(t)))
        else f"{t.upper()} NaN"
        for t in ("t1", "t2", "t3")
        if not num(r.get(t)) < PASS_BOUND
    ]
    if not r.get("sorted", True):
        bad.append("T4")
    return "fails " + ", ".join(bad) if bad else "fails"


def path_and_sweeps(r: dict) -> tuple[str, str]:
    """The path and sweeps of a bsvd row: the mean its note names ('fused, mean
    sweeps 9.05'), else the batch's most sweeps ('max 12') when the row has it."""
    note = r.get("note", "") or ""
    m = re.search(r"mean sweeps ([0-9.]+)", note)
    if m:
        return note.split(", mean sweeps")[0], m.group(1)
    most = int(r.get("max_sweeps") or 0)
    return "", (f"max {most}" if most > 0 else "")


def skipped(r: dict) -> str:
    note = r.get("note", "") or ""
    return note if note.startswith(("skipped", "refused", "failed")) else ""


def cell(r: dict | None, base_ms: float, is_base: bool) -> str:
    if r is None:
        return ""
    why = skipped(r)
    if why and not num(r.get("ms")) > 0:
        return why.split(":")[0]
    text = fmt_ms(num(r.get("ms")))
    if not is_base and base_ms > 0 and num(r.get("ms")) > 0:
        text += f" ({fmt_ratio(num(r['ms']) / base_ms)})"
    acc = accuracy(r)
    return f"{text}, {acc}" if acc else text


def provenance(rows: list[dict]) -> str:
    devices = sorted({str(r.get("device", "")) for r in rows if r.get("device")})
    sources = sorted({r["source"] for r in rows})
    return (
        f"Rows: {', '.join('`' + s + '`' for s in sources)}"
        + (f" ({'; '.join(devices)})" if devices else "")
        + "."
    )


# ---- tables ------------------------------------------------------------------
def table_cases(rows: list[dict], spec: dict) -> str | None:
    rows = select(rows, spec)
    if not rows:
        return None
    last = latest(rows)
    cases = list(OrderedDict.fromkeys(k for k, _ in last))
    if "solvers" in spec:
        solvers = spec["solvers"].split(",")
    else:
        present = list(OrderedDict.fromkeys(s for _, s in last))
        solvers = [s for s in present if s in BASE_SOLVERS] + [
            s for s in present if s not in BASE_SOLVERS and not s.endswith("-stages")
        ]
    base = spec.get("base", solvers[0])
    cases = [c for c in cases if any((c, s) in last for s in solvers)]
    if not cases:
        return None
    head = ["case", "path", "sweeps", f"{base} ms"]
    head += [f"{s} ms (× {base})" for s in solvers if s != base]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    used = []
    for c in cases:
        b = last.get((c, base))
        base_ms = num(b["ms"]) if b else float("nan")
        path, sweeps = path_and_sweeps(b) if b else ("", "")
        cells = [case_label(c), path, sweeps, cell(b, base_ms, True)]
        cells += [cell(last.get((c, s)), base_ms, False) for s in solvers if s != base]
        used += [last[(c, s)] for s in solvers if (c, s) in last]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\n" + provenance(used)


def table_ab(rows: list[dict], spec: dict) -> str | None:
    rows = select(rows, spec)
    a, b = spec.get("a", "before"), spec.get("b", "after")
    last = latest(rows)
    cases = list(OrderedDict.fromkeys(k for k, s in last if s in (a, b)))
    if not cases:
        return None
    head = ["case", f"{a} ms", f"{b} ms", f"{b} / {a}", "sweeps", "T1–T4"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    logs, used = [], []
    for c in cases:
        ra, rb = last.get((c, a)), last.get((c, b))
        ma = num(ra["ms"]) if ra else float("nan")
        mb = num(rb["ms"]) if rb else float("nan")
        ratio = mb / ma if ma > 0 and mb > 0 else float("nan")
        if math.isfinite(ratio):
            logs.append(math.log(ratio))
        sw = " / ".join(path_and_sweeps(r)[1] or "—" for r in (ra, rb) if r)
        acc = "; ".join(
            f"{lab}: {accuracy(r)}"
            for lab, r in ((a, ra), (b, rb))
            if r and accuracy(r)
        )
        shown = f"{ratio:.3f}" if math.isfinite(ratio) else "—"
        lines.append(
            f"| {case_label(c)} | {fmt_ms(ma)} | {fmt_ms(mb)} | {shown} | {sw} | "
            f"{acc or 'pass'} |"
        )
        used += [r for r in (ra, rb) if r]
    if logs:
        lines.append(
            f"| geometric mean ({len(logs)} cases) | | | "
            f"{math.exp(sum(logs) / len(logs)):.3f} | | |"
        )
    return "\n".join(lines) + "\n\n" + provenance(used)


def render(rows: list[dict], spec: dict) -> str | None:
    kind = spec.get("kind", "cases")
    if kind == "cases":
        return table_cases(rows, spec)
    if kind == "ab":
        return table_ab(rows, spec)
    raise SystemExit(f"unknown table kind '{kind}'")


def parse_spec(text: str) -> dict:
    spec = {}
    for tok in text.split():
        if "=" not in tok:
            raise SystemExit(f"table spec: '{tok}' is not key=value")
        k, v = tok.split("=", 1)
        spec[k] = v
    return spec


def update_page(path: str, rows: list[dict], check: bool) -> bool:
    """Rewrites the page's blocks; True when it changed (or would)."""
    with open(path) as f:
        text = f.read()

    def repl(m):
        body = render(rows, parse_spec(m.group("spec")))
        if body is None:
            print(
                f"{shown(path)}: perf-table:{m.group('name')}: "
                "no rows match, left as it is",
                file=sys.stderr,
            )
            return m.group(0)
        return f"{m.group('open')}\n{body}\n{m.group('close')}"

    new = BLOCK.sub(repl, text)
    if new == text:
        return False
    if not check:
        with open(path, "w") as f:
            f.write(new)
    print(f"{'out of date' if check else 'wrote'}: {shown(path)}")
    return True


# ---- plots -------------------------------------------------------------------
def plots(rows: list[dict], outdir: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(
            "matplotlib is not installed: no plots (pip install matplotlib)",
            file=sys.stderr,
        )
        return
    os.makedirs(outdir, exist_ok=True)
    last = latest(rows)
    groups: OrderedDict = OrderedDict()
    for (key, solver), r in last.items():
        groups.setdefault((key[0], key[1]), []).append((key, solver, r))
    for (p, fam), items in groups.items():
        # time against n: square cases, one line per solver and batch size
        lines: OrderedDict = OrderedDict()
        for key, solver, r in items:
            if (
                key[3] == key[4]
                and key[3] > 0
                and num(r["ms"]) > 0
                and not solver.endswith("-stages")
            ):
                lines.setdefault((solver, key[2]), []).append((key[3], num(r["ms"])))
        if lines:
            fig, ax = plt.subplots(figsize=(7, 4.5))
            for (solver, batch), pts in lines.items():
                pts.sort()
                ax.plot(
                    [x for x, _ in pts],
                    [y for _, y in pts],
                    marker="o",
                    label=f"{solver} ({batch} matrices)",
                )
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("n (n × n matrices)")
            ax.set_ylabel("ms per call")
            ax.set_title(f"{p}, {fam}: time of one call")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
            fig.tight_layout()
            out = os.path.join(outdir, f"time-{p}-{fam}.png")
            fig.savefig(out, dpi=110)
            plt.close(fig)
            print(f"wrote: {shown(out)}")
        # incumbents' time over bsvd's, per case
        by_case: OrderedDict = OrderedDict()
        for key, solver, r in items:
            by_case.setdefault(key, {})[solver] = r
        bars: OrderedDict = OrderedDict()
        labels = []
        # smaller problems first: by n, m, then the batch size
        for key, sol in sorted(
            by_case.items(), key=lambda kv: (kv[0][4], kv[0][3], kv[0][2])
        ):
            base = next((sol[s] for s in BASE_SOLVERS if s in sol), None)
            if not base or not num(base["ms"]) > 0:
                continue
            others = {
                s: r
                for s, r in sol.items()
                if not s.startswith("bsvd") and not r.get("label") and num(r["ms"]) > 0
            }
            if not others:
                continue
            labels.append(case_label(key).split(" ", 1)[1])
            for s, r in others.items():
                ratio = num(r["ms"]) / num(base["ms"])
                bars.setdefault(s, {})[len(labels) - 1] = (ratio, bool(accuracy(r)))
        if bars:
            fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(labels) + 2), 4.5))
            width = 0.8 / len(bars)
            for j, (s, vals) in enumerate(bars.items()):
                xs = [i + (j - (len(bars) - 1) / 2) * width for i in vals]
                drawn = ax.bar(xs, [v for v, _ in vals.values()], width, label=s)
                for patch, (_, bad) in zip(drawn, vals.values()):
                    patch.set_hatch("//" if bad else "")
            ax.axhline(1.0, color="black", linewidth=0.8)
            ax.set_yscale("log")
            ax.set_xticks(range(len(labels)))
            ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
            ax.set_ylabel("time / bsvd's time (> 1: bsvd faster)")
            ax.set_title(
                f"{p}, {fam}: the incumbents against bsvd (hatched: fails T1–T4)"
            )
            ax.grid(True, axis="y", which="both", alpha=0.3)
            ax.legend(fontsize=7)
            fig.tight_layout()
            out = os.path.join(outdir, f"ratio-{p}-{fam}.png")
            fig.savefig(out, dpi=110)
            plt.close(fig)
            print(f"wrote: {shown(out)}")


# ---- main --------------------------------------------------------------------
def main(argv: list[str]) -> int:
    head, _, rest = __doc__.partition("\n\n")
    ap = argparse.ArgumentParser(
        description=head,
        epilog=rest,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("inputs", nargs="*", help="bench JSON files, or LABEL=FILE")
    ap.add_argument(
        "--page", action="append", help="page(s) to update (default docs/perf/*.md)"
    )
    ap.add_argument("--img", default=os.path.join(PERF, "img"), help="plot directory")
    ap.add_argument("--no-plots", action="store_true", help="tables only")
    ap.add_argument(
        "--plot-solvers",
        help="comma list: plot only these solvers (default: every solver of the rows)",
    )
    ap.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if a page is out of date",
    )
    ap.add_argument(
        "--print", dest="spec", help="print one table for this spec and exit"
    )
    a = ap.parse_args(argv)

    inputs = a.inputs or sorted(
        glob.glob(os.path.join(PERF, "raw", "**", "*.json"), recursive=True)
    )
    if not inputs:
        print(
            "no bench JSON files (docs/perf/raw/*.json, or give them)", file=sys.stderr
        )
        return 2
    rows = load_rows(inputs, tuple(a.inputs))
    if a.spec is not None:
        body = render(rows, parse_spec(a.spec))
        if body is None:
            print("no rows match", file=sys.stderr)
            return 1
        print(body)
        return 0
    # (README.md shows the markers in an example; it has no tables to write)
    pages = a.page or sorted(
        p
        for p in glob.glob(os.path.join(PERF, "*.md"))
        if os.path.basename(p) != "README.md"
    )
    stale = [p for p in pages if update_page(p, rows, a.check)]
    if a.check:
        return 1 if stale else 0
    if not a.no_plots:
        if a.plot_solvers:
            keep = set(a.plot_solvers.split(","))
            rows = [r for r in rows if r["solver"] in keep]
        plots(rows, a.img)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
