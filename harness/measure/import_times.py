"""Where a suite's import goes: ``python -X importtime``'s report, read as a tree of modules.

The watch runs one extra process of a suite per side (off the timing path) with ``IMPORT_TIME``
(``benchmark_suite``'s) naming a file, where the case process copies the interpreter's report
(lines ``import time: SELF | CUMULATIVE | NAME`` in microseconds, a module after those it
imported, nested two spaces deeper).
The page names the costliest imports and the module most of each (``costliest``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from harness.units import format_ns

MAX_BYTES = 16 * 2**20  # of the report copied: a suite imports thousands of modules, a line each
LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)([A-Za-z_][\w.]*)\s*$")
SHOWN = 3
# A line ``costliest`` writes, and no other (a page shows it as markdown).
SAID = re.compile(
    r"`import [\w.]{1,200}` [0-9.e+]{1,8} [µmn]?s(, of it `[\w.]{1,200}` [0-9.e+]{1,8} [µmn]?s)?"
)


@dataclass
class Imported:
    """One module's import: its own time and that of what it imported, in microseconds."""

    name: str
    self_us: int
    cumulative_us: int
    children: list[Imported] = field(default_factory=list)

    def within(self) -> list[Imported]:
        return [each for child in self.children for each in (child, *child.within())]


def parse(text: str) -> list[Imported]:
    """A ``-X importtime`` report's top-level imports with their trees; other lines passed over."""
    pending: list[tuple[int, Imported]] = []
    for line in text.splitlines():
        found = LINE.match(line)
        if found is None:
            continue
        own, cumulative, indent, name = found.groups()
        depth = len(indent) // 2
        module = Imported(name, int(own), int(cumulative))
        while pending and pending[-1][0] > depth:  # printed before it: what it imported
            module.children.insert(0, pending.pop()[1])
        pending.append((depth, module))
    return [module for _, module in pending]


def costliest(text: str) -> list[str]:
    """The ``SHOWN`` costliest top-level imports, each with the module below it most of it: "`import
    sif2jax` 56 s, of it `sif2jax.cutest._constrained_minimisation.cleuven7` 45 s"."""
    lines = []
    for top in sorted(parse(text), key=lambda m: -m.cumulative_us)[:SHOWN]:
        said = f"`import {top.name}` {format_ns(top.cumulative_us * 1e3)}"
        heaviest = max(top.within(), key=lambda m: m.self_us, default=None)
        if heaviest is not None and heaviest.self_us > top.self_us:
            said += f", of it `{heaviest.name}` {format_ns(heaviest.cumulative_us * 1e3)}"
        lines.append(said)
    return lines
