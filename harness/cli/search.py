"""``search``'s command line: a case, the sizes pinned, how hard hypothesis looks."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from pathlib import Path

from harness.catalogue import discovery
from harness.catalogue.sizes import Budget
from harness.claim_rule import MIN_CLAIM_PROCESSES
from harness.cli import options
from harness.cli.argparsing import Command, options_of
from harness.pins import device_class
from harness.store.schema import Settings


@dataclass(frozen=True)
class SearchOptions:
    case: discovery.CaseInfo  # its size space with the pinned sizes fixed
    budget: Budget
    holds: bool
    max_examples: int
    confirm: int
    seed: int
    results: Path
    out: Path
    profile: str
    jax: str | None
    settings: Settings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_case(parser)
    parser.add_argument(
        "--holds", action="store_true", help="look for the smallest size where the claim holds"
    )
    options.add_session(parser, release=True)
    options.add_sizes(parser, "pin a size, search the others")
    for flag, default, what in (
        ("--max-examples", 20, "sizes hypothesis may try"),
        ("--confirm", 2, "re-measurements that must agree"),
    ):
        parser.add_argument(flag, type=options.positive_int, default=default, help=what)
    options.add_draws(parser)
    options.add_sampling(parser)
    options.add_processes(parser)
    options.add_results(parser)
    options.add_out(parser)


def check(args: argparse.Namespace) -> SearchOptions:
    case = options.case_from(args)
    pinned = discovery.parse_sizes(args.size)
    discovery.check_overrides([case], pinned)
    options.verdict_processes(options.processes_from(args), MIN_CLAIM_PROCESSES, "a size")
    profile = options.profile_label(args)
    return options_of(
        SearchOptions,
        args,
        case=replace(case, space=case.space.fixed(pinned)),
        budget=Budget.for_this_machine(args.budget, device_class(profile)),
        results=options.folder_to_write(args.results),
        out=options.folder_to_write(args.out, "output"),
        profile=profile,
        settings=options.sampling_from(args, **options.process_settings(args)),
    )


COMMAND = Command(
    name="search",
    summary="find the smallest size at which a case's claim fails (or, --holds, holds)",
    description=(
        "Let hypothesis propose sizes of the case's space, measure each in several processes, "
        "settle the claim over them, and shrink to the smallest size where it fails (or holds), "
        "confirmed by measuring again."
    ),
    exit_codes="0 searched (the page says what was found), 2 bad input",
    add_arguments=add_arguments,
    check=check,
)
