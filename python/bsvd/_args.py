"""Argument handling of bsvd.svd: the library's enum names, option
validation (every option is checked here, with a message naming it), dtype
promotion and the column-major description of the caller's array layout."""
from __future__ import annotations

import math
import warnings
from typing import Any, NamedTuple

import numpy as np

from . import _bsvd
from ._frameworks import SUPPORTED, UPCAST


class AccuracyWarning(UserWarning):
    """An option (tol above the accuracy bound) gives up the accuracy
    contract; the message names the expected loss."""


def _enum_names(name_of):
    """{value: name} of a C enum, from its bsvd_<enum>_string: counts up
    from 0 until the library has no name (the names are kept in the library
    alone, src/core/names.cpp)."""
    names = {}
    while (s := name_of(len(names))) is not None:
        names[len(names)] = s
    return names


def _enum_values(name_of):
    """{name: value} of a C enum for parsing arguments; '_' may stand for
    '-' (round_robin), as in bsvd_<enum>_from_string."""
    values = {}
    for v, s in _enum_names(name_of).items():
        values[s] = v
        values[s.replace("-", "_")] = v
    return values


# Path of each matrix (Info.path): {bsvd_path_t value: name}.
PATH_NAMES = _enum_names(_bsvd.path_string)
BACKENDS = _enum_values(_bsvd.backend_string)


class Option(NamedTuple):
    """One row of the library's option table (bsvd_option_info, bsvd.h):
    a field of bsvd_options_t and a keyword of bsvd.svd."""
    name: str
    kind: str  # "enum", "int" or "real"
    lo: float
    hi: float
    init: float  # the library's default
    names: Any  # enum: the value names (index = value); else None
    help: str


# Every option, in the table's order: the keywords bsvd.svd takes beside
# its own, the values bsvd._bsvd.Options holds, the torch op's arguments
# and the JAX FFI attribute.
OPTIONS = tuple(Option(*row) for row in _bsvd.option_table())
OPTION_NAMES = tuple(o.name for o in OPTIONS)
_ROW = {o.name: i for i, o in enumerate(OPTIONS)}
BACKEND_ROW = _ROW["backend"]
_TOL_ROW = _ROW["tol"]
_CHECKED = {}  # option_values' results by its arguments
# The keywords' defaults as bsvd.svd shows them (None: the library's).
DEFAULT_BACKEND = OPTIONS[BACKEND_ROW].names[int(OPTIONS[BACKEND_ROW].init)]
_ordering = OPTIONS[_ROW["ordering"]]
DEFAULT_ORDERING = _ordering.names[int(_ordering.init)]
_variant = OPTIONS[_ROW["variant"]]
DEFAULT_VARIANT = _variant.names[int(_variant.init)]
DEFAULT_MAX_SWEEPS = 80  # the library's default (bsvd_options_t::max_sweeps <= 0)
# The Python spellings of precondition beside its numbers (bsvd.svd's
# docstring): True / False for QR with column pivoting always / never,
# "gram" for the Gram matrix's eigenvectors.
_ALIASES = {"precondition": {True: 1, False: -1, "gram": 2}}

# The largest rotation threshold that keeps the accuracy contract (T1-T4
# below 30, ALGORITHMS.md section 1), in units of the unit roundoff u of the
# precision. Measured on the CPU backend (python/tol_bound.py,
# docs/perf/python.md "The tol bound"): the orthogonality ratio T2 grows as
# about 0.3 tol/u whatever the size, so 64 u gives T2 <= 23 and 128 u
# already T2 up to 47.
TOL_BOUND_U = 64
_UNIT_ROUNDOFF = {"float32": 2.0 ** -24, "float64": 2.0 ** -53,
                  "complex64": 2.0 ** -24, "complex128": 2.0 ** -53}

_INT_NAMES = frozenset(("bool", "int8", "int16", "int32", "int64",
                        "uint8", "uint16", "uint32", "uint64"))


def _is_int(val):
    if type(val) is int:  # the common case first: this runs on every call
        return True
    return isinstance(val, (int, np.integer)) and not isinstance(val, (bool, np.bool_))


