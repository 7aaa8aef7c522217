"""``calibrate``: this machine's noise floor: A/A verdicts between separate runs, and a real slowdown seen or not."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness.analysis.significance import Thresholds
from harness.catalogue import discovery
from harness.commands import Command, options

if TYPE_CHECKING:
    from harness.calibrating import CalibrationPlan

CALIBRATION_CASE = "scan_sync"  # a claim every release has, with a wall time that a 10 % larger size raises


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
        help="size raised for the real slowdown, by 10 % or to VALUE (default: the first a 10 % rise changes)",
    )
    parser.add_argument("--pairs", type=options.positive_int, default=3, help="A/A pairs to run")
    parser.add_argument(
        "--slowdowns",
        type=options.positive_int,
        default=3,
        help="runs of the unchanged and the raised case, interleaved, to compare",
    )
    options.add_profile_label(parser)
    options.add_results(parser, "stores under RESULTS/calibration/")
    parser.add_argument("run_options", nargs="*", metavar="-- RUN_OPTION", help="options for every harness run")
    options.add_thresholds(parser)


def check(args: argparse.Namespace) -> CalibrateOptions:
    """Every check of ``calibrate``, including ``run``'s checks of the options it passes on, before anything runs."""
    from harness.calibrating import plan_calibration
    from harness.commands.parser import validate

    case = options.case_from(args)
    results = options.results_folder(args.results)
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
        validate(["run", *plan.run_arguments(results, raised=raised)])
    return CalibrateOptions(plan, results, options.thresholds_from(args))


def execute(opts: CalibrateOptions) -> int:
    from harness.calibrating import calibrate
    from harness.render.calibration import noise_floor_sentence
    from harness.store.calibrations import append_calibration

    calibration = calibrate(opts.plan, opts.thresholds)
    path = append_calibration(opts.results, calibration)
    print(noise_floor_sentence(calibration))
    print(f"written: {path}", file=sys.stderr)
    return 0


COMMAND = Command(
    name="calibrate",
    summary="measure this machine's noise floor: verdicts between separate runs of one release, and a real slowdown",
    description="Run a case PAIRS times as an A/A pair (two separate `jax-repro run` invocations of the installed "
    "release, into temporary folders), compare each pair by the verdict over processes, then SLOWDOWNS times "
    "unchanged and with one size raised by 10 %, the two interleaved in one run, and compare those. Appends the "
    "false-positive rate and the ratios flagged to RESULTS/calibration/<machine-id>.json and prints them in one "
    "sentence. Options after -- go to every run, e.g. -- --effort full --timeout 60.",
    exit_codes="0 calibrated, 1 a run failed, 2 bad input",
    add_arguments=add_arguments,
    check=check,
    execute=execute,
)
