"""One case's page: claim by release, timings by release within each group (one machine each), exact
compiled facts across machines, plots, and every run in detail."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from harness.analysis.report_model import (
    CaseModel,
    ClaimTable,
    FactCell,
    FactRow,
    StructureGroup,
    Thresholds,
    TimingGroup,
)
from harness.render.plots import SCALING, WALL, DrawnPlots
from harness.render.run_detail import run_section
from harness.render.tables import (
    STATISTICS_HEADERS,
    comparison_cell,
    legend,
    markdown_table,
    rule_line,
    statistics_cells,
)
from harness.render.text import Markdown, code_span, folded, inline


def claim_table(claims: ClaimTable, cases: Sequence[str] = ()) -> str:
    """Rows (profile, backend, sizes), columns releases: ✓ / ✗ / status, and the ranges in words
    (``cases``: a first column naming each row's case, for the index)."""
    table = [
        [*cases[n : n + 1], line.profile, line.backend, line.sizes, *line.marks, line.in_words]
        for n, line in enumerate(claims.lines)
    ]
    headers = ["profile", "backend", "sizes", *claims.releases, "in words"]
    return markdown_table(table, ["case", *headers] if cases else headers)


def figures_table(claims: ClaimTable, cases: Sequence[str] = ()) -> str:
    """The discussion's figure (quoted) beside ours (``cases``: as ``claim_table``'s)."""
    table = [
        [
            *cases[number : number + 1],
            figure.profile,
            figure.backend,
            figure.sizes,
            figure.theirs,
            f"jax {figure.release} on {figure.devices}: {figure.ours}",
        ]
        for number, figure in enumerate(claims.figures)
    ]
    headers = ["profile", "backend", "sizes", "the discussion's own run (quoted)", "ours"]
    headers = ["case", *headers] if cases else headers
    return markdown_table(table, headers) if table else ""


def timing_table(timing: TimingGroup) -> str:
    comparison = timing.comparison
    releases = comparison.group.releases
    rows = []
    for key in comparison.keys:
        row = [key.label()]
        for release in releases:
            samples = comparison.series[release].get(key)
            found = comparison.comparisons.get(release, {}).get(key)
            if release == comparison.baseline:
                baseline = " (baseline)" if len(releases) > 1 else ""
                row.append(f"{samples.shown(key)}{baseline}" if samples else "–")
            elif found is not None:
                row.append(comparison_cell(found))
            else:  # a metric the baseline lacks: shown, but compared with nothing
                row.append(f"{samples.shown(key)} (no baseline)" if samples else "–")
        rows.append(row)
    return markdown_table(rows, ["metric", *(f"jax {r}" for r in releases)])


def statistics_table(timing: TimingGroup, thresholds: Thresholds) -> str:
    found = [
        (key, release, comparison)
        for release, by_key in timing.comparison.comparisons.items()
        for key, comparison in by_key.items()
    ]
    rows = [
        [key.label(), f"jax {release}", *statistics_cells(c, thresholds=thresholds)]
        for key, release, c in found
    ]
    marks = legend((c for _, _, c in found), thresholds)
    table = markdown_table(rows, ["metric", "B", *STATISTICS_HEADERS])
    return f"{table}\n\n{inline(marks)}" if marks else table


def format_fact(value: Any) -> str:
    if value is None:  # a figure XLA did not give, or gave as its sentinel
        return "unknown"
    if isinstance(value, bool):  # before int: a bool is an int
        return str(value)
    if isinstance(value, list):
        return ", ".join("unknown" if v is None else format_fact(v) for v in value) or "none"
    if isinstance(value, float):
        return f"{value:,.0f}" if value.is_integer() else f"{value:.6g}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def fact_text(cell: FactCell | None) -> str:
    if cell is None:
        return "–"
    text = format_fact(cell.value)
    return Markdown(f"**{inline(text)}**") if cell.changed else text


def hlo_table(rows: Sequence[FactRow], releases: Sequence[str]) -> str:
    table = [
        [f"{row.function} · {row.fact.replace('_', ' ')}", *map(fact_text, row.cells)]
        for row in rows
    ]
    if not table:
        return ""
    return markdown_table(table, ["function · fact", *(f"jax {release}" for release in releases)])


PLOT_ALTS = {WALL: "median wall time by release", SCALING: "time per call by device count"}


def group_section(timing: TimingGroup, plots: DrawnPlots, thresholds: Thresholds) -> str:
    comparison = timing.comparison
    group = comparison.group
    lines = [f"### {inline(group.key.describe())}", ""]
    only = f"Only jax {inline(group.releases[0])} ran in this group: nothing to compare yet."
    base = f"Baseline (A): jax {inline(comparison.baseline)}, {inline(comparison.baseline_reason)}."
    lines += [only if len(group.runs) == 1 else base, ""]
    if timing.hosts:
        lines += [
            "> [!WARNING]",
            "> Measured on different machines, so ratios mix releases and hosts:",
        ]
        lines += [f"> - {inline(text)}" for text in timing.hosts]
        lines.append("")
    lines += [timing_table(timing), ""]
    for kind, alt in PLOT_ALTS.items():
        link = plots.link(timing.key, kind)
        lines += [f"![{inline(timing.key.case)}: {alt}]({link})", ""] if link else []
    if comparison.comparisons:
        lines += [folded("Statistics in full", statistics_table(timing, thresholds)), ""]
    return "\n".join(lines)


def structure_section(structure: StructureGroup) -> str:
    lines = [f"### {inline(structure.key.describe())}", ""]
    if structure.machines > 1:
        lines += [
            f"From {structure.machines} machines: counted facts do not depend on a machine's "
            "speed.",
            "",
        ]
    if structure.devices:
        lines += ["> [!NOTE]", "> Compiled for different devices, which may explain a difference:"]
        lines += [f"> - {inline(text)}" for text in structure.devices]
        lines.append("")
    return "\n".join([*lines, hlo_table(structure.rows, structure.releases), ""])


def source_text(source: str) -> str:
    """A link for a plain https URL, else a code span (a result file may hold anything)."""
    return f"<{source}>" if re.fullmatch(r"https://[^\s<>`]+", source) else code_span(source)


def render_case(
    model: CaseModel, thresholds: Thresholds, plots: DrawnPlots, index: str = "index.md"
) -> str:
    # The record of the case's first run states its claim and where it comes from.
    record = model.runs[0].stored.result
    title, claim = inline(model.case), inline(record.claim_statement)
    lines = [f"# {title}", "", f"[All cases]({index})", "", f"**Claim.** {claim}", ""]
    if record.source:
        lines += [f"**Source.** {source_text(record.source)}", ""]
    elif record.discussion:
        lines += [f"Source discussion: {code_span(record.discussion)}", ""]
    lines += ["## Claim by release", "", claim_table(model.claims), ""]
    if model.claims.figures:
        lines += [
            "At the sizes the discussion ran, what it printed beside what we measured (one "
            "process's evidence for the claim):",
            "",
            figures_table(model.claims),
            "",
        ]
    lines += ["## Timings by release", ""]
    if model.timings:
        lines += [rule_line(thresholds, index=index), ""]
        if plots.missing_reason:
            lines += [f"Plots not drawn: {plots.missing_reason}.", ""]
        if len(model.timings) > 1:
            lines += [
                f"The {len(model.timings)} groups below ran under different conditions and are not "
                f"compared with each other; they differ in {', '.join(model.differ)}.",
                "",
            ]
        lines += [group_section(t, plots, thresholds) for t in model.timings]
    else:
        lines += ["No run of this case finished: nothing to time.", ""]
    if model.structures:
        lines += [
            "## Compiled structure by release (exact)",
            "",
            "Counted from the compiled HLO, so free of timing noise and comparable across "
            "machines; **bold**: differs from the release before.",
            "",
            *map(structure_section, model.structures),
        ]
    lines += ["## Runs in detail", ""]
    lines += [run_section(run) for run in model.runs]
    return "\n".join(lines)
