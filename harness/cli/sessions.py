"""What a nox session installs and runs, from its posargs, checked before anything is installed.

The noxfile imports it in nox's own environment, which has neither JAX nor hypothesis nor tabulate;
the same views tell the session's end (``harness.commands.nox_session``) what to prepare:
``session_view`` (a session running one harness command), ``release_run_view`` (``nox -s run`` and
``nox -s flags`` on any release of the index), ``watch_view``, and ``interleaved_request`` (``nox -s
matrix``: releases × profiles as sides of one run, ``harness.measure.sides``).  And which command
lines of the installed ``jax-repro`` its packaged nox sessions run (``session_for``,
``harness.commands.packaged_sessions``): those needing releases from the index (``--jax``), or an
environment this one lacks (JAX; the report extra); a command line a session hands on, or run inside
a driven session (``DRIVEN``), is the command's own.  And the profile measuring the JAX here.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.errors import UsageError
from harness.names import listed
from harness.pins import (
    AS_OF,
    DEFAULT_PROFILE,
    DEFAULT_RELEASE,
    DRIVEN,  # in a driven nox's environment: every harness command below it runs as it is
    EDGES,
    PROFILE_BY_NAME,
    RELEASE_BY_VERSION,
    RELEASES,
    Profile,
    Release,
)
from harness.units import normal_version

if TYPE_CHECKING:
    from harness.catalogue.discovery import CaseInfo
    from harness.cli.run import RunOptions


HELP = ("-h", "--help")
# The commands a release plan (--releases) makes the command's own; without it, their nox session.
PLANNED = ("triage", "bisect", "sweep", "watch")
# Those that need the package index wherever they run: what a machine without one is told.
NEED_THE_INDEX = ("matrix", "triage", "bisect", "sweep", "watch", "issue", "run --jax")
MEASURE_HERE = ("run", "search", "calibrate", "flags")


@dataclass(frozen=True)
class Here:
    """What this environment holds: JAX (its version), the report extra."""

    jax: str | None
    report_extra: bool


def given(argv: Sequence[str], name: str) -> bool:
    return any(arg == name or arg.startswith(name + "=") for arg in argv)


def session_for(argv: Sequence[str], here: Here, environ: Mapping[str, str]) -> str | None:
    """The packaged nox session that runs ``argv`` (command first); None: the command runs here."""
    if not argv or environ.get(DRIVEN):
        return None
    command, rest = argv[0], argv[1:]
    if command == "matrix":  # a session only: releases × profiles as sides of one run
        return command
    if any(arg in HELP for arg in rest) or given(rest, "--sides"):
        return None
    if command in PLANNED:
        return None if given(rest, "--releases") else command
    if command == "issue":
        return None if given(rest, "--releases") or here.jax else command
    if command in ("run", "flags"):
        return command if given(rest, "--jax") or not here.jax else None
    if command == "search":
        return None if here.jax else command
    if command in ("report", "compare"):
        return None if here.report_extra else command
    return None


def device_profile_argv(argv: Sequence[str], profile: Callable[[], str | None] | None) -> list[str]:
    """``argv`` with ``--profile PROFILE`` added for a command measuring here, where the device has
    a profile (``profile``, asked only then) and the command line names none."""
    command, rest = (argv[0], argv[1:]) if argv else ("", [])
    named = given(rest, "--profile") or given(rest, "--sides") or any(arg in HELP for arg in rest)
    if command not in MEASURE_HERE or profile is None or named:
        return list(argv)
    found = profile()
    return [*argv, "--profile", found] if found else list(argv)


# Commands whose nox session pins a device profile (--profile) and, for search and issue, the
# release it installs (--jax).
PINNED_COMMANDS = ("search", "issue", "bisect", "sweep", "triage")
RANGE_COMMANDS = ("bisect", "sweep", "triage")


@dataclass(frozen=True)
class SessionRequest:
    """What a nox session installs and runs for one harness command, from the user's posargs."""

    # installed in the session's venv; None: no JAX there (bisect and sweep install apart)
    release: Release | None
    profile: Profile | None  # device flags the harness runs under; None: the command runs no case
    harness_argv: list[str]  # for ``python -m harness``, command first, the profile always named
    span: tuple[str, str] | None = None  # the first and last release of a bisect, sweep or triage
    # Releases looked up on the package index (``harness.commands.nox_session``) before anything
    # runs (issue, a one-off run), first the one the command runs on.
    on_index: tuple[str, ...] = ()
    # A plain script ``run`` measures: it runs in a venv of its own (jax, jaxlib and what it
    # declares, resolved by ``policy``), a side the session's harness drives with ``sides_argv``
    # (``run``'s options, no profile).
    own_venv_of: CaseInfo | None = None
    policy: str = AS_OF
    sides_argv: tuple[str, ...] = ()

    @property
    def profiles(self) -> list[Profile]:
        """The profile whose device the session needs (a GPU's is looked for before installing)."""
        return [self.profile] if self.profile is not None else []


