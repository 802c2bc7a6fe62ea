"""The few array operations that bsvd's solvers on top of the SVD (bsvd.lstsq,
pinv, matrix_rank, cond, norm: _lstsq.py, _norms.py) need, once for the
NumPy API (NumPy, CuPy, jax.numpy) and once for PyTorch, so every step runs
in the caller's library on the caller's device (and stream) and nothing
here imports a library the caller did not import.

Only the operations whose names or keywords differ between the libraries
are here; ``@``, ``*``, indexing, ``.shape`` and comparisons are written
directly.
"""
from __future__ import annotations

import sys

import numpy as np

from ._frameworks import REAL_OF, SUPPORTED, UPCAST

_INT_KINDS = "biu"  # bool, signed and unsigned integers (NumPy's dtype kinds)

# NumPy's own functions, taken when bsvd is imported: the functions below
# delegate to them (norms and condition numbers bsvd does not compute), and a
# caller that swaps bsvd's functions into numpy.linalg (as
# python/tests/test_suites.py does) must not make them call themselves.
NP_NORM = np.linalg.norm
NP_COND = np.linalg.cond


def library(x):
    """'torch', 'cupy', 'jax' or 'numpy' (NumPy and everything NumPy takes:
    lists, scalars, objects with __array__)."""
    mod = type(x).__module__.split(".")[0]
    if mod == "torch" and _is(x, "torch", "Tensor"):
        return "torch"
    if mod == "cupy" and _is(x, "cupy", "ndarray"):
        return "cupy"
    if mod in ("jax", "jaxlib") and _is(x, "jax", "Array"):  # tracers are jax.Arrays too
        return "jax"
    return "numpy"


def _is(x, mod, cls):
    lib = sys.modules.get(mod)
    return lib is not None and isinstance(x, getattr(lib, cls))


def namespace(lib):
    if lib == "torch":
        return TorchOps()
    if lib == "cupy":
        import cupy
        return NumpyOps(cupy, "cupy")
    if lib == "jax":
        import jax.numpy as jnp
        return NumpyOps(jnp, "jax")
    return NumpyOps(np, "numpy")


class NumpyOps:
    """NumPy's API: NumPy, CuPy and jax.numpy."""

    def __init__(self, xp, name):
        self.xp = xp
        self.name = name

    def asarray(self, x):
        return self.xp.asarray(x)

    def dtype_name(self, x):
        return np.dtype(x.dtype).name

    def default_float(self):
        if self.name == "jax":  # float64 only with jax_enable_x64
            return np.dtype(self.xp.result_type(float)).name
        return "float64"

    def is_int(self, name):
        return np.dtype(name).kind in _INT_KINDS

    def astype(self, x, name):
        return x if self.dtype_name(x) == name else x.astype(name)

    def mH(self, x):
        return self.xp.conj(self.xp.swapaxes(x, -1, -2))

    def where(self, c, a, b):
        return self.xp.where(c, a, b)

    def reduce_sum(self, x, axis, keepdims=False):
        return self.xp.sum(x, axis=axis, keepdims=keepdims)

    def any(self, x, axis):
        return self.xp.any(x, axis=axis)

    def count(self, mask):
        return self.xp.count_nonzero(mask, axis=-1)

    def abs2(self, x):
        """|x|^2, real."""
        if self.xp.iscomplexobj(x):
            return x.real * x.real + x.imag * x.imag
        return x * x

    def isnan(self, x):
        return self.xp.isnan(x)

    def maximum(self, x, y):
        return self.xp.maximum(x, y)

    def isfinite_all(self, x):
        return bool(self.xp.all(self.xp.isfinite(x)))

    def zeros(self, shape, name, like):
        if self.name == "cupy":
            with like.device:
                return self.xp.zeros(shape, dtype=name)
        return self.xp.zeros(shape, dtype=name)

    def broadcast_to(self, x, shape):
        return self.xp.broadcast_to(x, tuple(shape))

    def moveaxis(self, x, src, dst):
        return self.xp.moveaxis(x, src, dst)

    def to_int(self, x, name):
        return x.astype(name)

    def device(self, x):
        if self.name == "cupy":
            return x.device
        return None

    def linalg(self):
        return self.xp.linalg


class TorchOps:
    name = "torch"

    def __init__(self):
        import torch
        self.t = torch

    def asarray(self, x):
        return x

    def dtype_name(self, x):
        return str(x.dtype).rsplit(".", 1)[-1]

    def default_float(self):
        return self.dtype_name(self.t.empty(0))

    def is_int(self, name):
        return name == "bool" or name.startswith(("int", "uint"))

    def astype(self, x, name):
        return x if self.dtype_name(x) == name else x.to(getattr(self.t, name))

    def mH(self, x):
        return x.transpose(-2, -1).conj()

    def where(self, c, a, b):
        return self.t.where(c, a, b)

    def reduce_sum(self, x, axis, keepdims=False):
        return self.t.sum(x, dim=axis, keepdim=keepdims)

    def any(self, x, axis):
        return self.t.any(self.t.any(x, dim=axis[0], keepdim=True), dim=axis[1]).squeeze(axis[0])

    def count(self, mask):
        return mask.sum(dim=-1)

    def abs2(self, x):
        if x.is_complex():
            return x.real * x.real + x.imag * x.imag
        return x * x

    def isnan(self, x):
        return self.t.isnan(x)

    def maximum(self, x, y):
        if isinstance(y, self.t.Tensor):
            return self.t.maximum(x, y)
        return self.t.clamp(x, min=y)

    def isfinite_all(self, x):
        return bool(self.t.isfinite(x).all())

    def zeros(self, shape, name, like):
        return self.t.zeros(tuple(shape), dtype=getattr(self.t, name), device=like.device)

    def broadcast_to(self, x, shape):
        return x.expand(tuple(shape))

    def moveaxis(self, x, src, dst):
        return self.t.movedim(x, src, dst)

    def to_int(self, x, name):
        return x.to(getattr(self.t, name))

    def device(self, x):
        return x.device

    def linalg(self):
        return self.t.linalg


def compute_dtype(ops, names, where):
    """The dtype bsvd computes in for inputs of the dtypes `names`, as
    numpy.linalg promotes them: integer and bool input counts as the
    library's default float, float16 / bfloat16 as float32 (bsvd.svd's
    rule); complex if any is complex, double if any is double."""
    out = []
    for name in names:
        if ops.is_int(name):
            name = ops.default_float()
        name = UPCAST.get(name, name)
        if name not in SUPPORTED:
            raise TypeError(f"{where}: unsupported dtype {name}; bsvd takes float32, float64, "
                            "complex64 and complex128 (integer and bool input is promoted to "
                            "the default float, float16 and bfloat16 are computed in float32)")
        out.append(name)
    cplx = any(n.startswith("complex") for n in out)
    double = any(REAL_OF[n] == "float64" for n in out)
    return {(False, False): "float32", (False, True): "float64",
            (True, False): "complex64", (True, True): "complex128"}[(cplx, double)]


def eps(name):
    return float(np.finfo(REAL_OF[name]).eps)
