"""``python -m harness calibrate``: how often does this machine cry wolf, and does it hear a real change?

Separate runs of one release differ by the level each process sets; how much depends
on the machine and on what else runs there.  The command measures it, as a user's
runs would see it: a case is run R times as an A/A pair (two separate ``harness run``
invocations of the same release, each into a temporary results folder), each pair
compared metric by metric with the verdict over processes; the share of comparisons
that got a verdict is the false-positive rate.  Then S runs each measure the case
unchanged and with one size raised by 10 % (real extra work, not scaled timings) as two
sides of one run, their processes interleaved in rounds (as a bisect, a sweep or the
matrix measures releases), and compare them: how often, and from which ratio, the
raised side is flagged slower says what change the machine can see.

Each run goes into a temporary results folder of its own, so none mixes with the real
results; the figures (``analysis.noise_floor``) are what the command appends to the
machine's calibration file (``store.calibrations``).
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.analysis.noise_floor import summarize_calibration
from harness.analysis.significance import Thresholds
from harness.catalogue.discovery import CaseInfo, check_overrides
from harness.errors import HarnessError, UsageError
from harness.measure.invocation import run_harness
from harness.measure.runner import release_label
from harness.store.calibrations import CalibrationRun
from harness.store.results import StoredResult, load_results
from harness.store.schema import RunStatus

RAISE_SHARE = 0.10
# ``calibrate`` chooses these for each run; given again after ``--`` they would contradict it.
MANAGED_RUN_OPTIONS = ("--case", "--size", "--results", "--profile", "--cases-dir", "--sides")


@dataclass(frozen=True)
class CalibrationPlan:
    case: str
    sizes: dict[str, int]
    raised: str  # the size raised for the real slowdown
    raised_to: int
    pairs: int
    profile: str
    cases_dir: Path
    run_options: tuple[str, ...] = ()
    slowdowns: int = 3  # interleaved runs of the unchanged and the raised case

    def run_arguments(self, results: Path, *, raised: bool = False, sides: Path | None = None) -> list[str]:
        """A separate run's arguments (``raised``: at the raised size); with ``sides``, a run of the plan
        ``sides_plan`` wrote, whose sides give their profile and sizes."""
        sizes = {**self.sizes, self.raised: self.raised_to} if raised else self.sizes
        return [
            "--case",
            self.case,
            *(f"--size={name}={value}" for name, value in sorted(sizes.items())),
            f"--sides={sides}" if sides is not None else f"--profile={self.profile}",
            f"--cases-dir={self.cases_dir}",
            f"--results={results}",
            *self.run_options,
        ]

    def sides_plan(self, release: str) -> list[dict[str, Any]]:
        """The unchanged case and the raised one as two sides of this interpreter, to be measured interleaved."""
        return [
            {"release": release, "profile": self.profile, "label": "unchanged"},
            {
                "release": release,
                "profile": self.profile,
                "label": f"raised {self.raised}={self.raised_to}",
                "sizes": {self.raised: self.raised_to},
            },
        ]


def raised_size(case: CaseInfo, sizes: Mapping[str, int], spec: str | None) -> tuple[str, int]:
    """The size to raise and its raised value: ``NAME`` (+10 %), ``NAME=VALUE``, or by default the
    first size of the case whose 10 % rise changes it."""
    if spec is None:
        for name in case.space.ranges:
            if round(sizes[name] * (1 + RAISE_SHARE)) > sizes[name]:
                return name, round(sizes[name] * (1 + RAISE_SHARE))
        raise UsageError(f"no size of {case.name} is large enough to raise by 10 %: choose one with --raise NAME=VALUE")
    name, sep, value = spec.partition("=")
    if name not in case.space.ranges:
        raise UsageError(f"--raise {spec}: {case.name} has no size {name}; its sizes: {', '.join(case.space.ranges)}")
    if not sep:
        return name, max(sizes[name] + 1, round(sizes[name] * (1 + RAISE_SHARE)))
    try:
        raised = int(value)
    except ValueError:
        raise UsageError(f"--raise {spec}: {value!r} is not an integer") from None
    if raised <= sizes[name]:
        raise UsageError(f"--raise {spec}: must be above {name}={sizes[name]} (more work, a real slowdown)")
    return name, raised


def plan_calibration(
    case: CaseInfo,
    overrides: Mapping[str, int],
    raise_spec: str | None,
    *,
    pairs: int,
    profile: str,
    cases_dir: Path,
    run_options: Sequence[str],
    slowdowns: int = 3,
) -> CalibrationPlan:
    """Check everything the user chose; UsageError for the first problem."""
    check_overrides([case], dict(overrides))
    if not case.anchors and set(overrides) != set(case.space.ranges):
        raise UsageError(f"{case.name} has no anchors: give every size with --size")
    sizes = {**(case.anchors[0] if case.anchors else {}), **overrides}
    name, value = raised_size(case, sizes, raise_spec)
    low, high = case.space.ranges[name]
    if value > high:
        raise UsageError(f"raising {name} from {sizes[name]} to {value} leaves its range [{low}, {high}]")
    managed = [o for o in run_options if _names_managed_option(o)]
    if managed:
        raise UsageError(f"calibrate chooses {', '.join(managed)} itself: leave it out of the run options")
    return CalibrationPlan(case.name, sizes, name, value, pairs, profile, cases_dir, tuple(run_options), slowdowns)


def _names_managed_option(token: str) -> bool:
    """Whether ``token`` is (or abbreviates, as argparse allows) an option ``calibrate`` sets itself."""
    flag = token.split("=", 1)[0]
    return flag.startswith("--") and len(flag) > 2 and any(o.startswith(flag) for o in MANAGED_RUN_OPTIONS)


def _only_result(folder: Path, what: str) -> StoredResult:
    results, problems = load_results(folder) if folder.is_dir() else ([], [])
    if len(results) != 1 or problems:
        found = f"{len(results)} results" + (f", {len(problems)} unusable" if problems else "")
        raise HarnessError(f"the {what} stored {found} where one was expected (see its output above)")
    [result] = results
    if result.status is not RunStatus.OK:
        raise HarnessError(f"the {what} did not measure: its cell is {result.status} (see its output above)")
    return result


Runner = Callable[[Sequence[str]], int]


def _pair_by_sizes(folder: Path, plan: CalibrationPlan, what: str) -> tuple[StoredResult, StoredResult]:
    """The unchanged and the raised side's results of one interleaved slowdown run."""
    results, problems = load_results(folder) if folder.is_dir() else ([], [])
    by_size = {r.result.sizes.get(plan.raised): r for r in results}
    unchanged, raised = by_size.get(plan.sizes[plan.raised]), by_size.get(plan.raised_to)
    if len(results) != 2 or problems or unchanged is None or raised is None:
        found = f"{len(results)} results" + (f", {len(problems)} unusable" if problems else "")
        raise HarnessError(f"the {what} stored {found} where one per side was expected (see its output above)")
    for result in (unchanged, raised):
        if result.status is not RunStatus.OK:
            raise HarnessError(f"the {what} did not measure: a side is {result.status} (see its output above)")
    return unchanged, raised


