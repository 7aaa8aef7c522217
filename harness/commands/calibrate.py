"""``calibrate``: this machine's noise floor: A/A verdicts between separate runs, and a real
slowdown seen or not.

Separate runs of one release differ by the level each process sets.  A case is run R times as an A/A
pair of separate runs (each with workers and case processes of its own), compared metric by metric:
the share that got a verdict is the false-positive rate.  Then S runs each measure the case
unchanged and with one size raised by 10 % (real extra work) as two interleaved sides: how often,
and from which ratio, the raised side is flagged slower says what change the machine can see.  The
figures are appended to the machine's calibration file (``store.calibrations``).
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from harness.analysis.noise_floor import summarize_calibration
from harness.analysis.significance import Thresholds
from harness.cli import run as run_declaration
from harness.cli.argparsing import validate_with
from harness.cli.calibrate import CalibrateOptions, CalibrationPlan
from harness.commands import run as run_command
from harness.errors import HarnessError
from harness.measure.locks import stderr_line
from harness.measure.sides import release_label
from harness.render.calibration import noise_floor_sentence
from harness.store.calibrations import CalibrationRun, append_calibration
from harness.store.results import StoredResult, load_results
from harness.store.schema import RunStatus


def execute(opts: CalibrateOptions) -> int:
    calibration = calibrate(opts.plan, opts.thresholds)
    path = append_calibration(opts.results, calibration)
    print(noise_floor_sentence(calibration))
    print(f"written: {path}", file=sys.stderr)
    return 0


def _measured(folder: Path, what: str, sides: int) -> list[StoredResult]:
    """The ``sides`` results, one a side, that the run ``what`` stored in ``folder``, each ok."""
    results, problems = load_results(folder) if folder.is_dir() else ([], [])
    each = "one" if sides == 1 else "one per side"
    if len(results) != sides or problems:
        found = f"{len(results)} results" + (f", {len(problems)} unusable" if problems else "")
        raise HarnessError(
            f"the {what} stored {found} where {each} was expected (see its output above)"
        )
    for result in results:
        if result.result.status is not RunStatus.OK:
            cell = "its cell" if sides == 1 else "a side"
            raise HarnessError(
                f"the {what} did not measure: {cell} is {result.result.status} (see its output "
                "above)"
            )
    return results


# One run of ``calibrate``: ``run``'s options (the plan's choices and the user's, after ``--``) →
# its exit status.
Runner = Callable[[Sequence[str]], int]


def run_separately(arguments: Sequence[str]) -> int:
    """``run`` with these options as a run of its own, as a user's separate runs are."""
    _, options = validate_with([run_declaration.COMMAND], ["run", *arguments])
    return run_command.execute(options)


def calibrate(
    plan: CalibrationPlan, thresholds: Thresholds, *, run: Runner = run_separately
) -> CalibrationRun:
    """The A/A pairs as separate runs and the slowdown runs interleaved, each into a temporary
    results folder (removed after: they must not mix with real ones); their figures."""
    with tempfile.TemporaryDirectory(prefix="harness-calibrate-") as temporary:
        root = Path(temporary)
        aa = [
            (f"A/A pair {i + 1}/{plan.pairs}, run {side}", root / f"pair-{i + 1}-{side}")
            for i in range(plan.pairs)
            for side in "AB"
        ]
        for what, folder in aa:
            _run(run, what, plan.run_arguments(folder))
        stored = [result for what, folder in aa for result in _measured(folder, what, 1)]
        sides = root / "sides.json"
        sides.write_text(json.dumps(plan.sides_plan(release_label())))
        slowdowns = []
        for i in range(plan.slowdowns):
            what = (
                f"slowdown run {i + 1}/{plan.slowdowns}, unchanged and "
                f"{plan.raised}={plan.raised_to} interleaved"
            )
            folder = root / f"slowdown-{i + 1}"
            _run(run, what, plan.run_arguments(folder, sides=sides))
            # the unchanged and the raised side's results, told apart by the size raised
            by_size = {r.result.sizes.get(plan.raised): r for r in _measured(folder, what, 2)}
            unchanged, raised = by_size.get(plan.sizes[plan.raised]), by_size.get(plan.raised_to)
            if unchanged is None or raised is None:
                raise HarnessError(
                    f"the {what} did not store one result unchanged and one at "
                    f"{plan.raised}={plan.raised_to}"
                )
            slowdowns.append((unchanged, raised))
    machines = {r.result.machine for r in [*stored, *(s for pair in slowdowns for s in pair)]}
    if len(machines) > 1:
        raise HarnessError(
            f"the runs report {len(machines)} machines ({', '.join(sorted(machines))}), not one"
        )
    pairs = [(stored[2 * i], stored[2 * i + 1]) for i in range(plan.pairs)]
    return summarize_calibration(plan, thresholds, pairs, slowdowns, datetime.now(UTC))


def _run(run: Runner, what: str, arguments: list[str]) -> None:
    stderr_line(f"calibrate: {what}")
    code = run(arguments)
    if code not in (0, 1):
        raise HarnessError(f"the {what} exited with code {code}")
