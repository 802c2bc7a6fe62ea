#!/usr/bin/env bash
# The accuracy suite on the CPU backend's default path (variant auto: LAPACK
# xGESDD above 8 columns, the Jacobi solver below): s, d, c, z; the six
# families, the edge cases and every SuiteSparse matrix. Sizes up to 100
# (257 adds minutes and no new code path). Exits 1 on any failure.
set -euo pipefail
bsvd=$1
"$bsvd" check --backend cpu --sizes 1,2,3,7,9,16,31,33,64,100 -q
