#!/usr/bin/env bash
# Fuzzes the .npy and Matrix Market readers (src/testing/io.cpp) with
# libFuzzer under ASan + UBSan, starting from tests/fuzz/corpus/<reader>/
# with the format's keywords (tests/fuzz/<reader>.dict).
#   scripts/fuzz.sh            20 s per reader (what CI runs)
#   scripts/fuzz.sh 3600       an hour per reader
#   BSVD_FUZZ_DIR=dir ...      build and work directory (default build-fuzz)
#   BSVD_FUZZ_SEED=n ...       libFuzzer's seed (CI: 1, so that a run is
#                              reproducible; default: a new one each run)
# New inputs that reach new code stay in $BSVD_FUZZ_DIR/corpus-<reader> (not
# in the repository's seed corpus); a crashing input is written to
# $BSVD_FUZZ_DIR/crash-<reader>-* and the script exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
CXX_FUZZ=${CXX_FUZZ:-clang++}
dir=${BSVD_FUZZ_DIR:-build-fuzz}
if ! command -v "$CXX_FUZZ" >/dev/null; then
  echo "fuzz: $CXX_FUZZ not found (Debian: apt-get install clang)" >&2
  exit 2
fi
mkdir -p "$dir"
flags=(-std=c++17 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -Isrc -Iinclude)
for reader in npy mtx; do
  exe=$dir/fuzz_$reader
  if [ ! -x "$exe" ] || [ "$exe" -ot src/testing/io.cpp ] || [ "$exe" -ot src/testing/io.hpp ] ||
     [ "$exe" -ot tests/fuzz/fuzz_$reader.cpp ]; then
    if ! "$CXX_FUZZ" "${flags[@]}" tests/fuzz/fuzz_$reader.cpp src/testing/io.cpp -o "$exe"; then
      echo "fuzz: cannot build with $CXX_FUZZ -fsanitize=fuzzer (libFuzzer: Debian's" \
           "libclang-rt-dev, which clang recommends)" >&2
      exit 2
    fi
  fi
  mkdir -p "$dir/corpus-$reader"
  # -rss_limit_mb: a reader that allocates what a small input merely claims
  # fails here. -timeout: no input may take a second.
  if ! "$exe" -max_total_time="$seconds" -max_len=4096 -rss_limit_mb=1024 -timeout=1 \
       ${BSVD_FUZZ_SEED:+-seed="$BSVD_FUZZ_SEED"} \
       -dict="tests/fuzz/$reader.dict" \
       -print_final_stats=1 -artifact_prefix="$dir/crash-$reader-" \
       "$dir/corpus-$reader" "tests/fuzz/corpus/$reader" >"$dir/fuzz_$reader.log" 2>&1; then
    tail -40 "$dir/fuzz_$reader.log" >&2
    echo "fuzz: the $reader reader failed; the input is in $dir/crash-$reader-*" >&2
    exit 1
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$dir/fuzz_$reader.log" | grep -o '[0-9]*$')
  echo "fuzz: $reader reader: ${runs:-?} inputs in ${seconds} s, no failure"
done
