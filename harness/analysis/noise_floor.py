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

The figures are appended to ``calibration/<machine-id>.json`` under the results
folder (one file per machine, one entry per calibration, newest last), which the
result loader leaves alone; ``latest_calibrations`` reads them back for the report.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from harness.analysis.metrics import MetricComparison, compare_runs, metric_samples
from harness.analysis.power import detectable_ratio, log_medians, pooled_spreads
from harness.analysis.significance import Thresholds, Verdict
from harness.catalogue.discovery import CaseInfo, check_overrides
from harness.errors import HarnessError, UsageError
from harness.measure.invocation import run_harness
from harness.measure.runner import release_label
from harness.store.results import CALIBRATION_FOLDER, StoredResult, load_results
from harness.store.schema import RunStatus
from harness.units import format_ratio

CALIBRATION_SCHEMA = "jax-repro-harness/calibration"
CALIBRATION_VERSION = 1
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


def _flagged(comparisons: Sequence[MetricComparison]) -> list[MetricComparison]:
    return [m for m in comparisons if m.comparison.verdict in (Verdict.SLOWER, Verdict.FASTER)]


def _described(found: MetricComparison) -> str:
    return f"{found.key.metric_name} {format_ratio(found.comparison.ratio)} {found.comparison.verdict}"


@dataclass(frozen=True)
class CalibrationRun:
    """One calibration, as stored: what was run, how often A/A pairs got a verdict, what a real slowdown got."""

    created_at: str
    machine: str
    release: str
    profile: str
    case: str
    sizes: dict[str, int]
    pairs: int
    comparisons: int  # metric comparisons over all A/A pairs
    flagged: int  # of them, with a faster/slower verdict
    raised: str
    raised_from: int
    raised_to: int
    slowdown_comparisons: int
    slowdown_flagged: int  # metrics of the raised side flagged slower, over all slowdown runs
    smallest_flagged_ratio: float | None  # the smallest ratio flagged slower; None when none was
    largest_unflagged_ratio: float | None  # the largest ratio not flagged slower; None when all were
    processes: int  # the fewest processes any compared side had: below min_processes no verdict was possible
    min_processes: int
    settings: dict[str, Any] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)  # per pair and per metric, for people
    # Runs measuring the unchanged and the raised case interleaved; 0: calibrated before they were,
    # by one separate raised run compared with the first A/A run.
    slowdown_runs: int = 0
    # The smallest ratio the rule over processes flags in DETECTION_POWER of comparisons, from the spread
    # of process medians in the A/A runs (the median over metrics); None where it could not be worked out.
    detectable_ratio: float | None = None
    # How far the level of one whole invocation moves from another's (log standard deviation), from the
    # A/A pairs: what ``compare --invocation-spread`` allows for between separate runs; None before it was.
    invocation_spread: float | None = None
    aa_loaded: bool = False  # some A/A process was measured under load: the spread is a loaded machine's

    @property
    def false_positive_rate(self) -> float:
        return self.flagged / self.comparisons if self.comparisons else math.nan

    def as_json(self) -> dict[str, Any]:
        return {
            "created_at": self.created_at,
            "release": self.release,
            "profile": self.profile,
            "case": self.case,
            "sizes": self.sizes,
            "settings": self.settings,
            "aa": {
                "pairs": self.pairs,
                "processes": self.processes,
                "comparisons": self.comparisons,
                "flagged": self.flagged,
                "false_positive_rate": None if math.isnan(self.false_positive_rate) else self.false_positive_rate,
                "detectable_ratio": self.detectable_ratio,
                "detectable_by_metric": self.details.get("detectable", {}),
                "invocation_spread": self.invocation_spread,
                "loaded": self.aa_loaded,
                "per_pair": self.details.get("per_pair", []),
            },
            "slowdown": {
                "runs": self.slowdown_runs,
                "size": self.raised,
                "from": self.raised_from,
                "to": self.raised_to,
                "comparisons": self.slowdown_comparisons,
                "flagged": self.slowdown_flagged,
                "smallest_flagged_ratio": self.smallest_flagged_ratio,
                "largest_unflagged_ratio": self.largest_unflagged_ratio,
                "metrics": self.details.get("metrics", []),
            },
        }

    @classmethod
    def from_json(cls, machine: str, data: Any, where: str = "run") -> CalibrationRun:
        """Parse one stored entry; ValueError naming the first field that is missing or of the wrong type."""
        run = _Fields(data, where)
        aa, slowdown = run.mapping("aa"), run.mapping("slowdown")
        return cls(
            created_at=run.text("created_at"),
            machine=machine,
            release=run.text("release"),
            profile=run.text("profile"),
            case=run.text("case"),
            sizes=run.sizes("sizes"),
            pairs=aa.count("pairs"),
            comparisons=aa.count("comparisons"),
            flagged=aa.count("flagged"),
            raised=slowdown.text("size"),
            raised_from=slowdown.count("from"),
            raised_to=slowdown.count("to"),
            slowdown_comparisons=slowdown.count("comparisons"),
            slowdown_flagged=slowdown.count("flagged"),
            smallest_flagged_ratio=slowdown.ratio("smallest_flagged_ratio"),
            largest_unflagged_ratio=slowdown.ratio("largest_unflagged_ratio"),
            processes=aa.count("processes"),
            min_processes=run.mapping("settings").count("min_processes"),
            settings=dict(run.mapping("settings").values),
            details={
                "per_pair": aa.values.get("per_pair", []),
                "metrics": slowdown.values.get("metrics", []),
                "detectable": aa.values.get("detectable_by_metric", {}),
            },
            slowdown_runs=slowdown.count("runs") if "runs" in slowdown.values else 0,
            detectable_ratio=aa.ratio("detectable_ratio"),
            invocation_spread=aa.ratio("invocation_spread"),
            aa_loaded=aa.flag("loaded"),
        )


