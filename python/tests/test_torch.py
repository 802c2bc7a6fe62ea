"""PyTorch tensors (CPU here; CUDA in test_gpu.py) and the autograd wrapper
bsvd.torch.svd. Skipped where torch is not installed."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import bsvd  # noqa: E402
import bsvd.torch as bt  # noqa: E402
from helpers import assert_ratios  # noqa: E402

DTYPES = [torch.float32, torch.float64, torch.complex64, torch.complex128]


def rand(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, dtype=dtype, generator=g)


def np_(t):
    return t.detach().cpu().resolve_conj().numpy()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (2, 3, 5, 5), (1, 9)])
def test_cpu_tensors(dtype, shape):
    A = rand(shape, dtype)
    res = bsvd.svd(A, full_matrices=False)
    assert isinstance(res, torch.return_types.linalg_svd)  # torch.linalg.svd's result type
    U, S, Vh = res
    assert res.U is U and res.S is S and res.Vh is Vh
    assert all(isinstance(t, torch.Tensor) for t in (U, S, Vh))
    assert U.device == A.device and U.dtype == dtype and S.dtype == A.real.dtype
    assert_ratios(np_(A), np_(U), np_(S), np_(Vh))


@pytest.mark.parametrize("make", [lambda A: A.mT, lambda A: A[..., ::2, :], lambda A: A.conj(),
                                  lambda A: A.transpose(0, 1)],
                         ids=["mT", "step", "conj-bit", "batch-transpose"])
def test_views(make):
    A = make(rand((3, 4, 8, 6), torch.complex128))
    U, S, Vh = bsvd.svd(A, full_matrices=False)
    assert_ratios(np_(A), np_(U), np_(S), np_(Vh))


def test_reports_and_upcast():
    A = rand((3, 24, 24), torch.float64)
    A[1, 2, 2] = float("nan")
    with pytest.warns(bsvd.NonFiniteWarning, match="1 of 3"):
        with pytest.warns(bsvd.ConvergenceWarning, match="2 of 3"):
            S, info = bsvd.svdvals(A, max_sweeps=1, return_info=True)
    assert isinstance(S, torch.Tensor) and isinstance(info.info, np.ndarray)
    assert list(info.nonfinite) == [False, True, False] and (info.sweeps[[0, 2]] == 1).all()
    H = rand((2, 5, 4), torch.float32).to(torch.float16)
    U, S, Vh = bsvd.svd(H, full_matrices=False)
    assert U.dtype == torch.float32 and S.dtype == torch.float32
    assert_ratios(np_(H.float()), np_(U), np_(S), np_(Vh))
    # integer tensors: torch's promotion to its default dtype
    S = bsvd.svdvals(torch.tensor([[1, 2], [3, 4]]))
    assert S.dtype == torch.get_default_dtype()
    assert torch.allclose(S.double(), torch.linalg.svdvals(torch.tensor([[1.0, 2], [3, 4]],
                                                                        dtype=torch.float64)), rtol=1e-6)
    with pytest.raises(TypeError, match="unsupported dtype"):
        bsvd.svd(torch.ones(3, 3, dtype=torch.float8_e4m3fn))


def test_requires_grad_routes_through_autograd():
    A = rand((3, 5, 4), torch.float64).requires_grad_()
    U, S, Vh = bsvd.svd(A, full_matrices=False)
    assert S.grad_fn is not None
    S.sum().backward()
    # d(sum S)/dA = U Vh
    assert torch.allclose(A.grad, U.detach() @ Vh.detach(), atol=1e-12)
    with torch.no_grad():
        U, S, Vh = bsvd.svd(A, full_matrices=False)
    assert S.grad_fn is None


def test_list_of_tensors():
    with pytest.raises(TypeError, match="torch.stack"):
        bsvd.svd([rand((2, 2), torch.float32)] * 2)
    mats = [rand((5, 3), torch.float32, 1), rand((2, 7), torch.float32, 2)]
    Us, Ss, Vhs = bsvd.svd_batch(mats, full_matrices=False)
    for A, U, S, Vh in zip(mats, Us, Ss, Vhs):
        assert isinstance(U, torch.Tensor)
        assert_ratios(np_(A), np_(U), np_(S), np_(Vh))


def test_full_matrices_torch():
    A = rand((2, 6, 3), torch.complex64)
    U, S, Vh = bsvd.svd(A)  # full_matrices=True by default, as torch.linalg.svd
    assert U.shape == (2, 6, 6) and Vh.shape == (2, 3, 3)
    eye = torch.eye(6, dtype=A.dtype)
    assert (U.mH @ U - eye).abs().max() < 1e-5


# ---- autograd ----------------------------------------------------------------

def _losses(m, n):
    k = min(m, n)
    return {
        "S": lambda U, S, Vh: S.sum() + (S ** 2).sum(),
        "recon": lambda U, S, Vh: ((U * S.unsqueeze(-2).to(U.dtype)) @ Vh).abs().pow(2).sum()
        + ((U * S.unsqueeze(-2).to(U.dtype)) @ Vh).real.sin().sum(),
        "absU": lambda U, S, Vh: U.abs().sum() + (Vh.abs() ** 2 * torch.arange(1, n + 1)).sum(),
        "proj": lambda U, S, Vh: (U[..., :, : max(k - 1, 1)] @ U[..., :, : max(k - 1, 1)].mH).real.pow(3).sum()
        + (Vh.mH @ Vh).real.sum(),
        "onlyU": lambda U, S, Vh: (U.abs() ** 3).sum(),
        "onlyVh": lambda U, S, Vh: (Vh.abs() ** 3).sum(),
    }


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
@pytest.mark.parametrize("shape", [(5, 5), (7, 4), (4, 7), (2, 6, 3)])
@pytest.mark.parametrize("loss", ["S", "recon", "absU", "proj", "onlyU", "onlyVh"])
def test_gradcheck(dtype, shape, loss):
    A = rand(shape, dtype, seed=3).requires_grad_()
    f = _losses(shape[-2], shape[-1])[loss]
    assert torch.autograd.gradcheck(lambda X: f(*bt.svd(X, full_matrices=False)), (A,), eps=1e-6, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5)])
def test_grad_matches_torch(dtype, shape):
    A = rand(shape, dtype, seed=5)
    f = _losses(*shape)["absU"]
    A1 = A.clone().requires_grad_()
    f(*bt.svd(A1, full_matrices=False)).backward()
    A2 = A.clone().requires_grad_()
    f(*torch.linalg.svd(A2, full_matrices=False)).backward()
    assert torch.allclose(A1.grad, A2.grad, atol=1e-9, rtol=1e-7)


def _repeated(dtype, m, n, s, seed=7):
    """A = Q1 diag(s) Q2^H with exactly repeated entries in s."""
    g = torch.Generator().manual_seed(seed)
    k = min(m, n)
    Q1 = torch.linalg.qr(torch.randn(m, k, dtype=dtype, generator=g))[0]
    Q2 = torch.linalg.qr(torch.randn(n, k, dtype=dtype, generator=g))[0]
    return Q1 @ torch.diag(torch.tensor(s, dtype=dtype)) @ Q2.mH


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
@pytest.mark.parametrize("mn", [(4, 4), (6, 4), (4, 6)])
def test_repeated_singular_values(dtype, mn):
    m, n = mn
    A = _repeated(dtype, m, n, [3.0, 2.0, 2.0, 1.0]).requires_grad_()
    exact = {
        "S": lambda U, S, Vh: S.sum() + (S ** 2).sum() + S.prod(),
        # projectors onto whole blocks of equal values: {0}, {1, 2}, {0, 1, 2}
        "proj": lambda U, S, Vh: (U[:, 1:3] @ U[:, 1:3].mH).real.pow(2).sum()
        + (Vh[:3].mH @ Vh[:3]).abs().pow(3).sum() + U[:, 0].abs().pow(3).sum(),
    }
    for name, f in exact.items():
        assert torch.autograd.gradcheck(lambda X: f(*bt.svd(X, full_matrices=False)), (A,), eps=1e-6, atol=1e-5, rtol=1e-4), name
    # A function of U diag(S) Vh: finite (not exact, see bsvd/torch.py)
    f = _losses(m, n)["recon"]
    A.grad = None
    f(*bt.svd(A, full_matrices=False)).backward()
    assert torch.isfinite(A.grad).all()


def test_svd_backward_values_only():
    A = rand((4, 3), torch.float64).requires_grad_()
    S = bt.svdvals(A)
    S.sum().backward()
    U, S2, Vh = torch.linalg.svd(A.detach(), full_matrices=False)
    assert torch.allclose(A.grad, U @ Vh, atol=1e-12)


def test_autograd_return_info_and_errors():
    A = rand((2, 5, 4), torch.float64).requires_grad_()
    U, S, Vh, info = bt.svd(A, return_info=True)
    assert info.converged.all()
    assert bsvd.svd(A, return_info=True).U.shape == (2, 5, 5)
    with pytest.raises(ValueError):
        bt.svd(torch.ones(3, requires_grad=True))


def test_exactly_repeated_values_finite_where_torch_is_nan():
    A = torch.diag(torch.tensor([2.0, 2.0, 1.0], dtype=torch.float64)).requires_grad_()
    f = _losses(3, 3)["recon"]  # L = sum |A|^2 + sum sin(A): dL/dA = 2A + cos(A)
    f(*torch.linalg.svd(A, full_matrices=False)).backward()
    assert torch.isnan(A.grad).all()  # torch: 0/0
    A.grad = None
    f(*bt.svd(A)).backward()
    G = 2 * A.detach() + torch.cos(A.detach())
    # exact except the symmetric coupling inside the repeated block (0, 1)
    mask = torch.ones(3, 3, dtype=torch.bool)
    mask[0, 1] = mask[1, 0] = False
    assert torch.allclose(A.grad[mask], G[mask], atol=1e-12)
    assert torch.isfinite(A.grad).all()


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
@pytest.mark.parametrize("shape", [(6, 4), (4, 6)])
def test_full_matrices_grad_as_torch(dtype, shape):
    """full_matrices=True (the default of both): as torch.linalg.svd, the
    result is torch.return_types.linalg_svd, and the gradient of a loss of
    the leading k columns / rows is that of the reduced SVD (the completed
    part's gradient is ignored)."""
    A = rand(shape, dtype, seed=9)
    k = min(shape)
    f = lambda U, S, Vh: (U[..., :k].abs() ** 3).sum() + (Vh[..., :k, :].abs() ** 3).sum() + S.sum()  # noqa: E731
    A1 = A.clone().requires_grad_()
    res = bt.svd(A1)
    assert isinstance(res, torch.return_types.linalg_svd)
    assert res.U.shape == (shape[0],) * 2 and res.Vh.shape == (shape[1],) * 2
    f(*res).backward()
    A2 = A.clone().requires_grad_()
    f(*torch.linalg.svd(A2)).backward()
    assert torch.allclose(A1.grad, A2.grad, atol=1e-9, rtol=1e-7)
