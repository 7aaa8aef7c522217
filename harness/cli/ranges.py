"""``bisect``, ``sweep`` and ``triage``'s command line: a case (or plain script) over a range of
releases; the three share their options and ``check``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from harness.analysis.significance import Thresholds
from harness.catalogue import discovery
from harness.catalogue.discovery import CaseInfo, anchor_sizes
from harness.catalogue.script_deps import canonical
from harness.cli import options
from harness.cli.argparsing import Command
from harness.errors import UsageError
from harness.host.environment import shown_path
from harness.install.commits import is_url
from harness.install.script_envs import AS_OF, parse_hold
from harness.metric_names import ENDING, Criterion, Judged, MetricKey, parse_metric_name
from harness.names import name_problem
from harness.pins import RELEASES, device_class
from harness.store.schema import Settings
from harness.units import version_key


@dataclass(frozen=True)
class Measuring:
    """How each release is measured, and how far releases measured together go until decided."""

    settings: Settings
    # looks of ``processes`` rounds while a comparison is open, up to this many a release
    max_processes: int
    # and no further look once a measurement's processes took this many seconds
    time_budget: float | None

    @property
    def processes(self) -> int:
        return self.settings.processes


def measuring_from(args: argparse.Namespace, thresholds: Thresholds, **more: Any) -> Measuring:
    """How a range command or a watch measures each release: enough processes for a verdict, the
    effort's sampling (``more``: settings besides), looks up to --max-processes and --time-budget.
    """
    processes = options.verdict_processes(options.processes_from(args), thresholds.min_processes)
    compiles = options.compile_repeats(processes)
    settings = options.sampling_from(args, processes=processes, compile_repeats=compiles, **more)
    most = options.max_processes_from(args, processes, options.LOOKS * processes)
    return Measuring(settings, most, args.time_budget)


@dataclass(frozen=True)
class Places:
    """Where a range command reads and writes."""

    releases_plan: Path | None  # what each release installs, written by nox
    results: Path  # results are stored (and reused) here
    out: Path  # the answers are written here
    json: Path | None = None  # ``--json FILE``: the answer as data there too


@dataclass(frozen=True)
class LibraryChoice:
    """A plain script's libraries on each release: resolved by ``policy``, ``hold`` pinned on every
    one; with ``vary``, that library's releases are the range, jax held at ``jax``."""

    policy: str = AS_OF
    hold: tuple[str, ...] = ()
    vary: str | None = None  # a library the script declares, by its canonical name
    jax: str | None = None  # with ``vary``: the jax release held

    def label(self, version: str) -> str:
        """A varied library's version as a release label, ``0.4.33+equinox.0.11.4``."""
        return f"{self.jax}+{self.vary}.{version}"


def target_words(case: CaseInfo, libraries: LibraryChoice | None = None) -> list[str]:
    """How a command line names ``case``: ``--case NAME``, or a script and its options."""
    chosen = libraries or LibraryChoice()
    policy = ["--deps", chosen.policy] if chosen.policy != AS_OF else []
    held = [word for pin in chosen.hold for word in ("--hold", pin)]
    return case.subject.command_words(
        case.name, shown_path(case.path, anywhere=True), (*policy, *held)
    )


@dataclass(frozen=True)
class RangeOptions:
    """A checked range command line: what, over which range, judged and measured how, where."""

    command: str  # "bisect", "sweep" or "triage"
    case: CaseInfo
    sizes: dict[str, int]
    profile: str
    first: str  # the good release of a bisect, the first of a sweep
    last: str
    criterion: Criterion  # --metric, --claim, --status, or every metric (a sweep, a triage)
    thresholds: Thresholds
    measuring: Measuring
    places: Places
    fix: bool = False  # a bisect from --broken to --fixed: the answer names the fix
    commits: bool = False  # a bisect over jax's commits between the two releases (``--commits``)
    # ``--jax-repo``: a local clone or a URL; None: jax's own (cloned under .nox/)
    jax_repo: str | None = None
    libraries: LibraryChoice = LibraryChoice()  # a plain script's own libraries
    # a step's changed defaults listed and tried, its compiled programs compared
    explain: bool = True
    # ``--why-budget``: how long asking why may take (None: half what the measuring took)
    why_budget_s: float | None = None
    # ``--why-every-kind``: every kind asked, those after a kind that answered the step too
    why_every_kind: bool = False
    # ``--why-kinds``: only these kinds asked, in their own order (empty: every kind)
    why_kinds: tuple[str, ...] = ()
    # a triage's ``--every-release``: its first round measures every release, not a refined grid
    every_release: bool = False

    @property
    def metric(self) -> MetricKey | None:
        """The one metric of figures judged (``--metric``), if one is; not how processes end."""
        return self.criterion.figures


