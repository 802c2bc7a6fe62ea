#!/usr/bin/env python3
"""bsvd.svd (cpu backend) against numpy.linalg.svd, side by side in one run.

Batches of `--batch` random n x n matrices (standard normal), float32 and
float64, singular values and vectors (full_matrices=False) and values only,
for each n of --sizes. Both run with the same thread count T: NumPy's BLAS
gets T threads through OPENBLAS_NUM_THREADS / OMP_NUM_THREADS / MKL_NUM_THREADS
(set here before NumPy is imported; NumPy loops over the batch itself, so
its threads only help inside one LAPACK call), bsvd gets num_threads=T
(threads over the batch). The two are timed alternately, rep by rep, on the
same array, so that load on the machine hits both alike; the table reports
the minimum and the median over the reps.

NumPy cannot spread a batch over threads, and with T BLAS threads on small
matrices OpenBLAS can be slower than with one; so each point also times
NumPy with one BLAS thread (numpy_1t: its best setting here), switched at
run time through the set_num_threads entry of the OpenBLAS NumPy loaded
(found in /proc/self/maps; skipped when there is none).

Each point also records bsvd's path (Info.path_names) and an accuracy check
against NumPy: max_i |s_i - s_np_i| / s_np_1 over the batch, and with
vectors the residual ||A - U S Vh||_F / ||A||_F and ||I - U^T U||_F of the
worst of 16 sampled matrices, in units of the dtype's eps.

  PYTHONPATH=<bsvd install> python3 scripts/bench-cpu-numpy.py \
      --json docs/perf/raw/cpu-numpy-<date>.json

The current API is called with explicit arguments (full_matrices,
compute_uv, backend, num_threads) so the script does not depend on the
defaults.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--sizes", default="8,16,32,64,128,256")
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--jobs", default="vectors,values")
    ap.add_argument("--reps", type=int, default=0,
                    help="timed repetitions per point (0: 5 up to n = 64, 3 above)")
    ap.add_argument("--numpy-1t-only", action="store_true",
                    help="time NumPy with one BLAS thread only (its T-thread run can take "
                         "minutes per call on a loaded machine at n >= 128)")
    ap.add_argument("--json", default="", help="write the points as JSON to this file")
    return ap.parse_args()


ARGS = parse_args()
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(ARGS.threads)

import numpy as np  # noqa: E402  (after the thread variables)

import bsvd  # noqa: E402


def _numpy_openblas():
    """(set, get) of the OpenBLAS NumPy loaded, or None."""
    import ctypes
    try:
        libs = {line.split()[-1] for line in open("/proc/self/maps") if "openblas" in line
                and line.split()[-1].startswith("/") and "numpy" in line}
    except OSError:
        return None
    for path in sorted(libs):
        lib = ctypes.CDLL(path)
        for suffix in ("64_", "_64_", ""):
            try:
                return (getattr(lib, "scipy_openblas_set_num_threads" + suffix),
                        getattr(lib, "scipy_openblas_get_num_threads" + suffix))
            except AttributeError:
                pass
        try:
            return lib.openblas_set_num_threads, lib.openblas_get_num_threads
        except AttributeError:
            pass
    return None


np.linalg.svd(np.eye(2))  # loads NumPy's LAPACK
NUMPY_BLAS = _numpy_openblas()


def timed(f):
    t0 = time.perf_counter()
    out = f()
    return time.perf_counter() - t0, out


def accuracy(A, vectors, out_b, out_n):
    eps = float(np.finfo(A.dtype).eps)
    S = out_b[1] if vectors else out_b
    Sn = out_n[1] if vectors else out_n
    s1 = np.maximum(Sn[:, :1], np.finfo(A.dtype).tiny)
    acc = {"values_vs_numpy_eps": float(np.max(np.abs(S.astype(np.float64) - Sn) / s1) / eps)}
    if vectors:
        U, S, Vh = out_b
        idx = np.linspace(0, A.shape[0] - 1, min(16, A.shape[0])).astype(int)
        a = A[idx].astype(np.float64)
        u, s, vh = U[idx].astype(np.float64), S[idx].astype(np.float64), Vh[idx].astype(np.float64)
        res = np.linalg.norm(a - (u * s[:, None, :]) @ vh, axis=(1, 2)) / np.linalg.norm(a, axis=(1, 2))
        eye = np.eye(u.shape[-1])
        orth = np.linalg.norm(np.swapaxes(u, 1, 2) @ u - eye, axis=(1, 2))
        acc["residual_eps"] = float(res.max() / eps)
        acc["orthogonality_eps"] = float(orth.max() / eps)
    return acc


def point(dtype, n, vectors, reps, rng):
    A = rng.standard_normal((ARGS.batch, n, n)).astype(dtype)
    T = ARGS.threads

    def run_bsvd():
        return bsvd.svd(A, full_matrices=False, compute_uv=vectors, backend="cpu", num_threads=T)

    def run_numpy():
        return np.linalg.svd(A, full_matrices=False, compute_uv=vectors)

    def run_numpy_1t():
        NUMPY_BLAS[0](1)
        try:
            return run_numpy()
        finally:
            NUMPY_BLAS[0](T)

    # Warm-up on a slice: library load, BLAS threads, workspace queries.
    bsvd.svd(A[:8], full_matrices=False, compute_uv=vectors, backend="cpu", num_threads=T)
    np.linalg.svd(A[:8], full_matrices=False, compute_uv=vectors)
    tb, tn, t1 = [], [], []
    out_b = out_n = None
    for r in range(reps):
        order = [("b", run_bsvd)]
        if not (ARGS.numpy_1t_only and NUMPY_BLAS):
            order.append(("n", run_numpy))
        if NUMPY_BLAS:
            order.append(("1", run_numpy_1t))
        if r % 2:
            order.reverse()
        for who, f in order:
            t, out = timed(f)
            if who == "b":
                tb.append(t)
                out_b = out
            elif who == "n":
                tn.append(t)
                out_n = out
            else:
                t1.append(t)
                if out_n is None or not tn:  # --numpy-1t-only: its result for the check
                    out_n = out
    info = bsvd.svd(A[:1], full_matrices=False, compute_uv=vectors, backend="cpu",
                    num_threads=T, return_info=True)[-1]
    return {
        "dtype": dtype, "n": n, "batch": ARGS.batch, "job": "vectors" if vectors else "values",
        "threads": T, "reps": reps,
        "bsvd_ms_min": 1e3 * min(tb), "bsvd_ms_median": 1e3 * statistics.median(tb),
        "numpy_ms_min": 1e3 * min(tn) if tn else None,
        "numpy_ms_median": 1e3 * statistics.median(tn) if tn else None,
        "numpy_1t_ms_min": 1e3 * min(t1) if t1 else None,
        "bsvd_ms_all": [1e3 * t for t in tb], "numpy_ms_all": [1e3 * t for t in tn],
        "numpy_1t_ms_all": [1e3 * t for t in t1],
        "bsvd_path": sorted(set(map(str, np.asarray(info.path_names).ravel()))),
        "accuracy": accuracy(A, vectors, out_b, out_n),
    }


def main():
    rng = np.random.default_rng(20261126)
    points = []
    print(f"{'dtype':8} {'job':8} {'batch x n x n':>15} {'bsvd ms':>10} {'numpy ms':>10} "
          f"{'numpy/bsvd':>10} {'(median)':>9} {'numpy 1t ms':>11} {'1t/bsvd':>8}  path", flush=True)
    for dtype in ARGS.dtypes.split(","):
        for job in ARGS.jobs.split(","):
            for n in map(int, ARGS.sizes.split(",")):
                reps = ARGS.reps or (5 if n <= 64 else 3)
                p = point(dtype, n, job == "vectors", reps, rng)
                points.append(p)
                nmin = p["numpy_ms_min"] or float("nan")
                nmed = p["numpy_ms_median"] or float("nan")
                print(f"{dtype:8} {job:8} {ARGS.batch:>7} x {n:3} x {n:3} {p['bsvd_ms_min']:10.2f} "
                      f"{nmin:10.2f} {nmin / p['bsvd_ms_min']:9.2f}x "
                      f"{nmed / p['bsvd_ms_median']:8.2f}x "
                      f"{p['numpy_1t_ms_min'] or 0:11.2f} {(p['numpy_1t_ms_min'] or 0) / p['bsvd_ms_min']:7.2f}x  "
                      f"{','.join(p['bsvd_path'])}", flush=True)
    if ARGS.json:
        meta = {
            "what": "bsvd.svd (backend cpu) vs numpy.linalg.svd, same threads, side by side",
            "command": " ".join(sys.argv),
            "threads": ARGS.threads, "cpu_count": os.cpu_count(),
            "machine": platform.processor() or platform.machine(),
            "python": platform.python_version(), "numpy": np.__version__,
            "bsvd": bsvd.__version__ if hasattr(bsvd, "__version__") else "",
            "numpy_blas": _numpy_blas(),
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        os.makedirs(os.path.dirname(os.path.abspath(ARGS.json)), exist_ok=True)
        with open(ARGS.json, "w") as f:
            json.dump({"meta": meta, "points": points}, f, indent=1)
        print(f"wrote {ARGS.json}")
    slower = [p for p in points if p["bsvd_ms_min"] > min(
        t for t in (p["numpy_ms_min"], p["numpy_1t_ms_min"]) if t is not None)]
    print(f"{len(points) - len(slower)} of {len(points)} points: bsvd no slower than NumPy's "
          "faster setting (min times)")


def _numpy_blas():
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg.get("Build Dependencies", {}).get("blas", {})
        return f"{blas.get('name', '')} {blas.get('version', '')}".strip()
    except Exception:  # older NumPy: no dict mode
        return ""


if __name__ == "__main__":
    main()