def validate(argv: Sequence[str]) -> tuple[argparse.Namespace, Any]:
    """``argv`` checked by the harness's parser, imported only now: importing this module (the
    noxfile does, and ``nox -l``) loads none of the parser's modules (tests/test_noxfile.py counts).
    """
    from harness.cli.parser import validate as checked

    return checked(argv)


def _script_run(argv: list[str], args: argparse.Namespace, checked: RunOptions) -> dict[str, Any]:
    """A plain script's ``run``: script, libraries' policy, ``run``'s options less the profile."""
    if argv[0] != "run" or len(checked.cases) != 1 or not checked.cases[0].subject.own_venv:
        return {}
    from harness.cli.options import deps_policy

    [case] = checked.cases
    rest = list(argv[1:])
    if args.profile is not None:
        _take(rest, "--profile", "")
    return {"own_venv_of": case, "policy": deps_policy(args), "sides_argv": ("run", *rest)}


def _profile(name: str | None) -> Profile:
    if name is None:
        return DEFAULT_PROFILE
    if name not in PROFILE_BY_NAME:
        raise UsageError(f"unknown profile {name}; profiles: {', '.join(PROFILE_BY_NAME)}")
    return PROFILE_BY_NAME[name]


def applies(profile: Profile, versions: Sequence[str]) -> None:
    for version in versions:
        if not profile.applies_to_version(version):
            raise UsageError(f"profile {profile.name} does not apply to jax {version}")


def session_view(command: str, posargs: Sequence[str]) -> SessionRequest:
    """The nox session of ``command`` with ``posargs``, after every check needing neither JAX nor
    the index: ``--jax`` and ``--profile`` from the tables (default: the default release, ``cpu``).
    """
    argv = [command, *posargs]
    args, checked = validate(argv)
    if command not in PINNED_COMMANDS:
        return SessionRequest(None, None, argv, **_script_run(argv, args, checked))
    profile = _profile(args.profile)
    if args.profile is None:
        argv.extend(["--profile", profile.name])
    if command in RANGE_COMMANDS:
        if args.vary is not None:  # one jax release, held while a library's own releases vary
            applies(profile, [args.jax])
            return SessionRequest(None, profile, argv, on_index=(args.jax,))
        from harness.cli.ranges import range_ends

        span = range_ends(args)[:2]
        applies(profile, span)
        return SessionRequest(None, profile, argv, span)
    # any release on the index, each in its cached venv, looked up by the session's harness
    if command == "issue":
        versions = tuple(
            v for v in (args.jax or DEFAULT_RELEASE.jax, args.good, args.bad) if v is not None
        )
        applies(profile, versions)
        return SessionRequest(None, profile, argv, on_index=versions)
    if args.jax is not None and args.jax not in RELEASE_BY_VERSION:
        raise UsageError(
            f"{unknown_release(args.jax)}; the release table has {', '.join(RELEASE_BY_VERSION)}"
        )
    release = RELEASE_BY_VERSION[args.jax] if args.jax else DEFAULT_RELEASE
    applies(profile, [release.jax])
    return SessionRequest(release, profile, argv)