# The most releases a range may hold: a sweep and a triage measure every one in one interleaved run,
# a worker each (with --vary, each library release is resolved first, seconds each); a bisect
# measures a few but lists and labels every one.  jax's whole history since 0.4.1 fits in either.
MOST_RELEASES = {"bisect": 256, "sweep": 64, "triage": 64}


def bounded(command: str, count: int, what: str) -> None:
    """Refuse a range over ``command``'s bound of releases before anything is installed."""
    most = MOST_RELEASES[command]
    if count > most:
        each = "measures each of them" if command != "bisect" else "lists each of them"
        raise UsageError(
            f"{what} is {count} releases; a {command} {each} and takes at most {most}: "
            "give a narrower --from/--to" + (" (--good/--bad)" if command == "bisect" else "")
        )


def _add_range(parser: argparse.ArgumentParser, command: str) -> None:
    options.add_case(parser, script=True)
    # The range's two ends: --good/--bad (or --broken/--fixed) for a bisect, --from/--to else.
    if command == "bisect":
        for flag, what in (
            ("--good", "release with the old behaviour"),
            ("--bad", "release with the new one"),
            ("--broken", "instead of --good: a release with the problem, to find the fix"),
            ("--fixed", "instead of --bad: a newer release without it (the answer: fixed in W)"),
        ):
            dest = {"--good": "first", "--bad": "last"}.get(flag)  # --broken and --fixed: theirs
            parser.add_argument(flag, dest=dest, metavar="VERSION", help=what)
        parser.add_argument(
            "--commits",
            action="store_true",
            help="below the releases: jax's Python or jaxlib, which commit (between two releases)",
        )
        parser.add_argument(
            "--jax-repo",
            metavar="PATH|URL",
            help=(
                "with --commits: a clone of jax's repository, or its URL (default: "
                "github.com/jax-ml/jax, cloned once under .nox/); without: a local clone, read to "
                "name the jax commit of a changed default"
            ),
        )
    else:
        tables = command == "triage"  # a triage runs over the whole table unless told otherwise
        for flag, dest, table_end in (("--from", "first", "oldest"), ("--to", "last", "newest")):
            default = f" (default: the table's {table_end})" if tables else ""
            what = f"{dest} release of the range{default}"
            parser.add_argument(flag, dest=dest, metavar="VERSION", required=not tables, help=what)
    # A script's libraries over the range: one held, or one varied with jax held.
    options.repeatable(
        parser,
        "--hold",
        "PKG==VERSION",
        "with --script: hold a package of its venv at one version on every release (a library it "
        "declares, or one of jax's own, numpy; repeatable): a step that stays is JAX's",
    )
    parser.add_argument(
        "--vary",
        metavar="PKG",
        help=(
            "with --script: hold jax at --jax and take the releases of this package of its venv "
            f"instead; {'--good/--bad' if command == 'bisect' else '--from/--to'} then "
            "name its versions"
        ),
    )
    parser.add_argument(
        "--jax",
        type=options.release_version,
        metavar="VERSION",
        help="with --vary: the jax release held",
    )
    if command == "triage":
        parser.add_argument(
            "--every-release",
            action="store_true",
            help=(
                "measure every release of the range in the first round (default: the ends and a "
                "grid of about √n releases, refined only between neighbours that differ)"
            ),
        )
    if command != "sweep":
        options.add_why(
            parser,
            "a change happened: trying its changed defaults (jax's options, XLA's flags) on its "
            "two releases and comparing what each compiled",
            "over every step; a kind not asked once it is spent is said in the answer with the "
            "command that asks it (default: 40 % of what the command's own measuring took)",
        )
        parser.add_argument(
            "--why-every-kind",
            action="store_true",
            help="ask every kind of why, also those after a kind whose answer settled the step "
            "(an old default bringing every metric back)",
        )
    _add_criterion(parser)
    options.add_sizes(parser, "the case's first anchor, with these sizes changed")
    options.add_session(parser, release=False)
    parser.add_argument(
        "--releases",
        type=options.path,
        help="the release plan nox writes: what each release installs",
    )
    options.add_results(parser)
    options.add_out(parser)
    options.add_json(parser, "the answer (every release, step, comparison and verdict)")
    options.add_sampling(parser)
    options.add_process_count(parser)
    options.add_max_processes(parser)
    options.add_time_budget(parser, "a measurement's")
    options.add_thresholds(parser)


