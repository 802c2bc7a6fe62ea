#!/usr/bin/env bash
# The accuracy suite on the CPU backend's Jacobi solver, the GPU kernels'
# twin (--variant unblocked names it; variant auto takes the LAPACK path
# for most sizes, check_cpu_lapack.sh): s, d, c, z; the six families at
# sizes 1 ... 257 in square, tall and wide shapes; the edge cases; every
# SuiteSparse matrix in data/matrices. Exits 1 on any failure.
#   check_cpu.sh BSVD ROOT [PRECISIONS]   (default sdcz; CTest runs one each)
set -euo pipefail
bsvd=$1
"$bsvd" check --backend cpu --variant unblocked -q --precision "${3:-sdcz}"
