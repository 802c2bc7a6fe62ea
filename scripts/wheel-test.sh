#!/usr/bin/env bash
# Builds the Python package as a wheel for other machines (pip wheel,
# scikit-build-core, BSVD_PORTABLE: the CUDA runtime linked in) and repairs
# it with auditwheel (LAPACK, OpenBLAS and gfortran bundled under
# bsvd.libs/, a manylinux tag; the CUDA libraries left to NVIDIA's pip
# packages or the system), then installs it into a fresh virtual
# environment, as a user would: the wheel must hold the package and its
# extension only, pull NumPy as its dependency, carry a manylinux tag, load
# LAPACK from its own bsvd.libs/ and give, there, an SVD that meets the
# accuracy contract (T1-T4, docs/accuracy.md) against numpy.linalg.svd.
#   scripts/wheel-test.sh                     CI: a CPU-only wheel
#   BSVD_PY_CUDA=AUTO scripts/wheel-test.sh   with the CUDA backend when nvcc is found
#   BSVD_WHEEL_NVIDIA=DIR ...                 a CUDA wheel with NVIDIA's pip packages from DIR
#                                             instead of the toolkit (root; see below)
#   BSVD_WHEEL_DIR=dist scripts/wheel-test.sh where the wheels are kept (default
#                                             build-python/dist; the repaired one in
#                                             its wheelhouse/)
# The build folder is the one scripts/python-test.sh uses (build-python/,
# same options but BSVD_PORTABLE): after it, the wheel is a relink and
# packing.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-${BSVD_VENV:-.venv}/bin/python}
cuda=${BSVD_PY_CUDA:-OFF}
dist=${BSVD_WHEEL_DIR:-build-python/dist}
if ! "$PY" -c 'import scikit_build_core, nanobind, auditwheel' 2>/dev/null; then
  echo "wheel-test: $PY lacks scikit-build-core, nanobind or auditwheel: run scripts/setup.sh" >&2
  exit 2
fi
if [ "$cuda" != OFF ] && ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDACXX=${CUDACXX:-/usr/local/cuda/bin/nvcc}
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1
t0=$(date +%s)

# The build folder of scripts/python-test.sh for this venv.
build_dir=()
[ "${BSVD_VENV:-.venv}" = .venv ] ||
  build_dir=(--config-settings="build-dir=build-python/$(basename "$BSVD_VENV")/{wheel_tag}")
mkdir -p "$dist"
rm -rf "$dist"/bsvd-*.whl "$dist/wheelhouse"
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)} \
  "$PY" -m pip wheel -q --no-deps --no-build-isolation --config-settings="cmake.define.BSVD_CUDA=$cuda" \
  --config-settings=cmake.define.BSVD_PORTABLE=ON "${build_dir[@]}" -w "$dist" ./
built=$(ls "$dist"/bsvd-*.whl)
echo "wheel-test: built $built in $(( $(date +%s) - t0 )) s"

# auditwheel: the lowest manylinux tag the symbols allow, LAPACK and its
# libraries grafted in; never the NVIDIA driver (libcuda) nor cuBLAS /
# cuSOLVER and theirs, which come from NVIDIA's pip packages ("bsvd[cuda]")
# or the toolkit.
PATH="$(cd "$(dirname "$PY")" && pwd):$PATH" "$PY" -m auditwheel repair -w "$dist/wheelhouse" \
  --exclude 'libcuda.so*' --exclude 'libcublas*' --exclude 'libcusolver*' \
  --exclude 'libcusparse*' --exclude 'libnvJitLink*' "$built" >"$tmp/repair.log" 2>&1 ||
  { cat "$tmp/repair.log" >&2; exit 1; }
whl=$(ls "$dist"/wheelhouse/bsvd-*.whl)
tag=$("$PY" -m auditwheel show "$whl" | grep -oE 'manylinux_[0-9]+_[0-9]+_x86_64' | head -1)
[ -n "$tag" ] || { echo "wheel-test: auditwheel show names no manylinux tag" >&2; exit 1; }
echo "wheel-test: repaired $(basename "$whl") ($tag, $(du -k "$whl" | cut -f1) KiB)"

# The wheel: bsvd/ (with the extension) and its dist-info, nothing else (no
# headers, static libraries or CLI from the C++ install rules).
"$PY" - "$whl" <<'EOF'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
stray = [n for n in names
         if not (n.startswith("bsvd/") or n.startswith("bsvd.libs/") or ".dist-info/" in n)]
assert not stray, f"unexpected files in the wheel: {stray}"
assert any(n.startswith("bsvd/_bsvd") for n in names), "no extension module in the wheel"
meta = zipfile.ZipFile(sys.argv[1]).read(next(n for n in names if n.endswith(".dist-info/METADATA")))
assert b"Requires-Dist: numpy" in meta, "the wheel does not declare its NumPy dependency"
EOF

