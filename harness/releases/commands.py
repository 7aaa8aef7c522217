"""The ``bisect``, ``sweep`` and ``triage`` commands: read the release plan, probe, search, write the reports.

The plan (written by ``nox -s bisect`` / ``sweep`` / ``triage`` from the package index and
the release rules of ``harness.pins``) lists every release of the range, oldest first, with
what it installs.  Results go to the results folder like any other run's and are
reused from there; the answers go to ``reports/bisect-<case>-<range>-<key>.{md,json}``
(``harness.releases.answers``), ``reports/sweep-<case>.md`` and
``reports/triage-<case>-<range>-<key>.md``.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

from harness.analysis.metric_names import MetricKey
from harness.analysis.metrics import compare_runs
from harness.analysis.significance import Verdict, past_factor
from harness.errors import HarnessError, UsageError
from harness.names import inside
from harness.releases import probes
from harness.releases.answers import answer_stem, criterion
from harness.releases.bisection import BisectOutcome, SweepOutcome, bisect, expected_probes, sweep
from harness.releases.judge import FIX, REGRESSION, Judge, Judgement, metric_names
from harness.releases.options import RangeOptions, target_words
from harness.releases.probes import PairConfirmer, ReleaseProber
from harness.releases.report import (
    Setting,
    bisect_json,
    bisect_markdown,
    bisect_text,
    sweep_json,
    sweep_markdown,
    sweep_text,
)
from harness.releases.triage import triage
from harness.releases.triage_report import draw_triage_plot, triage_json, triage_markdown, triage_text
from harness.releases.venvs import ReleaseEnv, read_plan
from harness.store.files import replace_file
from harness.store.results import load_results
from harness.store.schema import RunStatus
from harness.units import format_ratio, time_left


def progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def plan_for(options: RangeOptions) -> list[ReleaseEnv]:
    command = f"nox -s {options.command}"
    if options.releases_plan is None:
        raise UsageError(f"--releases PLAN is missing: run this through `{command}`, which lists the releases for it")
    envs = read_plan(options.releases_plan)
    ends = (envs[0].jax, envs[-1].jax) if envs else None
    if ends != (options.first, options.last):
        raise UsageError(
            f"the release plan {options.releases_plan} does not run from {options.first} to {options.last}"
        )
    return envs


def check_metric(results_dir: Path, case: str, metric: MetricKey | None) -> None:
    """Refuse a metric that no stored ok result of the case has, before anything is installed."""
    if metric is None or not (results_dir / case).is_dir():
        return
    known = {name for r in load_results(results_dir / case)[0] if r.status is RunStatus.OK for name in metric_names(r)}
    if known and metric.metric_name not in known:
        raise UsageError(
            f"unknown metric {metric.metric_name} for case {case}; its metrics: {', '.join(sorted(known))}"
        )


def prober_for(options: RangeOptions, envs: list[ReleaseEnv], processes: int | None = None) -> ReleaseProber:
    return ReleaseProber(
        {env.jax: env for env in envs},
        options.case.name,
        options.sizes,
        options.profile,
        options.results,
        ["--warmup", str(options.warmup), "--timeout", str(options.timeout)],
        options.repeats,
        options.max_seconds,
        processes or options.processes,
        progress,
        script=None if options.case.script is None else options.case.path,
        script_args=() if options.case.script is None else options.case.script.args,
        max_processes=options.max_processes,
        time_budget=options.time_budget,
        decide_metrics=() if options.metric is None else (options.metric.metric_name,),
    )


def write_json(options: RangeOptions, kind: str, body: dict[str, Any]) -> None:
    """``--json FILE``: the answer as data, where the user asked for it."""
    if options.json is not None:
        from harness.commands.export import write_text  # a file the user named: one line when it cannot be written
        from harness.render.json_out import document, dumps

        write_text(options.json, dumps(document(kind, body)))
        progress(f"written: {options.json}")


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_file(path, text)  # the reports folder may hold a link planted at this name: replaced, not followed
    progress(f"written: {path}")


def stem_for(options: RangeOptions) -> str:
    """The answer's file name without suffix: per case, range, criterion, sizes and profile."""
    return answer_stem(
        options.command, options.case.name, options.first, options.last,
        criterion=criterion(options.metric, options.claim), sizes=options.sizes, profile=options.profile,
    )  # fmt: skip


