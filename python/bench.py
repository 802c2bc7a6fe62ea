#!/usr/bin/env python3
"""Times bsvd from Python against torch.linalg.svd on the GPU, and the
Python call overhead against the library call alone.

    python3 python/bench.py                       # the GPU issues' cases
    python3 python/bench.py --cases 10000x32x32,1000x64x64 --dtypes d --reps 20
    python3 python/bench.py --overhead            # issue 6: the Python call's cost
    python3 python/bench.py --overhead --profile  # ... and where it goes (cProfile)

Per case (batch x m x n, precision), in milliseconds (median of --reps, after
warm-up; every timing ends with torch.cuda.synchronize()):
  torch    torch.linalg.svd(A, full_matrices=False)
  bsvd     bsvd.svd(A): the whole Python call (checks, the torch op's
           dispatch, output and workspace allocation with torch's allocator,
           DLPack hand-over; on CUDA the call only enqueues, see
           bench_async.py for its host time)
  native   the library call alone, through the native layer with the same
           preallocated outputs and info (bsvd._bsvd.gesvj_strided), the
           arrays handed over as DLPack capsules from torch.utils.dlpack.
           to_dlpack (the cheapest hand-over: a tensor's own __dlpack__
           costs a few us more per array)
  overhead (bsvd - native) / native
and the worst T1/T3 ratio of the bsvd result (units of u) as a sanity check.

--overhead (issue 6, docs/perf/python.md) times only bsvd and native, with
more repetitions (default 100) taken alternately (bsvd, native, bsvd, ...)
so that clock and temperature drift fall on both, for bsvd.svd,
bsvd.svd(return_info=True) and bsvd.svdvals (native without vectors):
overhead = median over rounds of (bsvd - native), in % and us per call, and
"py us", the median time per call outside the native call (the Python layer
alone; see python_side_us). Default cases 10000x32x32 (the issue's) and
10000x8x8 (where the fixed cost shows most). --profile adds a
cProfile of --reps calls of bsvd.svd on the first case, in microseconds
per call (cProfile does not see the native functions: their time counts in
the own time of the Python function that calls them, _reduced).
"""
import argparse
import cProfile
import os
import pstats
import statistics
import sys
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
# Import the installed bsvd, not the source folder beside this script.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]

import numpy as np  # noqa: E402

DEFAULT_CASES = "10000x8x8,10000x16x16,10000x32x32,1000x64x64,1000x128x128"
OVERHEAD_CASES = "10000x32x32,10000x8x8"


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


def alternating_ms(fns, reps, sync):
    """Times in ms of each function, run in turn (a, b, a, b, ...): one
    list per function, entry i of each from the same round."""
    for fn in fns:  # warm-up
        fn()
        sync()
    times = [[] for _ in fns]
    for _ in range(reps):
        for t, fn in zip(times, fns):
            t0 = time.perf_counter()
            fn()
            sync()
            t.append((time.perf_counter() - t0) * 1e3)
    return times


def python_side_us(bsvd, _bsvd, fn, reps, sync):
    """Median microseconds per call of fn spent outside the native functions
    the package calls (svd_strided for blocking calls; svd_strided_async and
    workspace_size for CUDA tensors, and info_counts with check=True): the
    Python layer's own cost (the torch op's dispatch included), free of the
    GPU's run-to-run variation."""
    names = [n for n in ("svd_strided", "svd_strided_async", "workspace_size", "info_counts")
             if hasattr(_bsvd, n)]
    reals = {n: getattr(_bsvd, n) for n in names}
    inside = []

    def timed(real):
        def call(*a, **kw):
            t0 = time.perf_counter()
            try:
                return real(*a, **kw)
            finally:
                inside.append(time.perf_counter() - t0)
        return call

    for n, real in reals.items():
        setattr(_bsvd, n, timed(real))
    try:
        out = []
        for _ in range(reps):
            inside.clear()
            t0 = time.perf_counter()
            fn()
            t = time.perf_counter() - t0
            sync()
            out.append((t - sum(inside)) * 1e6)
    finally:
        for n, real in reals.items():
            setattr(_bsvd, n, real)
    return statistics.median(out)


def native_call(torch, _bsvd, A):
    """The library call alone on A (batch, m, n), C-contiguous, with
    preallocated outputs: what bsvd.svd does underneath (the transposed
    view) without the Python layer. Returns f(vectors=True)."""
    b, m, n = A.shape
    k = min(m, n)
    dev = A.device
    S = torch.empty(b, k, dtype=A.real.dtype, device=dev)
    Ub = torch.empty(b, k, m, dtype=A.dtype, device=dev)
    Vhb = torch.empty(b, k, n, dtype=A.dtype, device=dev)
    info = torch.empty(b, dtype=torch.int32, device=dev)
    stream = torch.cuda.current_stream(dev).cuda_stream if dev.type == "cuda" else 0
    from bsvd._args import make_options, option_values
    cuda = dev.type == "cuda"
    opts = make_options(option_values(dict(backend="cuda" if cuda else "cpu"),
                                      ("cuda", dev.index or 0) if cuda else ("cpu", 0)), stream)
    cap = torch.utils.dlpack.to_dlpack

    def native(vectors=True):
        st, msg = _bsvd.gesvj_strided(
            cap(A), n, m, n, m * n, cap(S), k, cap(Vhb) if vectors else None, n, n * k,
            cap(Ub) if vectors else None, m, m * k, cap(info), None, None, b, opts)
        if st:
            raise RuntimeError(msg)
    return native


