"""A venv per (jax release, interpreter, resolved set) for a script importing libraries besides JAX.

Libraries declare a loose lower bound on jax and none above, so the newest version accepting an
old jax may use APIs it lacks: hence ``as-of`` (docs/scripts.md), the index as it stood at the
release (plus ``GRACE``). jax and jaxlib are *constraints*, never overrides: a library refusing the
release fails the resolution, kept as a ``NotInstallable`` (an answer); anything else (no index, a
full disk, no uv) is an ``InstallFailed``, never kept, tried again.

Each step is cached, so a reuse needs no network: ``uv pip compile`` into exact pins under
``<folder>/script-resolutions/<key>/``; a venv ``<folder>/script-env-<16 hex>`` synced to exactly
them, compiled as ``venvs.ensure`` does, reused while its files are all there; what it holds (``uv
pip freeze``) is the ``Libraries`` a result stores. uv runs through a ``Runner`` (faked in tests);
standard library and ``packaging`` only, as the noxfile may build these venvs itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from harness.catalogue.script_deps import Declared, canonical, check_requires_python
from harness.errors import UsageError
from harness.install.upload_times import IndexUnreachable, UploadTimes, shown
from harness.install.venvs import (
    INSTALL_TIMEOUT_S,
    UV_MISSING,
    compile_all,
    mark_used,
    missing_files,
    run_whole,
    uv_command,
)
from harness.measure import venv_files
from harness.measure.locks import venv_lock
from harness.names import inside
from harness.pins import AS_OF, NEWEST, POLICIES, Profile, Release
from harness.store.files import replace_file
from harness.store.schema import PIN, Libraries

# A week: time for a library to ship the quick fix a new jax often needs, while the next jax release
# is most often weeks away (a median of 28 days between jax's uploads from 0.4.20 to 0.12.0.1), so
# what a week later resolves is still what that release's users had.
GRACE = timedelta(days=7)
# A resolution is final once its cutoff has passed; a newer one (``newest``, a cutoff ahead) may
# change as releases come out, so it is asked again after a day.
RESOLUTION_MAX_AGE_S = 24 * 3600
RESOLUTIONS = "script-resolutions"
ENV_PREFIX = "script-env-"
RECORD = ".harness-script-env.json"  # what the venv holds, written after a successful install
PINS_FILE = "resolved.txt"  # in the venv: the exact set it was made to hold
FORMAT = 1
REASON_CHARS = 300
PYTHON_VERSION_PROBE = "import platform; print(platform.python_version())"
# Settings that would change a resolution behind the policy's back (a cutoff under `newest`, the
# user's constraint or override file): the harness states its own on the command line.
SCRUBBED_VARIABLES = (
    "UV_EXCLUDE_NEWER",
    "UV_CONSTRAINT",
    "UV_OVERRIDE",
    "UV_EXCLUDE",
    "UV_PRERELEASE",
    "UV_RESOLUTION",
)

Runner = Callable[[Sequence[str], Path], "subprocess.CompletedProcess[str]"]


def run(command: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``command`` with its output; a timeout or a missing program is a failed run, not a raise."""
    environ = {key: value for key, value in os.environ.items() if key not in SCRUBBED_VARIABLES}
    environ["NO_COLOR"] = "1"
    return run_whole(command, cwd, INSTALL_TIMEOUT_S, environ)


@dataclass(frozen=True)
class ScriptEnv:
    venv: Path
    python: str
    python_version: str
    libraries: Libraries

    @property
    def interpreter(self) -> Path:
        return self.venv / "bin" / "python"


@dataclass(frozen=True)
class NotInstallable:
    """Why a script's set cannot be had on a release under the cutoff (the resolver proved it): an
    answer, kept as a resolution is and stored as the release's result."""

    reason: str
    cutoff: datetime | None


@dataclass(frozen=True)
class InstallFailed:
    """Why a set could not be tried (no index, a full disk, no uv): never kept, tried again."""

    reason: str
    stage: str  # "resolve" or "install"


@dataclass(frozen=True)
class ScriptEnvRequest:
    """A script's needs on one release: what it declares, interpreter, profile, policy, holds."""

    release: Release
    declared: Declared
    python: str  # the interpreter the venv is made with: a path, or a name uv finds
    profile: Profile | None = None
    policy: str = AS_OF
    hold: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_policy(self.policy)


