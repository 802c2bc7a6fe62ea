#!/usr/bin/env bash
# The one script run on the GPU machine (device tool, carry [".deps"]):
# configure and build for sm_90, run the GPU tests (ctest -L gpu), optionally
# compute-sanitizer and Nsight Compute, then the benchmark cases of issue 3;
# logs and JSON go to $OUT (or ./out), a short table is printed last.
#
#   scripts/gpu-check.sh [--no-tests] [--no-bench] [--sanitize] [--ncu]
#                        [--tune] [--quick]
#     --sanitize  compute-sanitizer memcheck + racecheck on a short filter
#     --sanitize-tiny  the same on the register tier's and device API's tests
#     --ncu       Nsight Compute metrics of the fused kernel (10000 x 32^2 d)
#     --ncu-blocked  Nsight Compute metrics of the blocked path's three step
#                 kernels (Gram d 1000 x 512^2, eigensolver and update d 1000 x 128^2)
#     --tune      BSVD_BENCH_TUNE=1: also time every lanes-per-pair value G
#     --quick     fewer bench cases (d and s 10000 x 32^2, 1000 x 64^2)
#     --as-sm80   after the tests: a second build with PTX of compute_80
#                 only (-DCMAKE_CUDA_ARCHITECTURES=80-virtual: no SASS, so the
#                 driver JITs bsvd's kernels from compute_80 PTX -- what
#                 CUDA_FORCE_PTX_JIT=1 would force, without also JIT-ing
#                 cuBLAS and cuSOLVER; AS80_FORCE_JIT=1 sets it anyway), the
#                 GPU tests once more under BSVD_DEVICE_AS=sm_80
#                 (the plan sees 163 KiB per block and no clusters: QRCP on
#                 one block, smaller fused caps), and `bsvd plan` of a few
#                 cases as sm_80 / sm_86 / sm_90 (build-gpu-sm80/, ~10 min)
#     --no-image  a CLI built for 80-real only (no sm_90 image, no PTX): the
#                 cuda backend must refuse with the device named
#     --python    the Python package with the CUDA backend and the JAX FFI
#                 call (built by pip from .whl's wheels: carry [".deps", ".whl"]):
#                 python/tests (PyTorch, CuPy, JAX on the GPU) and
#                 python/bench_async.py (host time, graph replay) and
#                 python/bench_host.py (NumPy batches through the GPU); about
#                 100 s of build and 150 s of tests. With --no-tests
#                 --no-bench and nothing else, the C++ build is skipped.
#   BENCH_ONLY=fused,blocked,table4,mtx,tune,route,families,tiny,lanes,async,hsvd,devices,dist:
#               only these bench parts (default: all; devices and dist need two or more GPUs)
#   DIST_CASES (default 1x2048x2048,1x4096x4096,1x8192x8192), DIST_DEVICES (default
#               all): the dist part's single matrices, one GPU against the list
#   TINY_PRECISIONS (default d s), TINY_BIG=0 (no 10^7 cases): the tiny part's
#   TUNE_TLP_SIZES, TUNE_TLP_PRECISIONS: the tune part's N and precisions
#               (default 256; d s z c)
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/out}
mkdir -p "$OUT"
TESTS=1 BENCH=1 SANITIZE=0 SANITIZE_TINY=0 NCU=0 NCUB=0 TUNE=0 QUICK=0 PY=0 AS80=0 NOIMG=0
for a in "$@"; do
  case $a in
    --no-tests) TESTS=0 ;; --no-bench) BENCH=0 ;; --sanitize) SANITIZE=1 ;;
    --sanitize-tiny) SANITIZE_TINY=1 ;;
    --ncu) NCU=1 ;; --ncu-blocked) NCUB=1 ;; --tune) TUNE=1 ;; --quick) QUICK=1 ;;
    --python) PY=1 ;; --as-sm80) AS80=1 ;; --no-image) NOIMG=1 ;;
    *) echo "gpu-check: unknown flag $a" >&2; exit 2 ;;
  esac
done
DEPS=$ROOT/.deps/root/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$DEPS:$DEPS/lapack:$DEPS/blas:${LD_LIBRARY_PATH:-}
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader \
  >"$OUT/gpu.txt" 2>&1
say "gpu: $(head -1 "$OUT/gpu.txt")"

