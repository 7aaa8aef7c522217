"""``merge``'s command line: the folders to take results from and the one to merge them into."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from harness.cli import options
from harness.cli.argparsing import Command, options_of


@dataclass(frozen=True)
class MergeOptions:
    sources: list[Path]
    into: Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "sources",
        type=options.path,
        nargs="+",
        metavar="SOURCE",
        help="results folders to take from",
    )
    parser.add_argument(
        "--into",
        type=options.path,
        required=True,
        metavar="DIR",
        help="results folder to merge into",
    )


COMMAND = Command(
    name="merge",
    summary=(
        "copy results from many folders (CI artifacts, other machines) into one, each result once"
    ),
    description=(
        "Copy every result under the SOURCE folders into --into, where it would have been stored. "
        "A result already there with the same content counts once; one line per file that is left "
        "out."
    ),
    exit_codes="0 all usable, 1 a file was left out, 2 bad input",
    add_arguments=add_arguments,
    check=partial(options_of, MergeOptions),
)
