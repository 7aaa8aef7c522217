"""The ``bisect`` and ``sweep`` commands: read the release plan, probe, search, write the reports.

The plan (written by ``nox -s bisect`` / ``nox -s sweep`` from the package index and
the release rules of ``harness.pins``) lists every release of the range, oldest first, with
what it installs.  Results go to the results folder like any other run's and are
reused from there; the answers go to ``reports/bisect-<case>.{md,json}`` and
``reports/sweep-<case>.md``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from harness.analysis.metric_names import MetricKey
from harness.errors import UsageError
from harness.releases.bisection import bisect, expected_probes, sweep
from harness.releases.judge import Judge, Judgement, metric_names
from harness.releases.options import RangeOptions
from harness.releases.probes import ReleaseProber
from harness.releases.report import Setting, bisect_json, bisect_markdown, bisect_text, sweep_markdown, sweep_text
from harness.releases.venvs import ReleaseEnv, read_plan
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


def prober_for(options: RangeOptions, envs: list[ReleaseEnv]) -> ReleaseProber:
    return ReleaseProber(
        {env.jax: env for env in envs},
        options.case.name,
        options.sizes,
        options.profile,
        options.results,
        ["--warmup", str(options.warmup), "--timeout", str(options.timeout)],
        options.repeats,
        options.max_seconds,
        options.processes,
        progress,
        script=None if options.case.script is None else options.case.path,
    )


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    progress(f"written: {path}")


def run_bisect(options: RangeOptions) -> int:
    """Exit status 0 when a first bad release was found, 1 when none could be named."""
    started = time.monotonic()
    case, metric = options.case, options.metric
    envs = plan_for(options)
    check_metric(options.results, case.name, metric)
    prober = prober_for(options, envs)
    # The endpoints, against which every probe is judged, are measured in one interleaved run.
    prober.measure_together([options.first, options.last])
    judge = Judge(prober, options.first, options.last, metric, options.thresholds)
    count, expected = 0, expected_probes(len(envs))

    def judged(release: str) -> Judgement:
        nonlocal count
        count += 1
        progress(
            f"[bisect {case.name}] probe {count} (about {expected} expected for {len(envs)} releases): jax {release} …"
        )
        verdict = judge(release)
        progress(f"[bisect {case.name}] probe {count}: jax {release} is {verdict.verdict}: {verdict.reason}")
        return verdict

    found = bisect([env.jax for env in envs], judged)
    setting = Setting(
        case.name, options.sizes, options.profile, metric, {e.jax: e.jaxlib for e in envs}, options.thresholds,
        time.monotonic() - started,
    )  # fmt: skip
    print(bisect_text(found, setting), end="")
    write(options.out / f"bisect-{case.name}.md", bisect_markdown(found, setting))
    write(options.out / f"bisect-{case.name}.json", json.dumps(bisect_json(found, setting), indent=1) + "\n")
    return 0 if found.found else 1


def run_sweep(options: RangeOptions) -> int:
    started = time.monotonic()
    case, metric = options.case, options.metric
    envs = plan_for(options)
    check_metric(options.results, case.name, metric)
    metrics = [metric] if metric else [] if options.claim else None
    found = sweep(
        [env.jax for env in envs],
        prober_for(options, envs),
        metrics=metrics,
        with_claim=metric is None,
        thresholds=options.thresholds,
        progress=progress,
    )
    names = sorted({name for m in found.ok() if m.result is not None for name in metric_names(m.result)})
    if metric is not None and names and metric.metric_name not in names:
        raise UsageError(f"unknown metric {metric.metric_name} for case {case.name}; its metrics: {', '.join(names)}")
    setting = Setting(
        case.name, options.sizes, options.profile, metric, {e.jax: e.jaxlib for e in envs}, options.thresholds,
        time.monotonic() - started, every_metric=metrics is None,
    )  # fmt: skip
    print(sweep_text(found, setting), end="")
    write(options.out / f"sweep-{case.name}.md", sweep_markdown(found, setting))
    return 0
