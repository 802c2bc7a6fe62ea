#!/usr/bin/env bash
# Installs what bsvd needs on a fresh Debian machine and builds it into
# build/. Idempotent: packages already present are not fetched again.
#   scripts/setup.sh            dependencies + build (CUDA backend when nvcc exists)
#   BSVD_BUILD_DIR=dir ...      build somewhere else
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs=(cmake ninja-build g++ pkg-config libopenblas-dev liblapacke-dev libcli11-dev
      nlohmann-json3-dev googletest libgtest-dev ccache python3-pip clang-format clang)
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
# NumPy: the CLI round-trip tests write and read batches with it.
python3 -c 'import numpy' 2>/dev/null || python3 -m pip install -q numpy 2>/dev/null ||
  python3 -m pip install -q --break-system-packages numpy

# nvcc is usually not on PATH by default: the CUDA backend is built whenever
# it exists, so GPU code always compiles.
if [ -z "${CUDACXX:-}" ] && ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
build=${BSVD_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release ${BSVD_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "$(nproc)"
echo "setup: built $build/bsvd"