class _Fields:
    """Typed access to one object of an untrusted calibration file."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected an object, got {type(data).__name__}")
        self.values: dict[str, Any] = data
        self.where = where

    def _get(self, key: str, kinds: tuple[type, ...], expected: str) -> Any:
        value = self.values.get(key)
        if not isinstance(value, kinds) or isinstance(value, bool):
            raise ValueError(f"{self.where}.{key}: expected {expected}, got {type(value).__name__}")
        return value

    def text(self, key: str) -> str:
        return cast(str, self._get(key, (str,), "str"))

    def count(self, key: str) -> int:
        value = cast(int, self._get(key, (int,), "int"))
        if value < 0:
            raise ValueError(f"{self.where}.{key}: expected a count, got {value}")
        return value

    def ratio(self, key: str) -> float | None:
        if self.values.get(key) is None:
            return None
        return float(self._get(key, (int, float), "number or null"))

    def flag(self, key: str) -> bool:
        """A true/false field; absent (older files) is false."""
        value = self.values.get(key, False)
        if not isinstance(value, bool):
            raise ValueError(f"{self.where}.{key}: expected bool, got {type(value).__name__}")
        return value

    def mapping(self, key: str) -> _Fields:
        return _Fields(self.values.get(key), f"{self.where}.{key}")

    def sizes(self, key: str) -> dict[str, int]:
        found = self.mapping(key)
        return {name: found.count(name) for name in found.values}


def process_spreads(results: Sequence[StoredResult]) -> dict[str, float]:
    """Per metric, the pooled standard deviation of log process medians within each run (runs of one release)."""
    return pooled_spreads(metric_samples(result) for result in results)


def invocation_spread(pairs: Sequence[tuple[StoredResult, StoredResult]]) -> float | None:
    """The log standard deviation of a whole invocation's level, from A/A pairs of separate invocations.

    Per metric of a pair, the squared difference of the sides' mean log process medians
    exceeds what their processes' spread predicts (s²/K a side) by twice the invocation
    variance, on average; the metrics of one pair share its two levels, so each pair's
    excess is averaged over its metrics first, then over pairs.  Negative estimates (the
    levels agreed better than chance) count as none.  None without any metric measured
    in two or more processes on both sides."""
    excesses = []
    for a, b in pairs:
        first, second = metric_samples(a), metric_samples(b)
        found = []
        for key in first.keys() & second.keys():
            logs = [log_medians(first[key]), log_medians(second[key])]
            if min(map(len, logs)) >= 2:
                difference = statistics.fmean(logs[1]) - statistics.fmean(logs[0])
                expected = sum(statistics.variance(side) / len(side) for side in logs)
                found.append(difference**2 - expected)
        if found:
            excesses.append(statistics.fmean(found))
    if not excesses:
        return None
    return math.sqrt(max(0.0, statistics.fmean(excesses)) / 2)


def summarize_calibration(
    plan: CalibrationPlan,
    thresholds: Thresholds,
    aa_pairs: Sequence[tuple[StoredResult, StoredResult]],
    slowdowns: Sequence[tuple[StoredResult, StoredResult]],
    created_at: datetime,
) -> CalibrationRun:
    """The figures of one calibration from its stored runs: A/A pairs, then (unchanged, raised) pairs."""
    per_pair = []
    comparisons = flagged = 0
    processes: list[int] = []
    for a, b in aa_pairs:
        compared = compare_runs(a, b, thresholds)[0]
        processes += [min(m.comparison.processes) for m in compared]
        found = _flagged(compared)
        comparisons += len(compared)
        flagged += len(found)
        per_pair.append({"comparisons": len(compared), "flagged": [_described(m) for m in found]})
    raised = [found for unchanged, more in slowdowns for found in compare_runs(unchanged, more, thresholds)[0]]
    processes += [min(m.comparison.processes) for m in raised]
    slower = [m.comparison.ratio for m in raised if m.comparison.verdict == Verdict.SLOWER]
    others = [m.comparison.ratio for m in raised if m.comparison.verdict != Verdict.SLOWER]
    others = [ratio for ratio in others if not math.isnan(ratio)]
    first = aa_pairs[0][0]
    spreads = process_spreads([run for pair in aa_pairs for run in pair])
    fewest = min(processes, default=0)
    detectable = {name: detectable_ratio(spread, fewest, thresholds) for name, spread in spreads.items()}
    return CalibrationRun(
        created_at=created_at.isoformat(timespec="seconds"),
        machine=first.machine,
        release=first.release,
        profile=first.profile,
        case=plan.case,
        sizes=dict(plan.sizes),
        pairs=len(aa_pairs),
        comparisons=comparisons,
        flagged=flagged,
        raised=plan.raised,
        raised_from=plan.sizes[plan.raised],
        raised_to=plan.raised_to,
        slowdown_comparisons=len(raised),
        slowdown_flagged=len(slower),
        smallest_flagged_ratio=min(slower) if slower else None,
        largest_unflagged_ratio=max(others) if others else None,
        processes=min(processes, default=0),
        min_processes=thresholds.min_processes,
        settings={
            "run_options": list(plan.run_options),
            "factor": thresholds.factor,
            "alpha": thresholds.alpha,
            "min_processes": thresholds.min_processes,
            "invocation_spread": thresholds.invocation_spread,
        },
        slowdown_runs=len(slowdowns),
        detectable_ratio=statistics.median(detectable.values()) if detectable and fewest >= 2 else None,
        invocation_spread=invocation_spread(aa_pairs),
        aa_loaded=any(
            p.load is not None and p.load.loaded for pair in aa_pairs for r in pair for p in r.result.processes
        ),
        details={
            "per_pair": per_pair,
            "detectable": {name: round(ratio, 4) for name, ratio in sorted(detectable.items())},
            "metrics": [
                {
                    "metric": m.key.metric_name,
                    "ratio": None if math.isnan(m.comparison.ratio) else m.comparison.ratio,
                    "p_value": None if math.isnan(m.comparison.p_value) else m.comparison.p_value,
                    "verdict": str(m.comparison.verdict),
                    "processes": list(m.comparison.processes),
                }
                for m in raised
            ],
        },
    )


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


def calibration_path(results_root: Path, machine: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in machine) or "_"
    return results_root / CALIBRATION_FOLDER / f"{safe}.json"


def read_calibration(path: Path) -> list[CalibrationRun]:
    """Every calibration stored in one machine's file, oldest first; ValueError naming what is wrong."""
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"unreadable JSON ({exc})") from None
    document = _Fields(data, "file")
    if document.values.get("schema") != CALIBRATION_SCHEMA:
        raise ValueError(f"not a calibration (schema {document.values.get('schema')!r})")
    if document.values.get("schema_version") != CALIBRATION_VERSION:
        raise ValueError(f"calibration version {document.values.get('schema_version')!r} is not {CALIBRATION_VERSION}")
    machine = document.text("machine")
    runs = document.values.get("runs")
    if not isinstance(runs, list):
        raise ValueError(f"file.runs: expected list, got {type(runs).__name__}")
    return [CalibrationRun.from_json(machine, run, f"runs[{i}]") for i, run in enumerate(runs)]


