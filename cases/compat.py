"""The one place where case code may know about JAX release numbers.

Cases call these helpers instead of branching on versions themselves, so a case
stays plain JAX and an exported script can inline just the helpers it uses.
Imports only the standard library at module level; JAX is imported inside helpers.
"""

from __future__ import annotations

from typing import Any


class Unsupported(Exception):
    """Raised by a case (or a helper) when it cannot run on this release or backend.

    The harness records the run as ``skipped`` with the message as its reason.
    """


def jax_version() -> tuple[int, ...]:
    import jax

    return tuple(int(part) for part in jax.__version__.split(".")[:3] if part.isdigit())


def cost_analysis(compiled: Any) -> dict[str, float]:
    """``Compiled.cost_analysis()`` is a list of dicts through 0.4.38, a dict from 0.5.0."""
    analysis = compiled.cost_analysis()
    if isinstance(analysis, list):
        analysis = analysis[0] if analysis else {}
    return {k: float(v) for k, v in (analysis or {}).items() if isinstance(v, (int, float))}