def triage_command(options: RangeOptions) -> str:
    """The ``nox -s triage`` command over ``options``' range and setting."""
    target = target_words(options.case)
    words = ["nox", "-s", "triage", "--", *target, "--from", options.first, "--to", options.last]
    if options.metric is not None:
        words += ["--metric", options.metric.metric_name]
    elif options.claim:
        words.append("--claim")
    words += [f"--size {name}={value}" for name, value in options.sizes.items()]
    words += ["--profile", options.profile, "--processes", str(options.processes)]
    return " ".join(words)


def no_change_hint(options: RangeOptions) -> str:
    return (
        f"The endpoints agree, but a change introduced and undone between {options.first} and {options.last} "
        f"hides from a bisect; every release between them is measured by: `{triage_command(options)}`"
    )


def undecided_hint(options: RangeOptions) -> str:
    return (
        f"Undecided, not unchanged: the endpoints were measured together up to {options.max_processes} processes "
        f"each and the statistics could tell neither a change nor its absence. More processes would decide: the "
        f"same command with `--max-processes {2 * options.max_processes}` (stored results are reused), best while "
        "nothing else loads the machine"
    )


def setting_for(options: RangeOptions, envs: list[ReleaseEnv], started: float, **more: Any) -> Setting:
    """What a bisect, sweep or triage searched, with the wall time since ``started`` (``time.monotonic``)."""
    jaxlib = {env.jax: env.jaxlib for env in envs}
    wall_s = time.monotonic() - started
    return Setting(
        options.case.name, options.sizes, options.profile, options.metric, jaxlib, options.thresholds, wall_s,
        target=tuple(target_words(options.case)), **more,
    )  # fmt: skip


def refuse_unknown_metric(found: SweepOutcome, options: RangeOptions) -> None:
    """A metric none of the measured results has, once they are measured (no stored result named them before)."""
    metric = options.metric
    names = sorted({name for m in found.ok() if m.result is not None for name in metric_names(m.result)})
    if metric is not None and names and metric.metric_name not in names:
        raise UsageError(
            f"unknown metric {metric.metric_name} for case {options.case.name}; its metrics: {', '.join(names)}"
        )


def swept_metrics(options: RangeOptions) -> list[MetricKey] | None:
    """The metrics a sweep or triage compares: the one asked for, none with --claim, every one (None) otherwise."""
    if options.metric is not None:
        return [options.metric]
    return [] if options.claim else None


def run_bisect(options: RangeOptions) -> int:
    """Exit status 0 when a first bad release was found, 3 when the endpoints stayed undecided, else 1."""
    if options.commits:
        from harness.releases.commit_command import run_commit_bisect  # it drives this module's helpers

        return run_commit_bisect(options)
    started = time.monotonic()
    envs = plan_for(options)
    check_metric(options.results, options.case.name, options.metric)
    prober = prober_for(options, envs)
    # The endpoints, against which every probe is judged, are measured in one interleaved run, until their
    # comparison is decided: with a metric, changed or unchanged ("all"), else every metric that moved.
    prober.measure_together([options.first, options.last], decide="all" if options.metric else "changes")
    if options.metric is None and not options.claim:  # a plain script: every metric that moved, each bisected
        return _bisect_every_changed_metric(options, envs, prober, started)
    found, data = _bisect(options, envs, prober, started)
    write_json(options, "bisect", {"answers": [data]})
    return bisect_exit(found)


def bisect_exit(found: BisectOutcome) -> int:
    """0 a first bad release named, 3 undecided (more measurement would decide), 1 no answer otherwise."""
    return 0 if found.found else 3 if found.undecided else 1


def _bisect_every_changed_metric(
    options: RangeOptions, envs: list[ReleaseEnv], prober: ReleaseProber, started: float
) -> int:
    """Bisect each metric the endpoints differ on (the probes' results are stored, so later bisects reuse them)."""
    good, bad = prober(options.first), prober(options.last)
    if good.result is None or bad.result is None:
        missing = good if good.result is None else bad
        raise HarnessError(f"jax {missing.release}: {missing.note}; no endpoint to compare the metrics of")
    compared, _, _ = compare_runs(good.result, bad.result, options.thresholds)
    if any(c.comparison.verdict == Verdict.UNDECIDED and c.comparison.invocation_spread for c in compared):
        # Results of separate runs: the endpoints are measured again together, until decided.
        prober.measure_together([options.first, options.last], anew=True)
        good, bad = prober(options.first), prober(options.last)
        if good.result is not None and bad.result is not None:
            compared, _, _ = compare_runs(good.result, bad.result, options.thresholds)
    moved = [c.key for c in compared if c.comparison.verdict in (Verdict.SLOWER, Verdict.FASTER)]
    names = ", ".join(k.metric_name for k in moved) or "none"
    progress(f"[bisect {options.case.name}] metrics that differ between {options.first} and {options.last}: {names}")
    if not moved:
        open_ = [
            f"{c.key.metric_name} {format_ratio(c.comparison.ratio)}"
            for c in compared
            if c.comparison.verdict == Verdict.UNDECIDED and past_factor(c.comparison.ratio, options.thresholds)
        ]
        undecided = f" Undecided, not unchanged: {', '.join(open_)}. {undecided_hint(options)}." if open_ else ""
        print(
            f"No metric of {options.case.name} differs significantly between jax {options.first} and "
            f"{options.last}: nothing to bisect.{undecided} Every release between them is measured by: "
            f"`{triage_command(options)}`"
        )
        write_json(options, "bisect", {"answers": [], "moved": [], "undecided": open_})
        return 3 if open_ else 1
    found = [_bisect(dataclasses.replace(options, metric=key), envs, prober, started) for key in moved]
    write_json(options, "bisect", {"answers": [data for _, data in found], "moved": [k.metric_name for k in moved]})
    return min(bisect_exit(each) for each, _ in found)


