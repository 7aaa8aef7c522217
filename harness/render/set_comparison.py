"""The ``compare`` command's output: the comparison of two result sets as terminal text and as markdown."""

from __future__ import annotations

from harness.analysis.set_comparison import Pair, SetComparison
from harness.render.tables import (
    METHOD_ANCHOR,
    METHOD_HEADING,
    STATISTICS_HEADERS,
    markdown_table,
    rule_line,
    rule_text,
    statistics_cells,
    text_table,
)
from harness.render.text import code_span, inline, terminal


def _rows(pair: Pair, markdown: bool) -> list[list[str]]:
    return [[m.key.label(), *statistics_cells(m.comparison, markdown)] for m in pair.metrics]


def render_text(comparison: SetComparison) -> str:
    """For a terminal: stored strings with their control characters (an escape sequence) replaced."""
    a, b = terminal(comparison.a.describe()), terminal(comparison.b.describe())
    # The rule in one line up front and in full once, after the tables: the tables are what a reader came for.
    lines = [
        f"A: {a}",
        f"B: {b}",
        "",
        rule_line(comparison.thresholds, cells=False).replace("*", ""),
        "",
    ]
    for pair in comparison.pairs:
        lines += [terminal(pair.title()), *(f"  note: {terminal(n)}" for n in pair.notes)]
        lines += [text_table(_rows(pair, markdown=False), ["metric", *STATISTICS_HEADERS]), ""]
    if comparison.not_compared:
        lines += ["Not compared:", *(f"  - {terminal(n)}" for n in comparison.not_compared), ""]
    lines += [f"{METHOD_HEADING}: {rule_text(comparison.thresholds).replace('*', '')}", ""]
    lines.append(comparison.summary())
    worse = comparison.worse()
    lines.append(
        "Worse in B: " + terminal("; ".join(worse))
        if worse
        else "Nothing got significantly worse in B."
    )
    return "\n".join(lines) + "\n"


def render_markdown(comparison: SetComparison) -> str:
    lines = [
        "# Comparison of two result sets",
        "",
        f"- **A**: {code_span(comparison.a.describe())}",
        f"- **B**: {code_span(comparison.b.describe())}",
        "",
        f"{rule_line(comparison.thresholds, cells=False)} [{METHOD_HEADING}](#{METHOD_ANCHOR}) says how.",
        "",
    ]
    for pair in comparison.pairs:
        lines += [f"## {inline(pair.title())}", ""]
        lines += [f"> {inline(n)}" for n in pair.notes] + ([""] if pair.notes else [])
        lines += [markdown_table(_rows(pair, markdown=True), ["metric", *STATISTICS_HEADERS]), ""]
    if comparison.broken or comparison.not_compared:
        lines += ["## Not compared", ""]
        lines += [f"- **broken in B**: {inline(n)}" for n in comparison.broken]
        lines += [f"- {inline(n)}" for n in comparison.not_compared]
        lines.append("")
    worse = comparison.worse()
    lines += [comparison.summary(), ""]
    lines += [
        f"**Worse in B**: {inline('; '.join(worse))}"
        if worse
        else "Nothing got significantly worse in B.",
        "",
    ]
    lines += [f"## {METHOD_HEADING}", "", rule_text(comparison.thresholds), ""]
    return "\n".join(lines)
