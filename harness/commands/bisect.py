"""``bisect``: the first release where a metric (or the claim) changed, probed release by release
against both ends; with ``--commits``, on below the releases
(``harness.commands.bisect_commits``)."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from harness.analysis.metrics import compare_runs
from harness.analysis.significance import MOVED, Verdict
from harness.cli.ranges import RangeOptions
from harness.commands.bisect_commits import run_commit_bisect
from harness.commands.ranges import (
    RangeRun,
    no_change_hint,
    progress,
    say_unknown_declared,
    stored_metric_names,
    triage_command,
    undecided_hint,
)
from harness.errors import HarnessError
from harness.findings import Finding, FollowUp
from harness.metric_names import Criterion, Judged
from harness.render.bisect_screen import Bisected, bisect_screen, nothing_to_bisect_screen
from harness.render.release_answers import Answer, bisect_answer
from harness.steps.answers import Setting
from harness.steps.bisection import BisectOutcome, bisect, expected_probes, next_probe
from harness.steps.evidence import Found, Pair
from harness.steps.judge import FIX, REGRESSION, Judge, Judgement
from harness.units import time_left


def execute(options: RangeOptions) -> int:
    """Exit status 0 when a first bad release was found, 3 when the endpoints stayed undecided, else
    1 (``bisect_exit``)."""
    if options.commits:
        return run_commit_bisect(options)
    run = RangeRun.start(options)
    options = run.options  # with --vary, the range's ends are the labels its releases were given
    # The endpoints, against which every probe is judged, measured together until decided; the first
    # probe's release installed meanwhile.
    first_probe = next_probe(0, len(run.releases) - 1)
    run.prober.prepare_ahead([run.releases[first_probe]] if first_probe is not None else [])
    run.prober.measure_together(
        [options.first, options.last], decide="all" if options.metric else "changes"
    )
    say_unknown_declared(stored_metric_names(options), options)
    # a plain script: every metric that moved, each bisected
    if options.criterion.by is Judged.EVERY:
        return _bisect_every_changed_metric(run)
    bisected, data = _bisect(run, options)
    run.write_json("bisect", {"answers": [data]})
    return bisect_exit(bisected.found)


def bisect_exit(found: BisectOutcome) -> int:
    return 0 if found.found else 3 if found.undecided else 1


def _bisect_every_changed_metric(run: RangeRun) -> int:
    """Bisect each metric the endpoints differ on (later ones reuse the probes' stored results)."""
    options, prober = run.options, run.prober
    good, bad = prober(options.first), prober(options.last)
    if good.result is None or bad.result is None:
        missing = good if good.result is None else bad
        raise HarnessError(
            f"jax {missing.release}: {missing.note}; no endpoint to compare the metrics of"
        )
    compared, _, _ = compare_runs(good.result, bad.result, options.thresholds)
    if any(
        c.comparison.verdict == Verdict.UNDECIDED and c.comparison.invocation_spread
        for c in compared
    ):
        # Results of separate runs: the endpoints are measured again together, until decided.
        prober.measure_together([options.first, options.last], anew=True)
        good, bad = prober(options.first), prober(options.last)
        if good.result is not None and bad.result is not None:
            compared, _, _ = compare_runs(good.result, bad.result, options.thresholds)
    moved = [c.key for c in compared if c.comparison.verdict in MOVED]
    names = ", ".join(k.metric_name for k in moved) or "none"
    progress(
        f"[bisect {options.case.name}] metrics that differ between {options.first} and "
        f"{options.last}: {names}"
    )
    if not moved:
        open_ = [
            f"{c.key.metric_name} {c.comparison.ratio_cell}"
            for c in compared
            if c.comparison.verdict == Verdict.UNDECIDED and c.comparison.past(options.thresholds)
        ]
        progress.done()
        said = [
            Finding(
                f"No metric of {options.case.name} differs significantly between jax "
                f"{options.first} and {options.last}: nothing to bisect."
            )
        ]
        if open_:
            said.append(undecided_hint(options, open_))
        follow_up = FollowUp("", triage_command(options, every_release=True))
        said.append(Finding("Every release between them is measured by", (follow_up,)))
        print(nothing_to_bisect_screen(run.setting(), options.first, options.last, said), end="")
        run.write_json("bisect", {"answers": [], "moved": [], "undecided": open_})
        return 3 if open_ else 1
    # Each metric's page and data are its own; the terminal shows them all on one screen.
    each = [(key, dataclasses.replace(options, criterion=Criterion.of(key))) for key in moved]
    found = [_bisect(run, metric_options, printed=False) for _, metric_options in each]
    reports = [run.report(run.stem(metric_options)) for _, metric_options in each]
    print(bisect_screen([b for b, _ in found], run.setting(), reports), end="")
    run.write_json(
        "bisect", {"answers": [data for _, data in found], "moved": [k.metric_name for k in moved]}
    )
    return min(bisect_exit(b.found) for b, _ in found)


def _bisect(
    run: RangeRun, options: RangeOptions, *, printed: bool = True
) -> tuple[Bisected, dict[str, Any]]:
    """One metric's (or the claim's) bisect, its answer written (and ``printed``), and its data."""
    case = options.case
    terms = FIX if options.fix else REGRESSION
    judge = Judge(
        run.prober, options.first, options.last, options.criterion, options.thresholds, terms
    )
    count, expected = 0, expected_probes(len(run.labels))
    probing = time.monotonic()

    def judged(release: str) -> Judgement:
        nonlocal count
        pace = time_left(count, max(expected - count, 1), time.monotonic() - probing)
        count += 1
        progress(
            f"[bisect {case.name}] probe {count} (about {expected} expected for {len(run.labels)} "
            f"releases{'; ' + pace if pace else ''}): jax {release} …"
        )
        verdict = judge(release)
        said = terms.word(verdict.verdict)
        progress(f"[bisect {case.name}] probe {count}: jax {release} is {said}: {verdict.reason}")
        return verdict

    # the next probe's venvs are installed while this one is measured
    found = bisect(run.releases, judged, terms, ahead=run.prober.prepare_ahead)
    hint = no_change_hint(options) if found.no_change else None
    if found.undecided:
        hint = undecided_hint(options)
    steps: dict[Pair, list[Criterion]] = {}
    asked = options.criterion.explained
    if found.found and found.last_good and found.first_bad and asked and run.asks_why:
        steps[(found.last_good, found.first_bad)] = [options.criterion]
    stem = run.stem(options)
    settings: list[Setting] = []

    def answer_of(evidence: dict[Pair, tuple[Found, ...]]) -> Answer:
        # The run's setting, judged by this bisect's criterion.
        setting = run.setting(terms=terms, evidence=evidence)
        settings[:] = [dataclasses.replace(setting, criterion=options.criterion)]
        return bisect_answer(found, settings[0], hint, run.report(stem))

    answer = run.answer_then_why(steps, stem, answer_of, printed=printed)
    return Bisected(found, settings[0], hint), answer.data
