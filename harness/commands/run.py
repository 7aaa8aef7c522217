"""``run``: measure cases (or a plain script) on the JAX installed here, or on each side of a plan,
and store them; ``measure_run`` is the measurement alone (``calibrate`` runs it several times).
"""

from __future__ import annotations

from collections import Counter

from harness.analysis.power import detectable_in_records, open_comparison
from harness.analysis.statuses import end_words, error_line, innermost_frame
from harness.cli import options
from harness.cli.run import RunOptions
from harness.commands.progress import Progress
from harness.errors import UsageError
from harness.measure.cells import PlannedRun
from harness.measure.runner import Measured, measure
from harness.render.run_screen import NotOk, run_screen
from harness.store.schema import RunStatus
from harness.units import sizes_text

# a cell passed over on resume, counted apart from the statuses
ALREADY_MEASURED = "already measured"
FINE = (RunStatus.OK, RunStatus.SKIPPED)  # the statuses that fail neither a cell nor --strict


def plan_of(opts: RunOptions) -> list[PlannedRun]:
    """Every case at every size point of its effort (with ``--size`` applied), in order."""
    effort = opts.settings.effort
    plan = [
        PlannedRun(case, point)
        for case in opts.cases
        for point in case.plan(
            effort, opts.overrides, seed=opts.seed, budget=opts.budget, device=opts.device
        )
    ]
    if not plan:
        raise UsageError(f"nothing to run: no size points for effort {effort!r}")
    return plan


def measure_run(opts: RunOptions, progress: Progress | None = None) -> list[Measured]:
    """The run ``opts`` describe, measured and stored: a ``Measured`` per cell and side."""
    plan = plan_of(opts)
    options.prove_writable(opts.results)
    return measure(
        plan,
        opts.sides,
        opts.settings,
        opts.results,
        seed=opts.seed,
        budget=opts.budget,
        resume=opts.resume,
        detectable=detectable_in_records,
        undecided=open_comparison,
        progress=progress or Progress(),
    )


def not_ok_cell(outcome: Measured) -> NotOk:
    """A cell that did not run ok, named as its stored result names it (else by its side)."""
    assert outcome.run is not None
    stored = outcome.stored
    what = (
        f"{stored.result.case} {sizes_text(stored.result.sizes)} · jax {stored.result.release}"
        if stored is not None
        else outcome.side.label or f"jax {outcome.side.release}"
    )
    # how and where the first process that did not run ok died, in a line
    end = next((p.died for p in outcome.run.processes if p.died is not None), None)
    said = [end_words(end), innermost_frame(end.stack), error_line(end)] if end else []
    died = "; ".join(dict.fromkeys(part for part in said if part))
    return NotOk(what, str(outcome.run.status), outcome.run.detail, died)


def execute(opts: RunOptions) -> int:
    # In a terminal each process's line replaces the one before; the summary below stays.
    progress = Progress()
    try:
        outcomes = measure_run(opts, progress)
    finally:
        progress.done()
    counts = Counter(ALREADY_MEASURED if o.run is None else str(o.run.status) for o in outcomes)
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    stored = sum(1 for outcome in outcomes if outcome.stored is not None)
    sides = len(opts.sides)
    cells = f"{len(outcomes) // sides} cells" + (f" on {sides} sides" if sides > 1 else "")
    not_ok = [not_ok_cell(o) for o in outcomes if o.run is not None and o.run.status not in FINE]
    for line in run_screen(
        f"{cells}, {stored} results stored under {opts.results}: {summary}",
        not_ok,
        str(opts.results),
    ):
        progress.keep(line)
    # A passed-over cell counts by what was stored for it: resuming does not turn a stored failure
    # into a success.
    kept = (outcome.previous if outcome.run is None else outcome.run.status for outcome in outcomes)
    return 1 if opts.strict and any(status not in FINE for status in kept) else 0
