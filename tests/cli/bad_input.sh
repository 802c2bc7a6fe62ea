#!/usr/bin/env bash
# Unreadable or malformed input gives a clear message and a non-zero exit,
# never a crash (a signal would give an exit status above 128).
set -uo pipefail
bsvd=$1; src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
expect_error() { # description, then the command
  local what=$1; shift
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ $rc -eq 0 ] || [ $rc -ge 128 ] || [ -z "$out" ]; then
    echo "FAIL: $what (exit $rc): $out"; fail=1
  else
    echo "ok: $what -> $(echo "$out" | head -1)"
  fi
}
expect_error "missing file" "$bsvd" run "$tmp/nope.npy" -o "$tmp/o"
printf 'not a numpy file at all' > "$tmp/garbage.npy"
expect_error "garbage .npy" "$bsvd" run "$tmp/garbage.npy" -o "$tmp/o"
printf '\x93NUMPY\x01\x00\x40\x00{'"'"'descr'"'"': '"'"'<f8'"'"', '"'"'fortran_order'"'"': False, '"'"'shape'"'"': (3, 4, 4), }      \n' > "$tmp/trunc.npy"
expect_error "truncated .npy" "$bsvd" run "$tmp/trunc.npy" -o "$tmp/o"
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n' > "$tmp/short.mtx"
expect_error "short .mtx" "$bsvd" run "$tmp/short.mtx" -o "$tmp/o"
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 1\n9 1 1.0\n' > "$tmp/range.mtx"
expect_error "index out of range" "$bsvd" run "$tmp/range.mtx" -o "$tmp/o"
printf 'hello\n' > "$tmp/nobanner.mtx"
expect_error "no banner" "$bsvd" run "$tmp/nobanner.mtx" -o "$tmp/o"
printf '%%%%MatrixMarket matrix coordinate real general\n2000000000 2000000000 1\n1 1 1.0\n' > "$tmp/huge.mtx"
expect_error "absurd size" "$bsvd" run "$tmp/huge.mtx" -o "$tmp/o"
expect_error "bad backend" "$bsvd" run "$src/data/matrices/b1_ss.mtx" -o "$tmp/o" --backend gpu9
expect_error "bad precision" "$bsvd" run "$src/data/matrices/b1_ss.mtx" -o "$tmp/o" --precision q
expect_error "bad pair solver" "$bsvd" run "$src/data/matrices/b1_ss.mtx" -o "$tmp/o" --pair-solver nope
expect_error "bad device list" "$bsvd" run "$src/data/matrices/b1_ss.mtx" -o "$tmp/o" --devices 0,x
expect_error "repeated device" "$bsvd" run "$src/data/matrices/b1_ss.mtx" -o "$tmp/o" --devices 1,1
expect_error "bench: bad device list" "$bsvd" bench --backend cpu --cases 1x4x4 --devices gpu -q
expect_error "bench: bad pair solver" "$bsvd" bench --backend cpu --cases 1x4x4 --pair-solver nope -q
expect_error "bench: --hsvd on the cpu" "$bsvd" bench --backend cpu --cases 1x4x4 --hsvd -q
expect_error "bench: --grade without --hsvd" "$bsvd" bench --backend cuda --cases 1x4x4 --grade 4 -q
# A good --pair-solver runs (cpu: the pair-SVD twin on the blocked variant).
if ! "$bsvd" run "$src/data/matrices/b1_ss.mtx" -o "$tmp/ps" --backend cpu --variant blocked \
    --block-size 2 --pair-solver svd >/dev/null 2>&1; then
  echo "FAIL: --pair-solver svd on the cpu backend"; fail=1
else
  echo "ok: --pair-solver svd runs"
fi
expect_error "bad ordering" "$bsvd" run "$src/data/matrices/b1_ss.mtx" -o "$tmp/o" --ordering nope
expect_error "bad variant" "$bsvd" run "$src/data/matrices/b1_ss.mtx" -o "$tmp/o" --variant nope
# Names come from the library (bsvd_<enum>_from_string / _string): '_' may
# stand for '-', and the summary names the path.
out=$("$bsvd" run "$src/data/matrices/b1_ss.mtx" -o "$tmp/oe" --backend cpu --ordering odd_even 2>&1)
if [ $? -ne 0 ] || ! grep -q 'cpu-unblocked 1' <<<"$out"; then
  echo "FAIL: --ordering odd_even, path in the summary: $out"; fail=1
else
  echo "ok: --ordering odd_even runs, summary names the path"
fi
expect_error "bad family" "$bsvd" gen -o "$tmp/x.npy" --family nope
expect_error "bad sizes" "$bsvd" check --sizes 3,x --no-matrices
mkdir -p "$tmp/empty"
expect_error "empty directory" "$bsvd" run "$tmp/empty" -o "$tmp/o"
[ $fail -eq 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit $fail
