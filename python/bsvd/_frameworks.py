"""Array-library adapters: what bsvd needs to know about, and do with, the
caller's arrays (NumPy, PyTorch, CuPy, JAX) without importing any library the
caller did not import.

An adapter answers: dtype name, shape, element strides, device; and makes
the outputs in the caller's library on the caller's device (``empty``),
hands arrays to the native layer (``export``, through DLPack), and does the
few array operations the wrapper needs (conjugate in place, swap the last
two axes, QR completion for ``full_matrices=True``).

These run on every call (bsvd.svd's per-call cost, docs/perf/python.md):
what does not change from call to call (dtype objects, torch.device objects,
the DLPack and stream functions) is looked up once per adapter.
"""
from __future__ import annotations

import sys

import numpy as np

from . import _bsvd

SUPPORTED = ("float32", "float64", "complex64", "complex128")
UPCAST = {"float16": "float32", "bfloat16": "float32"}
REAL_OF = {"float32": "float32", "float64": "float64",
           "complex64": "float32", "complex128": "float64"}
LETTER = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z",
          "int32": "i"}

CPU = ("cpu", 0)
# NumPy dtype character -> name for the supported dtypes (dtype.name is a
# Python property, a few microseconds per call).
_NP_NAMES = {"f": "float32", "d": "float64", "F": "complex64", "D": "complex128"}


def _mod(name):
    return sys.modules.get(name)


def _positive_strides(as_strided, x):
    """x with the strides of its length-1 axes set to 0: slicing such as
    a[::-4] of a 4-row array leaves a negative stride there that no element
    access uses, yet the array counts as contiguous (so no copy would clear
    it) and DLPack consumers refuse negative strides. Arrays with other
    negative strides are left to the caller's copy."""
    st = tuple(0 if d == 1 else s for d, s in zip(x.shape, x.strides))
    if any(s < 0 for s in st):
        return x
    return as_strided(x, shape=x.shape, strides=st)


