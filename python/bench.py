#!/usr/bin/env python3
"""Times bsvd from Python against torch.linalg.svd on the GPU, and the
Python call overhead against the library call alone.

    python3 python/bench.py                       # the GPU issues' cases
    python3 python/bench.py --cases 10000x32x32,1000x64x64 --dtypes d --reps 20

Per case (batch x m x n, precision), in milliseconds (median of --reps, after
warm-up; every timing ends with torch.cuda.synchronize()):
  torch    torch.linalg.svd(A, full_matrices=False)
  bsvd     bsvd.svd(A): the whole Python call (checks, output allocation
           with torch's allocator, DLPack hand-over, the info check)
  native   the library call alone, through the native layer with the same
           preallocated outputs (bsvd._bsvd.gesvj_strided)
  overhead (bsvd - native) / native
and the worst T1/T3 ratio of the bsvd result (units of u) as a sanity check.
"""
import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
# Import the installed bsvd, not the source folder beside this script.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]

import numpy as np  # noqa: E402

DEFAULT_CASES = "10000x8x8,10000x16x16,10000x32x32,1000x64x64,1000x128x128"


def median_ms(fn, reps, sync):
    t0 = time.perf_counter()
    fn()
    sync()
    warm = (time.perf_counter() - t0) * 1e3
    if warm > 300:  # slow case: fewer repetitions (about 3 s)
        reps = max(2, min(reps, int(3000 / warm)))
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=DEFAULT_CASES, help="comma list of BATCHxMxN")
    ap.add_argument("--dtypes", default="s,d", help="comma list of s, d, c, z")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--torch-max-ms", type=float, default=3000.0,
                    help="skip torch.linalg.svd for a case after one call slower than this")
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args()

    import torch
    import bsvd
    from bsvd import _bsvd

    if args.device.startswith("cuda") and not (torch.cuda.is_available() and bsvd.cuda_available()):
        print("bench.py: needs a GPU and bsvd built with CUDA", file=sys.stderr)
        return 1
    dev = torch.device(args.device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    dtypes = {"s": torch.float32, "d": torch.float64, "c": torch.complex64, "z": torch.complex128}
    print(f"device: {torch.cuda.get_device_name(dev) if dev.type == 'cuda' else 'cpu'}; "
          f"torch {torch.__version__}; bsvd {bsvd.__version__}")
    hdr = f"{'case':>16} {'p':>1} {'torch ms':>10} {'bsvd ms':>9} {'native ms':>9} {'overhead':>8} {'speedup':>8} {'T1':>6} {'T3':>6}"
    print(hdr)
    print("-" * len(hdr))
    for case in args.cases.split(","):
        b, m, n = (int(v) for v in case.lower().split("x"))
        k = min(m, n)
        for p in args.dtypes.split(","):
            dt = dtypes[p]
            g = torch.Generator(device=dev).manual_seed(0)
            A = torch.randn(b, m, n, dtype=dt, device=dev, generator=g)

            # bsvd from Python
            t_bsvd = median_ms(lambda: bsvd.svd(A), args.reps, sync)

            # the library call alone, outputs preallocated (what bsvd.svd does
            # underneath for a C-contiguous A: the transposed view)
            rdt = A.real.dtype
            S = torch.empty(b, k, dtype=rdt, device=dev)
            Ub = torch.empty(b, k, m, dtype=dt, device=dev)
            Vhb = torch.empty(b, k, n, dtype=dt, device=dev)
            info = torch.empty(b, dtype=torch.int32, device=dev)
            stream = torch.cuda.current_stream(dev).cuda_stream if dev.type == "cuda" else 0
            opts = _bsvd.Options(2 if dev.type == "cuda" else 1, 0, 0, 0, 0.0, 0, 0, 0, stream)

            def native():
                st, msg = _bsvd.gesvj_strided(A, n, m, n, m * n, S, k, Vhb, n, n * k, Ub, m, m * k,
                                              info, None, None, b, opts)
                if st:
                    raise RuntimeError(msg)
            t_native = median_ms(native, args.reps, sync)

            # torch
            t0 = time.perf_counter()
            torch.linalg.svd(A, full_matrices=False)
            sync()
            first = (time.perf_counter() - t0) * 1e3
            if first > args.torch_max_ms:
                t_torch = float("nan")
            else:
                t_torch = median_ms(lambda: torch.linalg.svd(A, full_matrices=False),
                                    max(1, min(args.reps, int(10000 / max(first, 1)))), sync)

            # sanity: T1 and T3 of the bsvd result on (up to) 200 matrices
            U, Sv, Vh = bsvd.svd(A)
            sel = slice(0, min(b, 200))
            A64 = A[sel].to(torch.complex128 if dt.is_complex else torch.float64)
            R = A64 - (U[sel].to(A64.dtype) * Sv[sel].unsqueeze(-2).to(A64.dtype)) @ Vh[sel].to(A64.dtype)
            u = 2.0 ** -24 if p in "sc" else 2.0 ** -53
            n1 = lambda X: X.abs().sum(-2).amax(-1)  # noqa: E731
            t1 = (n1(R) / (n * n1(A64) * u)).max().item()
            Sref = torch.linalg.svdvals(A64)
            t3 = ((Sv[sel].double() - Sref).norm(dim=-1) / (k * Sref[..., 0] * u)).max().item()

            over = (t_bsvd - t_native) / t_native * 100
            speed = t_torch / t_bsvd if t_torch == t_torch else float("nan")
            print(f"{case:>16} {p:>1} {t_torch:10.3f} {t_bsvd:9.3f} {t_native:9.3f} {over:7.1f}% "
                  f"{speed:7.1f}x {t1:6.2f} {t3:6.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
