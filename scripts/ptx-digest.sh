#!/usr/bin/env bash
# Prints one line per GPU function of the library -- a hash of its PTX body
# and its mangled name -- so that a refactoring that should not change what
# the kernels compute can be checked here, without a GPU:
#
#   scripts/ptx-digest.sh > /tmp/before.txt      (on the old tree)
#   scripts/ptx-digest.sh > /tmp/after.txt       (on the new tree)
#   diff /tmp/before.txt /tmp/after.txt           (empty: the same PTX)
#
# The PTX is generated without line information and stripped of comments
# and file directives, so moving code between files does not show; any
# change to an instruction, a register count or a parameter does. Host code
# is not covered (the tests are).
#   PTX_DIGEST_JOBS=n   parallel nvcc processes (default: nproc)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NVCC=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
find "$ROOT/src/cuda" -name '*.cu' | sort >"$TMP/files"
compile() {
  local f=$1 out
  out="$TMP/$(echo "${f#"$ROOT"/}" | tr / _).ptx"
  "$NVCC" -O3 -DNDEBUG -arch=sm_90 --expt-relaxed-constexpr -std=c++17 \
    -DBSVD_WITH_CUDA=1 -I"$ROOT/include" -I"$ROOT/src" -ptx "$f" -o "$out"
}
export -f compile
export NVCC ROOT TMP
xargs -P "${PTX_DIGEST_JOBS:-$(nproc)}" -I{} bash -c 'compile {}' <"$TMP/files"
python3 - "$TMP" <<'EOF'
import glob, hashlib, re, sys
funcs = {}
ANON = re.compile(r"_GLOBAL__N__[0-9a-f]+_[0-9]+_\w+?_cu_[0-9a-f]+(?:_[0-9]+)?")
def record(name, body):
    # a function's text ends at its last closing brace; what follows it
    # (global declarations) belongs to no function
    while body and body[-1] != "}":
        body.pop()
    if name and body:
        funcs.setdefault(name, set()).add(hashlib.sha1("\n".join(body).encode()).hexdigest()[:16])
for path in sorted(glob.glob(sys.argv[1] + "/*.ptx")):
    name, body = None, []
    for line in open(path):
        # an anonymous namespace's mangled name carries a hash of the file's
        # path, which differs between two checkouts of the same code
        line = ANON.sub("_GLOBAL__N__", line.split("//")[0].rstrip())
        if not line or line.lstrip().startswith((".file", ".loc")):
            continue
        m = re.match(r"\s*(?:\.visible\s+|\.weak\s+)?(?:\.entry|\.func)\s+(?:\([^)]*\)\s*)?([\w$]+)", line)
        if m:
            record(name, body)
            name, body = m.group(1), []
        if name:
            body.append(line.strip())
    record(name, body)
for name in sorted(funcs):
    print(",".join(sorted(funcs[name])), name)
EOF
