"""The harness's end of a nox session: every release and script environment it needs, then its
command.

The noxfile checks a session's posargs (``harness.cli.sessions``), installs the harness and hands
over here twice, as nox's two steps: ``prepare`` (the install step, ``--install-only``) lists the
index, picks the releases, makes the venvs needed up front and writes the plans; ``launch`` (the run
step) runs the harness command on them, preparing first only where ``prepare`` did not run for these
posargs (``nox -R``).  Release venvs live beside nox's own, the plans in the session's cache folder.

python -m harness.commands.nox_session {prepare|launch} SESSION VENVS CACHE [JAX] -- POSARGS
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from harness.cli.ranges import bounded
from harness.cli.sessions import (
    SessionRequest,
    applies,
    interleaved_request,
    release_run_view,
    session_view,
    watch_view,
    write_sides,
)
from harness.cli.watch import watched_pair
from harness.errors import HarnessError, interrupted_status, terminate
from harness.install.environments import Environments, Prepared
from harness.install.index import Listing, installs_together, load_listing, newest_installable
from harness.install.venvs import ReleaseEnv, ensure, release_env, write_plan
from harness.measure.guardian import follow_parent
from harness.measure.locks import Progress, stderr_line
from harness.pins import RELEASE_BY_VERSION, Profile, Release, index_release, interpreter

MODES = ("prepare", "launch")


@dataclass(frozen=True)
class Places:
    """Where release venvs go (beside nox's), and plans and the index listing (the cache folder)."""

    venvs: Path
    cache: Path

    def env(self, release: Release, profile: Profile) -> ReleaseEnv:
        return release_env(release, profile, interpreter(release.python), self.venvs)


@dataclass(frozen=True)
class Launch:
    """``python -m harness ARGV`` with ``python`` ("": the session's own)."""

    argv: list[str]
    python: str = ""

    def command(self) -> list[str]:
        return [self.python or sys.executable, "-m", "harness", *self.argv]


def session_python() -> str:
    """The session venv's interpreter: its pip sees releases as the session's Python does."""
    return str(Path(sys.prefix) / "bin" / "python")


def listing_of(places: Places) -> Listing:
    """Every installable (jax, jaxlib) pair on the index for the session's Python."""
    return load_listing(session_python(), places.cache / "jax-index.json")


def ready(places: Places, release: Release, profile: Profile, say: Progress) -> ReleaseEnv:
    """``release``'s cached venv under ``profile``, installed once; HarnessError when not."""
    env = places.env(release, profile)
    say(f"jax {release.jax} ({profile.name}) in {env.venv}: installed once, then reused")
    problem = ensure(env)
    if problem:
        raise HarnessError(f"jax {release.jax} cannot be installed: {problem}")
    return env


def release_plan(places: Places, command: str, releases: list[Release], profile: Profile) -> Path:
    """What each release installs and where its venv is; named by its content, so two sessions of
    one name with other ranges at once never read each other's plan."""
    envs = [places.env(r, profile) for r in releases if profile.applies_to(r)]
    content = json.dumps(
        [[env.jax, env.jaxlib, env.python, list(env.install), str(env.venv)] for env in envs]
    )
    digest = hashlib.sha256(content.encode()).hexdigest()[:16]
    plan = places.cache / f"{command}-releases-{digest}.json"
    write_plan(plan, envs)
    return plan


def script_side(places: Places, request: SessionRequest, release: Release, say: Progress) -> Launch:
    """A plain script on one release, in a venv of its own, a side the session's harness drives."""
    assert request.own_venv_of is not None and request.profile is not None
    profile = request.profile
    environments = Environments(request.own_venv_of, profile, request.policy, progress=say)
    prepared = environments.prepare(release.jax, places.env(release, profile))
    if not isinstance(prepared, Prepared):
        raise HarnessError(f"jax {release.jax}: {prepared.line}")
    libraries = {} if prepared.libraries is None else {"libraries": prepared.libraries.to_json()}
    side = {
        "release": release.jax,
        "profile": profile.name,
        "env": dict(profile.env),
        "interpreter": str(prepared.interpreter),
        **libraries,
    }
    plan = places.cache / "run-script-sides.json"
    plan.parent.mkdir(parents=True, exist_ok=True)
    plan.write_text(json.dumps([side], indent=1))
    return Launch([*request.sides_argv, "--sides", str(plan)])


def matrix(places: Places, posargs: Sequence[str], say: Progress) -> Launch:
    request = interleaved_request(posargs)
    wanted = {(release.jax, profile.name): (release, profile) for release, profile in request.sides}
    # Each release's venv installed at once beside the others (uv waits mostly on downloads; one
    # venv that several profiles share is made once, under its lock): from an empty package cache
    # the two releases of the main command download together.
    with ThreadPoolExecutor(max_workers=max(1, len(wanted))) as pool:
        made = {key: pool.submit(ready, places, *pair, say) for key, pair in wanted.items()}
        interpreters = {key: str(future.result().interpreter) for key, future in made.items()}
    plan = write_sides(places.cache / "matrix-sides.json", request, interpreters)
    return Launch([*request.run_argv, "--sides", str(plan)])


def run_one(places: Places, posargs: Sequence[str], say: Progress, command: str = "run") -> Launch:
    """``run`` or ``flags`` on one release of the index, in its cached venv."""
    request = release_run_view(posargs, command)
    assert request.profile is not None
    release = index_release(*listing_of(places).pair(request.on_index[0]))
    if request.own_venv_of is not None:
        return script_side(places, request, release, say)
    env = ready(places, release, request.profile, say)
    return Launch(request.harness_argv, str(env.interpreter))


def release_range(places: Places, command: str, posargs: Sequence[str]) -> Launch:
    """issue, bisect, sweep, triage: their releases on the index, in a plan to install from."""
    request = session_view(command, posargs)
    assert request.profile is not None
    listing = listing_of(places)
    # the releases named, each refused unless on the index (``Listing.pair``): issue's, or the one
    # jax release held while a library's releases vary (--vary)
    releases = [index_release(*listing.pair(version)) for version in request.on_index]
    if command == "issue":  # any release on the index, each installed on demand
        releases = [index_release(jax, lib) for jax, lib in listing.pairs]
    elif request.span is not None:
        releases = [index_release(jax, lib) for jax, lib in listing.between(*request.span)]
        bounded(command, len(releases), "jax {}–{}".format(*request.span))
    plan = release_plan(places, command, releases, request.profile)
    return Launch([*request.harness_argv, "--releases", str(plan)])


def watch(places: Places, posargs: Sequence[str], say: Progress) -> Launch:
    request = watch_view(posargs)
    listing = listing_of(places)
    versions = [jax for jax, _ in listing.pairs]
    if request.release is None:  # the newest: one that installs with the jaxlib it is paired with
        versions = newest_installable(listing, say, installs_together)
    pair = watched_pair(versions, request.release, request.baseline)
    releases = [index_release(*listing.pair(version)) for version in pair]
    applies(request.profile, pair)
    plan = release_plan(places, "watch", releases, request.profile)
    named = [] if request.baseline else ["--baseline", pair[0]]
    named += [] if request.release else ["--release", pair[1]]
    return Launch([*request.harness_argv, *named, "--releases", str(plan)])


def prepare(
    session: str, posargs: Sequence[str], places: Places, jax: str = "", say: Progress = stderr_line
) -> Launch:
    """Every environment ``session`` needs, ready or planned, and the command to run."""
    if session == "matrix":
        return matrix(places, posargs, say)
    if session in ("run", "flags"):
        return run_one(places, posargs, say, session)
    if session == "repro":  # a plain script on the table's release, in a venv of its own
        return script_side(places, session_view("run", posargs), RELEASE_BY_VERSION[jax], say)
    if session == "watch":
        return watch(places, posargs, say)
    return release_range(places, session, posargs)


def launched(
    mode: str,
    session: str,
    posargs: Sequence[str],
    places: Places,
    jax: str = "",
    say: Progress = stderr_line,
) -> Launch | None:
    """``prepare``: make everything and record the command (None: nothing to run yet); ``launch``:
    the recorded command for the same posargs, else prepared now."""
    record = places.cache / f"{session}-launch.json"
    wanted = {"posargs": list(posargs), "jax": jax}
    if mode == "launch":
        try:
            stored = json.loads(record.read_text())
            if stored["for"] == wanted:
                return Launch(stored["argv"], stored["python"])
        except (OSError, ValueError, KeyError, TypeError):
            pass  # ``prepare`` did not run (nox -R) or ran for other posargs
    found = prepare(session, posargs, places, jax, say)
    if mode == "launch":
        return found
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"for": wanted, "argv": found.argv, "python": found.python}))
    return None


def main(argv: Sequence[str]) -> int:
    mode, session, venvs, cache, *rest = argv
    assert mode in MODES, f"mode {mode}: one of {', '.join(MODES)}"  # the noxfile's, never a user's
    jax = rest.pop(0) if rest and rest[0] != "--" else ""
    posargs = rest[1:] if rest[:1] == ["--"] else rest
    # A SIGTERM (to nox's whole group, or nox's death passed on) is an interrupt: an installer's
    # command running in a group of its own (uv, compileall and its workers) is ended before this
    # process goes.
    signal.signal(signal.SIGTERM, terminate)
    follow_parent(signal.SIGTERM)
    try:
        found = launched(mode, session, posargs, Places(Path(venvs), Path(cache)), jax)
    except HarnessError as exc:
        print(f"harness: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt as exc:
        print("harness: interrupted while preparing the session's environments", file=sys.stderr)
        return interrupted_status(exc)
    if found is None:
        return 0
    command = found.command()
    os.execv(command[0], command)  # the command's own process, as `python -m harness` starts it
    return 0  # not reached: execv does not return


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
