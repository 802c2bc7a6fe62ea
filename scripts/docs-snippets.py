#!/usr/bin/env python3
"""Runs every code block of the documentation site (scripts/docs.sh runs it
after the Sphinx build, which lists the blocks in build/docs/snippets.json;
docs/site/snippets.md says what runs how).

    scripts/docs-snippets.py            run them all; exit 1 when one fails
    scripts/docs-snippets.py --list     print every block and what happens to it
    scripts/docs-snippets.py -k start/  only the pages whose name contains this

python blocks of a page run in order in one interpreter (warnings are
errors); sh blocks of a page in order under bash -e; c and cpp blocks are
compiled against include/ and build/libbsvd.so (-Wall -Werror) and run; a
file shown by literalinclude is compiled and run whole. Each page works in
a scratch folder of its own under build/docs/snippets/ that links the
repository's build/, data/, examples/, include/, scripts/, python/, docs/
and the virtual environment. Blocks with a skip= marker are counted, not
run; blocks in a language no rule covers fail.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEXT = {"none", "text", ""}
LINKED = ["build", "data", "examples", "include", "scripts", "python", "docs"]
TIMEOUT = 300

# Runs the python blocks of one page in one namespace; reports the failing
# block by its page line.
DRIVER = r'''
import json, sys, traceback, warnings
blocks = json.load(open(sys.argv[1]))
ns = {"__name__": "__main__"}
for b in blocks:
    warnings.resetwarnings()
    warnings.simplefilter("error")
    try:
        exec(compile(b["text"], f"{b['file']}:{b['line']}", "exec"), ns)
    except BaseException:
        print(f"FAILED: the python block at {b['file']}:{b['line']}", file=sys.stderr)
        traceback.print_exc()
        sys.exit(1)
'''


def classify(b):
    """What happens to a block: (action, detail)."""
    if b["skip"]:
        return "skip", b["skip"]
    if b.get("header_doc"):
        return "text", "a header comment"
    if b["include"]:
        suffix = Path(b["include"]).suffix
        if suffix in (".c", ".cpp", ".cc", ".py"):
            return "file", b["include"]
        return "fail", f"an included {suffix} file: no rule runs it"
    lang = b["language"]
    if lang in TEXT:
        return "text", "no language"
    if lang in ("python", "sh", "bash", "c", "cpp"):
        return lang if lang != "bash" else "sh", ""
    return "fail", f"a {lang} block without a skip= marker: no rule runs it"


def venv_python():
    venv = os.environ.get("BSVD_VENV", ".venv")
    return str((ROOT / venv / "bin" / "python").absolute()), venv


def workdir(base: Path, doc: str) -> Path:
    d = base / doc.replace("/", "__")
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    for name in LINKED:
        (d / name).symlink_to(ROOT / name)
    venv = venv_python()[1]
    (d / ".venv").symlink_to((ROOT / venv).absolute())
    return d


def run(cmd, cwd, env=None, stdin=None):
    t = time.time()
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, input=stdin, capture_output=True, text=True,
                           timeout=TIMEOUT)
        return p.returncode, p.stdout + p.stderr, time.time() - t
    except subprocess.TimeoutExpired as e:
        return 124, f"timed out after {TIMEOUT} s\n{e.stdout or ''}{e.stderr or ''}", time.time() - t


def compile_and_run(src_text, lang, where, wd, name):
    src = wd / f"{name}.{'c' if lang == 'c' else 'cpp'}"
    src.write_text(src_text)
    exe = wd / name
    cc = [os.environ.get("CC", "cc"), "-std=c99"] if lang == "c" else [os.environ.get("CXX", "c++"), "-std=c++17"]
    cmd = cc + ["-Wall", "-Werror", f"-I{ROOT / 'include'}", str(src), str(ROOT / "build" / "libbsvd.so"),
                "-lm", f"-Wl,-rpath,{ROOT / 'build'}", "-o", str(exe)]
    rc, out, dt = run(cmd, wd)
    if rc:
        return rc, f"{where}: does not compile\n{' '.join(cmd)}\n{out}", dt
    rc, out2, dt2 = run([str(exe)], wd)
    return rc, (f"{where}: exit status {rc}\n{out2}" if rc else out2), dt + dt2


def run_page(doc, blocks, base):
    """Runs the blocks of one page; returns [(block, ok, message, seconds)]."""
    wd = workdir(base, doc)
    py, _ = venv_python()
    env = dict(os.environ, PATH=f"{ROOT / 'build'}:{Path(py).parent}:{os.environ['PATH']}",
               MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1")
    results = []
    pys = [b for b in blocks if b["action"] == "python"]
    if pys:
        (wd / "_blocks.json").write_text(json.dumps(pys))
        (wd / "_driver.py").write_text(DRIVER)
        rc, out, dt = run([py, "_driver.py", "_blocks.json"], wd, env)
        results.append((f"{len(pys)} python block(s)", rc == 0, out, dt))
    shs = [b for b in blocks if b["action"] == "sh"]
    for b in shs:  # in order, same folder: a block may use the files of the one above
        rc, out, dt = run(["bash", "-e", "-o", "pipefail", "-c", b["text"]], wd, env)
        results.append((f"sh block at {b['file']}:{b['line']}", rc == 0,
                        out if rc == 0 else f"{b['file']}:{b['line']}: exit status {rc}\n{out}", dt))
    for i, b in enumerate(x for x in blocks if x["action"] in ("c", "cpp")):
        where = f"{b['file']}:{b['line']}"
        rc, out, dt = compile_and_run(b["text"], b["action"], where, wd, f"snippet{i}")
        results.append((f"{b['action']} block at {where}", rc == 0, out, dt))
    return results


def run_file(rel, base):
    wd = workdir(base, "file__" + rel)
    path = ROOT / rel
    if path.suffix == ".py":
        py, _ = venv_python()
        rc, out, dt = run([py, str(path)], wd)
        return [(f"file {rel}", rc == 0, out, dt)]
    lang = "c" if path.suffix == ".c" else "cpp"
    rc, out, dt = compile_and_run(path.read_text(), lang, rel, wd, path.stem)
    return [(f"file {rel}", rc == 0, out, dt)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", action="store_true", help="print every block and what happens to it")
    ap.add_argument("-k", default="", help="only pages whose name contains this")
    ap.add_argument("--json", default=str(ROOT / "build" / "docs" / "snippets.json"))
    ap.add_argument("-v", action="store_true", help="print the output of every run")
    args = ap.parse_args()

    blocks = json.loads(Path(args.json).read_text())
    for b in blocks:
        b["action"], b["detail"] = classify(b)
    blocks = [b for b in blocks if args.k in b["doc"]]
    if args.list:
        for b in blocks:
            first = (b["text"].strip().splitlines() or [""])[0][:60]
            print(f"{b['action']:6} {b['detail'] or '':28} {b['file']}:{b['line']}  {first}")
        return 0

    failed = [b for b in blocks if b["action"] == "fail"]
    for b in failed:
        print(f"FAILED {b['file']}:{b['line']}: {b['detail']}")
    skipped: dict[str, int] = {}
    for b in blocks:
        if b["action"] == "skip":
            skipped[b["detail"]] = skipped.get(b["detail"], 0) + 1

    base = ROOT / "build" / "docs" / "snippets"
    base.mkdir(parents=True, exist_ok=True)
    pages: dict[str, list] = {}
    for b in blocks:
        if b["action"] in ("python", "sh", "c", "cpp"):
            pages.setdefault(b["doc"], []).append(b)
    files = sorted({b["detail"] for b in blocks if b["action"] == "file"})
    jobs = [(run_page, doc, bl) for doc, bl in sorted(pages.items())] + [(run_file, f, None) for f in files]

    def work(job):
        fn, name, bl = job
        return name, (fn(name, bl, base) if bl is not None else fn(name, base))

    passed = 0
    nfail = len(failed)
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for name, results in pool.map(work, jobs):
            for what, ok, out, dt in results:
                n = int(what.split()[0]) if what[0].isdigit() else 1
                if ok:
                    passed += n
                    print(f"ok     {name}: {what} ({dt:.1f} s)")
                    if args.v and out.strip():
                        print(out.rstrip())
                else:
                    nfail += 1
                    print(f"FAILED {name}: {what} ({dt:.1f} s)\n{out.rstrip()}")
    ran_text = sum(1 for b in blocks if b["action"] == "text")
    print(f"docs-snippets: {len(blocks)} literal blocks: {ran_text} text, "
          f"{sum(skipped.values())} marked skip ({', '.join(f'{k} {v}' for k, v in sorted(skipped.items()))})")
    print(f"snippets: {passed} passed, {nfail} failed, {sum(skipped.values())} skipped")
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
