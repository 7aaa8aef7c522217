"""A triage's first screen: the range in one line, how much ran, one block per confirmed step (its
changes, the why of its first metric, the bisect below the releases), the undecided, the report."""

from __future__ import annotations

from harness.analysis.metrics import hlo_facts
from harness.analysis.significance import Thresholds
from harness.findings import FollowUp, leading
from harness.render import screen
from harness.render.range_screen import (
    Block,
    Row,
    claim_text,
    frame,
    head_line,
    metric_row,
    not_ok_line,
    unmeasured_line,
)
from harness.render.text import inline
from harness.render.triage_words import death_line
from harness.render.why import next_steps, why_lines
from harness.steps.answers import Setting
from harness.steps.grid import small_within, twice_safe_bounds
from harness.steps.judge import FIX, REGRESSION
from harness.steps.triage import Confirmation, TriageOutcome, screening
from harness.units import format_ratio


def follow_ups(setting: Setting, change: Confirmation) -> list[FollowUp]:
    """What narrows what a confirmed change's why found, in its terms (--broken/--fixed)."""
    step = change.step
    terms = REGRESSION if change.regression else FIX
    return next_steps(setting, step.before, step.after, step.criterion, change.comparison, terms)


def _triage_row(change: Confirmation, *, fix: bool) -> Row:
    """``fix``: it undoes an earlier regression of its metric (``TriageOutcome.ordered``)."""
    step = change.step
    if change.comparison is None:  # the claim's
        flip = "stops holding" if change.regression else "holds again" if fix else "now holds"
        claims = f"{claim_text(change.before)} → {claim_text(change.after)}"
        error = change.flip_error
        sure = "the same flip" + (f", by chance ≤{error:.2g}" if error is not None else "")
        return Row(step.criterion, claims, "", flip, sure)
    comparison = change.comparison
    duration = comparison.metric is not None and comparison.metric.is_duration
    fixed = fix and duration and comparison.shape.ratio and not change.regression
    word = "fixed" if fixed else comparison.said
    if not duration and not comparison.constant:  # slower and faster say which way already
        # A status step that stops running ok says what its dead side does (``crashes``).
        word += f" ({step.verb or 'worse'})" if change.regression else " (better)"
    return metric_row(step.criterion, comparison, word)


def triage_blocks(found: TriageOutcome, setting: Setting) -> list[Block]:
    steps: dict[tuple[str, str], list[tuple[bool, Confirmation]]] = {}
    small = {id(change) for change, _ in small_changes(found, setting.thresholds)}
    for change, fix in found.ordered():
        if id(change) in small:  # named apart, below
            continue
        steps.setdefault((change.step.before, change.step.after), []).append((fix, change))
    where = {release: i for i, release in enumerate(found.first_round.releases)}
    blocks = []
    for ends, changes in sorted(steps.items(), key=lambda s: where.get(s[0][1], 0)):
        before, after = ends
        ordered = sorted(changes, key=lambda tc: tc[1].step.criterion.rank())
        changes_of = [c for _, c in ordered]
        lead = next((c for c in changes_of if c.step.criterion.figures is not None), changes_of[0])
        between = found.skipped_between(lead.step)
        libs = (setting.jaxlib.get(before), setting.jaxlib.get(after))
        # jaxlib named if not the jax release's own version (jax 0.4.33, jaxlib 0.4.33 says it all)
        shown = all(libs) and libs[0] != libs[1] and libs != (before, after)
        jaxlib = f" (jaxlib {libs[0]} → {libs[1]})" if shown else ""
        skipped = f"; {', '.join(between)} between did not run" if between else ""
        head = f"jax {before} → {after}{jaxlib}: {len(changes)} change(s){skipped}"
        died = [leading(line) for line in dict.fromkeys(map(death_line, changes_of)) if line]
        rows = [_triage_row(change, fix=fix) for fix, change in ordered]
        why = why_lines(setting, *ends, lead.comparison, lead.step.criterion, libraries=True)
        blocks.append(Block(head, " → ".join(ends), rows, [*died, *why], follow_ups(setting, lead)))
    return blocks


def processes_again(found: TriageOutcome) -> str:
    """``5–10 processes a side``: how far measuring the candidates again went; "" where none was."""
    again = [min(c.comparison.processes) for c in found.confirmations if c.comparison is not None]
    fewest, most = min(again, default=0), max(again, default=0)
    return f"{fewest}{f'–{most}' if most > fewest else ''} processes a side" if again else ""


def measured_words(found: TriageOutcome) -> str:
    """``35 releases`` where the first round measured each, else ``12 of 35 releases measured``."""
    count, every = len(found.first_round.measurements), len(found.first_round.releases)
    return f"{every} releases" if count == every else f"{count} of {every} releases measured"


def grid_caveat(found: TriageOutcome) -> str:
    first = found.first_round
    left = len(first.releases) - len(first.measurements)
    if not left:
        return ""
    # A plain script's processes record no compiled program's facts: nothing of the kind to see.
    facts = any(hlo_facts(m.result) for m in first.ok() if m.result is not None)
    alike = " and the claim (no compiled program's facts were recorded)"
    alike = ", the claim and the compiled programs' facts" if facts else alike
    counts = [len(m.result.result.processes) for m in first.ok() if m.result is not None]
    glanced = (
        f" Nor would a cost's step that {min(counts)} processes a release could not tell from "
        "their scatter (glanced at; past it, in full)."
        if counts and min(counts) < max(counts)
        else ""
    )
    return (
        f"{left} releases were not measured: the ends and a grid first, then only between "
        "neighbours that differ. A change undone before the next measured release, where both are "
        f"alike in every metric, ending{alike}, would not be seen.{glanced} --every-release "
        "measures every one."
    )


