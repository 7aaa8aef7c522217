"""One cached virtual environment per jax release, built with uv as nox's uv backend builds a session's.

The noxfile decides what a release installs (the harness itself, editable, and the
release's ``Release.requirements()``) and with which interpreter, and hands that over
as a *plan* file; this module only carries it out.  A venv is built once: the install
it holds is recorded beside it, and a venv whose record matches is used as it is.
Standard library only: the noxfile writes plans in nox's own environment.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from harness.errors import UsageError

REPO = Path(__file__).resolve().parents[2]
INSTALLED = ".harness-install.json"  # what the venv holds, written after a successful install
INSTALL_TIMEOUT_S = 900
ERROR_LINES = 6


@dataclass(frozen=True)
class ReleaseEnv:
    """A jax release, and how to install it: ``uv pip install`` arguments, interpreter, venv folder."""

    jax: str
    jaxlib: str
    python: str
    install: tuple[str, ...]
    venv: Path

    @property
    def interpreter(self) -> Path:
        return self.venv / "bin" / "python"


def write_plan(path: Path, envs: Sequence[ReleaseEnv]) -> None:
    rows = [{**asdict(env), "install": list(env.install), "venv": str(env.venv)} for env in envs]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rows, indent=1))


def read_plan(path: Path) -> list[ReleaseEnv]:
    try:
        rows = json.loads(path.read_text())
        return [
            ReleaseEnv(row["jax"], row["jaxlib"], row["python"], tuple(row["install"]), Path(row["venv"]))
            for row in rows
        ]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"cannot read the release plan {path}: {exc}") from None


def uv_command() -> list[str] | None:
    found = shutil.which("uv")
    if found:
        return [found]
    if importlib.util.find_spec("uv") is not None:
        return [sys.executable, "-m", "uv"]
    return None


def _last_lines(text: str) -> str:
    return " / ".join(text.strip().splitlines()[-ERROR_LINES:]) or "no output"


def ensure(env: ReleaseEnv) -> str | None:
    """Make ``env``'s venv hold its install; None when ready, else why it cannot be installed.

    An existing venv is installed into (uv pins it to exactly what is asked), never
    deleted: the folder may hold other things a user put there.
    """
    record = env.venv / INSTALLED
    wanted = {"python": env.python, "install": list(env.install)}
    try:
        if json.loads(record.read_text()) == wanted and env.interpreter.exists():
            return None
    except (OSError, ValueError):
        pass  # not installed yet, or by something else
    uv = uv_command()
    if uv is None:
        return "uv not found (neither on PATH nor as python -m uv); install it with: python3 -m pip install uv"
    steps = [[*uv, "pip", "install", "--quiet", "--python", str(env.interpreter), *env.install]]
    if not (env.venv / "pyvenv.cfg").is_file():
        steps.insert(0, [*uv, "venv", "--quiet", "--python", env.python, str(env.venv)])
    for command in steps:
        try:
            done = subprocess.run(
                command, cwd=REPO, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired:
            return f"`uv {command[len(uv)]}` did not finish within {INSTALL_TIMEOUT_S} s"
        if done.returncode != 0:
            return f"`uv {command[len(uv)]}` failed: {_last_lines(done.stderr)}"
    record.write_text(json.dumps(wanted))
    return None
