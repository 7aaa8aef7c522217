"""``calibrate``'s command line, checked into a ``CalibrationPlan`` with ``run``'s checks."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.analysis.significance import Thresholds
from harness.catalogue import discovery
from harness.catalogue.discovery import CaseInfo, check_overrides
from harness.cli import options
from harness.cli import run as run_options
from harness.cli.argparsing import Command, validate_with
from harness.errors import UsageError

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

    def run_arguments(
        self, results: Path, *, raised: bool = False, sides: Path | None = None
    ) -> list[str]:
        """A separate run's arguments (``raised``: at the raised size), or ``sides_plan``'s."""
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
        """The unchanged and the raised case as two sides of this interpreter, interleaved."""
        side = {"release": release, "profile": self.profile}
        raised = {self.raised: self.raised_to}
        return [
            {**side, "label": "unchanged"},
            {**side, "label": f"raised {self.raised}={self.raised_to}", "sizes": raised},
        ]


def raised_size(case: CaseInfo, sizes: Mapping[str, int], spec: str | None) -> tuple[str, int]:
    """The size to raise and its value: ``NAME`` (+10 %), ``NAME=VALUE``, or the first to rise."""
    if spec is None:
        for name in case.space.ranges:
            if round(sizes[name] * (1 + RAISE_SHARE)) > sizes[name]:
                return name, round(sizes[name] * (1 + RAISE_SHARE))
        raise UsageError(
            f"no size of {case.name} is large enough to raise by 10 %: choose one with --raise "
            "NAME=VALUE"
        )
    name, sep, value = spec.partition("=")
    if name not in case.space.ranges:
        raise UsageError(
            f"--raise {spec}: {case.name} has no size {name}; its sizes: "
            f"{', '.join(case.space.ranges)}"
        )
    if not sep:
        return name, max(sizes[name] + 1, round(sizes[name] * (1 + RAISE_SHARE)))
    try:
        raised = int(value)
    except ValueError:
        raise UsageError(f"--raise {spec}: {value!r} is not an integer") from None
    if raised <= sizes[name]:
        raise UsageError(
            f"--raise {spec}: must be above {name}={sizes[name]} (more work, a real slowdown)"
        )
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
        raise UsageError(
            f"raising {name} from {sizes[name]} to {value} leaves its range [{low}, {high}]"
        )
    managed = [o for o in run_options if _names_managed_option(o)]
    if managed:
        raise UsageError(
            f"calibrate chooses {', '.join(managed)} itself: leave it out of the run options"
        )
    return CalibrationPlan(
        case.name, sizes, name, value, pairs, profile, cases_dir, tuple(run_options), slowdowns
    )


def _names_managed_option(token: str) -> bool:
    """Whether ``token`` is (or abbreviates, as argparse allows) an option ``calibrate`` sets."""
    flag = token.split("=", 1)[0]
    return (
        flag.startswith("--")
        and len(flag) > 2
        and any(o.startswith(flag) for o in MANAGED_RUN_OPTIONS)
    )


# a claim every release has, with a wall time that a 10 % larger size raises
CALIBRATION_CASE = "scan_sync"


@dataclass(frozen=True)
class CalibrateOptions:
    plan: CalibrationPlan
    results: Path
    thresholds: Thresholds


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_case(parser, default=CALIBRATION_CASE, positional=False)
    options.add_sizes(parser, "the case's first anchor, with these sizes changed")
    parser.add_argument(
        "--raise",
        dest="raise_size",
        metavar="NAME[=VALUE]",
        help=(
            "size raised for the real slowdown, by 10 % or to VALUE (default: the first a 10 % "
            "rise changes)"
        ),
    )
    for flag, what in (
        ("--pairs", "A/A pairs to run"),
        ("--slowdowns", "runs of the unchanged and the raised case, interleaved, to compare"),
    ):
        parser.add_argument(flag, type=options.positive_int, default=3, help=what)
    options.add_session(parser, release=False)
    options.add_results(parser, "stores under RESULTS/calibration/")
    parser.add_argument(
        "run_options", nargs="*", metavar="-- RUN_OPTION", help="options for every harness run"
    )
    options.add_thresholds(parser)


def check(args: argparse.Namespace) -> CalibrateOptions:
    """Every check of ``calibrate`` and of the ``run`` options it passes on."""
    case = options.case_from(args)
    results = options.folder_to_write(args.results)
    plan = plan_calibration(
        case,
        discovery.parse_sizes(args.size),
        args.raise_size,
        pairs=args.pairs,
        slowdowns=args.slowdowns,
        profile=options.profile_label(args),
        cases_dir=args.cases_dir,
        run_options=args.run_options,
    )
    for raised in (False, True):
        validate_with([run_options.COMMAND], ["run", *plan.run_arguments(results, raised=raised)])
    return CalibrateOptions(plan, results, options.thresholds_from(args))


COMMAND = Command(
    name="calibrate",
    summary=(
        "measure this machine's noise floor: verdicts between separate runs of one release, and a "
        "real slowdown"
    ),
    description=(
        "Run a case PAIRS times as an A/A pair (two separate `jax-repro run` invocations of the "
        "installed release, into temporary folders), compare each pair by the verdict over "
        "processes, then SLOWDOWNS times unchanged and with one size raised by 10 %, the two "
        "interleaved in one run, and compare those. Appends the false-positive rate and the ratios "
        "flagged to RESULTS/calibration/<machine-id>.json and prints them in one sentence. Options "
        "after -- go to every run, e.g. -- --effort full --timeout 60."
    ),
    exit_codes="0 calibrated, 1 a run failed, 2 bad input",
    add_arguments=add_arguments,
    check=check,
)
