#!/usr/bin/env bash
# Issue 34's CLI cases: every failure names the file or option and exits
# non-zero before any work is lost (2: usage, 1: an input or output failed,
# accuracy failure in check); outputs are written atomically, unique per
# input, never stale; a batch goes on past a bad file; complex and non-finite
# Matrix Market input. Each case checks the exit status, the message and the
# files left behind.
set -uo pipefail
bsvd=$1; src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
pass=0; fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1"; fail=$((fail + 1)); }
# expect STATUS PATTERN DESCRIPTION -- command...: the exit status is STATUS,
# the output matches PATTERN (grep -E) and holds no C++ exception name.
expect() {
  local want=$1 pat=$2 what=$3; shift 4
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" -ne "$want" ]; then bad "$what: exit $rc, want $want: $(echo "$out" | tail -3)"
  elif ! grep -qE -- "$pat" <<<"$out"; then bad "$what: no /$pat/ in: $(echo "$out" | tail -3)"
  elif grep -qE 'std::|bad_alloc|terminate|[0-9]{40}' <<<"$out"; then bad "$what: raw message: $out"
  else ok "$what -> $(grep -E -- "$pat" <<<"$out" | head -1)"; fi
}
sums() { find "$1" -type f -exec md5sum {} + | sort -k2; }
mtx=$src/data/matrices/b1_ss.mtx
printf '%%%%MatrixMarket matrix coordinate real general\n3 2 3\n1 1 2.0\n2 2 -1.5\n3 1 0.5\n' > small.mtx

# ---- usage errors: exit 2, the option named, nothing written ----
echo file > afile
expect 2 '^bsvd run: -o afile/out: .*Not a directory' "run: output directory under a file" -- \
  "$bsvd" run "$mtx" -o afile/out --backend cpu
[ ! -e afile/out ] && ok "run: nothing created under the bad -o" || bad "run: something created"
if [ "$(id -u)" -ne 0 ]; then
  mkdir ro && chmod 555 ro
  expect 2 '-o ro: cannot create a file there: Permission denied' "run: read-only output directory" -- \
    "$bsvd" run "$mtx" -o ro --backend cpu
else
  echo "note: root ignores file modes; the read-only case is covered by ENOTDIR above"
fi
expect 2 '^bsvd check: --json afile/x.json: directory afile is not a directory' \
  "check: --json to an unwritable path" -- "$bsvd" check --json afile/x.json --sizes 2 -q
expect 2 '^bsvd check: --json .*: is a directory' "check: --json to a directory" -- \
  "$bsvd" check --json "$tmp" --sizes 2 -q
expect 2 '^bsvd bench: --json afile/x.json' "bench: --json to an unwritable path" -- \
  "$bsvd" bench --backend cpu --cases 1x4x4 --json afile/x.json -q
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  echo "note: a GPU is visible; 'bench --mtx without a GPU' is not checked here"
else
  expect 2 '^bsvd bench: --mtx needs a CUDA GPU, and none is visible' "bench --mtx without a GPU" -- \
    "$bsvd" bench --mtx "$src/data/matrices" -q
  expect 2 'needs a CUDA GPU|has no CUDA backend' "bench --backend cuda without a GPU" -- \
    "$bsvd" bench --backend cuda --cases 1x4x4 -q
fi
quick=(--sizes 4 --shapes square --families random --edges none --no-matrices --precision d -q)
expect 2 '^--tol: must be at least 0 and below 1 \(got 10\)' "check --tol 10" -- "$bsvd" check --tol 10 "${quick[@]}"
expect 2 '^--max-sweeps: must be 0 or more \(got -5\)' "check --max-sweeps -5" -- "$bsvd" check --max-sweeps -5 "${quick[@]}"
expect 2 '^--block-size: must be 0 or more \(got -4\)' "check --block-size -4" -- "$bsvd" check --block-size -4 "${quick[@]}"
expect 2 '^--threads: must be 0 or more' "run --threads -1" -- "$bsvd" run "$mtx" -o o --threads -1
expect 2 '^bsvd check: invalid options: .*wcycle_blocks' "check: an option the library refuses" -- \
  "$bsvd" check --wcycle-blocks 4 --ordering odd-even "${quick[@]}"
