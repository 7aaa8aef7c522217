"""One case's page: claim by release and backend, timings by release within each
comparison group (one machine each), exact compiled facts across machines, plots, and
every run in detail.  Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from harness.analysis.claims import claim_rows, mark, ranges_text
from harness.analysis.groups import DEVICE_FACT, ComparisonGroup, differences, host_differences
from harness.analysis.metrics import GroupComparison, hlo_fact_names, hlo_facts
from harness.analysis.report_model import CaseModel
from harness.analysis.significance import Thresholds
from harness.render.plots import SCALING, WALL, DrawnPlots
from harness.render.run_detail import run_section
from harness.render.tables import STATISTICS_HEADERS, comparison_cell, markdown_table, rule_text, statistics_cells
from harness.store.results import Newest, StoredResult
from harness.units import format_ns

_ABSENT = object()  # "no previous release had this fact", distinct from a fact whose value is None


def claim_table(runs: Sequence[Newest], order: Sequence[str]) -> str:
    """Rows (profile, backend, sizes), columns releases: ✓ / ✗ / status, and the ranges in words."""
    rows = claim_rows(result for result, _ in runs)
    releases = [r for r in order if any(r in outcomes for outcomes in rows.values())]
    table = [
        [profile, backend, sizes, *(mark(outcomes.get(r)) for r in releases), ranges_text(outcomes, releases)]
        for (_, profile, backend, sizes), outcomes in rows.items()
    ]
    return markdown_table(table, ["profile", "backend", "sizes", *releases, "in words"])


def timing_table(comparison: GroupComparison) -> str:
    releases = comparison.group.releases
    rows = []
    for key in comparison.keys:
        row = [key.label()]
        for release in releases:
            samples = comparison.series[release].get(key)
            found = comparison.comparisons.get(release, {}).get(key)
            if release == comparison.baseline:
                baseline = " (baseline)" if len(releases) > 1 else ""
                row.append(f"{format_ns(samples.figure)}{baseline}" if samples else "–")
            elif found is not None:
                row.append(comparison_cell(found))
            else:  # a metric the baseline lacks: shown, but compared with nothing
                row.append(f"{format_ns(samples.figure)} (no baseline)" if samples else "–")
        rows.append(row)
    return markdown_table(rows, ["metric", *(f"jax {r}" for r in releases)])


def statistics_table(comparison: GroupComparison) -> str:
    rows = [
        [key.label(), f"jax {release}", *statistics_cells(found)]
        for release, by_key in comparison.comparisons.items()
        for key, found in by_key.items()
    ]
    return markdown_table(rows, ["metric", "B", *STATISTICS_HEADERS])


def format_fact(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):  # before int: a bool is an int
        return str(value)
    if isinstance(value, list):
        return ", ".join("unknown" if v is None else format_fact(v) for v in value) or "none"
    if isinstance(value, float):
        return f"{value:,.0f}" if value.is_integer() else f"{value:.6g}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def hlo_table(runs: Sequence[StoredResult]) -> str:
    """Exact compiled facts, releases as columns; bold where a value differs from the previous release."""
    facts = {run.release: hlo_facts(run) for run in runs}
    functions = list(dict.fromkeys(name for by_name in facts.values() for name in by_name))
    rows = []
    for function in functions:
        names = hlo_fact_names(by_name[function] for by_name in facts.values() if function in by_name)
        for fact in names:
            row = [f"{function} · {fact.replace('_', ' ')}"]
            previous: Any = _ABSENT
            for run in runs:
                record = facts[run.release].get(function)
                if record is None or fact not in record:
                    row.append("–")
                    continue
                value = record[fact]
                text = format_fact(value)
                row.append(f"**{text}**" if previous is not _ABSENT and value != previous else text)
                previous = value
            rows.append(row)
    if not rows:
        return ""
    return markdown_table(rows, ["function · fact", *(f"jax {run.release}" for run in runs)])


def plot_lines(comparison: GroupComparison, plots: DrawnPlots) -> list[str]:
    key = comparison.group.key
    lines = []
    for kind, alt in ((WALL, "median wall time by release"), (SCALING, "time per call by device count")):
        link = plots.link(key, kind)
        if link:
            lines += [f"![{key.case}: {alt}]({link})", ""]
    return lines


def group_section(comparison: GroupComparison, plots: DrawnPlots) -> str:
    group = comparison.group
    lines = [f"### {group.key.describe()}", ""]
    if len(group.runs) == 1:
        lines += [f"Only jax {group.releases[0]} ran in this group: nothing to compare yet.", ""]
    else:
        lines += [f"Baseline (A): jax {comparison.baseline}, {comparison.baseline_reason}.", ""]
    hosts = host_differences([(f"jax {run.release}", run) for run in group.runs])
    if hosts:
        lines += ["> [!WARNING]", "> Measured on different machines, so ratios mix releases and hosts:"]
        lines += [f"> - {text}" for text in hosts]
        lines.append("")
    lines += [timing_table(comparison), ""]
    lines += plot_lines(comparison, plots)
    if comparison.comparisons:
        lines += [
            "<details><summary>Statistics in full</summary>",
            "",
            statistics_table(comparison),
            "",
            "</details>",
            "",
        ]
    return "\n".join(lines)


def structure_section(group: ComparisonGroup) -> str:
    """The exact facts of one group across machines, or nothing when no run recorded any."""
    table = hlo_table(group.runs)
    if not table:
        return ""
    lines = [f"### {group.key.describe()}", ""]
    machines = {run.machine for run in group.runs}
    if len(machines) > 1:
        lines += [f"From {len(machines)} machines: counted facts do not depend on a machine's speed.", ""]
    devices = host_differences([(f"jax {run.release}", run) for run in group.runs], [DEVICE_FACT])
    if devices:
        lines += ["> [!NOTE]", "> Compiled for different devices, which may explain a difference:"]
        lines += [f"> - {text}" for text in devices]
        lines.append("")
    return "\n".join([*lines, table, ""])


def source_text(source: str) -> str:
    """Where a case comes from, as markdown: a link for a plain https URL, else the text in a code span
    (it comes from a result file, which may hold anything)."""
    if re.fullmatch(r"https://[^\s<>`]+", source):
        return f"<{source}>"
    return f"`{source.replace('`', chr(39))}`"


def render_case(model: CaseModel, order: Sequence[str], thresholds: Thresholds, plots: DrawnPlots) -> str:
    case, runs, comparisons, structures = model.case, model.runs, model.comparisons, model.structures
    first = runs[0].result.result
    lines = [f"# {case}", "", "[All cases](index.md)", "", f"**Claim.** {first.claim_statement}", ""]
    if first.source:
        lines += [f"**Source.** {source_text(first.source)}", ""]
    elif first.discussion:
        lines += [f"Source discussion: `{first.discussion}`", ""]
    lines += ["## Claim by release", "", claim_table(runs, order), "", "## Timings by release", ""]
    if comparisons:
        lines += [rule_text(thresholds), ""]
        if plots.missing_reason:
            lines += [f"Plots not drawn: {plots.missing_reason}.", ""]
        if len(comparisons) > 1:
            differ = ", ".join(differences([c.group.key for c in comparisons]))
            lines += [
                f"The {len(comparisons)} groups below ran under different conditions and are not compared "
                f"with each other; they differ in {differ}.",
                "",
            ]
        lines += [group_section(c, plots) for c in comparisons]
    else:
        lines += ["No run of this case finished: nothing to time.", ""]
    sections = [text for text in map(structure_section, structures) if text]
    if sections:
        lines += [
            "## Compiled structure by release (exact)",
            "",
            "Counted from the compiled HLO, so free of timing noise and comparable across machines; **bold**: "
            "differs from the release before.",
            "",
            *sections,
        ]
    lines += ["## Runs in detail", ""]
    lines += [run_section(result, older) for result, older in runs]
    return "\n".join(lines)
