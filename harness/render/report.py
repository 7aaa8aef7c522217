"""Markdown reports from a report model (``analysis.report_model``): ``index.md`` and a page per
case; loading, drawing and writing them is ``commands.report``'s."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from harness.analysis.report_model import (
    ClaimTable,
    ReportModel,
    RunView,
    TimingChange,
    TimingGroup,
)
from harness.host.environment import redact, scrub
from harness.render.calibration import noise_floor_sentence
from harness.render.case_page import claim_table, figures_table, render_case
from harness.render.plots import DrawnPlots
from harness.render.tables import METHOD_HEADING, markdown_table, rule_line, rule_text, verdict_text
from harness.render.text import Markdown, code_span, folded, inline
from harness.units import short_machine, sizes_text

INDEX = "index.md"
# Other commands write their reports into the same folder under these prefixes
# (``bisect-<case>-….md``): a case page never takes such a name.
OTHER_REPORTS = ("bisect-", "sweep-", "triage-", "search-")
# Past this many timing changes the rest are counted (the case pages list them): a short list.
MOST_CHANGES_LISTED = 12


def page_names(cases: Sequence[str]) -> dict[str, str]:
    """``<case>.md``, unless that is the index's, another report's or (case-folded, as macOS and
    Windows compare names) an earlier case's: then ``case-<case>.md`` or ``…-2.md``."""
    taken = {INDEX.casefold()}
    names = {}
    for case in cases:
        index = f"{case}.md".casefold() == INDEX.casefold()
        stem = f"case-{case}" if index or case.casefold().startswith(OTHER_REPORTS) else case
        name, n = f"{stem}.md", 2
        while name.casefold() in taken:
            name, n = f"{stem}-{n}.md", n + 1
        taken.add(name.casefold())
        names[case] = name
    return names


def case_link(case: str, pages: Mapping[str, str]) -> Markdown:
    return Markdown(f"[{inline(case)}]({pages.get(case, f'{case}.md')})")


def claims_overview(claims: ClaimTable, pages: Mapping[str, str]) -> str:
    """Cases × releases; rows skipped on every release named below it instead."""
    cases = [case_link(line.case, pages) for line in claims.lines]
    text = claim_table(claims, cases) if cases else ""
    if claims.skipped:
        named = "; ".join(
            f"{case_link(line.case, pages)} {inline(line.sizes)} on {inline(line.profile)}"
            for line in claims.skipped
        )
        text += f"\n\nSkipped on every release (each case page's runs say why): {named}."
    return text.strip()


def changes_overview(timings: Sequence[TimingGroup], pages: Mapping[str, str]) -> str:
    rows = [
        [
            case_link(t.key.case, pages),
            t.key.describe(),
            ", ".join(t.comparison.group.releases),
            t.comparison.baseline,
            *(t.tallies or ["–"] * 4),
        ]
        for t in timings
    ]
    group = ["case", "compared within", "releases", "baseline"]
    return markdown_table(rows, [*group, "slower", "faster", "undecided", "noisy"])


def where(
    case: str, profile: str, sizes: str, pages: Mapping[str, str], machine: str | None = None
) -> Markdown:
    at = [f"profile {inline(profile)}", inline(sizes), machine and f"machine {inline(machine)}"]
    return Markdown(f"{case_link(case, pages)} ({', '.join(filter(None, at))})")


def change_item(change: TimingChange, pages: Mapping[str, str], machines: bool) -> str:
    """``- [case](page) (profile cpu, N=1000): `jit` wall (until ready) **slower** ×1.8 [1.5–2.1],
    jax A → B``."""
    key, c = change.key, change.comparison
    machine = short_machine(key.machine) if machines else None
    named = where(key.case, key.profile, sizes_text(dict(key.sizes)), pages, machine)
    metric = inline(change.metric.label())
    return (
        f"- {named}: {metric} {verdict_text(c)} {c.ratio_cell or 'n/a'} [{c.interval_cell}], "
        f"jax {inline(change.baseline)} → {inline(change.release)}"
    )


def what_changed(model: ReportModel, pages: Mapping[str, str]) -> list[str]:
    """The changes by name: each claim holding on some releases only, then each cell's largest
    timing change (slowdowns first), the rest counted."""
    lines = ["## What changed", ""]
    lines += [
        f"- {where(line.case, line.profile, line.sizes, pages)}: the claim {inline(line.in_words)}"
        for line in model.claims.lines
        if {"✓", "✗"} <= set(line.marks)
    ]
    # The first change of each cell (case, profile, sizes, machine), in the changes' order
    # (slowdowns first, the largest first): every case before a second change of any.
    first: dict[object, TimingChange] = {}
    for change in model.changes:
        first.setdefault(change.key, change)
    shown = list(first.values())[:MOST_CHANGES_LISTED]
    machines = len(model.machines) > 1
    lines += [change_item(change, pages, machines) for change in shown]
    if len(model.changes) > len(shown):
        lines.append(
            f"- and {len(model.changes) - len(shown)} more timing change(s) of these cells: the "
            "case pages list every one"
        )
    if any(t.comparison.comparisons for t in model.timings) and not model.changes:
        lines.append("- no timing changed significantly against its baseline release")
    if len(lines) == 2:
        lines.append(
            "- nothing: no timing changed significantly and no claim changed between releases"
        )
    return [*lines, ""]


