"""bsvd.truncate, the rank cut of an SVD by a tolerance: the kept ranks
against a direct count, the truncation errors against their bounds
(||A - A_r||_2 = s_{r+1}, ||A - A_r||_F = the tail's norm), the zeroed
padding of a batch, lists (svd_batch), argument checks, and the same cut on
PyTorch and JAX arrays where those are installed (on the CPU; on the GPU
too where one is visible)."""
import os

import numpy as np
import pytest

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import bsvd  # noqa: E402


def graded(rng, batch, m, n, decay):
    """Matrices with singular values 10^(-decay * i / k), i = 0 .. k-1, and the values."""
    k = min(m, n)
    s = 10.0 ** (-decay * np.arange(k) / k)
    U = np.linalg.qr(rng.standard_normal((batch, m, k)))[0]
    V = np.linalg.qr(rng.standard_normal((batch, n, k)))[0]
    return (U * s) @ np.swapaxes(V, -1, -2), s


def reference_rank(S, rtol, atol, max_rank, norm):
    """The smallest r with error E_r <= tol, by a loop over r (no shortcuts)."""
    out = []
    for s in S.reshape(-1, S.shape[-1]):
        if norm == "2":
            E = list(s) + [0.0]  # E_r = s_{r+1} (0-based s[r]); E_k = 0
            ref = s[0] if s.size else 0.0
        else:
            E = [np.sqrt(np.sum(s[r:] ** 2)) for r in range(s.size + 1)]
            ref = E[0]
        tol = max(atol or 0.0, (rtol or 0.0) * ref)
        r = next(r for r in range(s.size + 1) if E[r] <= tol)
        out.append(min(r, max_rank) if max_rank is not None else r)
    return np.array(out).reshape(S.shape[:-1])


@pytest.mark.parametrize("norm", ["2", "fro"])
@pytest.mark.parametrize("rtol,atol,max_rank", [(1e-6, None, None), (None, 1e-3, None),
                                                (1e-9, 1e-4, None), (1e-12, None, 5),
                                                (None, None, 3), (0.5, None, None)])
def test_ranks_and_errors(norm, rtol, atol, max_rank):
    rng = np.random.default_rng(7)
    A, _ = graded(rng, 6, 20, 12, 10)
    A *= rng.uniform(0.5, 4.0, (6, 1, 1))  # a different ||A|| per matrix
    res = bsvd.svd(A, full_matrices=False)
    U, S, Vh, rank = bsvd.truncate(res, rtol=rtol, atol=atol, max_rank=max_rank, norm=norm)
    want = reference_rank(res.S, rtol, atol, max_rank, norm)
    assert np.array_equal(rank, want)
    R = int(want.max())
    assert U.shape == (6, 20, R) and S.shape == (6, R) and Vh.shape == (6, R, 12)
    Ar = U @ (S[..., None] * Vh)
    for b in range(6):
        r = int(rank[b])
        assert np.all(S[b, r:] == 0) and np.all(U[b, :, r:] == 0) and np.all(Vh[b, r:] == 0)
        s = res.S[b]
        # The truncation error is the cut tail of S, in the chosen norm.
        want_err = (s[r] if r < s.size else 0.0) if norm == "2" else np.sqrt(np.sum(s[r:] ** 2))
        got = np.linalg.norm(A[b] - Ar[b], 2 if norm == "2" else "fro")
        assert abs(got - want_err) <= 1e-12 * s[0]
        if max_rank is None or r < max_rank:
            ref = s[0] if norm == "2" else np.linalg.norm(s)
            assert want_err <= max(atol or 0.0, (rtol or 0.0) * ref) * (1 + 1e-12)


def test_positional_and_none_factors():
    rng = np.random.default_rng(1)
    A, s = graded(rng, 1, 10, 10, 12)
    U, S, Vh = bsvd.svd(A[0], full_matrices=False)
    a = bsvd.truncate(U, S, Vh, rtol=3e-6)
    b = bsvd.truncate(None, S, None, rtol=3e-6)
    assert a.rank.shape == () and int(a.rank) == int(b.rank) == 5  # s_4 = 1.6e-5, s_5 = 1e-6
    assert b.U is None and b.Vh is None and np.array_equal(a.S, b.S)
    # Full matrices: the columns of U and rows of Vh that go with S.
    Uf, Sf, Vhf = bsvd.svd(A[0])
    c = bsvd.truncate((Uf, Sf, Vhf), rtol=3e-6)
    assert c.U.shape == (10, 5) and c.Vh.shape == (5, 10)


