#!/usr/bin/env bash
# Where the time of a lone large matrix goes (the tail of a mixed batch, issue 5):
# the bench of single SuiteSparse matrices with their stage times, and the
# duration of each kernel launch from Nsight Compute. Run after
# scripts/gpu-check.sh has built build-gpu (device tool, carry [".deps"]).
#   TAIL_MATRICES="lnsp_511 olm500" scripts/tail-probe.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
B=${BSVD_BUILD:-$PWD/build-gpu}
D=$PWD/.deps/root/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$D:$D/lapack:$D/blas:${LD_LIBRARY_PATH:-}
for m in ${TAIL_MATRICES:-lnsp_511 olm500}; do
  dir=$(mktemp -d)
  cp "data/matrices/$m.mtx" "$dir/"
  BSVD_BENCH_ONLY=1 "$B/bsvd" bench --backend cuda --precision d --mtx "$dir" --reps 3 -q \
    >"$OUT/tail-$m.log" 2>&1
  echo "== $m: rc=$?"
  grep -E "^bsvd" "$OUT/tail-$m.log" | cut -c1-400
  command -v ncu >/dev/null || continue
  BSVD_BENCH_ONLY=1 timeout ${NCU_LIMIT:-150} ncu --clock-control none --csv \
    --metrics gpu__time_duration.sum -k regex:blk_ --launch-skip ${NCU_SKIP:-300} \
    -c ${NCU_COUNT:-60} "$B/bsvd" bench --backend cuda --precision d --mtx "$dir" --reps 1 -q \
    >"$OUT/ncu-tail-$m.csv" 2>&1
  echo "ncu $m: rc=$?"
  python3 - "$OUT/ncu-tail-$m.csv" <<'PY'
import csv, sys, collections, re
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows: sys.exit(0)
h = rows[0]; ki = h.index("Kernel Name"); vi = h.index("Metric Value"); ui = h.index("Metric Unit")
t = collections.defaultdict(list)
for r in rows[1:]:
    name = re.sub(r"<.*", "", r[ki]).replace("void ", "")
    v = float(r[vi].replace(",", ""))
    u = r[ui]  # ncu writes "ns" / "us" / "ms" (or "nsecond" ... in older versions)
    v = v / 1000.0 if u in ("ns", "nsecond") else v * (1000.0 if u in ("ms", "msecond") else 1.0)
    t[name].append(v)
for k, v in sorted(t.items()):
    print(f"  {k:34s} n={len(v):3d} mean={sum(v)/len(v):8.1f} us  min={min(v):8.1f}  max={max(v):8.1f}")
PY
done
