"""``sweep``: every release of a range measured, and each significant step between neighbours."""

from __future__ import annotations

from harness.cli.ranges import RangeOptions
from harness.commands.ranges import (
    UNMEASURED,
    RangeRun,
    progress,
    refuse_unknown_metric,
    swept,
)
from harness.render.release_answers import sweep_answer
from harness.steps.bisection import sweep


def execute(options: RangeOptions) -> int:
    run = RangeRun.start(options)
    metrics, with_claim = swept(options)
    found = sweep(
        run.releases,
        run.prober,
        metrics=metrics,
        with_claim=with_claim,
        thresholds=options.thresholds,
        progress=progress,
    )
    refuse_unknown_metric(found, options)
    stem = f"sweep-{options.case.name}"
    # The terminal answer is one screen; the page and the JSON keep every release and metric.
    answer = sweep_answer(found, run.setting(), run.report(stem))
    run.publish(answer, stem, data_file=False)
    run.write_json("sweep", answer.data)
    return UNMEASURED if found.unmeasured() else 0
