#!/usr/bin/env bash
# Builds the Python package as a wheel (pip wheel, scikit-build-core) with the
# tools of .venv/ and installs it into a fresh virtual environment, as a user
# would: the wheel must hold the package and its extension only, pull NumPy
# as its dependency, and give, there, an SVD that meets the accuracy
# contract (T1-T4, docs/accuracy.md) against numpy.linalg.svd.
#   scripts/wheel-test.sh                     CI: a CPU-only wheel
#   BSVD_PY_CUDA=AUTO scripts/wheel-test.sh   with the CUDA backend when nvcc is found
#   BSVD_WHEEL_DIR=dist scripts/wheel-test.sh where the wheel is kept (default build-python/dist)
# The build folder is the one scripts/python-test.sh uses (build-python/,
# same options): after it, the wheel is mostly packing.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-${BSVD_VENV:-.venv}/bin/python}
cuda=${BSVD_PY_CUDA:-OFF}
dist=${BSVD_WHEEL_DIR:-build-python/dist}
if ! "$PY" -c 'import scikit_build_core, nanobind' 2>/dev/null; then
  echo "wheel-test: $PY lacks scikit-build-core or nanobind: run scripts/setup.sh" >&2
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
rm -f "$dist"/bsvd-*.whl
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)} \
  "$PY" -m pip wheel -q --no-deps --no-build-isolation --config-settings="cmake.define.BSVD_CUDA=$cuda" \
  "${build_dir[@]}" -w "$dist" ./
whl=$(ls "$dist"/bsvd-*.whl)
echo "wheel-test: built $whl in $(( $(date +%s) - t0 )) s"

# The wheel: bsvd/ (with the extension) and its dist-info, nothing else (no
# headers, static libraries or CLI from the C++ install rules).
"$PY" - "$whl" <<'EOF'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
stray = [n for n in names if not (n.startswith("bsvd/") or ".dist-info/" in n)]
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
EOF
)
echo "wheel-test: ok in $(( $(date +%s) - t0 )) s"