def libraries(
    request: ScriptEnvRequest, pins: tuple[str, ...], cutoff: datetime | None
) -> Libraries:
    """What a result records of a script's venv; the SHA-256 is of the pins alone, any policy."""
    digest = hashlib.sha256("\n".join(pins).encode()).hexdigest()
    iso = cutoff.isoformat() if cutoff else None
    return Libraries(request.policy, pins, digest, iso, request.declared.requirements, request.hold)


def check_policy(policy: str) -> str:
    if policy not in POLICIES:
        choose = " or ".join(POLICIES)
        raise UsageError(f"{policy[:40]!r} is not a resolution policy; choose {choose}")
    return policy


def parse_hold(values: Sequence[str]) -> tuple[str, ...]:
    """``--hold PKG==VERSION`` values, each one exact pin, held as constraints in canonical form."""
    held: list[str] = []
    for value in values:
        pin = canonical(value, "--hold")
        requirement = Requirement(pin)
        only = list(requirement.specifier)
        exact = len(only) == 1 and only[0].operator == "==" and "*" not in only[0].version
        if not exact or requirement.extras or requirement.marker:
            raise UsageError(f"--hold {value[:60]!r}: give one exact pin, PKG==VERSION")
        same = [held_pin for held_pin in held if Requirement(held_pin).name == requirement.name]
        if pin not in held and same:
            # No set holds both: every release would be stored as not installable, for a typo.
            one = f"one version of {requirement.name} at a time"
            raise UsageError(f"--hold {pin} and --hold {same[0]}: {one}")
        held.append(pin)
    return tuple(dict.fromkeys(held))


def constraint_lines(
    release: Release, profile: Profile | None, hold: Sequence[str] = ()
) -> list[str]:
    """The release as constraints: jax, jaxlib (a CUDA extra picks its own), pins, holds."""
    jaxlib = [] if profile and profile.jax_extras else [f"jaxlib=={release.jaxlib}"]
    return [f"jax=={release.jax}", *jaxlib, *release.pins, *hold]


def resolution_key(
    request: ScriptEnvRequest, python_version: str, cutoff: datetime | None, index: str
) -> str:
    """What a resolution depends on, hashed: one key, one resolution (while it is final)."""
    inputs = {
        "format": FORMAT,
        "declared": request.declared.key(),
        "requirements": request.release.requirements(request.profile),
        "constraints": constraint_lines(request.release, request.profile, request.hold),
        "extras": list(request.profile.jax_extras) if request.profile else [],
        "policy": request.policy,
        "cutoff": cutoff.isoformat() if cutoff else None,
        "python": [request.python, python_version],
        "index": shown(index),
    }
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


def parse_pins(text: str) -> tuple[str, ...]:
    """``name==version`` lines (comments and blank lines skipped), names normalized, sorted by name;
    ValueError for any other line: a resolution of plain requirements gives nothing else."""
    pins = {}
    for line in text.splitlines():
        content = line.split("#", 1)[0].strip()
        if not content:
            continue
        match = PIN.fullmatch(content)
        if not match:
            raise ValueError(f"not an exact pin: {content[:80]!r}")
        pins[canonicalize_name(match["name"])] = match["version"]
    return tuple(f"{name}=={version}" for name, version in sorted(pins.items()))


def uv_reason(output: str) -> str:
    """uv's error in one line: for no solution, its explanation ("Because equinox>=0.13.8 depends
    on ...") or its hint of a cut by date; else its error line, first and last causes."""
    error, causes, hints = _uv_parts(output)
    if not error:
        lines = [line.strip() for line in output.splitlines() if line.strip()]
        return _one_line(lines[-1] if lines else "no output")
    if "no solution found" in error.lower():
        cut_off = [hint for hint in hints if "exclude-newer" in hint]
        if cut_off:
            # uv's advice ("Consider using `exclude-newer-package`") is for uv's users, not ours.
            return _one_line(". ".join(cut_off[0].split(". ")[:2]).rstrip(".") + ".")
        if causes:
            return _one_line(" ".join(causes))
    parts = [error, *causes[:1], *causes[-1:]]
    return _one_line(": ".join(dict.fromkeys(parts)))


