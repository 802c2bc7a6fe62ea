#!/usr/bin/env python3
# Copies of the Matrix Market files with every entry multiplied by
# (1 + 4e-16 g), g standard normal (a rounding-level perturbation), one
# directory per seed: how far a solver's sweep counts move under rounding
# alone (docs/perf/suitesparse.md: the CPU twin moves by up to 6 sweeps).
#   scripts/perturb-mtx.py SRC_DIR OUT_DIR [SEEDS=4]
#   then e.g. build/bsvd run OUT_DIR/s0 --backend cpu --variant blocked \
#        --precondition 1 --values-only -o out-s0   (summary.tsv: sweeps)
import glob, os, sys
import numpy as np

src, out = sys.argv[1], sys.argv[2]
seeds = int(sys.argv[3]) if len(sys.argv) > 3 else 4
for s in range(seeds):
    d = os.path.join(out, f's{s}')
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(100 + s)
    for p in sorted(glob.glob(os.path.join(src, '*.mtx'))):
        lines, sized = [], False
        for l in open(p).read().splitlines():
            e = l.split()
            if l.startswith('%') or not sized or len(e) < 3:
                sized = sized or not l.startswith('%')
                lines.append(l)
                continue
            v = float(e[2]) * (1 + 4e-16 * rng.standard_normal())
            lines.append(f'{e[0]} {e[1]} {v:.17g}')
        open(os.path.join(d, os.path.basename(p)), 'w').write('\n'.join(lines) + '\n')
