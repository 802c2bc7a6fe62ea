#!/usr/bin/env bash
# bsvd run --mpi under mpirun with 2 and 3 ranks on one machine (cpu
# backend): a directory of Matrix Market files (a bad and a complex one
# among them) and .npy batches (C and Fortran order, real and complex, a
# batch smaller than the ranks, one 2-D matrix) give the same output files,
# byte for byte, the same summary.tsv and the same exit status as one
# process; an input or output failure on one rank ends every rank with the
# same status and publishes nothing. Exit 77 (skipped, SKIP_RETURN_CODE):
# no mpirun, or a bsvd built without MPI.
set -uo pipefail
bsvd=$1; src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
command -v mpirun >/dev/null || { echo "skip: no mpirun (Debian: openmpi-bin)"; exit 77; }
# Open MPI refuses root without these (CI runs as root); set here only.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Containers often forbid the ptrace that shared memory's single copy uses.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# A hung collective fails the test instead of the CI run.
mpi() { local n=$1; shift; timeout 120 mpirun -n "$n" --oversubscribe "$@"; }
out=$(mpi 1 "$bsvd" run --mpi "$tmp/none.npy" -o "$tmp/probe" 2>&1)
if grep -q "built without MPI" <<<"$out"; then
  echo "skip: $bsvd was built without MPI (BSVD_MPI)"; exit 77
fi

fail=0
check() { # description, then a condition's command
  local what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=1; fi
}
# --threads 1: the LAPACK path gives OpenBLAS all of a call's threads when
# the call has fewer matrices than threads, and OpenBLAS's bits depend on
# its thread count, so a rank with one matrix of a small directory would
# differ from one process (docs/cli.md, "Several processes"); one thread
# per process is also what 3 ranks on CI's 2 cores can use.
# Runs bsvd run with 1 (no mpirun), 2 and 3 ranks into $tmp/<name>.{1,2,3};
# the exit statuses must all be $want, the directories identical.
same() { # name, expected exit status, then the arguments of bsvd run
  local name=$1 want=$2; shift 2
  local rc1 rc2 rc3
  local opt=(--backend cpu --threads 1)
  "$bsvd" run "$@" -o "$tmp/$name.1" "${opt[@]}" >"$tmp/$name.log" 2>&1; rc1=$?
  mpi 2 "$bsvd" run "$@" -o "$tmp/$name.2" "${opt[@]}" --mpi >>"$tmp/$name.log" 2>&1; rc2=$?
  mpi 3 "$bsvd" run "$@" -o "$tmp/$name.3" "${opt[@]}" --mpi >>"$tmp/$name.log" 2>&1; rc3=$?
  if [ "$rc1 $rc2 $rc3" != "$want $want $want" ]; then
    echo "FAIL: $name: exit status $rc1 (1 process), $rc2 (2 ranks), $rc3 (3 ranks), want $want"
    sed 's/^/  /' "$tmp/$name.log"; fail=1; return
  fi
  if diff -r "$tmp/$name.1" "$tmp/$name.2" && diff -r "$tmp/$name.1" "$tmp/$name.3"; then
    echo "ok: $name: exit $want, $(ls "$tmp/$name.1" | wc -l) files the same with 1, 2, 3 ranks"
  else
    echo "FAIL: $name: outputs differ"; fail=1
  fi
}

# A directory: matrices of several sizes, one unreadable file, one complex
# file (an error under --precision d, solved under z), and a file name that
# is in a second directory too (outputs d/x and e/x).
m=$src/data/matrices
mkdir -p "$tmp/d" "$tmp/e"
for f in bcsstm01 GD95_a klein-b1 n3c4-b2 farm relat3 b1_ss Trec4 lpi_itest6; do
  cp "$m/$f.mtx" "$tmp/d/"
done
cp "$m/jgl009.mtx" "$tmp/d/x.mtx"; cp "$m/rgg010.mtx" "$tmp/e/x.mtx"
printf 'hello\n' > "$tmp/d/bad.mtx"
printf '%%%%MatrixMarket matrix coordinate complex general\n3 2 3\n1 1 1.0 2.0\n2 2 -1.5 0.5\n3 1 0.25 -4\n' \
  > "$tmp/d/cplx.mtx"
same dir 1 "$tmp/d" "$tmp/e"
check "dir: summary.tsv names the bad file once, as error" \
  test "$(grep -c $'\terror\t' "$tmp/dir.2/summary.tsv")" = 2
