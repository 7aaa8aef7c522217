"""``prune``'s command line: how many days unused makes a venv go, and whether only to say so."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from functools import partial

from harness.cli import options
from harness.cli.argparsing import Command, options_of


@dataclass(frozen=True)
class PruneOptions:
    days: int
    dry_run: bool


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--days",
        type=options.positive_int,
        required=True,
        metavar="N",
        help="remove the venvs no run has used for N days or more (a whole number, 1 or more)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="say what would be removed and freed, and remove nothing",
    )


COMMAND = Command(
    name="prune",
    summary="remove the release and script venvs no run has used for N days, and say what it freed",
    description=(
        "Remove the venvs the harness made (release-jax-*, plain-jax-*, script-env-*, commit-*) "
        "that no run has used for --days N or more, from this clone's .nox/ and the installed "
        "command's cache (JAX_REPRO_CACHE, else XDG_CACHE_HOME/jax-repro, else "
        "~/.cache/jax-repro): one line per venv removed or kept, then the disk space freed. nox's "
        "own session venvs (tests, lint, …) and a venv a run is making are kept; the next command "
        "that needs a removed venv makes it again."
    ),
    exit_codes="0 done (or nothing to remove), 1 a venv could not be removed, 2 bad input",
    add_arguments=add_arguments,
    check=partial(options_of, PruneOptions),
)