expect 1 'FAIL' "check: an accuracy failure is exit 1" -- "$bsvd" check --threshold 1e-30 "${quick[@]}"
expect 0 ' 0 failed' "check: a passing run is exit 0" -- "$bsvd" check "${quick[@]}"
expect 2 '^-m: must be 0 or more \(got -3\)' "gen -m -3" -- "$bsvd" gen -o g.npy -m -3
expect 2 '^-n: must be 0 or more \(got -1\)' "gen -n -1" -- "$bsvd" gen -o g.npy -n -1
expect 2 '^--batch: must be 0 or more \(got -2\)' "gen --batch -2" -- "$bsvd" gen -o g.npy --batch -2
expect 2 '^--batch: .2.5. is not a whole number' "gen --batch 2.5" -- "$bsvd" gen -o g.npy --batch 2.5
expect 2 '^bsvd check: --sizes: size -3 is negative' "check --sizes -3" -- "$bsvd" check --sizes -3 -q
expect 2 '^--batch: must be 1 or more \(got -1\)' "check --batch -1" -- "$bsvd" check --batch -1 -q
expect 2 '^--edge-max-size: must be 0 or more' "check --edge-max-size -1" -- "$bsvd" check --edge-max-size -1 -q
expect 2 "^bsvd gen: --batch 1000000000 of 8 x 8 d matrices needs 1.0 TB, more than this machine's memory" \
  "gen --batch 1e9" -- "$bsvd" gen -o g.npy --batch 1e9
expect 2 "^bsvd check: --batch 1000000000 .* more than this machine's memory" "check --batch 1e9" -- \
  "$bsvd" check --batch 1e9 -q
expect 2 "^bsvd bench: --cases 1000000000x64x64 needs .* more than this machine's memory" \
  "bench --cases 1000000000x64x64" -- "$bsvd" bench --backend cpu --cases 1000000000x64x64 -q
expect 2 "^bsvd bench: case '1e9x8x8' is not BATCHxMxN" "bench --cases 1e9x8x8" -- \
  "$bsvd" bench --backend cpu --cases 1e9x8x8 -q
[ ! -e g.npy ] && ok "gen: no file after the usage errors" || bad "gen: a file was written"
expect 2 '--residuals needs U and V' "run --residuals --values-only" -- \
  "$bsvd" run "$mtx" -o o --residuals --values-only
expect 2 'is given twice' "run: one file given twice" -- "$bsvd" run small.mtx ./small.mtx -o o

# ---- atomic outputs: a full disk loses nothing and leaves no partial file ----
"$bsvd" gen -o g.npy --batch 3 -m 6 -n 4 --seed 1 >/dev/null
"$bsvd" gen -o g2.npy --batch 3 -m 6 -n 4 --seed 2 >/dev/null
"$bsvd" run g.npy -o full --backend cpu >/dev/null
before=$(sums full)
for limit in 0 100 300 700; do
  expect 1 'No space left on device' "run: full disk after $limit bytes" -- \
    env BSVD_TEST_WRITE_LIMIT=$limit "$bsvd" run g2.npy -o full --backend cpu
done
[ "$(sums full)" = "$before" ] && ok "run: the earlier outputs are intact" || bad "run: outputs changed"
[ -z "$(find full -name '.*tmp*')" ] && ok "run: no temporary file left" || bad "run: temp left"
cp g.npy g.bak
expect 1 '^bsvd gen: g.npy: write failed: No space left on device' "gen: full disk" -- \
  env BSVD_TEST_WRITE_LIMIT=64 "$bsvd" gen -o g.npy --batch 3 -m 6 -n 4 --seed 9
