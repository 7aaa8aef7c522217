"""Starting the process that runs one case: a fresh interpreter, or a fork of a warm one.

Both give every case a process of its own, in a session of its own (a timeout kills
the case and anything it started), that dies with the harness, with its output in
a log file.  They differ in start-up cost:

- ``spawn`` starts ``python -m harness.measure.child``: a new interpreter imports JAX for
  every case (about 1.5 s on two cores);
- ``fork`` forks a forkserver that imported JAX once, *without* starting a JAX
  backend: backends, devices, XLA flags and compilation caches all begin afresh in
  each case's process, exactly as in a new interpreter, and JAX itself only warns
  about forking once a backend exists.  The flags come from the environment the
  sweep was started with, the same for every case of a session.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import multiprocessing
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Protocol

PR_SET_PDEATHSIG = 1
ISOLATIONS = ("fork", "spawn")
GPU_PLATFORMS = ("cuda", "rocm", "gpu")


def default_isolation(environ: dict[str, str] | None = None) -> str:
    """``fork``, unless ``JAX_PLATFORMS`` pins a GPU: then ``spawn``.

    The forkserver imports JAX, which with a CUDA plugin installed loads CUDA
    libraries; CUDA forbids a fork only after it initialised, which that import should
    not do, but this is not verified on every release.  A GPU run spends seconds
    compiling, so the import a fresh interpreter costs (about 1.5 s) buys certainty.
    """
    platforms = (os.environ if environ is None else environ).get("JAX_PLATFORMS", "")
    return "spawn" if any(p.strip() in GPU_PLATFORMS for p in platforms.split(",")) else "fork"


def die_with_parent() -> None:
    """Linux only: ask the kernel to SIGKILL this process if its parent dies first."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


class Running(Protocol):
    pid: int

    def wait(self, timeout: float | None) -> int | None:
        """The exit code (negative: killed by that signal), or None if still running at the timeout."""
        ...


class _Spawned:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.pid = proc.pid

    def wait(self, timeout: float | None) -> int | None:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None


class _Forked:
    def __init__(self, process: Any) -> None:
        self.process = process
        self.pid = process.pid

    def wait(self, timeout: float | None) -> int | None:
        self.process.join(timeout)
        code = self.process.exitcode
        return None if code is None else int(code)


def _forked_entry(case_file: str, sizes: dict[str, int], settings: dict[str, Any], out: str, log: str) -> None:
    """Runs in the forked process: the same steps as ``python -m harness.measure.child``.

    The forkserver hands each child its "server alive" pipe, which would keep the
    server, and through it this process, alive after the harness is killed; this
    process never returns to multiprocessing, so every inherited descriptor but the
    standard ones is closed.
    """
    os.setsid()
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))
    die_with_parent()
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    from harness.measure.child import run

    payload = run(Path(case_file), sizes, settings)
    Path(out).write_text(json.dumps(payload))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


_FORK_CONTEXT: Any = None


def _fork_context() -> Any:
    global _FORK_CONTEXT
    if _FORK_CONTEXT is None:
        context = multiprocessing.get_context("forkserver")
        # A preload that fails to import is skipped; the case process then imports it itself.
        context.set_forkserver_preload(
            ["harness.measure.forkserver_setup", "jax", "jax.numpy", "numpy", "harness.measure.child"]
        )
        _FORK_CONTEXT = context
    return _FORK_CONTEXT


def launch(
    isolation: str, case_file: Path, sizes: dict[str, int], settings: dict[str, Any], out: Path, log: Path
) -> Running:
    if isolation == "fork":
        process = _fork_context().Process(
            target=_forked_entry, args=(str(case_file), sizes, settings, str(out), str(log)), daemon=False
        )
        process.start()
        return _Forked(process)
    command = [
        sys.executable,
        "-m",
        "harness.measure.child",
        "--case-file",
        str(case_file),
        "--sizes",
        json.dumps(sizes),
        "--settings",
        json.dumps(settings),
        "--out",
        str(out),
    ]
    with open(log, "wb") as handle:
        proc = subprocess.Popen(
            command, stdout=handle, stderr=handle, start_new_session=True, preexec_fn=die_with_parent
        )
    return _Spawned(proc)


def kill(running: Running) -> None:
    """Kill the case and its process group; the group may not exist yet right after a fork."""
    try:
        os.killpg(running.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError):
            os.kill(running.pid, signal.SIGKILL)
    running.wait(None)