def check_flag(val, name, where):
    """A bool argument (full_matrices, compute_uv, hermitian, ...)."""
    if val is True or val is False:
        return val
    if isinstance(val, (bool, np.bool_)) or (_is_int(val) and int(val) in (0, 1)):
        return bool(val)
    raise TypeError(f"{where}: {name} must be True or False, got {val!r}")


def check_tol(tol, name, where, warn=True):
    """tol as a float: None or 0 = the library's default; otherwise in
    (0, 1). Above the accuracy bound (TOL_BOUND_U) an AccuracyWarning
    (unless warn=False)."""
    if tol is None:
        return 0.0
    if isinstance(tol, (bool, np.bool_)) or not isinstance(tol, (int, float, np.integer, np.floating)):
        raise TypeError(f"{where}: tol must be None or a number, got {tol!r}")
    tol = float(tol)
    if math.isnan(tol) or tol < 0.0 or tol >= 1.0:
        raise ValueError(f"{where}: tol = {tol!r} must be None (the default sqrt(max(m, 16))*eps) or a "
                         "number in [0, 1) (0 is the default too)")
    bound = TOL_BOUND_U * _UNIT_ROUNDOFF[name]
    if warn and tol > bound:
        warnings.warn(
            f"{where}: tol = {tol:.3g} is above {bound:.3g} (64 unit roundoffs of {name}), the "
            "largest that keeps bsvd's accuracy contract: the singular vectors of a converged "
            "n-column matrix are orthogonal only to about 0.3*n*tol (||I - V^H V||_1, not "
            "working precision) and its singular values may be off by about n*tol**2 of the "
            "largest (up to about tol for tol >= 1e-2), while info still reports convergence "
            "(docs/perf/python.md, 'The tol bound')",
            AccuracyWarning, stacklevel=stacklevel())
    return tol


def _one_of(names):
    """"'a', 'b' or 'c'" for messages."""
    q = [repr(n) for n in names]
    return ", ".join(q[:-1]) + " or " + q[-1] if len(q) > 1 else q[0]


def _option_value(row, val, dtype_name, where, warn_tol):
    """One keyword's value as the library's number (None: its default)."""
    if val is None:
        return row.init if row.kind == "real" else int(row.init)
    aliases = _ALIASES.get(row.name)
    if aliases is not None and (isinstance(val, (bool, np.bool_, str))):
        if isinstance(val, np.bool_):
            val = bool(val)
        if val in aliases:
            return aliases[val]
        raise ValueError(f"{where}: {row.name} must be None, {_one_of(list(aliases))} or a "
                         f"number in {int(row.lo)} ... {int(row.hi)} ({row.help}), got {val!r}")
    if row.kind == "enum":
        key = val.replace("_", "-") if isinstance(val, str) else None
        if key in row.names:
            return row.names.index(key)
        raise ValueError(f"{where}: {row.name} must be {_one_of(row.names)}, got {val!r}")
    if row.kind == "real":
        if row.name == "tol":
            return check_tol(val, dtype_name, where, warn=warn_tol)
        if isinstance(val, (bool, np.bool_)) or not isinstance(
                val, (int, float, np.integer, np.floating)):
            raise TypeError(f"{where}: {row.name} must be None or a number, got {val!r}")
        x = float(val)
        if math.isnan(x) or x < row.lo or x > row.hi:
            raise ValueError(f"{where}: {row.name} = {val!r} is outside [{row.lo:g}, "
                             f"{row.hi:g}] ({row.help})")
        return x
    if not _is_int(val):
        raise TypeError(f"{where}: {row.name} must be None or an int, got {val!r}")
    if val < row.lo or val > row.hi:
        top = "" if row.hi >= 2**31 - 1 else f" ... {int(row.hi)}"
        raise ValueError(f"{where}: {row.name} must be None or an int in {int(row.lo)}{top} "
                         f"({row.help}), got {val!r}")
    return int(val)


