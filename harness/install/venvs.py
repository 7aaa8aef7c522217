"""One cached venv per jax release and build, made with uv as nox's uv backend makes a session's.

A release installs ``pins.install_args`` under the session's profile (the harness, editable, and
the release; JAX's CUDA build under a GPU profile) into a venv named for both (``release_env``);
``commands.nox_session`` hands the releases over as a *plan* file. A venv is built once: the
install it holds is recorded beside it and reused while the record matches. Standard library only:
the noxfile's checks read plans.

``export_tools`` (flatbuffers, on some releases absl) go into a folder of their own, put last on the
path of a capture process only: a script's venv is never changed. Every installer's command runs
in a process group of its own, ended whole (``run_whole``): uv and ``compileall -j 0`` start
processes that an interrupt or a time-out would otherwise leave writing into the venv.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from harness.errors import UsageError
from harness.install.index import Listing
from harness.measure import venv_files
from harness.measure.locks import venv_lock
from harness.pins import Profile, Release, install_args
from harness.store.files import read_plan_document, replace_file

REPO = Path(__file__).resolve().parents[2]
INSTALLED = ".harness-install.json"  # what the venv holds, written after a successful install
# Its time set each time a run takes the venv as it is: when `prune` sees it used. A file every venv
# has, so that marking it never changes the venv's folder (a new file would: a venv made anew).
USED = "pyvenv.cfg"
INSTALL_TIMEOUT_S = 900
ERROR_LINES = 6
EXPORT_PACKAGES = ("flatbuffers", "absl-py")
EXPORT_DONE = ".installed"
UV_MISSING = (
    "uv not found (neither on PATH nor as python -m uv); install it with: python3 -m pip install uv"
)


@dataclass(frozen=True)
class ReleaseEnv:
    jax: str
    jaxlib: str
    python: str
    install: tuple[str, ...]
    venv: Path

    @property
    def interpreter(self) -> Path:
        return self.venv / "bin" / "python"


def venv_name(release: Release, profile: Profile) -> str:
    """``release-jax-V`` for every CPU profile (they install alike), ``…-cuda12`` for CUDA."""
    build = "".join(f"-{extra}" for extra in profile.jax_extras)
    return f"release-jax-{release.jax}{build}"


def release_env(release: Release, profile: Profile, python: str, folder: Path) -> ReleaseEnv:
    """How ``release`` is installed for ``profile``: its arguments, its venv under ``folder``."""
    # A CUDA build's extra chooses its own jaxlib (not always the index's pair): said, not guessed.
    extras = ",".join(profile.jax_extras)
    jaxlib = f"pinned by jax[{extras}]" if extras else release.jaxlib
    install = tuple(install_args(release, profile))
    return ReleaseEnv(release.jax, jaxlib, python, install, folder / venv_name(release, profile))


def plain_env(env: ReleaseEnv) -> ReleaseEnv:
    """``env``'s release alone, in a venv of its own without the harness: where an issue draft runs
    its short script, as a maintainer would after ``pip install`` of the same requirements."""
    install = env.install[2:] if env.install[:2] == ("-e", ".") else env.install
    folder = env.venv.with_name("plain-" + env.venv.name.removeprefix("release-"))
    return ReleaseEnv(env.jax, env.jaxlib, env.python, install, folder)


def plan_entry(envs: Sequence[ReleaseEnv], version: str) -> ReleaseEnv:
    """The plan's entry for ``version``; one it does not list is refused, naming nearby ones."""
    Listing("", [(env.jax, env.jaxlib) for env in envs]).pair(version)  # refuses one not listed
    return next(env for env in envs if env.jax == version)


def write_plan(path: Path, envs: Sequence[ReleaseEnv]) -> None:
    rows = [{**asdict(env), "install": list(env.install), "venv": str(env.venv)} for env in envs]
    path.parent.mkdir(parents=True, exist_ok=True)
    # Whole: another session may be reading the same plan.
    replace_file(path, json.dumps(rows, indent=1))


def read_plan(path: Path) -> list[ReleaseEnv]:
    """The release plan nox wrote; UsageError naming the file, an entry and its field."""
    # a plan of a thousand releases is a few hundred kB
    rows = read_plan_document(path, "the release plan", limit=4 * 2**20)
    if not isinstance(rows, list):
        raise UsageError(f"the release plan {path} is not a list of releases")
    entry = f"the release plan {path}, entry"
    return [_plan_entry(row, f"{entry} {i + 1}") for i, row in enumerate(rows)]


def _plan_entry(row: object, where: str) -> ReleaseEnv:
    if not isinstance(row, dict):
        raise UsageError(f"{where} is not an object")
    for name in ("jax", "jaxlib", "python", "venv"):
        if name not in row:
            raise UsageError(f"{where} has no {name!r}")
        if not isinstance(row[name], str) or not row[name]:
            raise UsageError(f"{where}: {name!r} is not a non-empty string")
    install = row.get("install")
    if not isinstance(install, list) or not all(isinstance(a, str) for a in install):
        raise UsageError(f"{where}: 'install' is not a list of strings")
    return ReleaseEnv(row["jax"], row["jaxlib"], row["python"], tuple(install), Path(row["venv"]))


