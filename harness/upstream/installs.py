"""What a draft says of a script's environment: whether it is plain JAX (jax, numpy and the
standard library alone), and the install lines that rebuild each side of a change exactly: each
pins every package whose installed version differs between the sides, so that a maintainer's
``pip install`` rebuilds neither side from another day's index.  Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from packaging.utils import canonicalize_name

from harness.upstream.export import foreign_imports


def imported_besides_jax(text: str) -> list[str]:
    """The top-level packages ``text`` imports besides jax, numpy and the standard library, sorted
    (a relative import as "."); None of them: plain JAX.  Text that does not parse imports none."""
    try:
        return sorted(foreign_imports(text))
    except (SyntaxError, ValueError):
        return []


def script_words(text: str) -> str:
    """How the draft calls the script: "plain JAX", or what else it imports."""
    others = imported_besides_jax(text)
    return f"with {', '.join(others)}" if others else "plain JAX"


def _versions(installed: Sequence[str]) -> dict[str, tuple[str, str]]:
    """Each ``name==version`` by its normalized name: (the pin as recorded, the version)."""
    found = {}
    for pin in installed:
        name, _, version = pin.partition("==")
        if version:
            found[str(canonicalize_name(name))] = (pin, version)
    return found


def exact_install(install: Sequence[str], own: Sequence[str], other: Sequence[str]) -> list[str]:
    """``install`` (one side's line, as the harness made it) with a pin added for every package
    whose version in ``own`` (this side's installed set) differs from ``other`` (the other side's),
    or that only this side holds; those ``install`` pins already stay as they are."""
    mine, theirs = _versions(own), _versions(other)
    pinned = {str(canonicalize_name(p.partition("==")[0])) for p in install if "==" in p}
    added = [
        pin
        for name, (pin, version) in sorted(mine.items())
        if name not in pinned and theirs.get(name, ("", ""))[1] != version
    ]
    return [*install, *added]
