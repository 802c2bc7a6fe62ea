#!/usr/bin/env bash
# Prepares .deps/ (git-ignored) for the GPU machine, which has CUDA, CMake
# and ninja but none of Debian's -dev packages and no network:
#   .deps/root/        Debian packages unpacked with dpkg -x (LAPACKE,
#                      OpenBLAS, CLI11, nlohmann-json)
#   .deps/googletest/  GoogleTest sources (Debian's googletest package)
# Run here (with network); then name .deps in the device tool's `carry`.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .git/info  # .deps/ is ignored by .gitignore
rm -rf .deps && mkdir -p .deps/debs .deps/root
# Reference LAPACK/BLAS rather than OpenBLAS there: the GPU build only needs
# LAPACK for reference singular values, and OpenBLAS alone is 43 MB of the
# 64 MB the device tool carries.
pkgs="liblapacke liblapacke-dev liblapack3 libblas3 libgfortran5 libquadmath0
      libcli11-dev nlohmann-json3-dev"
(cd .deps/debs && apt-get download $pkgs >/dev/null 2>&1)
for f in .deps/debs/*.deb; do dpkg -x "$f" .deps/root; done
rm -rf .deps/debs .deps/root/usr/share
find .deps/root -name "*.a" -delete   # static archives: not needed, too big to carry
if [ -d /usr/src/googletest ]; then
  cp -r /usr/src/googletest .deps/googletest
else
  echo "fetch-gpu-deps: /usr/src/googletest missing: run scripts/setup.sh first" >&2
  exit 1
fi
# dpkg -x does not run the alternatives: point the generic names at OpenBLAS.
lib=.deps/root/usr/lib/x86_64-linux-gnu
ln -sf blas/libblas.so.3 "$lib/libblas.so.3"
ln -sf lapack/liblapack.so.3 "$lib/liblapack.so.3"
ln -sf libblas.so.3 "$lib/libblas.so"
ln -sf liblapack.so.3 "$lib/liblapack.so"
du -sh .deps
