"""Which command lines of the installed ``jax-repro`` its packaged nox sessions run
(``harness.commands.packaged_sessions``): those needing releases from the index (``--jax``), or an
environment this one lacks (JAX; the report extra); a command line a session hands on, or run inside
a driven session (``DRIVEN``), is the command's own.  And the profile measuring the JAX here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

# in a driven nox's environment: every harness command below it runs as it is
from harness.pins import DRIVEN

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
