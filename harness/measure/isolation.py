"""How a side's worker isolates each case process: ``fork`` or ``spawn``, and which one a run takes
by default.

- ``fork`` forks the worker, which imported JAX once *without* starting a backend, so a case process
  skips a 1.5 s JAX import and still starts its own backend, devices and compilation caches with the
  side's XLA flags;
- ``spawn`` makes each forked process ``exec`` a new ``python -m harness.measure.child``.
"""

from __future__ import annotations

import os

ISOLATIONS = ("fork", "spawn")
GPU_PLATFORMS = ("cuda", "rocm", "gpu")


def default_isolation(environ: dict[str, str] | None = None) -> str:
    """``fork``, unless ``JAX_PLATFORMS`` pins a GPU: then ``spawn``. A ``fork`` worker imports JAX,
    which with a CUDA plugin loads CUDA libraries; CUDA forbids a fork only once initialised, which
    that import should not do, but no release is verified; a GPU run spends seconds compiling, so a
    fresh interpreter's import (about 1.5 s) buys certainty."""
    platforms = (os.environ if environ is None else environ).get("JAX_PLATFORMS", "")
    return "spawn" if any(p.strip() in GPU_PLATFORMS for p in platforms.split(",")) else "fork"
