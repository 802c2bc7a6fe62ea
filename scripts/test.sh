#!/usr/bin/env bash
# Builds bsvd (scripts/setup.sh), checks the format (scripts/format.sh) and
# runs the tests: C++ unit tests, CLI tests, the accuracy suite and the
# install-and-link test (ctest), then the Python package's tests, the
# documentation site with its snippets, and the wheel in a fresh virtual
# environment. Python runs from .venv/ (or $BSVD_VENV) only.
# GPU tests (label gpu) skip without a GPU; scripts/gpu-check.sh runs them on one.
#   scripts/test.sh              build/ + ctest (all tests that are not gpu-only)
#   scripts/test.sh --sanitize   also a CPU-only build under ASan + UBSan
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The house format (.clang-format): a file that differs fails the run.
scripts/format.sh --check
# The gpu-labelled tests run too: without a GPU they must skip cleanly.
# One OpenBLAS thread per test: ctest already runs a test per core, and
# OpenBLAS's own threads, waiting for cores other work holds, took the
# LAPACK check (cli.check_cpu_lapack, 49 s alone) to 740 s on a loaded
# two-core machine.
OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1} \
  ctest --test-dir build --output-on-failure -j "$(nproc)"
# The CUDA sources that differ between GPU architectures, compiled for the
# release list (setup.sh built everything for sm_90 only): about 125 s of
# CPU, 1-2 min on two cores.
scripts/arch-check.sh
# The .npy and Matrix Market readers under libFuzzer, briefly (scripts/fuzz.sh).
BSVD_FUZZ_SEED=1 scripts/fuzz.sh 20
# The Python package: pip install . into .venv/ and its pytest suite (NumPy
# on the CPU); then its wheel, installed into a fresh virtual environment.
scripts/python-test.sh
# The documentation site (build/docs/html/), every warning an error, and
# every code block on it run (docs/site/snippets.md).
scripts/docs.sh
scripts/wheel-test.sh
if [ "${1:-}" = "--sanitize" ]; then
  BSVD_BUILD_DIR=build-asan BSVD_CMAKE_ARGS="-DBSVD_CUDA=OFF -DBSVD_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo" \
    scripts/setup.sh
  # The full accuracy suite (cli.check_cpu_*) takes hours under ASan; the unit
  # tests and the other CLI tests cover the same code paths on small inputs.
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$(nproc)" -LE gpu -E cli.check_cpu
fi
