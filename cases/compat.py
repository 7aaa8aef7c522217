"""The one place where case code may know about JAX release numbers.

Cases call these helpers instead of branching on versions themselves, so a case
stays plain JAX and an exported script can inline just the helpers it uses.
The release facts behind each helper are listed in cases/README.md ("Release facts the
code relies on").
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np


class Unsupported(Exception):
    """Raised by a case (or a helper) when it cannot run on this release or backend.

    The harness records the run as ``skipped`` with the message as its reason.
    """


def jax_version() -> tuple[int, ...]:
    return tuple(int(part) for part in jax.__version__.split(".")[:3] if part.isdigit())


def mesh(devices: list[Any], axis_name: str = "x") -> Any:
    """A one-axis mesh, built the same way on every release.

    ``jax.make_mesh`` only exists from 0.4.33 and its default axis type becomes
    Explicit in 0.9.0; ``Mesh`` over a device array means Auto everywhere.
    """
    return jax.sharding.Mesh(np.array(devices), (axis_name,))


def named_sharding(devices: list[Any], *, replicated: bool = False) -> Any:
    """Rows split over the devices (or the whole array on each) with NamedSharding."""
    spec = jax.sharding.PartitionSpec() if replicated else jax.sharding.PartitionSpec("x")
    return jax.sharding.NamedSharding(mesh(devices), spec)


def positional_sharding(devices: list[Any], *, replicated: bool = False) -> Any:
    """The discussion's ``PositionalSharding(devices).reshape((n, 1))``; removed in 0.7.0."""
    positional = getattr(jax.sharding, "PositionalSharding", None)
    if positional is None or jax_version() >= (0, 7, 0):
        raise Unsupported(f"jax {jax.__version__} has no PositionalSharding (removed in 0.7.0)")
    sharding = positional(devices).reshape((len(devices), 1))
    return sharding.replicate() if replicated else sharding


def has_positional_sharding() -> bool:
    return getattr(jax.sharding, "PositionalSharding", None) is not None and jax_version() < (
        0,
        7,
        0,
    )


def pmap_implementation() -> str:
    """What ``jax.pmap`` runs: from 0.8.0 it is ``jit(shard_map)`` unless the flag says
    otherwise."""
    merged = getattr(jax.config, "jax_pmap_shmap_merge", None)
    if merged is None:
        merged = jax_version() >= (0, 10, 0)  # the flag was removed once the merge was final
    return "jit(shard_map)" if merged else "pmap (classic)"