cmp -s g.npy g.bak && ok "gen: the earlier file is intact" || bad "gen: file changed"
mkdir -p fullm && cp small.mtx fullm/
"$bsvd" run fullm -o fullmo --backend cpu >/dev/null; before=$(sums fullmo)
expect 1 'No space left on device' "run mtx: full disk" -- \
  env BSVD_TEST_WRITE_LIMIT=150 "$bsvd" run fullm "$mtx" -o fullmo --backend cpu
[ "$(sums fullmo)" = "$before" ] && ok "run mtx: earlier outputs and summary.tsv intact" || bad "run mtx: changed"
# A real small file system where one can be mounted (user namespaces).
if unshare -rm true 2>/dev/null; then
  mkdir -p small
  out=$(unshare -rm sh -c "mount -t tmpfs -o size=64k tmpfs small && \
    '$bsvd' gen -o small/ok.npy -m 8 -n 8 >/dev/null && \
    '$bsvd' gen -o small/big.npy --batch 200 -m 8 -n 8; echo rc=\$?; ls -a small" 2>&1)
  if grep -q 'rc=1' <<<"$out" && grep -q 'No space left' <<<"$out" &&
     grep -qx 'ok.npy' <<<"$out" && ! grep -q 'big.npy$\|tmp' <<<"$out"; then
    ok "gen: a full 64 KB tmpfs: exit 1, no partial file"
  else bad "gen on a full tmpfs: $out"; fi
else
  echo "note: no user namespaces here; the full disk is simulated only (BSVD_TEST_WRITE_LIMIT)"
fi

# ---- a 2-D .npy: no batch axis in any output ----
python3 -c 'import numpy as np; np.save("two.npy", np.arange(12.0).reshape(4, 3) ** 1.5)'
expect 0 '1 matrices' "run: a 2-D .npy" -- "$bsvd" run two.npy -o two --backend cpu --residuals
python3 - <<'PY' && ok "run: 2-D input: S (k,), U (m,k), V (n,k), info/sweeps/residual ()" || bad "run: 2-D shapes"
import numpy as np
shapes = {x: np.load(f"two/{x}.npy").shape for x in ("S", "U", "V", "info", "sweeps", "residual", "orthogonality")}
assert shapes == {"S": (3,), "U": (4, 3), "V": (3, 3), "info": (), "sweeps": (), "residual": (), "orthogonality": ()}, shapes
assert np.load("two/info.npy") == 0 and np.load("two/residual.npy") < 30
PY

# ---- unique outputs per input; stale outputs removed ----
mkdir -p d1 d2
cp "$mtx" d1/a.mtx; cp small.mtx d2/a.mtx
expect 0 '2 matrices' "run: two directories that each hold a.mtx" -- "$bsvd" run d1 d2 -o u --backend cpu
python3 - <<'PY' && ok "run: d1/a and d2/a kept apart, each S its own" || bad "run: outputs mixed up"
import numpy as np
s1, s2 = np.load("u/d1/a.S.npy"), np.load("u/d2/a.S.npy")
rows = [l.split("\t")[0] for l in open("u/summary.tsv").read().splitlines()[1:]]
assert s1.shape == (7,) and s2.shape == (2,), (s1.shape, s2.shape)
assert sorted(rows) == ["d1/a", "d2/a"], rows
PY
"$bsvd" run g.npy -o st --backend cpu >/dev/null
"$bsvd" run g.npy -o st --backend cpu --values-only >/dev/null
[ -e st/S.npy ] && [ ! -e st/U.npy ] && [ ! -e st/V.npy ] && ok "run --values-only: stale U.npy, V.npy removed" ||
  bad "run --values-only left $(ls st)"
