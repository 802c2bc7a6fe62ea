"""The GPU routes that call cuBLAS or cuSOLVER, from every framework's arrays.

Routes: the Gram preconditioning (precondition="gram": cuBLAS products and
cuSOLVER's batched eigensolver) and the blocked path's Gram stage by cuBLAS
(BSVD_GRAM=cublas, and by default for z from 512 rows). Each from CUDA
tensors of PyTorch, CuPy arrays, JAX arrays and NumPy arrays with
backend="cuda", with vectors and values only, and in a fresh process with
torch imported before and after bsvd: the handles are made on a call's first
use, and a first call on device arrays is captured into a graph, where a
handle could not be made (src/cuda/common/handles.hpp). Skipped without a
GPU.
"""
import os
import subprocess
import sys
import textwrap

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import bsvd  # noqa: E402
from helpers import assert_ratios, random_matrix  # noqa: E402

needs_gpu = pytest.mark.skipif(not bsvd.cuda_available(),
                               reason="bsvd without the CUDA backend, or no GPU")

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
# Blocked-path sizes in every precision (beyond the one-kernel solver's cap
# even for calls of few matrices): square and tall.
SHAPES = [(2, 192, 192), (2, 256, 200)]


def _host(t):
    if hasattr(t, "detach"):
        return t.detach().cpu().resolve_conj().numpy()
    if hasattr(t, "get"):
        return t.get()
    return np.asarray(t)


def _framework(name, A_np):
    """A_np as an array of the framework (skips where it sees no GPU), and
    the keyword arguments of the call."""
    if name == "numpy":
        return A_np, {"backend": "cuda"}
    if name == "torch":
        torch = pytest.importorskip("torch")
        if not torch.cuda.is_available():
            pytest.skip("torch sees no GPU")
        return torch.from_numpy(A_np).cuda(), {}
    if name == "cupy":
        cupy = pytest.importorskip("cupy")
        try:
            if cupy.cuda.runtime.getDeviceCount() < 1:
                pytest.skip("cupy sees no GPU")
        except Exception:  # noqa: BLE001
            pytest.skip("cupy sees no GPU")
        return cupy.asarray(A_np), {}
    jax = pytest.importorskip("jax")
    try:
        gpu = jax.devices("gpu")[0]
    except RuntimeError:
        pytest.skip("jax sees no GPU")
    if A_np.dtype in (np.float64, np.complex128) and not jax.config.read("jax_enable_x64"):
        pytest.skip("jax without x64 keeps no double arrays")
    return jax.device_put(A_np, gpu), {}


