"""``triage``: every release of a range measured in one interleaved run, each candidate step confirmed by
measuring its two releases again together, one answer per change."""

from __future__ import annotations

import time

from harness.cli.ranges import RangeOptions
from harness.commands.ranges import (
    check_metric,
    plan_for,
    prober_for,
    progress,
    refuse_unknown_metric,
    setting_for,
    stem_for,
    swept_metrics,
    write,
    write_json,
)
from harness.names import inside
from harness.releases import probes
from harness.releases.probes import PairConfirmer
from harness.releases.triage import triage
from harness.render.triage_answer import draw_triage_plot, triage_json, triage_markdown, triage_text


def execute(options: RangeOptions) -> int:
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
