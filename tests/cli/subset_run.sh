#!/usr/bin/env bash
# `bsvd run --subset-index / --subset-value` (gesvdx) on .npy batches: the
# triplets read back by NumPy against its SVD by scaled ratios, ns.npy, the
# zeros after each matrix's count, and the usage errors (exit 2).
set -euo pipefail
bsvd=$1; src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
python3 "$src/tests/cli/subset_run.py" "$bsvd" "$tmp"
