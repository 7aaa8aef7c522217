"""``issue``: draft an upstream issue: export the case, run its scripts on the releases compared, render."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness.analysis.metric_names import MetricKey, parse_metric_name
from harness.commands import Command, options
from harness.commands.export import ScriptOptions, add_script_arguments, script_options
from harness.commands.search import check_installed_release
from harness.errors import UsageError
from harness.pins import PROFILE_BY_NAME
from harness.units import sizes_text, version_key

if TYPE_CHECKING:
    from harness.upstream.issue import IssueRequest


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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_script_arguments(parser, script=True)
    options.add_session(parser, release=True)
    options.add_results(parser, "the bisect and sweep results the draft quotes")
    options.add_out(parser, "reports folder: the bisect answers (bisect-*.json) are read here, the draft is written "
                    "under issues/")  # fmt: skip
    parser.add_argument(
        "--good", type=options.release_version, metavar="VERSION", help="last release with the old behaviour "
        "(default: the stored bisect answer's last good release); with --bad"
    )  # fmt: skip
    parser.add_argument(
        "--bad", type=options.release_version, metavar="VERSION", help="first release with the new behaviour "
        "(default: the stored bisect answer's first bad release); with --good"
    )  # fmt: skip
    parser.add_argument(
        "--metric", help="PROGRAM.KIND_ns the title quotes (default: the bisect's, else the one that changed most)"
    )
    parser.add_argument(
        "--releases", type=options.path, metavar="PLAN", help="the release plan nox writes: every release on the "
        "index and what it installs; the scripts then run in those releases' venvs"
    )  # fmt: skip


def check(args: argparse.Namespace) -> IssueOptions:
    """Every check of ``issue`` that needs neither JAX nor the package index (the noxfile runs them too)."""
    from harness.releases.venvs import read_plan

    results = options.results_folder(args.results)
    script = script_options(args, results=results)
    if (args.good is None) != (args.bad is None):
        raise UsageError("--good and --bad name the two releases compared: give both or neither")
    if args.good is not None and version_key(args.good) >= version_key(args.bad):
        raise UsageError(f"--good must be older than --bad, not {args.good} and {args.bad}")
    if args.releases is not None:
        read_plan(args.releases)
    return IssueOptions(
        script=script,
        profile=options.profile_label(args),
        results=results,
        out=options.output_folder(args.out),
        jax=args.jax,
        good=args.good,
        bad=args.bad,
        metric=parse_metric_name(args.metric) if args.metric else None,
        releases=args.releases,
    )


def request_for(opts: IssueOptions) -> IssueRequest:
    from harness.releases.venvs import read_plan
    from harness.upstream.issue import IssueRequest

    plan = read_plan(opts.releases) if opts.releases is not None else None
    if plan is None:
        check_installed_release(opts.jax, "issue")
    profile = PROFILE_BY_NAME.get(opts.profile)
    return IssueRequest(
        case=opts.script.case,
        sizes=opts.script.sizes,
        settings=opts.script.settings,
        profile=opts.profile,
        platform=profile.kind if profile else "cpu",
        results_dir=opts.results,
        out_dir=opts.out,
        jax=opts.jax,
        good=opts.good,
        bad=opts.bad,
        metric=opts.metric,
        plan=plan,
    )


def has_a_change(request: IssueRequest) -> bool:
    """Whether the draft has two releases to show: given, from a stored bisect answer, or, without nox's plan,
    the JAX installed here."""
    from harness.upstream.change import change_from, read_bisect_answers

    if request.plan is None or (request.good is not None and request.bad is not None):
        return True
    answers = read_bisect_answers(request.out_dir, request.case.name)
    return change_from(answers, [], case=request.case.name, sizes=request.sizes, profile=request.profile) is not None


def execute(opts: IssueOptions) -> int:
    from harness.upstream.issue import write_issue

    request = request_for(opts)
    shown = sizes_text(request.sizes)
    if has_a_change(request):  # else write_issue refuses at once, and its one line should be the only one
        print(f"[{request.profile}] {request.case.name} at {shown}: drafting an issue …", file=sys.stderr, flush=True)
    written = write_issue(request)
    for problem in written.problems:
        print(f"skipped unusable result {problem}", file=sys.stderr)
    print(written.run.stdout, end="")
    for short in written.short_runs:
        print(f"short script on jax {short.run.release} ({short.role}):\n{short.run.stdout}", end="")
    print(f"draft written: {written.draft} (scripts: {written.short}, {written.full})", file=sys.stderr)
    failed = [r for r in [written.run, *(s.run for s in written.short_runs)] if not r.ok]
    if failed:
        what = ", ".join(
            f"jax {r.release} " + ("timed out" if r.returncode is None else f"exited with code {r.returncode}")
            for r in failed
        )
        print(f"harness: a script run failed ({what}); the draft shows its output", file=sys.stderr)
        return 1
    return 0


COMMAND = Command(
    name="issue",
    summary="draft an upstream issue: export the case, run its scripts on the releases compared, render",
    description="Export the case (or take the plain script), run it on the release the issue is about and, with "
    "--good/--bad or a stored bisect answer, a short script on both releases, and render a draft a maintainer "
    "can paste.",
    exit_codes="0 drafted, 1 drafted but a script run failed (the draft shows its output), 2 bad input",
    add_arguments=add_arguments,
    check=check,
    execute=execute,
)
