"""Markdown reports from stored results: ``index.md`` and one page per case.

The content is decided once (``harness.analysis.report_model.build_model``); the
renderers here are pure (model in, pages out).  ``write_report`` loads the results
once, builds the model, draws its plots (when matplotlib is there) and writes the pages.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from harness.analysis.claims import claim_rows, mark, outcome, ranges_text
from harness.analysis.groups import check_baseline
from harness.analysis.metrics import GroupComparison
from harness.analysis.report_model import ReportModel, build_model
from harness.analysis.significance import DEFAULT_THRESHOLDS, Thresholds, Verdict
from harness.host.environment import scrub
from harness.names import inside, name_problem
from harness.render.calibration import noise_floor_sentence
from harness.render.case_page import render_case
from harness.render.plots import DrawnPlots, draw_plots
from harness.render.tables import markdown_table, rule_text
from harness.store.calibrations import latest_calibrations
from harness.store.results import LoadProblem, Newest, StoredResult, load_results
from harness.store.schema import RunStatus
from harness.units import short_machine, sizes_text

INDEX = "index.md"
PAGES_MANIFEST = ".report-pages.json"  # the pages the last render wrote


def claims_overview(chosen: Sequence[Newest], order: Sequence[str]) -> str:
    """Cases × releases: ✓ / ✗ / status per (case, profile, backend, sizes), and the release ranges in words;
    rows skipped on every release (too few devices, a one-device case under cpu8) named below it instead."""
    rows = claim_rows(r for r, _ in chosen)
    skipped = [row for row, outcomes in rows.items() if set(outcomes.values()) == {RunStatus.SKIPPED.value}]
    table = [
        [
            f"[{case}]({case}.md)",
            profile,
            backend,
            sizes,
            *(mark(outcomes.get(r)) for r in order),
            ranges_text(outcomes, order),
        ]
        for (case, profile, backend, sizes), outcomes in rows.items()
        if (case, profile, backend, sizes) not in skipped
    ]
    text = markdown_table(table, ["case", "profile", "backend", "sizes", *order, "in words"]) if table else ""
    if skipped:
        named = "; ".join(f"[{case}]({case}.md) {sizes} on {profile}" for case, profile, _, sizes in skipped)
        text += f"\n\nSkipped on every release (each case page's runs say why): {named}."
    return text.strip()


def changes_overview(comparisons: Sequence[GroupComparison]) -> str:
    rows = []
    for c in comparisons:
        counts = c.verdicts()
        tallies = (
            [counts[Verdict.SLOWER], counts[Verdict.FASTER], counts[Verdict.INCONCLUSIVE], c.noisy()]
            if c.comparisons
            else ["–"] * 4
        )
        rows.append(
            [
                f"[{c.group.key.case}]({c.group.key.case}.md)",
                c.group.key.describe(),
                ", ".join(c.group.releases),
                c.baseline,
                *tallies,
            ]
        )
    return markdown_table(
        rows, ["case", "compared within", "releases", "baseline", "slower", "faster", "inconclusive", "noisy"]
    )


def runs_overview(chosen: Sequence[Newest]) -> str:
    rows = [
        [
            r.case,
            r.release,
            r.profile,
            r.backend,
            sizes_text(r.sizes),
            short_machine(r.machine),
            r.status,
            mark(outcome(r)),
            older,
        ]
        for r, older in chosen
    ]
    return markdown_table(
        rows, ["case", "jax", "profile", "backend", "sizes", "machine", "status", "claim", "older runs"]
    )


def render_index(model: ReportModel, generated_at: datetime, plots: DrawnPlots, noise_floor: Sequence[str] = ()) -> str:
    """The index page; ``noise_floor``: a sentence per machine's latest calibration (``harness calibrate``)."""
    chosen, order, problems, searched = model.latest, model.order, model.problems, model.searched
    lines = [
        "# JAX reproduction report",
        "",
        f"Generated {generated_at:%Y-%m-%d %H:%M} UTC from {model.stored} stored result(s); the newest run of "
        "each case, release, profile, sizes and machine is used. Each cell is measured in several case processes; "
        "a time is the median of their medians of raw `perf_counter_ns` samples taken after warm-up. *Dispatch* is "
        "when Python regained control, *wall* is when `block_until_ready` returned.",
        "",
    ]
    if noise_floor:
        lines += [*noise_floor, ""]
    else:
        lines += [
            "No noise floor is recorded for this machine: `python -m harness calibrate` measures how often runs of "
            "one release differ here, and the smallest real slowdown flagged.",
            "",
        ]
    if searched:
        lines += [
            f"{searched} measurement(s) taken by size searches are left out here: their sizes are the search's, "
            "not the sweep's; `reports/search-<case>-<fails|holds>.md` shows them.",
            "",
        ]
    if problems:
        lines += ["> [!WARNING]", f"> {len(problems)} result file(s) could not be used:"]
        lines += [f"> - `{p.path.name}`: {scrub(p.reason)}" for p in problems]
        lines.append("")
    if not chosen:
        lines += ["No results yet: run `nox` (or a `repro` session) first.", ""]
        return "\n".join(lines)
    machines = model.machines
    if len(machines) > 1:
        lines += [
            f"Results from {len(machines)} machines ({', '.join(map(short_machine, machines))}): timings are "
            "compared only within one machine; claim verdicts and compiled structure are shown across machines.",
            "",
        ]
    lines += [
        "## Claims by release",
        "",
        "✓ the discussion's claim holds, ✗ it does not (each in at least 80 % of at least 3 case processes); "
        "? unsettled (the processes disagree, or too few gave a verdict); otherwise the run's status (failed, "
        "timeout, crashed, skipped); – not run. Ranges span consecutive releases of this report.",
        "",
        claims_overview(chosen, order),
        "",
    ]
    if model.comparisons:
        lines += ["## Timing changes against the baseline", "", rule_text(model.thresholds), ""]
        lines += ["Counts are of (metric, release) pairs; the case pages have every number.", ""]
        if plots.missing_reason:
            lines += [f"Plots not drawn: {plots.missing_reason}.", ""]
        lines += [changes_overview(model.comparisons), ""]
    lines += ["<details><summary>Every run shown</summary>", "", runs_overview(chosen), "", "</details>", ""]
    return "\n".join(lines)


