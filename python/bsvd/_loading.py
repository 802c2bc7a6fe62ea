"""Why the extension failed to load, in words a user can act on.

A wheel built with the CUDA backend links cuBLAS and cuSOLVER (and through
them cuSPARSE and nvJitLink) dynamically: they come from NVIDIA's pip
packages (``pip install "bsvd[cuda]"``, found through the extension's
RUNPATH) or from a CUDA toolkit the dynamic loader finds. Without either,
the loader's own message names only the file.
"""
from __future__ import annotations

# The CUDA libraries the extension (or they) may need, as the loader names them.
CUDA_LIBRARIES = ("libcublas", "libcublasLt", "libcusolver", "libcusparse", "libnvJitLink",
                  "libcudart")


def cuda_library_hint(message: str) -> str | None:
    """The advice for a loader message about a missing CUDA library, or None
    when the message is about something else."""
    if "cannot open shared object file" not in message:
        return None
    if not any(lib + ".so" in message for lib in CUDA_LIBRARIES):
        return None
    return (f"{message}. This bsvd was built with the CUDA backend and loads NVIDIA's CUDA "
            "libraries at import: install them with pip install \"bsvd[cuda]\" (NVIDIA's "
            "nvidia-cublas and nvidia-cusolver packages), or install the CUDA toolkit of the "
            "same major version where the dynamic loader finds it (ldconfig, LD_LIBRARY_PATH); "
            "or install a CPU-only build (docs/install.md)")
