#!/usr/bin/env bash
# A batch written by NumPy goes through `bsvd run`; the U, S, V it writes,
# read back by NumPy, must reconstruct the batch to the T1 threshold and be
# orthonormal (T2), for every dtype and for m < n; a NaN matrix in the batch
# gets info -1 and leaves the others intact.
set -euo pipefail
bsvd=$1; src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
python3 "$src/tests/cli/roundtrip.py" "$bsvd" "$tmp"