def render_pages(
    model: ReportModel, generated_at: datetime, plots: DrawnPlots | None = None, noise_floor: Sequence[str] = ()
) -> dict[str, str]:
    """Every page, by file name: ``index.md`` and ``<case>.md``."""
    plots = plots or DrawnPlots()
    pages = {INDEX: render_index(model, generated_at, plots, noise_floor)}
    for case in model.cases():
        pages[f"{case.case}.md"] = render_case(case, model.order, model.thresholds, plots)
    return pages


def render_report(
    results: Sequence[StoredResult],
    problems: Sequence[LoadProblem],
    generated_at: datetime,
    *,
    baseline: str | None = None,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    plots: DrawnPlots | None = None,
) -> dict[str, str]:
    """Every page of the report on ``results``, by file name (``build_model``, then ``render_pages``)."""
    model = build_model(results, problems, baseline=baseline, thresholds=thresholds)
    return render_pages(model, generated_at, plots)


def write_report(
    results_dir: Path, out_dir: Path, *, baseline: str | None = None, thresholds: Thresholds = DEFAULT_THRESHOLDS
) -> tuple[list[Path], list[LoadProblem], DrawnPlots]:
    results, problems = load_results(results_dir)
    check_baseline(baseline, results)
    out_dir.mkdir(parents=True, exist_ok=True)
    model = build_model(results, problems, baseline=baseline, thresholds=thresholds)
    plots = draw_plots(model.groups, out_dir)
    calibrations, _ = latest_calibrations(results_dir)  # an unusable calibration file is not a result: left out
    noise_floor = [noise_floor_sentence(calibrations[m]) for m in model.machines if m in calibrations]
    pages = render_pages(model, datetime.now(UTC), plots, noise_floor)
    written = []
    for name, text in pages.items():
        path = inside(out_dir, name)
        tmp = path.with_suffix(".md.tmp")
        tmp.write_text(text)
        tmp.replace(path)
        written.append(path)
    forget_old_pages(out_dir, set(pages))
    return written, problems, plots


def forget_old_pages(out_dir: Path, pages: set[str]) -> None:
    """Remove the pages an earlier render wrote that this one did not (a case whose results are gone).

    Only pages listed in the folder's manifest are ever removed: the folder also holds
    bisect, sweep and search reports, and whatever else a user put there.
    """
    manifest = out_dir / PAGES_MANIFEST
    try:
        before = set(json.loads(manifest.read_text()))
    except (OSError, ValueError, TypeError):
        before = set()
    for name in sorted(before - pages):
        if isinstance(name, str) and name.endswith(".md") and not name_problem(name):
            inside(out_dir, name).unlink(missing_ok=True)
    manifest.write_text(json.dumps(sorted(pages)))
