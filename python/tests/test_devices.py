"""The devices= option (a host batch over several GPUs, docs/multi-gpu.md):
its checks, that it reaches the library, and where it is refused. The GPU
split itself is tested in C++ (tests/gpu/test_gpu_devices.cu)."""
import numpy as np
import pytest

import bsvd
from bsvd import _args


@pytest.fixture
def A():
    return np.random.default_rng(5).standard_normal((6, 7, 5))


@pytest.mark.parametrize("devices, expected", [
    (None, (0, [])), ("all", (-1, [])), (0, (1, [0])), (3, (1, [3])),
    ([1, 0], (2, [1, 0])), ((2,), (1, [2])), (np.int64(1), (1, [1])),
])
def test_device_option_values(devices, expected):
    assert _args.device_option(devices, "w") == expected


@pytest.mark.parametrize("devices, error", [
    ("gpu", ValueError), ([], ValueError), ([0, 0], ValueError), ([-1], ValueError),
    (-2, ValueError), ([0.5], TypeError), ([True], TypeError), (1.0, TypeError),
])
def test_device_option_refuses(devices, error):
    with pytest.raises(error, match="devices"):
        _args.device_option(devices, "bsvd.svd")
    with pytest.raises(error, match="devices"):
        bsvd.svd(np.eye(3), devices=devices)


def test_options_carry_the_devices():
    opts = bsvd._args.options(dict(backend="cpu"), ("cpu", 0), None)
    assert (opts.device_count, list(opts.devices)) == (0, [])
    _args.set_devices(opts, _args.device_option([2, 1], "w"))
    assert (opts.device_count, list(opts.devices)) == (2, [2, 1])


def test_cpu_backend_ignores_the_devices(A):
    ref = bsvd.svd(A, backend="cpu", full_matrices=False)
    for devices in ("all", [0, 1], 0):
        got = bsvd.svd(A, backend="cpu", full_matrices=False, devices=devices)
        for r, g in zip(ref, got):
            np.testing.assert_array_equal(r, g)
    Ss = bsvd.svd_batch([A[0], A[1, :3]], compute_uv=False, backend="cpu", devices="all")
    np.testing.assert_array_equal(Ss[1], bsvd.svdvals(A[1, :3], backend="cpu"))


@pytest.mark.skipif(bsvd.cuda_available(), reason="needs a machine without a GPU")
def test_cuda_backend_without_a_gpu_says_so(A):
    with pytest.raises(bsvd.BackendUnavailableError):
        bsvd.svd(A, backend="cuda", devices="all")


def test_torch_tensors_refuse_the_devices(A):
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match="devices= is not supported for torch"):
        bsvd.svd(torch.from_numpy(A), devices="all")
    with pytest.raises(TypeError, match="devices= is not supported for torch"):
        bsvd.svd_batch([torch.from_numpy(A[0])], devices=[0])
    bsvd.svd(torch.from_numpy(A), devices=None)  # the default is fine


def test_jax_arrays_refuse_the_devices(A):
    jnp = pytest.importorskip("jax.numpy")
    with pytest.raises(TypeError, match="devices= is not supported for jax"):
        bsvd.svd(jnp.asarray(A), devices="all")
