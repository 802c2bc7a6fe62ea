#!/usr/bin/env bash
# Every SuiteSparse matrix of data/matrices converges (info = 0) on every
# route of the CPU backend's Jacobi solvers, the GPU paths' twins: unblocked,
# blocked, QR with column pivoting first (both variants) and the Gram
# preconditioning, in d (the stopping rule, include/bsvd/device/threshold.cuh;
# tests/unit/test_cpu_convergence.cpp checks the matrices up to 128 in
# seconds, this the whole set in about 1.5 minutes). Exits 1 on any info != 0.
set -euo pipefail
bsvd=$1; src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
while read -r name args; do
  "$bsvd" run "$src/data/matrices" --backend cpu --precision d --values-only -o "$tmp/$name" \
    $args > "$tmp/$name.log" 2>&1
  # summary.tsv: name file status m n info sweeps ...
  bad=$(awk -F'\t' 'NR > 1 && $6 != 0 { printf " %s(info %s, %s sweeps)", $1, $6, $7 }' \
    "$tmp/$name/summary.tsv")
  count=$(awk 'END { print NR - 1 }' "$tmp/$name/summary.tsv")
  worst=$(awk -F'\t' 'NR > 1 && $7 > w { w = $7 } END { print w + 0 }' "$tmp/$name/summary.tsv")
  if [ "$count" -lt 141 ] || [ -n "$bad" ]; then
    echo "FAIL: $name: $count matrices, not converged:$bad"
    fail=1
  else
    echo "ok: $name: $count matrices converged, max sweeps $worst"
  fi
done <<'EOF'
unblocked --variant unblocked
blocked --variant blocked
unblocked-qrcp --variant unblocked --precondition 1
blocked-qrcp --variant blocked --precondition 1
gram --variant unblocked --precondition 2
EOF
exit $fail
