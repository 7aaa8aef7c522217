"""``watch``'s command line: the newest jax release against the one before, on a library's own
scripts (``--scripts DIR``), a pytest-benchmark suite, or the catalogue (``--case``, the default);
the pair is ``--release`` (default: the index's newest) against ``--baseline`` (the one before),
which ``nox -s watch`` picks (``watched_pair``) and always names.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

from harness.analysis.significance import Thresholds
from harness.catalogue import discovery, suite_args
from harness.catalogue.benchmark_suite import suite_digest
from harness.catalogue.discovery import CaseInfo
from harness.catalogue.scripts import read_script
from harness.cli import options
from harness.cli.argparsing import Command, options_of
from harness.cli.ranges import Measuring, measuring_from
from harness.errors import UsageError
from harness.install.script_envs import NEWEST
from harness.units import version_key

# A watch is a scheduled job: a folder of more scripts than this is a benchmark suite, which has its
# own option.
MAX_SCRIPTS = 50
DEFAULT_MEMORY = Path("results") / "watch-memory"


@dataclass(frozen=True)
class SuiteTarget:
    """A pytest-benchmark suite run unchanged: where, its files' digest, pytest's arguments."""

    path: Path
    digest: str
    args: tuple[str, ...] = ()
    compile_cache: bool = False  # JAX's persistent compilation cache, in each release's venv


@dataclass(frozen=True)
class WatchOptions:
    """A checked ``watch`` command line."""

    cases: tuple[CaseInfo, ...]  # catalogue cases and plain scripts, each watched on its own
    suite: SuiteTarget | None
    with_specs: tuple[str, ...]  # what the suite needs besides pytest and pytest-benchmark
    requirements: Path | None
    policy: str  # how a script's libraries are resolved on each release
    release: str | None  # None: the plan's newer release
    baseline: str | None
    profile: str
    thresholds: Thresholds
    measuring: Measuring
    releases_plan: Path | None
    results: Path
    out: Path  # the summary (watch.md, watch.json), each target's triage page, the suite's script
    memory: Path  # one file per target and pair already watched
    explain: bool = True
    why_budget_s: float | None = None  # asking why, per target (None: as long as its triage)
    why_kinds: tuple[str, ...] = ()  # only these kinds of why asked (empty: every kind)
    max_time_s: float | None = None  # the whole watch's cap (a suite's processes are sized by it)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _add_targets(parser)
    options.add_cases_dir(parser)
    options.add_libraries(parser)
    for flag, what in (
        ("--release", "the release watched (default: the newest on the package index)"),
        (
            "--baseline",
            "the release it is compared with (default: the one before it on the package index)",
        ),
    ):
        parser.add_argument(flag, type=options.release_version, metavar="VERSION", help=what)
    options.add_why(
        parser,
        "a confirmed change happened (the library or JAX, its programs run with jax alone, its "
        "changed defaults tried, what each release compiled, where the time went)",
        "per target; a kind not asked once it is spent is said in the target's triage page "
        "(default: as long as the target's triage took)",
    )
    parser.add_argument(
        "--memory",
        type=options.path,
        default=DEFAULT_MEMORY,
        metavar="DIR",
        help=(
            "what was watched before: a pair of releases already watched with the same script and "
            f"libraries is reported from here, not measured again (default: {DEFAULT_MEMORY})"
        ),
    )
    options.add_session(parser, release=False)
    parser.add_argument(
        "--releases", type=options.path, help="the release plan nox writes: the two releases"
    )
    options.add_results(parser)
    options.add_out(parser, "the summary (watch.md, watch.json) and each target's triage page")
    options.add_sampling(parser)
    options.add_process_count(parser)
    # As run takes it: a process loaded over the threshold is measured again, a side steadily loaded
    # is said so. A maintainer who knows the runner is shared sets it (a change on a side over it is
    # still never called).
    options.add_max_load(parser)
    options.add_max_processes(parser)
    options.add_time_budget(parser, "a measurement's")
    parser.add_argument(
        "--max-time",
        type=options.seconds,
        metavar="SECONDS",
        help=(
            "the most a suite's watch (--pytest-benchmark) may take: after its first process of "
            "each side it says whether that affords a verdict, and a benchmark that needs more "
            "processes than what is left affords is said with the smallest change it could still "
            "see, not measured on in vain (default: no cap but --max-processes)"
        ),
    )
    options.add_thresholds(parser)


def _add_targets(parser: argparse.ArgumentParser) -> None:
    """What is watched: scripts (narrowed by name), a suite with its arguments, or cases."""
    for flag, metavar, what in (
        (
            "--scripts",
            "DIR",
            "a folder of plain scripts, each *.py in it watched as `--script` takes one (its `# "
            "/// script` block says what it needs besides JAX)",
        ),
        (
            "--pytest-benchmark",
            "PATH",
            "a pytest-benchmark suite (file or folder), run unchanged with --benchmark-json in "
            "every process; each benchmark's rounds are its samples (what it needs besides "
            "pytest-benchmark: --with)",
        ),
    ):
        parser.add_argument(flag, type=options.path, metavar=metavar, help=what)
    parser.add_argument(
        "--pytest-args",
        default="",
        metavar="ARGS",
        help=(
            "the suite's selection, as typed after `pytest` in its folder: -k, -m, node ids and "
            "paths relative to the folder, the suite's own conftest options "
            '(--pytest-args="-k bfgs --min-dimension 8"); quoted as one argument. An option that '
            "writes files, moves the rootdir or ends the measurement is refused (docs/watch.md)"
        ),
    )
    parser.add_argument(
        "--compile-cache",
        action="store_true",
        help=(
            "run the suite with JAX's persistent compilation cache, kept in each release's venv "
            "(set through jax.config, never a JAX_ variable): shorter processes for a suite whose "
            "benchmarks time calls after warm-up; never for one that times compilation, whose "
            "figures the cache would change (docs/watch.md)"
        ),
    )
    for flag, which in (("--include", "only"), ("--exclude", "leave out")):
        matching = "the scripts of --scripts whose file name matches (repeatable)"
        options.repeatable(parser, flag, "GLOB", f"{which} {matching}")
    options.repeatable(
        parser,
        "--case",
        "CASE",
        "a case of the catalogue to watch (repeatable; default without --scripts or "
        "--pytest-benchmark: every case)",
    )


def watched_cases(args: argparse.Namespace) -> list[CaseInfo]:
    """The catalogue cases and plain scripts the command line names, each read and checked."""
    found: list[CaseInfo] = []
    if args.scripts is not None:
        folder: Path = args.scripts
        if not folder.is_dir():
            raise UsageError(f"--scripts {folder}: no such folder")
        # A link is watched as `--script` takes one, by the link's name; one to nothing is refused,
        # never skipped.
        scripts = sorted(p for p in folder.glob("*.py") if p.is_symlink() or not p.is_dir())
        if not scripts:
            raise UsageError(f"--scripts {folder}: no *.py script in it")
        scripts = [
            p
            for p in scripts
            if (not args.include or any(fnmatch(p.name, glob) for glob in args.include))
            and not any(fnmatch(p.name, glob) for glob in args.exclude)
        ]
        if not scripts:
            raise UsageError(f"--scripts {folder}: --include and --exclude leave no script")
        if len(scripts) > MAX_SCRIPTS:
            raise UsageError(
                f"--scripts {folder}: {len(scripts)} scripts, more than the {MAX_SCRIPTS} a watch "
                "takes (a benchmark suite: --pytest-benchmark)"
            )
        found += [
            read_script(p, with_specs=args.with_, requirements=args.requirements) for p in scripts
        ]
    if args.case or (args.scripts is None and args.pytest_benchmark is None):
        found += discovery.select(discovery.discover(args.cases_dir), args.case)
    return found


def check(args: argparse.Namespace) -> WatchOptions:
    """Every check of ``watch`` that needs neither JAX nor the package index."""
    if args.release and args.baseline and version_key(args.baseline) >= version_key(args.release):
        raise UsageError(f"--baseline {args.baseline} must be older than --release {args.release}")
    cases = watched_cases(args)
    if (args.with_ or args.requirements) and not (args.scripts or args.pytest_benchmark):
        raise UsageError("--with and --requirements are for --scripts and --pytest-benchmark")
    if args.pytest_args and args.pytest_benchmark is None:
        raise UsageError("--pytest-args is for --pytest-benchmark")
    if args.compile_cache and args.pytest_benchmark is None:
        raise UsageError(
            "--compile-cache is for --pytest-benchmark: a script's or case's metrics include its "
            "compile times, which a cache would change"
        )
    if args.max_time is not None and args.pytest_benchmark is None:
        raise UsageError(
            "--max-time is for --pytest-benchmark (a suite's processes are sized by it)"
        )
    if (args.include or args.exclude) and args.scripts is None:
        raise UsageError("--include and --exclude are for --scripts")
    suite, path = None, args.pytest_benchmark
    if path is not None:
        digest = suite_digest(path)
        selection = suite_args.checked(args.pytest_args, path.name if path.is_file() else None)
        suite = SuiteTarget(path.resolve(), digest, selection, args.compile_cache)
    thresholds = options.thresholds_from(args)
    return options_of(
        WatchOptions,
        args,
        cases=tuple(cases),
        suite=suite,
        with_specs=tuple(args.with_),
        policy=str(args.deps or NEWEST),
        profile=options.profile_label(args),
        thresholds=thresholds,
        measuring=measuring_from(args, thresholds, max_load=args.max_load),
        releases_plan=args.releases,
        results=options.folder_to_write(args.results),
        out=options.folder_to_write(args.out, "output"),
        memory=options.folder_to_write(args.memory, "output"),
        why_budget_s=args.why_budget,
        why_kinds=args.why_kinds,
        max_time_s=args.max_time,
    )


def watched_pair(
    versions: Sequence[str], release: str | None, baseline: str | None
) -> tuple[str, str]:
    """(baseline, release) of the index's ``versions``: the newest and the one before, or named."""
    listed = sorted(versions, key=version_key)
    for named in (release, baseline):
        if named is not None and named not in listed:
            raise UsageError(
                f"jax {named} is not an installable release on the package index (yanked, or no "
                "wheel for this Python)"
            )
    newer = release or (listed[-1] if listed else None)
    if newer is None:
        raise UsageError("the package index lists no jax release")
    older = baseline or next(
        (v for v in reversed(listed) if version_key(v) < version_key(newer)), None
    )
    if older is None:
        raise UsageError(f"no release before jax {newer} on the package index to compare it with")
    if version_key(older) >= version_key(newer):
        raise UsageError(f"--baseline {older} must be older than the release watched, {newer}")
    return older, newer


COMMAND: Command[WatchOptions] = Command(
    name="watch",
    summary=(
        "the newest jax release against the one before on your scripts, a pytest-benchmark suite "
        "or the catalogue; every change confirmed (run through nox -s watch)"
    ),
    description=(
        "Measure each script, benchmark or case on two jax releases (the newest on the index and "
        "the one before, or --release/--baseline) in one interleaved run, measure each candidate "
        "change again as triage does, ask why of each confirmed one, and write a summary "
        "(watch.md, watch.json). A pair already watched with the same script and libraries is "
        "reported from --memory, not measured again."
    ),
    exit_codes=(
        "0 no regression confirmed, 1 a regression confirmed (or a script that ran on the baseline "
        "fails on the release, or a target that measured nothing), 2 bad input, 3 none confirmed "
        "but something stayed undecided or was measured under load"
    ),
    add_arguments=add_arguments,
    check=check,
)