def runs_overview(runs: Sequence[RunView]) -> str:
    rows = []
    for run in runs:
        r = run.stored.result
        where = [r.profile, r.backend, sizes_text(r.sizes), short_machine(r.machine)]
        rows.append([r.case, r.release, *where, r.status, run.mark, run.older])
    headers = ["case", "jax", "profile", "backend", "sizes", "machine", "status", "claim"]
    return markdown_table(rows, [*headers, "older runs"])


def render_index(
    model: ReportModel, generated_at: datetime, plots: DrawnPlots, pages: Mapping[str, str]
) -> str:
    problems, searched = model.problems, model.searched
    noise_floor = [noise_floor_sentence(run) for run in model.noise_floors]
    lines = ["# JAX reproduction report", ""]
    if model.runs:
        lines += what_changed(model, pages)
    lines += [
        f"Generated {generated_at:%Y-%m-%d %H:%M} UTC from {model.stored} stored result(s); the "
        "newest run of each case, release, profile, sizes and machine is used.",
        "",
    ]
    if noise_floor:
        lines += [*noise_floor, ""]
    else:
        lines += [
            "No noise floor is recorded for this machine: `jax-repro calibrate` measures how often "
            "runs of one release differ here, and the smallest real slowdown flagged.",
            "",
        ]
    if searched:
        lines += [
            f"{searched} measurement(s) taken by size searches are left out here: their sizes are "
            "the search's, not the sweep's; `reports/search-<case>-<fails|holds>.md` shows them.",
            "",
        ]
    if problems:
        lines += ["> [!WARNING]", f"> {len(problems)} result file(s) could not be used:"]
        lines += [f"> - {code_span(p.path.name)}: {inline(scrub(p.reason))}" for p in problems]
        lines.append("")
    if not model.runs:
        lines += ["No results yet: run `nox` (or a `repro` session) first.", ""]
        return "\n".join(lines)
    machines = model.machines
    if len(machines) > 1:
        lines += [
            f"Results from {len(machines)} machines "
            f"({inline(', '.join(map(short_machine, machines)))}): timings are compared only "
            "within one machine; claim verdicts and compiled structure are shown across machines.",
            "",
        ]
    lines += [
        "## Claims by release",
        "",
        "✓ the discussion's claim holds, ✗ it does not (each in at least 80 % of at least 3 case "
        "processes); ? unsettled (the processes disagree, or too few gave a verdict); otherwise "
        "the run's status (failed, timeout, crashed, skipped); – not run. Ranges span consecutive "
        "releases of this report.",
        "",
        claims_overview(model.claims, pages),
        "",
    ]
    figures = [(case.case, figure) for case in model.cases for figure in case.claims.figures]
    if figures:
        claims = ClaimTable([], [], figures=[figure for _, figure in figures])
        lines += [
            "At the sizes each discussion ran, what it printed beside what we measured (one "
            "process's evidence for the claim; the case pages have the rest):",
            "",
            figures_table(claims, [case_link(case, pages) for case, _ in figures]),
            "",
        ]
    if model.timings:
        lines += ["## Timing changes against the baseline", ""]
        lines += [rule_line(model.thresholds), ""]
        lines += ["Counts are of (metric, release) pairs; the case pages have every number.", ""]
        if plots.missing_reason:
            lines += [f"Plots not drawn: {plots.missing_reason}.", ""]
        lines += [changes_overview(model.timings, pages), ""]
    # The statistics in full, once: case pages link here (``METHOD_ANCHOR``).
    lines += [
        folded("Every run shown", runs_overview(model.runs)),
        "",
        f"## {METHOD_HEADING}",
        "",
        "Each cell is measured in several case processes; a time is the median of their medians of "
        "raw `perf_counter_ns` samples taken after warm-up. *Dispatch* is when Python regained "
        "control, *wall* is when `block_until_ready` returned.",
        "",
        rule_text(model.thresholds),
        "",
    ]
    return "\n".join(lines)


def render_pages(
    model: ReportModel, generated_at: datetime, plots: DrawnPlots | None = None
) -> dict[str, str]:
    """Every page by file name, each redacted whole: stored results, merged or edited, are input."""
    plots = plots or DrawnPlots()
    names = page_names([case.case for case in model.cases])
    pages = {INDEX: render_index(model, generated_at, plots, names)}
    for case in model.cases:
        pages[names[case.case]] = render_case(case, model.thresholds, plots, INDEX)
    return {name: redact(page) for name, page in pages.items()}
