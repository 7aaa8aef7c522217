"""``compare``'s output: one screen (each pair's metrics in reading order, figures, ratio, verdict,
caveats as marks; the unchanged counted where all would not fit); markdown: every statistic."""

from __future__ import annotations

from collections import Counter

from harness.analysis.metrics import MetricComparison
from harness.analysis.set_comparison import Pair, SetComparison
from harness.analysis.significance import MOVED, Comparison, Verdict
from harness.metric_names import reading_rank
from harness.render import screen
from harness.render.tables import (
    METHOD_HEADING,
    STATISTICS_HEADERS,
    legend,
    markdown_table,
    marks_text,
    rule_line,
    rule_text,
    statistics_cells,
)
from harness.render.text import code_span, inline, terminal
from harness.units import sizes_text

SHORT_HEADERS = ["metric", "A", "B", "B/A", "verdict", "caveats"]
# Changed first, then what more measurement could decide, then no change.
_VERDICT_ORDER = {
    Verdict.SLOWER: 0,
    Verdict.CHANGED: 0,
    Verdict.FASTER: 1,
    Verdict.UNDECIDED: 2,
    Verdict.UNCHANGED: 3,
}
NOTHING_WORSE = "Nothing got significantly worse in B"
# A screen's lines beside the pairs: summary, A and B, the legend, the rule, verdict, report.
_FRAME_LINES = 12


def _ordered(pair: Pair) -> list[MetricComparison]:
    return sorted(pair.metrics, key=lambda m: reading_rank(m.key))


def _rank(comparison: Comparison) -> int:
    return -1 if comparison.worse else _VERDICT_ORDER[comparison.verdict]


def _short_row(m: MetricComparison, comparison: SetComparison) -> list[str]:
    found = m.comparison
    marks = marks_text(found, comparison.thresholds)
    return [m.key.metric_name, *found.shown, found.ratio_cell or "n/a", found.said, marks]


def _counts(metrics: list[MetricComparison]) -> str:
    found = Counter(m.comparison.verdict for m in metrics)
    return ", ".join(f"{found[v]} {v}" for v in _VERDICT_ORDER if found[v])


def _pair_lines(pair: Pair, comparison: SetComparison, folded: bool) -> list[str]:
    """One pair: title, notes, metrics; ``folded``: only those that changed, a pair without one in a
    line."""
    metrics = _ordered(pair)
    changed = [m for m in metrics if m.comparison.verdict in MOVED]
    if folded and not changed:
        a = pair.a.result
        where = f"{a.case} {sizes_text(a.sizes)} · profile {a.profile}"
        return [screen.shorten(f"{terminal(where)}: no change ({_counts(metrics)})")]
    lines = screen.wrap(terminal(pair.title()), indent="  ", lines=2)
    notes = [
        f"  {line}"
        for n in pair.notes
        for line in screen.wrap(f"note: {n}", screen.WIDTH - 2, indent="  ", lines=2)
    ]
    if pair.ending is not None:
        notes.insert(0, f"  how the processes ended: {pair.ending.said}")
    kept = 1 if folded else 4
    lines += notes[:kept]
    if len(notes) > kept:
        lines.append(f"  and {len(notes) - kept} more lines of notes: the markdown has them")
    shown = sorted(changed, key=lambda m: _rank(m.comparison)) if folded else metrics
    lines += screen.table([_short_row(m, comparison) for m in shown], SHORT_HEADERS, indent="  ")
    rest = [m for m in metrics if m not in shown]
    if rest:
        lines.append(f"  and {len(rest)} more: {_counts(rest)}")
    return lines


def _worse_first(pair: Pair) -> int:
    return min((_rank(m.comparison) for m in pair.metrics), default=3)


