#!/usr/bin/env python3
"""Host-resident batches through the GPU: bsvd.svd / bsvd.svdvals on NumPy
arrays with backend="cuda" (docs/perf/host-stream.md). Needs a GPU, bsvd
built with CUDA and PyTorch with CUDA (for the reference times).

    BSVD_HOST_CHUNK=0 python3 python/bench_host.py   # the batch copied at once
    python3 python/bench_host.py                     # streamed in 64 MiB chunks

The library reads BSVD_HOST_CHUNK once per process: one process per setting.
Per case, medians of --reps calls after a warm-up:
  host s     bsvd on the NumPy array, until it returns (results in NumPy)
  device s   the same batch already on the GPU (a torch tensor): the solve
  H2D s      torch's copy of A from page-locked memory to the GPU: the link
             time of A alone (GB/s beside it)
  check      max |s - numpy| / s_max over a sample, in units of u
"""
import argparse
import os
import statistics
import sys
import time

_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]

CASES = {  # name: (batch, m, n, vectors)
    "4000000x16x16-values": (4_000_000, 16, 16, False),
    "1000000x16x16-vectors": (1_000_000, 16, 16, True),
    "1000x256x256-values": (1000, 256, 256, False),
}


def timed(f, reps):
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cases", default=",".join(CASES))
    args = ap.parse_args()
    import numpy as np
    import torch
    import bsvd
    if not (torch.cuda.is_available() and bsvd.cuda_available()):
        print("bench_host.py: needs a GPU and bsvd built with CUDA", file=sys.stderr)
        return 1
    print(f"device: {torch.cuda.get_device_name()}; bsvd {bsvd.__version__}; "
          f"BSVD_HOST_CHUNK={os.environ.get('BSVD_HOST_CHUNK', '(default)')}")
    hdr = f"{'case':>24} {'host s':>8} {'device s':>9} {'H2D s':>7} {'GB/s':>6} {'check u':>8}"
    print(hdr)
    print("-" * len(hdr))
    rng = np.random.default_rng(0)
    bsvd.svdvals(rng.standard_normal((1000, 16, 16)), backend="cuda")  # CUDA context, plans
    for name in args.cases.split(","):
        b, m, n, vectors = CASES[name]
        # A random block tiled to the batch (random numbers for 8 GB take minutes).
        tile = rng.standard_normal((min(b, 4096), m, n))
        A = np.tile(tile, (-(-b // tile.shape[0]), 1, 1))[:b]
        call = ((lambda: bsvd.svd(A, full_matrices=False, backend="cuda")) if vectors
                else (lambda: bsvd.svdvals(A, backend="cuda")))
        host = timed(call, args.reps)
        out = call()
        S = out[1] if vectors else out
        ref = np.linalg.svd(tile[:64], compute_uv=False)
        u = np.finfo(np.float64).eps / 2
        check = float(np.max(np.abs(S[:64] - ref) / ref[:, :1]) / u)
        dA = torch.from_numpy(A).cuda()
        dev = timed(lambda: (bsvd.svd(dA, full_matrices=False) if vectors else bsvd.svdvals(dA),
                             torch.cuda.synchronize()), args.reps)
        pinned = torch.empty(A.shape, dtype=torch.float64, pin_memory=True)
        pinned.copy_(torch.from_numpy(A))
        h2d = timed(lambda: (dA.copy_(pinned, non_blocking=True), torch.cuda.synchronize()),
                    args.reps)
        del dA, pinned
        torch.cuda.empty_cache()
        print(f"{name:>24} {host:8.3f} {dev:9.3f} {h2d:7.3f} {A.nbytes / h2d / 1e9:6.1f} "
              f"{check:8.2f}", flush=True)
        del A, out, S
    return 0


if __name__ == "__main__":
    sys.exit(main())