def _add_criterion(parser: argparse.ArgumentParser) -> None:
    """What a release is judged by: one metric, the case's claim, or how its processes end."""
    criterion = parser.add_mutually_exclusive_group()
    criterion.add_argument(
        "--metric", help="PROGRAM.KIND, e.g. two_scans.dispatch_ns or scan.compile_ns"
    )
    criterion.add_argument(
        "--claim", action="store_true", help="judge by the case's claim verdict instead"
    )
    criterion.add_argument(
        "--status",
        action="store_true",
        help=(
            "judge by how its processes end (--metric process.end): on the counts of processes "
            "that crashed, timed out or failed (a bisect finds the first release where the script "
            "stops running ok)"
        ),
    )


def range_ends(args: argparse.Namespace) -> tuple[str, str, bool]:
    """The first and last release, and whether a bisect looks for a fix (--broken/--fixed, never
    mixed with --good/--bad); a triage without --from/--to takes the whole release table."""
    fix = False
    first, last = args.first, args.last
    if args.command == "bisect":
        broken, fixed = args.broken, args.fixed
        if (broken or fixed) and (first or last):
            raise UsageError(
                "--good/--bad name a regression's ends, --broken/--fixed a fix's: give one pair"
            )
        fix = bool(broken or fixed)
        first, last = (broken, fixed) if fix else (first, last)
        if not (first and last):
            raise UsageError(
                "bisect needs both ends: --good V --bad V (a regression) or --broken V --fixed V "
                "(a fix)"
            )
    elif args.command == "triage" and getattr(args, "vary", None) is None:
        first, last = first or RELEASES[0].jax, last or RELEASES[-1].jax
    if not (first and last):
        raise UsageError(
            "--vary takes the library's versions of the range: give --from VERSION and --to VERSION"
        )
    for end in (first, last):
        if problem := name_problem(end):
            raise UsageError(f"jax release {problem}")
    return first, last, fix


def check(args: argparse.Namespace) -> RangeOptions:
    """Every check of ``bisect``, ``sweep`` and ``triage`` needing neither JAX nor the index."""
    results = options.folder_to_write(args.results)
    case = options.case_from(args)
    # an accelerator's profile measures at the discussion's own sizes, as ``run`` does
    device = device_class(options.profile_label(args))
    sizes = anchor_sizes(case, discovery.parse_sizes(args.size), device)
    metric = ENDING if args.status else parse_metric_name(args.metric) if args.metric else None
    criterion = Criterion.of(metric, Judged.CLAIM if args.claim else Judged.EVERY)
    if args.command == "bisect" and criterion.by is Judged.EVERY and not case.subject.every_metric:
        raise UsageError(
            "bisect a case by --metric PROGRAM.KIND or --claim (a plain script: every metric that "
            "moved)"
        )
    first, last, fix = range_ends(args)
    if first == last:
        raise UsageError(f"the two ends of the range are the same release ({first})")
    if version_key(first) >= version_key(last):
        raise UsageError(
            f"the range must run from an older release to a newer one, not {first} to {last}"
        )
    thresholds = options.thresholds_from(args)
    measuring = measuring_from(args, thresholds)
    commits = args.command == "bisect" and args.commits
    jax_repo = getattr(args, "jax_repo", None)
    if jax_repo and is_url(jax_repo) and not commits:
        raise UsageError(
            "--jax-repo URL is cloned for --commits only; to name a changed default's commit: a "
            "clone"
        )
    if jax_repo and not is_url(jax_repo):
        _check_clone(jax_repo)
    if commits and criterion.by is Judged.EVERY:
        raise UsageError(
            "--commits follows one change: give --metric (a triage names the metric that moved)"
        )
    libraries = library_choice(args, case)
    if commits and libraries.vary:
        raise UsageError("--commits bisects jax's commits; --vary a library's releases: give one")
    return RangeOptions(
        command=args.command,
        case=case,
        sizes=sizes,
        profile=options.profile_label(args),
        first=first,
        last=last,
        criterion=criterion,
        thresholds=thresholds,
        measuring=measuring,
        places=Places(args.releases, results, args.out, args.json),
        fix=fix,
        commits=commits,
        jax_repo=jax_repo,
        libraries=libraries,
        explain=getattr(args, "explain", False),
        why_budget_s=getattr(args, "why_budget", None),
        why_every_kind=getattr(args, "why_every_kind", False),
        why_kinds=getattr(args, "why_kinds", ()),
        every_release=getattr(args, "every_release", False),
    )


