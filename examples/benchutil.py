"""Plumbing shared by the application examples (examples/enkf, tebd, muon,
blr): the few array operations whose names differ between NumPy and
PyTorch, so one numerical code runs on either; which engines are present;
a timer that waits for the device; a time budget that times a slow
baseline on a slice of the batch and scales it (flagged in the row); and
the JSON rows that examples/run_gpu_bench.sh collects and
scripts/examples-plots.py plots.

No numerics here: each example holds its own model and algorithm.
"""
from __future__ import annotations

import contextlib
import json
import os
import platform
import statistics
import sys
import time

import numpy as np


class NumpyOps:
    """NumPy on the host; @, reshape, swapaxes and indexing are written the
    same way for both libraries and need no entry here."""
    name = "numpy"
    device = "cpu"

    linalg = np.linalg

    def __init__(self, dtype="float64"):
        self.dtype = np.dtype(dtype)

    def asarray(self, a):
        return np.asarray(a, dtype=self.dtype)

    def index(self, a):
        return np.asarray(a, dtype=np.int64)

    def zeros(self, shape):
        return np.zeros(shape, dtype=self.dtype)

    def eye(self, n):
        return np.eye(n, dtype=self.dtype)

    def einsum(self, spec, *ops):
        return np.einsum(spec, *ops, optimize=len(ops) > 2)

    def roll(self, x, shift, axis):
        return np.roll(x, shift, axis)

    def cat(self, xs, axis):
        return np.concatenate(xs, axis)

    def sqrt(self, x):
        return np.sqrt(x)

    def exp(self, x):
        return np.exp(x)

    def stack(self, xs, axis):
        return np.stack(xs, axis)

    def clip0(self, x):
        return np.maximum(x, 0)

    def host(self, x):
        return np.asarray(x)

    def sync(self):
        pass


class TorchOps:
    """PyTorch on `device` (a CUDA device in the --gpu modes)."""
    name = "torch"

    def __init__(self, torch, device="cuda", dtype="float64"):
        self.t = torch
        self.linalg = torch.linalg
        self.device = device
        self.dtype = getattr(torch, dtype)
        self.np_dtype = np.dtype(dtype)

    def asarray(self, a):
        if isinstance(a, self.t.Tensor):
            return a.to(device=self.device, dtype=self.dtype)
        return self.t.as_tensor(np.asarray(a, dtype=self.np_dtype), device=self.device)

    def index(self, a):
        return self.t.as_tensor(np.asarray(a, dtype=np.int64), device=self.device)

    def zeros(self, shape):
        return self.t.zeros(shape, dtype=self.dtype, device=self.device)

    def eye(self, n):
        return self.t.eye(n, dtype=self.dtype, device=self.device)

    def einsum(self, spec, *ops):
        return self.t.einsum(spec, *ops)

    def roll(self, x, shift, axis):
        return self.t.roll(x, shift, axis)

    def cat(self, xs, axis):
        return self.t.cat(xs, axis)

    def sqrt(self, x):
        return self.t.sqrt(x)

    def exp(self, x):
        return self.t.exp(x)

    def stack(self, xs, axis):
        return self.t.stack(xs, axis)

    def clip0(self, x):
        return self.t.clamp(x, min=0)

    def host(self, x):
        return x.detach().cpu().numpy()

    def sync(self):
        if self.t.device(self.device).type == "cuda":
            self.t.cuda.synchronize()


def torch_cuda():
    """The torch module when a CUDA device is usable, else None."""
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def jax_gpu():
    """The jax module with float64 enabled when it sees a GPU, else None.
    JAX would take 75 % of the GPU's memory at its first call; the examples
    share the GPU with torch, so it allocates on demand instead."""
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    try:
        if not jax.devices("gpu"):
            return None
    except RuntimeError:
        return None
    return jax


def to_jax(t):
    """A CUDA tensor as a JAX array on the same GPU, without a copy."""
    import jax.dlpack
    return jax.dlpack.from_dlpack(t)


def to_torch(a):
    import torch
    return torch.from_dlpack(a)


def device_name():
    torch = torch_cuda()
    if torch is not None:
        return torch.cuda.get_device_name()
    return platform.processor() or platform.machine()