def _end_group(process: subprocess.Popen[str]) -> None:
    # Already gone, with everything it started: nothing to end.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def run_whole(
    command: Sequence[str], cwd: Path, timeout_s: float, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``command`` with its output captured; 124 past ``timeout_s``, 127 when it cannot start, never
    a raise. An interrupt while it runs ends it and all it started before it propagates."""
    try:
        process = subprocess.Popen(
            list(command),
            cwd=cwd,
            env=None if env is None else dict(env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            # A group of its own, so that the whole of it can be ended; a terminal's Ctrl-C then
            # reaches the harness only, which ends the group itself.
            start_new_session=True,
        )
    except OSError as exc:
        return subprocess.CompletedProcess(list(command), 127, "", f"error: {exc}")
    late = None
    try:
        stdout, stderr = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        late, stdout, stderr = 124, "", f"error: did not finish within {timeout_s:.0f} s"
    finally:  # whatever it started and left behind (a compile worker) goes with it, as on a raise
        _end_group(process)
    return subprocess.CompletedProcess(list(command), late or process.returncode, stdout, stderr)


def uv_command() -> list[str] | None:
    found = shutil.which("uv")
    if found:
        return [found]
    if importlib.util.find_spec("uv") is not None:
        return [sys.executable, "-m", "uv"]
    return None


def last_lines(text: str) -> str:
    return " / ".join(text.strip().splitlines()[-ERROR_LINES:]) or "no output"


def compile_all(venv: Path) -> list[str]:
    """Every module of ``venv`` compiled once at its install: ``process.import_ns`` then times
    importing, never compiling, whatever PYTHONDONTWRITEBYTECODE says. The packages' own test
    folders aside, which no program imports: a third of a release venv's modules (scipy's, numpy's
    and jax's test suites), half its compile time (about 3 s of CPU a venv). ``compileall -x``
    matches whole paths: a venv that is itself under a folder named tests is compiled."""
    lib = venv / "lib"
    skipped = f"^{re.escape(str(lib))}/.+/tests/"
    python = str(venv / "bin" / "python")
    return [python, "-m", "compileall", "-q", "-j", "0", "-x", skipped, str(lib)]


def install_record(env: ReleaseEnv) -> dict[str, object]:
    """What a venv holding ``env``'s install records; pyproject.toml's hash too, as a dependency
    added there reaches the (editable) harness's venv only through a new install."""
    project = hashlib.sha256((REPO / "pyproject.toml").read_bytes()).hexdigest()
    return dict(
        python=env.python, install=list(env.install), pyproject=project, bytecode="compileall"
    )


def mark_used(venv: Path) -> None:
    """Stamp ``venv`` used now (``jax-repro prune`` keeps a venv used lately), where it can."""
    with contextlib.suppress(OSError):
        os.utime(venv / USED)


def missing_files(venv: Path) -> list[str]:
    """Files the venv's RECORDs list that are gone (a module, a ``.so``), or RECORDs unreadable."""
    site = venv_files.site_packages(venv)
    if site is None:
        return ["site-packages"]
    gone = []
    for info in site.glob("*.dist-info"):
        try:
            lines = (info / "RECORD").read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            gone.append(f"{info.name}/RECORD")
            continue
        for line in lines:
            name = line.split(",", 1)[0]
            # Paths above site-packages (scripts under bin/) are the venv's own business.
            if name and not name.startswith("..") and not (site / name).exists():
                gone.append(name)
    return gone


def ensure(env: ReleaseEnv) -> str | None:
    """Make ``env``'s venv hold its install; None when ready, else why not. An existing venv is
    installed into, never deleted (it may hold a user's things); one that lost a file is installed
    again. Under the venv's lock: two runs that need it make it once."""
    with venv_lock(env.venv):
        record = env.venv / INSTALLED
        wanted = install_record(env)
        damaged = False
        try:
            if json.loads(record.read_text()) == wanted and env.interpreter.exists():
                damaged = bool(missing_files(env.venv) or venv_files.marked(env.venv))
                if not damaged:
                    mark_used(env.venv)
                    return None
        except (OSError, ValueError):
            pass  # not installed yet, or by something else
        uv = uv_command()
        if uv is None:
            return UV_MISSING
        # A venv damaged since its install (a file of jaxlib deleted): installed again over itself.
        again = ["--reinstall"] if damaged else []
        install = ["--quiet", *again, "--python", str(env.interpreter), *env.install]
        steps = [("uv pip install", [*uv, "pip", "install", *install])]
        if not (env.venv / "pyvenv.cfg").is_file():
            make = [*uv, "venv", "--quiet", "--python", env.python, str(env.venv)]
            steps.insert(0, ("uv venv", make))
        steps.append(("compileall", compile_all(env.venv)))
        for what, command in steps:
            done = run_whole(command, REPO, INSTALL_TIMEOUT_S)
            if done.returncode == 124:
                return f"`{what}` did not finish within {INSTALL_TIMEOUT_S} s"
            if done.returncode != 0:
                return f"`{what}` failed: {last_lines(done.stderr or done.stdout)}"
        try:
            record.write_text(json.dumps(wanted))
            venv_files.clear(env.venv)
        except OSError as exc:
            return f"cannot write {record}: {exc.strerror or exc}"
        return None


def export_tools(cache: Path, interpreter: Path) -> Path | str:
    """The folder holding ``EXPORT_PACKAGES`` for ``interpreter``, installed once; or why not."""
    # Absolute: the capture process runs where the script runs, not where the harness was started.
    folder = (cache / "export-tools").resolve()
    if (folder / EXPORT_DONE).is_file():
        return folder
    uv = uv_command()
    if uv is None:
        return "uv is not installed (it installs flatbuffers for jax.export)"
    where = ["--target", str(folder), "--python", str(interpreter)]
    with venv_lock(folder):  # an install: none of a why's own measuring
        if (folder / EXPORT_DONE).is_file():  # another run's, made while this one waited
            return folder
        done = run_whole([*uv, "pip", "install", "--quiet", *where, *EXPORT_PACKAGES], REPO, 600)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            return f"flatbuffers could not be installed: {last}"
        try:
            (folder / EXPORT_DONE).write_text("\n".join(EXPORT_PACKAGES) + "\n")
        except OSError as exc:
            return f"flatbuffers could not be installed: {exc}"
    return folder
