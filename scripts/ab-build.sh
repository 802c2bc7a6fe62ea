#!/usr/bin/env bash
# A/B in one device call: builds the CLI of a baseline tree next to the
# working tree's, so that both are measured on the same machine in the same
# run (times move between device calls, cuSOLVER's own too:
# docs/perf/README.md, "The rule: predict, measure, record").
#
#   here:   scripts/ab-build.sh --save [REF]   copies REF's version (default
#           HEAD) of every file that differs from REF into .deps/ab/
#   device: scripts/ab-build.sh                builds .deps/ab over a copy
#           of the tree into build-base/bsvd (carry [".deps"]); run it
#           beside scripts/gpu-check.sh, which builds build-gpu.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
if [ "${1:-}" = --save ]; then
  ref=${2:-HEAD}
  rm -rf .deps/ab && mkdir -p .deps/ab
  git diff --name-only "$ref" -- src include tools CMakeLists.txt | while read -r f; do
    if git cat-file -e "$ref:$f" 2>/dev/null; then
      mkdir -p ".deps/ab/$(dirname "$f")"
      git show "$ref:$f" >".deps/ab/$f"
      echo "saved $ref:$f"
    fi
  done
  exit 0
fi
[ -d .deps/ab ] || { echo "ab-build: no .deps/ab (run --save here first)" >&2; exit 2; }
S=/tmp/bsvd-base
rm -rf "$S" && mkdir -p "$S"
tar --exclude=./build-gpu --exclude=./build-base --exclude=./.git --exclude=./out -cf - . |
  tar -xf - -C "$S"
cp -r .deps/ab/. "$S/"
cmake -S "$S" -B "$ROOT/build-base" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DBSVD_DEPS_ROOT="$ROOT/.deps/root" \
  -DBSVD_GTEST_SOURCE="$ROOT/.deps/googletest" >/tmp/ab-build.log 2>&1
ninja -C "$ROOT/build-base" -j"$(nproc)" bsvd_cli >>/tmp/ab-build.log 2>&1 ||
  { tail -30 /tmp/ab-build.log; exit 1; }
echo "ab-build: build-base/bsvd built from $(find .deps/ab -type f | wc -l) saved files"
