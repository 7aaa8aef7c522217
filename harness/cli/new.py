"""``new``'s command line: the new case's name and the cases folder."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from harness.cli import options
from harness.cli.argparsing import Command, options_of


@dataclass(frozen=True)
class NewOptions:
    name: str
    cases_dir: Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "name", help="the new case's name: lower case letters, digits and _, a letter first"
    )
    options.add_cases_dir(parser)


COMMAND = Command(
    name="new",
    summary="write a working template case to cases/NAME.py, to edit from there",
    description=(
        "Write cases/NAME.py from the template: a case that runs, passes the linters and the "
        "tests, and exports; its TODO lines say what to replace (cases/README.md has the "
        "checklist). Refuses a name that is taken or a file that exists."
    ),
    exit_codes="0 written, 2 bad input (a taken or malformed name)",
    add_arguments=add_arguments,
    check=partial(options_of, NewOptions),
)
