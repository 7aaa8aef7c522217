"""``issue``'s command line: the case or script, the releases compared, the metric titled; what
it was asked is ``IssueRequest``, one request for every shape of step it drafts."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.analysis.significance import Thresholds
from harness.catalogue.discovery import CaseInfo
from harness.cli import options
from harness.cli.argparsing import Command
from harness.cli.export import add_script_arguments, script_options
from harness.cli.options import LOOKS, PROCESSES
from harness.errors import UsageError
from harness.install.environments import Environments
from harness.install.script_envs import AS_OF
from harness.install.venvs import ReleaseEnv, read_plan
from harness.metric_names import ENDING, MetricKey, parse_metric_name
from harness.pins import PROFILE_BY_NAME, hardware
from harness.store.schema import Settings
from harness.units import version_key


@dataclass(frozen=True)
class IssueRequest:
    """What ``issue`` was asked: the case or script at its sizes, the two releases or the stored
    answer's, the metric or the ending, where releases install (nox's plan), what goes where."""

    case: CaseInfo
    sizes: dict[str, int]
    settings: Settings
    profile: str
    platform: str  # "cpu", "gpu" or "tpu": the profile's kind, for the title
    results_dir: Path
    out_dir: Path
    jax: str | None = None  # the release the full script runs on
    good: str | None = None
    bad: str | None = None
    metric: MetricKey | None = None
    plan: list[ReleaseEnv] | None = None  # every release on the index; None: the JAX installed here
    policy: str = AS_OF  # how a plain script's own libraries are resolved on each release
    processes: int = PROCESSES["quick"]  # what issue measures itself: processes a side
    max_processes: int = LOOKS * PROCESSES["quick"]  # and up to how many while a comparison is open
    status: bool = False  # the step is in how the processes end: a crash report

    def environments(self, progress: Callable[[str], None]) -> Environments:
        """Where each release runs, as every side's is made."""
        profile = PROFILE_BY_NAME.get(self.profile)
        return Environments(self.case, profile, self.policy, progress=progress)


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


def check(args: argparse.Namespace) -> IssueRequest:
    """Every check of ``issue`` needing neither JAX nor the index (the noxfile runs them too)."""
    results = options.folder_to_write(args.results)
    script = script_options(args)
    if (args.good is None) != (args.bad is None):
        raise UsageError("--good and --bad name the two releases compared: give both or neither")
    if args.good is not None and version_key(args.good) >= version_key(args.bad):
        raise UsageError(f"--good must be older than --bad, not {args.good} and {args.bad}")
    plan = read_plan(args.releases) if args.releases is not None else None
    # a triage's first look, whatever --effort sets for the draft's scripts; judged as a bisect's
    processes = args.processes or options.PROCESSES["quick"]
    options.verdict_processes(processes, Thresholds().min_processes)
    most = options.max_processes_from(args, processes, options.LOOKS * processes)
    metric = parse_metric_name(args.metric) if args.metric else None
    profile = options.profile_label(args)
    return IssueRequest(
        script.case,
        script.sizes,
        script.settings,
        profile,
        hardware(profile),
        results,
        options.folder_to_write(args.out, "output"),
        jax=args.jax,
        good=args.good,
        bad=args.bad,
        metric=None if metric == ENDING else metric,
        plan=plan,
        policy=options.deps_policy(args),
        processes=processes,
        max_processes=most,
        status=args.status or metric == ENDING,  # ``--metric process.end`` is ``--status``
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
