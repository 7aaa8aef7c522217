"""``report``'s command line: the results folder, the pages' folder, the baseline release."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from harness.analysis.significance import Thresholds
from harness.cli import options
from harness.cli.argparsing import Command, options_of
from harness.errors import UsageError


@dataclass(frozen=True)
class ReportOptions:
    results: Path
    out: Path
    baseline: str | None
    thresholds: Thresholds
    json: Path | None = None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_results(parser, "the results to render")
    options.add_out(parser)
    parser.add_argument(
        "--baseline", metavar="VERSION", help="release to compare against (default: the oldest)"
    )
    options.add_thresholds(parser)
    options.add_json(
        parser, "the claims by release and every timing comparison (ratio, interval, verdict)"
    )


def check(args: argparse.Namespace) -> ReportOptions:
    if not args.results.is_dir():
        raise UsageError(
            f"results folder not found: {args.results} (nothing measured there yet: plain `nox` "
            "measures the catalogue, then renders it)"
        )
    out = options.folder_to_write(args.out, "output")
    return options_of(ReportOptions, args, out=out, thresholds=options.thresholds_from(args))


COMMAND = Command(
    name="report",
    summary="render stored results as markdown: an index and a page per case",
    description=(
        "Render every result under the results folder: an index of the claims by release and of "
        "what changed, a page per case with its timings side by side and a verdict per metric, and "
        "the plots."
    ),
    exit_codes=(
        "0 written, 2 bad input or an --out that cannot be written (a result that cannot be used "
        "is named and skipped)"
    ),
    add_arguments=add_arguments,
    check=check,
)