def append_calibration(results_root: Path, run: CalibrationRun) -> Path:
    """Add ``run`` to its machine's file, atomically (written beside it, then renamed over it).

    Earlier entries are kept; a file that cannot be read is refused rather than replaced.
    """
    path = calibration_path(results_root, run.machine)
    earlier: list[Any] = []
    if path.exists():
        try:
            read_calibration(path)
        except ValueError as exc:
            raise HarnessError(f"{path} is not a usable calibration file ({exc}): move it away first") from None
        earlier = json.loads(path.read_text())["runs"]
    document = {
        "schema": CALIBRATION_SCHEMA,
        "schema_version": CALIBRATION_VERSION,
        "machine": run.machine,
        "runs": [*earlier, run.as_json()],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(json.dumps(document, indent=1, sort_keys=True))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path


def latest_calibrations(results_root: Path) -> tuple[dict[str, CalibrationRun], list[str]]:
    """Machine id → its newest calibration, and a line for every file that cannot be used."""
    latest: dict[str, CalibrationRun] = {}
    problems: list[str] = []
    folder = results_root / CALIBRATION_FOLDER
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            runs = read_calibration(path)
        except ValueError as exc:
            problems.append(f"{path}: {exc}")
            continue
        if runs:
            latest[runs[-1].machine] = max(runs, key=lambda r: r.created_at)
    return latest, problems
