#!/usr/bin/env bash
# The accuracy suite on the CPU backend, as issue 2 asks: s, d, c, z; the six
# families at sizes 1 ... 257 in square, tall and wide shapes; the edge
# cases; every SuiteSparse matrix in data/matrices. Exits 1 on any failure.
set -euo pipefail
bsvd=$1
"$bsvd" check --backend cpu -q