# A fresh environment from the interpreter .venv/ was made from (the wheel's
# tag); NumPy arrives as the wheel's dependency.
# (Without its own pip, installed by .venv's: the same install, 10 s less.)
"$PY" -m venv --without-pip "$tmp/venv"
"$PY" -m pip --python "$tmp/venv/bin/python" install -q "$whl"
# From an empty folder: the installed package is imported, not python/bsvd.
(cd "$tmp" && venv/bin/python - <<'EOF'
import os, sys
import numpy as np
import bsvd

here = os.path.realpath(bsvd.__file__)
assert here.startswith(os.path.realpath(sys.prefix) + os.sep), f"bsvd imported from {here}"
rng = np.random.default_rng(3)
A = rng.standard_normal((20, 12, 8))
U, S, Vh = bsvd.svd(A, full_matrices=False)[:3]
assert U.shape == (20, 12, 8) and S.shape == (20, 8) and Vh.shape == (20, 8, 8)
ku = 30 * np.finfo(np.float64).eps / 2
n1 = lambda X: np.abs(X).sum(axis=-2).max(axis=-1)  # 1-norm per matrix
I = np.eye(8)
t1 = n1(A - U * S[:, None, :] @ Vh) / (8 * n1(A)) / ku
t2 = np.maximum(n1(I - np.swapaxes(U, 1, 2) @ U) / 12, n1(I - Vh @ np.swapaxes(Vh, 1, 2)) / 8) / ku
S_ref = np.linalg.svd(A, compute_uv=False)
t3 = np.linalg.norm(S - S_ref, axis=-1) / 8 / S_ref[:, 0] / ku
t4 = bool((np.diff(S, axis=-1) <= 0).all())
print(f"wheel-test: bsvd {getattr(bsvd, '__version__', '?')} from {os.path.dirname(here)}: "
      f"T1 {t1.max():.3g}, T2 {t2.max():.3g}, T3 {t3.max():.3g} (ratios to 30 u), sorted {t4}")
assert t1.max() < 1 and t2.max() < 1 and t3.max() < 1 and t4, "accuracy contract not met"
# What the extension loads, as the dynamic loader resolves it there: glibc
# and the C++ runtime (in every manylinux system) from the system, a CUDA
# build's cuBLAS / cuSOLVER and theirs from NVIDIA's pip packages or the
# toolkit, everything else (LAPACK, BLAS, the Fortran runtime) from the
# wheel's own bsvd.libs/.
import subprocess
import bsvd._bsvd as ext
from bsvd._loading import CUDA_LIBRARIES
system = ("linux-vdso", "ld-linux", "libc.so", "libm.so", "libpthread.so", "libdl.so", "librt.so",
          "libgcc_s.so", "libstdc++.so") + CUDA_LIBRARIES
out = subprocess.run(["ldd", ext.__file__], capture_output=True, text=True, check=True).stdout
deps = [line.split() for line in out.splitlines() if line.strip()]
foreign = [d for d in deps if not os.path.basename(d[0]).startswith(system)
           and not (len(d) > 2 and "/bsvd.libs/" in d[2])]
assert not foreign, f"the extension loads libraries from outside the wheel: {foreign}"
print(f"wheel-test: the extension loads {len(deps)} libraries: LAPACK, BLAS, Fortran from bsvd.libs/")
EOF
)
# BSVD_WHEEL_NVIDIA=DIR, for a CUDA wheel, as root: NVIDIA's pip packages
# in place of the toolkit. DIR holds their wheels (pip download
# "nvidia-cublas>=13,<14" "nvidia-cusolver>=12,<13"). With the toolkit's
# library folders hidden (a mount namespace), the import must fail and say
# what to install, then succeed once those packages are installed.
if [ -n "${BSVD_WHEEL_NVIDIA:-}" ]; then
  mkdir -p "$tmp/empty"
  hide=""
  for d in $(ldconfig -p | grep -oE '/[^ ]+/libcu(blas|solver)\.so\.[0-9]+$' | xargs -n1 dirname | sort -u); do
    hide="$hide mount --bind $tmp/empty $d &&"
  done
  probe="import bsvd; assert bsvd.cuda_built(); print('wheel-test: from NVIDIA pip packages:', bsvd.cuda_status() or 'GPU available')"
  if unshare -m sh -c "$hide $tmp/venv/bin/python -c \"import bsvd\"" 2>"$tmp/import.err"; then
    echo "wheel-test: the CUDA wheel imported with the toolkit hidden and no NVIDIA packages" >&2
    exit 1
  fi
  grep -q 'bsvd\[cuda\]' "$tmp/import.err" ||
    { echo "wheel-test: the failed import does not say what to install:" >&2; cat "$tmp/import.err" >&2; exit 1; }
  "$PY" -m pip --python "$tmp/venv/bin/python" install -q --no-index --find-links "$BSVD_WHEEL_NVIDIA" \
    "nvidia-cublas>=13,<14" "nvidia-cusolver>=12,<13"
  (cd "$tmp" && unshare -m sh -c "$hide $tmp/venv/bin/python -c \"$probe\"")
fi
echo "wheel-test: ok in $(( $(date +%s) - t0 )) s"