def _bisect(
    options: RangeOptions, envs: list[ReleaseEnv], prober: ReleaseProber, started: float
) -> tuple[BisectOutcome, dict[str, Any]]:
    """One metric's (or the claim's) bisect, its answer printed and written; the outcome and its data."""
    case, metric = options.case, options.metric
    terms = FIX if options.fix else REGRESSION
    judge = Judge(prober, options.first, options.last, metric, options.thresholds, terms)
    count, expected = 0, expected_probes(len(envs))
    probing = time.monotonic()

    def judged(release: str) -> Judgement:
        nonlocal count
        pace = time_left(count, max(expected - count, 1), time.monotonic() - probing)
        count += 1
        progress(
            f"[bisect {case.name}] probe {count} (about {expected} expected for {len(envs)} releases"
            f"{'; ' + pace if pace else ''}): jax {release} …"
        )
        verdict = judge(release)
        said = terms.word(verdict.verdict)
        progress(f"[bisect {case.name}] probe {count}: jax {release} is {said}: {verdict.reason}")
        return verdict

    found = bisect([env.jax for env in envs], judged, terms)
    setting = setting_for(options, envs, started, terms=terms)
    hint = no_change_hint(options) if found.no_change else undecided_hint(options) if found.undecided else ""
    stem = stem_for(options)
    print(bisect_text(found, setting, hint), end="")
    write(inside(options.out, f"{stem}.md"), bisect_markdown(found, setting, hint))
    data = bisect_json(found, setting, hint)
    write(inside(options.out, f"{stem}.json"), json.dumps(data, indent=1) + "\n")
    return found, data


def run_sweep(options: RangeOptions) -> int:
    started = time.monotonic()
    case, metric = options.case, options.metric
    envs = plan_for(options)
    check_metric(options.results, case.name, metric)
    metrics = swept_metrics(options)
    found = sweep(
        [env.jax for env in envs],
        prober_for(options, envs),
        metrics=metrics,
        with_claim=metric is None,
        thresholds=options.thresholds,
        progress=progress,
    )
    refuse_unknown_metric(found, options)
    setting = setting_for(options, envs, started, every_metric=metrics is None)
    print(sweep_text(found, setting), end="")
    write(options.out / f"sweep-{case.name}.md", sweep_markdown(found, setting))
    write_json(options, "sweep", sweep_json(found, setting))
    return 0


def run_triage(options: RangeOptions) -> int:
    """Exit status 0 when a change was confirmed, 3 when none was but a candidate stayed undecided, else 1."""
    started = time.monotonic()
    case, metric = options.case, options.metric
    envs = plan_for(options)
    check_metric(options.results, case.name, metric)
    first_round = prober_for(options, envs)
    first_round.accept = probes.first_round(options.processes)
    confirmer = PairConfirmer(prober_for(options, envs))
    metrics = swept_metrics(options)
    found = triage(
        [env.jax for env in envs], first_round, confirmer,
        metrics=metrics, with_claim=metric is None, thresholds=options.thresholds, progress=progress,
    )  # fmt: skip
    refuse_unknown_metric(found.first_round, options)
    setting = setting_for(options, envs, started, every_metric=metrics is None)
    stem = stem_for(options)
    plot = draw_triage_plot(found, setting, options.out, stem)
    print(triage_text(found, setting, options.processes), end="")
    write(inside(options.out, f"{stem}.md"), triage_markdown(found, setting, options.processes, plot))
    write_json(options, "triage", triage_json(found, setting))
    return 0 if found.changes() else 3 if found.undecided() else 1
