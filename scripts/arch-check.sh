#!/usr/bin/env bash
# Compiles CUDA sources of the library for the release architectures
# (CMakeLists.txt, bsvd_release_cuda_archs: 80 86 89 90 100 120, those this
# nvcc knows) without linking, so that a kernel that only builds for sm_90
# fails CI instead of a user's A100 or RTX build. CI's build (scripts/setup.sh)
# compiles everything for sm_90 only; the whole release list takes about six
# times that, far beyond CI's time, so CI checks what can differ between
# architectures:
#   - every source that reads __CUDA_ARCH__ (today src/cuda/qr/qr_*.cu
#     through qrcp.cuh: the cluster kernel exists from 9.0), as SASS for
#     each architecture but 90 -- the preprocessor branches and ptxas;
#   - one source per path (fused, blocked, tiny, qr) as PTX of compute_80,
#     the oldest: every device feature they use exists there.
# Time on the 2-core CI machine: docs/develop.md ("GPU architectures").
#   scripts/arch-check.sh          CI's check (above)
#   scripts/arch-check.sh --all    every .cu of the library, SASS for every
#                                  architecture (hours on 2 cores)
#   ARCH_CHECK_JOBS=n              parallel nvcc processes (default: nproc)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NVCC=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if [ ! -x "$NVCC" ] && ! command -v "$NVCC" >/dev/null 2>&1; then
  echo "arch-check: no nvcc, nothing to check"
  exit 0
fi
known=$("$NVCC" --list-gpu-arch 2>/dev/null | tr '\n' ' ')
archs=()
for a in 80 86 89 90 100 120; do
  case " $known " in *" compute_$a "*) archs+=("$a") ;; esac
done
if [ ${#archs[@]} = 0 ]; then
  echo "arch-check: $NVCC knows none of the release architectures"
  exit 1
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# The sources whose device code depends on the architecture (a version
# test of __CUDA_ARCH__): qrcp.cuh, in every qr_<p>.cu alike (one precision
# stands for all). A new test elsewhere must be added here: checked below.
arch_sources=(qr/qr_d.cu)
versioned=$(grep -rlE '__CUDA_ARCH__ *[<>=]' "$ROOT/src" "$ROOT/include" | sed "s|$ROOT/||" | sort)
if [ "$versioned" != "src/cuda/qr/qrcp.cuh" ]; then
  echo "arch-check: sources testing __CUDA_ARCH__ changed (update arch_sources):" $versioned
  exit 1
fi
# One source per path (its heaviest precision) as PTX of the oldest
# architecture: every device feature they use must exist there.
ptx_sources=(fused/fused_d.cu blocked/blocked_d.cu tiny/tiny_z.cu)
jobs=()
if [ "${1:-}" = "--all" ]; then
  while read -r f; do
    for a in "${archs[@]}"; do jobs+=("$f sm_$a"); done
  done < <(find "$ROOT/src/cuda" -name '*.cu' | sort)
else
  for f in "${arch_sources[@]}"; do
    for a in "${archs[@]}"; do [ "$a" = 90 ] || jobs+=("$ROOT/src/cuda/$f sm_$a"); done
  done
  for f in "${ptx_sources[@]}"; do jobs+=("$ROOT/src/cuda/$f compute_${archs[0]}"); done
fi
compile() {
  local f=$1 target=$2 gen out
  case $target in
    sm_*) gen="arch=compute_${target#sm_},code=$target" ;;
    compute_*) gen="arch=$target,code=$target" ;;
  esac
  out="$TMP/$(echo "${f#"$ROOT"/}" | tr / _).$target.o"
  if "$NVCC" -O3 -DNDEBUG --expt-relaxed-constexpr -std=c++17 -DBSVD_WITH_CUDA=1 \
    -I"$ROOT/include" -I"$ROOT/src" --generate-code="$gen" -c "$f" -o "$out" 2>"$out.log"; then
    echo "arch-check: ok   $target ${f#"$ROOT"/}"
  else
    echo "arch-check: FAIL $target ${f#"$ROOT"/}"
    cat "$out.log"
    return 1
  fi
}
export -f compile
export NVCC ROOT TMP
t0=$(date +%s)
printf '%s\n' "${jobs[@]}" | xargs -P "${ARCH_CHECK_JOBS:-$(nproc)}" -L1 bash -c 'compile "$0" "$1"'
echo "arch-check: ${#jobs[@]} compiles (architectures ${archs[*]}) in $(($(date +%s) - t0)) s"