def verdict_line(comparison: SetComparison) -> str:
    """The verdict of the whole comparison (the exit status says the same)."""
    if worse := comparison.worse(short=True):
        return "Worse in B: " + "; ".join(worse)
    if not (undecided := comparison.verdicts()[Verdict.UNDECIDED]):
        return f"{NOTHING_WORSE}."
    return f"{NOTHING_WORSE}; {undecided} comparison(s) undecided, not unchanged."


def render_text(comparison: SetComparison, report: str | None = None) -> str:
    """One screen; ``report``: where the markdown went, said last (else how to ask for it)."""
    budget = screen.LINES - _FRAME_LINES
    blocks = [_pair_lines(p, comparison, folded=False) for p in comparison.pairs]
    if sum(len(b) + 1 for b in blocks) > budget:
        pairs = sorted(comparison.pairs, key=_worse_first)
        blocks = [_pair_lines(p, comparison, folded=True) for p in pairs]
    body = [line for block in blocks for line in [*block, *([""] if len(block) > 1 else [])]]
    for title, said in (
        ("Worse in B, nothing to compare:", comparison.broken),
        ("Not compared:", comparison.not_compared),
        ("Left out, unreadable:", comparison.left_out),
    ):
        body += [title, *(f"  - {terminal(n)}" for n in said), ""] if said else []
    body = screen.budgeted(body, budget, "… and {n} more lines: the markdown lists every pair")
    thresholds = comparison.thresholds
    sides = [f"A: {terminal(comparison.a.describe())}", f"B: {terminal(comparison.b.describe())}"]
    lines = [*map(screen.shorten, [comparison.summary(), *sides]), "", *body]
    if lines[-1]:
        lines.append("")
    marks = legend((m.comparison for p in comparison.pairs for m in p.metrics), thresholds)
    lines += screen.wrap(marks, indent="  ", lines=3) if marks else []
    lines.append(
        f"slower/faster: B/A beyond ×{thresholds.factor:g} at p < {thresholds.alpha:g}, at least "
        f"{thresholds.min_processes} processes a side"
    )
    lines.append(screen.shorten(terminal(verdict_line(comparison))))
    lines.append(
        f"Report: {terminal(report)}"
        if report
        else "Every statistic (processes, samples, intervals, p, spreads): "
        "--markdown FILE, --json FILE"
    )
    return "\n".join(lines) + "\n"


def render_markdown(comparison: SetComparison) -> str:
    lines = [
        "# Comparison of two result sets",
        "",
        f"- **A**: {code_span(comparison.a.describe())}",
        f"- **B**: {code_span(comparison.b.describe())}",
        "",
        rule_line(comparison.thresholds, cells=False),
        "",
    ]
    for pair in comparison.pairs:
        lines += [f"## {inline(pair.title())}", ""]
        lines += [f"> {inline(n)}" for n in pair.notes] + ([""] if pair.notes else [])
        rows = [
            [m.key.label(), *statistics_cells(m.comparison, thresholds=comparison.thresholds)]
            for m in _ordered(pair)
        ]
        lines += [markdown_table(rows, ["metric", *STATISTICS_HEADERS]), ""]
        marks = legend((m.comparison for m in pair.metrics), comparison.thresholds)
        lines += [inline(marks), ""] if marks else []
        if pair.ending is not None:
            lines += [f"How the processes ended: {inline(pair.ending.said)}", ""]
    if comparison.broken or comparison.not_compared:
        lines += ["## Not compared", ""]
        lines += [f"- **worse in B**: {inline(n)}" for n in comparison.broken]
        lines += [f"- {inline(n)}" for n in comparison.not_compared]
        lines.append("")
    if comparison.left_out:
        lines += ["## Left out, unreadable", ""]
        lines += [f"- {inline(n)}" for n in comparison.left_out] + [""]
    worse = comparison.worse()
    said = f"**Worse in B**: {inline('; '.join(worse))}" if worse else verdict_line(comparison)
    lines += [comparison.summary(), "", said, ""]
    lines += [f"## {METHOD_HEADING}", "", rule_text(comparison.thresholds), ""]
    return "\n".join(lines)
