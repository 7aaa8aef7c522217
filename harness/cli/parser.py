"""The command line of ``python -m harness``: every command's declaration (``argparsing``)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from harness.cli import (
    argparsing,
    calibrate,
    compare,
    export,
    flags,
    issue,
    listing,
    merge,
    new,
    prune,
    ranges,
    report,
    run,
    search,
    watch,
)

# What ``jax-repro --help`` says above the commands: for the user, not this module's reader.
DESCRIPTION = (
    "Reproduce and measure JAX performance surprises: run a case or your own script on one or more "
    "jax releases in separate processes, compare the results, find the release (or commit) where a "
    "change came in, and draft the upstream issue. `jax-repro COMMAND --help` says what each "
    "command does. Installed without a clone, the commands that need jax releases (and `jax-repro "
    "matrix`: releases × profiles) run the package's nox sessions themselves, their venvs in "
    "~/.cache/jax-repro (README, 'Without cloning')."
)

# Each module's COMMAND (ranges: three), in the order ``jax-repro --help`` lists them.
COMMANDS: dict[str, argparsing.AnyCommand] = {
    command.name: command
    for command in (
        *(module.COMMAND for module in (run, search, export, issue, report, compare, flags)),
        *ranges.COMMANDS,
        *(module.COMMAND for module in (calibrate, merge, listing, new, watch, prune)),
    )
}


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """As ``argparsing.parse_with``, over every command."""
    return argparsing.parse_with(list(COMMANDS.values()), argv, DESCRIPTION)


def validate(argv: Sequence[str]) -> tuple[argparse.Namespace, Any]:
    """As ``argparsing.validate_with``, over every command."""
    return argparsing.validate_with(list(COMMANDS.values()), argv)