def _uv_parts(output: str) -> tuple[str, list[str], list[str]]:
    """uv's error line, its causes and its hints, each joined into one piece of text."""
    error = ""
    causes: list[str] = []
    hints: list[str] = []
    current: list[str] | None = None
    alternatives = False  # inside "depends on one of:" and its indented list
    for raw in output.splitlines():
        line = raw.strip()
        if not line:
            current = None
            continue
        marker = re.match(r"(error:|×|cause:|caused by:|╰─▶|hint:)\s*", line, re.IGNORECASE)
        if marker:
            kind, text = marker.group(1).lower(), line[marker.end() :]
            if kind in ("error:", "×") and not error:
                error, current = text, None
            elif kind in ("cause:", "caused by:", "╰─▶"):
                causes.append(text)
                current = causes
            elif kind == "hint:":
                hints.append(text)
                current = hints
            alternatives = text.endswith("one of:")
            continue
        if current is None:
            # before the error ("Using Python 3.12.1 environment at: ..."), or after a blank line
            continue
        bare = " " not in line
        joiner = " or " if alternatives and bare and not current[-1].endswith(":") else " "
        current[-1] = f"{current[-1]}{joiner}{line}"
        alternatives = (alternatives and bare) or line.endswith("one of:")
    return error, causes, hints


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 1].rstrip() + "…"


def env_name(pins: Sequence[str], python: str, python_version: str) -> str:
    """``script-env-<16 hex>``: the same resolved set on the same interpreter is the same venv."""
    digest = hashlib.sha256(json.dumps([list(pins), python, python_version]).encode()).hexdigest()
    return f"{ENV_PREFIX}{digest[:16]}"


def python_version_of(python: str, runner: Runner, cwd: Path) -> str | None:
    done = runner([python, "-c", PYTHON_VERSION_PROBE], cwd)
    version = done.stdout.strip()
    return version if done.returncode == 0 and re.fullmatch(r"\d+\.\d+\.\d+\S*", version) else None


# In uv's "no solution", signs that the index was not what answered: the network disabled (only the
# cache read), the credentials refused, or the release itself missing (a mirror, a wrong path).
NOT_THE_INDEX_S_ANSWER = re.compile(
    r"network was disabled|not found in the cache|could not be queried|offline"
    r"|\bjax(lib)? was not found in the package registry",
    re.IGNORECASE,
)


def release_pins_problem(pins: Sequence[str], request: ScriptEnvRequest) -> str | None:
    """Why ``pins`` are not the request's set (inexact pins, or not its jax and jaxlib), or None."""
    if not all(isinstance(pin, str) and PIN.fullmatch(pin) for pin in pins):
        return "a line that is no name==version pin"
    versions = dict(pin.split("==", 1) for pin in pins)
    own = constraint_lines(request.release, request.profile)
    wanted = dict(line.split("==", 1) for line in own if line.startswith(("jax==", "jaxlib==")))
    for name, version in wanted.items():
        if versions.get(name) != version:
            return f"{name} {versions.get(name, '(none)')}, not {version}"
    return None


def _kept(
    record: Path, key: str, request: ScriptEnvRequest, cutoff: datetime | None, now: float
) -> tuple[str, ...] | NotInstallable | None:
    """The resolution kept in ``record`` for ``key`` while it holds; None where none is trusted."""
    try:
        stored = json.loads(record.read_text())
        # Nothing uploaded after a cutoff that has passed can enter: such a resolution is final.
        final = cutoff is not None and cutoff.timestamp() < now
        fresh = final or now - stored["resolved_at"] < RESOLUTION_MAX_AGE_S
        if stored["key"] != key or not fresh:
            return None
        if "problem" in stored:
            problem = stored["problem"]
            return NotInstallable(problem, cutoff) if isinstance(problem, str) else None
        pins = stored["pins"]
        if not isinstance(pins, list) or release_pins_problem(pins, request) is not None:
            return None  # not what a resolution of this request gives: resolved afresh
        return tuple(pins)
    except (OSError, ValueError, KeyError, TypeError):
        return None  # not resolved yet, or a record of something else: resolved afresh


