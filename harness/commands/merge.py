"""``merge``: results from many folders (CI artifacts, other machines) into one, each result once."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from harness.commands import Command, options


@dataclass(frozen=True)
class MergeOptions:
    sources: list[Path]
    into: Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("sources", type=options.path, nargs="+", metavar="SOURCE", help="results folders to take from")
    parser.add_argument("--into", type=options.path, required=True, metavar="DIR", help="results folder to merge into")


def check(args: argparse.Namespace) -> MergeOptions:
    return MergeOptions(list(args.sources), args.into)


def execute(opts: MergeOptions) -> int:
    from harness.store.merge import merge

    merged = merge(opts.sources, opts.into)
    for problem in merged.problems:
        print(f"left out {problem}", file=sys.stderr)
    print(
        f"merged into {opts.into}: {len(merged.copied)} copied, {merged.duplicates} already there, "
        f"{len(merged.problems)} left out",
        file=sys.stderr,
    )
    return 1 if merged.problems else 0


COMMAND = Command(
    name="merge",
    summary="copy results from many folders (CI artifacts, other machines) into one, each result once",
    description="Copy every result under the SOURCE folders into --into, where it would have been stored. A result "
    "already there with the same content counts once; one line per file that is left out.",
    exit_codes="0 all usable, 1 a file was left out, 2 bad input",
    add_arguments=add_arguments,
    check=check,
    execute=execute,
)
