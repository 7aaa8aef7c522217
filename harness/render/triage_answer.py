"""A triage's answers: one screen for the terminal (``triage_screen``: the range in one line, how
much ran, one block per confirmed step (its changes, the why of its first metric, the bisect below
the releases), the undecided, the report), one markdown report with the plot of the metric over
releases, and the JSON."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.analysis.claims import outcome
from harness.analysis.metrics import MetricKey, hlo_facts, union_keys
from harness.analysis.metrics import metric_samples as samples_of
from harness.analysis.report_model import metric_series
from harness.analysis.significance import Comparison, Thresholds, format_margin
from harness.findings import Finding, FollowUp, leading
from harness.names import inside
from harness.render import screen
from harness.render.json_out import comparison_json
from harness.render.plots import draw_series
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
from harness.render.release_answers import Answer, against_cell, releases_markdown, sweep_json
from harness.render.tables import markdown_table
from harness.render.text import fenced, inline
from harness.render.triage_words import answered, answers, dead_side, death_line, family_error
from harness.render.why import next_steps, why_json, why_lines
from harness.steps.answers import Setting
from harness.steps.grid import small_within, twice_safe_bounds
from harness.steps.judge import FIX, REGRESSION
from harness.steps.triage import Confirmation, TriageOutcome, screening
from harness.units import format_ratio

PLOTS = "plots"
RULE = (
    "The first round measures the range's ends and every ⌊√n⌋-th of its n releases, then only "
    "between measured neighbours that differ, down to consecutive releases (a range of fewer than "
    "9, or --every-release: every release, in one interleaved run); where it skips releases, each "
    "is first measured in 2 processes (3 with the claim), enough for what every process shows "
    "alike (values, presences, endings, the claim, compiled facts), and only the two ends of "
    "neighbours whose costs differ past the factor and what their processes' spread could show "
    "are measured in full. It screens each step between "
    "a measured release and the previous one that ran ok: a *candidate* is a ratio past the factor "
    "that the test flags at the screening level, or that results of separate runs leave "
    "undecided (outside --every-release, a cost's also past that spread's bound). Each "
    "candidate's two releases are then measured again, together, with looks of more processes "
    "while the step's comparison is open, and the step stands only when that second measurement "
    "shows the same change on its own at the strict level (or the same claim flip). A candidate "
    "the second measurement leaves *undecided* is neither a change nor its absence: more processes "
    "would decide it. A sped-up metric reads *fixed* when it undoes a confirmed slowdown, *faster* "
    "otherwise."
)


def _count_line(found: TriageOutcome, setting: Setting, processes: int) -> str:
    first = found.first_round
    again = processes_again(found)
    measured = f", {again}" if again else ""
    undecided = f", {len(found.undecided())} undecided" if found.undecided() else ""
    fewest = min((len(m.result.result.processes) for m in first.ok() if m.result), default=0)
    each = f"{processes} processes each"
    if 0 < fewest < processes:
        each = f"{fewest} processes each, {processes} where costs differed"
    return (
        f"{measured_words(found)} on the index in the range, {len(first.ok())} ran ok "
        f"({each}, measured together); {len(first.steps)} candidate step(s) in "
        f"the first round, {len(found.changes())} confirmed on measuring again until "
        f"decided{measured}{undecided}; wall time {setting.wall_s:.0f} s, installs included"
    )


def _answer_lines(found: TriageOutcome, setting: Setting) -> list[str]:
    said: set[tuple[str, str]] = set()  # steps whose own findings were said
    died_said: set[str] = set()  # where a step's processes died, said once
    lines = []
    small = small_changes(found, setting.thresholds)
    for text, change in answered(found):
        if any(change is c for c, _ in small):
            continue
        pair = (change.step.before, change.step.after)
        why = [f.markdown() for f in step_findings(change, setting, pair not in said)]
        why += [f.markdown() for f in follow_ups(setting, change)]
        lines.append("\n".join([f"- {inline(text)}", *(f"  - {line}" for line in why)]))
        died = "\n".join(_died_lines(change))
        if died and died not in died_said:
            lines.append(died)
            died_said.add(died)
        said.add(pair)
    lines += [f"- {small_line(small)}"] if small else []
    undecided = [
        f"{c.step.criterion.name} {c.step.before} → {c.step.after}"
        + (_measured(c.comparison) if c.comparison else "")
        for c in found.undecided()
    ]
    if undecided:
        lines.append(
            f"- Undecided, not unchanged: {inline('; '.join(undecided))}: measured again, the "
            "statistics could tell neither the change nor its absence within --max-processes (the "
            "looks stop early where even the most processes allowed would be unlikely to decide). "
            "The same command with a larger --max-processes (and --time-budget, where one was "
            "given: it may be what stopped them; what ran out is measured again, the rest "
            "reused), on a quiet machine, may decide."
        )
    lines += [f"- jax {release}: {fault}." for release, fault in found.faults()]
    if found.changes() or found.undecided():
        return lines
    # faults alone: said, and then why there is no answer
    return [*lines, no_answer(found, "each comparison is in the releases table")]


def _measured(comparison: Comparison) -> str:
    """`` (10 processes a side, within ±7.5%)``: how far an undecided confirmation went."""
    margin = format_margin(comparison.cost.margin) if comparison.cost else ""
    return f" ({min(comparison.processes)} processes a side{', ' + margin if margin else ''})"


def step_findings(change: Confirmation, setting: Setting, with_step: bool = True) -> list[Finding]:
    """Why a confirmed step moved: its libraries, then what each kind found (the step's own findings
    only ``with_step``: once per step)."""
    step, pair = change.step, (change.step.before, change.step.after)
    return why_lines(
        setting, *pair, change.comparison, step.criterion, with_step=with_step, libraries=True
    )


def _died_lines(change: Confirmation) -> list[str]:
    dead = dead_side(change)
    first = dead.ends.first if dead.ends is not None else None
    if first is None:
        return []
    lines = [f"  - {inline(death_line(change))}"]
    host = dead.result.result.host if dead.result is not None else None
    if host is not None and host.cpu_model:  # crashes in XLA:CPU often depend on the CPU
        platform = inline(host.platform or "platform unrecorded")
        lines.append(f"  - on {inline(host.cpu_model)}, {platform}")
    for title, text in (("its last lines", first.last_lines), ("Python's stack", first.stack)):
        if text.strip():
            fence = fenced(text).replace("\n", "\n    ")
            lines += [f"  - {title}:", "", f"    {fence}", ""]
    return lines


def _step_rows(found: TriageOutcome) -> list[list[str]]:
    rows = []
    for c in found.confirmations:
        step = c.step
        first = step.said if step.criterion.figures is None else against_cell(step.comparison)
        results = [r for r in (c.before.result, c.after.result) if r is not None]
        claims = " → ".join(map(outcome, results)) if len(results) == 2 else "–"
        again = claims if step.criterion.is_claim else against_cell(c.comparison)
        ends, holds = f"{step.before} → {step.after}", "yes" if c.confirmed else "no"
        source = f"{c.before.release}: {c.before.note}; {c.after.release}: {c.after.note}"
        rows.append([step.criterion.name, ends, first, again, holds, c.reason, source])
    return rows


STEP_HEADERS = ["metric", "releases", "first round", "measured again", "holds", "why", "source"]


def plotted_metrics(found: TriageOutcome, setting: Setting) -> list[MetricKey]:
    """The metric asked; else those that stepped; else (a claim alone, no step) every wall time."""
    if setting.metric is not None:
        return [setting.metric]
    stepped = {s.criterion.metric for s in found.first_round.steps}
    keys = [k for k in found.first_round.metrics if k in stepped]
    if keys:
        return keys
    every = union_keys(
        [samples_of(m.result) for m in found.first_round.ok() if m.result is not None]
    )
    return [k for k in every if k.kind == "wall"]


def triage_markdown(
    found: TriageOutcome, setting: Setting, processes: int, plot: tuple[str | None, str]
) -> str:
    first = found.first_round
    link, why = plot
    error = family_error(found, setting.thresholds)
    none = "**Nothing could be measured**" if first.unmeasured() else "**No confirmed change**"
    lines = [
        f"# Triage: {inline(setting.case)}, jax {first.releases[0]} → {first.releases[-1]}",
        "",
        "**Answers**" if found.changes() else none,
        "",
        *_answer_lines(found, setting),
        "",
        f"- {inline(setting.header())}",
        f"- {_count_line(found, setting, processes)}",
        *([f"- {grid_caveat(found)}"] if grid_caveat(found) else []),
        "",
        f"![the metric over releases]({link})" if link else f"Plot not drawn: {why}.",
        "",
        "## Steps, measured again",
        "",
        markdown_table(_step_rows(found), STEP_HEADERS)
        if found.confirmations
        else "No step to measure again.",
        "",
        RULE,
        "",
        *([error, ""] if error else []),
        *releases_markdown(first, setting, "## Releases (first round)"),
    ]
    return "\n".join(lines)


def triage_json(found: TriageOutcome, setting: Setting) -> dict[str, Any]:
    small = small_changes(found, setting.thresholds)
    confirmations = [
        {
            "metric": c.step.criterion.name,
            "before": c.step.before,
            "after": c.step.after,
            "change": c.step.said,
            "first_round": comparison_json(c.step.comparison),
            "again": comparison_json(c.comparison),
            "outcome": c.outcome,
            # confirmed past what another run's first round would list nine times in ten
            "twice_safe": c.confirmed and not any(c is change for change, _ in small),
            "reason": c.reason,
            # What the issue draft reads of why, as a bisect answer's ``findings`` are.
            "findings": [f.data() for f in step_findings(c, setting)] if c.confirmed else [],
            "sources": {c.before.release: c.before.note, c.after.release: c.after.note},
        }
        for c in found.confirmations
    ]
    return {
        "first_round": sweep_json(found.first_round, setting),
        "confirmations": confirmations,
        "answers": answers(found),
        "family_error": family_error(found, setting.thresholds),
        "faults": [{"release": release, "fault": fault} for release, fault in found.faults()],
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        **why_json(setting),
    }


def triage_answer(
    found: TriageOutcome, setting: Setting, processes: int, out: Path, stem: str, report: str = ""
) -> Answer:
    """The triage's answer, its plot drawn under ``out`` beside the page."""
    results = [m.result for m in found.first_round.ok() if m.result is not None]
    series = metric_series(results, plotted_metrics(found, setting))
    changes = list(dict.fromkeys(c.step.after for c in found.changes()))
    releases = found.first_round.releases
    title = f"{setting.case}, jax {releases[0]} → {releases[-1]}"
    why = draw_series(title, releases, series, changes, inside(out, PLOTS, f"{stem}.png"))
    plot = (None, why) if why else (f"{PLOTS}/{stem}.png", "")
    return Answer(
        triage_screen(found, setting, processes, report or str(inside(out, f"{stem}.md"))),
        triage_markdown(found, setting, processes, plot),
        triage_json(found, setting),
    )


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
    if not (left := len(first.releases) - len(first.measurements)):
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
    lines = []
    for c in dropped[:3]:
        said = f"{c.step.criterion.name} {c.step.before} → {c.step.after} did not hold: {c.reason}"
        lines += [f"  {line}" for line in screen.wrap(said, screen.WIDTH - 2, indent="  ")]
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