def resolve(
    request: ScriptEnvRequest,
    folder: Path,
    cutoff: datetime | None,
    python_version: str,
    index: str,
    *,
    uv: Sequence[str],
    runner: Runner = run,
    clock: Callable[[], float] = time.time,
) -> tuple[str, ...] | NotInstallable | InstallFailed:
    """The request's exact pins, from the cache where it holds them, else ``uv pip compile``."""
    key = resolution_key(request, python_version, cutoff, index)
    work = inside(folder, RESOLUTIONS, key[:32])
    record = work / "resolution.json"
    now = clock()
    kept = _kept(record, key, request, cutoff, now)
    if kept is not None:
        return kept
    release, profile, hold = request.release, request.profile, request.hold
    try:
        work.mkdir(parents=True, exist_ok=True)
        # What to resolve: the release's own requirements (jax, jaxlib, pins), then the script's.
        wanted = [*release.requirements(profile), *request.declared.requirements]
        constraints = constraint_lines(release, profile, hold)
        replace_file(work / "requirements.in", "\n".join(wanted) + "\n")
        replace_file(work / "constraints.txt", "\n".join(constraints) + "\n")
        files = ["requirements.in", "--constraints", "constraints.txt", "--python", request.python]
        plain = ["--no-header", "--no-annotate", "--color", "never"]
        command = [*uv, "pip", "compile", *files, *plain]
        if cutoff is not None:
            # Not for the release's own packages (an index without upload times would hide them)
            # nor the held ones (they may be newer).
            extras = profile.jax_extras if profile else ()
            plugins = [f"jax-{extra}-{kind}" for extra in extras for kind in ("plugin", "pjrt")]
            held = [str(canonicalize_name(Requirement(pin).name)) for pin in hold]
            command += ["--exclude-newer", cutoff.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")]
            for package in dict.fromkeys(["jax", "jaxlib", *plugins, *held]):
                command += ["--exclude-newer-package", f"{package}=false"]
        done = runner(command, work)
        output = done.stderr or done.stdout
        if done.returncode != 0:
            reason = uv_reason(output)
            # uv's proof that the set cannot be had, not a failure to ask: an answer, kept
            if "no solution found" in output.lower() and not NOT_THE_INDEX_S_ANSWER.search(output):
                answer = {"key": key, "resolved_at": now, "problem": reason}
                replace_file(record, json.dumps(answer))
                return NotInstallable(reason, cutoff)
            return InstallFailed(f"`uv pip compile` failed: {reason}", "resolve")
        try:
            pins = parse_pins(done.stdout)
        except ValueError as exc:
            return InstallFailed(f"`uv pip compile` gave {exc}", "resolve")
        problem = release_pins_problem(pins, request)
        if problem:
            return InstallFailed(f"`uv pip compile` gave {problem}", "resolve")
        replace_file(work / "resolved.txt", "\n".join(pins) + "\n")
        replace_file(record, json.dumps({"key": key, "resolved_at": now, "pins": list(pins)}))
    except OSError as exc:
        why = exc.strerror or exc
        return InstallFailed(f"cannot write the resolution under {work}: {why}", "resolve")
    return pins


def _recorded(venv: Path, wanted: dict[str, object]) -> tuple[str, ...] | None:
    """What the venv's record says it holds, where it records ``wanted``; else None."""
    try:
        stored = json.loads((venv / RECORD).read_text())
        installed = stored["installed"]
        if {key: stored[key] for key in wanted} != wanted or not isinstance(installed, list):
            return None
        if not all(isinstance(pin, str) and PIN.fullmatch(pin) for pin in installed):
            return None
        return tuple(installed)
    except (OSError, ValueError, KeyError, TypeError):
        return None  # not installed yet, or by something else


def install(
    venv: Path,
    python: str,
    python_version: str,
    pins: Sequence[str],
    *,
    uv: Sequence[str],
    runner: Runner = run,
) -> tuple[str, ...] | InstallFailed:
    """What ``venv`` holds once made to hold ``pins`` (its record reused while its files are all
    there), or why not; under the venv's lock, so a second run waits and reuses it."""
    with venv_lock(venv):
        wanted = dict(format=FORMAT, python=python, python_version=python_version, pins=list(pins))
        recorded, interpreter = _recorded(venv, wanted), venv / "bin" / "python"
        damaged = False
        if recorded is not None and interpreter.exists():
            if not missing_files(venv) and not venv_files.marked(venv):
                mark_used(venv)
                return recorded
            # a module or a jaxlib library deleted since: every process would fail alike
            damaged = True
        # `sync`, not `install`: exactly the set, nothing left from an earlier, broken attempt;
        # every distribution installed again where a file of one was lost.
        python_of_venv = ["--python", str(interpreter), "--color", "never"]
        again = ["--reinstall"] if damaged else []
        steps = [
            ("uv pip sync", [*uv, "pip", "sync", *again, *python_of_venv, str(venv / PINS_FILE)]),
            ("compileall", compile_all(venv)),
            ("uv pip freeze", [*uv, "pip", "freeze", *python_of_venv]),
        ]
        if not (venv / "pyvenv.cfg").is_file() or not interpreter.exists():
            # No venv, or one whose interpreter is gone (its Python removed): uv refuses to make a
            # venv over one, and syncing into it cannot work, run after run: made anew.
            make = [*uv, "venv", "--quiet", "--color", "never", "--python", python, str(venv)]
            steps.insert(0, ("uv venv", make))
        output = ""
        try:
            if steps[0][0] == "uv venv" and venv.is_dir() and not venv.is_symlink():
                shutil.rmtree(venv)
            for what, command in steps:
                if what == "uv pip sync":
                    (venv / RECORD).unlink(missing_ok=True)  # a venv half synced holds no record
                    replace_file(venv / PINS_FILE, "\n".join(pins) + "\n")
                done = runner(command, venv.parent)
                if done.returncode != 0:
                    why = uv_reason(done.stderr or done.stdout)
                    return InstallFailed(f"`{what}` failed: {why}", "install")
                output = done.stdout
            try:
                installed = parse_pins(output)
            except ValueError as exc:
                return InstallFailed(f"`uv pip freeze` gave {exc}", "install")
            replace_file(venv / RECORD, json.dumps({**wanted, "installed": list(installed)}))
            venv_files.clear(venv)
        except OSError as exc:
            return InstallFailed(f"cannot write into {venv}: {exc.strerror or exc}", "install")
        return installed


def ensure(
    request: ScriptEnvRequest,
    folder: Path,
    times: UploadTimes,
    *,
    runner: Runner = run,
    uv: Sequence[str] | None = None,
    clock: Callable[[], float] = time.time,
) -> ScriptEnv | NotInstallable | InstallFailed:
    """A venv under ``folder`` holding the request's resolved set (a second call reuses both), why
    the set cannot be had, or why it was not tried; UsageError for a ``requires-python`` missed."""
    # Every command runs in a folder of its own: a relative path would move with it.
    folder = folder.absolute()
    uv = uv if uv is not None else uv_command()
    if uv is None:
        return InstallFailed(UV_MISSING, "resolve")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return InstallFailed(f"cannot make {folder}: {exc.strerror or exc}", "resolve")
    python_version = python_version_of(request.python, runner, folder)
    if python_version is None:
        return InstallFailed(f"the interpreter {request.python} does not run", "resolve")
    check_requires_python(request.declared, python_version)
    cutoff = None  # the ``--exclude-newer`` date (UTC); none under ``newest``
    if request.policy != NEWEST:
        try:
            released = times.jax_release_time(request.release.jax, request.release.jaxlib)
        except IndexUnreachable as exc:
            return InstallFailed(str(exc), "resolve")
        cutoff = (released + GRACE).astimezone(UTC).replace(microsecond=0)
    pins = resolve(
        request, folder, cutoff, python_version, times.index, uv=uv, runner=runner, clock=clock
    )
    if not isinstance(pins, tuple):
        return pins
    venv = inside(folder, env_name(pins, request.python, python_version))
    installed = install(venv, request.python, python_version, pins, uv=uv, runner=runner)
    if isinstance(installed, InstallFailed):
        return installed
    return ScriptEnv(venv, request.python, python_version, libraries(request, installed, cutoff))
