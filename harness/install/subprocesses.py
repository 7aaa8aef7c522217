"""An installer's command (uv, ``compileall``) run so that nothing it starts outlives it.

``compileall -j 0`` and uv start processes of their own.  Killing only the command when the
harness is interrupted (Ctrl-C, SIGTERM) or a time-out passes would leave those running,
still writing into the venv: each command runs in a process group of its own, ended whole.
Standard library only: the noxfile builds venvs in nox's own environment.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path


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
    try:
        stdout, stderr = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _end_group(process)
        late = f"error: did not finish within {timeout_s:.0f} s"
        return subprocess.CompletedProcess(list(command), 124, "", late)
    except BaseException:
        _end_group(process)
        raise
    # Whatever it started and left behind (a compile worker) goes with it.
    _end_group(process)
    return subprocess.CompletedProcess(list(command), process.returncode, stdout, stderr)