SMALL_ON_SCREEN = 3


def small_changes(found: TriageOutcome, thresholds: Thresholds) -> list[tuple[Confirmation, str]]:
    """Each cost step whose ratio stays within what another run's first round would list nine
    times in ten (``grid.twice_safe_bounds``), said ``×1.3 (within ×1.57)``: each confirmed one,
    and each whose first round held it within that, so that it was not measured again."""
    bounds = twice_safe_bounds(found.first_round, screening(thresholds))
    small = []
    for change in found.confirmations:
        compared = change.comparison or change.step.comparison
        bound = small_within(compared, bounds)
        if (change.confirmed or change.small_bound) and bound and compared.cost is not None:
            again = "" if change.confirmed else ", not measured again"
            said = f"{format_ratio(compared.cost.ratio)} (within {format_ratio(bound)}{again})"
            small.append((change, said))
    return small


def small_line(small: list[tuple[Confirmation, str]], most: int | None = None) -> str:
    """The small confirmed steps (``small_changes``) named apart, the first ``most`` of them (one
    screen: a plain script's phases and memory can give dozens), and why; "" where none is."""
    if not small:
        return ""
    named = "; ".join(
        f"{c.step.criterion.name} {c.step.before} → {c.step.after} {said}"
        for c, said in small[:most]
    )
    if most is not None and len(small) > most:
        named += f"; {len(small) - most} more in the report"
    return (
        f"Small, not twice-safe: {inline(named)}: another run's first round would list each less "
        "than nine times in ten (its processes scatter, and a release's level moves from one run "
        "to the next: --invocation-spread), so a second run from a results folder of its own may "
        "not name it; one whose first round allows nothing past that is not measured again "
        "(`bisect --metric` decides one). The answers above are past that."
    )


def no_answer(found: TriageOutcome, compared: str) -> str:
    """Why a triage confirmed no change; ``compared``: where the first round's comparisons are."""
    if found.first_round.unmeasured():
        return unmeasured_line(found.first_round)
    if found.first_round.steps:
        return "No confirmed change: no candidate step of the first round held on measuring again."
    return (
        "No change found: no step between consecutive releases passed the first round's screen "
        f"({compared}; an undecided one is not evidence of no change)."
    )


def _triage_counts(found: TriageOutcome, processes: int, wall_s: float) -> list[str]:
    first, again = found.first_round, processes_again(found)
    confirmed, undecided = len(found.changes()), len(found.undecided())
    dropped = len(found.confirmations) - confirmed - undecided
    parts = [f"{confirmed} confirmed on measuring again" + (f" ({again})" if again else "")]
    parts += [f"{undecided} undecided"] if undecided else []
    parts += [f"{dropped} did not hold"] if dropped else []
    return [
        f"{measured_words(found)}, {len(first.ok())} ran ok ({processes} processes each, "
        f"measured together); wall time {wall_s:.0f} s, installs included",
        f"{len(first.steps)} candidate step(s) in the first round: {', '.join(parts)}",
    ]


def _undecided_lines(found: TriageOutcome) -> list[str]:
    each = [
        f"{c.step.criterion.name} {c.step.before} → {c.step.after}"
        + (f" ({min(c.comparison.processes)} a side, {c.comparison.said})" if c.comparison else "")
        for c in found.undecided()
    ]
    return each and screen.wrap(
        f"Undecided, not unchanged: {'; '.join(each)}. The same command with a larger "
        "--max-processes (and --time-budget, where one was given), on a quiet machine, may "
        "decide (what ran out of processes is measured again, the rest reused)."
    )


def _dropped_lines(found: TriageOutcome) -> list[str]:
    dropped = [c for c in found.confirmations if not c.confirmed and not c.undecided]
    lines = [
        f"  {line}"
        for c in dropped[:3]
        for line in screen.wrap(
            f"{c.step.criterion.name} {c.step.before} → {c.step.after} did not hold: {c.reason}",
            screen.WIDTH - 2,
            indent="  ",
        )
    ]
    more = [f"  and {len(dropped) - 3} more: the report lists them"] if len(dropped) > 3 else []
    return [*lines, *more]


def triage_screen(found: TriageOutcome, setting: Setting, processes: int, report: str) -> str:
    releases = found.first_round.releases
    head = [
        head_line("Triage", setting, releases[0], releases[-1]),
        *_triage_counts(found, processes, setting.wall_s),
        not_ok_line(found.first_round),
    ]
    blocks = triage_blocks(found, setting)
    small = small_line(small_changes(found, setting.thresholds), most=SMALL_ON_SCREEN)
    tail = _undecided_lines(found) + (screen.wrap(small) if small else [])
    tail += screen.wrap(grid_caveat(found)) if grid_caveat(found) else []
    for release, fault in found.faults():
        tail += screen.wrap(f"jax {release}: {fault}.", lines=2)
    if not blocks and not small:
        said = no_answer(found, "the report has each comparison")
        tail = [*tail, *screen.wrap(said), *_dropped_lines(found)]
    return frame(head, blocks, tail, setting, [f"Report: {report}"])
