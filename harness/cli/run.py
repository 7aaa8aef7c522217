"""``run``'s command line: cases (or a plain script), sides, sampling, processes."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from harness.catalogue import discovery
from harness.catalogue.sizes import Budget
from harness.cli import options
from harness.cli.argparsing import Command, options_of
from harness.errors import UsageError
from harness.measure.isolation import ISOLATIONS, default_isolation
from harness.measure.sides import Side, load_plan, this_side
from harness.pins import HOST, device_class
from harness.store.schema import Settings


@dataclass(frozen=True)
class RunOptions:
    cases: list[discovery.CaseInfo]
    overrides: dict[str, int]
    budget: Budget
    seed: int
    results: Path
    sides: list[Side]
    settings: Settings
    resume: str  # "skip", "force" or "retry-failed"
    strict: bool
    device: str = HOST  # the device class of the sides' profiles: which anchors run


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_case(parser, many=True, script=True)
    options.add_session(parser, release=False)
    parser.add_argument(
        "--sides",
        type=options.path,
        metavar="PLAN.json",
        help=(
            "measure on each side this plan lists (release venv, environment, release and profile "
            "labels), one case process per side in turn; see docs/measuring.md, 'Sides' (default: "
            "this interpreter, --profile)"
        ),
    )
    add_measuring(parser)
    for flag, what in (
        ("--strict", "exit 1 when any case run is not ok or skipped"),
        ("--force", "re-measure cells already stored in the results folder"),
        ("--retry-failed", "re-measure stored cells whose run failed, timed out or crashed"),
    ):
        parser.add_argument(flag, action="store_true", help=what)


def add_measuring(parser: argparse.ArgumentParser) -> None:
    """How the sides are measured and where they are stored: what ``run`` and ``flags`` share."""
    options.add_sizes(parser)
    options.add_draws(parser)
    options.add_results(parser)
    options.add_sampling(parser)
    options.add_processes(parser)
    options.add_target(parser)
    parser.add_argument(
        "--isolation",
        choices=ISOLATIONS,
        help="fork: each case process a fork of a worker that imported JAX once (fast start); "
        "spawn: each case process a new interpreter (default: fork, spawn when JAX_PLATFORMS pins "
        "a GPU)",
    )


def check(args: argparse.Namespace) -> RunOptions:
    """Every check of ``run`` that needs neither JAX nor hypothesis (the noxfile calls it too)."""
    results = options.folder_to_write(args.results)
    if args.script:
        cases = [options.case_from(args)]
    else:
        # --case takes no --script-arg: said, not silently ignored
        options.refuse_script_options(args)
        cases = discovery.select(discovery.discover(args.cases_dir), args.case)
    overrides = discovery.parse_sizes(args.size)
    discovery.check_overrides(cases, overrides)
    if args.force and args.retry_failed:
        raise UsageError("--force and --retry-failed exclude each other")
    if args.sides is None:
        sides = [this_side(options.profile_label(args))]
    elif args.profile is not None:
        raise UsageError(
            "--sides gives each side its profile; --profile is for a run without --sides"
        )
    else:
        sides = load_plan(args.sides)
        for side in sides:
            discovery.check_overrides(cases, side.sizes)
    settings = settings_from(args, len(sides))
    device = run_device(sides)
    return options_of(
        RunOptions,
        args,
        cases=cases,
        overrides=overrides,
        budget=Budget.for_this_machine(args.budget, device),
        results=results,
        sides=sides,
        settings=settings,
        resume="force" if args.force else "retry-failed" if args.retry_failed else "skip",
        device=device,
    )


def settings_from(args: argparse.Namespace, sides: int) -> Settings:
    """How each cell of ``sides`` sides is measured (until decided where there are two or more)."""
    return options.sampling_from(
        args,
        isolation=args.isolation or default_isolation(),
        **options.target_from(args, sides),
        **options.process_settings(args),
    )


def run_device(sides: list[Side]) -> str:
    """Every side's device class (it picks the sizes): a cell has the same sizes on every side."""
    classes = {device_class(side.profile) for side in sides}
    if len(classes) > 1:
        raise UsageError(
            "the sides' profiles are of the host's CPU and of an accelerator, which run a case at "
            "different sizes: measure them in runs of their own"
        )
    return classes.pop() if classes else HOST


COMMAND = Command(
    name="run",
    summary="run cases on the JAX installed here and store the results",
    description=(
        "Measure the chosen cases (default: all) at the effort's sizes on the JAX installed here, "
        "or on every side of a --sides plan, their processes interleaved, and store one result per "
        "cell."
    ),
    exit_codes=(
        "0 measured (or already stored), 1 with --strict a cell failed, timed out or crashed, 2 "
        "bad input, 130/143 interrupted (everything stored so far is kept)"
    ),
    add_arguments=add_arguments,
    check=check,
)
