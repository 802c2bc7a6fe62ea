#!/usr/bin/env bash
# Timing iteration on the device tool without a device-side build: runs the
# binaries built here in build-gpu/ (carry .deps, build-gpu/bsvd), bsvd rows
# only, every G (BSVD_BENCH_TUNE) for each threads-per-matrix cap in $TPMS.
L=$PWD/.deps/root/usr/lib/x86_64-linux-gnu; export LD_LIBRARY_PATH=$L:$L/lapack:$L/blas:${LD_LIBRARY_PATH:-}
OUT=${OUT:-out}; mkdir -p "$OUT"
BINS=${BINS:-build-gpu/bsvd}
for f in build-gpu/*.gz build-gpu/tests/*.gz; do [ -e "$f" ] && gunzip -f "$f" && chmod +x "${f%.gz}"; done
nvidia-smi --query-gpu=name --format=csv,noheader; ldd build-gpu/bsvd* | grep "not found"
CASES=${CASES:-10000x8x8,10000x16x16,10000x32x32,1000x64x64}
for bin in $BINS; do
for tpm in ${TPMS:-256}; do
  for p in ${PRECS:-d s}; do
    tag=$(basename $bin)-$p-$tpm
    BSVD_FUSED_TPM=$tpm BSVD_BENCH_ONLY=1 BSVD_BENCH_TUNE=${TUNE:-1} timeout 150 $bin bench --backend cuda \
      --precision $p --cases $CASES --family ${FAM:-random} --reps 7 --check-sample 16 -q \
      --json "$OUT/bench-$tag.json" > "$OUT/bench-$tag.log" 2>&1 || echo "bench $tag rc=$?"
  done
done
done
python3 - "$OUT" <<'PY'
import glob, json, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "bench-*.json"))):
    tpm = os.path.basename(f)[6:-5]
    for r in json.load(open(f)):
        print(f'{tpm:>14} {r["solver"]:18} {r["precision"]} {r["batch"]}x{r["m"]} {r["ms"]:8.3f} '
              f'T2={r["t2"] if r["t2"] is not None else -1:.2g} {"ok" if r["pass"] else "FAIL"} sw={r["max_sweeps"]}')
PY
# TESTS=1: the GPU tests (binary built here) and compute-sanitizer.
if [ "${TESTS:-0}" = 1 ]; then
  T=build-gpu/tests/bsvd_gpu_tests
  SECONDS=0; timeout 400 $T > "$OUT/tests.log" 2>&1; echo "gpu tests rc=$? in $SECONDS s"
  grep -E "^\[  (PASSED|FAILED) |tests? ran|FAILED  \]" "$OUT/tests.log" | head -20
  grep -B2 -A6 "Failure" "$OUT/tests.log" | head -40
fi
if [ "${SANITIZE:-0}" = 1 ]; then
  F=${SAN_FILTER:-'GpuFused/1.ValuesOnlySameS:GpuFused/2.EdgeCases'}
  for tool in memcheck racecheck; do
    SECONDS=0; timeout 300 compute-sanitizer --tool $tool --error-exitcode 9 build-gpu/tests/bsvd_gpu_tests \
      --gtest_filter="$F" > "$OUT/sanitize-$tool.log" 2>&1
    echo "compute-sanitizer $tool: rc=$? in $SECONDS s $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitize-$tool.log" | head -1)"
  done
fi
