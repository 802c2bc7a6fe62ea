#!/usr/bin/env python3
"""Host time of the stream-ordered bsvd.svd on CUDA tensors, and CUDA-graph
replay (docs/python-async.md). Needs a GPU, PyTorch with CUDA and bsvd built
with the CUDA backend; about 30 s on an H100.

    python3 python/bench_async.py            # the table below
    python3 python/bench_async.py --reps 10

Eager calls (float64, full_matrices=False), medians after warm-up:
  host ms      the host time per call of back-to-back calls, as a training
               loop makes them (the GPU is kept busy before the loop, so
               the calls only enqueue; the loop's time / its calls)
  1st ms       the time until a single call returns after the host waited
               for the stream (synchronized before each call, outside the
               timing): the host's state after a wait inflates it (on the
               H100 machines 2-6x for any torch call, A.sum() included)
  GPU ms       the solve's time on the GPU (CUDA events around the call,
               with the stream kept busy while the host enqueues, so the
               enqueue time is not counted)
  blocking ms  the blocking call (an explicit stream=) until it returns:
               what bsvd.svd cost the host before
Graph (d 10000 x 8x8): a torch.cuda.graph capture of the call, replayed
  replay GPU ms   CUDA events around g.replay(), median per replay
  replay host ms  the time until g.replay() returns
  eager GPU ms    the eager call's kernels (events, as above)
"""
import argparse
import os
import statistics
import sys
import time

# Import the installed bsvd, not the source folder beside this script.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]

BUSY_CYCLES = 20_000_000  # torch.cuda._sleep: about 10 ms of GPU time


def back_to_back(torch, call, reps, calls=20):
    """Median over reps of the host ms per call of `calls` calls in a row."""
    per = []
    for _ in range(reps):
        torch.cuda.synchronize()
        torch.cuda._sleep(BUSY_CYCLES)
        t0 = time.perf_counter()
        for _ in range(calls):
            call()
        per.append((time.perf_counter() - t0) * 1e3 / calls)
    torch.cuda.synchronize()
    return statistics.median(per)


def eager_times(torch, bsvd, A, reps):
    """(host ms back to back, host ms after a wait, GPU ms, blocking host ms)
    medians of bsvd.svd(A)."""
    call = lambda: bsvd.svd(A, full_matrices=False)  # noqa: E731
    for _ in range(2):  # warm-up: plans, caches, the allocator's pool
        call()
    torch.cuda.synchronize()
    steady = back_to_back(torch, call, reps)
    host, gpu = [], []
    for _ in range(reps):
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(BUSY_CYCLES)  # the GPU waits on this, not on the host
        e0.record()
        t0 = time.perf_counter()
        call()
        host.append((time.perf_counter() - t0) * 1e3)
        e1.record()
        torch.cuda.synchronize()
        gpu.append(e0.elapsed_time(e1))
    stream = torch.cuda.current_stream()
    blocking = []
    for _ in range(max(2, reps // 2)):
        t0 = time.perf_counter()
        bsvd.svd(A, full_matrices=False, stream=stream)
        blocking.append((time.perf_counter() - t0) * 1e3)
    return steady, statistics.median(host), statistics.median(gpu), statistics.median(blocking)


def graph_times(torch, bsvd, A, reps):
    """(replay GPU ms, replay host ms, eager GPU ms) medians for A."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            bsvd.svd(A, full_matrices=False)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        U, S, Vh, info = bsvd.svd(A, full_matrices=False, return_info=True)
    g.replay()
    torch.cuda.synchronize()
    if int((info.info != 0).sum()):
        raise RuntimeError("bench_async: the replayed call did not converge")
    replay, host = [], []
    for _ in range(reps):
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(BUSY_CYCLES)
        e0.record()
        t0 = time.perf_counter()
        g.replay()
        host.append((time.perf_counter() - t0) * 1e3)
        e1.record()
        torch.cuda.synchronize()
        replay.append(e0.elapsed_time(e1))
    _, _, eager_gpu, _ = eager_times(torch, bsvd, A, reps)
    return statistics.median(replay), statistics.median(host), eager_gpu


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5, help="timed calls per case (default 5; "
                    "the graph replays 10 times as many)")
    args = ap.parse_args()

    import torch
    import bsvd
    if not (torch.cuda.is_available() and bsvd.cuda_available()):
        print("bench_async.py: needs a GPU and bsvd built with CUDA", file=sys.stderr)
        return 1
    dev = torch.device("cuda")
    print(f"device: {torch.cuda.get_device_name(dev)}; torch {torch.__version__}; "
          f"bsvd {bsvd.__version__}")
    g = torch.Generator(device=dev).manual_seed(0)
    hdr = (f"{'case':>18} {'host ms':>9} {'1st ms':>8} {'GPU ms':>10} {'blocking ms':>12} "
           f"{'host/GPU':>9}")
    print(hdr)
    print("-" * len(hdr))
    for b, m, n in ((1000, 128, 128), (10000, 32, 32)):
        A = torch.randn(b, m, n, dtype=torch.float64, device=dev, generator=g)
        host, first, gpu, blocking = eager_times(torch, bsvd, A, args.reps)
        print(f"{f'd {b}x{m}x{n}':>18} {host:9.3f} {first:8.3f} {gpu:10.3f} {blocking:12.3f} "
              f"{host / gpu * 100:8.2f}%", flush=True)
    A = torch.randn(10000, 8, 8, dtype=torch.float64, device=dev, generator=g)
    replay, host, eager = graph_times(torch, bsvd, A, 10 * args.reps)
    print()
    hdr = f"{'graph case':>18} {'replay GPU ms':>14} {'replay host ms':>15} {'eager GPU ms':>13}"
    print(hdr)
    print("-" * len(hdr))
    print(f"{'d 10000x8x8':>18} {replay:14.3f} {host:15.3f} {eager:13.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
