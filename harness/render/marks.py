"""Caveats as short marks with a legend, in the terminal and in the reports' tables.

A comparison's caveats (``Comparison.flags``) are sentences, the same few for most metrics of a run:
repeated in every row they made tables a thousand columns wide.  Each kind gets a letter; a table
shows the letters and its legend says each once.  The sentences themselves stay in the JSON
(``flags``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from harness.analysis.metrics import SEPARATE_UNDER_LOAD
from harness.analysis.processes import UPPER_ESTIMATE
from harness.analysis.significance import Comparison, Thresholds


@dataclass(frozen=True)
class Mark:
    letter: str
    meaning: str


def _marks(thresholds: Thresholds) -> list[tuple[str, Mark]]:
    """(what the caveat's sentence holds, its mark), the first that matches a sentence marks it."""
    return [
        (SEPARATE_UNDER_LOAD, Mark("L", "separate runs, one measured under load: no verdict")),
        (UPPER_ESTIMATE, Mark("u", "the ratio is an upper estimate: it barely passed the test")),
        ("too few processes", Mark("f", f"fewer than {thresholds.min_processes} processes a side")),
        (
            "process medians vary",
            Mark("v", f"process medians vary by more than {thresholds.max_between_cv:.0%}"),
        ),
        (
            "of median within processes",
            Mark(
                "w", f"IQR within processes above {thresholds.max_relative_iqr:.0%} of the median"
            ),
        ),
        (
            "measured under load",
            Mark("l", "processes measured while other work loaded the machine"),
        ),
        ("ranks of the process medians", Mark("r", "the rank test of the process medians fails")),
        ("median", Mark("0", "a median zero or below: no test")),
    ]


OTHER = Mark("*", "another caveat: the report's JSON names it")


def marks_of(comparison: Comparison, thresholds: Thresholds) -> list[Mark]:
    """The marks of a comparison's caveats, each once, in the legend's order."""
    known = _marks(thresholds)
    found = {
        next((mark for text, mark in known if text in flag), OTHER) for flag in comparison.flags
    }
    order = [mark for _, mark in known] + [OTHER]
    return [mark for mark in order if mark in found]


def marks_text(comparison: Comparison, thresholds: Thresholds) -> str:
    """``v l``: the cell of a table's *caveats* column."""
    return " ".join(mark.letter for mark in marks_of(comparison, thresholds))


def legend(comparisons: Iterable[Comparison], thresholds: Thresholds) -> str:
    """``caveats: v process medians vary by more than 10% · l processes measured …``; or empty."""
    used = {mark for c in comparisons for mark in marks_of(c, thresholds)}
    order = [mark for _, mark in _marks(thresholds)] + [OTHER]
    shown = [f"{mark.letter} {mark.meaning}" for mark in order if mark in used]
    return f"caveats: {' · '.join(shown)}" if shown else ""
