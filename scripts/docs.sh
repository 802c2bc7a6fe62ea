#!/usr/bin/env bash
# Builds the documentation site into build/docs/html/ (Sphinx, MyST, furo;
# docs/site/conf.py) with every warning an error, then runs every code
# block of it (scripts/docs-snippets.py; docs/site/snippets.md says how).
# Needs build/ (scripts/setup.sh: the CLI and libbsvd.so, which the C API
# pages are checked against and the snippets run with) and the bsvd Python
# package in the virtual environment (scripts/python-test.sh), whose
# python/requirements-dev.txt brings Sphinx and its extensions.
#   scripts/docs.sh                  the site and the snippets
#   scripts/docs.sh --no-snippets    the site only
#   scripts/docs.sh -k start/        the site, and the snippets of the pages matching start/
# Environment: BSVD_VENV  the virtual environment (default .venv)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${BSVD_VENV:-.venv}/bin/python
case "$PY" in /*) ;; *) PY=$PWD/$PY ;; esac
out=build/docs

snippets=1
args=()
for a in "$@"; do
  case "$a" in
    --no-snippets) snippets=0 ;;
    *) args+=("$a") ;;
  esac
done

for need in build/bsvd build/libbsvd.so; do
  [ -e "$need" ] || { echo "docs: $need is missing: run scripts/setup.sh first" >&2; exit 2; }
done
if ! "$PY" -c "import sphinx, myst_parser, furo" 2>/dev/null; then
  echo "docs: $PY lacks sphinx, myst-parser or furo: run scripts/setup.sh (python/requirements-dev.txt)" >&2
  exit 2
fi
if ! (cd build && "$PY" -c "import bsvd") 2>/dev/null; then
  echo "docs: $PY cannot import bsvd: run scripts/python-test.sh (pip install . into the venv)" >&2
  exit 2
fi

# The results pages' tables are what scripts/perf-pages.py makes of their
# raw bench files: one edited by hand, or a raw file changed under it,
# fails here (rewrite them with scripts/perf-pages.py --no-plots).
"$PY" scripts/perf-pages.py --check --no-plots 2>/dev/null ||
  { echo "docs: docs/perf tables are out of date: run scripts/perf-pages.py" >&2; exit 1; }

t0=$(date +%s)
# -W --keep-going: every warning is reported, and any fails the build. -E:
# read every page again (the API pages depend on headers and the package).
# -j auto is not used: the build is short and CI shares its cores.
"$PY" -m sphinx -b html -c docs/site -E -W --keep-going -q . "$out/html"
echo "docs: built $out/html/index.html in $(( $(date +%s) - t0 )) s"

if [ "$snippets" = 1 ]; then
  t1=$(date +%s)
  "$PY" scripts/docs-snippets.py "${args[@]}"
  echo "docs: snippets ran in $(( $(date +%s) - t1 )) s"
fi
