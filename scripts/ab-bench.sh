#!/usr/bin/env bash
# A/B of two bsvd builds on the GPU machine, in one call: the benchmark
# cases of docs/perf (fused 8^2 ... 64^2, blocked 128^2 ... 512^2, tall
# 2000 x 16, the SuiteSparse mixed batch; d and s), run alternately with
# the baseline's and the working tree's CLI, ROUNDS times each, and a table
# of the new/base time ratios (bsvd rows only; the median over rounds).
#
#   here:    scripts/ab-bench.sh --save REF       git archive of REF into .deps/ab-base.tgz
#   device:  scripts/ab-bench.sh --build          builds build-base/bsvd from it (carry .deps)
#            scripts/ab-bench.sh BASE NEW [ROUNDS] runs and compares two CLIs
#   AB_PARTS=fused,blocked,mtx   only these parts (default: all)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-$ROOT/out}
case "${1:-}" in
--save)
  mkdir -p .deps
  git archive --format=tar.gz -o .deps/ab-base.tgz "${2:?REF}"
  echo "ab-bench: .deps/ab-base.tgz = $(git rev-parse --short "$2")"
  exit 0 ;;
--build)
  S=/tmp/bsvd-ab-base
  rm -rf "$S" && mkdir -p "$S" && tar -xzf .deps/ab-base.tgz -C "$S"
  cmake -S "$S" -B "$ROOT/build-base" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DBSVD_DEPS_ROOT="$ROOT/.deps/root" \
    -DBSVD_GTEST_SOURCE="$ROOT/.deps/googletest" >"$OUT/ab-build.log" 2>&1 &&
    ninja -C "$ROOT/build-base" -j"$(nproc)" bsvd_cli >>"$OUT/ab-build.log" 2>&1
  rc=$?
  [ $rc -eq 0 ] || tail -20 "$OUT/ab-build.log"
  echo "ab-bench: build-base/bsvd rc=$rc"
  exit $rc ;;
esac
BASE=${1:?BASE bsvd}
NEW=${2:?NEW bsvd}
ROUNDS=${3:-2}
DEPS=$ROOT/.deps/root/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$DEPS:$DEPS/lapack:$DEPS/blas:${LD_LIBRARY_PATH:-}
export BSVD_BENCH_ONLY=1 # bsvd rows only
D=$OUT/ab
mkdir -p "$D"
part() { [ -z "${AB_PARTS:-}" ] || [[ ",$AB_PARTS," == *",$1,"* ]]; }
run() { # label binary round
  local l=$1 b=$2 r=$3 p
  for p in d s; do
    part fused && "$b" bench --backend cuda --precision $p --family random --reps 7 --check-sample 2 -q \
      --cases 10000x8x8,10000x16x16,10000x32x32,1000x64x64 --json "$D/$l-$r-fused-$p.json" >>"$D/log" 2>&1
    part blocked && "$b" bench --backend cuda --precision $p --family random --reps 3 --check-sample 2 -q \
      --cases 1000x128x128,1000x256x256,1000x512x512,1000x2000x16 --json "$D/$l-$r-blocked-$p.json" \
      >>"$D/log" 2>&1
  done
  part mtx && "$b" bench --backend cuda --precision d --mtx "$ROOT/data/matrices" --reps 3 -q \
    --json "$D/$l-$r-mtx-d.json" >>"$D/log" 2>&1
  echo "ab-bench: $l round $r done"
}
for r in $(seq 1 "$ROUNDS"); do
  run base "$BASE" "$r"
  run new "$NEW" "$r"
done
python3 - "$D" <<'EOF' | tee "$OUT/ab-table.txt"
import glob, json, os, statistics, sys
d = sys.argv[1]
rows = {}
for f in glob.glob(os.path.join(d, "*.json")):
    label = os.path.basename(f).split("-")[0]
    for r in json.load(open(f)):
        if not r["solver"].startswith("bsvd") or not r.get("ms"):
            continue
        key = (r["solver"], r["precision"], f'{r["batch"]}x{r["m"]}x{r["n"]}', r["family"])
        rows.setdefault(key, {}).setdefault(label, []).append(r["ms"])
        rows[key].setdefault("pass_" + label, []).append(bool(r["pass"]))
print(f'{"solver":26} {"p"} {"case":16} {"base ms":>10} {"new ms":>10} {"new/base":>8}  spread  T1-T4')
worst = 0
for key in sorted(rows):
    v = rows[key]
    if "base" not in v or "new" not in v:
        continue
    b, n = statistics.median(v["base"]), statistics.median(v["new"])
    spread = max(max(v["base"]) / min(v["base"]), max(v["new"]) / min(v["new"]))
    ok = all(v["pass_base"]) and all(v["pass_new"])
    worst = max(worst, abs(n / b - 1))
    print(f"{key[0][:26]:26} {key[1]} {key[2]:16} {b:10.3f} {n:10.3f} {n / b:8.3f}  {spread:6.3f}  {'pass' if ok else 'FAIL'}")
print(f"largest |new/base - 1|: {worst:.3f}")
json.dump([{"solver": k[0], "precision": k[1], "case": k[2], "family": k[3], **v} for k, v in rows.items()],
          open(os.path.join(d, "..", "ab.json"), "w"), indent=1)
EOF
# The device tool brings back few files: the rows in one archive.
tar czf "$OUT/ab-rows.tgz" -C "$OUT" ab && rm -rf "$D"