@dataclass(frozen=True)
class WatchRequest:
    """``nox -s watch``: profile, releases named (None: the index's), ``watch``'s command line."""

    profile: Profile
    release: str | None
    baseline: str | None
    harness_argv: list[str]

    @property
    def profiles(self) -> list[Profile]:
        return [self.profile]


def watch_view(posargs: Sequence[str]) -> WatchRequest:
    """``nox -s watch -- [watch options]``, checked as ``watch`` checks it."""
    argv = ["watch", *posargs]
    args, _ = validate(argv)
    profile = _profile(args.profile)
    applies(profile, [v for v in (args.release, args.baseline) if v])
    if args.profile is None:
        argv += ["--profile", profile.name]
    return WatchRequest(profile, args.release, args.baseline, argv)


def release_run_view(posargs: Sequence[str], command: str = "run") -> SessionRequest:
    """``nox -s run`` (or ``flags``, ``command``): one release of the index (default: the table's
    newest), the rest checked as the command checks it; a case named first needs no ``--case``."""
    rest = list(posargs)
    if any(arg in HELP for arg in rest):
        print(
            f"nox -s {command} -- [--case CASE | --script FILE] [--jax VERSION (any on the package "
            f"index)] [{command} options]:"
        )
    elif command == "run" and rest and not rest[0].startswith("-"):
        rest[:1] = ["--case", rest[0]]
    jax = _take(rest, "--jax", DEFAULT_RELEASE.jax)
    from harness.cli.options import release_version

    try:
        jax = release_version(jax)
    except argparse.ArgumentTypeError as exc:
        raise UsageError(f"argument --jax: {exc}") from None
    if given(rest, "--sides"):
        raise UsageError("--sides is for `nox -s matrix`; this session runs one release")
    args, checked = validate([command, *rest])
    profile = _profile(args.profile)
    applies(profile, [jax])
    argv = [command, *rest] if args.profile else [command, *rest, "--profile", profile.name]
    # flags: both sides run in the release's venv, which holds jax alone
    if command == "flags" and any(case.subject.own_venv for case in checked.run.cases):
        raise UsageError(
            "the script declares libraries of its own, and `nox -s flags` installs jax alone: "
            "run `python -m harness flags` where they are installed"
        )
    own = _script_run([command, *rest], args, checked)
    return SessionRequest(None, profile, argv, on_index=(jax,), **own)


# What --jax accepts besides a comma-separated list of the table's releases.
RELEASE_SETS = {"edges": list(EDGES), "all": list(RELEASES)}
DEFAULT_RELEASES = "edges"
DEFAULT_PROFILES = "cpu,cpu8"
# Case processes per cell and side unless --processes says otherwise: the fewest with which sides
# measured together can pass the rank guard at α = 0.002 (5 and 5 processes cannot go below p =
# 0.0079, docs/statistics.md), measured once, no looks (``DEFAULT_DECIDE``): the matrix judges every
# metric of every case, and a look would cost another round of every open cell (given
# --max-processes, --decide-metric or --time-budget, it measures until decided); a bisect or triage
# decides the one change a user asks about.
DEFAULT_PROCESSES = "7"
DEFAULT_DECIDE = "off"
# Sampling time per program in each process unless --max-seconds or --effort says otherwise: half
# the quick effort's, since the verdict is over processes (each process's median still from at least
# 5 samples); it keeps plain `nox` from a fresh clone with an empty package cache within 5 minutes
# on a 2-core machine.
DEFAULT_MAX_SECONDS = "0.25"
# Warm-up calls per program unless --warmup says otherwise: one after the first (compiling) call, as
# pyperf's default; the run's own default is two. Most of the catalogue's programs run tens of
# milliseconds a call and stop at the fewest samples, so each call saved is an eighth of a process.
DEFAULT_WARMUP = "1"
# Looks at the sides' comparisons with --decide changes|all unless --max-processes says otherwise.
MATRIX_LOOKS = 2