same dir-z 1 "$tmp/d" "$tmp/e" --precision z --residuals
rm "$tmp/d/bad.mtx" "$tmp/d/cplx.mtx"
same dir-good 0 "$tmp/d" --values-only

# .npy batches.
"$bsvd" gen -o "$tmp/b.npy" --batch 40 -m 12 -n 9 --seed 3 >/dev/null
"$bsvd" gen -o "$tmp/w.npy" --batch 7 -m 5 -n 11 --precision c --seed 4 >/dev/null
"$bsvd" gen -o "$tmp/two.npy" --batch 2 -m 6 -n 6 --precision z >/dev/null
"$bsvd" gen -o "$tmp/nan.npy" --batch 5 -m 4 -n 4 --edge nan >/dev/null
same npy 0 "$tmp/b.npy"
same npy-res 0 "$tmp/b.npy" --residuals
same npy-values 0 "$tmp/b.npy" --values-only
same npy-wide-c 0 "$tmp/w.npy" --residuals
same npy-smaller-than-ranks 0 "$tmp/two.npy"
same npy-nan 0 "$tmp/nan.npy"
if python3 -c 'import numpy' 2>/dev/null; then
  python3 - "$tmp" <<'EOF'
import sys, numpy as np
t = sys.argv[1]
a = np.load(t + "/b.npy")
np.save(t + "/fortran.npy", np.asfortranarray(a))
np.save(t + "/one.npy", a[3])
EOF
  same npy-fortran 0 "$tmp/fortran.npy"
  check "npy-fortran: the same results as the C-order batch" diff -r "$tmp/npy.1" "$tmp/npy-fortran.1"
  same npy-2d 0 "$tmp/one.npy" --residuals
else
  echo "note: no NumPy: the Fortran-order and 2-D cases are not run"
fi

# Failures: every rank ends with the same status, nothing hangs.
head -c 100 "$tmp/b.npy" > "$tmp/trunc.npy"
same npy-truncated 1 "$tmp/trunc.npy"
mpi 2 "$bsvd" run "$tmp/b.npy" -o "$tmp/nompi" --backend cpu >"$tmp/nompi.log" 2>&1; rc=$?
check "without --mpi under mpirun: usage error (2)" test $rc = 2
check "... that says to add --mpi" grep -q -- "add --mpi" "$tmp/nompi.log"
mpi 2 "$bsvd" run "$tmp/b.npy" -o "$tmp/o" --backend nope --mpi >"$tmp/usage.log" 2>&1; rc=$?
check "bad option under mpirun: 2, said once" \
  test $rc = 2 -a "$(grep -c -- "--backend: unknown value 'nope'" "$tmp/usage.log")" = 1

# A full disk on rank 1 only (BSVD_TEST_WRITE_LIMIT): exit 1 everywhere, and
# the outputs of the earlier run in the directory are left as they were,
# without temporary files.
cat > "$tmp/full1.sh" <<EOF
#!/bin/sh
[ "\$OMPI_COMM_WORLD_RANK" = 1 ] && export BSVD_TEST_WRITE_LIMIT=0
exec "$bsvd" "\$@"
EOF
chmod +x "$tmp/full1.sh"
for input in "$tmp/b.npy" "$tmp/d"; do
  rm -rf "$tmp/full" && cp -r "$tmp/dir-good.1" "$tmp/full" && cp "$tmp/npy.1/"* "$tmp/full/"
  mpi 3 "$tmp/full1.sh" run "$input" -o "$tmp/full" --backend cpu --threads 1 --mpi --residuals \
    >"$tmp/full.log" 2>&1; rc=$?
  check "$(basename "$input"): full disk on rank 1: exit 1" test $rc = 1
  check "... rank 1 names the failed write" grep -q "No space left on device" "$tmp/full.log"
  # The earlier outputs: npy.1 over dir-good.1, unchanged; no residual.npy.
  ( cd "$tmp/full" && for f in *; do
      cmp -s "$f" "$tmp/npy.1/$f" || cmp -s "$f" "$tmp/dir-good.1/$f" || exit 1
    done ) && ! grep -q -e '\.tmp-' -e residual <<<"$(ls -A "$tmp/full")"; rc=$?
  check "... the earlier outputs unchanged, no temporary file left" test $rc = 0
done

[ $fail -eq 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit $fail
