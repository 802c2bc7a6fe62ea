#!/usr/bin/env python3
"""Times the selected triplets (bsvd.svd(A, subset_by_index=(0, r - 1)),
the library's gesvdx) against the full SVDs a user would otherwise call
and cut: bsvd.svd(A, full_matrices=False) and torch.linalg.svd, on torch
tensors on the GPU, in one run.

    python3 python/bench_subset.py                           # default cases
    python3 python/bench_subset.py --cases 1000x128x128 --ranks 1,8 --dtypes d
    python3 python/bench_subset.py --json out.json

Per case (batch x m x n, precision, r), milliseconds, median of --reps
after a warm-up, each ending with torch.cuda.synchronize():
  subset   bsvd.svd(A, subset_by_index=(0, r - 1))   (U m x r, S, Vh r x n)
  vals     bsvd.svdvals(A, subset_by_index=(0, r - 1))
  bsvd     bsvd.svd(A, full_matrices=False)           (all k triplets)
  torch    torch.linalg.svd(A, full_matrices=False)
and, for the subset's triplets on up to 50 matrices, the worst scaled
ratios against torch's values in double (units of max(m, n) u ||A||): val
(|s_j - s_j^ref|), res (||A v_j - s_j u_j||), orth (of U and V).
"""
import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]

DEFAULT_CASES = "10000x32x32,1000x64x64,1000x128x128,100x256x256"


def median_ms(fn, reps, sync, cap_ms=3000.0):
    fn()
    sync()
    t0 = time.perf_counter()
    fn()
    sync()
    first = (time.perf_counter() - t0) * 1e3
    reps = max(1, min(reps, int(cap_ms / max(first, 1e-3))))
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)


def ratios(torch, A, U, S, Vh, p, u):
    sel = slice(0, min(A.shape[0], 50))
    W = torch.complex128 if A.dtype.is_complex else torch.float64
    A, U, S, Vh = A[sel].to(W), U[sel].to(W), S[sel].double(), Vh[sel].to(W)
    ref = torch.linalg.svdvals(A)
    r = S.shape[-1]
    nrm = ref[..., :1]
    val = ((S - ref[..., :r]).abs() / (nrm * p * u)).max().item()
    V = Vh.mH
    res = ((A @ V - U * S.unsqueeze(-2).to(W)).norm(dim=-2) / (nrm * p * u)).max().item()
    eye = torch.eye(r, dtype=W, device=A.device)
    orth = max((X.mH @ X - eye).abs().max().item() for X in (U, V)) / (p * u)
    return val, res, orth


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=DEFAULT_CASES, help="comma list of BATCHxMxN")
    ap.add_argument("--ranks", default="1,8", help="comma list of r (the r largest triplets)")
    ap.add_argument("--dtypes", default="s,d", help="comma list of s, d, c, z")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--json", default=None, help="write the rows to this file")
    args = ap.parse_args()

    import torch
    import bsvd
    if not (torch.cuda.is_available() and bsvd.cuda_available()):
        print("bench_subset.py: needs a GPU and bsvd built with CUDA", file=sys.stderr)
        return 1
    dev = torch.device("cuda")
    sync = torch.cuda.synchronize
    dtypes = {"s": torch.float32, "d": torch.float64, "c": torch.complex64, "z": torch.complex128}
    gpu = torch.cuda.get_device_name(dev)
    print(f"device: {gpu}; torch {torch.__version__}; bsvd {bsvd.__version__}")
    hdr = (f"{'case':>14} {'p':>1} {'r':>3} {'subset':>9} {'vals':>9} {'bsvd':>9} {'torch':>9} "
           f"{'vs bsvd':>7} {'vs torch':>8} {'val':>5} {'res':>5} {'orth':>5}")
    print(hdr)
    print("-" * len(hdr))
    rows = []
    for case in args.cases.split(","):
        b, m, n = (int(v) for v in case.lower().split("x"))
        for p in args.dtypes.split(","):
            dt = dtypes[p]
            g = torch.Generator(device=dev).manual_seed(0)
            A = torch.randn(b, m, n, dtype=dt, device=dev, generator=g)
            t_bsvd = median_ms(lambda: bsvd.svd(A, full_matrices=False), args.reps, sync)
            t_torch = median_ms(lambda: torch.linalg.svd(A, full_matrices=False), args.reps, sync)
            u = 2.0 ** -24 if p in "sc" else 2.0 ** -53
            for r in (int(x) for x in args.ranks.split(",")):
                r = min(r, min(m, n))
                t_sub = median_ms(lambda: bsvd.svd(A, subset_by_index=(0, r - 1)), args.reps, sync)
                t_val = median_ms(lambda: bsvd.svdvals(A, subset_by_index=(0, r - 1)), args.reps,
                                  sync)
                U, S, Vh = bsvd.svd(A, subset_by_index=(0, r - 1))
                val, res, orth = ratios(torch, A, U, S, Vh, max(m, n), u)
                row = dict(gpu=gpu, case=case, precision=p, r=r, subset_ms=t_sub, values_ms=t_val,
                           bsvd_full_ms=t_bsvd, torch_full_ms=t_torch, val=val, res=res,
                           orth=orth)
                rows.append(row)
                print(f"{case:>14} {p:>1} {r:>3} {t_sub:9.3f} {t_val:9.3f} {t_bsvd:9.3f} "
                      f"{t_torch:9.3f} {t_bsvd / t_sub:6.2f}x {t_torch / t_sub:7.2f}x "
                      f"{val:5.2f} {res:5.2f} {orth:5.2f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
