"""The figure lines an exported script prints, and reading them back: the format's one owner.

One ``metric PROGRAM METRIC median=.. min=.. max=.. n=..`` line a figure (nanoseconds), a ``fact
NAME JSON`` line per fact, then ``claim holds: True|False — evidence``. The writer is inlined into
every exported script, so this imports the standard library only.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

# A printed figure of more digits is no measurement, and no result could hold it: the bound of
# ``harness.store.bounds.MAX_INTEGER_DIGITS``, repeated since this module is inlined with the
# standard library alone (a test keeps the two equal).
FIGURE_DIGITS = 19
CLAIM_PREFIX = "claim holds: "
FACT_PREFIX = "fact "
_FIGURE = re.compile(
    r"metric (?P<program>\S+) (?P<metric>.+) median=(?P<median>\d+) min=(?P<min>\d+) "
    r"max=(?P<max>\d+) n=(?P<n>\d+)"
)


def figure_line(program: str, metric: str, values: Sequence[float]) -> str:
    ordered = sorted(values)
    spread = f"min={ordered[0]:.0f} max={ordered[-1]:.0f} n={len(ordered)}"
    return f"metric {program} {metric} median={statistics.median(ordered):.0f} {spread}"


@dataclass(frozen=True)
class Figure:
    """One figure line as printed: the summary of ``n`` samples the script took."""

    program: str
    metric: str
    median: int
    min: int
    max: int
    n: int


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
    refused: list[str] = field(default_factory=list)  # figure lines left out, each with why


def _figure(found: re.Match[str]) -> Figure | str:
    """The figure of a matched line, or why not: a field of more digits than a measurement has."""
    fields = {name: found[name] for name in ("median", "min", "max", "n")}
    long = [name for name, digits in fields.items() if len(digits) > FIGURE_DIGITS]
    if long:
        digits = len(fields[long[0]])
        line = f"figure line of {found['program'][:40]} {found['metric'][:40]}"
        return f"{line}: its {long[0]} has {digits:,} digits (at most {FIGURE_DIGITS}); left out"
    return Figure(found["program"], found["metric"], **{n: int(d) for n, d in fields.items()})


def parse_output(text: str) -> Figures:
    figures = Figures()
    for line in text.splitlines():
        if found := _FIGURE.fullmatch(line.strip()):
            figure = _figure(found)
            if isinstance(figure, str):
                figures.refused.append(figure)
                continue
            key = (figure.program, figure.metric)
            figures.medians[key] = float(figure.median)
            figures.counts[key] = figure.n
            figures.lines.append(figure)
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
