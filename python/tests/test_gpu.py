"""bsvd on CUDA arrays of PyTorch, CuPy and JAX (skipped without a GPU or
without a bsvd built with the CUDA backend)."""
import os

# JAX would otherwise take 75 % of the GPU memory at its first use.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import bsvd  # noqa: E402
from helpers import assert_ratios, random_matrix  # noqa: E402

needs_gpu = pytest.mark.skipif(not bsvd.cuda_available(),
                               reason="bsvd without the CUDA backend, or no GPU")


def _torch():
    torch = pytest.importorskip("torch")
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
    if hasattr(t, "detach"):
        return t.detach().cpu().resolve_conj().numpy()
    if hasattr(t, "get"):
        return t.get()
    return np.asarray(t)


NP_DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
SHAPES = [(100, 8, 8), (7, 32, 32), (3, 2, 20, 12), (3, 12, 20), (5, 1), (4, 64, 40)]


# ---- PyTorch ---------------------------------------------------------------

@needs_gpu
@pytest.mark.parametrize("dtype", NP_DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_torch_cuda(dtype, shape):
    torch = _torch()
    A_np = random_matrix(np.random.default_rng(0), shape, dtype)
    A = torch.from_numpy(A_np).cuda()
    U, S, Vh, info = bsvd.svd(A, full_matrices=False, return_info=True)
    for t in (U, S, Vh):
        assert isinstance(t, torch.Tensor) and t.is_cuda and t.device == A.device
    assert U.dtype == A.dtype and S.dtype == A.real.dtype
    assert info.converged.all()
    assert set(np.unique(info.path_names)) <= {"cuda-fused", "cuda-blocked", "cuda-qr",
                                              "cuda-pair-evd", "cuda-pair-svd", "cuda-qrcp",
                                              "cuda-tiny", "cpu-unblocked", "cpu-blocked"}
    assert_ratios(A_np, _np(U), _np(S), _np(Vh))


@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 3, 7, 4), (0, 3), (2, 0, 4), (1, 1)])
def test_torch_linalg_svd_contract_cuda(dtype, shape):
    """bsvd.svd on CUDA tensors keeps torch.linalg.svd's contract: the same
    result type (torch.return_types.linalg_svd), shapes, dtypes, device and
    default (full_matrices=True); A = U[..., :k] diag(S) Vh[..., :k, :] with
    unitary U and Vh; svdvals as torch.linalg.svdvals; integer tensors
    promoted to torch's default dtype."""
    torch = _torch()
    dt = getattr(torch, dtype)
    A = torch.randn(shape, dtype=dt, device="cuda")
    m, n = shape[-2:]
    k = min(m, n)
    for full in (True, False, None):
        kw = {} if full is None else {"full_matrices": full}
        ours, ref = bsvd.svd(A, **kw), torch.linalg.svd(A, **kw)
        assert type(ours) is type(ref)
        for a, b in zip(ours, ref):
            assert a.shape == b.shape and a.dtype == b.dtype and a.device == b.device
        U, S, Vh = ours
        if A.numel():
            assert_ratios(_np(A), _np(U[..., :k]), _np(S), _np(Vh[..., :k, :]))
        tol = 50 * max(m, n, 1) * torch.finfo(S.dtype).eps
        # Orthonormal columns of U and rows of Vh (Vh is k x n when reduced).
        for Q in (U, Vh.mH):
            eye = torch.eye(Q.shape[-1], dtype=Q.dtype, device=Q.device)
            err = (Q.mH @ Q - eye).abs().max().item() if Q.numel() else 0.0
            assert err < tol
    S = bsvd.svdvals(A)
    Sr = torch.linalg.svdvals(A)
    assert S.shape == Sr.shape and S.dtype == Sr.dtype and S.device == Sr.device
    if S.numel():
        assert (S - Sr).abs().max().item() <= 50 * k * torch.finfo(S.dtype).eps * Sr.max().item()
    I = torch.arange(12, device="cuda").reshape(3, 4)
    assert bsvd.svdvals(I).dtype == torch.get_default_dtype()


