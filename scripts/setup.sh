#!/usr/bin/env bash
# Installs what bsvd needs on a fresh Debian machine and builds it into
# build/. Idempotent: packages already present are not fetched again.
# System packages come from apt; every Python package goes into the
# project's virtual environment .venv/ (python/requirements-dev.txt), never
# into the system Python or the caller's environment.
#   scripts/setup.sh            dependencies + build (CUDA backend when nvcc exists)
#   BSVD_BUILD_DIR=dir ...      build somewhere else
#   BSVD_PYTHON=python3.12 ...  the interpreter .venv/ is created from (default python3)
#   BSVD_VENV=dir ...           the virtual environment (default .venv)
#   BSVD_CUDA_ARCHS="80;90" ... the CUDA architectures (default: native with a
#                               GPU, else 90; docs/install.md)
# The oldest pip the scripts use is 22.3 (--config-settings, pip --python):
# Debian 12's python3 -m venv brings 23.0.1; an older one is upgraded in the
# venv (never the system's).
set -euo pipefail
cd "$(dirname "$0")/.."

# openmpi-bin, libopenmpi-dev: bsvd run --mpi and its test (cli.mpi_run);
# about 14 MB of packages, a few seconds of apt.
pkgs=(cmake ninja-build g++ pkg-config libopenblas-dev liblapacke-dev libcli11-dev
      nlohmann-json3-dev googletest libgtest-dev ccache python3-dev python3-venv clang-format clang
      openmpi-bin libopenmpi-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# .venv/: NumPy for the CLI round-trip tests, the build and test tools of the
# Python package (scripts/python-test.sh, scripts/wheel-test.sh). pip runs
# again only when the requirements file changed.
req=python/requirements-dev.txt
venv=${BSVD_VENV:-.venv}
[ -x "$venv/bin/python" ] || "${BSVD_PYTHON:-python3}" -m venv "$venv"
export PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1
if ! "$venv/bin/python" -c 'import sys, pip
sys.exit(tuple(int(x) for x in pip.__version__.split(".")[:2]) < (22, 3))'; then
  echo "setup: pip $("$venv/bin/python" -m pip --version | cut -d" " -f2) in $venv/ is older than 22.3: upgrading it there"
  "$venv/bin/python" -m pip install -q "pip>=22.3"
fi
if ! cmp -s "$req" "$venv/requirements-dev.installed"; then
  echo "setup: pip install -r $req into $venv/ ($("$venv/bin/python" -V), pip $("$venv/bin/python" -m pip --version | cut -d" " -f2))"
  "$venv/bin/python" -m pip install -q -r "$req"
  cp "$req" "$venv/requirements-dev.installed"
fi

# nvcc is usually not on PATH by default: the CUDA backend is built whenever
# it exists, so GPU code always compiles.
if [ -z "${CUDACXX:-}" ] && ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
# A developer build compiles the kernels for one architecture: this
# machine's GPU (native), else sm_90 (CI: the kernels compile, nothing runs
# them). Release builds (plain cmake, pip) compile the release list of
# CMakeLists.txt: SASS for 80 ... 120, docs/install.md.
archs=${BSVD_CUDA_ARCHS:-}
if [ -z "$archs" ]; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    archs=native
  else
    archs=90
  fi
fi
build=${BSVD_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$archs" \
  ${BSVD_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "$(nproc)"
echo "setup: built $build/bsvd"