def overhead(args, torch, bsvd, _bsvd, dev, sync, dtypes):
    """--overhead: bsvd.svd against the bare library call, per call."""
    print("overhead: median over rounds of (bsvd - native), each round one call of each; "
          "py us: time outside the native call (see python_side_us)")
    hdr = (f"{'case':>14} {'p':>1} {'call':>18} {'bsvd ms':>9} {'native ms':>9} "
           f"{'overhead':>9} {'us/call':>8} {'py us':>7}")
    print(hdr)
    print("-" * len(hdr))
    first = None
    for case in args.cases.split(","):
        b, m, n = (int(v) for v in case.lower().split("x"))
        k = min(m, n)
        for p in args.dtypes.split(","):
            dt = dtypes[p]
            g = torch.Generator(device=dev).manual_seed(0)
            A = torch.randn(b, m, n, dtype=dt, device=dev, generator=g)
            native = native_call(torch, _bsvd, A)
            calls = [
                ("svd", lambda: bsvd.svd(A, full_matrices=False), native),
                ("svd(return_info)", lambda: bsvd.svd(A, full_matrices=False, return_info=True), native),
                ("svdvals", lambda: bsvd.svdvals(A), lambda: native(False)),
            ]
            for label, fn, nat in calls:
                tb, tn = alternating_ms([fn, nat], args.reps, sync)
                t_bsvd, t_native = statistics.median(tb), statistics.median(tn)
                over = statistics.median([b_ - n_ for b_, n_ in zip(tb, tn)])
                py = python_side_us(bsvd, _bsvd, fn, args.reps, sync)
                print(f"{case:>14} {p:>1} {label:>18} {t_bsvd:9.3f} {t_native:9.3f} "
                      f"{over / t_native * 100:8.1f}% {over * 1e3:8.1f} {py:7.1f}", flush=True)
            if first is None:
                first = (case, p, A)
    if args.profile and first is not None:
        case, p, A = first
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(args.reps):
            bsvd.svd(A, full_matrices=False)
            sync()
        pr.disable()
        print(f"\ncProfile of {args.reps} calls of bsvd.svd, {case} {p} (each followed by "
              "a synchronize), us per call, by own time (profiling inflates small calls):")
        print(f"{'own us':>9} {'cum us':>9} {'calls':>6}  function")
        rows = sorted(pstats.Stats(pr).stats.items(), key=lambda kv: -kv[1][2])
        for (file, line, func), (_, ncalls, tt, ct, _) in rows[:30]:
            where = func if file == "~" else f"{os.path.basename(file)}:{line}({func})"
            print(f"{tt / args.reps * 1e6:9.1f} {ct / args.reps * 1e6:9.1f} "
                  f"{ncalls // args.reps:6d}  {where}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=None,
                    help=f"comma list of BATCHxMxN (default {DEFAULT_CASES}; "
                    f"with --overhead {OVERHEAD_CASES})")
    ap.add_argument("--dtypes", default="s,d", help="comma list of s, d, c, z")
    ap.add_argument("--reps", type=int, default=None, help="repetitions (default 10; "
                    "with --overhead 100)")
    ap.add_argument("--overhead", action="store_true",
                    help="only bsvd against the bare library call (issue 6)")
    ap.add_argument("--profile", action="store_true", help="with --overhead: a cProfile too")
    ap.add_argument("--torch-max-ms", type=float, default=3000.0,
                    help="skip torch.linalg.svd for a case after one call slower than this")
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args()
    if args.cases is None:
        args.cases = OVERHEAD_CASES if args.overhead else DEFAULT_CASES
    if args.reps is None:
        args.reps = 100 if args.overhead else 10

    import torch
    import torch.utils.dlpack  # noqa: F401 (native_call)
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
    if args.overhead:
        return overhead(args, torch, bsvd, _bsvd, dev, sync, dtypes)
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
            t_bsvd = median_ms(lambda: bsvd.svd(A, full_matrices=False), args.reps, sync)

            # the library call alone, outputs preallocated
            t_native = median_ms(native_call(torch, _bsvd, A), args.reps, sync)

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
            U, Sv, Vh = bsvd.svd(A, full_matrices=False)
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