@dataclass(frozen=True)
class InterleavedRequest:
    """The sides to measure (release × profile, where the profile applies) and ``run``'s options."""

    sides: list[tuple[Release, Profile]]
    run_argv: list[str]  # ``run`` and its options, without --sides (the plan is added once written)
    # The default profiles: each case only under those its claim is about (its CLAIM_DEVICES), the
    # main command's way; profiles the user names measure every case they apply to.
    claims_only: bool = False

    @property
    def profiles(self) -> list[Profile]:
        return list({profile.name: profile for _, profile in self.sides}.values())


def _take(posargs: list[str], name: str, default: str) -> str:
    """Remove ``name VALUE`` / ``name=VALUE`` from ``posargs`` (once) and return the value."""
    for i, arg in enumerate(posargs):
        if arg == name:
            if i + 1 == len(posargs):
                raise UsageError(f"{name} needs a value")
            value = posargs[i + 1]
            del posargs[i : i + 2]
            break
        if arg.startswith(name + "="):
            value = arg.split("=", 1)[1]
            del posargs[i]
            break
    else:
        return default
    if given(posargs, name):
        raise UsageError(
            f"{name} is given more than once; give one (a comma-separated list for the matrix)"
        )
    return value


def unknown_release(version: str) -> str:
    """The error's start for a release not in the table, naming the one it spells."""
    normal = normal_version(version)
    if normal != version and normal in RELEASE_BY_VERSION:
        return f"unknown release {version} (did you mean {normal}?)"
    return f"unknown release {version}"


def _releases(spec: str) -> list[Release]:
    if spec in RELEASE_SETS:
        return RELEASE_SETS[spec]
    chosen = []
    for version in listed(spec):
        if version not in RELEASE_BY_VERSION:
            raise UsageError(
                f"{unknown_release(version)}; the release table has "
                f"{', '.join(RELEASE_BY_VERSION)} (or --jax {'|'.join(RELEASE_SETS)})"
            )
        chosen.append(RELEASE_BY_VERSION[version])
    if not chosen:
        raise UsageError("--jax names no release")
    return list(dict.fromkeys(chosen))


def interleaved_request(posargs: Sequence[str]) -> InterleavedRequest:
    """The sides and ``run`` options of ``posargs``; UsageError where the harness would refuse."""
    rest = list(posargs)
    if any(arg in HELP for arg in rest):
        print(
            "nox -s matrix -- [--jax edges|all|V,V,...] [--profile P,P,...] [run options]: the "
            f"releases (default {DEFAULT_RELEASES}) × profiles (default {DEFAULT_PROFILES}, each "
            "case under those its claim is about: its CLAIM_DEVICES) measured as sides of one run, "
            f"{DEFAULT_PROCESSES} processes a cell and side unless --processes says otherwise, "
            f"{DEFAULT_MAX_SECONDS} s of samples a program unless --max-seconds or --effort says "
            f"otherwise, {DEFAULT_WARMUP} warm-up call unless --warmup says otherwise "
            f"(--decide {DEFAULT_DECIDE}; with --decide changes|all up to {MATRIX_LOOKS} "
            "× that while a comparison is open unless --max-processes says otherwise); the run "
            "options:",
        )
    releases = _releases(_take(rest, "--jax", DEFAULT_RELEASES))
    chosen = given(rest, "--profile")
    profiles = [_profile(name) for name in listed(_take(rest, "--profile", DEFAULT_PROFILES))]
    if not profiles:
        raise UsageError("--profile names no profile")
    if given(rest, "--sides"):
        raise UsageError("the session writes the sides plan itself: leave out --sides")
    sides = [(r, p) for r in releases for p in profiles if p.applies_to(r)]
    if not sides:
        raise UsageError("no profile given applies to any release given")
    for default, said_by in (
        (["--processes", DEFAULT_PROCESSES], ("--processes",)),
        (["--max-seconds", DEFAULT_MAX_SECONDS], ("--max-seconds", "--effort")),
        (["--warmup", DEFAULT_WARMUP], ("--warmup",)),
        # asking for looks
        (
            ["--decide", DEFAULT_DECIDE],
            ("--decide", "--max-processes", "--decide-metric", "--time-budget"),
        ),
    ):
        if not any(given(rest, name) for name in said_by):
            rest += default
    request = InterleavedRequest(sides, ["run", *rest], claims_only=not chosen)
    # checked as run will see it
    with tempfile.TemporaryDirectory(prefix="harness-sides-") as scratch:
        placeholder = {(r.jax, p.name): sys.executable for r, p in sides}
        plan = write_sides(Path(scratch) / "sides.json", request, placeholder)
        args, checked = validate([*request.run_argv, "--sides", str(plan)])
    if args.max_processes is None and checked.settings.decide is not None:
        rest += ["--max-processes", str(MATRIX_LOOKS * checked.settings.processes)]
    return InterleavedRequest(sides, ["run", *rest], claims_only=not chosen)