def test_zero_and_empty():
    Z = np.zeros((3, 4, 5))
    res = bsvd.truncate(bsvd.svd(Z, full_matrices=False), rtol=1e-8)
    assert np.array_equal(res.rank, [0, 0, 0]) and res.S.shape == (3, 0)
    E = np.zeros((0, 4, 5))
    res = bsvd.truncate(bsvd.svd(E, full_matrices=False), rtol=1e-8)
    assert res.rank.shape == (0,) and res.U.shape == (0, 4, 0)
    # No tolerance: only the exact zeros go.
    A = np.diag([3.0, 2.0, 0.0])
    assert int(bsvd.truncate(bsvd.svd(A)).rank) == 2


def test_lists_from_svd_batch():
    rng = np.random.default_rng(2)
    mats = [graded(rng, 1, m, n, 8)[0][0] for m, n in ((9, 6), (5, 11), (16, 16))]
    Us, Ss, Vhs = bsvd.svd_batch(mats, full_matrices=False)
    out = bsvd.truncate(Us, Ss, Vhs, rtol=1e-4, norm="fro")
    assert isinstance(out.rank, list) and all(isinstance(r, int) for r in out.rank)
    for A, U, S, Vh, r, s in zip(mats, out.U, out.S, out.Vh, out.rank, Ss):
        assert U.shape == (A.shape[0], r) and S.shape == (r,) and Vh.shape == (r, A.shape[1])
        assert r == reference_rank(s[None], 1e-4, None, None, "fro")[0]
    with pytest.raises(ValueError, match="one entry per matrix"):
        bsvd.truncate(Us[:2], Ss, Vhs, rtol=1e-4)


def test_argument_checks():
    res = bsvd.svd(np.eye(3))
    with pytest.raises(ValueError, match="rtol"):
        bsvd.truncate(res, rtol=-1.0)
    with pytest.raises(ValueError, match="atol"):
        bsvd.truncate(res, atol=float("nan"))
    with pytest.raises(TypeError, match="max_rank"):
        bsvd.truncate(res, max_rank=2.0)
    with pytest.raises(ValueError, match="max_rank"):
        bsvd.truncate(res, max_rank=-1)
    with pytest.raises(ValueError, match="norm"):
        bsvd.truncate(res, norm="nuc")
    with pytest.raises(TypeError, match="rtol"):
        bsvd.truncate(res, rtol="1e-3")
    with pytest.raises(TypeError):
        bsvd.truncate(np.eye(3))


def test_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    A, _ = graded(rng, 4, 12, 8, 9)
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() and bsvd.cuda_available() else [])
    want = bsvd.truncate(bsvd.svd(A, full_matrices=False), rtol=1e-5, norm="fro")
    for dev in devices:
        At = torch.as_tensor(A, device=dev)
        got = bsvd.truncate(bsvd.svd(At, full_matrices=False), rtol=1e-5, norm="fro")
        assert isinstance(got.rank, torch.Tensor) and got.rank.device.type == dev
        assert np.array_equal(got.rank.cpu().numpy(), want.rank)
        assert np.allclose((got.U @ (got.S[..., None] * got.Vh)).cpu().numpy(),
                           want.U @ (want.S[..., None] * want.Vh), atol=1e-12)


def test_jax():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    rng = np.random.default_rng(4)
    A, _ = graded(rng, 4, 10, 10, 9)
    want = bsvd.truncate(bsvd.svd(A, full_matrices=False), rtol=1e-4, max_rank=6)
    U, S, Vh = jnp.linalg.svd(jnp.asarray(A, dtype=jnp.float32), full_matrices=False)
    got = bsvd.truncate(U, S, Vh, rtol=1e-4, max_rank=6)
    assert np.array_equal(np.asarray(got.rank), want.rank)
    # Inside jit the ranks are not known while tracing: the width is max_rank, masked.
    f = jax.jit(lambda U, S, Vh: bsvd.truncate(U, S, Vh, rtol=1e-4, max_rank=6))
    j = f(U, S, Vh)
    assert j.S.shape == (4, 6) and np.array_equal(np.asarray(j.rank), want.rank)
    R = got.S.shape[-1]
    assert np.allclose(np.asarray(j.S)[:, :R], np.asarray(got.S), rtol=1e-6)
    assert np.all(np.asarray(j.S)[:, R:] == 0)