def versions():
    out = {"python": platform.python_version()}
    for name in ("numpy", "scipy", "torch", "jax", "bsvd"):
        mod = sys.modules.get(name)
        if mod is not None:
            out[name] = getattr(mod, "__version__", "?")
    return out


def time_call(fn, sync, reps=5, budget_s=5.0, warmup=1):
    """Median wall time (ms) of fn() over up to `reps` calls, each followed
    by sync() (the device's queue drained), within about budget_s seconds;
    `warmup` untimed calls first (compilation, allocator, cuSOLVER handles)."""
    for _ in range(warmup):
        fn()
        sync()
    times = []
    t_start = time.perf_counter()
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
        if time.perf_counter() - t_start > budget_s:
            break
    return {"ms": statistics.median(times), "reps": len(times)}


def time_scaled(make_fn, total, sync, budget_s=5.0, reps=3, probe=None, allow_scale=True):
    """Time fn = make_fn(count) on `count` of `total` items and scale the
    median to all of them when the whole batch would not fit the budget.

    A baseline that loops over matrices (cuSOLVER's per-matrix drivers
    behind torch.linalg.svd for larger sizes, LAPACK under NumPy) costs
    about the same per matrix at any batch size, so timing a slice and
    scaling is a fair estimate for it; the row records the slice
    ("scaled_from") so a reader knows. A probe run on `probe` items (default
    total // 64, at least 1) estimates the whole batch's time first.
    allow_scale=False (bsvd's own rows): always the whole batch, as few
    repetitions as the budget allows (at least one)."""
    if not allow_scale:
        return time_call(make_fn(total), sync, reps=reps, budget_s=budget_s)
    probe = max(1, min(total, probe or total // 64))
    fn = make_fn(probe)
    fn()  # warm-up / compile at this size
    sync()
    t0 = time.perf_counter()
    fn()
    sync()
    per_item = (time.perf_counter() - t0) / probe
    count = total
    if per_item * total * (reps + 1) > budget_s:
        count = max(probe, min(total, int(budget_s / ((reps + 1) * per_item))))
    res = time_call(make_fn(count), sync, reps=reps, budget_s=budget_s,
                    warmup=0 if count == probe else 1)
    if count < total:
        res["ms"] *= total / count
        res["scaled_from"] = count
    return res


@contextlib.contextmanager
def guard(rows, example, case, engine, device, **extra):
    """Run one engine's measurements; an exception becomes a row holding the
    error (ms None), so that one failing baseline (a library's missing
    kernel, an out-of-memory) stops neither the others nor bsvd's rows."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - recorded, not hidden
        msg = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        print(f"{example}: {engine} ({case}) failed: {msg}")
        rows.append({"example": example, "case": case, "engine": engine, "device": device,
                     "ms": None, "reps": 0, "error": msg, **extra})


def row(example, case, engine, device, res, **extra):
    out = {"example": example, "case": case, "engine": engine, "device": device,
           "ms": round(res["ms"], 4), "reps": res["reps"]}
    if "scaled_from" in res:
        out["scaled_from"] = res["scaled_from"]
    out.update(extra)
    # A line per row as it is measured (stderr): a run cut short by a time
    # limit still tells how far it got; the table comes at the end.
    print(f"  [{example}] {case}: {engine} ({device}) {out['ms']} ms", file=sys.stderr, flush=True)
    return out


def write_json(path, rows, meta):
    """{"meta": {...}, "rows": [...]}: meta names the machine and versions."""
    if not path:
        return
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
        f.write("\n")
    print(f"wrote {path}")


def meta(example, **extra):
    m = {"example": example, "device": device_name(), "versions": versions(),
         "host_threads": os.cpu_count()}
    m.update(extra)
    return m


def print_rows(rows, keys=("case", "engine", "device", "ms")):
    """A plain table of the rows (the runner prints the combined one)."""
    for r in rows:
        s = "  ".join(f"{r.get(k, '')!s:>14}" if k != "case" else f"{r.get(k, '')!s:<24}"
                      for k in keys)
        if r.get("error"):
            s += f"  failed: {r['error']}"
        if "scaled_from" in r:
            s += f"  (scaled from {r['scaled_from']})"
        print(s)
