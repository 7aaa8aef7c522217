"""``sweep``: every release of a range measured, and each significant step between neighbours."""

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
    swept_metrics,
    write,
    write_json,
)
from harness.releases.bisection import sweep
from harness.render.release_answers import (
    sweep_json,
    sweep_markdown,
    sweep_text,
)


def execute(options: RangeOptions) -> int:
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
