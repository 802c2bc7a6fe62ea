"""The stream-ordered calls and the torch ops (docs/python-async.md).

bsvd.svd on CUDA tensors and CuPy arrays only enqueues the solve on the
current stream (no host synchronization; check=True waits and reports),
torch tensors go through the ops torch.ops.bsvd.svd / bsvd.svdvals
(torch.library: fake implementations, autograd, torch.compile), and a
torch.cuda.graph capture of a call replays to the bits of an eager call.

CPU tests run where torch is installed (the ops' CPU kernels, opcheck, fake
tensors, torch.compile(fullgraph=True) forward and backward) and, without
torch, for NumPy (the check option; the stream-ordered Python path
simulated on host arrays). GPU tests skip without a GPU (and CuPy's without
CuPy)."""
import os
import time
import warnings

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import bsvd  # noqa: E402
from bsvd import _bsvd  # noqa: E402
from helpers import assert_ratios, random_matrix, unit_roundoff  # noqa: E402

needs_gpu = pytest.mark.skipif(not bsvd.cuda_available(),
                               reason="bsvd without the CUDA backend, or no GPU")

DTYPES = {"s": "float32", "d": "float64", "c": "complex64", "z": "complex128"}
# One shape per GPU path: the register tier, the one-kernel solver, the
# blocked path, the QR path of tall matrices.
CASES = {"tiny": (200, 3, 3), "fused": (100, 32, 32), "blocked": (16, 128, 128),
         "tall-qr": (8, 2000, 16)}
SAME_LAUNCHES = {"cuda-tiny", "cuda-fused", "cuda-qr", "trivial"}


def _torch():
    return pytest.importorskip("torch")


def _ops(torch):
    import bsvd.torch as bt
    if not bt._HAVE_OPS:
        pytest.skip("torch without torch.library.custom_op (torch < 2.4)")
    return bt


def _torch_cuda():
    torch = _torch()
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    return torch


def _cupy():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("cupy sees no GPU")
    except Exception:  # noqa: BLE001
        pytest.skip("cupy sees no GPU")
    return cupy


def _np(t):
    """A C-contiguous NumPy copy of an array of any library."""
    if hasattr(t, "detach"):
        t = t.detach().cpu().resolve_conj().numpy()
    elif hasattr(t, "get"):
        t = t.get()
    return np.ascontiguousarray(t)


def _same_bits(a, b, what=""):
    x, y = _np(a), _np(b)
    assert x.shape == y.shape and x.dtype == y.dtype, what
    assert x.tobytes() == y.tobytes(), f"{what}: not the same bits"


def _close_values(S, S_ref, dtype):
    """Singular values within 32 k u of s_1 (the blocked path's sweep loop
    on the device may take one sweep more or less than the blocking call's,
    tests/gpu/test_gpu_async.cu)."""
    x, y = _np(S).astype(np.float64), _np(S_ref).astype(np.float64)
    k = max(x.shape[-1], 1)
    s1 = np.maximum(y[..., :1], 1e-300)
    assert np.all(np.abs(x - y) / s1 <= 32 * k * unit_roundoff(dtype))


def _matrices(shape, precision, seed):
    return random_matrix(np.random.default_rng(seed), shape, DTYPES[precision])


# ---- the check option (any array; no torch needed) -----------------------------

