#!/usr/bin/env bash
# The application examples' GPU measurements in one run, on the GPU machine:
# each example's --gpu mode times bsvd against its field's baselines
# (torch.linalg.svd / eigh, jax.numpy.linalg.svd, Newton-Schulz, NumPy on
# the host) in the same process and writes its JSON rows; a short table of
# all of them is printed last (scripts/examples-plots.py --table).
#
#   examples/run_gpu_bench.sh [--build] [EXAMPLE ...]   (default: enkf tebd muon blr)
#     --build   first build the Python package with the CUDA backend into
#               /tmp/bsvd-py-site as scripts/gpu-check.sh --python does
#               (device tool: carry [".deps", ".whl"]; about 100 s); without
#               it, `import bsvd` must already give a CUDA build.
#   OUTDIR    where the JSON goes: default $OUT (the device tool's folder that
#             comes back) when set, else docs/perf/raw/examples. The files are
#             <example>-<gpu>-<yyyy-mm-dd>.json; copy them to
#             docs/perf/raw/examples/ and run scripts/examples-plots.py there.
#   BUDGET    seconds per timed engine (default 3): a baseline whose whole
#             batch would not fit is timed on a slice and scaled, and its row
#             says so ("scaled_from").
# The four are sized for about 4 minutes on an H100 (an estimate from the
# per-path results of docs/perf, not yet measured); most of it is the
# baselines' budgets and JAX's compilations.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=0
EXAMPLES=()
for a in "$@"; do
  case $a in
    --build) BUILD=1 ;;
    enkf | tebd | muon | blr) EXAMPLES+=("$a") ;;
    *) echo "run_gpu_bench: unknown argument $a" >&2; exit 2 ;;
  esac
done
[ ${#EXAMPLES[@]} -gt 0 ] || EXAMPLES=(enkf tebd muon blr)
OUTDIR=${OUTDIR:-${OUT:-$ROOT/docs/perf/raw/examples}}
mkdir -p "$OUTDIR"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false

if [ $BUILD = 1 ]; then
  t0=$(date +%s)
  SITE=/tmp/bsvd-py-site
  DEPS=$ROOT/.deps/root/usr/lib/x86_64-linux-gnu
  export LD_LIBRARY_PATH=$DEPS:$DEPS/lapack:$DEPS/blas:${LD_LIBRARY_PATH:-}
  python3 -m pip install -q --no-index --no-deps --target "$SITE" "$ROOT"/.whl/*.whl \
    >/tmp/examples-build.log 2>&1 &&
    PYTHONPATH=$SITE CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
      CMAKE_ARGS="-DCMAKE_CUDA_ARCHITECTURES=90 -DBSVD_DEPS_ROOT=$ROOT/.deps/root" \
      python3 -m pip install -q --no-deps --no-build-isolation --target "$SITE/pkg" \
      -C cmake.define.BSVD_CUDA=ON "$ROOT" >>/tmp/examples-build.log 2>&1 ||
    { echo "run_gpu_bench: the build failed:"; tail -30 /tmp/examples-build.log; exit 1; }
  export PYTHONPATH=$SITE/pkg:$SITE${PYTHONPATH:+:$PYTHONPATH}
  echo "run_gpu_bench: built in $(( $(date +%s) - t0 )) s"
fi

# Run from outside the repository so that the installed bsvd is imported.
cd /tmp
python3 -c 'import bsvd, sys; sys.exit(0 if bsvd.cuda_available() else 1)' || {
  echo "run_gpu_bench: bsvd has no CUDA backend here (or sees no GPU): use --build" >&2
  exit 1
}
GPU=$(python3 -c 'import torch; print(torch.cuda.get_device_name())' 2>/dev/null)
case ${GPU,,} in
  *h200*) TAG=h200 ;; *h100*) TAG=h100 ;; *a100*) TAG=a100 ;;
  *) TAG=$(echo "${GPU:-gpu}" | tr -cs 'A-Za-z0-9' '-' | tr 'A-Z' 'a-z' | sed 's/-$//') ;;
esac
DATE=$(date +%F)
echo "run_gpu_bench: $GPU, examples ${EXAMPLES[*]}, JSON to $OUTDIR"
LOG=$OUTDIR/examples-$TAG-$DATE.log   # one log: the device tool returns few files
: >"$LOG"
rc=0
files=()
for ex in "${EXAMPLES[@]}"; do
  t0=$(date +%s)
  json=$OUTDIR/$ex-$TAG-$DATE.json
  echo "== $ex" >>"$LOG"
  timeout 300 python3 "$ROOT/examples/$ex/$ex.py" --gpu --budget "${BUDGET:-3}" --json "$json" \
    >/tmp/examples-$ex.log 2>&1
  r=$?
  cat /tmp/examples-$ex.log >>"$LOG"
  echo "== $ex: rc=$r in $(( $(date +%s) - t0 )) s"
  grep -E "^(GPU|OK|FAILED|SKIP)" /tmp/examples-$ex.log
  [ $r = 0 ] || { rc=1; tail -20 /tmp/examples-$ex.log; }
  [ -f "$json" ] && files+=("$json")
done
[ ${#files[@]} -gt 0 ] && python3 "$ROOT/scripts/examples-plots.py" --table "${files[@]}"
exit $rc
