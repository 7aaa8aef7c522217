"""Text for comparisons and GitHub-flavoured markdown tables.  A comparison's caveats are sentences,
the same few for most metrics: repeated in every row they made tables a thousand columns wide, so a
table shows each as a letter (``marks_of``) and its legend says each once; the JSON keeps them."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from tabulate import tabulate

from harness.analysis.processes import UPPER_ESTIMATE
from harness.analysis.shapes import SEPARATE_UNDER_LOAD
from harness.analysis.significance import DEFAULT_THRESHOLDS, Comparison, Thresholds, Verdict
from harness.render.text import Markdown, inline, one_line
from harness.units import format_p

NOISY_MARK = "⚠"


@dataclass(frozen=True)
class Mark:
    letter: str
    meaning: str


def _marks(thresholds: Thresholds) -> list[tuple[str, Mark]]:
    cv, iqr = f"{thresholds.max_between_cv:.0%}", f"{thresholds.max_relative_iqr:.0%} of the median"
    return [
        (SEPARATE_UNDER_LOAD, Mark("L", "separate runs, one measured under load: no verdict")),
        (UPPER_ESTIMATE, Mark("u", "the ratio is an upper estimate: it barely passed the test")),
        ("too few processes", Mark("f", f"fewer than {thresholds.min_processes} processes a side")),
        ("process medians vary", Mark("v", f"process medians vary by more than {cv}")),
        ("of median within processes", Mark("w", f"IQR within processes above {iqr}")),
        (
            "measured under load",
            Mark("l", "processes measured while other work loaded the machine"),
        ),
        ("ranks of the process medians", Mark("r", "the rank test of the process medians fails")),
        ("median", Mark("0", "a median zero or below: no test")),
    ]


OTHER = Mark("*", "another caveat: the report's JSON names it")


def marks_of(flags: Iterable[str], thresholds: Thresholds) -> list[Mark]:
    known = _marks(thresholds)
    found = {next((mark for text, mark in known if text in flag), OTHER) for flag in flags}
    return [mark for mark in [*(mark for _, mark in known), OTHER] if mark in found]


def marks_text(comparison: Comparison, thresholds: Thresholds) -> str:
    return " ".join(mark.letter for mark in marks_of(comparison.flags, thresholds))


def legend(comparisons: Iterable[Comparison], thresholds: Thresholds) -> str:
    used = marks_of([flag for c in comparisons for flag in c.flags], thresholds)
    shown = [f"{mark.letter} {mark.meaning}" for mark in used]
    return f"caveats: {' · '.join(shown)}" if shown else ""


def said_text(comparison: Comparison, markdown: bool = True) -> str:
    """In markdown, bold if worse (slower, or higher)."""
    said = comparison.said
    return f"**{said}**" if markdown and comparison.verdict is Verdict.SLOWER else said


def verdict_text(comparison: Comparison) -> str:
    text = said_text(comparison)
    return f"{text} {NOISY_MARK}" if comparison.noisy else text


def comparison_cell(comparison: Comparison) -> Markdown:
    """One release's cell in a metric × release table: median, ratio, interval, verdict."""
    return Markdown(
        f"{comparison.shown[1]} {comparison.ratio_cell or 'n/a'} "
        f"[{comparison.interval_cell}] {verdict_text(comparison)}"
    )


STATISTICS_HEADERS = [
    "processes A/B",
    "samples A/B",
    "median A",
    "median B",
    "ratio B/A",
    "interval",
    "p",
    "between A/B",
    "within A/B",
    "verdict",
    "caveats",
]


def format_share(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:.1%}"


def statistics_cells(
    comparison: Comparison, thresholds: Thresholds = DEFAULT_THRESHOLDS
) -> list[str]:
    """The full statistics of one comparison, as table cells under STATISTICS_HEADERS."""
    a, b = comparison.spreads
    return [
        f"{a.processes}/{b.processes}",
        f"{a.samples}/{b.samples}",
        *comparison.shown,
        comparison.ratio_cell or "n/a",
        comparison.interval_cell,
        format_p(comparison.p_value),
        f"{format_share(a.between)}/{format_share(b.between)}",
        f"{format_share(a.within)}/{format_share(b.within)}",
        Markdown(said_text(comparison)),
        marks_text(comparison, thresholds),
    ]


def rule_text(thresholds: Thresholds) -> str:
    return (
        "Each side is measured in separate processes, since each process sets a level of its own; "
        "a process counts as the median of its raw samples and a side's figure is the median of "
        f"its process medians. Ratios are B's figure over A's with a {thresholds.confidence:.0%} "
        f"hierarchical bootstrap interval ({thresholds.resamples} seeded resamples: processes "
        "drawn with replacement, then samples within each). A verdict (*faster*, *slower*) needs a "
        f"ratio beyond ×{thresholds.factor:g}, Welch's t-test on the log process medians at p < "
        f"{thresholds.alpha:g}, and at least {thresholds.min_processes} processes a side; "
        "*unchanged* needs the whole interval inside "
        f"×{1 / thresholds.factor:.3g}–×{thresholds.factor:g}; anything else is *undecided* (too "
        "few processes, a wide interval). Sides measured in separate runs, not interleaved in one, "
        "each sit at a level of their own (the load and neighbours that run met): the test allows "
        f"for a spread of {thresholds.invocation_spread:.1%} (log standard deviation) between runs "
        "(`--invocation-spread`; `calibrate` measures this machine's), and gives no verdict where "
        "a side was also measured under load; interleaved sides share one level. "
        "*Between* is the coefficient of "
        "variation of a side's process medians, *within* the median of its processes' IQR / "
        f"median. {NOISY_MARK} marks a caveat: too few processes, process medians varying by more "
        f"than {thresholds.max_between_cv:.0%}, IQR within processes above "
        f"{thresholds.max_relative_iqr:.0%} of the median, or processes measured under load."
    )


# The one place that explains the statistics in full: the index's section of this heading; case
# pages link to it by its anchor (GitHub's, the heading lower-cased with spaces as hyphens).
METHOD_HEADING = "How the numbers are made"
METHOD_ANCHOR = "how-the-numbers-are-made"


def rule_line(thresholds: Thresholds, cells: bool = True, index: str = "") -> str:
    """The rule in one sentence and the link to ``rule_text``'s section on the ``index`` page;
    ``cells``: for tables of ``comparison_cell``, else of ``statistics_cells``."""
    how = (
        f"the bracket is its {thresholds.confidence:.0%} interval; {NOISY_MARK} marks a caveat"
        if cells
        else f"*interval* is its {thresholds.confidence:.0%} interval"
    )
    return (
        "A verdict, *slower* or *faster*, needs a ratio (B over A) beyond "
        f"×{thresholds.factor:g} at p < {thresholds.alpha:g} over at least "
        f"{thresholds.min_processes} processes a side; {how}. "
        f"[{METHOD_HEADING}]({index}#{METHOD_ANCHOR}) says how."
    )


def _cell(value: Any) -> str:
    # A cell is literal text unless a renderer composed it as markdown; either way a pipe would end
    # the cell and a newline the row.
    text = one_line(value) if isinstance(value, Markdown) else inline(value)
    return text.replace("|", "\\|")


def markdown_table(rows: Sequence[Sequence[Any]], headers: Sequence[str]) -> str:
    clean = [[_cell(v) for v in row] for row in rows]
    return tabulate(
        clean, headers=[_cell(h) for h in headers], tablefmt="github", disable_numparse=True
    )
