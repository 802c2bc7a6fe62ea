#!/usr/bin/env bash
# The fused kernel's table of docs/perf/fused.md without a device-side
# build: bsvd and cuSOLVER rows for d and s, then Nsight Compute on
# 10000 x 32^2 d. Carry .deps and build-gpu/bsvd.gz (gzip -1 of the bsvd
# binary built here with -DBSVD_DEPS_ROOT=$PWD/.deps/root).
OUT=${OUT:-out}; mkdir -p "$OUT"; export OUT
L=$PWD/.deps/root/usr/lib/x86_64-linux-gnu; export LD_LIBRARY_PATH=$L:$L/lapack:$L/blas
gunzip -f build-gpu/bsvd.gz; chmod +x build-gpu/bsvd
for p in d s; do timeout 200 build-gpu/bsvd bench --backend cuda --precision $p --cases 10000x8x8,10000x16x16,10000x32x32,1000x64x64 --family random --reps 7 --check-sample 16 -q --json $OUT/full-$p.json > /dev/null 2>&1; echo "bench $p rc=$?"; done
python3 - <<'PY'
import json, os
for p in 'ds':
  for r in json.load(open(os.environ['OUT'] + f'/full-{p}.json')):
    print(f'{r["solver"]:22} {p} {r["batch"]}x{r["m"]} {r["ms"] or -1:9.3f} T1={r["t1"] or -1:.2g} T2={r["t2"] or -1:.2g} T3={r["t3"] or -1:.2g} {"ok" if r["pass"] else "FAIL"} {r["note"][:30]}')
PY
if command -v ncu >/dev/null; then
  timeout 200 ncu --clock-control none -k regex:fused_jacobi_kernel -c 1 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section InstructionStats --section SchedulerStats --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed.sum,sm__inst_executed_pipe_fp64.sum,smsp__sass_inst_executed_op_local_ld.sum,smsp__sass_inst_executed_op_local_st.sum build-gpu/bsvd bench --backend cuda --precision d --cases 10000x32x32 --reps 1 --check-sample 1 -q > $OUT/ncu.log 2>&1
  echo "ncu rc=$?"; grep -E "Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Duration|Warp Cycles Per Issued|Issued Warp|No Eligible|bank_conflicts|wavefronts|inst_executed|local_" $OUT/ncu.log | head -40
fi
