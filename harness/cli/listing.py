"""``list``'s command line: the cases folder, and one case to describe in full."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from harness.cli import options
from harness.cli.argparsing import Command


@dataclass(frozen=True)
class ListOptions:
    cases_dir: Path
    case: str | None


def check(args: argparse.Namespace) -> ListOptions:
    return ListOptions(args.cases_dir, options.case_name(args))


COMMAND = Command(
    name="list",
    summary="list the cases and their claims; with a case, its sizes, programs and metric names",
    description=(
        "Without a case: every case, its claim, sizes and anchors, and each case file that cannot "
        "be read, with the reason. With --case NAME: its source, claim, sizes, anchors, programs, "
        "jitted functions and the metric names bisect and sweep accept, read from the case file "
        "without running it."
    ),
    exit_codes="0 listed, 1 a case file cannot be read (named, with the reason), 2 bad input",
    add_arguments=options.add_case,
    check=check,
)
