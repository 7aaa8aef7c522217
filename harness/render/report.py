"""Markdown reports from stored results: ``index.md`` and one page per case.

``render_report`` is pure (results in, pages out); ``write_report`` loads the
results, draws the plots (when matplotlib is there) and writes the pages.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from harness.analysis.claims import claim_rows, mark, outcome, ranges_text
from harness.analysis.groups import check_baseline, comparison_groups, latest_runs, ordered_releases
from harness.analysis.metrics import GroupComparison, compare_group
from harness.analysis.significance import DEFAULT_THRESHOLDS, FASTER, INCONCLUSIVE, SLOWER, Thresholds
from harness.render.case_page import render_case
from harness.render.plots import DrawnPlots, draw_plots
from harness.render.tables import markdown_table, rule_text
from harness.store.results import LoadProblem, StoredResult, load_results
from harness.units import short_machine, sizes_text

INDEX = "index.md"


def claims_overview(chosen: Sequence[tuple[StoredResult, int]], order: Sequence[str]) -> str:
    """Cases × releases: ✓ / ✗ / status per (case, profile, backend, sizes), and the release ranges in words."""
    table = [
        [
            f"[{case}]({case}.md)",
            profile,
            backend,
            sizes,
            *(mark(outcomes.get(r)) for r in order),
            ranges_text(outcomes, order),
        ]
        for (case, profile, backend, sizes), outcomes in claim_rows(r for r, _ in chosen).items()
    ]
    return markdown_table(table, ["case", "profile", "backend", "sizes", *order, "in words"])


def changes_overview(comparisons: Sequence[GroupComparison]) -> str:
    rows = []
    for c in comparisons:
        counts = c.verdicts()
        tallies = [counts[SLOWER], counts[FASTER], counts[INCONCLUSIVE], c.noisy()] if c.comparisons else ["–"] * 4
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


def runs_overview(chosen: Sequence[tuple[StoredResult, int]]) -> str:
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


def render_index(
    results: Sequence[StoredResult],
    problems: Sequence[LoadProblem],
    generated_at: datetime,
    comparisons: Sequence[GroupComparison],
    thresholds: Thresholds,
    plots: DrawnPlots,
    searched: int = 0,
) -> str:
    chosen = latest_runs(results)
    lines = [
        "# JAX reproduction report",
        "",
        f"Generated {generated_at:%Y-%m-%d %H:%M} UTC from {len(results)} stored result(s); the newest run of "
        "each case, release, profile, sizes and machine is used. Times are medians of raw `perf_counter_ns` samples "
        "taken after warm-up. *Dispatch* is when Python regained control, *wall* is when `block_until_ready` "
        "returned.",
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
        lines += [f"> - `{p.path.name}`: {p.reason}" for p in problems]
        lines.append("")
    if not chosen:
        lines += ["No results yet: run `nox` (or a `repro` session) first.", ""]
        return "\n".join(lines)
    order = ordered_releases(r for r, _ in chosen)
    machines = sorted({r.machine for r, _ in chosen})
    if len(machines) > 1:
        lines += [
            f"Results from {len(machines)} machines ({', '.join(map(short_machine, machines))}): timings are "
            "compared only within one machine; claim verdicts and compiled structure are shown across machines.",
            "",
        ]
    lines += [
        "## Claims by release",
        "",
        "✓ the discussion's claim holds, ✗ it does not; otherwise the run's status (failed, timeout, crashed, "
        "skipped); – not run. Ranges span consecutive releases of this report.",
        "",
        claims_overview(chosen, order),
        "",
    ]
    if comparisons:
        lines += ["## Timing changes against the baseline", "", rule_text(thresholds), ""]
        lines += ["Counts are of (metric, release) pairs; the case pages have every number.", ""]
        if plots.missing_reason:
            lines += [f"Plots not drawn: {plots.missing_reason}.", ""]
        lines += [changes_overview(comparisons), ""]
    lines += ["<details><summary>Every run shown</summary>", "", runs_overview(chosen), "", "</details>", ""]
    return "\n".join(lines)


def swept(results: Sequence[StoredResult]) -> list[StoredResult]:
    """The results of sweeps, without the measurements taken by size searches."""
    return [r for r in results if r.data.get("size_source") != "search"]


def render_report(
    results: Sequence[StoredResult],
    problems: Sequence[LoadProblem],
    generated_at: datetime,
    *,
    baseline: str | None = None,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    plots: DrawnPlots | None = None,
) -> dict[str, str]:
    """Every page, by file name: ``index.md`` and ``<case>.md``.

    Measurements taken by ``harness search`` are left out (and counted): each sits at
    a size of the search's choosing and would crowd the sweep's comparisons.
    """
    plots = plots or DrawnPlots()
    searched = len(results)
    results = swept(results)
    searched -= len(results)
    comparisons = [compare_group(g, baseline, thresholds) for g in comparison_groups(results)]
    pages = {INDEX: render_index(results, problems, generated_at, comparisons, thresholds, plots, searched)}
    chosen = latest_runs(results)
    order = ordered_releases(r for r, _ in chosen)
    by_case: dict[str, list[tuple[StoredResult, int]]] = defaultdict(list)
    for result, older in chosen:
        by_case[result.case].append((result, older))
    structures = comparison_groups(results, across_machines=True)
    for case, runs in by_case.items():
        mine = [c for c in comparisons if c.group.key.case == case]
        exact = [g for g in structures if g.key.case == case]
        pages[f"{case}.md"] = render_case(case, runs, mine, exact, order, thresholds, plots)
    return pages


def write_report(
    results_dir: Path, out_dir: Path, *, baseline: str | None = None, thresholds: Thresholds = DEFAULT_THRESHOLDS
) -> tuple[list[Path], list[LoadProblem], DrawnPlots]:
    results, problems = load_results(results_dir)
    check_baseline(baseline, results)
    out_dir.mkdir(parents=True, exist_ok=True)
    plots = draw_plots(comparison_groups(swept(results)), out_dir)
    pages = render_report(results, problems, datetime.now(UTC), baseline=baseline, thresholds=thresholds, plots=plots)
    written = []
    for name, text in pages.items():
        path = out_dir / name
        tmp = path.with_suffix(".md.tmp")
        tmp.write_text(text)
        tmp.replace(path)
        written.append(path)
    return written, problems, plots
