"""A watch's summary as markdown (the CI job's) and data (docs/watch.schema.json): what a maintainer
acts on first, then every target with the smallest change it could have seen, then the loads, so a
quiet "unchanged" is read with how much it could have missed."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.analysis.significance import Thresholds
from harness.render.json_out import document, thresholds_json
from harness.render.text import code_span, inline, one_line
from harness.steps import watch
from harness.steps.watch import TargetWatch, exit_status
from harness.units import format_ns

SCHEMA_KIND = "watch"
MAX_BENCHMARK_ROWS = 50  # of a suite's benchmarks in watch.md; every one is in watch.json
NOTHING_HEADLINE = "**A target measured nothing: the watch failed.**"
HEADLINES = {
    1: "**A regression was confirmed.**",
    3: "**No regression confirmed, but not everything was decided.**",
    0: "**No regression.**",
}
OUTCOME_WORDS = {"unchanged": "no change found"}  # the other outcomes say themselves


@dataclass(frozen=True)
class WatchSummary:
    baseline: str
    release: str
    jaxlib: Mapping[str, str]  # release → the jaxlib it was installed with
    profile: str
    processes: int
    max_processes: int
    thresholds: Thresholds
    targets: Sequence[TargetWatch]
    wall_s: float
    load_threshold: float  # other cores busy over which a process counts as measured under load

    @property
    def status(self) -> int:
        return exit_status(self.targets)


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"×{value:.3g}"


def _lines(summary: WatchSummary, kinds: set[str]) -> list[str]:
    return [
        f"- {code_span(t.target)}: {inline(finding.text)}"
        + (f" (remembered from {t.remembered})" if t.remembered else "")
        for t in summary.targets
        for finding in t.findings
        if finding.kind in kinds
    ]


def _smallest(watched: TargetWatch) -> str:
    smallest = watched.smallest_change
    if smallest is None and watched.judged:
        return "none: too few processes for a verdict"
    if smallest is None:
        return "— (the two releases did not both run)"
    best = min((r for r in watched.judged.values() if r == r), default=smallest)
    return f"{_ratio(smallest)} (best {_ratio(best)})"


def _seen(ratio: float | None) -> str:
    return _ratio(ratio) if ratio is None or math.isfinite(ratio) else "none: too few processes"


def import_lines(watched: TargetWatch) -> list[str]:
    """A suite's costliest imports per release (``import_times.costliest``'s lines)."""
    if not (imports := watched.floor.get("imports") or {}):
        return []
    said = "; ".join(
        f"jax {inline(release)}: " + "; ".join(lines) for release, lines in imports.items()
    )
    where = "Where its import goes (`python -X importtime`, one extra process a side, not timed)"
    return [f"{where}: {said}.", ""]


def benchmark_lines(watched: TargetWatch) -> list[str]:
    """A suite's benchmarks, the slowest first, each with the smallest change it could have seen."""
    if not watched.medians:
        return []
    verdicts = {f.criterion.metric: f.kind for f in reversed(watched.findings) if f.criterion}
    ordered = sorted(watched.medians.items(), key=lambda item: -item[1][0])
    slowest_key, (slowest, _) = ordered[0]
    slowest_name = code_span(slowest_key.metric_name)
    said = inline(str(watched.floor.get("said") or ""))
    lines = [
        f"## Benchmarks of {code_span(watched.target)}",
        "",
        f"{len(ordered)} benchmarks, each judged on its own; the slowest, {slowest_name}, takes "
        f"{format_ns(slowest)} a round on the baseline.",
        "",
        *([f"Its floor, said after its first process of each side: {said}.", ""] if said else []),
        *import_lines(watched),
        "| benchmark | verdict | a round, baseline → release "
        "| smallest change it could have seen |",
        "|---|---|---|---|",
    ]
    for key, (before, after) in ordered[:MAX_BENCHMARK_ROWS]:
        verdict = verdicts.get(key, "no change found")
        figures = f"{format_ns(before)} → {format_ns(after)}"
        seen = _seen(watched.detectable.get(key))
        lines.append(f"| {code_span(key.metric_name)} | {verdict} | {figures} | {seen} |")
    if len(ordered) > MAX_BENCHMARK_ROWS:
        lines.append(f"\n{len(ordered) - MAX_BENCHMARK_ROWS} more in watch.json.")
    return [*lines, ""]


