"""The message of a failed import of the extension (bsvd/_loading.py): a
missing CUDA library -- what a wheel built with the CUDA backend meets on a
machine without NVIDIA's pip packages or a toolkit -- gets advice; any
other failure passes unchanged."""
import pytest

from bsvd._loading import cuda_library_hint

LOADER = "{}: cannot open shared object file: No such file or directory"


@pytest.mark.parametrize("lib", ["libcublas.so.13", "libcusolver.so.12", "libcublasLt.so.13",
                                 "libcusparse.so.12", "libnvJitLink.so.13", "libcudart.so.13"])
def test_missing_cuda_library_gets_advice(lib):
    hint = cuda_library_hint(LOADER.format(lib))
    assert hint is not None
    assert hint.startswith(LOADER.format(lib))  # the loader's own words first
    assert 'pip install "bsvd[cuda]"' in hint and "toolkit" in hint


@pytest.mark.parametrize("message", [
    LOADER.format("liblapacke.so.3"),
    LOADER.format("libstdc++.so.6"),
    "/x/_bsvd.so: undefined symbol: cublasCreate_v2",
    "No module named 'bsvd._bsvd'",
])
def test_other_failures_pass_unchanged(message):
    assert cuda_library_hint(message) is None
