"""The release commands from any folder: the installed package drives its own nox sessions.

``jax-repro triage …`` (pip, pipx, ``uv tool``, ``uvx``) is the clone's ``nox -s triage -- …``: the
project the wheel ships (``harness/project/``, the harness and the cases) is copied into the user's
cache (``cache_root``; an installed package may be read-only, and nox works in its noxfile's
folder), nox runs with an absolute ``--envdir`` there (nox joins a relative one to the noxfile's
folder), and the sessions work in the folder the command was typed in (``DRIVEN``).  The command
line, the index and the cache are checked first, each failure one line before nox starts.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from harness.catalogue.discovery import DEFAULT_CASES_DIR
from harness.cli import sessions
from harness.cli.sessions import NEED_THE_INDEX
from harness.errors import UsageError
from harness.host.environment import shown_path
from harness.install.index import unreachable_index
from harness.measure.locks import stderr_line
from harness.pins import DRIVEN

CACHE_SETTING = "JAX_REPRO_CACHE"
PROJECT_FILES = ("noxfile.py", "pyproject.toml", "README.md")
HARNESS_DIR = Path(__file__).resolve().parents[1]
SKIPPED = {"__pycache__", "project"}  # bytecode, and the shipped root files (copied to the root)
DIGEST_FILE = ".jax-repro-digest"


def cache_root(environ: Mapping[str, str]) -> Path:
    """The user's cache for the packaged sessions: ``$JAX_REPRO_CACHE``, else
    ``$XDG_CACHE_HOME/jax-repro``, else ``~/.cache/jax-repro``; absolute."""
    caches = environ.get("XDG_CACHE_HOME") or Path(environ.get("HOME") or Path.home()) / ".cache"
    return Path(environ.get(CACHE_SETTING) or Path(caches) / "jax-repro").expanduser().absolute()


def usable_cache(cache: Path) -> Path:
    """``cache``, made where missing and written once; else UsageError, one line naming it, before
    anything is copied or run."""
    try:
        cache.mkdir(parents=True, exist_ok=True)
        probe, name = tempfile.mkstemp(dir=cache, prefix=".jax-repro-probe.")
        os.close(probe)
        os.unlink(name)
    except OSError as exc:
        there = cache.exists() and not cache.is_dir()
        why = "it is not a folder" if there else exc.strerror or type(exc).__name__
        raise UsageError(
            f"the cache {shown_path(cache, anywhere=True)} cannot be used: {why}; set "
            f"{CACHE_SETTING} to a folder you can write"
        ) from None
    return cache


def project_files() -> dict[str, Path]:
    """Every project file the sessions need, by path: the shipped root files (a clone's own,
    installed editable), the harness and the cases."""
    shipped, root = HARNESS_DIR / "project", HARNESS_DIR.parent
    files = {}
    for name in PROJECT_FILES:
        found = shipped / name if (shipped / name).is_file() else root / name
        if not found.is_file():
            raise UsageError(f"the installed package lacks {name}: reinstall jax-repro-harness")
        files[name] = found
    for folder in (HARNESS_DIR, DEFAULT_CASES_DIR):
        for path in sorted(folder.rglob("*")):
            inner = path.relative_to(folder)
            if path.is_file() and path.suffix != ".pyc" and not SKIPPED & {*inner.parts[:-1]}:
                files[f"{folder.name}/{inner.as_posix()}"] = path
    return files


def digest(files: Mapping[str, Path]) -> str:
    hashed = hashlib.sha256()
    for name, path in sorted(files.items()):
        hashed.update(f"{name}\0{len(path.read_bytes())}\0".encode())
        hashed.update(path.read_bytes())
    return hashed.hexdigest()


def materialized(cache: Path) -> Path:
    """The project folder in ``cache`` holding exactly the installed package's files (made again
    after an upgrade), under a lock so that two commands started at once make it once."""
    files = project_files()
    wanted = digest(files)
    project = cache / "project"
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / "project.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if (project / DIGEST_FILE).read_text() == wanted:
                return project
        except OSError:
            pass
        fresh = cache / f"project.{os.getpid()}.new"
        shutil.rmtree(fresh, ignore_errors=True)
        for name, path in files.items():
            target = fresh / name
            target.parent.mkdir(parents=True, exist_ok=True)
            # the bytes only: a read-only install's modes stay behind
            target.write_bytes(path.read_bytes())
        (fresh / DIGEST_FILE).write_text(wanted)
        old = cache / f"project.{os.getpid()}.old"
        if project.exists():
            project.rename(old)
        fresh.rename(project)
        shutil.rmtree(old, ignore_errors=True)
    return project


def checked(session: str, posargs: Sequence[str]) -> None:
    """``posargs`` checked as ``session`` checks them, in the user's folder: bad input is one line
    and exit 2 before nox starts (``--help``: the help, exit 0)."""
    if session == "matrix":
        sessions.interleaved_request(posargs)
    elif session in sessions.FROM_THE_INDEX:
        sessions.FROM_THE_INDEX[session].view(posargs)
    else:
        sessions.session_view(session, posargs)


def nox_command(session: str, posargs: Sequence[str], cache: Path, project: Path) -> list[str]:
    """nox on the project's noxfile, its venvs in the cache, the user's posargs as typed."""
    noxfile, envdir = project / "noxfile.py", cache / "nox"
    where = ["-f", str(noxfile), "--envdir", str(envdir)]
    # -P: the user's folder is not searched for modules (a nox.py of theirs is not nox).
    return [sys.executable, "-P", "-m", "nox", *where, "-s", session, "--", *posargs]


def drive(
    session: str,
    argv: Sequence[str],
    jax_here: str | None,
    environ: Mapping[str, str] = os.environ,
    run: Callable[[str, list[str], dict[str, str]], object] = os.execve,
) -> int:
    """Run ``argv`` through the packaged nox session, replacing this process; UsageError for bad
    input or an unreachable index."""
    posargs = list(argv[1:])
    checked(session, posargs)
    if (reason := unreachable_index(environ)) is not None:
        here = (
            f"with the jax {jax_here} installed here, `jax-repro run`, `search` and `list` measure "
            "or read it"
            if jax_here
            else "install jax here and `jax-repro run` and `search` measure it"
        )
        raise UsageError(
            f"{session} installs jax releases from the package index, and {reason}; "
            f"{', '.join(NEED_THE_INDEX)} need the index; {here}"
        )
    cache = usable_cache(cache_root(environ))
    command = nox_command(session, posargs, cache, materialized(cache))
    stderr_line(
        f"jax-repro: {session} runs as `nox -s {session}` on the harness copied into "
        f"{shown_path(cache, anywhere=True)} (venvs in {shown_path(cache / 'nox', anywhere=True)}),"
        " its results, reports and stored answers in this folder, "
        f"{shown_path(Path.cwd(), anywhere=True)}"
    )
    run(command[0], command, {**environ, DRIVEN: "1"})
    return 0
