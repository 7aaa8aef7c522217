"""The first screen of sweep, triage and bisect: what was searched, how much ran, a block per step
found (its metrics in reading order, how sure, caveats as marks; the why; each follow-up once), the
report's path last.  Where all would not fit, blocks fold: fewer metrics, findings (each whole) and
commands; then the steps that still do not fit are counted.  Every detail is the report's."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from harness.analysis.claims import DOES_NOT_HOLD, outcome
from harness.analysis.significance import Comparison, Thresholds
from harness.findings import Finding, FollowUp
from harness.metric_names import Criterion
from harness.render import screen
from harness.render.tables import legend, marks_text
from harness.steps.answers import Setting
from harness.steps.bisection import ReleaseStep, SweepOutcome
from harness.steps.judge import Judgement
from harness.steps.probes import Probe
from harness.store.schema import RunStatus
from harness.units import format_p, sizes_text

STEP_HEADERS = ["metric", "releases", "B/A", "verdict", "caveats"]
# Lines for the head, the counts, the legend, the notes under the steps and the report's path.
_FRAME_LINES = 12


def unmeasured_line(found: SweepOutcome) -> str:
    measured = len(found.measurements)
    of = f" measured (of {len(found.releases)})" if measured < len(found.releases) else ""
    return (
        f"Nothing could be measured: {len(found.ok())} of the {measured} releases{of} ran ok, and "
        "a step needs two; each release's status in the table says why. This is no evidence of no "
        "change."
    )


def head_line(command: str, setting: Setting, first: str, last: str) -> str:
    """``Sweep: scan_sync at M=2 N=600 · profile cpu · jax 0.4.26 → 0.12.0.1`` (``at``: sizes)."""
    sizes = f" at {sizes_text(setting.sizes)}" if setting.sizes else ""
    by = f" · by {setting.metric.metric_name}" if setting.metric else ""
    return (
        f"{command}: {setting.case}{sizes} · profile {setting.profile} · jax {first} → {last}{by}"
    )


def step_row(step: ReleaseStep, setting: Setting) -> list[str]:
    compared, ends = step.comparison, f"{step.before} → {step.after}"
    if step.criterion.figures is None:  # the claim's flip, the processes' ends
        return [step.criterion.name, ends, "", step.said, ""]
    marks = marks_text(compared, setting.thresholds)
    return [step.criterion.name, ends, compared.ratio_cell or "n/a", compared.said, marks]


def not_ok_line(found: SweepOutcome) -> str:
    """``1 did not run ok: 0.4.32 not installed``."""
    if not (bad := found.not_ok()):
        return ""
    said = [f"{m.release} {status_words(m)}" for m in bad]
    return f"{len(bad)} did not run ok: {', '.join(said)}"


def status_words(probe: Probe, said: str = "{} ({})") -> str:
    """``crashed (SIGSEGV (exit 139) in 5 of 5 processes)``: a release's status and ending."""
    if probe.result is None:
        return "not installed"
    if probe.result.result.status is RunStatus.OK or probe.ends is None:
        return str(probe.result.result.status)
    return said.format(probe.result.result.status, probe.ends.words())


def sweep_screen(found: SweepOutcome, setting: Setting, report: str) -> str:
    releases = found.releases
    ran = f"{len(releases)} releases, {len(found.ok())} ran ok; wall time {setting.wall_s:.0f} s"
    head = [head_line("Sweep", setting, releases[0], releases[-1]), f"{ran}, installs included"]
    lines = [*whole_lines([*head, not_ok_line(found)]), ""]
    # in range order, and within one step in reading order (the script's own first)
    where = {release: i for i, release in enumerate(releases)}
    steps = sorted(found.steps, key=lambda s: (where.get(s.after, 0), s.criterion.rank()))
    if steps:
        lines.append(f"{len(steps)} step(s), each release against the previous one that ran ok:")
        table = screen.table([step_row(s, setting) for s in steps], STEP_HEADERS, indent="  ")
        lines += screen.budgeted(
            table, screen.LINES - _FRAME_LINES, "  … and {n} more steps: the report lists every one"
        )
        lines += _legend_lines([s.comparison for s in steps], setting.thresholds)
        if several := found.stepped_more_than_once():
            lines += screen.wrap(
                f"More than one step in {', '.join(several)}: a bisect between the endpoints would "
                "report only one."
            )
        lines.append(
            "Each step is one comparison of neighbours: a triage of the range confirms each by "
            "measuring again."
        )
    elif found.unmeasured():
        lines += screen.wrap(unmeasured_line(found))
    else:
        lines.append("No significant step between consecutive releases.")
    lines += ["", f"Report: {report}"]
    return "\n".join(lines) + "\n"


BLOCK_HEADERS = ["metric", "A → B", "B/A", "verdict", "how sure", "caveats"]
# How far blocks fold when all would not fit: (metrics a step, findings of why, commands).
FOLDS = ((8, 3, 4), (3, 2, 2), (2, 1, 1), (1, 0, 1))


@dataclass(frozen=True)
class Row:
    criterion: Criterion
    figures: str
    ratio: str
    verdict: str
    sure: str
    comparison: Comparison | None = None

    def cells(self, thresholds: Thresholds) -> list[str]:
        marks = marks_text(self.comparison, thresholds) if self.comparison else ""
        return [self.ratio, self.verdict, self.sure, marks]


@dataclass
class Block:
    head: str
    step: str  # ``0.4.31 → 0.4.33``: the step's row where blocks fold to one row each
    rows: list[Row]
    why: list[Finding] = field(default_factory=list)  # the why's findings, leading ones first shown
    next: list[FollowUp] = field(default_factory=list)  # what narrows what was found, each once


