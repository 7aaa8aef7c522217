"""What ``jax.export`` needs to write and read a serialized module besides jax: ``flatbuffers``
(and, on some releases, ``absl``), installed once into a folder of their own beside the venvs.

The folder is put last on the path of a step's capture process only
(``harness.measure.script_capture``), so a script's venv is never changed and its own packages come
first.  Both are pure Python.
"""

from __future__ import annotations

from pathlib import Path

from harness.install.subprocesses import run_whole
from harness.install.venvs import REPO, uv_command

PACKAGES = ("flatbuffers", "absl-py")
DONE = ".installed"


def export_tools(cache: Path, interpreter: Path) -> Path | str:
    """The folder holding ``PACKAGES`` for ``interpreter``, installed once; or why not."""
    # Absolute: the capture process runs where the script runs, not where the harness was started.
    folder = (cache / "export-tools").resolve()
    if (folder / DONE).is_file():
        return folder
    uv = uv_command()
    if uv is None:
        return "uv is not installed (it installs flatbuffers for jax.export)"
    where = ["--target", str(folder), "--python", str(interpreter)]
    done = run_whole([*uv, "pip", "install", "--quiet", *where, *PACKAGES], REPO, 600)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"flatbuffers could not be installed: {last}"
    try:
        (folder / DONE).write_text("\n".join(PACKAGES) + "\n")
    except OSError as exc:
        return f"flatbuffers could not be installed: {exc}"
    return folder
