"""``issue``'s command line: the case or script, the releases compared, the metric titled."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from harness.analysis.significance import Thresholds
from harness.cli import options
from harness.cli.argparsing import Command
from harness.cli.export import ScriptOptions, add_script_arguments, script_options
from harness.errors import UsageError
from harness.install.venvs import read_plan
from harness.metric_names import ENDING, MetricKey, parse_metric_name
from harness.units import version_key


@dataclass(frozen=True)
class IssueOptions:
    script: ScriptOptions
    profile: str  # its label
    results: Path
    out: Path
    jax: str | None
    good: str | None
    bad: str | None
    metric: MetricKey | None
    releases: Path | None  # the release plan nox writes
    # A crash report: the step is in how the processes end (``--status``, as ``bisect --status``).
    status: bool
    policy: str  # how a plain script's own libraries are resolved on each release (--deps)
    # processes a side in what ``issue`` measures itself (the step, the newest release); the most
    processes: int
    max_processes: int


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_script_arguments(parser, script=True)
    options.add_session(parser, release=True)
    options.add_results(parser, "the bisect and sweep results the draft quotes")
    options.add_out(
        parser,
        "reports folder: the bisect answers (bisect-*.json) are read here, the draft is written "
        "under issues/",
    )
    for flag, what, stored, other in (
        ("--good", "last release with the old behaviour", "last good", "--bad"),
        ("--bad", "first release with the new behaviour", "first bad", "--good"),
    ):
        default = f"(default: the stored bisect answer's {stored} release); with {other}"
        parser.add_argument(
            flag, type=options.release_version, metavar="VERSION", help=f"{what} {default}"
        )
    criterion = parser.add_mutually_exclusive_group()
    criterion.add_argument(
        "--metric",
        help="PROGRAM.KIND_ns the title quotes (default: the bisect's, else the one changed most)",
    )
    criterion.add_argument(
        "--status",
        action="store_true",
        help="draft a crash report (--metric process.end): ok on --good, crashed, hung or failed "
        "on --bad, in every process or in more of them (default: the stored bisect --status or "
        "triage answer's step)",
    )
    parser.add_argument(
        "--processes",
        type=options.positive_int,
        metavar="K",
        help=(
            "processes a release in what issue measures itself where no bisect answer did (the "
            "step, the newest release on the index, a script's reproducer; default "
            f"{options.PROCESSES['quick']})"
        ),
    )
    options.add_max_processes(parser)
    parser.add_argument(
        "--releases",
        type=options.path,
        metavar="PLAN",
        help="the release plan nox writes: every release on the "
        "index and what it installs; the scripts then run in those releases' venvs",
    )


def check(args: argparse.Namespace) -> IssueOptions:
    """Every check of ``issue`` needing neither JAX nor the index (the noxfile runs them too)."""
    results = options.folder_to_write(args.results)
    script = script_options(args)
    if (args.good is None) != (args.bad is None):
        raise UsageError("--good and --bad name the two releases compared: give both or neither")
    if args.good is not None and version_key(args.good) >= version_key(args.bad):
        raise UsageError(f"--good must be older than --bad, not {args.good} and {args.bad}")
    if args.releases is not None:
        read_plan(args.releases)
    # a triage's first look, whatever --effort sets for the draft's scripts; judged as a bisect's
    processes = args.processes or options.PROCESSES["quick"]
    options.verdict_processes(processes, Thresholds().min_processes)
    most = options.max_processes_from(args, processes, options.LOOKS * processes)
    metric = parse_metric_name(args.metric) if args.metric else None
    return IssueOptions(
        script=script,
        profile=options.profile_label(args),
        results=results,
        out=options.folder_to_write(args.out, "output"),
        jax=args.jax,
        good=args.good,
        bad=args.bad,
        metric=None if metric == ENDING else metric,
        releases=args.releases,
        status=args.status or metric == ENDING,  # ``--metric process.end`` is ``--status``
        policy=options.deps_policy(args),
        processes=processes,
        max_processes=most,
    )


COMMAND = Command(
    name="issue",
    summary=(
        "draft an upstream issue: export the case, run its scripts on the releases compared, render"
    ),
    description=(
        "Export the case (or take the plain script), run it on the release the issue is about and, "
        "with --good/--bad or a stored bisect answer, a short script on both releases, and render "
        "a draft a maintainer can paste. Through nox it measures what no stored bisect answer "
        "gives: the step confirmed, a script's reproducer with jax alone, and whether the newest "
        "release on the index still shows it."
    ),
    exit_codes=(
        "0 drafted, 1 drafted but a script run failed (the draft shows its output), 2 bad input"
    ),
    add_arguments=add_arguments,
    check=check,
)