# ---- the Python package ------------------------------------------------------
if [ $PY = 1 ]; then
  t0=$(date +%s)
  SITE=/tmp/bsvd-py-site
  python3 -m pip install -q --no-index --no-deps --target "$SITE" "$ROOT"/.whl/*.whl \
    >"$OUT/python-build.log" 2>&1 &&
    PYTHONPATH=$SITE CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
      CMAKE_ARGS="-DCMAKE_CUDA_ARCHITECTURES=90 -DBSVD_DEPS_ROOT=$ROOT/.deps/root" \
      python3 -m pip install -q --no-deps --no-build-isolation --target "$SITE/pkg" \
      --config-settings=cmake.define.BSVD_CUDA=ON "$ROOT" >>"$OUT/python-build.log" 2>&1
  rc=$?
  say "python build: rc=$rc in $(( $(date +%s) - t0 )) s"
  if [ $rc = 0 ]; then
    t0=$(date +%s)
    # From $OUT, so that the installed package is imported, not python/bsvd.
    (cd "$OUT" && PYTHONPATH=$SITE/pkg:$SITE:$ROOT/python/tests timeout 400 python3 -m pytest \
      -q -p no:cacheprovider "$ROOT/python/tests" -rf >"$OUT/python-tests.log" 2>&1)
    say "python tests: rc=$? in $(( $(date +%s) - t0 )) s: $(tail -1 "$OUT/python-tests.log")"
    grep -E "^FAILED" "$OUT/python-tests.log" | head -20 | tee -a "$SUMMARY"
    (cd "$OUT" && PYTHONPATH=$SITE/pkg:$SITE timeout 120 python3 "$ROOT/python/bench_async.py" \
      --reps 9 >"$OUT/python-bench-async.txt" 2>&1)
    say "python bench_async: rc=$?"
    tee -a "$SUMMARY" <"$OUT/python-bench-async.txt"
    # Host-resident NumPy batches streamed through the GPU (docs/perf/host-stream.md).
    (cd "$OUT" && PYTHONPATH=$SITE/pkg:$SITE timeout 200 python3 "$ROOT/python/bench_host.py" \
      --reps 3 >"$OUT/python-bench-host.txt" 2>&1)
    say "python bench_host: rc=$?"
    tee -a "$SUMMARY" <"$OUT/python-bench-host.txt"
  fi
fi
if [ $TESTS = 0 ] && [ $BENCH = 0 ] && [ $SANITIZE = 0 ] && [ $SANITIZE_TINY = 0 ] &&
  [ $NCU = 0 ] && [ $NCUB = 0 ] && [ $AS80 = 0 ] && [ $NOIMG = 0 ]; then
  cat "$SUMMARY"
  exit 0
fi

# ---- build ---------------------------------------------------------------
# (skipped when only --as-sm80 / --no-image were asked: they build their own)
B=$ROOT/build-gpu
if [ $TESTS = 1 ] || [ $BENCH = 1 ] || [ $SANITIZE = 1 ] || [ $SANITIZE_TINY = 1 ] ||
  [ $NCU = 1 ] || [ $NCUB = 1 ]; then
  t0=$(date +%s)
  cmake -S "$ROOT" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DBSVD_DEPS_ROOT="$ROOT/.deps/root" -DBSVD_GTEST_SOURCE="$ROOT/.deps/googletest" \
    >"$OUT/build.log" 2>&1 &&
    ninja -C "$B" -j"$(nproc)" bsvd_gpu_tests bsvd_cli >>"$OUT/build.log" 2>&1
  rc=$?
  say "build: rc=$rc in $(( $(date +%s) - t0 )) s"
  if [ $rc -ne 0 ]; then grep -E "error|FAILED" "$OUT/build.log" | head -30; exit 1; fi
  # Resource report of the fused kernels (registers, spills), at no cost.
  if command -v cuobjdump >/dev/null; then
    cuobjdump -res-usage "$B/libbsvd.a" 2>/dev/null | grep -A1 fused_jacobi_kernel |
      grep -oE "(fused_jacobi_kernelI[^E]*E[^E]*E[^E]*E|REG:[0-9]+|STACK:[0-9]+|LOCAL:[0-9]+)" |
      paste - - - - >"$OUT/resources.txt" 2>/dev/null
  fi
fi

# ---- tests -----------------------------------------------------------------
if [ $TESTS = 1 ]; then
  t0=$(date +%s)
  # GPU_CHECK_FILTER=regex runs only the matching GPU tests; GPU_CHECK_JOBS
  # (default 4) of them at a time (the whole suite: about 270 s on the H100).
  # CTest names typed tests Suite.Test<type> (GpuBlocked.EvdPlansSmall<double>),
  # not gtest's Suite/1.Test: a regex like 'GpuBlocked/1' matches nothing.
  (cd "$B" && ctest -L gpu -j"${GPU_CHECK_JOBS:-4}" ${GPU_CHECK_FILTER:+-R "$GPU_CHECK_FILTER"} --output-on-failure \
    --timeout 400 >"$OUT/ctest.log" 2>&1)
  rc=$?
  say "ctest -L gpu: rc=$rc in $(( $(date +%s) - t0 )) s: $(grep -E "tests passed|tests failed|No tests were found" "$OUT/ctest.log")"
  grep -E "^\s*[0-9]+ - .*(Failed|Timeout|Exception)" "$OUT/ctest.log" | head -20 | tee -a "$SUMMARY"
  grep -h "\[suitesparse" "$OUT/ctest.log" | sort -u | tee -a "$SUMMARY" >/dev/null
fi

# ---- an sm_80 device, imitated (docs/install.md, "Testing other GPUs") -----
if [ $AS80 = 1 ]; then
  B80=$ROOT/build-gpu-sm80
  t0=$(date +%s)
  cmake -S "$ROOT" -B "$B80" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=80-virtual \
    -DBSVD_DEPS_ROOT="$ROOT/.deps/root" -DBSVD_GTEST_SOURCE="$ROOT/.deps/googletest" \
    >"$OUT/build-sm80.log" 2>&1 &&
    ninja -C "$B80" -j"$(nproc)" bsvd_gpu_tests bsvd_cli >>"$OUT/build-sm80.log" 2>&1
  rc=$?
  say "build (compute_80 PTX only): rc=$rc in $(( $(date +%s) - t0 )) s"
  if [ $rc -eq 0 ]; then
    jit=()
    [ "${AS80_FORCE_JIT:-0}" = 1 ] && jit=(CUDA_FORCE_PTX_JIT=1)
    for as in sm_80 sm_86 sm_90; do
      env "${jit[@]}" BSVD_DEVICE_AS=$as "$B80/bsvd" plan --cases 1000x256x256,100x3000x16,10x96x96 \
        >"$OUT/plan-as-$as.txt" 2>&1
      env "${jit[@]}" BSVD_DEVICE_AS=$as "$B80/bsvd" plan --precision z --cases 200x256x256 \
        >>"$OUT/plan-as-$as.txt" 2>&1
      say "bsvd plan as $as: rc=$? $(grep -m1 -o 'GPU 0.*' "$OUT/plan-as-$as.txt")"
    done
    t0=$(date +%s)
    # The first call of each kernel JITs it from PTX: a long first test.
    (cd "$B80" && env "${jit[@]}" BSVD_DEVICE_AS=sm_80 CUDA_CACHE_MAXSIZE=4294967296 \
      ctest -L gpu -j"${GPU_CHECK_JOBS:-4}" ${GPU_CHECK_FILTER:+-R "$GPU_CHECK_FILTER"} \
      --output-on-failure --timeout 900 >"$OUT/ctest-sm80.log" 2>&1)
    rc=$?
    say "ctest -L gpu as sm_80 (PTX JIT): rc=$rc in $(( $(date +%s) - t0 )) s: $(grep -E "tests passed|tests failed" "$OUT/ctest-sm80.log")"
    grep -E "^\s*[0-9]+ - .*(Failed|Timeout|Exception)" "$OUT/ctest-sm80.log" | head -20 | tee -a "$SUMMARY"
  fi
fi

# ---- a build without this GPU's image: a clear refusal ----------------------
if [ $NOIMG = 1 ]; then
  BN=$ROOT/build-gpu-noimage
  t0=$(date +%s)
  cmake -S "$ROOT" -B "$BN" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=80-real \
    -DBSVD_DEPS_ROOT="$ROOT/.deps/root" -DBSVD_GTEST_SOURCE="$ROOT/.deps/googletest" \
    -DBSVD_BUILD_TESTS=OFF >"$OUT/build-noimage.log" 2>&1 &&
    ninja -C "$BN" -j"$(nproc)" bsvd_cli >>"$OUT/build-noimage.log" 2>&1
  say "build (sm_80 SASS only): rc=$? in $(( $(date +%s) - t0 )) s"
  "$BN/bsvd" plan --backend cuda --cases 10x32x32 >"$OUT/noimage.txt" 2>&1
  say "bsvd plan --backend cuda without an image: rc=$? $(head -1 "$OUT/noimage.txt")"
fi

if [ $SANITIZE_TINY = 1 ]; then
  # The register tier and the device API (shared-memory staging, barrier).
  F='GpuTiny/*.EdgeCasesInOneBatch:GpuTiny/*.VariableSizes:GpuTinyLanes/*.EdgeCasesInOneBatch:GpuTinyLanes/*.VariableSizes:DeviceApi/*:DeviceApiKabsch.*'
  for tool in memcheck racecheck; do
    timeout 300 compute-sanitizer --tool $tool --error-exitcode 9 "$B/tests/bsvd_gpu_tests" \
      --gtest_filter="$F" >"$OUT/sanitize-tiny-$tool.log" 2>&1
    say "compute-sanitizer $tool (tiny): rc=$? $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitize-tiny-$tool.log" | head -1)"
  done
fi

if [ $SANITIZE = 1 ]; then
  # racecheck is ~10x slower than memcheck: the blocked edge cases (180^2)
  # alone ran past the device call's limit, so it gets the small cases.
  FM='GpuFused/1.ValuesOnlySameS:GpuFused/2.EdgeCases:GpuBlocked/1.EdgeCases:GpuBlockedMixed/3.DeviceHostAndValuesOnlyAgree:GpuQr/1.EdgeCases:GpuBlocked/*.PairSolversSmall:GpuBlocked/1.EvdPlansGiveTheSameBits:GpuBlocked/3.EvdPlansGiveTheSameBits:GpuBlockedMixed/1.GramByCublas:GpuBlockedMixed/3.GramByCublas:GpuBlocked/*.GramPlansGiveTheSameBits:GpuBlocked/1.NullColumnsInRounds:GpuBlocked/2.NullColumnsInRounds:GpuBlocked/1.StreamGroupsGiveTheSameBits:GpuBlocked/3.StreamGroupsGiveTheSameBits:GpuQrcp/1.ClusterFactorGivesTheSameBits:GpuQrcp/3.ClusterFactorGivesTheSameBits:GpuQrcp/1.QApplyGivesTheSameBits:GpuQrcp/3.QApplyGivesTheSameBits:GpuQr/1.TsqrFactorMatchesCpuTwin:GpuQr/3.TsqrFactorMatchesCpuTwin:GpuBlockedMma.*:GpuBlockedMixed/1.WcycleMixedSizeBatch:GpuBlocked/3.WcycleOfOneOuterBlockIsOneLevel:GpuGram/1.EdgeCasesInOneBatch:GpuGram/3.VariableSizes:GpuAsync.GramMatchesBlockingAndReplays:GpuHsvd/1.BatchWithBadMatricesAndSignatures:GpuHsvd/2.StridedHostLayoutsKeepThePadding:GpuHsvd/0.BreakdownIsPerMatrix:GpuHsvd/1.BlockedPathValuesOnly:GpuHsvd/2.BlockedPathBreakdownIsPerMatrix:GpuHsvdForms.AsyncAndCapturedBlocked:GpuHsvdForms/3.DeviceVariableSizesOnEveryPath'
  FR='GpuFused/2.EdgeCases:GpuQr/1.EdgeCases:GpuQr/2.FactorMatchesCpuTwin:GpuBlocked/1.PairSolversSmall:GpuBlocked/3.PairSolversSmall:GpuBlocked/1.EvdPlansSmall:GpuQr/1.TsqrFactorMatchesCpuTwin:GpuHsvd/1.BatchWithBadMatricesAndSignatures:GpuHsvd/2.BreakdownIsPerMatrix:GpuHsvd/1.BlockedPathValuesOnly'
  for tool in memcheck racecheck; do
    F=$FM; [ $tool = racecheck ] && F=$FR
    timeout 400 compute-sanitizer --tool $tool --error-exitcode 9 "$B/tests/bsvd_gpu_tests" \
      --gtest_filter="$F" >"$OUT/sanitize-$tool.log" 2>&1
    say "compute-sanitizer $tool: rc=$? $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitize-$tool.log" | head -1)"
  done
  # The Gram kernel's tile-4 plan (small batches take tile 2) under racecheck
  # (d: ~90 s on the H100; z as well ran past 150 s).
  BSVD_GRAM_TILE=4 timeout 300 compute-sanitizer --tool racecheck --error-exitcode 9 \
    "$B/tests/bsvd_gpu_tests" --gtest_filter='GpuBlocked/1.EvdPlansSmall' \
    >"$OUT/sanitize-racecheck-tile4.log" 2>&1
  say "compute-sanitizer racecheck (Gram tile 4): rc=$? $(grep -E "RACECHECK SUMMARY" "$OUT/sanitize-racecheck-tile4.log" | head -1)"
  # The QR kernels that hold X or the matrix in shared memory (the cluster
  # factorization, clusters of 1 and 4 blocks: ~130 s on the H100 for d).
  timeout 240 compute-sanitizer --tool racecheck --error-exitcode 9 \
    "$B/tests/bsvd_gpu_tests" --gtest_filter='GpuQrcp/1.PivotedFactorMatchesCpuTwin' \
    >"$OUT/sanitize-racecheck-qr.log" 2>&1
  say "compute-sanitizer racecheck (QR clusters): rc=$? $(grep -E "RACECHECK SUMMARY" "$OUT/sanitize-racecheck-qr.log" | head -1)"
  # The two-level (W-cycle) block ordering: racecheck on the CLI with two
  # small matrices, d and z (40 columns: 3 blocks, outer blocks of 2 --
  # ragged, an odd outer count); the GPU tests' W-cycle shapes ran past
  # 50-100 s under racecheck.
  for dt in d z; do
    python3 -c "import numpy as np, sys; g = np.random.default_rng(5); a = g.standard_normal((2, 40, 40)); \
np.save(sys.argv[1], a if sys.argv[2] == 'd' else a + 1j * g.standard_normal((2, 40, 40)))" /tmp/bsvd-wc-$dt.npy $dt &&
      timeout 240 compute-sanitizer --tool racecheck --error-exitcode 9 "$B/bsvd" run /tmp/bsvd-wc-$dt.npy \
        --backend cuda --variant blocked --wcycle-blocks 2 --wcycle-sweeps 2 -o /tmp/bsvd-wc-out \
        >"$OUT/sanitize-racecheck-wcycle-$dt.log" 2>&1
    say "compute-sanitizer racecheck (W-cycle, $dt): rc=$? $(grep -E "RACECHECK SUMMARY" "$OUT/sanitize-racecheck-wcycle-$dt.log" | head -1)"
  done
fi

# ---- benchmark -------------------------------------------------------------
BSVD=$B/bsvd
largest() { # largest square n the fused kernel takes with vectors
  python3 - "$1" <<'EOF'
import sys
p = sys.argv[1]
eb, rb = {'s': (4, 4), 'd': (8, 8), 'c': (8, 4), 'z': (16, 8)}[p]
a16 = lambda x: (x + 15) // 16 * 16
def smem(n):  # mirrors src/cuda/fused/plan.cu layout() with vectors and odd-even
    slots = max(2, n + (n & 1)); o = a16((n + 1) * n * eb); o = a16(o + (n + 1) * n * eb)
    o = a16(o + n * rb); o = a16(o + n * rb); o = a16(o + 4 * n); o = a16(o + 8 * slots)
    o = a16(o + 4 * n); o = a16(o + 4 * n); o = a16(o + n * eb); o = a16(o + n * eb)
    h = slots // 2; o = a16(o + 4 * h); o = a16(o + 4 * h); o = a16(o + h * eb); o = a16(o + h * rb)
    return a16(o + 48)
n = 1
while smem(n + 1) <= 232448: n += 1
print(n)
EOF
}
part() { [ -z "${BENCH_ONLY:-}" ] || [[ ",$BENCH_ONLY," == *",$1,"* ]]; }
if [ $BENCH = 1 ]; then
  [ $TUNE = 1 ] && export BSVD_BENCH_TUNE=1
  t0=$(date +%s)
  : >"$OUT/bench.log"
  part fused && for p in d s; do
    if [ $QUICK = 1 ]; then cases="10000x8x8,10000x16x16,10000x32x32,1000x64x64"
    else cases="10000x8x8,10000x16x16,10000x32x32,1000x64x64,1000x$(largest $p)x$(largest $p)"; fi
    "$BSVD" bench --backend cuda --precision $p --cases "$cases" --family random --reps 7 \
      --check-sample 16 -q --json "$OUT/bench-$p-random.json" >>"$OUT/bench.log" 2>&1
    say "bench $p random: rc=$?"
  done
  unset BSVD_BENCH_TUNE
  # The blocked path (issue 4 sizes): 1000 x 128^2 ... 512^2, tall, 100 x 1024^2,
  # and the WCYCLE Table IV sizes (200 x 100^2 ... 512^2); --pair-solver all:
  # the automatic pair solver next to each fixed one (issue 5's plan table).
  part blocked && for p in d s; do
    if [ $p = d ]; then cases="1000x128x128,1000x256x256,1000x512x512,1000x2000x16,100x1024x1024"
    else cases="1000x256x256,1000x512x512,1000x2000x16,100x1024x1024"; fi
    [ $QUICK = 1 ] && cases="1000x128x128,1000x256x256,1000x2000x16"
    "$BSVD" bench --backend cuda --precision $p --cases "$cases" --family random --reps 3 \
      --check-sample 4 --pair-solver all -q --json "$OUT/bench-$p-blocked.json" >>"$OUT/bench.log" 2>&1
    say "bench $p blocked: rc=$?"
  done
  if [ $QUICK = 0 ] && part table4; then
    "$BSVD" bench --backend cuda --precision d --cases 200x100x100,200x128x128,200x256x256,200x512x512 \
      --family random --reps 3 --check-sample 4 --pair-solver all --evd-threads all --wcycle 2,4 -q \
      --json "$OUT/bench-d-table4.json" >>"$OUT/bench.log" 2>&1
    say "bench d WCYCLE table IV sizes: rc=$?"
  fi
  # The mixed-size SuiteSparse batch (issue 5): one call vs cuSOLVER per
  # matrix, and the batch again with each eigensolver plan and two-level plan.
  MTX=$ROOT/data/matrices
  if part mtx; then
    "$BSVD" bench --backend cuda --precision d --mtx "$MTX" --reps 3 --evd-threads all --wcycle 2,4 -q \
      --json "$OUT/bench-d-mtx.json" >"$OUT/bench-mtx.log" 2>&1
    say "bench d mtx ($MTX): rc=$?"
    grep -E "^(bsvd|cusolver)" "$OUT/bench-mtx.log" | tee -a "$SUMMARY" >/dev/null
  fi
  # The eigensolver plans' TLP thresholds (src/plan/tuning_sm90.cpp tlp_warp_*,
  # tlp_block) on N x N matrices, N in TUNE_TLP_SIZES (default
  # 256: full pairs; 100 has ragged ones, where the lean kernel does not run).
  part tune && for p in ${TUNE_TLP_PRECISIONS:-d s z c}; do
    for tn in ${TUNE_TLP_SIZES:-256}; do
      "$BSVD" bench --backend cuda --precision $p --tune-tlp $tn -q >"$OUT/tune-tlp-$p-$tn.log" 2>&1
      say "tune-tlp $p $tn: rc=$? $(grep 'measured TLP' "$OUT/tune-tlp-$p-$tn.log")"
      cat "$OUT/tune-tlp-$p-$tn.log" >>"$SUMMARY"
    done
  done
  # Fused kernel or blocked path beyond 64 columns (plan::fused_call_cols):
  # 8 ... 264 matrices of 68 ... 88 columns, the auto row with the other
  # route's row beside it (docs/design/decisions/0001-fused-column-cap.md).
  part route && for p in d c z s; do
    C=""; for n in 68 72 76 80 88; do for c in 8 32 100 132 200 264; do C="$C,${c}x${n}x${n}"; done; done
    BSVD_BENCH_ONLY=1 "$BSVD" bench --backend cuda --precision $p --cases "${C#,}" --family random \
      --reps 5 --check-sample 1 -q --json "$OUT/bench-$p-route.json" >>"$OUT/bench.log" 2>&1
    say "bench $p route (68..88 columns): rc=$?"
  done
  # The register tier (docs/perf/tiny.md, tiny-wide.md): the issue-32
  # targets and a batch sweep (TINY_SIZES x TINY_BATCHES, at most 1.1e8
  # elements a case), each case with the tier (auto) and without it
  # (BSVD_TINY_MAX_DIM=0: the fused kernel); bsvd rows only.
  part tiny && for p in ${TINY_PRECISIONS:-d s}; do
    C="1000000x2x2,1000000x3x3,1000000x8x8,10000x8x8,10000x16x16,10000x32x32,100000x4x4"
    for n in ${TINY_SIZES:-2 3 4 5 6 7 8 12 16 24 32}; do
      for c in ${TINY_BATCHES:-1 10 100 1000 10000 100000 1000000}; do
        [ $((c * n * n)) -le 110000000 ] && C="$C,${c}x${n}x${n}"
      done
    done
    [ "${TINY_BIG:-1}" = 1 ] && C="$C,10000000x2x2,10000000x3x3"
    for cap in auto 0; do
      if [ $cap = auto ]; then unset BSVD_TINY_MAX_DIM; else export BSVD_TINY_MAX_DIM=$cap; fi
      BSVD_BENCH_ONLY=1 "$BSVD" bench --backend cuda --precision $p --cases "$C" --family random \
        --reps 5 --check-sample 4 -q --json "$OUT/bench-$p-tiny-$cap.json" >>"$OUT/bench.log" 2>&1
      say "bench $p tiny (cap $cap): rc=$?"
    done
    unset BSVD_TINY_MAX_DIM
  done
  # The register tier's variants A/B (docs/perf/tiny.md): each case one
  # thread per matrix (lanes off; it reaches 8), the lanes variant (to 32),
  # and the fused kernel (the tier off), all in one run. LANES_MODES picks
  # some of them; batches of more than LANES_MAX_ELEMS elements are left out.
  part lanes && for p in ${LANES_PRECISIONS:-d s z c}; do
    C=""; for n in ${LANES_SIZES:-2 3 4 5 6 7 8}; do
      for c in ${LANES_BATCHES:-1 100 1000 10000 100000 1000000}; do
        [ $((c * n * n)) -le ${LANES_MAX_ELEMS:-100000000} ] && C="$C,${c}x${n}x${n}"
      done
    done
    for mode in ${LANES_MODES:-thread:8:9 lanes:32:2 fused:0:9}; do
      IFS=: read -r name cap from <<<"$mode"
      BSVD_TINY_MAX_DIM=$cap BSVD_TINY_LANES_FROM=$from BSVD_BENCH_ONLY=1 "$BSVD" bench \
        --backend cuda --precision $p --cases "${C#,}" --family random --reps 5 \
        --check-sample 4 -q --json "$OUT/bench-$p-lanes-$name.json" >>"$OUT/bench.log" 2>&1
      say "bench $p lanes A/B ($name): rc=$?"
    done
  done
  # Ill-conditioned families: gesvda's accuracy against bsvd's.
  part families && for f in geo logrand; do
    "$BSVD" bench --backend cuda --precision d,s --cases 10000x32x32,1000x64x64 --family $f \
      --reps 3 --check-sample 16 -q --json "$OUT/bench-ds-$f.json" >>"$OUT/bench.log" 2>&1
    say "bench d,s $f: rc=$?"
  done
  # The stream-ordered form against the blocking one on the same data (the
  # x bsvd column is its ratio; its note gives the host time of one call).
  part async && for p in d s c z; do
    cases="10000x8x8,10000x32x32,1000x64x64,1000x128x128,1000x2000x16"
    [ $p = d ] || [ $p = s ] && cases="$cases,1000x256x256"
    "$BSVD" bench --backend cuda --precision $p --cases "$cases" --family random --reps 5 --async \
      --check-sample 4 -q --json "$OUT/bench-$p-async.json" >>"$OUT/bench.log" 2>&1
    say "bench $p async: rc=$?"
  done
  # The hyperbolic SVD (docs/perf/hsvd.md): against the SVD of the same G and
  # cuSOLVER's eigensolvers on H = G J G^H formed by cuBLAS; then graded G
  # (8 decades) in s and c, where the note gives each row's largest relative
  # eigenvalue error.
  part hsvd && for p in d s c z; do
    cases="10000x32x32,1000x64x64,1000x128x128"
    case $p in
      d) cases="$cases,1000x256x256,10000x8x8,1000x100x100" ;;
      s) cases="$cases,1000x256x256" ;;
    esac
    "$BSVD" bench --backend cuda --hsvd --precision $p --cases "$cases" --family random --reps 5 \
      --check-sample 8 -q --json "$OUT/bench-$p-hsvd.json" >>"$OUT/bench.log" 2>&1
    say "bench $p hsvd: rc=$?"
  done
  # The SVD of the blocked sizes with each pair solver: the HSVD's blocked
  # path has the one-sided one only (BSVD_PAIR_SVD_SM), the SVD's auto the
  # Gram path; the svd row separates the two costs.
  part hsvd && for p in d s; do
    "$BSVD" bench --backend cuda --precision $p --cases 1000x128x128,1000x256x256 \
      --family random --reps 3 --pair-solver all --check-sample 4 -q \
      --json "$OUT/bench-$p-hsvd-pair-solvers.json" >>"$OUT/bench.log" 2>&1
    say "bench $p svd pair solvers: rc=$?"
  done
  part hsvd && for p in s c; do
    "$BSVD" bench --backend cuda --hsvd --grade 8 --precision $p --cases 10000x32x32 \
      --family random --reps 3 --check-sample 8 -q --json "$OUT/bench-$p-hsvd-graded.json" \
      >>"$OUT/bench.log" 2>&1
    say "bench $p hsvd graded: rc=$?"
  done
  # Host data over every GPU of the machine against one (docs/perf/multi-gpu.md);
  # only where two or more are visible.
  NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  part devices && [ "$NGPU" -ge 2 ] && {
    "$BSVD" bench --backend cuda --precision d --cases 100000x64x64,4000x256x256,1000x512x512 \
      --family random --reps 2 --check-sample 4 --devices all -q \
      --json "$OUT/bench-d-devices.json" >>"$OUT/bench.log" 2>&1
    say "bench d devices ($NGPU GPUs): rc=$?"
  }
  # One large matrix across the GPUs (docs/perf/multi-gpu.md, one large
  # matrix): the host-data call on one GPU and over the list, T1-T4 on the GPU.
  part dist && [ "$NGPU" -ge 2 ] && {
    "$BSVD" bench --backend cuda --precision d --family random --reps 1 \
      --cases "${DIST_CASES:-1x2048x2048,1x4096x4096,1x8192x8192}" \
      --devices "${DIST_DEVICES:-all}" -q --json "$OUT/bench-d-dist.json" >>"$OUT/bench.log" 2>&1
    say "bench d dist ($NGPU GPUs, ${DIST_DEVICES:-all}): rc=$?"
  }
  say "bench: $(( $(date +%s) - t0 )) s"
fi

if [ $NCU = 1 ] && command -v ncu >/dev/null; then
  ncu --clock-control none -k regex:fused_jacobi_kernel -c 2 \
    --section SpeedOfLight --section Occupancy --section LaunchStats \
    --section WarpStateStats --section InstructionStats --section SchedulerStats \
    --section MemoryWorkloadAnalysis_Tables --metrics \
    l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed.sum,sm__inst_executed_pipe_fp64.sum,smsp__sass_inst_executed_op_local_ld.sum,smsp__sass_inst_executed_op_local_st.sum \
    "$BSVD" bench --backend cuda --precision d --cases 10000x32x32 --reps 1 --check-sample 1 -q \
    >"$OUT/ncu.log" 2>&1
  say "ncu: rc=$? (ncu.log)"
  grep -E "Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Compute \(SM\) Thr|Memory Thr|Duration|Stall|Warp Cycles Per Issued|Issued Warp|No Eligible|bank_conflicts|inst_executed" "$OUT/ncu.log" | head -60 | tee -a "$SUMMARY"
fi
if [ $NCUB = 1 ] && command -v ncu >/dev/null; then
  # One steady-state launch (the 6th) of each step kernel; bsvd only.
  STALLS=$(for r in long_scoreboard short_scoreboard barrier mio_throttle lg_throttle wait \
    math_pipe_throttle not_selected selected no_instruction dispatch_stall branch_resolving membar; do
    printf 'smsp__average_warps_issue_stalled_%s_per_issue_active.ratio,' $r; done)
  for spec in blk_gram_tile4_kernel:1000x512x512 blk_evd_warp_kernel:1000x128x128 blk_update_kernel:1000x128x128 blk_update_kernel:1000x512x512; do
    k=${spec%%:*} c=${spec#*:}
    BSVD_BENCH_ONLY=1 timeout 240 ncu --clock-control none -k regex:$k --launch-skip 5 -c 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
      --section SchedulerStats --section MemoryWorkloadAnalysis --metrics \
      ${STALLS}dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum,sm__inst_executed_pipe_fp64.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_global_ld.sum \
      "$BSVD" bench --backend cuda --precision d --cases $c --reps 1 --check-sample 1 -q \
      >"$OUT/ncu-$k-$c.log" 2>&1
    say "ncu $k $c: rc=$?"
    grep -E "Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit (Reg|Shared)|Compute \(SM\) Thr|Memory Thr|DRAM Thr|Duration|Warp Cycles Per Issued|Issued Warp|No Eligible|issue_stalled.*ratio +[0-9.]*[1-9]|dram__bytes|inst_executed|wavefronts" \
      "$OUT/ncu-$k-$c.log" | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | tee -a "$SUMMARY"
  done
fi
if [ $NCU = 1 ] && command -v cuobjdump >/dev/null; then
  o=$(find "$B" -name "fused_d.cu.o" | head -1)
  cuobjdump -sass "$o" > "$OUT/fused_d.sass" 2>&1
  # The 10000 x 32^2 d default: G4, RPL8, group mode (Lb0).
  K=IdLi4ELi8ELb0
  awk "/Function : .*fused_jacobi_kernel$K/{f=1} f&&/Function : /&&!/$K/{f=0} f" "$OUT/fused_d.sass" > "$OUT/k_d_G4_R8.sass"
  say "sass d G4 R8: $(grep -c '^ *\/\*[0-9a-f]*\*\/' "$OUT/k_d_G4_R8.sass") instructions; DFMA $(grep -c DFMA "$OUT/k_d_G4_R8.sass") MUFU $(grep -c MUFU "$OUT/k_d_G4_R8.sass") CALL $(grep -c CALL "$OUT/k_d_G4_R8.sass") BAR $(grep -c BAR "$OUT/k_d_G4_R8.sass") LDL $(grep -c LDL "$OUT/k_d_G4_R8.sass")"
fi

# ---- short table last --------------------------------------------------------
python3 - "$OUT" <<'EOF' | tee "$OUT/table.txt"
import glob, json, os, sys
rows = []
for f in sorted(glob.glob(os.path.join(sys.argv[1], "bench-*.json"))):
    rows += json.load(open(f))
base = {}
for r in rows:
    if r["solver"] == "bsvd-cuda":
        base[(r["precision"], r["batch"], r["m"], r["n"], r["family"])] = r["ms"]
print(f'{"solver":24} {"p":1} {"fam":7} {"case":13} {"ms":>9} {"x bsvd":>7} {"T1":>7} {"T2":>7} {"T3":>7} ok sw  note')
def g(x):
    return float("nan") if x is None else x
for r in rows:
    for f in ("t1", "t2", "t3", "ms"): r[f] = g(r[f])
    key = (r["precision"], r["batch"], r["m"], r["n"], r["family"])
    b = base.get(key, 0)
    ratio = f'{r["ms"] / b:.2f}' if b and r["ms"] and r["solver"] != "bsvd-cuda" else "-"
    case = f'{r["batch"]}x{r["m"]}x{r["n"]}'
    print(f'{r["solver"][:24]:24} {r["precision"]} {r["family"][:7]:7} {case:13} {r["ms"]:9.3f} {ratio:>7} '
          f'{r["t1"]:7.2g} {r["t2"]:7.2g} {r["t3"]:7.2g} {"y" if r["pass"] else "N"}  {r["max_sweeps"]:2d}  {r["note"][:72]}')
EOF
cat "$SUMMARY"
# The device tool brings back at most 8 files: pack the logs into one.
(cd "$OUT" && tar czf /tmp/bsvd-logs.tgz --exclude=table.txt --exclude=summary.txt . &&
  find . -maxdepth 1 -type f ! -name table.txt ! -name summary.txt -delete &&
  mv /tmp/bsvd-logs.tgz logs.tgz)