def metric_row(criterion: Criterion, comparison: Comparison, verdict: str = "") -> Row:
    """A metric's row from the comparison that settled it (re-measured, or a probe's)."""
    figures, said = " → ".join(comparison.shown), verdict or comparison.said
    return Row(criterion, figures, comparison.ratio_cell, said, sure_cell(comparison), comparison)


def sure_cell(comparison: Comparison) -> str:
    """``p<0.0001, 10 a side``: the test's p, and the processes of the fewer side."""
    if comparison.constant:
        return f"{min(comparison.processes)} a side, no spread"
    if comparison.counts and math.isnan(comparison.p_value):
        return f"{min(comparison.processes)} a side, alike in each"
    p = format_p(comparison.p_value)
    return f"p{'' if p.startswith('<') else '='}{p}, {min(comparison.processes)} a side"


def _rows_ordered(rows: Sequence[Row]) -> list[Row]:
    return sorted(rows, key=lambda r: r.criterion.rank())


def block_lines(
    block: Block, fold: tuple[int, int, int], shown: set[str], thresholds: Thresholds
) -> list[str]:
    """A block folded to ``fold``; a command in ``shown`` is not offered again (``shown`` grows)."""
    most, why, commands = fold
    lines = screen.wrap(block.head, indent="  ")
    rows = _rows_ordered(block.rows)
    cells = [[r.criterion.name, r.figures, *r.cells(thresholds)] for r in rows[:most]]
    lines += screen.table(cells, BLOCK_HEADERS, indent="  ", shrink=1)
    if len(rows) > most:
        lines.append(f"  and {len(rows) - most} more metric(s) in this step: the report lists them")
    # the first ``why`` findings, leading ones first, each whole, without its commands
    ordered = [f for f in block.why if f.leads] + [f for f in block.why if not f.leads]
    for n, finding in enumerate(ordered[:why]):
        lines += screen.labelled("       " if n else "  why: ", finding.text)
    offered = [f for finding in block.why for f in finding.follow_ups] + block.next
    new = {f.command: f for f in offered if f.command not in shown}
    for follow_up in list(new.values())[:commands]:
        shown.add(follow_up.command)
        lines += screen.follow_up_lines(follow_up, "  next, " if follow_up.purpose else "  next:")
    return lines


STEPS_HEADERS = ["step", "metrics", "B/A", "verdict", "how sure", "caveats"]


def blocks_lines(
    blocks: Sequence[Block], budget: int, thresholds: Thresholds, marked: list[Comparison]
) -> list[str]:
    """The blocks folded to fit ``budget`` lines, else one row a step (its first metric, the others
    counted), cut to it; the comparisons whose marks are shown go to ``marked``."""
    for fold in FOLDS:
        shown: set[str] = set()
        body = [line for b in blocks for line in [*block_lines(b, fold, shown, thresholds), ""]]
        if len(body) <= budget:  # the legend says the marks of the rows shown only
            shown_rows = [r for b in blocks for r in _rows_ordered(b.rows)[: fold[0]]]
            marked += [r.comparison for r in shown_rows if r.comparison is not None]
            return body
    rows = []
    for block in blocks:
        lead, *more = _rows_ordered(block.rows)
        marked += [lead.comparison] if lead.comparison is not None else []
        metrics = lead.criterion.name + (f" +{len(more)}" if more else "")
        rows.append([block.step, metrics, *lead.cells(thresholds)])
    table = screen.table(rows, STEPS_HEADERS, indent="  ")
    note = "Each step's metrics, why and commands to run next: the report."
    cut = screen.budgeted(table, budget - 3, "  … and {n} more steps: the report lists every one")
    return [f"{len(blocks)} steps, each with its first metric:", *cut, note, ""]


# A claim's outcome in a cell, short: the answers say a claim *fails* where it does not hold.
_CLAIM_CELLS = {DOES_NOT_HOLD: "fails"}


def claim_text(probe: Probe | Judgement | None) -> str:
    if isinstance(probe, Judgement):
        said = probe.claim
    else:
        said = outcome(probe.result) if probe is not None and probe.result is not None else None
    return _CLAIM_CELLS.get(said, said) if said else "–"


def _legend_lines(comparisons: Sequence[Comparison], thresholds: Thresholds) -> list[str]:
    marks = legend(comparisons, thresholds)
    return screen.wrap(marks, indent="  ") if marks else []


def whole_lines(lines: Sequence[str]) -> list[str]:
    return [
        part
        for line in lines
        if line
        for part in (
            [line] if screen.columns(line) <= screen.WIDTH else screen.wrap(line, indent="  ")
        )
    ]


def frame(
    head: list[str], blocks: Sequence[Block], tail: list[str], setting: Setting, report: list[str]
) -> str:
    """Head, the blocks (folded to fit), the lines after them, the caveats' legend, the report."""
    head = whole_lines(head)
    every = [r.comparison for b in blocks for r in b.rows if r.comparison is not None]
    # the legend of every mark: the most it takes
    most = len(_legend_lines(every, setting.thresholds))
    budget = screen.LINES - len(head) - len(tail) - most - len(report) - 1
    marked: list[Comparison] = []
    body = blocks_lines(blocks, budget, setting.thresholds, marked) if blocks else []
    lines = [*head, "", *body, *tail]
    if lines[-1]:
        lines.append("")
    return "\n".join([*lines, *_legend_lines(marked, setting.thresholds), *report]) + "\n"