def test_check_option_host():
    A = _matrices((4, 6, 6), "d", 0)
    A[1, 0, 0] = np.nan
    with pytest.warns(bsvd.NonFiniteWarning, match="1 of 4"):
        bsvd.svd(A)  # host data: reported by default, as before
    with pytest.warns(bsvd.NonFiniteWarning, match="1 of 4"):
        bsvd.svd(A, check=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        S, info = bsvd.svdvals(A, check=False, return_info=True)
        bsvd.svd_batch(list(A), check=False)
    assert list(info.info) == [0, -1, 0, 0] and np.isnan(S[1]).all()
    with pytest.warns(bsvd.NonFiniteWarning):
        bsvd.svd_batch(list(A))
    with pytest.raises(bsvd.NonFiniteError, match="1 of 4"):
        bsvd.svd(A, check_finite=True)
    with pytest.raises(bsvd.NonFiniteError):
        bsvd.svd(A, check_finite=True, check=True)
    with pytest.raises(ValueError, match="check=False"):
        bsvd.svd(A, check_finite=True, check=False)
    with pytest.raises(TypeError, match="check"):
        bsvd.svdvals(A, check="yes")
    with pytest.raises(ValueError, match="check=False"):
        bsvd.svd_batch(list(A), check_finite=True, check=False)


# ---- the stream-ordered Python path, simulated on host arrays -------------------

@pytest.fixture
def simulated(monkeypatch):
    """The stream-ordered path of the Python layer on host arrays: calls
    without an explicit stream take it (bsvd._stream_ordered and bsvd.torch.
    _ordered patched), and the native svd_strided_async is replaced by the
    blocking library call with the same arguments (gesvj_strided, which
    takes the caller's info, sweeps and path). The allocation of info,
    sweeps, path and workspace, the workspace query, info_counts (check=True)
    and the Info are the package's own. Returns the recorded calls."""
    calls = []

    def fake_async(A, m, n, lda, sA, S, sS, U, ldu, sU, V, ldv, sV, info, sweeps, path,
                   workspace, batch, opts):
        calls.append(dict(workspace=workspace, sweeps=sweeps, path=path, batch=batch))
        return _bsvd.gesvj_strided(A, m, n, lda, sA, S, sS, U, ldu, sU, V, ldv, sV, info, sweeps,
                                   path, batch, opts)

    monkeypatch.setattr(_bsvd, "svd_strided_async", fake_async)
    monkeypatch.setattr(bsvd, "_stream_ordered", lambda ad, device, opts, stream: stream is None)
    try:
        import torch  # noqa: F401
        import bsvd.torch as bt
        monkeypatch.setattr(bt, "_ordered", lambda device, backend, stream: stream == bt.CURRENT_STREAM)
    except ImportError:
        pass
    return calls


@pytest.mark.parametrize("precision", list(DTYPES))
def test_simulated_stream_ordered_numpy(simulated, precision):
    A = _matrices((5, 9, 7), precision, 1)
    A[2, 3, 3] = np.inf
    ref = bsvd.svd(A, full_matrices=False, return_info=True, stream=0, warn=False)  # blocking
    assert not simulated
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not reported without check
        U, S, Vh, info = bsvd.svd(A, full_matrices=False, return_info=True)
    assert len(simulated) == 1 and simulated[0]["workspace"] is not None
    assert simulated[0]["sweeps"] is not None and simulated[0]["path"] is not None
    for got, want, what in ((U, ref.U, "U"), (S, ref.S, "S"), (Vh, ref.Vh, "Vh")):
        _same_bits(got, want, what)
    assert info.info.shape == (5,) and list(info.info) == [0, 0, -1, 0, 0]
    assert (info.sweeps == ref.info.sweeps).all() and (info.path == ref.info.path).all()
    with pytest.warns(bsvd.NonFiniteWarning, match="1 of 5"):
        bsvd.svd(A, check=True)
    with pytest.raises(bsvd.NonFiniteError, match="1 of 5"):
        bsvd.svdvals(A, check_finite=True)
    with pytest.warns(bsvd.ConvergenceWarning):
        bsvd.svdvals(A[[0, 1, 3, 4]], max_sweeps=1, check=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        S1, info1 = bsvd.svdvals(A[[0, 1, 3, 4]], max_sweeps=1, return_info=True)
        bsvd.svd(A[:, :0, :])  # nothing to solve
    assert (info1.info > 0).any()
    S0, info0 = bsvd.svdvals(np.zeros((3, 0, 4), A.dtype), return_info=True)
    assert S0.shape == (3, 0) and info0.info.shape == (3,) and (info0.info == 0).all()


def test_simulated_refused_plan_falls_back(simulated, monkeypatch):
    """A plan the _async form refuses (BSVD_STATUS_NOT_SUPPORTED: some
    matrices solved on the host) falls back to the blocking call outside a
    capture, into the same outputs and info."""
    def refuse(*args):
        simulated.append("refused")
        return _bsvd.STATUS_NOT_SUPPORTED, "the plan solves matrices on the host"

    monkeypatch.setattr(_bsvd, "svd_strided_async", refuse)
    arrays = [_matrices((3, 7, 7), "z", 3)]
    try:
        import torch
        arrays.append(torch.from_numpy(_matrices((2, 6, 9), "s", 4)))  # DLPack capsules
    except ImportError:
        pass
    for A in arrays:
        simulated.clear()
        ref = bsvd.svd(A, return_info=True, stream=0)
        U, S, Vh, info = bsvd.svd(A, return_info=True)
        assert simulated == ["refused"]
        for got, want, what in ((U, ref.U, "U"), (S, ref.S, "S"), (Vh, ref.Vh, "Vh"),
                                (info.info, ref.info.info, "info"),
                                (info.path, ref.info.path, "path")):
            _same_bits(got, want, what)


@pytest.mark.parametrize("precision", list(DTYPES))
def test_simulated_stream_ordered_torch(simulated, precision):
    torch = _torch()
    _ops(torch)
    A = torch.from_numpy(_matrices((2, 3, 8, 6), precision, 2))
    A[1, 2, 0, 0] = float("nan")
    ref = bsvd.svd(A, return_info=True, stream=0, warn=False)  # blocking
    ref_S = bsvd.svdvals(A, stream=0, warn=False)
    assert not simulated
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        U, S, Vh, info = bsvd.svd(A, return_info=True)
        S2 = bsvd.svdvals(A)
    assert len(simulated) == 2
    for got, want, what in ((U, ref.U, "U"), (S, ref.S, "S"), (Vh, ref.Vh, "Vh"), (S2, ref_S, "S2")):
        _same_bits(got, want, what)
    assert info.info.shape == (2, 3) and info.info.tolist() == [[0, 0, 0], [0, 0, -1]]
    assert (info.sweeps == ref.info.sweeps).all() and (info.path == ref.info.path).all()
    with pytest.warns(bsvd.NonFiniteWarning, match="1 of 6") as rec:
        bsvd.svd(A, check=True)
    assert all(r.filename == __file__ for r in rec)
    with pytest.raises(bsvd.NonFiniteError):
        bsvd.svdvals(A, check_finite=True)


# ---- the torch ops on the CPU ---------------------------------------------------------

SHAPES_CPU = [(4, 3, 3), (2, 6, 4), (2, 4, 6), (5, 1), (0, 3, 3), (2, 3, 0)]


@pytest.mark.parametrize("precision", list(DTYPES))
def test_opcheck_cpu(precision):
    torch = _torch()
    bt = _ops(torch)
    dt = getattr(torch, DTYPES[precision])
    g = torch.Generator().manual_seed(0)
    for shape in SHAPES_CPU:
        A = torch.randn(shape, dtype=dt, generator=g)
        for compute_uv in (True, False):
            for return_info in (False, True):
                op, args = bt._op_args(A, compute_uv=compute_uv, return_info=return_info)
                torch.library.opcheck(op, args)  # raises on any failed check
        if A.numel():
            op, args = bt._op_args(A.clone().requires_grad_())
            torch.library.opcheck(op, args)


def test_op_errors():
    torch = _torch()
    bt = _ops(torch)
    op, args = bt._op_args(torch.randn(3, 4))
    with pytest.raises(TypeError, match="float32"):
        op(torch.ones(3, 3, dtype=torch.int64), *args[1:])
    with pytest.raises(ValueError, match="2 dimensions"):
        op(torch.ones(3), *args[1:])


@pytest.mark.parametrize("precision", list(DTYPES))
def test_fake_tensors(precision):
    """Under FakeTensorMode bsvd.svd runs the ops' fake implementations: the
    outputs have the shapes, dtypes, devices and strides of a real call."""
    torch = _torch()
    _ops(torch)
    from torch._subclasses.fake_tensor import FakeTensorMode
    dt = getattr(torch, DTYPES[precision])
    for shape in [(3, 7, 5), (2, 2, 4, 6), (6, 6), (0, 4, 3)]:
        A = torch.randn(shape, dtype=dt)
        real = (bsvd.svd(A), bsvd.svd(A, full_matrices=False), (bsvd.svdvals(A),),
                bsvd.svd(A, full_matrices=False, return_info=True)[3])
        with FakeTensorMode(allow_non_fake_inputs=False) as mode:
            F = mode.from_tensor(A)
            fake = (bsvd.svd(F), bsvd.svd(F, full_matrices=False), (bsvd.svdvals(F),),
                    bsvd.svd(F, full_matrices=False, return_info=True)[3])
        for r, f in zip(real[:3], fake[:3]):
            for x, y in zip(r, f):
                assert isinstance(y, torch._subclasses.FakeTensor)
                assert (x.shape, x.dtype, x.device) == (y.shape, y.dtype, y.device)
        for x, y in zip(real[1], fake[1]):  # the op's own outputs: strides too
            assert x.stride() == y.stride()
        info_real, info_fake = real[3], fake[3]
        for name in ("info", "sweeps", "path"):
            x, y = getattr(info_real, name), getattr(info_fake, name)
            assert tuple(x.shape) == tuple(y.shape) and y.dtype == torch.int32, name
    # the op on the meta device
    bt = _ops(torch)
    op, args = bt._op_args(torch.randn(3, 5, 4, dtype=dt), return_info=True)
    U, S, Vh, info, sweeps, path = op(torch.empty(3, 5, 4, dtype=dt, device="meta"), *args[1:])
    assert U.shape == (3, 5, 4) and S.shape == (3, 4) and Vh.shape == (3, 4, 4)
    assert info.shape == sweeps.shape == path.shape == (3,) and path.device.type == "cpu"


def _recording_backend(seen):
    def backend(gm, example_inputs):
        seen.extend(str(n.target) for n in gm.graph.nodes if n.op == "call_function")
        return gm.forward
    return backend


@pytest.mark.parametrize("precision", list(DTYPES))
def test_compile_fullgraph_cpu(precision):
    """torch.compile(fullgraph=True) traces bsvd.svd, bsvd.svdvals and
    bsvd.torch.svd without a graph break, through the ops, to the bits of
    the eager calls (return_info included)."""
    torch = _torch()
    bt = _ops(torch)
    dt = getattr(torch, DTYPES[precision])
    A = torch.randn(4, 6, 5, dtype=dt, generator=torch.Generator().manual_seed(1))

    def f(X):
        U, S, Vh = bsvd.svd(X)  # full_matrices: the QR completion is traced too
        r = bsvd.svd(X, full_matrices=False)
        t = bt.svd(X.mT, full_matrices=False)
        U2, S2, Vh2, info = bsvd.svd(X, full_matrices=False, return_info=True)
        return U, S, Vh, r.U, r.Vh, bsvd.svdvals(X), t.S, info.info, info.sweeps, info.path

    seen = []
    torch._dynamo.reset()
    got = torch.compile(f, fullgraph=True, backend=_recording_backend(seen))(A)
    want = f(A)
    assert "bsvd.svd.default" in seen and "bsvd.svdvals.default" in seen
    for i, (g, w) in enumerate(zip(got, want)):
        _same_bits(g, w, f"output {i}")
    assert got[7].tolist() == [0, 0, 0, 0] and isinstance(got[9], torch.Tensor)
    torch._dynamo.reset()
    got = torch.compile(f, fullgraph=True, backend="aot_eager")(A)
    for i, (g, w) in enumerate(zip(got, want)):
        _same_bits(g, w, f"aot_eager output {i}")


def test_compile_inductor_cpu():
    torch = _torch()
    _ops(torch)
    A = torch.randn(3, 7, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(2))

    def f(X):
        U, S, Vh = bsvd.svd(X)
        return U, S, Vh, (U[..., :4] * S.unsqueeze(-2)) @ Vh, bsvd.svdvals(X)

    torch._dynamo.reset()
    U, S, Vh, R, S2 = torch.compile(f, fullgraph=True)(A)
    U0, S0, Vh0, R0, _ = f(A)
    _same_bits(S, S0)
    _same_bits(S2, S0)
    _same_bits(U[..., :4], U0[..., :4])
    _same_bits(Vh, Vh0)
    assert torch.allclose(R, A, atol=1e-13)
    assert torch.allclose(U.mT @ U, torch.eye(7, dtype=A.dtype), atol=1e-13)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_compile_backward_cpu(backend, dtype):
    torch = _torch()
    _ops(torch)
    if backend == "inductor" and dtype == "complex128":
        pytest.skip("inductor: the real case is enough")
    dt = getattr(torch, dtype)
    A = torch.randn(3, 6, 4, dtype=dt, generator=torch.Generator().manual_seed(3))

    def loss(X, svd, svdvals):
        U, S, Vh = svd(X)
        return ((U[..., :4].abs() ** 3).sum() + S.sum() + (Vh.abs() ** 3).sum()
                + svdvals(X).pow(2).sum())

    def ours(X):
        return loss(X, bsvd.svd, bsvd.svdvals)

    torch._dynamo.reset()
    X1 = A.clone().requires_grad_()
    g1, = torch.autograd.grad(torch.compile(ours, fullgraph=True, backend=backend)(X1), X1)
    X2 = A.clone().requires_grad_()
    g2, = torch.autograd.grad(ours(X2), X2)
    X3 = A.clone().requires_grad_()
    g3, = torch.autograd.grad(loss(X3, torch.linalg.svd, torch.linalg.svdvals), X3)
    assert torch.allclose(g1, g2, atol=1e-12, rtol=1e-10)
    assert torch.allclose(g1, g3, atol=1e-9, rtol=1e-7)


def test_compile_reports_cpu():
    """CPU tensors are reported as before inside compiled code: the op warns
    (or raises for check_finite) when it runs."""
    torch = _torch()
    _ops(torch)
    A = torch.randn(3, 5, 5, dtype=torch.float64)
    A[1, 2, 2] = float("nan")
    torch._dynamo.reset()
    with pytest.warns(bsvd.NonFiniteWarning, match="1 of 3"):
        S = torch.compile(lambda X: bsvd.svdvals(X), fullgraph=True, backend="aot_eager")(A)
    assert torch.isnan(S[1]).all() and torch.isfinite(S[[0, 2]]).all()
    with pytest.raises(bsvd.NonFiniteError, match="1 of 3"):
        torch.compile(lambda X: bsvd.svd(X, check_finite=True), fullgraph=True,
                      backend="aot_eager")(A)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.compile(lambda X: bsvd.svdvals(X, check=False), fullgraph=True,
                      backend="aot_eager")(A)


def test_plain_eager_calls_skip_the_op(monkeypatch):
    """Plain eager calls run the op's implementation directly (the dispatch
    is a third of the host time); autograd and dispatch modes take the op,
    with the same results."""
    torch = _torch()
    import bsvd.torch as bt
    from torch.utils._python_dispatch import TorchDispatchMode

    calls = []
    op = bt._svd_op
    monkeypatch.setattr(bt, "_svd_op", lambda *a: calls.append(1) or op(*a))
    A = torch.randn(3, 5, 4, dtype=torch.float64)
    direct = bsvd.svd(A, full_matrices=False)
    assert calls == []
    bsvd.svd(A.clone().requires_grad_(), full_matrices=False)
    assert calls == [1]

    seen = []

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    with Log():
        logged = bsvd.svd(A, full_matrices=False)
    assert calls == [1, 1] and any("bsvd.svd" in f for f in seen)
    for x, y in zip(direct, logged):
        assert torch.equal(x, y)


def test_autograd_function_fallback(monkeypatch):
    """torch < 2.4 (no torch.library.custom_op): the same kernel under a
    torch.autograd.Function, with the same backward."""
    torch = _torch()
    import bsvd.torch as bt
    monkeypatch.setattr(bt, "_svd_op", bt._SVDFunction.apply)
    monkeypatch.setattr(bt, "_svdvals_op", bt._svdvals_kernel)
    A = torch.randn(2, 5, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda X: (lambda U, S, Vh: (U.abs() ** 3).sum() + S.sum())(*bsvd.svd(X, full_matrices=False)),
        (A,), eps=1e-6, atol=1e-5, rtol=1e-4)
    S, info = bsvd.svdvals(A.detach(), return_info=True)
    assert S.shape == (2, 4) and isinstance(info.info, np.ndarray)


# ---- GPU: PyTorch -------------------------------------------------------------------

def _cuda_tensor(torch, shape, precision, seed):
    A_np = _matrices(shape, precision, seed)
    return A_np, torch.from_numpy(A_np).cuda()


@needs_gpu
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("precision", list(DTYPES))
def test_cuda_matches_blocking(precision, case):
    """The stream-ordered call gives what the blocking call (an explicit
    stream) gives: the same bits where the path runs the same launches, the
    same info, values within 32 k u on the blocked path; T1-T4 pass; info
    and sweeps stay on the device, path is the plan."""
    torch = _torch_cuda()
    A_np, A = _cuda_tensor(torch, CASES[case], precision, 10)
    U, S, Vh, info = bsvd.svd(A, full_matrices=False, return_info=True)
    for t in (info.info, info.sweeps):
        assert isinstance(t, torch.Tensor) and t.device == A.device and t.dtype == torch.int32
        assert t.shape == (CASES[case][0],)
    assert isinstance(info.path, np.ndarray) and info.path.shape == (CASES[case][0],)
    blk = bsvd.svd(A, full_matrices=False, return_info=True, stream=torch.cuda.current_stream())
    torch.cuda.synchronize()
    assert torch.equal(info.info, blk.info.info) and (info.info == 0).all()
    assert (info.path == _np(blk.info.path)).all()
    paths = set(info.path_names.ravel())
    if paths <= SAME_LAUNCHES:
        for got, want, what in ((U, blk.U, "U"), (S, blk.S, "S"), (Vh, blk.Vh, "Vh")):
            _same_bits(got, want, f"{case} {what} ({paths})")
        assert torch.equal(info.sweeps, blk.info.sweeps)
    else:
        _close_values(S, blk.S, DTYPES[precision])
        assert (info.sweeps - blk.info.sweeps).abs().max().item() <= 1
    assert_ratios(A_np, _np(U), _np(S), _np(Vh))
    S2 = bsvd.svdvals(A)
    torch.cuda.synchronize()
    assert_ratios(A_np, _np(U), _np(S2), _np(Vh))


@needs_gpu
def test_cuda_returns_before_the_gpu():
    """d 1000 x 128 x 128 enqueued behind a long torch.cuda._sleep: the call
    returns while the stream is still busy, in well under the solve's GPU
    time, and the result is the eager one."""
    torch = _torch_cuda()
    A_np, A = _cuda_tensor(torch, (1000, 128, 128), "d", 11)
    U0, S0, Vh0 = bsvd.svd(A, full_matrices=False)  # warm-up (and the reference)
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    bsvd.svd(A, full_matrices=False)
    e1.record()
    torch.cuda.synchronize()
    gpu_ms = e0.elapsed_time(e1)
    torch.cuda._sleep(2_000_000_000)  # about 1 s of GPU time queued first
    t0 = time.perf_counter()
    U, S, Vh = bsvd.svd(A, full_matrices=False)
    host_ms = (time.perf_counter() - t0) * 1e3
    busy = not torch.cuda.current_stream().query()
    torch.cuda.synchronize()
    assert busy, "bsvd.svd waited for the GPU"
    assert host_ms < min(50.0, 0.25 * gpu_ms), f"host {host_ms:.2f} ms, GPU {gpu_ms:.2f} ms"
    for got, want in ((U, U0), (S, S0), (Vh, Vh0)):
        _same_bits(got, want)
    blk = bsvd.svd(A, full_matrices=False, stream=torch.cuda.current_stream())
    _close_values(S, blk.S, "float64")
    for b in (0, 999):
        assert_ratios(A_np[b], _np(U[b]), _np(S[b]), _np(Vh[b]))


@needs_gpu
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("precision", list(DTYPES))
def test_cuda_graph_capture_replay(precision, case):
    """bsvd.svd captured by torch.cuda.graph: replays with new data copied
    into the same input give the bits of the eager call on that data (U,
    S, Vh and the info tensor)."""
    torch = _torch_cuda()
    shape = CASES[case]
    square = shape[-1] == shape[-2]  # full_matrices needs no completion: capture the default
    kw = {} if square else {"full_matrices": False}
    _, A = _cuda_tensor(torch, shape, precision, 20)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside the capture, as torch asks
        for _ in range(2):
            bsvd.svd(A, return_info=True, **kw)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        U, S, Vh, info = bsvd.svd(A, return_info=True, **kw)
    for seed in (21, 22):
        B_np, B = _cuda_tensor(torch, shape, precision, seed)
        A.copy_(B)
        g.replay()
        eager = bsvd.svd(B, return_info=True, **kw)
        torch.cuda.synchronize()
        for got, want, what in ((U, eager.U, "U"), (S, eager.S, "S"), (Vh, eager.Vh, "Vh"),
                                (info.info, eager.info.info, "info"),
                                (info.sweeps, eager.info.sweeps, "sweeps")):
            _same_bits(got, want, f"{case} seed {seed}: {what}")
        assert (info.info == 0).all()
        k = min(shape[-2:])
        assert_ratios(B_np, _np(U[..., :k]), _np(S), _np(Vh[..., :k, :]))


@needs_gpu
def test_cuda_check_under_capture_refused():
    torch = _torch_cuda()
    _, A = _cuda_tensor(torch, (10, 8, 8), "d", 30)
    bsvd.svd(A)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with pytest.raises(NotImplementedError, match="captured"):
        with torch.cuda.graph(g):
            bsvd.svd(A, check=True)
    torch.cuda.synchronize()
    bsvd.svd(A, check=True)  # outside a capture: fine


@needs_gpu
def test_cuda_host_plan_falls_back_outside_capture():
    """A plan that solves matrices on the host (odd-even ordering beyond the
    one-kernel solver), which the _async form refuses: the blocking call
    eagerly, NotImplementedError inside a capture."""
    torch = _torch_cuda()
    A_np, A = _cuda_tensor(torch, (2, 160, 150), "d", 70)
    U, S, Vh, info = bsvd.svd(A, full_matrices=False, return_info=True, ordering="odd-even")
    torch.cuda.synchronize()
    assert (info.info == 0).all()
    assert_ratios(A_np, _np(U), _np(S), _np(Vh))
    names = set(info.path_names.ravel())
    if not any(p.startswith("cpu") for p in names):
        pytest.skip(f"odd-even 160 x 150 stays on the GPU here ({names})")
    g = torch.cuda.CUDAGraph()
    with pytest.raises(NotImplementedError, match="host"):
        with torch.cuda.graph(g):
            bsvd.svd(A, full_matrices=False, ordering="odd-even")
    torch.cuda.synchronize()


@needs_gpu
@pytest.mark.parametrize("precision", list(DTYPES))
def test_cuda_nan_info_and_check(precision):
    """No report (and no wait) by default; the info tensor says which
    matrices held NaN / Inf or did not converge; check=True and
    check_finite=True wait and warn / raise as for host data."""
    torch = _torch_cuda()
    _, A = _cuda_tensor(torch, (10, 8, 8), precision, 31)
    A[3, 1, 1] = float("nan")
    A[7, 0, 0] = float("inf")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        U, S, Vh, info = bsvd.svd(A, full_matrices=False, return_info=True)
        S2, info2 = bsvd.svdvals(A, return_info=True)
    torch.cuda.synchronize()
    want = [0] * 10
    want[3] = want[7] = -1
    assert info.info.tolist() == want and info2.info.tolist() == want
    assert info.nonfinite.tolist() == [w == -1 for w in want]
    assert torch.isnan(S[[3, 7]]).all() and torch.isnan(U[3]).all() and torch.isnan(Vh[7]).all()
    assert torch.isfinite(S[[0, 1, 2, 4, 5, 6, 8, 9]]).all()
    with pytest.warns(bsvd.NonFiniteWarning, match="2 of 10") as rec:
        bsvd.svd(A, check=True)
    assert all(r.filename == __file__ for r in rec)
    with pytest.raises(bsvd.NonFiniteError, match="2 of 10"):
        bsvd.svdvals(A, check_finite=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bsvd.svd(A, check=True, warn=False)
    _, B = _cuda_tensor(torch, (50, 32, 32), precision, 32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        S3, info3 = bsvd.svdvals(B, max_sweeps=1, return_info=True)
    torch.cuda.synchronize()
    nc = int((info3.info > 0).sum())
    assert nc > 0
    with pytest.warns(bsvd.ConvergenceWarning, match=f"{nc} of 50"):
        bsvd.svdvals(B, max_sweeps=1, check=True)


@needs_gpu
@pytest.mark.parametrize("precision", list(DTYPES))
def test_opcheck_cuda(precision):
    torch = _torch_cuda()
    bt = _ops(torch)
    for shape in [(64, 3, 3), (8, 32, 32), (2, 128, 128), (2, 2000, 16), (0, 3, 3), (2, 3, 0)]:
        _, A = _cuda_tensor(torch, shape, precision, 40)
        for compute_uv in (True, False):
            for return_info in (False, True):
                op, args = bt._op_args(A, compute_uv=compute_uv, return_info=return_info)
                torch.library.opcheck(op, args)
        if A.numel() and shape[-1] <= 32:
            op, args = bt._op_args(A.clone().requires_grad_())
            torch.library.opcheck(op, args)
        # without return_info every output is on the GPU (nothing keeps a
        # CUDA graph of torch.compile off the device)
        for compute_uv in (True, False):
            op, args = bt._op_args(A, compute_uv=compute_uv)
            assert all(t.device == A.device for t in op(*args))


@needs_gpu
@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("precision", list(DTYPES))
def test_compile_fullgraph_cuda(precision, backend):
    """torch.compile(fullgraph=True) on CUDA tensors, forward (the op's
    outputs to the bits of the eager call; the full U completed by QR in the
    graph) and backward (the gradient of the eager call, and torch's)."""
    torch = _torch_cuda()
    bt = _ops(torch)
    if backend == "inductor" and precision != "d":
        pytest.skip("inductor: one precision is enough")
    _, A = _cuda_tensor(torch, (64, 12, 8), precision, 50)

    def f(X):
        U, S, Vh = bsvd.svd(X)
        return U, S, Vh, bsvd.svdvals(X), bt.svd(X, full_matrices=False).U

    seen = []
    torch._dynamo.reset()
    torch.compile(f, fullgraph=True, backend=_recording_backend(seen))(A)
    assert "bsvd.svd.default" in seen and "bsvd.svdvals.default" in seen
    torch._dynamo.reset()
    be = backend
    got = torch.compile(f, fullgraph=True, backend=be)(A)
    want = f(A)
    torch.cuda.synchronize()
    _same_bits(got[0][..., :8], want[0][..., :8], "U[:, :k]")
    for i in (1, 2, 3, 4):
        _same_bits(got[i], want[i], f"output {i}")
    eye = torch.eye(12, dtype=A.dtype, device=A.device)
    tol = 100 * unit_roundoff(DTYPES[precision]) * 12
    assert (got[0].mH @ got[0] - eye).abs().max().item() < tol

    def loss(X, svd, svdvals):
        U, S, Vh = svd(X)
        return ((U[..., :8].abs() ** 3).sum() + S.sum() + (Vh.abs() ** 3).sum()
                + svdvals(X).pow(2).sum())

    torch._dynamo.reset()
    X1 = A.clone().requires_grad_()
    compiled = torch.compile(lambda X: loss(X, bsvd.svd, bsvd.svdvals), fullgraph=True, backend=be)
    g1, = torch.autograd.grad(compiled(X1), X1)
    X2 = A.clone().requires_grad_()
    g2, = torch.autograd.grad(loss(X2, bsvd.svd, bsvd.svdvals), X2)
    X3 = A.clone().requires_grad_()
    g3, = torch.autograd.grad(loss(X3, torch.linalg.svd, torch.linalg.svdvals), X3)
    single = precision in "sc"
    assert torch.allclose(g1, g2, atol=1e-4 if single else 1e-11, rtol=1e-4 if single else 1e-9)
    assert torch.allclose(g1, g3, atol=1e-2 if single else 1e-8, rtol=1e-2 if single else 1e-6)


# ---- GPU: CuPy ------------------------------------------------------------------------

@needs_gpu
@pytest.mark.parametrize("precision", list(DTYPES))
def test_cupy_stream_ordered(precision):
    """CuPy arrays: enqueued on CuPy's current stream without waiting (the
    stream is still busy when the call returns), info a CuPy array; the
    same result as the blocking call (an explicit stream); check=True
    waits and warns."""
    cupy = _cupy()
    A_np = _matrices((200, 32, 32), precision, 60)
    A_np[5, 0, 0] = np.nan
    A = cupy.asarray(A_np)
    bsvd.svd(A, full_matrices=False, warn=False)  # warm-up
    cupy.cuda.Device().synchronize()
    with cupy.cuda.Stream(non_blocking=True) as s:
        big = cupy.random.standard_normal((4096, 4096), dtype=cupy.float32)
        for _ in range(40):  # keeps s busy for a while
            big = cupy.tanh(big @ big)
        B = A + (0 * big[0, 0]).astype(A.dtype)  # ready only after the loop
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            U, S, Vh, info = bsvd.svd(B, full_matrices=False, return_info=True)
        busy = not s.done
        blk = bsvd.svd(B, full_matrices=False, return_info=True, stream=s, warn=False)
    s.synchronize()
    assert busy, "bsvd.svd waited for the GPU"
    assert isinstance(info.info, cupy.ndarray) and info.info.shape == (200,)
    assert isinstance(info.sweeps, cupy.ndarray) and isinstance(info.path, np.ndarray)
    want = np.zeros(200, np.int32)
    want[5] = -1
    assert (info.info.get() == want).all() and (blk.info.info == want).all()
    paths = set(info.path_names.ravel())
    ok = np.arange(200) != 5
    if paths <= SAME_LAUNCHES:
        for got, ref in ((U, blk.U), (S, blk.S), (Vh, blk.Vh)):
            _same_bits(got, ref)
    else:
        _close_values(_np(S)[ok], _np(blk.S)[ok], DTYPES[precision])
    assert_ratios(A_np[ok], _np(U)[ok], _np(S)[ok], _np(Vh)[ok])
    with pytest.warns(bsvd.NonFiniteWarning, match="1 of 200"):
        bsvd.svdvals(A, check=True)
    with pytest.raises(bsvd.NonFiniteError):
        bsvd.svd(A, check_finite=True)
