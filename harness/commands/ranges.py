"""What ``bisect``, ``sweep`` and ``triage`` share: the release plan read, the prober built, the answers' names,
their setting and where they are written, and the advice an answer gives.

The plan (written by ``nox -s bisect`` / ``sweep`` / ``triage`` from the package index and the release rules
of ``harness.pins``) lists every release of the range, oldest first, with what it installs.  Results go to
the results folder like any other run's and are reused from there; the answers go to
``reports/bisect-<case>-<range>-<key>.{md,json}`` (``harness.releases.answers``), ``reports/sweep-<case>.md``
and ``reports/triage-<case>-<range>-<key>.md``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from harness.cli.ranges import RangeOptions, target_words
from harness.errors import UsageError
from harness.metric_names import MetricKey
from harness.releases.answers import Setting, answer_stem, criterion
from harness.releases.bisection import SweepOutcome
from harness.releases.judge import metric_names
from harness.releases.probes import ReleaseProber
from harness.releases.venvs import ReleaseEnv, read_plan
from harness.render.json_out import document, dumps
from harness.store.files import replace_file, write_text
from harness.store.results import load_results
from harness.store.schema import RunStatus


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