"$bsvd" run small.mtx -o stm --backend cpu >/dev/null
"$bsvd" run small.mtx -o stm --backend cpu --values-only >/dev/null
[ -e stm/small.S.npy ] && [ ! -e stm/small.U.npy ] && ok "run mtx --values-only: stale U, V removed" ||
  bad "run mtx --values-only left $(ls stm)"

# ---- a batch goes on past a bad file; NaN isolated; complex Matrix Market ----
mkdir -p mix
cp small.mtx mix/good.mtx
printf 'junk\n' > mix/bad.mtx
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n2 2 nan\n' > mix/nan.mtx
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1.0\n' > mix/short.mtx
expect 1 'bsvd run: mix/bad.mtx: line 1: missing %%MatrixMarket banner \(skipped\)' \
  "run: a malformed file is skipped and named" -- "$bsvd" run mix -o mo --backend cpu --residuals
python3 - <<'PY' && ok "run: summary marks bad/short as error, nan as non-finite, good solved" || bad "run: summary wrong: $(cat mo/summary.tsv)"
import numpy as np
rows = {l.split("\t")[0]: l.split("\t") for l in open("mo/summary.tsv").read().splitlines()}
head = rows.pop("name")
assert head == ["name", "file", "status", "m", "n", "info", "sweeps", "path", "sigma_max",
                "sigma_min", "residual", "orthogonality", "message"], head
st = {k: v[2] for k, v in rows.items()}
assert st == {"bad": "error", "short": "error", "nan": "non-finite", "good": "ok"}, st
assert rows["nan"][5] == "-1" and np.isnan(np.load("mo/nan.S.npy")).all()
assert "expected 4 entries" in rows["short"][-1], rows["short"]
assert float(rows["good"][10]) < 30 and float(rows["good"][11]) < 30
A = np.array([[2, 0], [0, -1.5], [0.5, 0]])
U, S, V = (np.load(f"mo/good.{x}.npy") for x in "USV")
assert np.allclose(U * S @ V.T, A, atol=1e-14)
PY
[ ! -e mo/bad.S.npy ] && ok "run: no outputs for the bad file" || bad "run: outputs for a bad file"
printf '%%%%MatrixMarket matrix coordinate complex general\n3 2 3\n1 1 1.0 -1.0\n3 1 0 3\n2 2 0.5 0.25\n' > c.mtx
printf '%%%%MatrixMarket matrix array complex hermitian\n2 2\n2 0\n1 1\n3 0\n' > h.mtx
for p in c z; do
  expect 0 '2 matrices' "run: complex Matrix Market, --precision $p" -- "$bsvd" run c.mtx h.mtx -o cx$p --precision $p --backend cpu
done
python3 - <<'PY' && ok "run: complex and hermitian .mtx reconstruct (c, z)" || bad "run: complex results wrong"
import numpy as np
C = np.array([[1 - 1j, 0], [0, 0.5 + 0.25j], [3j, 0]])
H = np.array([[2, 1 - 1j], [1 + 1j, 3]])
for p, tol in (("c", 1e-5), ("z", 1e-13)):
    for name, A in (("c", C), ("h", H)):
        U, S, V = (np.load(f"cx{p}/{name}.{x}.npy") for x in "USV")
        assert U.dtype == (np.complex64 if p == "c" else np.complex128)
        assert np.allclose((U * S) @ V.conj().T, A, atol=tol * 10), (p, name)
PY
expect 1 'c.mtx: complex entries: run with --precision c or z' "run: complex .mtx with --precision d" -- \
  "$bsvd" run c.mtx small.mtx -o cxd --precision d --backend cpu
[ -e cxd/small.S.npy ] && ok "run: the real file of that batch was solved" || bad "run: real file lost"
mkdir -p cdir && cp c.mtx cdir/
expect 2 'c.mtx: complex entries \(--matrices takes real, finite files\)' "check: a complex --matrices file" -- \
  "$bsvd" check --matrices cdir --families none --edges none -q

echo "$pass checks passed, $fail failed"
[ $fail -eq 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit $((fail > 0))