def _check_clone(jax_repo: str) -> None:
    """A local ``--jax-repo`` is a git repository at its top, checked before anything runs: a folder
    that is not one would only leave the answers silent."""
    folder = Path(jax_repo).expanduser()
    if not folder.is_dir():
        raise UsageError(f"--jax-repo {jax_repo}: no such folder (a local clone of jax)")
    if not (
        (folder / ".git").exists()
        or ((folder / "HEAD").is_file() and (folder / "objects").is_dir())
    ):
        raise UsageError(
            f"--jax-repo {jax_repo}: not a git repository (give the top folder of a clone of jax: "
            "git clone https://github.com/jax-ml/jax)"
        )


def library_choice(args: argparse.Namespace, case: CaseInfo) -> LibraryChoice:
    """``--deps``, ``--hold``, ``--vary``, ``--jax``, checked against what the script declares."""
    declared = {Requirement(r).name: r for r in case.subject.requirements}
    if (args.hold or args.vary) and not case.subject.own_venv:
        raise UsageError("--hold and --vary are for --script FILE: a case needs nothing but JAX")
    hold = parse_hold(args.hold)
    for pin in hold:
        check_hold(pin, declared)
    vary = None
    if args.vary is not None:
        asked = Requirement(canonical(args.vary, "--vary"))
        if asked.extras or asked.specifier or asked.marker:
            raise UsageError(f"--vary {args.vary[:60]!r}: give a package's name alone, PKG")
        vary = canonicalize_name(asked.name)
        if any(canonicalize_name(Requirement(pin).name) == vary for pin in hold):
            raise UsageError(
                f"--vary {vary} and --hold {vary}==…: a library is either varied or held"
            )
        if args.jax is None:
            raise UsageError("--vary holds one jax release: give it with --jax VERSION")
    elif args.jax is not None:
        raise UsageError("--jax goes with --vary (the jax release held while a library varies)")
    return LibraryChoice(options.deps_policy(args), hold, vary, args.jax)


def check_hold(pin: str, declared: dict[str, str]) -> None:
    """A held pin of a library the script declares is at a version the declaration allows: else
    every release would be stored as not installable for what is bad input.  A package it does not
    declare is held as well."""
    held = Requirement(pin)
    named = {canonicalize_name(name): Requirement(text) for name, text in declared.items()}
    wanted = named.get(canonicalize_name(held.name))
    if wanted is None:
        return
    version = next(iter(held.specifier)).version
    if wanted.marker is None and not wanted.specifier.contains(version, prereleases=True):
        raise UsageError(
            f"--hold {pin}: the script declares {wanted}, which {held.name} {version} is not"
        )


def _command(name: str, summary: str, description: str, exit_codes: str) -> Command[RangeOptions]:
    return Command(
        name=name,
        summary=summary,
        description=description,
        exit_codes=exit_codes,
        add_arguments=lambda parser: _add_range(parser, name),
        check=check,
    )


COMMANDS = (
    _command(
        "bisect",
        "find the first release where a metric (or the claim) changed (run through nox -s bisect)",
        "Bisect the jax releases from --good to --bad: probe each release in its own cached venv, "
        "judge it good or bad by the statistics against both endpoints. A case is judged by "
        "--metric or --claim; a plain script, without --metric, on every metric its endpoints "
        "differ on, each bisected in turn (probes reused).",
        "0 a first bad release was found, 1 none could be named (the endpoints unchanged, or a "
        "release that could not be judged), 2 bad input, 3 undecided: the endpoints' comparison "
        "needs more processes (the answer says how many)",
    ),
    _command(
        "sweep",
        "measure every release in a range and report each significant step (run through nox -s "
        "sweep)",
        "Measure a case on every jax release from --from to --to and report where a metric "
        "(default: every metric and the claim) changes significantly between consecutive releases.",
        "0 swept (the page names each step), 2 bad input, 4 nothing could be measured (fewer than "
        "two releases ran ok)",
    ),
    _command(
        "triage",
        "screen the releases of a range, confirm each step by measuring again, answer per change "
        "(run through nox -s triage)",
        "Measure a case on the jax releases from --from to --to (default: the release table's "
        "oldest to newest): the ends and a grid first, then between neighbours that differ down to "
        "consecutive releases (--every-release: every release, in one interleaved run); screen "
        "every step between consecutive measured releases (regressions and fixes), measure the two "
        "releases around each candidate again together until decided, and answer once per step "
        "that holds.",
        "0 a change was confirmed, 1 none, 2 bad input, 3 none confirmed but a candidate stayed "
        "undecided (more processes would decide), 4 nothing could be measured (fewer than two "
        "releases ran ok)",
    ),
)
