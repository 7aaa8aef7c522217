"""``triage``: a range's releases screened (a grid refined where neighbours differ, or every one),
each candidate step confirmed by measuring its two releases again together, one answer per
change."""

from __future__ import annotations

import dataclasses

from harness.cli.ranges import RangeOptions
from harness.commands.ranges import (
    UNMEASURED,
    RangeRun,
    progress,
    refuse_unknown_metric,
    swept,
)
from harness.metric_names import Criterion
from harness.render.release_answers import Answer
from harness.render.triage_answer import triage_answer
from harness.steps import reuse
from harness.steps.confirm import PairConfirmer
from harness.steps.evidence import Found, Pair
from harness.steps.grid import glance_processes
from harness.steps.triage import TriageOutcome, triage


def timing_steps(run: RangeRun, found: TriageOutcome) -> dict[tuple[str, str], list[Criterion]]:
    """Each confirmed step of a timing metric or of status, with its criteria: where to ask why, if
    asked (a status step's why is judged by status: ``harness.explain.tried.CrashWorkaround``)."""
    if not run.asks_why:
        return {}
    steps: dict[tuple[str, str], list[Criterion]] = {}
    for step in (change.step for change in found.changes()):
        if not step.criterion.is_claim:
            steps.setdefault((step.before, step.after), []).append(step.criterion)
    return steps


def execute(options: RangeOptions) -> int:
    """Exit status 0 when a change was confirmed, 3 when none was but a candidate stayed undecided,
    4 when nothing could be measured (fewer than two releases ran ok), else 1."""
    run = RangeRun.start(options)
    first_round = dataclasses.replace(
        run.prober, accept=reuse.first_round(options.measuring.processes)
    )
    metrics, with_claim = swept(options)
    glance = None  # the exact evidence first, in fewer processes
    if options.measuring.processes > (fewer := glance_processes(with_claim)):
        settings = dataclasses.replace(run.prober.settings, processes=fewer)
        glance = dataclasses.replace(first_round, settings=settings)
    found = triage(
        run.releases,
        first_round,
        PairConfirmer(run.prober),
        metrics=metrics,
        with_claim=with_claim,
        thresholds=options.thresholds,
        progress=progress,
        every_release=options.every_release,
        glance=glance,
        confirm_small=False,
    )
    refuse_unknown_metric(found.first_round, options)
    stem = run.stem()
    out, processes = options.places.out, options.measuring.processes

    def answer_of(evidence: dict[Pair, tuple[Found, ...]]) -> Answer:
        setting = run.setting(evidence=evidence)
        return triage_answer(found, setting, processes, out, stem, run.report(stem))

    answer = run.answer_then_why(timing_steps(run, found), stem, answer_of)
    run.write_json("triage", answer.data)
    if found.changes():
        return 0
    return 3 if found.undecided() else UNMEASURED if found.first_round.unmeasured() else 1
