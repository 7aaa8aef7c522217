"""Markdown reports from a report model (``analysis.report_model``): ``index.md`` and a page per
case (claim by release, timings by release within each group (one machine each), exact compiled
facts across machines, plots, and every run in detail: its status, the evidence for its claim
verdict, its metrics, environment); loading, drawing and writing them is ``commands.report``'s."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from harness.analysis.report_model import (
    CaseModel,
    ClaimTable,
    FactCell,
    FactRow,
    ReportModel,
    RunView,
    StructureGroup,
    Thresholds,
    TimingChange,
    TimingGroup,
)
from harness.host.environment import redact, scrub
from harness.render.calibration import noise_floor_sentence
from harness.render.plots import SCALING, WALL, DrawnPlots
from harness.render.screen import ELLIPSIS, shorten
from harness.render.tables import (
    METHOD_HEADING,
    STATISTICS_HEADERS,
    comparison_cell,
    legend,
    markdown_table,
    rule_line,
    rule_text,
    statistics_cells,
    verdict_text,
)
from harness.render.text import Markdown, code_span, fenced, folded, inline
from harness.stats import summarize
from harness.store.results import StoredResult
from harness.store.schema import RunStatus
from harness.units import format_ns, short_machine, sizes_text

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
    rows = []
    for t in timings:
        within = [t.key.describe(), ", ".join(t.comparison.group.releases), t.comparison.baseline]
        rows.append([case_link(t.key.case, pages), *within, *(t.tallies or ["–"] * 4)])
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
    lines += [change_item(change, pages, len(model.machines) > 1) for change in shown]
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
    table = []
    for n, figure in enumerate(claims.figures):
        ours = f"jax {figure.release} on {figure.devices}: {figure.ours}"
        where = [figure.profile, figure.backend, figure.sizes]
        table.append([*cases[n : n + 1], *where, figure.theirs, ours])
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
        warning = "> Measured on different machines, so ratios mix releases and hosts:"
        lines += ["> [!WARNING]", warning, *(f"> - {inline(text)}" for text in timing.hosts), ""]
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
        machines = f"From {structure.machines} machines"
        lines += [f"{machines}: counted facts do not depend on a machine's speed.", ""]
    if structure.devices:
        lines += ["> [!NOTE]", "> Compiled for different devices, which may explain a difference:"]
        lines += [f"> - {inline(text)}" for text in structure.devices]
        lines.append("")
    return "\n".join([*lines, hlo_table(structure.rows, structure.releases), ""])


def source_text(source: str) -> str:
    """A link for a plain https URL, else a code span (a result file may hold anything)."""
    return f"<{source}>" if re.fullmatch(r"https://[^\s<>`]+", source) else code_span(source)


def _summary_row(
    program: str, label: str, values: Sequence[float], spread: bool = True
) -> list[object]:
    s = summarize(values)
    iqr = format_ns(s.iqr) if spread else ""
    low, high = format_ns(s.minimum), format_ns(s.maximum)
    return [program, label, format_ns(s.median), iqr, low, high, s.n]


def metrics_table(result: StoredResult) -> str:
    processes = result.result.finished()
    rows = []
    for name in dict.fromkeys(name for p in processes for name in p.programs):
        records = [p.programs[name] for p in processes if name in p.programs]
        first_calls = [r.first_call.wall_ns for r in records if r.first_call is not None]
        label = "first call (incl. compile)"
        if len(first_calls) == 1:
            rows.append([name, label, format_ns(first_calls[0]), "", "", "", 1])
        elif first_calls:
            label += ", one per process"
            rows.append(_summary_row(name, label, first_calls, spread=False))
        samples = [s for r in records for s in r.samples]
        if not samples:
            continue
        if "dispatch" in records[0].kinds:
            dispatch = [s.dispatch_ns for s in samples]
            rows.append(_summary_row(name, "dispatch (Python regains control)", dispatch))
        rows.append(_summary_row(name, "wall (until ready)", [s.wall_ns for s in samples]))
        for i, step in enumerate(records[0].steps[:-1]):  # the last one's return: dispatch
            marks = [s.marks_ns[i] for s in samples if len(s.marks_ns) > i]
            if marks:
                median = format_ns(summarize(marks).median)
                rows.append([name, f"returned from {step}", median, "", "", "", len(marks)])
    for name in dict.fromkeys(name for p in processes for name in p.compiled):
        compiled = [p.compiled[name] for p in processes if name in p.compiled]
        for label, values in (
            ("jit: trace + lower (cold)", [v for c in compiled for v in c.lower_ns]),
            ("jit: compile (cold)", [v for c in compiled for v in c.compile_ns]),
        ):
            if values:
                rows.append(_summary_row(name, label, values, spread=False))
    if not rows:
        return ""
    return markdown_table(rows, ["program", "metric", "median", "IQR", "min", "max", "n"])


def environment_block(result: StoredResult) -> str:
    stored = result.result
    host, jax_info, revision = stored.host, stored.jax, stored.host.harness
    basis = host.machine.basis if host.machine is not None else "not recorded: an older result"
    facts = {
        "jax / jaxlib / numpy": " / ".join(
            host.packages.get(p, "?") for p in ("jax", "jaxlib", "numpy")
        ),
        "python": host.python or "?",
        "backend": (jax_info.backend if jax_info else None) or "?",
        "devices": "no JAX devices (JAX was not asked)"
        if jax_info is None or jax_info.device_count is None
        else f"{jax_info.device_count} × {', '.join(stored.device_kinds) or '?'}",
        "cpu": (
            f"{host.cpu_model or '?'} ({'?' if host.usable_cores is None else host.usable_cores} "
            "usable cores)"
        ),
        "machine": f"{stored.machine} ({basis})",
        "harness": (revision.commit if revision else "?")[:12]
        + (" (uncommitted changes)" if revision and revision.dirty else ""),
        "settings": ", ".join(f"{k}={v}" for k, v in stored.settings.shown().items()),
    }
    if libtpu := host.packages.get("libtpu") or host.packages.get("libtpu-nightly"):
        facts["libtpu"] = libtpu  # the TPU runtime, released with its jax
    if gpu := (jax_info.gpu if jax_info else None):
        facts["gpu"] = "{kinds} (compute capability {caps}); driver {driver}, CUDA {cuda}".format(
            kinds=", ".join(gpu.device_kinds) or "?",
            caps=", ".join(gpu.compute_capabilities) or "?",
            driver=", ".join(gpu.driver_versions) or "?",
            cuda=gpu.cuda_driver or "?",
        )
        facts["CUDA wheels"] = ", ".join(f"{k} {v}" for k, v in gpu.cuda_packages.items()) or "none"
    rows: list[list[object]] = [[k, v] for k, v in facts.items()]
    # One line a variable: a driver image's NVIDIA_REQUIRE_CUDA alone runs to 4,000 characters.
    shown = {name: shorten(value, VARIABLE_COLUMNS) for name, value in host.variables.items()}
    rows += [
        [Markdown(code_span(name)), Markdown(code_span(v)) if v else "set, empty"]
        for name, v in shown.items()
    ] or [["variables", "none"]]
    table = markdown_table(rows, ["", ""])
    if any(v != host.variables[name] for name, v in shown.items()):
        table += f"\n\n{ELLIPSIS} ends a value shortened here; the result file holds it whole."
    info = jax_info.environment_info.strip() if jax_info else ""
    info_block = f"\n\n{fenced(info)}" if info else ""
    return folded("Environment", f"{table}{info_block}")


VARIABLE_COLUMNS = 80


def run_section(run: RunView) -> str:
    result, r, older = run.stored, run.stored.result, run.older
    title = (
        f"### jax {inline(r.release)} · {inline(r.profile)} · "
        f"{inline(sizes_text(r.sizes))} · machine {inline(short_machine(r.machine))}"
    )
    earlier = f" ({older} earlier run{'s' if older > 1 else ''} not shown)" if older else ""
    lines = [title, "", f"Status: **{r.status}** in {r.duration_s:.1f} s{earlier}"]
    if len(processes := r.processes) > 1:
        counts = {status: sum(p.status is status for p in processes) for status in RunStatus}
        ended = ", ".join(f"{n} {status}" for status, n in counts.items() if n)
        loaded = sum(p.load is not None and p.load.loaded for p in processes)
        under_load = f"; {loaded} measured under load" if loaded else ""
        lines += ["", f"Measured in {len(processes)} processes: {ended}{under_load}."]
    # What was left out of what the script printed, so the file reads back: said where figures show.
    if notes := r.all_notes():
        lines += ["", "Left out of what was measured:", "", *(f"- {inline(n)}" for n in notes)]
    claim = run.claim
    if claim is not None and claim.settled:
        # A settled claim leans the way it settled: only "does not hold" is emphasised.
        verdict = claim.outcome if claim.hint else f"**{claim.outcome}**"
        lines += ["", f"Claim {verdict}: {inline(run.evidence)}"]
    elif claim is not None:  # the evidence starts "unsettled: ..."
        lines += ["", f"Claim {inline(run.evidence)}"]
    if r.detail:
        lines += ["", fenced(r.detail)]
    if table := metrics_table(result):
        lines += ["", table]
    lines += ["", environment_block(result), ""]
    return "\n".join(lines)


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
