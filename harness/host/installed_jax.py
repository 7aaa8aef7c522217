"""The JAX installed beside the harness, as its distributions say, without importing it.

A machine with JAX already installed and no package index (a GPU box, a TPU VM, a cluster node, an
air-gapped machine) measures that JAX with ``run`` and ``search``; the profile for its devices comes
from which build it is (CUDA, or with libtpu) and whether its device is usable here.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util

from harness.host import gpu, tpu

# JAX's CUDA builds, newest first: a plugin distribution each (jax[cudaNN]), or, before the plugins,
# jaxlib's own local version (jaxlib==0.4.23+cuda12.cudnn89).
CUDA_BUILDS = ("cuda13", "cuda12")
# The distributions that bring libtpu (module ``libtpu``): jax[tpu]'s from 0.5.1 on, and before.
LIBTPU = ("libtpu", "libtpu-nightly")


def version(package: str = "jax", module: str | None = None) -> str | None:
    """``package``'s installed version (its ``module``: its name), None where not installed."""
    if importlib.util.find_spec(module or package) is None:
        return None
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def cuda_build() -> str | None:
    """``cuda12`` or ``cuda13`` where the installed jax is that CUDA build, None for a CPU build."""
    for build in CUDA_BUILDS:
        if version(f"jax_{build}_plugin") is not None:
            return build
    local = (version("jaxlib") or "").partition("+")[2]
    return next((build for build in CUDA_BUILDS if local.startswith(build)), None)


def device_profile() -> str | None:
    """The installed jax's profile: its CUDA build on a usable GPU, ``tpu``: libtpu and a chip."""
    build = cuda_build()
    if build is not None:
        return None if gpu.absence_reason() is not None else build
    # libtpu: through which jax reaches a TPU
    has_libtpu = any(version(package, "libtpu") is not None for package in LIBTPU)
    return "tpu" if has_libtpu and tpu.absence_reason() is None else None
