"""``new``: a working template case to edit from there."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from harness.commands import Command, options


@dataclass(frozen=True)
class NewOptions:
    name: str
    cases_dir: Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="the new case's name: lower case letters, digits and _, a letter first")
    options.add_cases_dir(parser)


def check(args: argparse.Namespace) -> NewOptions:
    return NewOptions(args.name, args.cases_dir)


def execute(opts: NewOptions) -> int:
    from harness.catalogue.scaffold import write_case

    path = write_case(opts.name, opts.cases_dir)
    print(f"written: {path}", file=sys.stderr)
    print(
        f"next: edit its TODO lines, then `jax-repro list --case {opts.name}` and the checklist at the end "
        "of cases/README.md (one release, lint, tests)",
        file=sys.stderr,
    )
    return 0


COMMAND = Command(
    name="new",
    summary="write a working template case to cases/NAME.py, to edit from there",
    description="Write cases/NAME.py from the template: a case that runs, passes the linters and the tests, and "
    "exports; its TODO lines say what to replace (cases/README.md has the checklist). Refuses a name that is "
    "taken or a file that exists.",
    exit_codes="0 written, 2 bad input (a taken or malformed name)",
    add_arguments=add_arguments,
    check=check,
    execute=execute,
)