class NumpyAdapter:
    name = "numpy"
    stream_ordered = False  # host arrays: the blocking call

    def result(self, U, S, Vh, cls):
        return cls(U, S, Vh)

    def prepare(self, x):
        if type(x) is not np.ndarray:
            x = x.view(np.ndarray)  # subclasses: the wrapper re-wraps U and Vh
        if not x.dtype.isnative:
            x = x.astype(x.dtype.newbyteorder("="))
        if x.strides and min(x.strides) < 0:
            x = _positive_strides(np.lib.stride_tricks.as_strided, x)
        return x

    def default_float(self):
        return "float64"  # numpy.linalg's promotion of integer and bool input

    def dtype_name(self, x):
        dt = x.dtype
        return _NP_NAMES.get(dt.char) or dt.name

    def astype(self, x, name):
        return x.astype(name)

    def shape(self, x):
        return x.shape

    def strides(self, x):
        isz = x.itemsize
        st = x.strides
        if any(s % isz for s in st):
            return None
        return tuple(s // isz for s in st)

    def device(self, x):
        return CPU

    def contiguous(self, x):
        return np.ascontiguousarray(x)

    def empty(self, shape, name, device):
        return np.empty(shape, dtype=name)

    def zeros(self, shape, name, device):
        return np.zeros(shape, dtype=name)

    def export(self, a):
        return a

    def finish(self, buf, shape):
        return buf if buf.shape == tuple(shape) else buf.reshape(shape)

    def conj_(self, a):
        np.conjugate(a, out=a)
        return a

    def mT(self, a):
        return np.swapaxes(a, -1, -2)

    def mH(self, a):
        return np.conj(np.swapaxes(a, -1, -2))

    def stream(self, device):
        return 0

    def sync_input(self, x):
        pass

    def flat_slice(self, a, start, stop, shape):
        return a[start:stop].reshape(shape)

    # full_matrices=True
    def qr_complete(self, q):
        return np.linalg.qr(q, mode="complete")[0]

    def cat_last(self, a, b):
        return np.concatenate([a, b], axis=-1)

    def eye(self, n, batch_shape, name, device):
        return np.broadcast_to(np.eye(n, dtype=name), tuple(batch_shape) + (n, n)).copy()


class TorchAdapter:
    name = "torch"
    # CUDA tensors on the current stream: the stream-ordered call (enqueue
    # only; bsvd.torch's op bsvd::svd).
    stream_ordered = True

    def result(self, U, S, Vh, cls):
        # torch.linalg.svd's named result (torch.return_types.linalg_svd)
        rt = getattr(self.torch.return_types, "linalg_svd", None)
        return rt((U, S, Vh)) if rt is not None else cls(U, S, Vh)

    def __init__(self):
        import torch
        import torch.utils.dlpack
        self.torch = torch
        self._hip = torch.version.hip is not None
        names = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128", "int32",
                 "uint8")
        self._dtypes = {n: getattr(torch, n) for n in names}
        self._names = {d: n for n, d in self._dtypes.items()}
        self._devices = {}
        # The DLPack capsule straight from torch's C++ (torch.utils.dlpack.
        # to_dlpack). Tensor.__dlpack__ does the same after Python-level
        # checks of the current device and of streams (several microseconds
        # per array); the native layer makes the arrays' device current
        # itself, and the library runs on the caller's stream (opts.stream).
        self._to_dlpack = torch.utils.dlpack.to_dlpack
        # The current stream's handle without making a torch.cuda.Stream.
        self._raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)

    def prepare(self, x):
        if x.requires_grad:
            x = x.detach()
        if x.is_conj():
            x = x.resolve_conj()
        if x.is_neg():
            x = x.resolve_neg()
        return x

    def dtype_name(self, x):
        dt = x.dtype
        return self._names.get(dt) or str(dt).rsplit(".", 1)[-1]

    def default_float(self):
        # torch's promotion of integer tensors to a float (torch.get_default_dtype)
        return str(self.torch.get_default_dtype()).rsplit(".", 1)[-1]

    def astype(self, x, name):
        return x.to(self._dtypes[name])

    def shape(self, x):
        return x.shape

    def strides(self, x):
        return x.stride()

    def device(self, x):
        if x.is_cuda:
            if not self._hip:
                return ("cuda", x.get_device())
        elif x.device.type == "cpu":
            return CPU
        raise TypeError(f"bsvd: torch tensors on device '{x.device}' are not supported "
                        "(CPU and CUDA are)")

    def contiguous(self, x):
        return x.contiguous()

    def _dev(self, device):
        d = self._devices.get(device)
        if d is None:
            d = self._devices[device] = self.torch.device(
                "cpu" if device[0] == "cpu" else f"cuda:{device[1]}")
        return d

    def empty(self, shape, name, device):
        return self.torch.empty(shape, dtype=self._dtypes[name], device=self._dev(device))

    def zeros(self, shape, name, device):
        return self.torch.zeros(shape, dtype=self._dtypes[name], device=self._dev(device))

    def export(self, a):
        return self._to_dlpack(a)

    def finish(self, buf, shape):
        return buf  # made with its final shape

    def conj_(self, a):
        return a.conj_physical_()

    def mT(self, a):
        return a.mT

    def mH(self, a):
        return a.mH

    def stream(self, device):
        if device[0] != "cuda":
            return 0
        if self._raw_stream is not None:
            return self._raw_stream(device[1])
        return self.torch.cuda.current_stream(device[1]).cuda_stream

    def sync_input(self, x):
        pass

    def flat_slice(self, a, start, stop, shape):
        return a[start:stop].view(shape)

    def qr_complete(self, q):
        return self.torch.linalg.qr(q, mode="complete")[0]

    def cat_last(self, a, b):
        return self.torch.cat([a, b], dim=-1)

    def eye(self, n, batch_shape, name, device):
        e = self.torch.eye(n, dtype=self._dtypes[name], device=self._dev(device))
        return e.expand(tuple(batch_shape) + (n, n)).clone()


