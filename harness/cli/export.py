"""``export``'s command line, and the case-or-script options ``issue`` shares with it."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from harness.catalogue import discovery
from harness.catalogue.discovery import anchor_sizes
from harness.cli import options
from harness.cli.argparsing import Command
from harness.store.schema import Settings


@dataclass(frozen=True)
class ScriptOptions:
    """A case (or plain script) at its sizes, and how its standalone script samples."""

    case: discovery.CaseInfo
    sizes: dict[str, int]
    settings: Settings


@dataclass(frozen=True)
class ExportOptions:
    script: ScriptOptions
    out: Path | None


# A standalone script is for numbers to quote: it samples as --effort full does.
SCRIPT_EFFORT = "full"


def add_script_arguments(parser: argparse.ArgumentParser, *, script: bool) -> None:
    options.add_case(parser, script=script)
    options.add_sizes(parser, "the case's first anchor, with these sizes changed")
    options.add_sampling(parser, effort=SCRIPT_EFFORT, timeout="seconds for the script")


def script_options(args: argparse.Namespace) -> ScriptOptions:
    case = options.case_from(args)
    return ScriptOptions(
        case, anchor_sizes(case, discovery.parse_sizes(args.size)), options.sampling_from(args)
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_script_arguments(parser, script=False)
    parser.add_argument(
        "--output",
        "--out",
        dest="out",
        type=options.path,
        metavar="FILE",
        help="write the script here instead of printing it (--out: the older spelling)",
    )


def check(args: argparse.Namespace) -> ExportOptions:
    return ExportOptions(script_options(args), args.out)


COMMAND = Command(
    name="export",
    summary="print a case's standalone script (jax, numpy and the standard library only)",
    description=(
        "Write the case at its sizes as one standalone script that measures it as the harness does "
        "and prints its figures, for an upstream issue or a machine without the harness."
    ),
    exit_codes="0 written, 2 bad input (or a case that cannot be exported, named in one line)",
    add_arguments=add_arguments,
    check=check,
)
