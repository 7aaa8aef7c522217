"""``compare``'s command line: two results folders, narrowed by release, profile and case."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from harness.analysis.significance import Thresholds
from harness.cli import options
from harness.cli.argparsing import Command, options_of
from harness.errors import UsageError


@dataclass(frozen=True)
class CompareOptions:
    a: Path
    b: Path
    a_release: str | None
    b_release: str | None
    a_profile: str | None
    b_profile: str | None
    cases: list[str]
    markdown: Path | None
    thresholds: Thresholds
    json: Path | None = None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "a", type=options.path, metavar="A", help="results folder of the baseline set"
    )
    parser.add_argument(
        "b",
        type=options.path,
        metavar="B",
        nargs="?",
        help="results folder of the other set (default: A)",
    )
    for side in ("a", "b"):
        name = side.upper()
        parser.add_argument(
            f"--{side}-release", metavar="VERSION", help=f"only results of this release in {name}"
        )
        parser.add_argument(
            f"--{side}-profile", metavar="NAME", help=f"only results of this profile in {name}"
        )
    options.repeatable(parser, "--case", "CASE", "case to compare (repeatable; default: all)")
    parser.add_argument(
        "--markdown",
        type=options.path,
        metavar="FILE",
        help="also write the comparison as markdown",
    )
    options.add_json(parser, "every pair's metrics, ratios, intervals and verdicts")
    options.add_thresholds(parser)


def check(args: argparse.Namespace) -> CompareOptions:
    b = args.b or args.a
    for folder in (args.a, b):
        if not folder.is_dir():
            raise UsageError(f"results folder not found: {folder}")
    return options_of(
        CompareOptions, args, b=b, cases=args.case, thresholds=options.thresholds_from(args)
    )


COMMAND = Command(
    name="compare",
    summary="compare two result sets; exit 1 when something got significantly worse in B",
    description=(
        "Compare result set B against A, metric by metric, each by its shape: a cost by its ratio, "
        "a value by equality, a number printed or not and how the processes ended by their counts. "
        "A and B are results folders (B defaults to A), narrowed by release, profile and case."
    ),
    exit_codes=(
        "0 nothing worse, 1 something worse in B (slower, a value changed, a number gone, more "
        "processes dying), 2 bad input or a --markdown or --json that cannot be written (then no "
        "verdict is printed)"
    ),
    add_arguments=add_arguments,
    check=check,
)