@needs_gpu
def test_torch_cuda_views_and_values_only():
    torch = _torch()
    A = torch.randn(6, 20, 16, dtype=torch.complex128, device="cuda")
    for X in (A.mT, A[:, ::2, :], A.conj(), A.transpose(0, 1)[..., :5]):
        U, S, Vh = bsvd.svd(X, full_matrices=False)
        assert_ratios(_np(X), _np(U), _np(S), _np(Vh))
    S = bsvd.svdvals(A)
    assert S.is_cuda and torch.allclose(S, torch.linalg.svdvals(A), atol=1e-12)


@needs_gpu
def test_torch_stream_respected():
    """The solve is queued on the caller's (non-blocking) stream, after the
    work that produces A on that stream."""
    torch = _torch()
    s = torch.cuda.Stream()
    ref = torch.randn(500, 16, 16, dtype=torch.float64, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        big = torch.randn(4096, 4096, device="cuda")
        for _ in range(30):  # keep the stream busy for a while
            big = torch.tanh(big @ big)
        A = ref + 0 * big[0, 0].to(torch.float64)  # ready only after the loop
        U, S, Vh = bsvd.svd(A, full_matrices=False)
        R = (U * S.unsqueeze(-2)) @ Vh - A  # queued on s after the SVD
    s.synchronize()
    assert_ratios(_np(ref), _np(U), _np(S), _np(Vh))
    assert R.abs().max().item() < 1e-12


@needs_gpu
def test_torch_list_nan_and_host_backend_cuda():
    torch = _torch()
    mats = [torch.randn(m, n, dtype=torch.float32, device="cuda") for m, n in
            [(5, 3), (16, 16), (3, 9), (1, 1), (30, 2)]]
    Us, Ss, Vhs, info = bsvd.svd_batch(mats, full_matrices=False, return_info=True)
    assert info.converged.all()
    for A, U, S, Vh in zip(mats, Us, Ss, Vhs):
        assert U.is_cuda
        assert_ratios(_np(A), _np(U), _np(S), _np(Vh))
    A = torch.randn(4, 8, 8, dtype=torch.float64, device="cuda")
    A[2, 1, 1] = float("nan")
    with pytest.warns(bsvd.NonFiniteWarning):  # check=True: waits and reports
        U, S, Vh, info = bsvd.svd(A, full_matrices=False, return_info=True, check=True)
    assert info.info.tolist() == [0, 0, -1, 0] and torch.isnan(S[2]).all()
    # host (NumPy) arrays on the cuda backend: copied to the GPU and back
    A_np = random_matrix(np.random.default_rng(1), (50, 12, 12), np.float64)
    U, S, Vh, info = bsvd.svd(A_np, backend="cuda", return_info=True)
    assert isinstance(U, np.ndarray) and set(info.path_names) == {"cuda-tiny"}  # (lanes, 9 ... 16)
    assert_ratios(A_np, U, S, Vh)
    with pytest.raises(ValueError, match="backend='cpu'"):
        bsvd.svd(A, backend="cpu")


@needs_gpu
def test_torch_cuda_reports():
    """CUDA tensors are only enqueued: no report by default (the info
    tensor of return_info says which matrices failed, on the device);
    check=True waits and warns as on the CPU, also on a side stream."""
    import warnings
    torch = _torch()
    A = torch.randn(50, 32, 32, dtype=torch.float32, device="cuda")
    A[3, 1, 1] = float("nan")
    A[7, 0, 5] = float("inf")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bsvd.svd(A, full_matrices=False, max_sweeps=1)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        U, S, Vh = bsvd.svd(A, full_matrices=False, max_sweeps=1, check=True)
    got = sorted((r.category.__name__, " ".join(str(r.message).split()[1:4])) for r in rec)
    assert got == [("ConvergenceWarning", "48 of 50"), ("NonFiniteWarning", "2 of 50")]
    assert all(r.filename == __file__ for r in rec)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bsvd.svd(A, max_sweeps=1, warn=False, check=True)
        bsvd.svd(A[8:], check=True)  # converges
    with pytest.raises(ValueError, match="2 of 50"):
        bsvd.svdvals(A, check_finite=True)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        with pytest.warns(bsvd.NonFiniteWarning):
            S1, info1 = bsvd.svdvals(A, return_info=True, check=True)
        before = info1.info.clone()
        B = A.clone()
        B[3, 1, 1] = 0.0
        with pytest.warns(bsvd.NonFiniteWarning, match="1 of 50"):
            S2, info2 = bsvd.svdvals(B, return_info=True, check=True)
    s.synchronize()
    assert isinstance(info1.info, torch.Tensor) and info1.info.shape == (50,)
    assert set(np.flatnonzero(_np(info1.info) == -1)) == {3, 7}
    assert set(np.flatnonzero(_np(info2.info) == -1)) == {7}
    assert torch.equal(info1.info, before)  # not changed by the second call
    assert int(info2.converged.sum()) == 49 and set(info2.path_names) <= {"cuda-tiny", "trivial"}
    assert torch.isfinite(S2[3]).all() and torch.isnan(S1[3]).all()


@needs_gpu
def test_torch_autograd_cuda():
    torch = _torch()
    import bsvd.torch as bt
    A = torch.randn(2, 6, 4, dtype=torch.complex128, device="cuda", requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda X: (lambda U, S, Vh: U.abs().sum() + S.sum() + (Vh.mH @ Vh).real.sum())(
            *bt.svd(X, full_matrices=False)),
        (A,), eps=1e-6, atol=1e-5, rtol=1e-4)


@needs_gpu
def test_torch_other_device():
    torch = _torch()
    if torch.cuda.device_count() < 2:
        pytest.skip("one GPU")
    A = torch.randn(10, 8, 8, dtype=torch.float64, device="cuda:1")
    U, S, Vh = bsvd.svd(A, full_matrices=False)
    assert U.device == A.device
    assert_ratios(_np(A), _np(U), _np(S), _np(Vh))


# ---- CuPy ------------------------------------------------------------------

@needs_gpu
@pytest.mark.parametrize("dtype", NP_DTYPES)
@pytest.mark.parametrize("shape", [(100, 16, 16), (3, 12, 20), (2, 40, 33)])
def test_cupy(dtype, shape):
    cupy = _cupy()
    A_np = random_matrix(np.random.default_rng(2), shape, dtype)
    A = cupy.asarray(A_np)
    U, S, Vh = bsvd.svd(A, full_matrices=False)
    for t in (U, S, Vh):
        assert isinstance(t, cupy.ndarray) and t.device.id == A.device.id
    assert_ratios(A_np, _np(U), _np(S), _np(Vh))


@needs_gpu
def test_cupy_stream_and_cuda_array_interface():
    cupy = _cupy()
    A_np = random_matrix(np.random.default_rng(3), (200, 24, 24), np.float64)
    with cupy.cuda.Stream(non_blocking=True) as s:
        big = cupy.random.standard_normal((4096, 4096), dtype=cupy.float32)
        for _ in range(20):
            big = cupy.tanh(big @ big)
        A = cupy.asarray(A_np) + 0 * big[0, 0].astype(cupy.float64)
        U, S, Vh = bsvd.svd(A, full_matrices=False)
        R = cupy.abs((U * S[..., None, :]) @ Vh - A).max()
    s.synchronize()
    assert float(R) < 1e-12
    assert_ratios(A_np, _np(U), _np(S), _np(Vh))

    class OnlyCAI:  # a foreign CUDA array: only __cuda_array_interface__
        def __init__(self, a):
            self.__cuda_array_interface__ = a.__cuda_array_interface__
            self._keep = a
    U, S, Vh = bsvd.svd(OnlyCAI(cupy.asarray(A_np)), full_matrices=False)
    assert isinstance(U, cupy.ndarray)
    assert_ratios(A_np, _np(U), _np(S), _np(Vh))


# ---- JAX -------------------------------------------------------------------

@needs_gpu
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_jax_gpu(dtype):
    jax = pytest.importorskip("jax")
    try:
        gpu = jax.devices("gpu")[0]
    except RuntimeError:
        pytest.skip("jax sees no GPU")
    A_np = random_matrix(np.random.default_rng(4), (50, 10, 6), dtype)
    A = jax.device_put(A_np, gpu)
    U, S, Vh = bsvd.svd(A, full_matrices=False)
    for t in (U, S, Vh):
        assert isinstance(t, jax.Array) and list(t.devices())[0].platform == "gpu"
    assert_ratios(A_np, _np(U), _np(S), _np(Vh))
    Us, Ss, Vhs = bsvd.svd_batch([A[0], A[1, :4]], full_matrices=False)
    assert_ratios(A_np[0], _np(Us[0]), _np(Ss[0]), _np(Vhs[0]))
