#!/usr/bin/env bash
# Installs a built bsvd tree into a temporary prefix and builds the examples
# against the installed package only, as a user would: examples/c with the
# static library (find_package) and with pkg-config (shared library),
# examples/cpp with the shared library (find_package). Each example checks
# its own results (T1-T4) and prints "ok"; any failure exits non-zero.
#   tests/install/install_and_link.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

fail() { echo "install_and_link: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install failed"; }
libdir=$(find "$prefix" -name 'libbsvd.a' -printf '%h\n' | head -1)
[ -n "$libdir" ] || fail "no libbsvd.a under $prefix"
for f in include/bsvd/bsvd.h include/bsvd/blas.h include/bsvd/svd.hpp include/bsvd/hsvd.hpp include/bsvd/device/svd.cuh \
         include/bsvd/device/warp_svd.cuh bin/bsvd; do
  [ -e "$prefix/$f" ] || fail "missing $prefix/$f"
done
for f in libbsvd.so cmake/bsvd/bsvdConfig.cmake cmake/bsvd/bsvdConfigVersion.cmake \
         cmake/bsvd/bsvdTargets.cmake pkgconfig/bsvd.pc; do
  [ -e "$libdir/$f" ] || fail "missing $libdir/$f"
done
# Nothing installed may point back into the build or source tree.
if grep -rlF -e "$build" -e "$src/include" "$libdir/cmake" "$libdir/pkgconfig"; then
  fail "installed package files name the build or source tree"
fi
# The installed CLI runs from its prefix (RUNPATH to its own dependencies).
"$prefix/bin/bsvd" --version >/dev/null || fail "installed bin/bsvd does not run"
# The benchmark stays in the build tree; the installed `bsvd bench` says so.
[ ! -e "$prefix/bin/bsvd-bench" ] || fail "bsvd-bench was installed"
rc=0
out=$("$prefix/bin/bsvd" bench --help 2>&1) || rc=$?
{ [ $rc = 2 ] && echo "$out" | grep -q "not installed"; } || fail "installed 'bsvd bench': rc $rc: $out"

run_example() { # name exe
  local out
  out=$("$2") || { echo "$out"; fail "$1: the example failed"; }
  echo "$out" | sed "s/^/  $1: /"
  [ "$(echo "$out" | tail -1)" = ok ] || fail "$1: no closing 'ok'"
}

cmake_example() { # name dir shared
  local b=$tmp/$1
  cmake -S "$src/examples/$2" -B "$b" -DCMAKE_PREFIX_PATH="$prefix" -DBSVD_EXAMPLE_SHARED="$3" \
    -DCMAKE_BUILD_TYPE=Release >"$b.log" 2>&1 && cmake --build "$b" >>"$b.log" 2>&1 ||
    { cat "$b.log"; fail "$1: building examples/$2 against $prefix failed"; }
  run_example "$1" "$b/svd_batch"
}

cmake_example c-static c OFF
cmake_example cpp-shared cpp ON
# The example's own pkg-config line (examples/c/svd_batch.c), plus a RUNPATH
# to the prefix's lib folder.
export PKG_CONFIG_PATH=$libdir/pkgconfig
cc -std=c99 -O2 -o "$tmp/c-pkgconfig" "$src/examples/c/svd_batch.c" \
  $(pkg-config --cflags --libs bsvd) -lm -Wl,-rpath,"$(pkg-config --variable=libdir bsvd)" ||
  fail "c-pkgconfig: cc with pkg-config --cflags --libs bsvd failed"
# Not `ldd | grep -q`: under pipefail, grep -q exits at the match and ldd,
# still writing, dies of SIGPIPE now and then, which fails the pipeline.
ldd "$tmp/c-pkgconfig" >"$tmp/ldd.txt" || fail "c-pkgconfig: ldd failed"
grep -qF "$libdir/libbsvd.so" "$tmp/ldd.txt" || fail "c-pkgconfig: not linked to $libdir/libbsvd.so"
run_example c-pkgconfig "$tmp/c-pkgconfig"
echo "install_and_link: ok (prefix layout, CLI, 3 example builds)"
