"""``run``: measure cases (or a plain script) on the JAX installed here, or on each side of a plan, and store them."""

from __future__ import annotations

import sys

from harness.analysis.power import detectable_in_records
from harness.analysis.sequential import open_comparison
from harness.cli import options
from harness.cli.run import RunOptions
from harness.errors import UsageError
from harness.measure.runner import PlannedRun, Recorder, run_all
from harness.store.schema import RunStatus

ALREADY_MEASURED = "already measured"  # a cell passed over on resume, counted apart from the statuses


def execute(opts: RunOptions) -> int:
    effort = opts.settings.effort
    plan = [
        PlannedRun(case, point)
        for case in opts.cases
        for point in case.plan(effort, opts.overrides, seed=opts.seed, budget=opts.budget)
    ]
    if not plan:
        raise UsageError(f"nothing to run: no size points for effort {effort!r}")
    options.prove_writable(opts.results)
    with Recorder(
        opts.results, opts.sides, opts.settings, opts.seed, opts.budget,
        detectable=detectable_in_records, undecided=open_comparison,
    ) as recorder:  # fmt: skip
        outcomes = run_all(plan, recorder, resume=opts.resume)
    counts: dict[str, int] = {}
    for _, cell_run, _ in outcomes:
        status = ALREADY_MEASURED if cell_run is None else cell_run.status
        counts[status] = counts.get(status, 0) + 1
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    stored = sum(1 for _, _, path in outcomes if path is not None)
    sides = len(recorder.sides)
    cells = f"{len(plan)} cells" + (f" on {sides} sides" if sides > 1 else "")
    print(f"{cells}, {stored} results stored under {opts.results}: {summary}", file=sys.stderr)
    bad = sum(n for status, n in counts.items() if status not in (RunStatus.OK, RunStatus.SKIPPED, ALREADY_MEASURED))
    return 1 if opts.strict and bad else 0
