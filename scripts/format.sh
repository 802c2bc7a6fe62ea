#!/usr/bin/env bash
# Formats the C, C++ and CUDA sources with clang-format (.clang-format).
#   scripts/format.sh           rewrites the files in place
#   scripts/format.sh --check   lists the files that differ; exit 1 if any (CI)
set -euo pipefail
cd "$(dirname "$0")/.."
CF=${CLANG_FORMAT:-clang-format}
if ! command -v "$CF" >/dev/null; then
  echo "format: $CF not found (Debian: apt-get install clang-format)" >&2
  exit 2
fi
# (tracked files and new ones not yet added, -co: a file is formatted
# before its first commit; ignored build outputs stay out)
mapfile -t files < <(git ls-files -co --exclude-standard -- 'include/*.h' 'include/*.hpp' 'include/*.cuh' 'tests/*.cu' 'src/*.cpp' 'src/*.hpp' \
  'src/*.cu' 'src/*.cuh' 'tools/*.cpp' 'tools/*.hpp' 'tools/*.cu' 'tools/*.cuh' 'tests/*.cpp' 'tests/*.hpp' \
  'tests/*.c' 'python/src/*.cpp' 'examples/*.c' 'examples/*.cpp' 'examples/*.cu')
if [ "${1:-}" = --check ]; then
  bad=0
  for f in "${files[@]}"; do
    if ! "$CF" --style=file "$f" | cmp -s - "$f"; then
      echo "format: $f differs from clang-format's layout (run scripts/format.sh)"
      bad=1
    fi
  done
  [ $bad = 0 ] && echo "format: ${#files[@]} files checked"
  exit $bad
fi
"$CF" --style=file -i "${files[@]}"