def option_values(kw, device, name="float64", where="bsvd.svd", warn_tol=True):
    """Every option of a call checked, in the table's order (OPTION_NAMES):
    the keywords' values from kw (a missing one: the library's default),
    as the library's numbers, the backend resolved for the device (None:
    auto stays auto, as the library resolves it for host data). Pure
    Python, so torch.compile traces it (bsvd.torch); warn_tol=False leaves
    the AccuracyWarning of a large tol to the caller."""
    raw = tuple(kw.get(n) for n in OPTION_NAMES)
    # (the types too: 1, 1.0 and True are equal keys, and only 1 is an int)
    key = (raw, tuple(map(type, raw)), device, name, where)
    try:
        hit = _CHECKED.get(key)
    except TypeError:  # an unhashable value: checked below, and refused
        key, hit = None, None
    if hit is not None:
        return hit
    vals = [_option_value(row, v, name, where, warn_tol) for row, v in zip(OPTIONS, raw)]
    b = vals[BACKEND_ROW]
    if device is None:
        pass
    elif b == _bsvd.BACKEND_AUTO:
        vals[BACKEND_ROW] = _bsvd.BACKEND_CUDA if device[0] == "cuda" else _bsvd.BACKEND_CPU
    elif b == _bsvd.BACKEND_CPU and device[0] == "cuda":
        raise ValueError(f"{where}: backend='cpu' needs host arrays, but the input is on a CUDA "
                         "device (move it to the host first, or use backend='auto')")
    vals = tuple(vals)
    # Kept for the next call with the same keywords (a few microseconds of
    # a small batch's call), unless tol is set: its AccuracyWarning is
    # issued per call.
    if key is not None and raw[_TOL_ROW] in (None, 0):
        if len(_CHECKED) >= 64:
            _CHECKED.clear()
        _CHECKED[key] = vals
    return vals


def stream_handle(stream, where):
    """The int handle of a stream argument (an int, or an object with
    .cuda_stream / .ptr)."""
    handle = getattr(stream, "cuda_stream", getattr(stream, "ptr", stream))
    if not _is_int(handle):
        raise TypeError(f"{where}: stream must be None, an int handle or an object with "
                        f".cuda_stream or .ptr, got {stream!r}")
    return int(handle)


def make_options(values, stream):
    """The native Options of option_values' numbers and a stream handle."""
    return _bsvd.Options(list(values), stream)


def options(kw, device, ad, name="float64", where="bsvd.svd"):
    """The bsvd_options_t of a call, every option of kw checked; the stream
    from kw["stream"] (None: the caller's current one for device arrays)."""
    values = option_values(kw, device, name, where)
    stream = kw.get("stream")
    if stream is None:
        cuda = values[BACKEND_ROW] == _bsvd.BACKEND_CUDA and device[0] == "cuda"
        stream = ad.stream(device) if cuda else 0
    else:
        stream = stream_handle(stream, where)
    return make_options(values, stream)


def device_option(devices, where):
    """The devices option as (device_count, list) of bsvd_options_t: None
    (the current GPU) -> (0, []), "all" -> (-1, []), an int or a sequence
    of distinct non-negative ints -> (len, list). Whether the GPUs exist is
    the library's check (at the call)."""
    if devices is None:
        return 0, []
    if isinstance(devices, str):
        if devices == "all":
            return -1, []
        raise ValueError(f"{where}: devices must be None, 'all', a device ordinal or a list of "
                         f"them, got {devices!r}")
    seq = [devices] if _is_int(devices) else devices
    try:
        vals = list(seq)
    except TypeError:
        raise TypeError(f"{where}: devices must be None, 'all', a device ordinal or a list of "
                        f"them, got {devices!r}") from None
    if not vals:
        raise ValueError(f"{where}: devices is an empty list (None: the current GPU)")
    for v in vals:
        if isinstance(v, (bool, np.bool_)) or not _is_int(v):
            raise TypeError(f"{where}: devices must hold ints (device ordinals), got {v!r}")
        if v < 0 or v > 2**31 - 1:
            raise ValueError(f"{where}: devices holds ordinals, non-negative ints, got {v!r}")
    vals = [int(v) for v in vals]
    if len(set(vals)) != len(vals):
        raise ValueError(f"{where}: devices lists a device twice: {vals}")
    return len(vals), vals