def write_sides(
    path: Path, request: InterleavedRequest, interpreters: dict[tuple[str, str], str]
) -> Path:
    """The sides plan ``run --sides`` reads: each side's interpreter and the profile's flags."""
    plan = [
        {
            "release": r.jax,
            "profile": p.name,
            "interpreter": interpreters[r.jax, p.name],
            "env": dict(p.env),
            **({"claims_only": True} if request.claims_only else {}),
        }
        for r, p in request.sides
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(plan, indent=1))
    return path


@dataclass(frozen=True)
class IndexSession:
    """A nox session whose releases come from the package index: its ``nox -l`` line and check."""

    summary: str
    view: Callable[[Sequence[str]], SessionRequest | WatchRequest]


FROM_THE_INDEX = {
    "issue": IndexSession(
        "Draft an upstream issue: nox -s issue -- CASE [--jax V] [--good V --bad V] [--metric M | "
        "--status] [--profile P] [..].",
        partial(session_view, "issue"),
    ),
    "run": IndexSession(
        "One case on any release of the package index: nox -s run -- CASE [--jax V] [--profile P] "
        "[run options].",
        release_run_view,
    ),
    "flags": IndexSession(
        "Two sets of device flags on one release of the index, measured interleaved: nox -s flags "
        "-- --case CASE|--script FILE [--jax V] --a NAME=VALUE --b NAME=VALUE [run options].",
        partial(release_run_view, command="flags"),
    ),
    "bisect": IndexSession(
        "First release where a metric changed: nox -s bisect -- CASE --metric M|--claim|--status "
        "--good V --bad V.\n\n"
        "``--broken V --fixed W`` instead of ``--good``/``--bad`` looks for the release that fixed "
        "it.",
        partial(session_view, "bisect"),
    ),
    "sweep": IndexSession(
        "Every release of a range, and each significant step: nox -s sweep -- CASE --from V --to V "
        "[--metric M].",
        partial(session_view, "sweep"),
    ),
    "triage": IndexSession(
        "Every change in a range, each confirmed: nox -s triage -- CASE [--from V --to V]\n"
        "[--metric M|--claim|--status].",
        partial(session_view, "triage"),
    ),
    "watch": IndexSession(
        "The newest jax release on the index against the one before, every change confirmed: nox "
        "-s watch --\n"
        "[--scripts DIR [--include G] [--exclude G]] [--pytest-benchmark PATH "
        '[--pytest-args="ARGS"]] [--case C] [--baseline V] [--release V] (docs/watch.md).',
        watch_view,
    ),
}
