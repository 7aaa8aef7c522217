"""What an interleaved session measures: releases × profiles as sides of one run, from a nox session's posargs.

``nox -s matrix -- --jax edges --profile cpu,cpu8 --case scan_sync`` measures the chosen
cases on every (release, profile) pair the tables allow, each pair a *side* with its
own worker in its release's cached venv, their processes alternating in rounds (see
``harness.measure.sides``), so load and drift fall on every release alike.  This
module turns the posargs into that request and the sides plan; the noxfile installs
the venvs and runs ``python -m harness run --sides PLAN``.  Standard library only (the
noxfile imports it in nox's own environment).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.errors import UsageError
from harness.pins import EDGES, PROFILE_BY_NAME, RELEASE_BY_VERSION, RELEASES, Profile, Release

# What --jax accepts besides a comma-separated list of the table's releases.
RELEASE_SETS = {"edges": list(EDGES), "all": list(RELEASES)}
DEFAULT_RELEASES = "edges"
DEFAULT_PROFILES = "cpu,cpu8"
# Case processes per cell and side unless --processes says otherwise: the fewest a verdict accepts, so
# that plain `nox` (this session, then the report) compares two releases in minutes on a 2-core machine.
DEFAULT_PROCESSES = "3"


@dataclass(frozen=True)
class InterleavedRequest:
    """The sides to measure (release × profile, where the profile applies) and the ``run`` options for them."""

    sides: list[tuple[Release, Profile]]
    run_argv: list[str]  # ``run`` and its options, without --sides (the noxfile adds the plan)

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
    if name in posargs or any(a.startswith(name + "=") for a in posargs):
        raise UsageError(f"{name} given twice; give one comma-separated list")
    return value


def _releases(spec: str) -> list[Release]:
    if spec in RELEASE_SETS:
        return RELEASE_SETS[spec]
    chosen = []
    for version in filter(None, (v.strip() for v in spec.split(","))):
        if version not in RELEASE_BY_VERSION:
            raise UsageError(
                f"unknown release {version}; the release table has {', '.join(RELEASE_BY_VERSION)} "
                f"(or --jax {'|'.join(RELEASE_SETS)})"
            )
        chosen.append(RELEASE_BY_VERSION[version])
    if not chosen:
        raise UsageError("--jax names no release")
    return list(dict.fromkeys(chosen))


def _profiles(spec: str) -> list[Profile]:
    names = list(dict.fromkeys(filter(None, (n.strip() for n in spec.split(",")))))
    for name in names:
        if name not in PROFILE_BY_NAME:
            raise UsageError(f"unknown profile {name}; profiles: {', '.join(PROFILE_BY_NAME)}")
    if not names:
        raise UsageError("--profile names no profile")
    return [PROFILE_BY_NAME[name] for name in names]


def interleaved_request(posargs: Sequence[str]) -> InterleavedRequest:
    """The sides and ``run`` options of ``posargs``; UsageError for anything the harness would refuse."""
    from harness.cli import validate

    rest = list(posargs)
    releases = _releases(_take(rest, "--jax", DEFAULT_RELEASES))
    profiles = _profiles(_take(rest, "--profile", DEFAULT_PROFILES))
    if any(a == "--sides" or a.startswith("--sides=") for a in rest):
        raise UsageError("the session writes the sides plan itself: leave out --sides")
    sides = [(r, p) for r in releases for p in profiles if p.applies_to(r)]
    if not sides:
        raise UsageError("no profile given applies to any release given")
    if not any(a == "--processes" or a.startswith("--processes=") for a in rest):
        rest += ["--processes", DEFAULT_PROCESSES]
    validate(["run", *rest])
    return InterleavedRequest(sides, ["run", *rest])


def write_sides(path: Path, request: InterleavedRequest, interpreters: dict[tuple[str, str], str]) -> Path:
    """The sides plan for ``run --sides``: each side's interpreter (by release and profile: a GPU profile
    has a venv of its own) and the profile's flags."""
    plan = [
        {"release": r.jax, "profile": p.name, "interpreter": interpreters[r.jax, p.name], "env": dict(p.env)}
        for r, p in request.sides
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(plan, indent=1))
    return path
