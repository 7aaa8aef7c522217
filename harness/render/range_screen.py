"""The first screen of the release commands (sweep now; triage and bisect share its pieces): what was searched
in one line, how much ran, the steps found, each in a row, and the report's path last.  Every detail (each
release's status and source, each metric's table) is the report's."""

from __future__ import annotations

from harness.analysis.significance import Comparison
from harness.errors import UsageError
from harness.metric_names import parse_metric_name, reading_rank
from harness.render import screen
from harness.render.marks import legend, marks_text
from harness.render.release_answers import unmeasured_line
from harness.steps.answers import Setting
from harness.steps.bisection import CLAIM, ReleaseStep, SweepOutcome
from harness.units import format_ratio, sizes_text

STEP_HEADERS = ["metric", "releases", "B/A", "verdict", "caveats"]
# Lines for the head, the counts, the legend, the notes under the steps and the report's path.
_FRAME_LINES = 12


def head_line(command: str, setting: Setting, first: str, last: str) -> str:
    """``Sweep: scan_sync at M=2 N=600 · profile cpu · jax 0.4.26 → 0.12.0.1``; a script without sizes has no
    ``at``."""
    sizes = f" at {sizes_text(setting.sizes)}" if setting.sizes else ""
    what = setting.metric.metric_name if setting.metric else ""
    by = f" · by {what}" if what else ""
    return screen.shorten(
        f"{command}: {setting.case}{sizes} · profile {setting.profile} · jax {first} → {last}{by}"
    )


def _rank(metric: str) -> int:
    if metric == CLAIM:
        return -1  # the claim a case was written for comes before its timings
    try:
        return reading_rank(parse_metric_name(metric))
    except UsageError:  # a metric name no reader knows: after the known ones
        return 9


def ordered_steps(steps: list[ReleaseStep], releases: list[str]) -> list[ReleaseStep]:
    """Steps by where they are in the range, and within one step in reading order (the script's own first)."""
    where = {release: i for i, release in enumerate(releases)}
    return sorted(steps, key=lambda s: (where.get(s.after, 0), _rank(s.metric)))


def step_row(step: ReleaseStep, comparison: Comparison | None, setting: Setting) -> list[str]:
    if step.metric == CLAIM or comparison is None:
        return [step.metric, f"{step.before} → {step.after}", "", step.change, ""]
    return [
        step.metric,
        f"{step.before} → {step.after}",
        format_ratio(comparison.ratio),
        comparison.said,
        marks_text(comparison, setting.thresholds),
    ]


def not_ok_line(found: SweepOutcome) -> str:
    """``1 did not run ok: 0.4.32 not installed``: the releases a step skipped over, in one line."""
    bad = found.not_ok()
    if not bad:
        return ""
    said = [
        f"{m.release} {m.result.status if m.result is not None else 'not installed'}" for m in bad
    ]
    return screen.shorten(f"{len(bad)} did not run ok: {', '.join(said)}")


def sweep_screen(found: SweepOutcome, setting: Setting, report: str) -> str:
    """A sweep's terminal answer: one screen, the report's path last."""
    releases = found.releases
    lines = [
        head_line("Sweep", setting, releases[0], releases[-1]),
        f"{len(releases)} releases, {len(found.ok())} ran ok; wall time {setting.wall_s:.0f} s, "
        "installs included",
    ]
    lines += [line for line in [not_ok_line(found)] if line]
    lines.append("")
    steps = ordered_steps(found.steps, releases)
    if steps:
        lines.append(f"{len(steps)} step(s), each release against the previous one that ran ok:")
        rows = [step_row(s, s.comparison, setting) for s in steps]
        table = screen.table(rows, STEP_HEADERS, indent="  ")
        lines += screen.budgeted(
            table, screen.LINES - _FRAME_LINES, "  … and {n} more steps: the report lists every one"
        )
        marks = legend(
            (s.comparison for s in steps if s.comparison is not None), setting.thresholds
        )
        lines += screen.wrap(marks, indent="  ", lines=2) if marks else []
        several = sorted({s.metric for s in steps if sum(t.metric == s.metric for t in steps) > 1})
        if several:
            lines += screen.wrap(
                f"More than one step in {', '.join(several)}: a bisect between the endpoints would "
                "report only one.",
                lines=2,
            )
        lines.append(
            "Each step is one comparison of neighbours: a triage of the range confirms each by measuring "
            "again."
        )
    elif found.unmeasured():
        lines += screen.wrap(unmeasured_line(found), lines=3)
    else:
        lines.append("No significant step between consecutive releases.")
    lines += ["", f"Report: {report}"]
    return "\n".join(lines) + "\n"
