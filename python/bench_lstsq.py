#!/usr/bin/env python3
"""Times batched least squares and pseudo-inverses from Python on torch
tensors on the GPU, bsvd next to torch.linalg in one run (issue 52's
targets): bsvd.lstsq(driver='gels') (the library's batched Householder QR
and triangular solve), bsvd.lstsq() (the SVD, gelsd's solution) and
torch.linalg.lstsq (its CUDA driver, gels); bsvd.pinv and
torch.linalg.pinv.

    python3 python/bench_lstsq.py                       # the targets' cases
    python3 python/bench_lstsq.py --cases 10000x256x32 --nrhs 1,8 --json out.json

Per lstsq case (batch x m x n, nrhs, precision), milliseconds, median of
--reps after a warm-up, each ending with torch.cuda.synchronize():
  gels     bsvd.lstsq(A, B, driver='gels')
  gelsd    bsvd.lstsq(A, B)
  torch    torch.linalg.lstsq(A, B)              (driver gels on CUDA)
and the largest difference of gels's and torch's solutions from the
double-precision reference (NumPy's gelsd on up to 20 matrices), relative
to its largest entry. --pinv cases: bsvd.pinv(A) and torch.linalg.pinv(A).
A rank-deficient batch (rank n/2) shows what torch's gels returns there.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]


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


def ref_error(A, B, X):
    """max |X - X_ref| / max |X_ref| over up to 20 matrices, X_ref NumPy's
    gelsd in double precision."""
    sel = slice(0, min(A.shape[0], 20))
    a = A[sel].cpu().numpy().astype(np.complex128 if A.is_complex() else np.float64)
    b = B[sel].cpu().numpy().astype(a.dtype)
    x = X[sel].cpu().numpy().astype(a.dtype)
    ref = np.stack([np.linalg.lstsq(ai, bi, rcond=None)[0] for ai, bi in zip(a, b)])
    return float(np.abs(x - ref).max() / max(np.abs(ref).max(), 1e-300))


def parse_case(c):
    b, m, n = (int(v) for v in c.lower().split("x"))
    return b, m, n


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="10000x256x32,1000x256x32,10000x64x16")
    ap.add_argument("--nrhs", default="1,8")
    ap.add_argument("--dtypes", default="d,s")
    ap.add_argument("--pinv", default="1000x128x128,1000x64x64")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()

    import torch
    import bsvd
    if not (torch.cuda.is_available() and bsvd.cuda_available()):
        print("bench_lstsq.py: needs a GPU and bsvd built with CUDA", file=sys.stderr)
        return 1
    sync = torch.cuda.synchronize
    dtypes = {"s": torch.float32, "d": torch.float64, "c": torch.complex64,
              "z": torch.complex128}
    rows = []
    print(f"# {torch.cuda.get_device_name()}, bsvd {bsvd.__version__}, torch {torch.__version__}")
    print(f"{'case':>16} {'p':>1} {'k':>3} {'gels ms':>9} {'gelsd ms':>9} {'torch ms':>9} "
          f"{'torch/gels':>10} {'err gels':>9} {'err torch':>9}")
    g = torch.Generator(device="cuda").manual_seed(1)
    for case in args.cases.split(","):
        batch, m, n = parse_case(case)
        for p in args.dtypes.split(","):
            dt = dtypes[p]
            A = torch.randn(batch, m, n, dtype=dt, device="cuda", generator=g)
            for k in (int(v) for v in args.nrhs.split(",")):
                B = torch.randn(batch, m, k, dtype=dt, device="cuda", generator=g)
                t_gels = median_ms(lambda: bsvd.lstsq(A, B, driver="gels"), args.reps, sync)
                t_svd = median_ms(lambda: bsvd.lstsq(A, B), args.reps, sync)
                t_torch = median_ms(lambda: torch.linalg.lstsq(A, B), args.reps, sync)
                e_gels = ref_error(A, B, bsvd.lstsq(A, B, driver="gels").solution)
                e_torch = ref_error(A, B, torch.linalg.lstsq(A, B).solution)
                row = dict(kind="lstsq", case=case, precision=p, nrhs=k, gels_ms=t_gels,
                           gelsd_ms=t_svd, torch_ms=t_torch, err_gels=e_gels, err_torch=e_torch,
                           device=torch.cuda.get_device_name())
                rows.append(row)
                print(f"{case:>16} {p:>1} {k:>3} {t_gels:9.3f} {t_svd:9.3f} {t_torch:9.3f} "
                      f"{t_torch / t_gels:10.2f} {e_gels:9.2e} {e_torch:9.2e}", flush=True)
        # rank n/2 in double: bsvd's gelsd answer against torch's gels
        if n >= 4 and m >= n:
            A = torch.randn(min(batch, 1000), m, n // 2, dtype=torch.float64, device="cuda",
                            generator=g)
            A = torch.cat([A, A @ torch.randn(n // 2, n - n // 2, dtype=torch.float64,
                                              device="cuda", generator=g)], -1)
            B = torch.randn(A.shape[0], m, 1, dtype=torch.float64, device="cuda", generator=g)
            e_svd = ref_error(A, B, bsvd.lstsq(A, B).solution)
            e_torch = ref_error(A, B, torch.linalg.lstsq(A, B).solution)
            rows.append(dict(kind="lstsq-rank-deficient", case=f"{A.shape[0]}x{m}x{n}",
                             rank=n // 2, err_gelsd=e_svd, err_torch=e_torch))
            print(f"# rank {n // 2} of {n}, {A.shape[0]}x{m}x{n} d: error against NumPy's "
                  f"minimum-norm solution: bsvd gelsd {e_svd:.2e}, torch gels {e_torch:.2e}")
    print(f"{'pinv case':>16} {'p':>1} {'bsvd ms':>9} {'torch ms':>9} {'torch/bsvd':>10}")
    for case in filter(None, args.pinv.split(",")):
        batch, m, n = parse_case(case)
        for p in args.dtypes.split(","):
            A = torch.randn(batch, m, n, dtype=dtypes[p], device="cuda", generator=g)
            t_b = median_ms(lambda: bsvd.pinv(A), args.reps, sync)
            t_t = median_ms(lambda: torch.linalg.pinv(A), args.reps, sync)
            rows.append(dict(kind="pinv", case=case, precision=p, bsvd_ms=t_b, torch_ms=t_t,
                             device=torch.cuda.get_device_name()))
            print(f"{case:>16} {p:>1} {t_b:9.3f} {t_t:9.3f} {t_t / t_b:10.2f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