def calibrate(plan: CalibrationPlan, thresholds: Thresholds, *, run: Runner = run_harness) -> CalibrationRun:
    """Run the A/A pairs as separate ``harness run`` invocations and the slowdown runs as interleaved ones,
    each into a temporary results folder (removed after: these runs must not mix with the real ones);
    their figures."""
    with tempfile.TemporaryDirectory(prefix="harness-calibrate-") as temporary:
        root = Path(temporary)
        aa = [
            (f"A/A pair {i + 1}/{plan.pairs}, run {side}", root / f"pair-{i + 1}-{side}")
            for i in range(plan.pairs)
            for side in "AB"
        ]
        for what, folder in aa:
            _run(run, what, plan.run_arguments(folder))
        stored = [_only_result(folder, what) for what, folder in aa]
        sides = root / "sides.json"
        sides.write_text(json.dumps(plan.sides_plan(release_label())))
        slowdowns = []
        for i in range(plan.slowdowns):
            what = f"slowdown run {i + 1}/{plan.slowdowns}, unchanged and {plan.raised}={plan.raised_to} interleaved"
            folder = root / f"slowdown-{i + 1}"
            _run(run, what, plan.run_arguments(folder, sides=sides))
            slowdowns.append(_pair_by_sizes(folder, plan, what))
    machines = {result.machine for result in stored} | {r.machine for pair in slowdowns for r in pair}
    if len(machines) > 1:
        raise HarnessError(f"the runs report {len(machines)} machines ({', '.join(sorted(machines))}), not one")
    pairs = [(stored[2 * i], stored[2 * i + 1]) for i in range(plan.pairs)]
    return summarize_calibration(plan, thresholds, pairs, slowdowns, datetime.now(UTC))


def _run(run: Runner, what: str, arguments: list[str]) -> None:
    print(f"calibrate: {what}", file=sys.stderr, flush=True)
    code = run(arguments)
    if code not in (0, 1):
        raise HarnessError(f"the {what} exited with code {code}")
