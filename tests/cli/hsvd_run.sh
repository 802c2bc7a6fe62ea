#!/usr/bin/env bash
# bsvd run --nplus K: the hyperbolic SVD of a .npy batch. The S, U, V it
# writes, read back by NumPy, must reconstruct G, keep U orthonormal and V
# J-unitary (docs/hsvd.md's ratios), and S must square to the eigenvalues of
# G J G^H; a breakdown matrix is counted as such; misuse is a usage error.
set -euo pipefail
bsvd=$1; src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
python3 "$src/tests/cli/hsvd_run.py" "$bsvd" "$tmp"
