#!/usr/bin/env bash
# Builds and installs the Python package (pip install of the repository root,
# scikit-build-core + nanobind) into the project's .venv/ (scripts/setup.sh)
# and runs its tests (python/tests). Nothing is installed anywhere else.
#   scripts/python-test.sh              CI: CPU tests (GPU tests skip without a GPU)
#   scripts/python-test.sh -k list      extra arguments go to pytest
# Environment:
#   PYTHON=path           the interpreter to install into and test with
#                         (default $BSVD_VENV/bin/python, BSVD_VENV=.venv)
#   BSVD_PY_CUDA=ON|OFF|AUTO  build the CUDA backend into the extension. Default:
#                         AUTO (nvcc found) when a GPU is visible, else OFF, so a
#                         CI machine without a GPU does not compile kernels
#                         it cannot run (pip install . alone builds CUDA when
#                         nvcc is found).
#   BSVD_PY_ISOLATED=1    build in pip's isolated environment (fetches
#                         scikit-build-core and nanobind from PyPI) instead
#                         of the current one.
# The build folder build-python/ is kept between runs (incremental, ccache).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-${BSVD_VENV:-.venv}/bin/python}

if [ -z "${BSVD_PY_CUDA:-}" ]; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    BSVD_PY_CUDA=AUTO
  else
    BSVD_PY_CUDA=OFF
  fi
fi
if [ "$BSVD_PY_CUDA" != OFF ] && ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDACXX=${CUDACXX:-/usr/local/cuda/bin/nvcc}
fi

export PIP_ROOT_USER_ACTION=ignore
pip_q=(-q --disable-pip-version-check --no-warn-script-location)
# What the build and the tests need: python/requirements-dev.txt, installed
# into .venv/ by scripts/setup.sh.
mods=(numpy pytest scipy)
[ "${BSVD_PY_ISOLATED:-0}" = 1 ] || mods+=(scikit_build_core nanobind)
for mod in "${mods[@]}"; do
  if ! "$PY" -c "import $mod" 2>/dev/null; then
    echo "python-test: $PY cannot import $mod: run scripts/setup.sh (it fills .venv/ from python/requirements-dev.txt)" >&2
    exit 2
  fi
done

# (BSVD_PORTABLE off: the same build folder serves scripts/wheel-test.sh,
# which turns it on.)
build_args=(--config-settings="cmake.define.BSVD_CUDA=$BSVD_PY_CUDA"
  --config-settings=cmake.define.BSVD_PORTABLE=OFF)
# A second venv (BSVD_VENV) builds in a folder of its own: two interpreters
# of one wheel tag (3.11.2 and 3.11.7) must not share a CMake cache.
[ "${BSVD_VENV:-.venv}" = .venv ] ||
  build_args+=(--config-settings="build-dir=build-python/$(basename "$BSVD_VENV")/{wheel_tag}")
[ "${BSVD_PY_ISOLATED:-0}" = 1 ] || build_args+=(--no-build-isolation)
echo "python-test: pip install . (BSVD_CUDA=$BSVD_PY_CUDA)"
t0=$(date +%s)
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)} \
  "$PY" -m pip install "${pip_q[@]}" --no-deps "${build_args[@]}" ./
echo "python-test: installed in $(( $(date +%s) - t0 )) s"

# Run from the root: the installed bsvd is imported, not python/bsvd.
"$PY" -m pytest -q -p no:cacheprovider python/tests "$@"