def _headline(summary: WatchSummary) -> str:
    if summary.status == 1 and not any(t.outcome == "regression" for t in summary.targets):
        return NOTHING_HEADLINE
    return HEADLINES[summary.status]


def watch_markdown(summary: WatchSummary) -> str:
    lines = [
        f"# JAX watch: {summary.release} against {summary.baseline}",
        "",
        _headline(summary),
        "",
        f"jax {summary.baseline} (jaxlib {summary.jaxlib.get(summary.baseline, '?')}) and jax "
        f"{summary.release} (jaxlib {summary.jaxlib.get(summary.release, '?')}), both in one "
        f"interleaved run per target on one machine, profile {summary.profile}, "
        f"{summary.processes} processes a side, each candidate change measured again up to "
        f"{summary.max_processes}; a change is confirmed at level {summary.thresholds.alpha:g} "
        f"past ×{summary.thresholds.factor:g}. Wall time {summary.wall_s:.0f} s.",
        "",
    ]
    sections = [
        ("Regressions", {watch.REGRESSION, watch.BROKEN}),
        ("Measured nothing", {watch.MEASURED_NOTHING}),
        ("Measured under load: not called a change", {watch.UNDER_LOAD}),
        ("Undecided", {watch.UNDECIDED}),
        ("Could not be measured", {"not measured"}),
        ("Not applicable here: skipped on both releases", {"not applicable"}),
        ("Improvements", {watch.IMPROVEMENT}),
    ]
    for title, kinds in sections:
        if found := _lines(summary, kinds):
            lines += [f"## {title}", "", *found, ""]
    # This run's why (a remembered target's is not shown again): markdown harness.render.why wrote,
    # each stored string in it already a code span or literal text, not escaped twice; one line.
    why = [
        f"- {code_span(t.target)}: {one_line(line)}"
        for t in summary.targets
        if not t.remembered
        for line in t.why
    ]
    if why:
        lines += ["## Why, as far as was asked", "", *why, ""]
    lines += [
        "## Every target",
        "",
        "The smallest change it could have seen: the ratio this machine's noise lets the watch "
        "flag in 90 % of runs (median over the target's metrics, a suite's benchmarks only; its "
        "best metric in brackets).",
        "",
        "| target | kind | outcome | smallest change it could have seen | page |",
        "|---|---|---|---|---|",
    ]
    for t in summary.targets:
        page = f"[{inline(t.page)}]({t.page})" if t.page else "—"
        remembered = f" (remembered from {t.remembered})" if t.remembered else ""
        outcome = OUTCOME_WORDS.get(t.outcome, t.outcome) + remembered
        lines.append(f"| {code_span(t.target)} | {t.kind} | {outcome} | {_smallest(t)} | {page} |")
    lines.append("")
    for t in summary.targets:
        lines += benchmark_lines(t)
    loaded = [
        f"- {code_span(t.target)}: "
        + "; ".join(f"{load.release} {load.loaded} of {load.processes}" for load in t.loads)
        for t in summary.targets
        if any(load.loaded for load in t.loads)
    ]
    lines += ["## Load", ""]
    lines += (
        [
            f"Processes measured while other work kept more than {summary.load_threshold:g} cores "
            "of the machine busy (a change on such a side is said, never called):",
            "",
            *loaded,
        ]
        if loaded
        else [
            "No process of either release was measured under load (more than "
            f"{summary.load_threshold:g} other cores busy)."
        ]
    )
    return "\n".join(lines) + "\n"


def watch_json(summary: WatchSummary) -> dict[str, Any]:
    return document(
        SCHEMA_KIND,
        {
            "baseline": summary.baseline,
            "release": summary.release,
            "jaxlib": dict(summary.jaxlib),
            "profile": summary.profile,
            "processes": summary.processes,
            "max_processes": summary.max_processes,
            "thresholds": thresholds_json(summary.thresholds),
            "exit_status": summary.status,
            "wall_s": round(summary.wall_s, 1),
            "load_threshold": summary.load_threshold,
            "targets": [t.to_json() for t in summary.targets],
        },
    )
