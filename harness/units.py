"""Pure units every stage shares: numbers, sizes and machine ids as text, and release order.
Standard library only (``packaging`` where used): the noxfile and the case process import it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

# The machine of a result stored before results recorded one.
UNRECORDED_MACHINE = "unrecorded"


def format_bytes(value: float) -> str:
    """A size in the binary unit that reads best: ``512 B``, ``3.4 KiB``, ``1.2 GiB``."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.0f} B"


def format_ns(value: float) -> str:
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.0f} ns"


def sizes_text(sizes: Mapping[str, int]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(sizes.items())) or "–"


def short_machine(machine_id: str) -> str:
    """Eight hex digits tell machines apart on a page; the full id stays in the result."""
    return machine_id if machine_id == UNRECORDED_MACHINE else machine_id[:8]


def format_seconds(seconds: float) -> str:
    """A duration for a progress line: "45 s", "3 min 20 s", "1 h 05 min"."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def time_left(done: int, left: int, elapsed: float, per_unit: float | None = None) -> str:
    """ "3 min 20 s elapsed, about 5 min 00 s left" at ``per_unit`` seconds a unit (default: the
    pace so far); empty before the first is done."""
    if done <= 0:
        return ""
    pace = elapsed / done if per_unit is None else per_unit
    return f"{format_seconds(elapsed)} elapsed, about {format_seconds(pace * left)} left"


def format_ratio(value: float) -> str:
    """``×1.5``; from or to zero no ratio means something: "from 0", "to 0"."""
    if math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "from 0"
    return "to 0" if value == 0 else f"×{value:.3g}"


def format_p(value: float) -> str:
    if math.isnan(value):
        return "n/a"
    return f"{value:.2g}" if value >= 1e-4 else "<0.0001"


if TYPE_CHECKING:
    from packaging.version import Version

VersionKey = tuple[bool, "Version", str]


def version_key(version: str) -> VersionKey:
    """Release order as pip's (PEP 440); a label that is no version (``unknown``) sorts first."""
    # see the module's docstring: not in a script's venv
    from packaging.version import InvalidVersion, Version

    try:
        return True, Version(version), ""
    except InvalidVersion:
        return False, Version("0"), version


def normal_version(version: str) -> str:
    """``version`` as PEP 440 reads it, leading zeros dropped (``0.4.026``: ``0.4.26``)."""
    return ".".join(
        str(int(part)) if part.isascii() and part.isdigit() else part for part in version.split(".")
    )
