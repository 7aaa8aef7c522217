"""The figure lines an exported script prints, and reading them back: the format's one owner.

Figures are nanoseconds: one ``metric PROGRAM METRIC median=.. min=.. max=.. n=..`` line
each, a ``fact NAME JSON`` line per entry of the case's ``facts()`` if it has one, then
``claim holds: True|False — evidence``.  The writer (``figure_line``) is inlined into every
exported script by ``harness.upstream.export``, so this module imports only the standard
library; the reader (``parse_output``) serves the issue draft and ``--script`` runs alike.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

CLAIM_PREFIX = "claim holds: "
FACT_PREFIX = "fact "
_FIGURE = re.compile(
    r"metric (?P<program>\S+) (?P<metric>.+) median=(?P<median>\d+) min=(?P<min>\d+) max=(?P<max>\d+) n=(?P<n>\d+)"
)


def figure_line(program: str, metric: str, values: Sequence[float]) -> str:
    ordered = sorted(values)
    return (
        f"metric {program} {metric} median={statistics.median(ordered):.0f} "
        f"min={ordered[0]:.0f} max={ordered[-1]:.0f} n={len(ordered)}"
    )


@dataclass(frozen=True)
class Figure:
    """One figure line as printed: the summary of ``n`` samples the script took."""

    program: str
    metric: str
    median: int
    min: int
    max: int
    n: int

    def as_dict(self) -> dict[str, Any]:
        return {"program": self.program, "metric": self.metric, "median": self.median, "min": self.min,
                "max": self.max, "n": self.n}  # fmt: skip


@dataclass
class Figures:
    """What an exported script printed, read back."""

    header: dict[str, str] = field(default_factory=dict)
    medians: dict[tuple[str, str], float] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)
    counts: dict[tuple[str, str], int] = field(default_factory=dict)
    holds: bool | None = None
    evidence: str = ""
    lines: list[Figure] = field(default_factory=list)  # every figure line, in the order printed


def parse_output(text: str) -> Figures:
    figures = Figures()
    for line in text.splitlines():
        found = _FIGURE.fullmatch(line.strip())
        if found:
            key = (found["program"], found["metric"])
            figures.medians[key] = float(found["median"])
            figures.counts[key] = int(found["n"])
            figures.lines.append(
                Figure(key[0], key[1], int(found["median"]), int(found["min"]), int(found["max"]), int(found["n"]))
            )
        elif line.startswith(FACT_PREFIX):
            name, _, value = line[len(FACT_PREFIX) :].partition(" ")
            try:
                figures.facts[name] = json.loads(value)
            except ValueError:  # not a line the script printed: keep it as text
                figures.facts[name] = value
        elif line.startswith(CLAIM_PREFIX):
            verdict, _, evidence = line[len(CLAIM_PREFIX) :].partition(" — ")
            figures.holds = verdict.strip() == "True"
            figures.evidence = evidence.strip()
        elif line.startswith("jax ") and not figures.header:
            words = line.split()
            figures.header = dict(zip(words[::2], words[1::2], strict=False))
    return figures
