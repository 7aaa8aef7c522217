"""A triage's answers: one screen for the terminal (``triage_screen``), one markdown report with the
plot of the metric over releases, and the JSON."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.analysis.claims import outcome
from harness.analysis.metrics import MetricKey, union_keys
from harness.analysis.metrics import metric_samples as samples_of
from harness.analysis.plot_points import metric_series
from harness.analysis.significance import Comparison, format_margin
from harness.findings import Finding
from harness.names import inside
from harness.render.json_out import comparison_json
from harness.render.plots import draw_series
from harness.render.release_answers import Answer, against_cell, releases_markdown, sweep_json
from harness.render.tables import markdown_table
from harness.render.text import fenced, inline
from harness.render.triage_screen import (
    follow_ups,
    grid_caveat,
    measured_words,
    no_answer,
    processes_again,
    small_changes,
    small_line,
    triage_screen,
)
from harness.render.triage_words import answered, answers, dead_side, death_line, family_error
from harness.render.why import why_json, why_lines
from harness.steps.answers import Setting
from harness.steps.triage import Confirmation, TriageOutcome

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
        lines.append(
            f"  - on {inline(host.cpu_model)}, {inline(host.platform or 'platform unrecorded')}"
        )
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


def draw_triage_plot(
    found: TriageOutcome, setting: Setting, out: Path, stem: str
) -> tuple[str | None, str]:
    results = [m.result for m in found.first_round.ok() if m.result is not None]
    series = metric_series(results, plotted_metrics(found, setting))
    changes = list(dict.fromkeys(c.step.after for c in found.changes()))
    releases = found.first_round.releases
    title = f"{setting.case}, jax {releases[0]} → {releases[-1]}"
    why = draw_series(title, releases, series, changes, inside(out, PLOTS, f"{stem}.png"))
    return (None, why) if why else (f"{PLOTS}/{stem}.png", "")


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
    plot = draw_triage_plot(found, setting, out, stem)
    return Answer(
        triage_screen(found, setting, processes, report or str(inside(out, f"{stem}.md"))),
        triage_markdown(found, setting, processes, plot),
        triage_json(found, setting),
    )