@needs_gpu
@pytest.mark.parametrize("framework", ["torch", "cupy", "jax", "numpy"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_gram_route(framework, dtype, shape):
    """precondition="gram" solves on the Gram route (path cuda-gram) and
    meets T1-T4, vectors and values only, from each framework's arrays."""
    A_np = random_matrix(np.random.default_rng(11), shape, dtype)
    A, kw = _framework(framework, A_np)
    U, S, Vh, info = bsvd.svd(A, full_matrices=False, precondition="gram", return_info=True,
                              check=True, **kw)
    assert set(np.unique(info.path_names)) == {"cuda-gram"}, info.path_names
    assert (_host(info.info) == 0).all()
    assert_ratios(A_np, _host(U), _host(S), _host(Vh))
    S_only = bsvd.svdvals(A, precondition="gram", check=True, **kw)
    S_ref = np.linalg.svd(A_np.astype(np.complex128 if np.iscomplexobj(A_np) else np.float64),
                          compute_uv=False)
    u = 2.0 ** -24 if A_np.dtype in (np.float32, np.complex64) else 2.0 ** -53
    k = min(shape[-2:])
    t3 = np.linalg.norm(_host(S_only) - S_ref, axis=-1) / (k * S_ref[..., 0] * u)
    assert t3.max() < 30, t3


@needs_gpu
@pytest.mark.parametrize("framework", ["torch", "cupy", "jax", "numpy"])
def test_gram_route_by_default_at_the_work_limit(framework):
    """By default (no precondition=), 200 matrices of 128^2 -- the work
    limit of decision 0022 -- take the Gram route (the test on their Gram
    matrices then picks the branch; the path is cuda-gram either way) and
    meet T1-T4; 199 do not (the plain routing). From each framework's
    arrays, NumPy's as host data in one chunk."""
    rng = np.random.default_rng(5)
    for count in (200, 199):
        A_np = random_matrix(rng, (count, 128, 128), np.float64)
        A, kw = _framework(framework, A_np)
        U, S, Vh, info = bsvd.svd(A, full_matrices=False, return_info=True, check=True, **kw)
        paths = set(np.unique(info.path_names))
        assert (paths == {"cuda-gram"}) == (count == 200), (count, paths)
        assert (_host(info.info) == 0).all()
        assert_ratios(A_np, _host(U), _host(S), _host(Vh))


@needs_gpu
@pytest.mark.parametrize("framework", ["torch", "cupy", "jax", "numpy"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bidiag_route_for_values_by_default(framework, dtype):
    """Values only of 100 matrices of 64^2: where the plan says the
    bidiagonal route (the sm_90 table: s and d at 64 columns, decision
    0024), the call takes it (path cuda-bidiag, sweeps 0) from every
    framework's arrays; precondition=False (relative accuracy asked for)
    keeps Jacobi. T3 against LAPACK's values either way."""
    planned = "cuda-bidiag" in bsvd.plan((100, 64, 64), dtype, compute_uv=False)
    sm90 = "sm_90" in bsvd.plan((1, 2, 2), dtype)
    assert planned == sm90
    A_np = random_matrix(np.random.default_rng(21), (100, 64, 64), dtype)
    A, kw = _framework(framework, A_np)
    S_ref = np.linalg.svd(A_np.astype(np.float64), compute_uv=False)
    u = 2.0 ** -24 if dtype == np.float32 else 2.0 ** -53
    for pre, taken in ((None, planned), (False, False)):
        S, info = bsvd.svdvals(A, return_info=True, precondition=pre, check=True, **kw)
        paths = set(np.unique(info.path_names))
        assert (paths == {"cuda-bidiag"}) == taken, (pre, paths)
        if taken:
            assert (_host(info.sweeps) == 0).all()
        t3 = np.linalg.norm(_host(S).astype(np.float64) - S_ref, axis=-1) / (64 * S_ref[..., 0] * u)
        assert t3.max() < 30, (pre, t3.max())


@needs_gpu
def test_gram_route_in_torch_graph_capture():
    """The Gram route's first call inside the caller's CUDA graph capture
    (no earlier call on this thread made the handles) is captured and
    replays."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    A_np = random_matrix(np.random.default_rng(12), (2, 130, 130), np.float64)
    A = torch.from_numpy(A_np).cuda()
    script = textwrap.dedent("""
        import sys, numpy as np, torch, bsvd
        A = torch.from_numpy(np.load(sys.argv[1])).cuda()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        g = torch.cuda.CUDAGraph()
        with torch.cuda.stream(s), torch.cuda.graph(g, stream=s):
            S = bsvd.svdvals(A, precondition="gram")
        g.replay()
        torch.cuda.synchronize()
        print(repr(S.cpu().numpy().tolist()))
    """)
    S = _run(script, A_np)
    S_ref = np.linalg.svd(A_np, compute_uv=False)
    assert np.abs(np.array(S) - S_ref).max() <= 1e-12 * S_ref.max()
    del A


def _run(script, A_np, env=None):
    """Runs script in a fresh interpreter with the path of A_np saved as
    .npy in argv[1]; returns the value its last line prints."""
    import ast
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "A.npy")
        np.save(path, A_np)
        e = dict(os.environ)
        e.update(env or {})
        r = subprocess.run([sys.executable, "-c", script, path], capture_output=True, text=True,
                           env=e, timeout=300)
    assert r.returncode == 0, f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    return ast.literal_eval(r.stdout.strip().splitlines()[-1])


_ORDER_SCRIPT = """
import sys
import numpy as np
{first}
{second}
A_np = np.load(sys.argv[1])
A = torch.from_numpy(A_np).cuda()
U, S, Vh = bsvd.svd(A, full_matrices=False, precondition="gram", check=True)
S2 = bsvd.svdvals(A, precondition="gram", check=True)
R = (U * S[..., None, :]) @ Vh - A
print(repr([float(R.abs().max()), float((S - S2).abs().max()), float(S.max())]))
"""


@needs_gpu
@pytest.mark.parametrize("torch_first", [True, False])
def test_gram_route_torch_import_order(torch_first):
    """A fresh process, torch imported before or after bsvd, whose first
    call is the Gram route on a CUDA tensor."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    imports = ["import torch", "import bsvd"]
    if not torch_first:
        imports.reverse()
    A_np = random_matrix(np.random.default_rng(13), (4, 256, 256), np.float64)
    resid, dS, smax = _run(_ORDER_SCRIPT.format(first=imports[0], second=imports[1]), A_np)
    assert resid < 1e-11 * smax and dS <= 1e-13 * smax


_CUBLAS_GRAM_SCRIPT = """
import sys
import numpy as np
sys.path.insert(0, {tests!r})
import bsvd
from helpers import ratios
A_np = np.load(sys.argv[1])
plan = bsvd.plan(A_np.shape, dtype=A_np.dtype, backend="cuda")
assert "Gram by cuBLAS" in plan, plan
out = []
for name in ("torch", "cupy", "numpy"):
    if name == "torch":
        import torch
        A = torch.from_numpy(A_np).cuda()
    elif name == "cupy":
        import cupy
        A = cupy.asarray(A_np)
    else:
        A = A_np
    kw = {{"backend": "cuda"}} if name == "numpy" else {{}}
    U, S, Vh = bsvd.svd(A, full_matrices=False, check=True, **kw)
    host = lambda t: t.detach().cpu().numpy() if hasattr(t, "detach") else (
        t.get() if hasattr(t, "get") else np.asarray(t))
    out.append(ratios(A_np, host(U), host(S), host(Vh)))
print(repr(out))
"""


@needs_gpu
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_blocked_gram_by_cublas(dtype):
    """The blocked path's Gram stage by cuBLAS (BSVD_GRAM=cublas, read once
    per process), in a fresh process whose first call is on a CUDA tensor,
    then CuPy and NumPy arrays."""
    pytest.importorskip("torch")
    pytest.importorskip("cupy")
    A_np = random_matrix(np.random.default_rng(14), (2, 256, 192), dtype)
    tests = os.path.dirname(os.path.abspath(__file__))
    for r in _run(_CUBLAS_GRAM_SCRIPT.format(tests=tests), A_np, env={"BSVD_GRAM": "cublas"}):
        assert r["t4"], r
        assert max(r["t1"], r["t2u"], r["t2v"], r["t3"]) < 30, r