def set_devices(opts, devices):
    """Sets device_count / devices of native Options from device_option's pair."""
    opts.device_count, opts.devices = devices
    return opts


def check_mode(check, check_finite, where):
    """The check option: None (the default: report for host data, not for
    stream-ordered device calls), True or False. check_finite=True needs the
    check, so it cannot go with check=False."""
    if check is not None:
        check = check_flag(check, "check", where)
    if check_finite and check is False:
        raise ValueError(f"{where}: check_finite=True reads the per-matrix info, which "
                         "check=False skips: pass check=True or leave check out")
    return True if check_finite else check


def promote(ad, x, where):
    """(array, dtype name) in a dtype the library takes. Integer and bool
    input is promoted to the library's default float as the caller's array
    library does for linear algebra (NumPy, CuPy: float64; PyTorch: the
    default dtype; JAX: its default float); float16 / bfloat16 are computed
    in float32."""
    name = ad.dtype_name(x)
    if name in SUPPORTED:
        return x, name
    if name in UPCAST:
        return ad.astype(x, UPCAST[name]), UPCAST[name]
    if name in _INT_NAMES:
        target = ad.default_float()
        return ad.astype(x, target), target
    raise TypeError(f"{where}: unsupported dtype {name}; bsvd takes float32, float64, complex64 "
                    "and complex128 (integer and bool input is promoted to the default float, "
                    "float16 and bfloat16 are computed in float32)")


# ---------------------------------------------------------------------------
# layouts

def _matrix_layout(m, n, rs, cs):
    """Column-major description of an m x n matrix whose element (i, j) is at
    i*rs + j*cs: ("T", ld) when the memory holds A^T column-major (row-major
    A: cs == 1), ("N", ld) when it holds A column-major (rs == 1); None when
    neither (a copy is needed)."""
    if n <= 1 or cs == 1:
        ld = rs if m > 1 else max(n, 1)
        if ld >= max(1, n):
            return "T", ld
    if m <= 1 or rs == 1:
        ld = cs if n > 1 else max(m, 1)
        if ld >= max(1, m):
            return "N", ld
    return None


def _batch_stride(bshape, bstrides):
    """One stride that walks every batch dimension in C order, or None."""
    dims = [(s, st) for s, st in zip(bshape, bstrides) if s != 1]
    if not dims:
        return 0
    stride = dims[-1][1]
    expected = stride
    for s, st in reversed(dims):
        if st != expected or st < 0:
            return None
        expected = st * s
    return stride


def layout(ad, x, bshape, m, n, batch):
    """(trans, ld, batch stride) of a non-empty array the library can read
    in place, or None (the caller copies it). The stride of a length-1 axis
    means nothing (NumPy keeps whatever slicing left there, negative
    included) and is ignored."""
    st = ad.strides(x)
    if st is None:
        return None
    if 1 in ad.shape(x):
        st = [0 if d == 1 else s for d, s in zip(ad.shape(x), st)]
    if min(st) < 0:
        return None
    lay = _matrix_layout(m, n, st[-2], st[-1])
    if lay is None:
        return None
    trans, ld = lay
    N = m if trans == "T" else n
    size = ld * N
    if batch <= 1:
        return trans, ld, size
    bs = _batch_stride(bshape, st[:-2])
    if bs is None or bs < size:
        return None
    return trans, ld, bs


def stacklevel():
    """Stack level of the first frame outside bsvd and torch (the custom op's
    dispatch, torch.autograd), so that warnings point at the caller's
    line."""
    import os
    import sys
    pkg = os.path.dirname(os.path.abspath(__file__))
    skip = [pkg]
    torch = sys.modules.get("torch")
    if torch is not None and getattr(torch, "__file__", None):
        skip.append(os.path.dirname(os.path.abspath(torch.__file__)))
    skip = tuple(d + os.sep for d in skip)
    level = 1
    f = sys._getframe(1)
    while f is not None:
        fn = f.f_code.co_filename
        if not (fn.startswith(skip) or f"torch{os.sep}autograd" in fn):
            return level
        f = f.f_back
        level += 1
    return level