class CupyAdapter:
    name = "cupy"
    # on CuPy's current stream: the stream-ordered call (enqueue only)
    stream_ordered = True

    def result(self, U, S, Vh, cls):
        return cls(U, S, Vh)

    def __init__(self):
        import cupy
        self.cp = cupy

    def prepare(self, x):
        if any(s < 0 for s in x.strides):
            x = _positive_strides(self.cp.lib.stride_tricks.as_strided, x)
        return x

    def dtype_name(self, x):
        return x.dtype.name

    def default_float(self):
        return "float64"  # cupy.linalg follows numpy.linalg

    def astype(self, x, name):
        return x.astype(name)

    def shape(self, x):
        return x.shape

    def strides(self, x):
        isz = x.itemsize
        if any(s % isz for s in x.strides):
            return None
        return tuple(s // isz for s in x.strides)

    def device(self, x):
        return ("cuda", x.device.id)

    def contiguous(self, x):
        with x.device:
            return self.cp.ascontiguousarray(x)

    def empty(self, shape, name, device):
        with self.cp.cuda.Device(device[1]):
            return self.cp.empty(shape, dtype=name)

    def zeros(self, shape, name, device):
        with self.cp.cuda.Device(device[1]):
            return self.cp.zeros(shape, dtype=name)

    def export(self, a):
        return a

    def finish(self, buf, shape):
        return buf if buf.shape == tuple(shape) else buf.reshape(shape)

    def conj_(self, a):
        with a.device:
            self.cp.conjugate(a, out=a)
        return a

    def mT(self, a):
        return self.cp.swapaxes(a, -1, -2)

    def mH(self, a):
        return self.cp.conj(self.cp.swapaxes(a, -1, -2))

    def stream(self, device):
        with self.cp.cuda.Device(device[1]):
            return self.cp.cuda.get_current_stream().ptr

    def sync_input(self, x):
        pass

    def flat_slice(self, a, start, stop, shape):
        return a[start:stop].reshape(shape)

    def qr_complete(self, q):
        with q.device:
            return self.cp.linalg.qr(q, mode="complete")[0]

    def cat_last(self, a, b):
        with a.device:
            return self.cp.concatenate([a, b], axis=-1)

    def eye(self, n, batch_shape, name, device):
        with self.cp.cuda.Device(device[1]):
            return self.cp.broadcast_to(self.cp.eye(n, dtype=name),
                                        tuple(batch_shape) + (n, n)).copy()


class JaxAdapter:
    """bsvd.svd takes JAX arrays through the XLA FFI call (bsvd._jax); this
    adapter serves svd_batch, a build without the FFI handlers, and _jax's
    dtype and device questions. JAX arrays are immutable: outputs are
    buffers bsvd owns (host: NumPy; GPU: memory from cudaMalloc wrapped for
    DLPack), imported into JAX with jax.dlpack.from_dlpack once written. The
    library runs on the legacy default stream after the input is ready (JAX
    exposes no stream outside a custom call): the blocking call."""
    name = "jax"
    stream_ordered = False

    def result(self, U, S, Vh, cls):
        return cls(U, S, Vh)  # jax.numpy.linalg.svd's SVDResult has these fields

    def __init__(self):
        import jax
        import jax.numpy as jnp
        self.jax = jax
        self.jnp = jnp

    def prepare(self, x):
        return x

    def dtype_name(self, x):
        return x.dtype.name

    def default_float(self):
        # jax.numpy's default float: float64 only with jax_enable_x64
        return np.dtype(self.jnp.result_type(float)).name

    def astype(self, x, name):
        return x.astype(name)

    def shape(self, x):
        return tuple(x.shape)

    def strides(self, x):
        st, acc = [], 1
        for s in reversed(x.shape):
            st.append(acc)
            acc *= max(int(s), 1)
        return tuple(reversed(st))

    def device(self, x):
        devs = list(x.devices())
        if len(devs) != 1:
            raise ValueError("bsvd: sharded JAX arrays (on several devices) are not supported")
        d = devs[0]
        if d.platform == "cpu":
            return CPU
        if d.platform in ("gpu", "cuda"):
            return ("cuda", getattr(d, "local_hardware_id", None) or d.id)
        raise TypeError(f"bsvd: JAX arrays on platform '{d.platform}' are not supported")

    def contiguous(self, x):
        return x

    def empty(self, shape, name, device):
        if device[0] == "cpu":
            return np.empty(shape, dtype=name)
        count = 1
        for s in shape:
            count *= int(s)
        return _bsvd.empty(count, LETTER[name], True, device[1])

    def export(self, a):
        return a

    def _import(self, buf):
        if isinstance(buf, np.ndarray):
            return self.jnp.asarray(buf)
        return self.jax.dlpack.from_dlpack(buf)

    def finish(self, buf, shape):
        return self._import(buf).reshape(shape)

    def conj_(self, a):
        return self.jnp.conj(a)

    def mT(self, a):
        return self.jnp.swapaxes(a, -1, -2)

    def mH(self, a):
        return self.jnp.conj(self.jnp.swapaxes(a, -1, -2))

    def stream(self, device):
        return 0

    def sync_input(self, x):
        x.block_until_ready()

    def flat_slice(self, a, start, stop, shape):
        return a[start:stop].reshape(shape)

    def qr_complete(self, q):
        return self.jnp.linalg.qr(q, mode="complete")[0]

    def cat_last(self, a, b):
        return self.jnp.concatenate([a, b], axis=-1)

    def eye(self, n, batch_shape, name, device):
        return self.jnp.broadcast_to(self.jnp.eye(n, dtype=name), tuple(batch_shape) + (n, n))


def jax_tracer_type():
    """jax's Tracer class (what jit / vmap / grad hand a function instead of
    an array), looked up where this jax keeps it."""
    import jax
    t = getattr(jax.core, "Tracer", None)
    if t is None:
        from jax._src.core import Tracer as t
    return t


_ADAPTERS = {}


def _get(cls):
    a = _ADAPTERS.get(cls)
    if a is None:
        a = _ADAPTERS[cls] = cls()
    return a


def _is_matrix_like(x):
    return hasattr(x, "shape") and hasattr(x, "dtype")


def adapt(x):
    """(adapter, array) for an input; foreign arrays are converted zero-copy
    where possible (documented in the README)."""
    if isinstance(x, np.ndarray):
        return _get(NumpyAdapter), x
    torch = _mod("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return _get(TorchAdapter), x
    cupy = _mod("cupy")
    if cupy is not None and isinstance(x, cupy.ndarray):
        return _get(CupyAdapter), x
    jax = _mod("jax")
    if jax is not None and isinstance(x, jax.Array):
        return _get(JaxAdapter), x
    # Other producers: CUDA arrays through CuPy or PyTorch (zero copy),
    # host arrays through NumPy.
    on_cuda = hasattr(x, "__cuda_array_interface__")
    if not on_cuda and hasattr(x, "__dlpack_device__"):
        try:
            on_cuda = int(x.__dlpack_device__()[0]) in (2, 13)
        except Exception:  # noqa: BLE001 - a producer's own error: treat as host
            on_cuda = False
    if on_cuda:
        try:
            import cupy  # noqa: F401
            return _get(CupyAdapter), cupy.asarray(x) if hasattr(x, "__cuda_array_interface__") \
                else cupy.from_dlpack(x)
        except ImportError:
            pass
        try:
            import torch  # noqa: F811
            return _get(TorchAdapter), (torch.as_tensor(x, device="cuda")
                                        if hasattr(x, "__cuda_array_interface__")
                                        else torch.from_dlpack(x))
        except ImportError:
            raise TypeError("bsvd: a CUDA array of an unknown library needs CuPy or PyTorch "
                            "installed to be wrapped") from None
    if hasattr(x, "__dlpack__") and not hasattr(x, "__array__"):
        return _get(NumpyAdapter), np.from_dlpack(x)
    try:
        arr = np.asarray(x)
    except ValueError as e:
        if isinstance(x, (list, tuple)):
            raise ValueError("bsvd: a list of matrices of different shapes is not one array "
                             "(as in NumPy); use bsvd.svd_batch(list) for a variable-size "
                             "batch") from e
        raise TypeError(f"bsvd: cannot use an object of type {type(x).__name__} as an array") from e
    except Exception as e:  # noqa: BLE001
        raise TypeError(f"bsvd: cannot use an object of type {type(x).__name__} as an array") from e
    if arr.dtype.kind in "OUSVMm":
        raise TypeError(f"bsvd: cannot use an object of type {type(x).__name__} as an array")
    return _get(NumpyAdapter), arr
